# Cases of the stream inputs (sourced by cli_test.sh; its helpers are available): what FFmpeg's
# libraries decode equals ffmpeg's own RGB, damaged and truncated inputs, rotation, image
# sequences, Y4M colour.

# rgb_equals_ffmpeg CLIP FRAMES: mjpeg's RGB of CLIP (as `encode` and `quality` decode it) equals
# `ffmpeg -i CLIP -pix_fmt rgb24` in every pixel of the first FRAMES frames: ffmpeg writes the
# frames as PPM files (read by mjpeg's own PPM reader, no FFmpeg involved), and `mjpeg quality`
# must find them identical (PSNR inf).
rgb_equals_ffmpeg() {
  rm -rf ref && mkdir ref
  ffmpeg -nostdin -v error -i "$1" -frames:v "$2" -pix_fmt rgb24 ref/%03d.ppm ||
    die "ffmpeg cannot decode $1"
  "$MJPEG" quality "$1" ref/%03d.ppm --frames "$2" --quiet >q.txt 2>err.txt ||
    die "quality $1 failed: $(cat err.txt)"
  grep -q '^  PSNR RGB  min *inf ' q.txt ||
    die "$1 ($(ffprobe -v error -show_entries stream=width,height,pix_fmt -of csv=p=0 "$1")): our RGB differs from ffmpeg's: $(grep 'PSNR RGB' q.txt)"
}
case_video_rgb_equals_ffmpeg_at_every_width() {
  need_ffmpeg
  # The size that showed black right columns (the 480p 16:9 size, H.264), then every width
  # modulo 16 (odd heights for the odd widths), cycling through 4:2:0, 4:2:2 and 4:4:4 sources.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=854x480:rate=25 -frames:v 2 \
    -pix_fmt yuv420p -c:v libx264 -crf 14 w854.mp4 || skip "ffmpeg cannot make an H.264 clip"
  need_libav w854.mp4
  rgb_equals_ffmpeg w854.mp4 2
  # And the encode of it: each frame is cjpeg's JPEG of ffmpeg's RGB, byte for byte.
  need_cjpeg
  mkdir enc
  expect_ok encode w854.mp4 -o enc/%03d.jpg -q 100 -s 444 --quiet
  "$CJPEG" -quality 100 -sample 1x1 -outfile ref2.jpg ref/002.ppm || die "cjpeg failed"
  same_bytes enc/002.jpg ref2.jpg
  local r w h fmts=(yuv420p yuv422p yuv444p)
  for ((r = 0; r < 16; r++)); do
    w=$((320 + r)) h=$((90 + r % 2))
    ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=${w}x$h:rate=25" -frames:v 1 \
      -pix_fmt "${fmts[r % 3]}" -c:v ffv1 "c$r.mkv" || die "ffmpeg cannot make c$r.mkv"
    rgb_equals_ffmpeg "c$r.mkv" 1
  done
  echo "854x480 and widths 320..335: identical to ffmpeg's rgb24"
}

# make_h264 FILE FRAMES [SIZE] [EXTRA...]: a test clip in H.264 (moov atom first in an MP4, as
# cameras and most tools write it, so that a cut file still opens).
make_h264() {
  local f=$1 n=$2 size=${3:-160x90}
  shift 3 2>/dev/null || shift $#
  ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=$size:rate=25" -frames:v "$n" \
    -pix_fmt yuv420p -c:v libx264 -g 10 "$@" "$f" || skip "ffmpeg cannot make an H.264 clip"
}
# cut_file IN OUT PERCENT: the first PERCENT % of IN's bytes.
cut_file() { head -c $(( $(stat -c %s "$1") * $3 / 100 )) "$1" >"$2"; }

case_truncated_video_exit_1_no_output() {
  need_ffmpeg
  make_h264 clip.mp4 100 160x90 -movflags +faststart
  need_libav clip.mp4
  ffmpeg -nostdin -v error -i clip.mp4 -c copy clip.mkv || die "ffmpeg cannot remux to MKV"
  cut_file clip.mp4 cut.mp4 60
  cut_file clip.mkv cut.mkv 50
  local f
  for f in cut.mp4 cut.mkv; do
    expect_fail 1 encode "$f" -o out.avi --quiet
    [[ ! -e out.avi ]] || die "out.avi created for $f"
  done
  expect_fail 1 encode cut.mp4 -o out.avi --quiet
  grep -q "'cut.mp4' ends early.*its container announces 100 frames, [0-9]* decoded; nothing written" \
    err.txt || die "unclear error: $(cat err.txt)"
  expect_fail 1 encode cut.mkv -o out.mjpeg --quiet
  grep -q "'cut.mkv' is truncated or damaged.*: [0-9]* frames decoded" err.txt ||
    die "unclear error: $(cat err.txt)"
  [[ ! -e out.mjpeg ]] || die "out.mjpeg created"
  # The whole file is not an error (no false alarm), and neither is a shorter --frames.
  expect_ok encode clip.mkv -o whole.avi --quiet
  expect_ok encode cut.mp4 -o part.avi --frames 10 --quiet
}
case_truncated_video_keep_going_encodes_what_decodes() {
  need_ffmpeg
  make_h264 clip.mp4 100 160x90 -movflags +faststart
  need_libav clip.mp4
  cut_file clip.mp4 cut.mp4 60
  expect_ok encode cut.mp4 -o out.avi --keep-going
  local n
  n=$(sed -n "s/^mjpeg: note: --keep-going: 'cut.mp4' ends early.*: \([0-9]*\) of the 100 frames its container announces encoded, \([0-9]*\) lost$/\1 \2/p" err.txt)
  [[ -n $n ]] || die "no --keep-going notice: $(cat err.txt)"
  read -r kept lost <<<"$n"
  (( kept > 0 && kept < 100 && kept + lost == 100 )) || die "notice says $kept kept, $lost lost"
  [[ $(probe_counts out.avi) == "mjpeg 160 90 25/1 $kept $kept" ]] ||
    die "the notice says $kept frames, ffprobe: $(probe_counts out.avi)"
  # Those frames are the clip's first ones, each as cjpeg encodes ffmpeg's RGB of them.
  need_cjpeg
  ffmpeg -nostdin -v error -i clip.mp4 -frames:v "$kept" -pix_fmt rgb24 -y last%03d.ppm
  expect_ok encode cut.mp4 -o f%03d.jpg --keep-going --quiet
  "$CJPEG" -quality 90 -sample 2x2 -outfile ref.jpg "$(printf 'last%03d.ppm' "$kept")"
  same_bytes "$(printf 'f%03d.jpg' "$kept")" ref.jpg
  echo "kept $kept, lost $lost"
}
