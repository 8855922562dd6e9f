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
# swscale_equals_ffmpeg FILE FRAMES [PATH]: after rgb_equals_ffmpeg FILE FRAMES (ref/ holds
# ffmpeg's rgb24), the pixels encoded with --rgb-decode swscale (libswscale into padded rows,
# then turned) are ffmpeg's too, byte for byte; and the default decode of FILE took PATH
# ("planes" or "libswscale") when given. (-s 444: 3-component frames also of a grey source,
# whose dump is then the RGB, as of any other.)
swscale_equals_ffmpeg() {
  rm -rf sw
  "$MJPEG" encode "$1" -o sw.avi -y --rgb-decode swscale --dump-input sw --frames "$2" \
    -s 444 --mode cpu --quiet 2>err.txt || die "--rgb-decode swscale on $1: $(cat err.txt)"
  local i
  for ((i = 1; i <= $2; i++)); do
    same_bytes "sw/$(printf '%06d' "$i").ppm" "ref/$(printf '%03d' "$i").ppm"
  done
  if [[ -n ${3:-} ]]; then
    "$MJPEG" encode "$1" -o sw.avi -y --frames 1 --mode cpu 2>err.txt || die "$(cat err.txt)"
    local want="planes to the encoder"
    [[ $3 == libswscale ]] && want="to RGB (libswscale)"
    grep -q "$want" err.txt || die "$1 not decoded $3: $(grep input err.txt)"
  fi
}
case_video_rgb_equals_ffmpeg_at_every_width() {
  need_ffmpeg
  # The size that showed black right columns (the 480p 16:9 size, H.264), then every width
  # modulo 16 (odd heights for the odd widths), cycling through 4:2:0, 4:2:2 and 4:4:4 sources.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=854x480:rate=25 -frames:v 2 \
    -pix_fmt yuv420p -c:v libx264 -crf 14 w854.mp4 || skip "ffmpeg cannot make an H.264 clip"
  need_libav w854.mp4
  rgb_equals_ffmpeg w854.mp4 2
  swscale_equals_ffmpeg w854.mp4 2 planes
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
    swscale_equals_ffmpeg "c$r.mkv" 1 "$([[ ${fmts[r % 3]} == yuv444p ]] && echo libswscale || echo planes)"
  done
  # Formats the planar path takes or leaves to libswscale at odd sizes: gray (planes), nv12
  # (libswscale: it interpolates nv12's chroma vertically).
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=327x91:rate=25 -frames:v 1 -pix_fmt gray \
    -c:v ffv1 g.mkv || die "ffmpeg cannot make g.mkv"
  rgb_equals_ffmpeg g.mkv 1
  swscale_equals_ffmpeg g.mkv 1 planes
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=854x480:rate=25 -frames:v 1 -pix_fmt nv12 \
    -c:v rawvideo n.nut || die "ffmpeg cannot make n.nut"
  rgb_equals_ffmpeg n.nut 1
  swscale_equals_ffmpeg n.nut 1 libswscale
  echo "854x480 and widths 320..335, gray and nv12: identical to ffmpeg's rgb24 (planes and libswscale)"
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

case_video_display_matrix_applied_as_ffmpeg_does() {
  need_ffmpeg
  # A phone clip's display matrix (rotate metadata, as ffmpeg writes it) at 90, 180 and 270
  # degrees, on 4:2:0 (even size) and 4:4:4 (odd size) sources; and a mirror (a tkhd matrix with
  # a = -1, patched in): our RGB equals ffmpeg's autorotated rgb24, and a note says so.
  make_h264 c420.mp4 2 160x90
  need_libav c420.mp4
  make_h264 c444.mp4 2 161x91 -pix_fmt yuv444p -qp 0
  local c r
  for c in c420 c444; do
    for r in 90 180 270; do
      ffmpeg -nostdin -v error -i $c.mp4 -c copy -metadata:s:v rotate=$r ${c}_$r.mp4 ||
        die "ffmpeg cannot set the rotation"
      rgb_equals_ffmpeg ${c}_$r.mp4 2
      swscale_equals_ffmpeg ${c}_$r.mp4 2 "$([[ $c == c420 ]] && echo planes || echo libswscale)"
    done
  done
  expect_ok encode c420_90.mp4 -o out.avi
  grep -q "^mjpeg: note: 'c420_90.mp4' is shown rotated by 90 degrees .*display matrix.*160x90 frames are turned to 90x160" \
    err.txt || die "no rotation notice: $(cat err.txt)"
  [[ $(probe_counts out.avi) == "mjpeg 90 160 25/1 2 2" ]] || die "ffprobe: $(probe_counts out.avi)"
  # --no-autorotate: as stored, like ffmpeg -noautorotate.
  expect_ok encode c420_90.mp4 -o kept.avi --no-autorotate
  grep -q "^mjpeg: note: .*--no-autorotate keeps its 160x90 frames as stored" err.txt ||
    die "no --no-autorotate notice: $(cat err.txt)"
  [[ $(probe_counts kept.avi) == "mjpeg 160 90 25/1 2 2" ]] || die "ffprobe: $(probe_counts kept.avi)"
  # A mirrored track: matrix entry a = -1 (the first 4 bytes of the matrix in tkhd, 48 bytes in).
  local at
  at=$(grep -abo tkhd c420.mp4 | head -1 | cut -d: -f1)
  cp c420.mp4 mirror.mp4
  printf '\377\377\000\000' | dd of=mirror.mp4 bs=1 seek=$((at + 44)) conv=notrunc status=none
  rgb_equals_ffmpeg mirror.mp4 2
  swscale_equals_ffmpeg mirror.mp4 2 planes
  expect_ok encode mirror.mp4 -o m.avi
  grep -q "note: 'mirror.mp4' is shown mirrored left to right" err.txt || die "no mirror notice: $(cat err.txt)"
}

# with_exif_orientation IN.jpg OUT.jpg O: IN with an APP1 Exif segment (big-endian TIFF, IFD0
# holding only Orientation = O) inserted after SOI.
with_exif_orientation() {
  { head -c 2 "$1"
    printf '\377\341\000\042Exif\000\000MM\000\052\000\000\000\010\000\001\001\022\000\003'
    printf "\\000\\000\\000\\001\\000\\x0$3\\000\\000\\000\\000\\000\\000"
    tail -c +3 "$1"; } >"$2"
}
case_exif_orientation_applied() {
  need_ffmpeg
  need_cjpeg
  have_opencv || skip "built without OpenCV (JPEG and TIFF input)"
  command -v djpeg >/dev/null || skip "djpeg not found"
  # A 64x48 JPEG; with EXIF orientation O it must encode exactly as cjpeg encodes the turned
  # pixels (djpeg's decode of it, turned by ffmpeg's transpose / flip filters on RGB).
  ffmpeg -nostdin -v error -i "$SAMPLE" -vf crop=64:48:200:100 plain.ppm || die "ffmpeg failed"
  "$CJPEG" -quality 95 -outfile plain.jpg plain.ppm && djpeg -outfile dec.ppm plain.jpg ||
    die "cjpeg/djpeg failed"
  local o filter
  for o in 2 3 4 5 6 7 8; do
    case $o in
      2) filter=hflip ;; 3) filter=hflip,vflip ;; 4) filter=vflip ;;
      5) filter=transpose=cclock_flip ;; 6) filter=transpose=clock ;;
      7) filter=transpose=clock_flip ;; 8) filter=transpose=cclock ;;
    esac
    with_exif_orientation plain.jpg "o$o.jpg" $o
    ffmpeg -nostdin -v error -i dec.ppm -vf "$filter" -pix_fmt rgb24 -y ref.ppm || die "ffmpeg $filter"
    "$CJPEG" -quality 100 -sample 1x1 -outfile ref.jpg ref.ppm || die "cjpeg failed"
    expect_ok encode "o$o.jpg" -o "out$o.jpg" -q 100 -s 444
    grep -q "^mjpeg: note: 'o$o.jpg' is shown .*(EXIF orientation $o)" err.txt ||
      die "orientation $o: no notice: $(cat err.txt)"
    same_bytes "out$o.jpg" ref.jpg
  done
  grep -q "64x48 pixels are turned to 48x64" err.txt || die "notice lacks the sizes: $(cat err.txt)"
  # --no-autorotate: the pixels as stored.
  "$CJPEG" -quality 100 -sample 1x1 -outfile asis.jpg dec.ppm || die "cjpeg failed"
  expect_ok encode o6.jpg -o kept.jpg -q 100 -s 444 --no-autorotate
  same_bytes kept.jpg asis.jpg
  # A TIFF's own Orientation tag (written here: uncompressed RGB, little-endian).
  command -v python3 >/dev/null || skip "python3 not found (TIFF case)"
  python3 - dec.ppm o6.tif <<'PY' || die "cannot write the TIFF"
import struct, sys
data = open(sys.argv[1], "rb").read()
parts = data.split(b"\n", 3)
w, h = map(int, parts[1].split()); pix = parts[3]
tags = [(256, 3, 1, w), (257, 3, 1, h), (258, 3, 3, None), (259, 3, 1, 1), (262, 3, 1, 2),
        (273, 4, 1, None), (274, 3, 1, 6), (277, 3, 1, 3), (278, 3, 1, h), (279, 4, 1, len(pix))]
ifd = 8; bps = ifd + 2 + 12 * len(tags) + 4; strip = bps + 6
out = b"II*\0" + struct.pack("<I", ifd) + struct.pack("<H", len(tags))
for tag, typ, n, v in tags:
    if tag == 258: v = bps
    if tag == 273: v = strip
    out += struct.pack("<HHI", tag, typ, n) + (struct.pack("<HH", v, 0) if typ == 3 and n == 1 else struct.pack("<I", v))
out += struct.pack("<I", 0) + struct.pack("<HHH", 8, 8, 8) + pix
open(sys.argv[2], "wb").write(out)
PY
  ffmpeg -nostdin -v error -i dec.ppm -vf transpose=clock -pix_fmt rgb24 -y ref.ppm &&
    "$CJPEG" -quality 100 -sample 1x1 -outfile ref.jpg ref.ppm || die "reference failed"
  expect_ok encode o6.tif -o tif.jpg -q 100 -s 444
  grep -q "note: 'o6.tif' is shown rotated by 90 degrees clockwise (EXIF orientation 6)" err.txt ||
    die "TIFF: no notice: $(cat err.txt)"
  same_bytes tif.jpg ref.jpg
  "$CJPEG" -quality 100 -sample 1x1 -outfile asis.jpg dec.ppm || die "cjpeg failed"
  expect_ok encode o6.tif -o tifkept.jpg -q 100 -s 444 --no-autorotate
  same_bytes tifkept.jpg asis.jpg
}

case_image_sequence_gap_is_an_error() {
  need_ffmpeg
  mkdir frames
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 10 frames/%05d.png ||
    die "ffmpeg cannot write PNGs"
  rm frames/00006.png
  expect_fail 1 encode frames/%05d.png -o out.avi --quiet
  grep -q "'frames/00006.png' is missing from the image sequence 'frames/%05d.png' (00001..00005 are there, then it goes on at 00007)" \
    err.txt || die "unclear error: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
  # --keep-going skips the gap (with a notice); --frames 5 never reaches it.
  expect_ok encode frames/%05d.png -o kept.avi --keep-going
  grep -q "^mjpeg: note: --keep-going: 1 number of the image sequence 'frames/%05d.png' is missing (the first: 'frames/00006.png') and skipped" \
    err.txt || die "no --keep-going notice: $(cat err.txt)"
  [[ $(probe_counts kept.avi) == "mjpeg 64 48 25/1 9 9" ]] || die "ffprobe: $(probe_counts kept.avi)"
  expect_ok encode frames/%05d.png -o five.avi --frames 5 --quiet
  [[ $(probe_counts five.avi) == "mjpeg 64 48 25/1 5 5" ]] || die "ffprobe: $(probe_counts five.avi)"
}
case_image_sequence_start_number() {
  need_ffmpeg
  need_cjpeg
  mkdir zero hundred
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 4 -start_number 0 \
    zero/f%d.ppm && ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 6 \
    -start_number 100 hundred/%04d.ppm || die "ffmpeg cannot write PPMs"
  # A sequence starts at its lowest number (0 here, 100 there), or at --start-number.
  mkdir out
  expect_ok encode zero/f%d.ppm -o out/%d.jpg --quiet
  [[ $(ls out | sort -n | tr '\n' ' ') == "1.jpg 2.jpg 3.jpg 4.jpg " ]] || die "files: $(ls out)"
  "$CJPEG" -quality 90 -outfile ref.jpg zero/f0.ppm && same_bytes out/1.jpg ref.jpg
  expect_ok encode hundred/%04d.ppm -o h.avi --quiet
  [[ $(probe_counts h.avi) == "mjpeg 64 48 25/1 6 6" ]] || die "ffprobe: $(probe_counts h.avi)"
  expect_ok encode hundred/%04d.ppm -o h3.mjpeg --start-number 103 --quiet
  "$CJPEG" -quality 90 -outfile ref.jpg hundred/0103.ppm || die "cjpeg failed"
  head -c "$(stat -c %s ref.jpg)" h3.mjpeg | cmp -s - ref.jpg || die "the first frame is not 0103"
  expect_fail 1 encode hundred/%04d.ppm -o x.avi --start-number 99 --quiet
  grep -q "'hundred/0099.ppm' is missing.*its files begin at 'hundred/0100.ppm'" err.txt ||
    die "unclear error: $(cat err.txt)"
  expect_fail 1 encode hundred/%05d.ppm -o x.avi --quiet
  grep -q "no file matches the image sequence 'hundred/%05d.ppm'" err.txt || die "unclear: $(cat err.txt)"
}

case_y4m_colour_matrix_and_range_stated() {
  need_ffmpeg
  # HD BT.709 through a Y4M pipe: Y4M carries no matrix, so BT.601 is assumed (with a notice
  # that says so, and that HD is usually BT.709); --colorspace bt709 states it.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=1280x720:rate=25 -frames:v 2 \
    -vf scale=out_color_matrix=bt709 -colorspace bt709 -color_primaries bt709 -color_trc bt709 \
    -pix_fmt yuv420p -c:v ffv1 hd709.mkv || die "ffmpeg cannot make the clip"
  ffmpeg -nostdin -v error -i hd709.mkv -f yuv4mpegpipe hd709.y4m || die "ffmpeg cannot write Y4M"
  "$MJPEG" encode - -o assumed.avi -q 100 -s 444 --mode cpu <hd709.y4m 2>err.txt ||
    die "encode failed: $(cat err.txt)"
  grep -q "^mjpeg: note: standard input: the Y4M header does not say which colour matrix its YCbCr uses; BT.601 is assumed, but 1280x720 is HD, which is usually BT.709 (--colorspace" \
    err.txt || die "no notice of the assumed matrix: $(cat err.txt)"
  "$MJPEG" encode - -o stated.avi -q 100 -s 444 --mode cpu --colorspace bt709 <hd709.y4m \
    2>err.txt || die "encode failed: $(cat err.txt)"
  ! grep -q 'assumed' err.txt || die "a notice of an assumed matrix despite --colorspace: $(cat err.txt)"
  grep -q 'BT.709' err.txt || die "the input line does not say BT.709: $(cat err.txt)"
  local wrong right
  wrong=$(psnr_vs_ffmpeg assumed.avi hd709.mkv)
  right=$(psnr_vs_ffmpeg stated.avi hd709.mkv)
  awk -v w="$wrong" -v r="$right" 'BEGIN { exit !(r >= 40 && r - w >= 3) }' ||
    die "BT.709 stated: $right dB, assumed BT.601: $wrong dB against ffmpeg's RGB"
  echo "BT.709: $right dB stated, $wrong dB assumed"
  # A video file's own tag can be overridden too (here wrongly, to see that it takes effect).
  need_libav hd709.mkv
  expect_ok encode hd709.mkv -o over.avi -q 100 -s 444 --colorspace bt601
  grep -q "(BT.601 limited range as stated)" err.txt || die "no 'as stated': $(cat err.txt)"
  local over
  over=$(psnr_vs_ffmpeg over.avi hd709.mkv)
  awk -v o="$over" -v w="$wrong" 'BEGIN { exit !(o - w < 1 && w - o < 1) }' ||
    die "--colorspace bt601 on the file: $over dB, through Y4M as BT.601 $wrong dB"
  # Full range without the XCOLORRANGE tag: limited is assumed (and said); --range full fixes it.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=320x180:rate=25 -frames:v 2 \
    -vf scale=out_range=full -color_range pc -pix_fmt yuv420p -c:v ffv1 full.mkv &&
    ffmpeg -nostdin -v error -i full.mkv -f yuv4mpegpipe -strict -1 full.y4m || die "ffmpeg failed"
  head -1 full.y4m | grep -q 'XCOLORRANGE=FULL' || die "ffmpeg wrote no XCOLORRANGE=FULL"
  LC_ALL=C sed '1s/ XCOLORRANGE=FULL//' full.y4m >untagged.y4m
  expect_ok encode untagged.y4m -o limited.avi -q 100 -s 444
  grep -q "untagged.y4m: the Y4M header does not say which colour matrix and range its YCbCr uses; BT.601 and limited range (16..235) are assumed" \
    err.txt || die "no notice of the assumed range: $(cat err.txt)"
  expect_ok encode untagged.y4m -o fullr.avi -q 100 -s 444 --range full
  wrong=$(psnr_vs_ffmpeg limited.avi full.mkv)
  right=$(psnr_vs_ffmpeg fullr.avi full.mkv)
  awk -v w="$wrong" -v r="$right" 'BEGIN { exit !(r >= 40 && r - w >= 3) }' ||
    die "full range stated: $right dB, assumed limited: $wrong dB against ffmpeg's RGB"
  echo "full range: $right dB stated, $wrong dB assumed"
}

case_big_pictures_up_to_jpeg_limit() {
  need_ffmpeg
  need_cjpeg
  # Wider and taller than the old 16384 limit (libjpeg allows 65500 per side), as PPM and PNG:
  # each equals cjpeg's JPEG.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=20000x40 -frames:v 1 wide.ppm &&
    ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=40x20000 -frames:v 1 tall.ppm ||
    die "ffmpeg cannot make the pictures"
  against_cjpeg "$PWD/wide.ppm" "-q 80" "-quality 80 -sample 2x2"
  against_cjpeg "$PWD/tall.ppm" "-s 444 --optimize" "-quality 90 -sample 1x1 -optimize"
  if have_opencv; then
    ffmpeg -nostdin -v error -i wide.ppm wide.png || die "ffmpeg cannot write a PNG"
    expect_ok encode wide.png -o png.jpg -q 80
    "$CJPEG" -quality 80 -outfile ref.jpg wide.ppm && same_bytes png.jpg ref.jpg
  fi
  # A stream of such frames.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=20000x16:rate=25 -frames:v 2 \
    -pix_fmt yuv420p -f yuv4mpegpipe wide.y4m || die "ffmpeg cannot write the Y4M"
  expect_ok encode wide.y4m -o wide.avi --quiet
  [[ $(probe_counts wide.avi) == "mjpeg 20000 16 25/1 2 2" ]] || die "ffprobe: $(probe_counts wide.avi)"
  # libjpeg's limit, 65500 per side: cjpeg writes such a picture, djpeg reads ours back.
  local w
  for w in 65500 65535; do
    python3 -c "import sys; w = $w; sys.stdout.buffer.write(b'P5\n%d 9\n255\n' % w + bytes((x * 7 + y * 31) % 256 for y in range(9) for x in range(w)))" >g$w.pgm ||
      die "python3 cannot write the PGM"
  done
  mv g65500.pgm edge.pgm && mv g65535.pgm over.pgm
  against_cjpeg "$PWD/edge.pgm" "" "-quality 90"
  djpeg -outfile back.pgm ours.jpg || die "djpeg cannot read the 65500x9 JPEG"
  [[ $(head -c 15 back.pgm | tr '\n' ' ') == "P5 65500 9 255 "* ]] || die "djpeg: $(head -c 15 back.pgm)"
  # Above it (JPEG's SOF could say 65535, but libjpeg and its readers refuse it, and cjpeg
  # writes no reference): exit 1, one line, whatever the reader.
  ! "$CJPEG" -outfile x.jpg over.pgm 2>/dev/null || die "cjpeg accepted 65535x9"
  expect_fail 1 encode over.pgm -o out.jpg --quiet
  grep -q "65535x9 is above 65500 per side, libjpeg's limit" err.txt || die "unclear: $(cat err.txt)"
  ffmpeg -nostdin -v error -f lavfi -i color=gray:size=70000x8 -frames:v 1 huge.ppm ||
    die "ffmpeg cannot make the 70000x8 picture"
  expect_fail 1 encode huge.ppm -o out.jpg --quiet
  grep -q "70000x8 is above 65500 per side, libjpeg's limit" err.txt || die "unclear: $(cat err.txt)"
  if have_opencv; then
    ffmpeg -nostdin -v error -i huge.ppm huge.png || die "ffmpeg cannot write the PNG"
    expect_fail 1 encode huge.png -o out.jpg --quiet
    grep -q "'huge.png' is 70000x8 pixels, above 65500 per side, libjpeg's limit" err.txt ||
      die "unclear: $(cat err.txt)"
  fi
  # A Y4M stream of 65535-wide frames alike.
  printf 'YUV4MPEG2 W65535 H2 F25:1 Ip A1:1 C420jpeg\nFRAME\n' >over.y4m
  head -c $((65535 * 2 + 2 * 32768)) /dev/zero >>over.y4m
  expect_fail 1 encode over.y4m -o out.avi --quiet
  grep -q "65535x2 pixels, above 65500 per side" err.txt || die "unclear: $(cat err.txt)"
  [[ ! -e out.jpg && ! -e out.avi ]] || die "an output was created"
}

case_video_notices_interlaced_vfr_extra_streams() {
  need_ffmpeg
  # Interlaced (MPEG-2, top field first).
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 4 -vf setfield=tff \
    -flags +ilme+ildct -top 1 -c:v mpeg2video -q:v 4 i.mpg || skip "ffmpeg cannot write MPEG-2"
  need_libav i.mpg
  expect_ok encode i.mpg -o i.avi
  grep -q "^mjpeg: note: 'i.mpg' is interlaced video (top field first): the two fields of each frame are encoded together" \
    err.txt || die "no interlace notice: $(cat err.txt)"
  make_h264 p.mp4 4 160x90
  expect_ok encode p.mp4 -o p.avi
  ! grep -q 'interlaced\|variable frame rate\|video streams' err.txt || die "false notice: $(cat err.txt)"
  # Variable frame rate: 5 frames 40 ms apart, a 240 ms gap, 4 more; written at the average.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=160x90:rate=25 -frames:v 10 \
    -vf "setpts='(N+gte(N\,5)*5)/25/TB'" -fps_mode vfr -c:v libx264 vfr.mp4 ||
    die "ffmpeg cannot make a VFR clip"
  expect_ok encode vfr.mp4 -o vfr.avi
  grep -q "^mjpeg: note: 'vfr.mp4' has a variable frame rate (frames 40.0 to 240.0 ms apart): written at a constant 50/3 fps, which moves frames by up to 100 ms" \
    err.txt || die "no VFR notice: $(cat err.txt)"
  [[ $(probe_counts vfr.avi) == "mjpeg 160 90 50/3 10 10" ]] || die "ffprobe: $(probe_counts vfr.avi)"
  # Two video streams: the note names both; --stream 1 picks the second, --stream 2 is none.
  make_h264 b.mp4 3 320x180
  ffmpeg -nostdin -v error -i p.mp4 -i b.mp4 -map 0 -map 1 -c copy two.mkv || die "ffmpeg cannot mux"
  expect_ok encode two.mkv -o t0.avi
  grep -q "^mjpeg: note: 'two.mkv' has 2 video streams (0: h264 160x90, 1: h264 320x180): stream 0 is encoded" \
    err.txt || die "no note of the second stream: $(cat err.txt)"
  [[ $(probe_counts t0.avi) == "mjpeg 160 90 25/1 4 4" ]] || die "ffprobe: $(probe_counts t0.avi)"
  expect_ok encode two.mkv -o t1.avi --stream 1
  [[ $(probe_counts t1.avi) == "mjpeg 320 180 25/1 3 3" ]] || die "ffprobe: $(probe_counts t1.avi)"
  expect_fail 1 encode two.mkv -o t2.avi --stream 2 --quiet
  grep -q -- "--stream 2: 'two.mkv' has 2 video streams (0..1)" err.txt || die "unclear: $(cat err.txt)"
  make_y4m in.y4m 2 64x48
  expect_fail 1 encode in.y4m -o y.avi --stream 1 --quiet
  [[ ! -e t2.avi && ! -e y.avi ]] || die "an output was created"
}

case_bmp_density_carried_like_cjpeg() {
  need_ffmpeg
  need_cjpeg
  have_opencv || skip "built without OpenCV (BMP input)"
  # 24-bit and 8-bit (palette) BMPs with a resolution (2835 and 3780 pixels per metre: 72 and
  # 96 dpi): cjpeg writes it into the JFIF header as dots per cm, and so must we; without one,
  # both write 0 (no units) and 1x1.
  ffmpeg -nostdin -v error -i "$SAMPLE" -vf crop=97:61:100:50 rgb.bmp &&
    ffmpeg -nostdin -v error -i "$SAMPLE" -vf crop=97:61:100:50 -pix_fmt pal8 pal.bmp ||
    die "ffmpeg cannot write BMPs"
  local f
  for f in rgb pal; do
    cp $f.bmp ${f}_dpi.bmp
    printf '\023\013\000\000\304\016\000\000' |  # 2835, 3780 (little-endian)
      dd of=${f}_dpi.bmp bs=1 seek=38 conv=notrunc status=none
    against_cjpeg "$PWD/${f}_dpi.bmp" "-q 75" "-quality 75"
    [[ $(od -An -tu1 -j13 -N5 ours.jpg | tr -s ' ') == " 2 0 28 0 37" ]] ||
      die "$f: JFIF density $(od -An -tu1 -j13 -N5 ours.jpg)"
    against_cjpeg "$PWD/$f.bmp" "-q 75" "-quality 75"
  done
}
