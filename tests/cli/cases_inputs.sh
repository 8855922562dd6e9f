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
