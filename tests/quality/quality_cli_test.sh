#!/usr/bin/env bash
# End-to-end tests of `mjpeg quality` and `mjpeg encode --psnr`, one case per ctest test.
#
#   quality_cli_test.sh --list                     print the case names
#   quality_cli_test.sh CASE MJPEG MEDIA_DIR WORK_DIR
#
# The agreement cases make short clips at test time from MEDIA_DIR/video, encode them with
# ffmpeg's own MJPEG encoder (independent of ours) and with mjpeg, and compare our figures with
# ffmpeg's psnr filter (RGB, on rgb24 frames) and ssim/psnr filters (on the luma plane computed
# here, in Python, with libjpeg's integer formula from the same rgb24 frames).
# Exit 0 = pass, 77 = skipped (a tool is missing), anything else = fail.
set -uo pipefail

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
need_tools() {
  command -v ffmpeg >/dev/null || skip "ffmpeg not found"
  command -v python3 >/dev/null || skip "python3 not found"
}
have_opencv() { "$MJPEG" info | grep -q '^OpenCV: yes'; }

# expect_fail CODE ARGS...: exit CODE, one stderr line "mjpeg: error: ...", nothing on stdout.
expect_fail() {
  local want=$1; shift
  local rc=0
  "$MJPEG" "$@" >out.txt 2>err.txt || rc=$?
  [[ $rc -eq $want ]] || die "mjpeg $* exited $rc, expected $want; stderr: $(cat err.txt)"
  [[ $(wc -l <err.txt) -eq 1 ]] || die "mjpeg $* printed more than one stderr line: $(cat err.txt)"
  grep -q '^mjpeg: error: ' err.txt || die "stderr lacks 'mjpeg: error: ': $(cat err.txt)"
  echo "ok ($rc): mjpeg $* -> $(cat err.txt)"
}
run_ok() { "$MJPEG" "$@" >out.txt 2>err.txt || die "mjpeg $* failed: $(cat err.txt)"; }

# make_source VIDEO SIZE FRAMES OUT: the first FRAMES frames of MEDIA/video/VIDEO scaled to SIZE,
# as lossless rgb24 (so that every reader sees the same pixels), without audio: with an audio
# stream in the file, ffmpeg's filters pair frames by timestamp differently (measured: 0.44 dB off).
make_source() {
  local video="$MEDIA/video/$1"
  [[ -f $video ]] || die "test media $video missing (set MJPEG_MEDIA_DIR)"
  ffmpeg -v error -y -i "$video" -an -frames:v "$3" -vf "scale=$2" -c:v rawvideo -pix_fmt rgb24 "$4" ||
    die "ffmpeg could not cut $video"
}

# ffmpeg_rgb_psnr A B: ffmpeg's average RGB PSNR of A against B, both converted to rgb24.
ffmpeg_rgb_psnr() {
  ffmpeg -v info -nostats -i "$1" -i "$2" \
    -lavfi "[0:v]format=rgb24[a];[1:v]format=rgb24[b];[a][b]psnr=stats_file=psnr_rgb.log" \
    -f null - 2>&1 | sed -n 's/.*PSNR r:.* average:\([0-9.inf]*\).*/\1/p' | tail -1
}

# ffmpeg_rgb_psnr_by_index A B: ffmpeg_rgb_psnr with the frames paired by their index (the
# source's own timestamps, e.g. a WebM's milliseconds, need not meet the AVI's).
ffmpeg_rgb_psnr_by_index() {
  ffmpeg -v info -nostats -i "$1" -i "$2" \
    -lavfi "[0:v]settb=1/25,setpts=N,format=rgb24[a];[1:v]settb=1/25,setpts=N,format=rgb24[b];[a][b]psnr=stats_file=psnr_rgb.log" \
    -f null - 2>&1 | sed -n 's/.*PSNR r:.* average:\([0-9.inf]*\).*/\1/p' | tail -1
}

# luma_of VIDEO OUT W H: the full-range BT.601 luma (libjpeg's integer formula) of every frame of
# VIDEO as decoded to rgb24 by ffmpeg, written as raw gray frames (Python, independent of mjpeg).
luma_of() {
  ffmpeg -v error -y -i "$1" -f rawvideo -pix_fmt rgb24 rgb.raw || die "ffmpeg cannot decode $1"
  python3 - "$2" <<'EOF' || die "luma conversion failed"
import sys
rgb = open("rgb.raw", "rb").read()
r, g, b = rgb[0::3], rgb[1::3], rgb[2::3]
y = bytes((19595 * R + 38470 * G + 7471 * B + 32768) >> 16 for R, G, B in zip(r, g, b))
open(sys.argv[1], "wb").write(y)
EOF
}

# ffmpeg_luma FILTER A.gray B.gray W H: runs ffmpeg's FILTER (ssim or psnr) on raw gray frames;
# prints its summary line.
ffmpeg_luma() {
  ffmpeg -v info -nostats -f rawvideo -pix_fmt gray -s "$4x$5" -i "$2" \
    -f rawvideo -pix_fmt gray -s "$4x$5" -i "$3" -lavfi "[0:v][1:v]$1=stats_file=$1_y.log" \
    -f null - 2>&1 | grep -E "Parsed_$1" | tail -1
}

# json_get FILE EXPR: a value from our --json output (Python expression on `d`).
json_get() {
  python3 -c "import json,sys; d=json.load(open('$1')); print($2)" || die "cannot read $1"
}

# close A B TOL: |A - B| <= TOL (numbers or inf).
close() {
  python3 -c "import sys; a,b,t=map(float,sys.argv[1:]); sys.exit(0 if (a==b or abs(a-b)<=t) else 1)" \
    "$1" "$2" "$3"
}

# per_frame_close LOG KEY JSON_KEY TOL: every frame of ffmpeg's stats log (KEY:value) within TOL
# of our per-frame figure.
per_frame_close() {
  python3 - "$1" "$2" "$3" "$4" <<'EOF' || die "per-frame figures differ from ffmpeg's ($1)"
import json, sys
log, key, ours_key, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
theirs = []
for line in open(log):
    fields = dict(f.split(":", 1) for f in line.split() if ":" in f)
    theirs.append(float(fields[key]))
ours = [float(f[ours_key]) for f in json.load(open("q.json"))["per_frame"]]
assert len(ours) == len(theirs), (len(ours), len(theirs))
worst = max(abs(a - b) for a, b in zip(ours, theirs))
print(f"{log}: {len(ours)} frames, largest difference {worst:.6f}")
sys.exit(0 if worst <= tol else 1)
EOF
}

# agreement VIDEO SIZE ENCODER: our figures equal ffmpeg's on a 10-frame clip of VIDEO encoded
# by ENCODER ("ffmpeg": its own mjpeg encoder at -q:v 5; "mjpeg": ours at -q 75).
agreement() {
  need_tools
  local video=$1 size=$2 encoder=$3 w=${2%:*} h=${2#*:}
  make_source "$video" "$size" 10 src.nut
  if [[ $encoder == ffmpeg ]]; then
    ffmpeg -v error -y -i src.nut -c:v mjpeg -q:v 5 enc.avi || die "ffmpeg mjpeg encode failed"
  else
    run_ok encode src.nut -o enc.avi -q 75 --quiet
  fi
  run_ok quality src.nut enc.avi --json q.json
  [[ $(json_get q.json 'd["frames"]') == 10 ]] || die "expected 10 frames"

  # RGB PSNR: summary (ffmpeg's average is the PSNR of the mean MSE) and per frame.
  local theirs ours
  theirs=$(ffmpeg_rgb_psnr enc.avi src.nut)
  ours=$(json_get q.json 'd["summary"]["psnr_rgb"]["mean"]')
  [[ -n $theirs ]] || die "no PSNR from ffmpeg"
  close "$ours" "$theirs" 0.05 || die "RGB PSNR $ours dB, ffmpeg says $theirs dB"
  per_frame_close psnr_rgb.log psnr_avg psnr_rgb 0.05
  echo "RGB PSNR: ours $ours, ffmpeg $theirs"

  # Luma: SSIM and PSNR of the same Y planes.
  luma_of enc.avi enc.y
  luma_of src.nut src.y
  local line
  line=$(ffmpeg_luma ssim enc.y src.y "$w" "$h")
  theirs=$(sed -n 's/.* Y:\([0-9.]*\) .*/\1/p' <<<"$line")
  ours=$(json_get q.json 'd["summary"]["ssim_y"]["mean"]')
  [[ -n $theirs ]] || die "no SSIM from ffmpeg: $line"
  close "$ours" "$theirs" 0.002 || die "SSIM $ours, ffmpeg says $theirs"
  per_frame_close ssim_y.log Y ssim_y 0.002
  echo "SSIM Y: ours $ours, ffmpeg $theirs"
  line=$(ffmpeg_luma psnr enc.y src.y "$w" "$h")
  theirs=$(sed -n 's/.* average:\([0-9.inf]*\).*/\1/p' <<<"$line")
  ours=$(json_get q.json 'd["summary"]["psnr_y"]["mean"]')
  close "$ours" "$theirs" 0.05 || die "Y PSNR $ours dB, ffmpeg says $theirs dB"
  echo "Y PSNR: ours $ours, ffmpeg $theirs"
}

# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

# Odd sizes: the encoded 4:2:0 JPEGs decode to an odd height, which libswscale converts to RGB
# with its scaler on both sides.
case_agrees_with_ffmpeg_on_ffmpeg_mjpeg() { agreement flower.mp4 321:181 ffmpeg; }
case_agrees_with_ffmpeg_on_our_mjpeg() { agreement car-detection.mp4 385:217 mjpeg; }
case_agrees_with_ffmpeg_on_h264_source() {
  # The source decoded from H.264 (BT.601 limited range) by both sides rather than raw RGB.
  need_tools
  ffmpeg -v error -y -i "$MEDIA/video/friday.mp4" -frames:v 8 -vf scale=320:240 \
    -c:v libx264 -qp 0 -pix_fmt yuv420p src.mp4 || skip "ffmpeg cannot make an H.264 clip"
  run_ok encode src.mp4 -o enc.avi -q 60 -s 422 --quiet
  run_ok quality src.mp4 enc.avi --json q.json
  local theirs ours
  theirs=$(ffmpeg_rgb_psnr enc.avi src.mp4)
  ours=$(json_get q.json 'd["summary"]["psnr_rgb"]["mean"]')
  close "$ours" "$theirs" 0.05 || die "RGB PSNR $ours dB, ffmpeg says $theirs dB"
  per_frame_close psnr_rgb.log psnr_avg psnr_rgb 0.05
}

# The three PSNR figures agree at odd sizes on real content: `encode --psnr`, `quality` on what
# it wrote, and ffmpeg's psnr filter, every one on the RGB that `ffmpeg -pix_fmt rgb24` makes of
# the 4:2:0 source (VP9, FFV1, VP8), whose odd height libswscale converts with its scaler.
case_three_psnr_figures_agree_at_odd_sizes() {
  need_tools
  local video="$MEDIA/video/tears-of-steel-battle-clip-medium.webm" spec size codec ext w h
  [[ -f $video ]] || die "test media $video missing (set MJPEG_MEDIA_DIR)"
  for spec in "1280x533 libvpx-vp9 webm" "960x541 ffv1 mkv" "321x241 ffv1 mkv" "640x361 libvpx webm"; do
    read -r size codec ext <<<"$spec"
    w=${size%x*} h=${size#*x}
    local extra=()
    [[ $codec == libvpx* ]] && extra=(-deadline realtime -cpu-used 8)
    ffmpeg -v error -y -ss 20 -i "$video" -an -frames:v 6 -vf "scale=$w:$h" -pix_fmt yuv420p \
      -c:v "$codec" "${extra[@]}" "src.$ext" || skip "ffmpeg cannot make a $codec clip"
    [[ $(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "src.$ext") == "$w,$h" ]] ||
      die "src.$ext is not $size"
    run_ok encode "src.$ext" -o enc.avi -q 75 --psnr --mode cpu -y
    local encoded quality theirs
    encoded=$(sed -n 's/^  PSNR RGB  min .* mean *\([0-9.inf]*\) .*/\1/p' err.txt)
    run_ok quality "src.$ext" enc.avi --json q.json -y
    quality=$(json_get q.json 'd["summary"]["psnr_rgb"]["mean"]')
    theirs=$(ffmpeg_rgb_psnr_by_index enc.avi "src.$ext")
    [[ -n $encoded && -n $theirs ]] || die "$size: no figures (encode: '$encoded', ffmpeg: '$theirs')"
    close "$quality" "$theirs" 0.05 || die "$size $codec: quality $quality dB, ffmpeg $theirs dB"
    close "$encoded" "$quality" 0.005 || die "$size $codec: encode --psnr $encoded dB, quality $quality dB"
    per_frame_close psnr_rgb.log psnr_avg psnr_rgb 0.05
    echo "$size $codec: encode --psnr $encoded, quality $quality, ffmpeg $theirs dB"
  done
}

case_identical_inputs_are_infinite() {
  need_tools
  make_source flower.mp4 64:48 3 src.nut
  run_ok quality src.nut src.nut --json q.json --csv q.csv
  [[ $(json_get q.json 'd["summary"]["psnr_rgb"]["min"]') == inf ]] || die "PSNR not inf"
  [[ $(json_get q.json 'd["summary"]["ssim_y"]["mean"]') == 1.0 ]] || die "SSIM not 1"
  [[ $(sed -n 2p q.csv | cut -d, -f2) == inf ]] || die "CSV PSNR not inf: $(sed -n 2p q.csv)"
  [[ $(wc -l <q.csv) -eq 4 ]] || die "CSV should have a header and 3 rows"
}

case_encode_psnr_equals_quality() {
  need_tools
  make_source flower.mp4 320:180 6 src.nut
  run_ok encode src.nut -o enc.avi -q 50 --psnr --mode cpu
  grep -A7 '^mjpeg: quality of enc.avi' err.txt | tail -n +2 >encode_summary.txt
  [[ $(wc -l <encode_summary.txt) -eq 7 ]] || die "no --psnr summary: $(cat err.txt)"
  run_ok quality src.nut enc.avi --quiet
  grep -B0 -A6 '^summary over' out.txt >quality_summary.txt
  diff encode_summary.txt quality_summary.txt || die "encode --psnr and quality disagree"
  # A single picture too.
  ffmpeg -v error -y -i src.nut -frames:v 1 one.ppm || die "ffmpeg failed"
  run_ok encode one.ppm -o one.jpg -q 30 --psnr
  grep -q 'PSNR RGB' err.txt || die "no PSNR for a single picture: $(cat err.txt)"
}

case_errors_are_one_line() {
  need_tools
  make_source flower.mp4 320:180 4 a.nut
  make_source flower.mp4 160:90 4 small.nut
  make_source flower.mp4 320:180 3 short.nut
  expect_fail 1 quality a.nut small.nut --json x.json
  grep -q 'sizes differ' err.txt || die "unclear: $(cat err.txt)"
  expect_fail 1 quality a.nut short.nut --csv x.csv
  grep -q 'frame counts differ' err.txt || die "unclear: $(cat err.txt)"
  expect_fail 1 quality a.nut missing.avi
  grep -q "missing.avi" err.txt || die "unclear: $(cat err.txt)"
  printf 'not a video' >junk.avi
  expect_fail 1 quality a.nut junk.avi
  expect_fail 2 quality a.nut
  expect_fail 2 quality a.nut a.nut --plot x.jpg
  expect_fail 2 quality --sweep a.nut --qualities 0:50:10
  expect_fail 2 quality --sweep a.nut a.nut a.nut
  [[ ! -e x.json && ! -e x.csv ]] || die "an output was written on failure"
  touch exists.csv
  expect_fail 1 quality a.nut a.nut --csv exists.csv
  [[ ! -s exists.csv ]] || die "existing output replaced without -y"
  # --frames compares only the first frames.
  run_ok quality a.nut short.nut --frames 3 --quiet
}

case_pictures() {
  need_tools
  make_source flower.mp4 320:180 20 src.nut
  run_ok encode src.nut -o enc.avi -q 40 --quiet
  if ! have_opencv; then
    expect_fail 1 quality src.nut enc.avi --plot p.png
    grep -q 'OpenCV' err.txt || die "error does not name OpenCV"
    return
  fi
  run_ok quality src.nut enc.avi --plot p.png --worst w.png --sheet s.png --sheet-frames 6 --json q.json
  local f size
  for f in p.png w.png s.png; do
    [[ $(head -c 8 "$f" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || die "$f is not a PNG"
  done
  size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 w.png)
  [[ $size == 1440,336 ]] || die "worst picture should be three 480x270 panels under captions, is $size"
  size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 p.png)
  [[ $size == 900,* ]] || die "plot is $size"
  # The worst picture shows the frame the summary names.
  local worst
  worst=$(json_get q.json 'd["summary"]["worst_frames"][0]')
  grep -q "worst frames (RGB PSNR): $worst" out.txt || die "summary and JSON disagree"
  # What the pictures show, decoded by ffmpeg: in the worst picture (a 36-pixel header, then
  # three panels of 480x270 under 30-pixel captions) the source panel is that source frame
  # and the encoded one that frame of the AVI, each magnified 1.5x by nearest neighbour; the
  # difference panel is not flat; the contact sheet's first cell (at 4,74) is the AVI's first
  # frame as it is; the plot has coloured curves.
  python3 - "$worst" <<'PY' || die "the pictures do not show what they should"
import subprocess, sys
def rgb(*args):
    return subprocess.run(["ffmpeg", "-v", "error", *args, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                          check=True, capture_output=True).stdout
def frame(path, n):
    return rgb("-i", path, "-vf", f"select=eq(n\\,{n})", "-frames:v", "1")
def region(img, img_w, x0, y0, w, h):
    return [img[3 * ((y0 + y) * img_w + x0):3 * ((y0 + y) * img_w + x0 + w)] for y in range(h)]
def magnified(f, fw, fh, w, h):  # nearest neighbour: source pixel floor(x * fw / w)
    return [b"".join(f[3 * ((y * fh // h) * fw + x * fw // w):3 * ((y * fh // h) * fw + x * fw // w) + 3]
                     for x in range(w)) for y in range(h)]
def same_share(a, b):
    px = sum(len(r) // 3 for r in a)
    return sum(ra[i:i + 3] == rb[i:i + 3] for ra, rb in zip(a, b) for i in range(0, len(ra), 3)) / px
worst = int(sys.argv[1]) - 1
w = rgb("-i", "w.png")
for x0, path in ((0, "src.nut"), (480, "enc.avi")):
    share = same_share(region(w, 1440, x0, 66, 480, 270), magnified(frame(path, worst), 320, 180, 480, 270))
    assert share > 0.99, f"{path} panel: {share:.3f} of the pixels are frame {worst + 1}'s"
    others = [same_share(region(w, 1440, x0, 66, 480, 270), magnified(frame(path, n), 320, 180, 480, 270))
              for n in (0, 19) if n != worst]
    assert all(o < share for o in others), f"{path} panel: another frame fits as well ({others})"
diff = region(w, 1440, 960, 66, 480, 270)
assert len({row[i:i + 3] for row in diff for i in range(0, len(row), 3)}) > 8, "flat difference panel"
s = rgb("-i", "s.png")
sw = int(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=width", "-of", "csv=p=0",
                         "s.png"], check=True, capture_output=True, text=True).stdout)
share = same_share(region(s, sw, 4, 74, 320, 180), magnified(frame("enc.avi", 0), 320, 180, 320, 180))
assert share > 0.99, f"sheet: {share:.3f} of the first cell is frame 1"
p = rgb("-i", "p.png")
coloured = sum(max(p[i:i + 3]) - min(p[i:i + 3]) > 60 for i in range(0, len(p), 3))
assert coloured > 500, f"plot: {coloured} coloured pixels"
print("pictures ok: worst frame", worst + 1)
PY
}

case_sweep() {
  need_tools
  make_source flower.mp4 320:180 1 src.nut
  local plot=()
  have_opencv && plot=(--plot rd.png)
  run_ok quality --sweep src.nut --qualities 30:90:30 --csv rd.csv "${plot[@]}"
  # 3 qualities x (3 presets x 2 + libjpeg-turbo) + ffmpeg at -q:v 2..31, and the header.
  [[ $(wc -l <rd.csv) -eq 52 ]] || die "expected 51 points: $(cat rd.csv)"
  # ffmpeg's point at -q:v 5, independently: its own encode of the same frame, its psnr filter.
  ffmpeg -v error -y -i src.nut -frames:v 1 -c:v mjpeg -pix_fmt yuvj420p -q:v 5 -f mjpeg ff5.mjpeg ||
    die "ffmpeg mjpeg encode failed"
  local ff5
  ff5=$(ffmpeg_rgb_psnr ff5.mjpeg src.nut)
  python3 - "$ff5" "$(stat -c %s ff5.mjpeg)" <<'EOF' || die "sweep points wrong: $(cat rd.csv)"
import csv, sys
rows = list(csv.DictReader(open("rd.csv")))
ours = ["mjpeg", "mjpeg --optimize", "mjpeg --tune psnr", "mjpeg --tune psnr --optimize",
        "mjpeg --tune ssim", "mjpeg --tune ssim --optimize"]
for enc in ours + ["libjpeg-turbo"]:
    pts = [r for r in rows if r["encoder"] == enc]
    assert [int(r["quality"]) for r in pts] == [30, 60, 90], enc
    bpp = [float(r["bits_per_pixel"]) for r in pts]
    psnr = [float(r["psnr_rgb"]) for r in pts]
    assert bpp == sorted(bpp) and psnr == sorted(psnr), (enc, bpp, psnr)
    for r in pts:
        assert abs(int(r["bytes"]) * 8 / (320 * 180) - float(r["bits_per_pixel"])) < 1e-5, r
by = {(r["encoder"], r["quality"]): r for r in rows}
for r in rows:
    if r["encoder"] == "libjpeg-turbo":
        assert r["identical_to_mjpeg"] == "yes", r
        assert r["psnr_rgb"] == by[("mjpeg", r["quality"])]["psnr_rgb"], r
for base in ("mjpeg", "mjpeg --tune psnr", "mjpeg --tune ssim"):
    for q in ("30", "60", "90"):  # optimal Huffman tables: same pixels, fewer bits
        plain, opt = by[(base, q)], by[(base + " --optimize", q)]
        assert opt["psnr_rgb"] == plain["psnr_rgb"], (base, q)
        assert float(opt["bits_per_pixel"]) < float(plain["bits_per_pixel"]), (base, q)
for q in ("30", "60", "90"):  # the presets are other tables
    assert by[("mjpeg --tune psnr", q)]["bytes"] != by[("mjpeg", q)]["bytes"], q
    assert by[("mjpeg --tune ssim", q)]["bytes"] != by[("mjpeg", q)]["bytes"], q
ff = [r for r in rows if r["encoder"] == "ffmpeg -c:v mjpeg"]
assert [int(r["quality"]) for r in ff] == list(range(2, 32)), ff
bpp = [float(r["bits_per_pixel"]) for r in ff]
assert bpp == sorted(bpp, reverse=True), bpp
five = by[("ffmpeg -c:v mjpeg", "5")]
assert int(five["bytes"]) == int(sys.argv[2]), (five, sys.argv[2])
assert abs(float(five["psnr_rgb"]) - float(sys.argv[1])) <= 0.05, (five, sys.argv[1])
EOF
  grep -q 'byte-identical to mjpeg at every quality' out.txt || die "no identity line: $(cat out.txt)"
  grep -q '^ffmpeg: ffmpeg -c:v mjpeg -q:v 2..31' out.txt || die "no ffmpeg line: $(cat out.txt)"
  if have_opencv; then [[ -s rd.png ]] || die "no rd.png"; fi
}

case_sweep_one_preset_without_ffmpeg() {
  need_tools
  make_source flower.mp4 320:180 1 src.nut
  # A PATH without ffmpeg: the sweep says so and has no ffmpeg points.
  mkdir -p nobin
  PATH="$PWD/nobin" run_ok quality --sweep src.nut --qualities 50 --tunes psnr --csv rd.csv
  [[ $(wc -l <rd.csv) -eq 3 ]] || die "expected 2 points: $(cat rd.csv)"
  grep -q '^ffmpeg: no points: not on PATH' out.txt || die "no ffmpeg note: $(cat out.txt)"
  grep -q '^libjpeg-turbo: no points' out.txt || die "no libjpeg-turbo note: $(cat out.txt)"
  expect_fail 2 quality --sweep src.nut --tunes psnr,bogus
  grep -q "unknown table preset 'bogus'" err.txt || die "bad --tunes message: $(cat err.txt)"
}

case_ssim_under_8x8_is_undefined_as_in_ffmpeg() {
  # A picture under 8x8 (in either direction) has no 8x8 window: ffmpeg's ssim filter has no
  # figure for it either (it prints nan, or inf where only the width is under 8). The summary
  # says n/a and the JSON holds null, never "inf" or an infinite range.
  need_tools
  local size w h
  for size in 6x6 16x5 5x16; do
    w=${size%x*} h=${size#*x}
    rm -f q.json
    ffmpeg -v error -y -f lavfi -i "testsrc2=size=64x64:rate=25" -frames:v 3 -vf "scale=$w:$h" \
      -c:v rawvideo -pix_fmt rgb24 src.nut || die "ffmpeg could not make a $size clip"
    run_ok encode src.nut -o enc.avi -q 30 --quiet -y
    luma_of src.nut src.gray "$w" "$h"
    luma_of enc.avi enc.gray "$w" "$h"
    ffmpeg_luma ssim enc.gray src.gray "$w" "$h" | grep -q 'SSIM Y:-*\(nan\|inf\) ' ||
      die "ffmpeg's ssim filter has a figure at $size: $(ffmpeg_luma ssim enc.gray src.gray "$w" "$h")"
    run_ok quality src.nut enc.avi --json q.json
    grep -q '^  SSIM Y    n/a' out.txt || die "$size: summary: $(grep SSIM out.txt)"
    [[ $(json_get q.json '[d["summary"]["ssim_y"][k] for k in ("min", "mean", "max")]') == \
       "[None, None, None]" ]] || die "$size: JSON summary: $(json_get q.json 'd["summary"]["ssim_y"]')"
    [[ $(json_get q.json 'set(f["ssim_y"] for f in d["per_frame"])') == "{None}" ]] ||
      die "$size: JSON per frame: $(json_get q.json '[f["ssim_y"] for f in d["per_frame"]]')"
    # PSNR stays a number (the pictures differ).
    json_get q.json 'float(d["summary"]["psnr_rgb"]["mean"])' >/dev/null
    run_ok encode src.nut -o enc2.avi -q 30 --psnr -y
    grep -q '^  SSIM Y    n/a' err.txt || die "$size: encode --psnr: $(grep SSIM err.txt)"
  done
}

case_segment_compared_with_start_agrees_with_ffmpeg_select() {
  # A segment (encode --start 30 --frames 30) against its source: --start 30 pairs its frame 1
  # with the source's frame 31, as ffmpeg's psnr filter does after select=gte(n,30).
  need_tools
  make_source flower.mp4 320:180 60 src.nut
  run_ok encode src.nut -o seg.avi --start 30 --frames 30 -q 75 --quiet
  run_ok quality src.nut seg.avi --start 30 --json q.json
  grep -q "from frame 30 on" out.txt || die "the source line does not say where it starts: $(head -2 out.txt)"
  local theirs ours
  theirs=$(ffmpeg -v info -nostats -i seg.avi -i src.nut -lavfi \
    "[0:v]format=rgb24,setpts=PTS-STARTPTS[a];[1:v]select=gte(n\,30),format=rgb24,setpts=PTS-STARTPTS[b];[a][b]psnr=stats_file=psnr_rgb.log" \
    -f null - 2>&1 | sed -n 's/.*PSNR r:.* average:\([0-9.inf]*\).*/\1/p' | tail -1)
  [[ -n $theirs ]] || die "no PSNR from ffmpeg"
  ours=$(json_get q.json 'd["summary"]["psnr_rgb"]["mean"]')
  close "$ours" "$theirs" 0.05 || die "RGB PSNR $ours dB with --start 30, ffmpeg with select says $theirs dB"
  [[ $(json_get q.json 'd["frames"]') == 30 ]] || die "expected 30 frames"
  per_frame_close psnr_rgb.log psnr_avg psnr_rgb 0.05
  # Without --start the counts differ, and the error says how to pair a segment.
  expect_fail 1 quality src.nut seg.avi
  grep -q "frame counts differ.*encode --start N, compare it with --start N" err.txt ||
    die "the error does not name --start: $(cat err.txt)"
  # --frames 30 pairs the first 30 source frames with the segment: said, not silent.
  run_ok quality src.nut seg.avi --frames 30 --json off.json
  grep -q "^mjpeg: note: --frames 30 compared the first 30 frames of 'src.nut' (it has more) with all 30 of 'seg.avi'.*--start N" err.txt ||
    die "no note about the pairing: $(cat err.txt)"
  python3 -c "import sys; sys.exit(0 if $(json_get off.json 'd["summary"]["psnr_rgb"]["mean"]') < $ours - 5 else 1)" ||
    die "the offset pairing should be far worse than $ours dB"
  # Both cut by --frames (the source longer, the encoded too): nothing to say.
  run_ok quality src.nut src.nut --frames 10 --quiet
  ! grep -q 'note' err.txt || die "a note where both inputs were cut: $(cat err.txt)"
  expect_fail 2 quality src.nut seg.avi --start -1
  ffmpeg -v error -y -i src.nut -frames:v 1 one.ppm || die "ffmpeg failed"
  expect_fail 2 quality one.ppm one.ppm --start 1
}

# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------

if [[ ${1:-} == --list ]]; then
  declare -F | awk '$3 ~ /^case_/ { sub(/^case_/, "", $3); print $3 }'
  exit 0
fi
[[ $# -ge 4 ]] || { echo "usage: $0 CASE MJPEG MEDIA_DIR WORK_DIR" >&2; exit 2; }
name=$1
MJPEG=$(realpath "$2")
MEDIA=${MJPEG_MEDIA_DIR:-$3}
declare -F "case_$name" >/dev/null || { echo "unknown case $name" >&2; exit 2; }
[[ -x $MJPEG ]] || die "mjpeg binary $MJPEG not found"
[[ -d $MEDIA/video ]] || die "test media $MEDIA/video not found (set MJPEG_MEDIA_DIR)"
dir="$4/$name"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || die "cannot make $dir"
"case_$name"
echo "PASS: $name"
