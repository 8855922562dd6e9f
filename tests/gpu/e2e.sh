#!/usr/bin/env bash
# End to end on a GPU machine: what users run (`mjpeg encode clip.y4m`, from a file in the page
# cache and from standard input) against `mjpeg compare` on the same frames from memory, at
# 1920x1080 and 3840x2160, in each mode, in one run:
#   tests/gpu/e2e.sh MJPEG_BINARY K4K.ppm [FRAMES]
# The clips pan across the Kodak 4K mosaic (make_y4m_clip.py; the 3840x2160 mosaic of
# tests/common/test_media.hpp's kodak_mosaic_order(), as PPM), 4:2:0, q90, default options (the self-balancing thread split).
# Per size, source and mode: fps, the stage that bounds it, the producer + entropy split it
# ended with, the bytes uploaded per frame, and encode / compare. "stages fps" leaves out the
# one-off setup (CUDA context, slot allocation), as compare's fps does; "wall fps" is what the
# summary line says. Every encode's AVI (the sweep's too) is checked against the cpu mode's
# (byte-identical). The script exits 1, after the table, when an encode or a compare failed or
# an output differs, and says which.
# Env: MJPEG_E2E_NVDEC_CLIPS (make_nvdec_clips.sh bench clips: then e2e_nvdec.sh's rows too),
# MJPEG_E2E_SIZES (default "1920x1080 3840x2160"), MJPEG_E2E_FRAMES_4K (default FRAMES/2),
# MJPEG_PYTHON (a python3 with numpy, default python3),
# MJPEG_E2E_MODES (default "cpu sok sok-pinned aok"), MJPEG_E2E_SWEEP=1: also aok with fixed
# splits (--producers 1 2 3 4 6 8) from file, stdin and memory, to compare the default with the
# best fixed split.
set -u
mjpeg=$1 src=$2 frames=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
work=${TMPDIR:-/tmp}/mjpeg-e2e; mkdir -p "$work"
sizes=${MJPEG_E2E_SIZES:-1920x1080 3840x2160}
modes=${MJPEG_E2E_MODES:-cpu sok sok-pinned aok}
py=${MJPEG_PYTHON:-python3}
cores=$(nproc)
rows=()
failures=()
failure() { failures+=("$1"); }

# "fps_wall fps_stages bound split upload" from an encode's stderr (--stats).
parse_encode() {
  "$py" - "$1" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
wall = re.search(r"frames, ([0-9.]+) fps \(", t)
st = re.search(r"over ([0-9.]+) s wall", t)
setup = re.search(r"setup \(allocation\)\s+([0-9.]+)", t)
n = re.search(r"wrote .*?: ([0-9]+) frames", t)
split = re.search(r"mjpeg: ([0-9]+) producers \+ ([0-9]+) entropy threads", t)
bound = re.search(r"bound by (.+?) \(([0-9.]+) fps alone\)", t)
up = re.search(r"([0-9]+) bytes uploaded per frame", t)
stages = (int(n.group(1)) / (float(st.group(1)) - float(setup.group(1)))
          if n and st and setup and float(st.group(1)) > float(setup.group(1)) else 0)
print(wall.group(1) if wall else "0", f"{stages:.1f}",
      (bound.group(1).replace(" ", "_") if bound else "-"),
      f"{split.group(1)}+{split.group(2)}" if split else "-", up.group(1) if up else "0")
EOF
}

# "fps bound split upload" of one mode from compare's JSON.
parse_compare() {
  "$py" - "$1" "$2" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    j = {"modes": []}
for m in j["modes"]:
    if m["mode"] == sys.argv[2]:
        print(f'{m["fps"]:.1f}', m["bound"]["stage"].replace(" ", "_"),
              f'{m["producers"]}+{m["entropy_threads"]}', m.get("upload_bytes_per_frame", 0))
        break
else:
    print("0 - - 0")
EOF
}

mode_args() {  # encode options of a compare mode name
  case $1 in
    sok-pinned) echo "--mode sok --pinned" ;;
    *) echo "--mode $1" ;;
  esac
}

row() { rows+=("$(printf '%-9s %-7s %-11s %9s %9s  %-18s %6s %10s %9s  %s' "$@")"); }

# check_output RC AVI REFERENCE WHAT: prints the output column ("identical", "DIFFERENT",
# "rc=N") and records a failure unless the encode succeeded and wrote the reference's bytes.
# (Runs in a subshell: the failures go through a file.)
check_output() {
  local why=""
  if [[ $1 != 0 ]]; then
    why="rc=$1"
  elif [[ -z $3 ]]; then
    why="unchecked"
  elif ! cmp -s "$2" "$3"; then
    why=DIFFERENT
  fi
  if [[ -n $why ]]; then
    echo "$4: $why" >>"$work/failures.txt"
    echo "$why"
  else
    echo identical
  fi
}
: >"$work/failures.txt"

for size in $sizes; do
  n=$frames
  [[ $size == 3840x2160 ]] && n=${MJPEG_E2E_FRAMES_4K:-$((frames / 2))}
  clip=$work/clip_$size.y4m
  [[ -s $clip ]] || "$py" "$here/make_y4m_clip.py" "$src" "$clip" --size "$size" --frames "$n" ||
    { echo "e2e: cannot make $clip"; exit 1; }
  cat "$clip" >/dev/null  # into the page cache
  # The reference every encode of this clip must equal: the cpu mode's AVI.
  ref=$work/ref_$size.avi
  if ! "$mjpeg" encode "$clip" -o "$ref" -y --mode cpu --quiet 2>"$work/ref_$size.log"; then
    failure "$size: the cpu mode's reference encode failed ($(tail -1 "$work/ref_$size.log"))"
    ref=
  fi
  for m in $modes; do
    # compare from memory (the frames as encode reads them: planar, page-locked); it exits 1
    # when the modes' outputs differ
    "$mjpeg" compare "$clip" --modes "$m" --frames "$n" --repeat 3 --nvjpeg-threads 0 --json "$work/cmp_${size}_$m.json" \
      >"$work/cmp_${size}_$m.txt" 2>&1
    rc=$?
    read -r c_fps c_bound c_split c_up < <(parse_compare "$work/cmp_${size}_$m.json" "$m")
    note="(compare)"
    [[ $rc == 0 ]] || { note="(compare rc=$rc)"; failure "$size $m: compare exited $rc"; }
    row "$size" "$m" "memory" "$c_fps" "$c_fps" "$c_bound" "$c_split" "$c_up" "1.00" "$note"
    for from in file stdin; do
      out=$work/${size}_${m}_$from.avi
      if [[ $from == file ]]; then
        "$mjpeg" encode "$clip" -o "$out" -y --stats $(mode_args "$m") 2>"$work/${size}_${m}_$from.log"
      else
        cat "$clip" | "$mjpeg" encode - -o "$out" -y --stats $(mode_args "$m") \
          2>"$work/${size}_${m}_$from.log"
      fi
      rc=$?
      read -r w_fps s_fps bound split up < <(parse_encode "$work/${size}_${m}_$from.log")
      same=$(check_output "$rc" "$out" "$ref" "$size $m from $from")
      ratio=$("$py" -c "print(f'{$s_fps / $c_fps:.2f}' if $c_fps > 0 else '-')")
      row "$size" "$m" "$from" "$w_fps" "$s_fps" "$bound" "$split" "$up" "$ratio" "$same"
    done
  done
done

if [[ ${MJPEG_E2E_SWEEP:-0} == 1 ]]; then
  for size in $sizes; do
    clip=$work/clip_$size.y4m
    n=$frames
    [[ $size == 3840x2160 ]] && n=${MJPEG_E2E_FRAMES_4K:-$((frames / 2))}
    for p in 1 2 3 4 6 8; do
      [[ $p -ge $cores ]] && continue
      "$mjpeg" compare "$clip" --modes aok --frames "$n" --repeat 3 --nvjpeg-threads 0 --producers "$p" --json "$work/sw_${size}_$p.json" \
        >/dev/null 2>&1
      rc=$?
      read -r c_fps c_bound c_split c_up < <(parse_compare "$work/sw_${size}_$p.json" aok)
      note="(fixed split)"
      [[ $rc == 0 ]] || { note="(compare rc=$rc)"; failure "$size aok N=$p: compare exited $rc"; }
      row "$size" "aok N=$p" "memory" "$c_fps" "$c_fps" "$c_bound" "$c_split" "$c_up" "-" "$note"
      for from in file stdin; do
        log=$work/sw_${size}_${p}_$from.log
        if [[ $from == file ]]; then
          "$mjpeg" encode "$clip" -o "$work/sw.avi" -y --stats --mode aok --producers "$p" 2>"$log"
        else
          cat "$clip" | "$mjpeg" encode - -o "$work/sw.avi" -y --stats --mode aok --producers "$p" 2>"$log"
        fi
        rc=$?
        read -r w_fps s_fps bound split up < <(parse_encode "$log")
        same=$(check_output "$rc" "$work/sw.avi" "$work/ref_$size.avi" "$size aok N=$p from $from")
        row "$size" "aok N=$p" "$from" "$w_fps" "$s_fps" "$bound" "$split" "$up" "-" "$same"
      done
    done
  done
fi

echo
echo "==== end to end: encode (file, stdin) vs compare (memory), q90 4:2:0, $cores cores"
printf '%-9s %-7s %-11s %9s %9s  %-18s %6s %10s %9s  %s\n' size mode source "wall fps" \
  "stages fps" "bound by" "N+M" "H2D B/fr" "/compare" "output"
printf '%s\n' "${rows[@]}"

# Compressed video (H.264, HEVC: NVDEC and libavcodec, decode-only and encode), when its clips
# are there (make_nvdec_clips.sh bench): tests/gpu/e2e_nvdec.sh's rows.
if [[ -n ${MJPEG_E2E_NVDEC_CLIPS:-} ]]; then
  bash "$here/e2e_nvdec.sh" "$mjpeg" "$MJPEG_E2E_NVDEC_CLIPS" || failure "compressed video (e2e_nvdec.sh)"
fi
while IFS= read -r f; do failure "$f"; done <"$work/failures.txt"
if ((${#failures[@]})); then
  echo "e2e: ${#failures[@]} FAILED:"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "e2e: every encode and compare succeeded, every output identical to the cpu mode's"
