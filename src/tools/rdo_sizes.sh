#!/usr/bin/env bash
# File size at equal quality for --rdo (docs/rdo.md): on frames of each clip, the size each
# encoder needs for the PSNR (and, separately, the SSIM) that FFmpeg's MJPEG encoder (its
# defaults) reaches at -q:v 2, 4 and 8, relative to FFmpeg's size there. Every encoder runs a
# ladder of qualities; sizes between its points are interpolated on log size. PSNR and SSIM
# are FFmpeg's psnr and ssim filters over the RGB of the decoded frames against the source
# frames (the average over the frames).
#
# Usage: rdo_sizes.sh MJPEG OUT_DIR [MOZJPEG_CJPEG] CLIP...
#   MJPEG          the mjpeg binary
#   OUT_DIR        work folder; OUT_DIR/points.csv (every ladder point) and OUT_DIR/table.md
#   MOZJPEG_CJPEG  mozjpeg's cjpeg (src/tools/peers/build_mozjpeg.sh), or "" to leave it out
# Environment: RDO_FRAMES (frames per clip, spread over its first RDO_SPAN frames; 8 of 160);
# RDO_SETTINGS (mjpeg's settings, separated by ';', "-" for its default; the five below unless
# set); RDO_LADDER (mjpeg's and mozjpeg's qualities); RDO_SAMPLING (420, the default, 422 or 444:
# the chroma sampling of every encoder). FFmpeg is told the sampling: given RGB frames its
# MJPEG encoder picks 4:4:4 by itself, while from a video clip (4:2:0, what users encode) it
# writes 4:2:0; mjpeg and mozjpeg write 4:2:0 by default.
set -euo pipefail
mjpeg=$(realpath "${1:?mjpeg binary}")
out=${2:?output folder}
moz=${3:-}
shift 3
[[ -n $moz ]] && moz=$(realpath "$moz")
frames=${RDO_FRAMES:-8}
sampling=${RDO_SAMPLING:-420}
case $sampling in
  420) ff_pix=yuvj420p moz_sample=2x2 ;;
  422) ff_pix=yuvj422p moz_sample=2x1 ;;
  444) ff_pix=yuvj444p moz_sample=1x1 ;;
  *) echo "rdo_sizes.sh: RDO_SAMPLING is 420, 422 or 444" >&2; exit 2 ;;
esac
span=${RDO_SPAN:-160}
mkdir -p "$out"
out=$(realpath "$out")
points=$out/points.csv
echo "clip,encoder,setting,bytes,psnr,ssim" >"$points"

# metrics REF_PATTERN JPEG_PATTERN: "psnr ssim" of the decoded frames against the source.
metrics() {
  ffmpeg -nostdin -i "$1" -i "$2" -lavfi \
    '[0]format=gbrp,split[a0][a1];[1]format=gbrp,split[b0][b1];[a0][b0]psnr;[a1][b1]ssim' \
    -f null - 2>&1 | awk '/PSNR/ { for (i = 1; i <= NF; i++) if ($i ~ /^average:/) { sub("average:", "", $i); p = $i } }
                          /SSIM/ { for (i = 1; i <= NF; i++) if ($i ~ /^All:/) { sub("All:", "", $i); s = $i } }
                          END { print p, s }'
}

# point CLIP ENCODER SETTING: measures the JPEGs in $work/jpg and records them.
point() {
  local bytes m
  bytes=$(cat "$work"/jpg/*.jpg | wc -c)
  m=$(metrics "$work/src/%03d.ppm" "$work/jpg/%03d.jpg")
  echo "$1,$2,$3,$bytes,${m% *},${m#* }" >>"$points"
}

ladder=${RDO_LADDER:-15 25 35 45 55 65 75 82 88 92 95 97 98 99 100}
IFS=';' read -r -a settings <<<"${RDO_SETTINGS:--;--tune psnr --optimize;--rdo deadzone --tune psnr --optimize;--rdo trellis --optimize;--rdo trellis --tune psnr --optimize}"
for clip in "$@"; do
  name=$(basename "${clip%.*}")
  work=$out/$name
  rm -rf "$work" && mkdir -p "$work/src" "$work/jpg"
  step=$((span / frames))
  ffmpeg -nostdin -v error -i "$clip" -vf "select='not(mod(n\,$step))',format=rgb24" \
    -frames:v "$frames" -fps_mode passthrough "$work/src/%03d.ppm"
  echo "$name: $(ls "$work/src" | wc -l) frames" >&2
  for q in 2 3 4 5 6 8 10 13; do
    rm -f "$work"/jpg/*
    ffmpeg -nostdin -v error -i "$work/src/%03d.ppm" -c:v mjpeg -q:v "$q" -pix_fmt $ff_pix \
      "$work/jpg/%03d.jpg"
    point "$name" ffmpeg "$q"
  done
  for setting in "${settings[@]}"; do
    [[ $setting == - ]] && setting=
    for q in $ladder; do
      rm -f "$work"/jpg/*
      # shellcheck disable=SC2086
      "$mjpeg" encode "$work/src/%03d.ppm" -o "$work/jpg/%03d.jpg" -q "$q" -s "$sampling" $setting \
        --quiet -y --mode cpu
      point "$name" "mjpeg ${setting:-(default)}" "$q"
    done
  done
  if [[ -n $moz ]]; then
    for q in $ladder; do
      rm -f "$work"/jpg/*
      for f in "$work"/src/*.ppm; do
        "$moz" -baseline -quality "$q" -sample $moz_sample \
          -outfile "$work/jpg/$(basename "${f%.ppm}").jpg" "$f"
      done
      point "$name" "mozjpeg cjpeg -baseline" "$q"
    done
  fi
done

python3 - "$points" >"$out/table.md" <<'EOF'
import csv, math, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
curves = defaultdict(list)
for r in rows:
    curves[(r["clip"], r["encoder"])].append((float(r["bytes"]), float(r["psnr"]), float(r["ssim"])))
def size_at(curve, metric, value):
    pts = sorted((p[metric], p[0]) for p in curve)
    for (m0, s0), (m1, s1) in zip(pts, pts[1:]):
        if m0 <= value <= m1 and m1 > m0:
            t = (value - m0) / (m1 - m0)
            return math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
    return None
clips = sorted({r["clip"] for r in rows})
encoders = [e for e in dict.fromkeys(r["encoder"] for r in rows) if e != "ffmpeg"]
for metric, label in ((1, "PSNR"), (2, "SSIM")):
    print(f"\n### Size at FFmpeg's {label} (ratio to `ffmpeg -c:v mjpeg -q:v Q`)\n")
    print("| clip | -q:v | FFmpeg " + label + " | " + " | ".join(encoders) + " |")
    print("|---|---|---|" + "---|" * len(encoders))
    for clip in clips:
        ff = {r["setting"]: r for r in rows if r["clip"] == clip and r["encoder"] == "ffmpeg"}
        for q in ("2", "4", "8"):
            ref = ff[q]
            value = float(ref["psnr"] if metric == 1 else ref["ssim"])
            cells = []
            for e in encoders:
                s = size_at(curves[(clip, e)], metric, value)
                cells.append(f"{s / float(ref['bytes']):.3f}" if s else "-")
            shown = f"{value:.2f} dB" if metric == 1 else f"{value:.4f}"
            print(f"| {clip} | {q} | {shown} | " + " | ".join(cells) + " |")
EOF
cat "$out/table.md"
