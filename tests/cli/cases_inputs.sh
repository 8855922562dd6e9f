# Cases of the inputs (sourced by cli_test.sh; its helpers are available): what FFmpeg's
# libraries decode equals ffmpeg's own RGB, and the same planes give the same bytes from a video,
# Y4M and raw frames; inputs recognised by their content, pipes and FIFOs read once; raw frames;
# damaged and truncated inputs and --keep-going, rotation, image sequences, Y4M colour.

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
# real_clip OUT SIZE PIX CODEC [FRAMES]: FRAMES (default 1) frames of a real photograph (the
# Foveon flower of the shared media, a different crop each) at SIZE in PIX, coded with CODEC; its
# size checked with ffprobe (a 4:2:0 source made at an odd size straight from testsrc2 would be
# rounded down, and testsrc2's flat colours hide what odd sizes do to chroma).
real_clip() {
  need_media images/imagecompression.info/flower_foveon.png
  local w=${2%x*} h=${2#*x}
  # The photograph decoded once per case (reading a PPM is quick; decoding the PNG is not).
  [[ -f photo.ppm ]] || ffmpeg -nostdin -v error \
    -i "$MEDIA/images/imagecompression.info/flower_foveon.png" -pix_fmt rgb24 photo.ppm ||
    die "ffmpeg cannot decode the photograph"
  ffmpeg -nostdin -v error -loop 1 -i photo.ppm -frames:v "${5:-1}" -vf "crop=$w:$h:60+9*n:40+7*n,format=yuv444p" -pix_fmt "$3" -c:v "$4" \
    -y "$1" || die "ffmpeg cannot make $1 ($2 $3 $4)"
  [[ $(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$1") == "$w,$h" ]] ||
    die "$1 is not $2"
}
# widths_equal_ffmpeg FROM TO: every width 320+FROM .. 320+TO (modulo 16 over the two cases),
# odd heights for the odd widths, cycling through 4:2:0, 4:2:2 and 4:4:4 sources of real
# content: our RGB is ffmpeg's, through planes where the transforms give it (4:2:0 and 4:2:2 of
# even height) and libswscale itself otherwise.
widths_equal_ffmpeg() {
  need_ffmpeg
  local r w h fmts=(yuv420p yuv422p yuv444p)
  for ((r = $1; r <= $2; r++)); do
    w=$((320 + r)) h=$((90 + r % 2))
    real_clip "c$r.mkv" "${w}x$h" "${fmts[r % 3]}" ffv1
    if [[ $r -eq $1 ]]; then need_libav "c$r.mkv"; fi
    rgb_equals_ffmpeg "c$r.mkv" 1
    swscale_equals_ffmpeg "c$r.mkv" 1 "$([[ ${fmts[r % 3]} == yuv444p || $((h % 2)) -eq 1 ]] && echo libswscale || echo planes)"
  done
  echo "widths $((320 + $1))..$((320 + $2)), heights 90 and 91: identical to ffmpeg's rgb24"
}
case_video_rgb_equals_ffmpeg_at_every_width() { widths_equal_ffmpeg 0 7; }
case_video_rgb_equals_ffmpeg_at_every_width_2() { widths_equal_ffmpeg 8 15; }
case_video_rgb_equals_ffmpeg_at_854x480_gray_nv12() {
  need_ffmpeg
  # The size that showed black right columns (the 480p 16:9 size, H.264).
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
  # Gray (planes: R = G = B = Y, whatever the range) and nv12 (libswscale, which interpolates
  # nv12's chroma vertically), real content at odd sizes.
  local size
  for size in 327x91 328x90; do
    real_clip g.mkv "$size" gray ffv1
    rgb_equals_ffmpeg g.mkv 1
    swscale_equals_ffmpeg g.mkv 1 planes
    real_clip n.nut "$size" nv12 rawvideo
    rgb_equals_ffmpeg n.nut 1
    swscale_equals_ffmpeg n.nut 1 libswscale
  done
  echo "854x480, gray and nv12: identical to ffmpeg's rgb24 (planes and libswscale)"
}

# The same planes give the same RGB, and so the same JPEG, whichever way they arrive: a video
# file decoded by FFmpeg's libraries, a Y4M file, a Y4M pipe (README's example) or raw frames;
# that RGB is ffmpeg's own rgb24 of the clip, at odd sizes too, on real content.
case_same_planes_same_bytes_from_video_y4m_and_pipe() {
  need_ffmpeg
  local size w h i first=1
  for size in 321x241 640x361 1280x533 960x540; do
    w=${size%x*} h=${size#*x}
    real_clip clip.mkv "$size" yuv420p ffv1 2
    if [[ $first -eq 1 ]]; then need_libav clip.mkv; fi
    first=0
    rm -rf v y p raw d ref && mkdir v y p raw ref
    run_timed encode clip.mkv -o v/%d.jpg --dump-input d --mode cpu -q 100 -s 444 --quiet
    ffmpeg -nostdin -v error -i clip.mkv -f yuv4mpegpipe -y clip.y4m || die "ffmpeg failed"
    run_timed encode clip.y4m -o y/%d.jpg --mode cpu -q 100 -s 444 --quiet
    ffmpeg -nostdin -v error -i clip.mkv -f yuv4mpegpipe - |
      run_timed encode - -o p/%d.jpg --mode cpu -q 100 -s 444 --quiet
    ffmpeg -nostdin -v error -i clip.mkv -pix_fmt rgb24 ref/%d.ppm || die "ffmpeg failed"
    for i in 1 2; do
      same_bytes "d/00000$i.ppm" "ref/$i.ppm"
      same_bytes "y/$i.jpg" "v/$i.jpg"
      same_bytes "p/$i.jpg" "v/$i.jpg"
    done
    ffmpeg -nostdin -v error -i clip.mkv -f rawvideo - |
      run_timed encode - -o raw/%d.jpg --pix-fmt yuv420p --size "$size" --mode cpu -q 100 \
        -s 444 --quiet
    for i in 1 2; do same_bytes "raw/$i.jpg" "v/$i.jpg"; done
    echo "$size: video file, Y4M file, Y4M pipe, raw pipe: the same JPEGs, of ffmpeg's RGB"
  done
  # README's pipe example: HD BT.709 video (VP9) piped as Y4M with --colorspace bt709 gives
  # what the file gives.
  need_media images/imagecompression.info/flower_foveon.png
  ffmpeg -nostdin -v error -loop 1 -i "$MEDIA/images/imagecompression.info/flower_foveon.png" \
    -frames:v 2 -vf "crop=1280:533:60+9*n:40+7*n,scale=out_color_matrix=bt709" \
    -colorspace bt709 -color_primaries bt709 -color_trc bt709 -pix_fmt yuv420p \
    -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 2M -y hd.webm ||
    skip "ffmpeg cannot make a VP9 clip"
  run_timed encode hd.webm -o hd_file.avi --mode cpu -q 100 -s 444 --quiet
  ffmpeg -nostdin -v error -i hd.webm -f yuv4mpegpipe - |
    run_timed encode - -o hd_pipe.avi --mode cpu -q 100 -s 444 --colorspace bt709 --quiet
  same_bytes hd_pipe.avi hd_file.avi
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
# A file that is no video, read for the GPU's decoders (--decoder gpu, where the file is opened
# before any GPU is asked for): one line, FFmpeg's own messages ("moov atom not found") kept
# off stderr.
case_damaged_video_for_the_gpu_decoder_one_line() {
  need_ffmpeg
  make_h264 clip.mp4 20 160x90
  need_libav clip.mp4
  head -c 2000 clip.mp4 >head.mp4
  tail -c 3000 clip.mp4 >tail.mp4
  local f
  for f in head.mp4 tail.mp4; do
    expect_fail 1 encode "$f" -o out.avi --decoder gpu --quiet
    grep -q "cannot read '$f' as a video" err.txt || die "unclear error: $(cat err.txt)"
  done
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
  "$CJPEG" -quality 90 -outfile ref.jpg zero/f0.ppm || die "cjpeg failed"
  same_bytes out/1.jpg ref.jpg
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
  # Wider and taller than 16384 pixels (libjpeg allows 65500 per side), as PPM and PNG:
  # each equals cjpeg's JPEG.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=20000x40 -frames:v 1 wide.ppm &&
    ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=40x20000 -frames:v 1 tall.ppm ||
    die "ffmpeg cannot make the pictures"
  against_cjpeg "$PWD/wide.ppm" "-q 80" "-quality 80 -sample 2x2"
  against_cjpeg "$PWD/tall.ppm" "-s 444 --optimize" "-quality 90 -sample 1x1 -optimize"
  if have_opencv; then
    ffmpeg -nostdin -v error -i wide.ppm wide.png || die "ffmpeg cannot write a PNG"
    expect_ok encode wide.png -o png.jpg -q 80
    "$CJPEG" -quality 80 -outfile ref.jpg wide.ppm || die "cjpeg failed"
    same_bytes png.jpg ref.jpg
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

# ---------------------------------------------------------------------------------------------
# What an input is comes from its content, never its name; a pipe or FIFO is read once.
# ---------------------------------------------------------------------------------------------

# run_timed ARGS...: mjpeg with a time limit (a reader that waits on a FIFO for ever, or opens it
# twice, would otherwise hang the case): exit 0 expected.
run_timed() {
  local rc=0
  timeout 60 "$MJPEG" "$@" >out.txt 2>err.txt || rc=$?
  [[ $rc -eq 0 ]] || die "mjpeg $* exited $rc$([[ $rc -eq 124 ]] && echo ' (hung: killed after 60 s)'); stderr: $(cat err.txt)"
}
# feed FILE FIFO: FIFO (made here) delivers FILE's bytes once, to the first reader.
feed() {
  mkfifo "$2" || skip "cannot make a FIFO"
  cat "$1" >"$2" &
  bg $!
}

case_inputs_recognised_by_content_fifos_and_pipes() {
  need_ffmpeg
  need_cjpeg
  make_y4m clip.y4m 10 160x90
  make_h264 clip.mp4 10 160x90 -movflags +faststart  # the index first, as a pipe needs it
  need_libav clip.mp4
  # The references: the same contents as regular files with their usual names.
  run_timed encode clip.y4m -o y4m_ref.avi --quiet --mode cpu
  run_timed encode clip.mp4 -o mp4_ref.avi --quiet --mode cpu
  "$CJPEG" -quality 90 -sample 2x2 -outfile pic_ref.jpg "$SAMPLE" || die "cjpeg failed"
  # FIFOs whose names say nothing, or the wrong thing (process substitution gives such names).
  feed "$SAMPLE" p.ppm
  run_timed encode p.ppm -o fifo_ppm.jpg
  same_bytes fifo_ppm.jpg pic_ref.jpg
  feed clip.y4m feed
  run_timed encode feed -o fifo_y4m.avi --quiet --mode cpu
  same_bytes fifo_y4m.avi y4m_ref.avi
  feed clip.mp4 x.mp4
  run_timed encode x.mp4 -o fifo_mp4.avi --quiet --mode cpu
  same_bytes fifo_mp4.avi mp4_ref.avi
  feed clip.y4m y.mp4
  run_timed encode y.mp4 -o fifo_y4m_as_mp4.avi --quiet --mode cpu
  same_bytes fifo_y4m_as_mp4.avi y4m_ref.avi
  # Regular files without an extension or with a misleading one.
  cp clip.mp4 clip
  run_timed encode clip -o noext.avi --quiet --mode cpu
  same_bytes noext.avi mp4_ref.avi
  cp clip.y4m clip.png
  run_timed encode clip.png -o y4m_as_png.avi --quiet --mode cpu
  same_bytes y4m_as_png.avi y4m_ref.avi
  cp "$SAMPLE" picture.mp4
  run_timed encode picture.mp4 -o ppm_as_mp4.jpg
  same_bytes ppm_as_mp4.jpg pic_ref.jpg
  # Process substitution and standard input (a pipe, and a file).
  run_timed encode <(cat clip.mp4) -o subst.avi --quiet --mode cpu
  same_bytes subst.avi mp4_ref.avi
  cat clip.mp4 | run_timed encode - -o stdin_mp4.avi --quiet --mode cpu
  same_bytes stdin_mp4.avi mp4_ref.avi
  cat "$SAMPLE" | run_timed encode - -o stdin_ppm.jpg
  same_bytes stdin_ppm.jpg pic_ref.jpg
  run_timed encode - -o stdin_file.avi --quiet --mode cpu <clip.mp4
  same_bytes stdin_file.avi mp4_ref.avi
  if have_opencv; then  # a PNG through a FIFO: the picture, as from the file
    ffmpeg -nostdin -v error -i "$SAMPLE" pic.png || die "ffmpeg cannot write a PNG"
    feed pic.png pic
    run_timed encode pic -o fifo_png.jpg
    same_bytes fifo_png.jpg pic_ref.jpg
  fi
  # An M-JPEG stream (JPEGs back to back) is a video, one JPEG a picture, whatever the names.
  run_timed encode clip.y4m -o frames.mjpeg --quiet --mode cpu -q 100
  cp frames.mjpeg frames.jpg
  run_timed encode frames.jpg -o frames.avi --quiet --mode cpu
  [[ $(probe_counts frames.avi) == "mjpeg 160 90 25/1 10 10" ]] || die "ffprobe: $(probe_counts frames.avi)"
  feed pic_ref.jpg one
  run_timed encode one -o one.avi --quiet --mode cpu
  [[ $(probe_counts one.avi) == "mjpeg 640 360 25/1 1 1" ]] || die "ffprobe: $(probe_counts one.avi)"
  # Errors name the input as before: empty, text, a directory.
  : >empty.mp4
  expect_fail 1 encode empty.mp4 -o e.avi --quiet
  grep -q "input 'empty.mp4' is empty" err.txt || die "unclear: $(cat err.txt)"
  printf 'not a video\n' | "$MJPEG" encode - -o e.avi --quiet 2>err.txt && die "text on stdin encoded"
  grep -q "cannot read 'standard input': not Y4M, PPM/PGM or a picture" err.txt ||
    die "unclear: $(cat err.txt)"
  [[ ! -e e.avi ]] || die "e.avi created"
}

# make_raw PIX SIZE FRAMES OUT: FRAMES frames of a real picture (Kodak kodim05, a different
# crop each) as raw PIX frames of SIZE.
make_raw() {
  need_media images/kodak/kodim05.png
  local w=${2%x*} h=${2#*x}
  ffmpeg -nostdin -v error -loop 1 -i "$MEDIA/images/kodak/kodim05.png" -frames:v "$3" \
    -vf "crop=$w:$h:100+7*n:50+5*n,format=yuv444p" -f rawvideo -pix_fmt "$1" -y "$4" ||
    die "ffmpeg cannot make raw $1 frames"
}

case_raw_frames_equal_their_y4m() {
  need_ffmpeg
  need_cjpeg
  local pf size=161x91
  for pf in yuv420p yuv422p yuv444p nv12 gray; do
    make_raw "$pf" "$size" 3 "in.$pf"
    # The same frames as Y4M, as ffmpeg writes them (nv12 as the yuv420p it holds).
    ffmpeg -nostdin -v error -f rawvideo -pix_fmt "$pf" -s "$size" -i "in.$pf" \
      -pix_fmt "$([[ $pf == nv12 ]] && echo yuv420p || echo "$pf")" -strict -1 \
      -f yuv4mpegpipe -y ref.y4m || die "ffmpeg cannot write the Y4M of $pf"
    run_timed encode ref.y4m -o ref.mjpeg --mode cpu -q 95 --quiet -y
    cat "in.$pf" | run_timed encode - -o pipe.mjpeg --pix-fmt "$pf" --size "$size" --fps 25 \
      --mode cpu -q 95 --quiet -y
    same_bytes pipe.mjpeg ref.mjpeg
    run_timed encode "in.$pf" -o file.mjpeg --pix-fmt "$pf" --size "$size" --mode cpu -q 95 \
      --producers 3 --quiet -y
    same_bytes file.mjpeg ref.mjpeg
    echo "$pf: raw (pipe, file) == Y4M, $(stat -c %s ref.mjpeg) bytes"
  done
  # Packed RGB: each frame is cjpeg's JPEG of the same pixels (ffmpeg writes them as PPM).
  for pf in rgb24 bgr24; do
    make_raw "$pf" "$size" 3 "in.$pf"
    rm -rf f ref && mkdir f ref
    feed "in.$pf" fifo_$pf
    run_timed encode "fifo_$pf" -o f/%d.jpg --pix-fmt "$pf" --size "$size" --mode cpu
    ffmpeg -nostdin -v error -f rawvideo -pix_fmt "$pf" -s "$size" -i "in.$pf" -pix_fmt rgb24 \
      ref/%d.ppm || die "ffmpeg cannot write PPMs"
    local i
    for i in 1 2 3; do
      "$CJPEG" -quality 90 -sample 2x2 -outfile theirs.jpg "ref/$i.ppm" || die "cjpeg failed"
      same_bytes "f/$i.jpg" theirs.jpg
    done
  done
  # The rate, as given; without it 25/1 with a notice.
  make_raw yuv420p 160x90 2 in.yuv
  run_timed encode in.yuv -o rate.avi --pix-fmt yuv420p --size 160x90 --fps 30000/1001 --quiet
  [[ $(probe_counts rate.avi) == "mjpeg 160 90 30000/1001 2 2" ]] || die "ffprobe: $(probe_counts rate.avi)"
  run_timed encode in.yuv -o rate.avi -y --pix-fmt yuv420p --size 160x90
  grep -q "^mjpeg: note: in.yuv: raw frames carry no frame rate; 25/1 fps is assumed" err.txt ||
    die "no rate notice: $(cat err.txt)"
}

case_raw_frames_cut_short_ranges_and_usage_errors() {
  need_ffmpeg
  make_raw yuv420p 160x90 4 in.yuv
  mkdir all r s
  run_timed encode in.yuv -o all/%d.jpg --pix-fmt yuv420p --size 160x90 --quiet --mode cpu
  # Three frames and half of the fourth.
  head -c $((160 * 90 * 3 / 2 * 7 / 2)) in.yuv >cut.yuv
  expect_fail 1 encode cut.yuv -o out.avi --pix-fmt yuv420p --size 160x90
  grep -q "'cut.yuv' ends inside frame 4: 10800 of its 21600 bytes (160x90 yuv420p)" err.txt ||
    die "unclear: $(cat err.txt)"
  cat cut.yuv | "$MJPEG" encode - -o out.avi --pix-fmt yuv420p --size 160x90 --quiet 2>err.txt &&
    die "a cut stream encoded without --keep-going"
  grep -q "'standard input' ends inside frame 4" err.txt || die "unclear: $(cat err.txt)"
  [[ $(grep -c . err.txt) -eq 1 && ! -e out.avi ]] || die "more than one line, or out.avi: $(cat err.txt)"
  local how
  for how in file pipe; do
    rm -rf k && mkdir k
    if [[ $how == file ]]; then
      run_timed encode cut.yuv -o k/%d.jpg --pix-fmt yuv420p --size 160x90 --keep-going --mode cpu
    else
      cat cut.yuv | run_timed encode - -o k/%d.jpg --pix-fmt yuv420p --size 160x90 --keep-going \
        --mode cpu
    fi
    [[ $(grep -c '^mjpeg: note: --keep-going: .* ends inside frame 4: .*that frame is left out, the 3 frames before it encoded' err.txt) -eq 1 ]] ||
      die "$how: no single --keep-going notice: $(cat err.txt)"
    [[ $(ls k | sort -n | tr '\n' ' ') == "1.jpg 2.jpg 3.jpg " ]] || die "$how: files $(ls k)"
    same_bytes k/3.jpg all/3.jpg
  done
  # A frame range (--start, --frames) from a file and from a pipe: frames 2 and 3.
  run_timed encode in.yuv -o r/%d.jpg --pix-fmt yuv420p --size 160x90 --start 1 --frames 2 --quiet
  cat in.yuv | run_timed encode - -o s/%d.jpg --pix-fmt yuv420p --size 160x90 --start 1 \
    --frames 2 --quiet
  same_bytes r/1.jpg all/2.jpg
  same_bytes r/2.jpg all/3.jpg
  same_bytes s/1.jpg all/2.jpg
  same_bytes s/2.jpg all/3.jpg
  [[ ! -e r/3.jpg && ! -e s/3.jpg ]] || die "more than 2 frames"
  # Usage errors (exit 2), before anything is read.
  expect_fail 2 encode in.yuv -o u.avi --size 160x90
  grep -q -- "--size and --fps describe raw frames: add --pix-fmt" err.txt || die "unclear: $(cat err.txt)"
  expect_fail 2 encode in.yuv -o u.avi --pix-fmt yuv420p
  grep -q -- "raw frames need their size, --size WxH" err.txt || die "unclear: $(cat err.txt)"
  expect_fail 2 encode in.yuv -o u.avi --pix-fmt yuv410p --size 160x90
  expect_fail 2 encode in.yuv -o u.avi --pix-fmt yuv420p --size 160x90 --fps 0
  expect_fail 2 encode in.yuv -o u.avi --pix-fmt yuv420p --size 160x90 --fps abc
  make_y4m in.y4m 2 64x48
  expect_fail 2 encode in.y4m -o u.avi --pix-fmt yuv420p --size 64x48
  grep -q "'in.y4m' is a Y4M stream" err.txt || die "unclear: $(cat err.txt)"
  [[ ! -e u.avi ]] || die "u.avi created"
}

# Y4M with --keep-going: a stream cut inside a frame, inside a FRAME header, or with a damaged
# FRAME header, from a file (mapped, or read at offsets) and from a pipe: the complete frames
# before the damage are encoded (each the bytes of the whole clip's), one notice says what was
# left out, exit 0; without it, the error names the frame.
case_truncated_y4m_keep_going_encodes_complete_frames() {
  make_y4m in.y4m 6 64x48
  mkdir whole
  run_timed encode in.y4m -o whole/%d.jpg --quiet --mode cpu
  local header frame at
  header=$(head -1 in.y4m | wc -c)
  frame=$(( ($(stat -c %s in.y4m) - header) / 6 ))  # "FRAME\n" and the planes
  at=$((header + 4 * frame))                         # the 5th FRAME header
  head -c $((at + 6 + 1000)) in.y4m >cut_payload.y4m
  head -c $((at + 3)) in.y4m >cut_header.y4m
  cp in.y4m damaged.y4m
  printf 'XXXXX' | dd of=damaged.y4m bs=1 seek="$at" conv=notrunc status=none
  local f map how
  for f in cut_payload cut_header damaged; do
    expect_fail 1 encode "$f.y4m" -o out.avi --quiet
    grep -q "frame 5" err.txt || die "$f: the error does not name frame 5: $(cat err.txt)"
    for how in mapped positional pipe; do
      rm -rf k && mkdir k
      case $how in
        mapped) MJPEG_Y4M_MAP=1 run_timed encode "$f.y4m" -o k/%d.jpg --keep-going --mode cpu ;;
        positional) MJPEG_Y4M_MAP=0 run_timed encode "$f.y4m" -o k/%d.jpg --keep-going --mode cpu ;;
        pipe) cat "$f.y4m" | run_timed encode - -o k/%d.jpg --keep-going --mode cpu ;;
      esac
      [[ $(grep -c '^mjpeg: note: --keep-going: .*frame 5.*; frames 1 to 4 are complete, the rest of the stream is left out$' err.txt) -eq 1 ]] ||
        die "$f ($how): no single --keep-going notice: $(cat err.txt)"
      [[ $(ls k | sort -n | tr '\n' ' ') == "1.jpg 2.jpg 3.jpg 4.jpg " ]] ||
        die "$f ($how): files $(ls k)"
      local i
      for i in 1 2 3 4; do same_bytes "k/$i.jpg" "whole/$i.jpg"; done
    done
    echo "$f: $(grep 'keep-going' err.txt)"
  done
  # A whole stream says nothing of the kind.
  run_timed encode in.y4m -o w.avi --keep-going --mode cpu
  ! grep -q 'keep-going' err.txt || die "a notice for a whole stream: $(cat err.txt)"
}
