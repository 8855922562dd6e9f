#!/usr/bin/env bash
# End-to-end tests of the `mjpeg` command line, one case per ctest test.
#
#   cli_test.sh --list                       print the case names
#   cli_test.sh CASE MJPEG SOURCE_DIR WORK_DIR [CJPEG [MEDIA_DIR]]
#
# MEDIA_DIR (or the environment variable MJPEG_MEDIA_DIR, which wins) holds the shared test media
# (real pictures and clips) that some cases cut their inputs from.
# Each case runs in its own fresh directory under WORK_DIR. Exit 0 = pass, 77 = skipped
# (a tool it needs is missing), anything else = fail (with a message on stderr).
set -uo pipefail

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

need_cjpeg() { [[ -n "${CJPEG:-}" && -x "$CJPEG" ]] || skip "cjpeg not found"; }
# need_media FILE...: each FILE is in the shared media, $MEDIA/FILE (fails naming the folder).
need_media() {
  local f
  for f in "$@"; do
    [[ -n ${MEDIA:-} && -f $MEDIA/$f ]] ||
      die "test media '$f' not found in '${MEDIA:-}' (set MJPEG_MEDIA_DIR)"
  done
}
need_ffmpeg() { command -v ffmpeg >/dev/null || skip "ffmpeg not found"; }
have_opencv() { "$MJPEG" info | grep -q '^OpenCV: yes'; }

# Asserts that no temporary output file was left in directory $1 (default: .).
no_temp_files() {
  local left
  left=$(find "${1:-.}" -maxdepth 1 -name '.*.tmp-*' | head -5)
  [[ -z "$left" ]] || die "temporary files left behind: $left"
}

# expect_fail CODE ARGS...: runs mjpeg, expects exit CODE, exactly one stderr line starting
# with "mjpeg: error: ", nothing on stdout, and no temporary files in the current directory.
expect_fail() {
  local want=$1; shift
  local rc=0
  "$MJPEG" "$@" >out.txt 2>err.txt || rc=$?
  [[ $rc -eq $want ]] || die "mjpeg $* exited $rc, expected $want; stderr: $(cat err.txt)"
  local lines
  lines=$(wc -l <err.txt)
  [[ $lines -eq 1 ]] || die "mjpeg $* printed $lines stderr lines, expected 1: $(cat err.txt)"
  grep -q '^mjpeg: error: ' err.txt || die "mjpeg $* stderr lacks 'mjpeg: error: ': $(cat err.txt)"
  [[ ! -s out.txt ]] || die "mjpeg $* printed on stdout: $(cat out.txt)"
  no_temp_files .
  echo "ok ($rc): mjpeg $* -> $(cat err.txt)"
}

# expect_ok ARGS...: runs mjpeg, expects exit 0.
expect_ok() {
  local rc=0
  "$MJPEG" "$@" >out.txt 2>err.txt || rc=$?
  [[ $rc -eq 0 ]] || die "mjpeg $* exited $rc; stderr: $(cat err.txt)"
}

# same_bytes A B: the two files are byte-identical.
same_bytes() {
  cmp -s "$1" "$2" || die "$1 ($(stat -c %s "$1") bytes) differs from $2 ($(stat -c %s "$2") bytes)"
}

# against_cjpeg INPUT "MJPEG OPTIONS" "CJPEG OPTIONS": our output equals cjpeg's, byte for byte.
against_cjpeg() {
  need_cjpeg
  local input=$1 ours=$2 theirs=$3
  rm -f ours.jpg theirs.jpg
  # shellcheck disable=SC2086
  expect_ok encode "$input" -o ours.jpg $ours
  # shellcheck disable=SC2086
  "$CJPEG" $theirs -outfile theirs.jpg "$input" || die "cjpeg $theirs $input failed"
  same_bytes ours.jpg theirs.jpg
  echo "ok: mjpeg [$ours] == cjpeg [$theirs] on $(basename "$input") ($(stat -c %s ours.jpg) bytes)"
}

# A small P3 (ASCII PPM) of W x H with maxval M: a deterministic pattern covering 0..M.
make_p3() {
  awk -v w="$1" -v h="$2" -v m="$3" 'BEGIN {
    printf "P3\n# test pattern\n%d %d\n%d\n", w, h, m
    for (y = 0; y < h; y++) {
      for (x = 0; x < w; x++)
        printf "%d %d %d\n", int(x * m / (w - 1)), int(y * m / (h - 1)), (x * 7919 + y * 104729) % (m + 1)
    }
  }'
}

# ---------------------------------------------------------------------------------------------
# Cases: exactness against cjpeg
# ---------------------------------------------------------------------------------------------

case_encode_default_matches_cjpeg_420() { against_cjpeg "$SAMPLE" "" "-quality 90 -sample 2x2"; }
case_encode_444_q75_matches_cjpeg() { against_cjpeg "$SAMPLE" "-s 444 -q 75" "-quality 75 -sample 1x1"; }
case_encode_422_restart_matches_cjpeg() {
  against_cjpeg "$SAMPLE" "-s 422 -r 5 -q 50" "-quality 50 -sample 2x1 -restart 5B"
}
case_encode_gray_matches_cjpeg() { against_cjpeg "$SAMPLE" "-s gray" "-quality 90 -grayscale"; }
case_encode_optimize_matches_cjpeg() {
  against_cjpeg "$SAMPLE" "--optimize -q 95 -r 1" "-quality 95 -sample 2x2 -optimize -restart 1B"
}
case_encode_ascii_maxval_matches_cjpeg() {
  # P3/P2 with maxval != 255 exercise the rescaling, which must match cjpeg's.
  make_p3 37 23 1000 >a1000.ppm
  against_cjpeg "$PWD/a1000.ppm" "-q 85" "-quality 85 -sample 2x2"
  make_p3 37 23 7 >a7.ppm
  against_cjpeg "$PWD/a7.ppm" "-s 444" "-quality 90 -sample 1x1"
  make_p3 17 9 65535 | awk 'NR == 1 { print "P2"; next } NR <= 4 { print; next } { print $1 }' \
    >g65535.pgm
  against_cjpeg "$PWD/g65535.pgm" "" "-quality 90"
}
case_encode_16bit_ppm_matches_cjpeg() {
  need_ffmpeg
  ffmpeg -v error -i "$SAMPLE" -vf "crop=203:101:50:40" -pix_fmt rgb48be -y in16.ppm ||
    die "ffmpeg failed"
  head -c 20 in16.ppm | grep -q 65535 || die "ffmpeg did not write a 16-bit PPM"
  against_cjpeg "$PWD/in16.ppm" "-s 420" "-quality 90 -sample 2x2"
}
case_encode_leading_zeros_are_decimal() {
  # "-q 010" is quality 10 (not octal 8).
  against_cjpeg "$SAMPLE" "-q 010" "-quality 10 -sample 2x2"
}

# ---------------------------------------------------------------------------------------------
# Cases: other inputs (OpenCV builds) and builds without OpenCV
# ---------------------------------------------------------------------------------------------

case_png_16bit_rounds_like_cjpeg() {
  need_ffmpeg
  have_opencv || skip "built without OpenCV"
  ffmpeg -v error -i "$SAMPLE" -vf "crop=120:80:300:150" -pix_fmt rgb48be -y in16.ppm &&
    ffmpeg -v error -i in16.ppm -pix_fmt rgb48be -y in16.png || die "ffmpeg failed"
  need_cjpeg
  expect_ok encode in16.png -o ours.jpg
  grep -q '^mjpeg: note: .*16-bit' err.txt || die "no 16-bit notice: $(cat err.txt)"
  "$CJPEG" -quality 90 -sample 2x2 -outfile theirs.jpg in16.ppm || die "cjpeg failed"
  same_bytes ours.jpg theirs.jpg
}
case_png_alpha_dropped_with_notice() {
  need_ffmpeg
  have_opencv || skip "built without OpenCV"
  ffmpeg -v error -i "$SAMPLE" -vf "crop=64:48:0:0,format=rgba" -y rgba.png &&
    ffmpeg -v error -i rgba.png -pix_fmt rgb24 -y rgb.ppm || die "ffmpeg failed"
  need_cjpeg
  expect_ok encode rgba.png -o ours.jpg
  [[ $(grep -c '^mjpeg: note: .*alpha' err.txt) -eq 1 ]] || die "no alpha notice: $(cat err.txt)"
  "$CJPEG" -quality 90 -sample 2x2 -outfile theirs.jpg rgb.ppm || die "cjpeg failed"
  same_bytes ours.jpg theirs.jpg
}
case_non_pnm_input_without_opencv() {
  have_opencv && skip "built with OpenCV"
  printf '\x89PNG\r\n\x1a\n' >x.png
  expect_fail 1 encode x.png -o x.jpg
  grep -q 'PPM/PGM' err.txt || die "error does not name the supported formats"
}
case_unknown_format_with_opencv() {
  have_opencv || skip "built without OpenCV"
  printf 'GIF89a not really' >x.gif
  expect_fail 1 encode x.gif -o x.jpg
  grep -q "x.gif" err.txt || die "error does not name the file"
}

# ---------------------------------------------------------------------------------------------
# Cases: usage errors (exit 2), output never created
# ---------------------------------------------------------------------------------------------

case_usage_errors_exit_2() {
  local a
  for a in "-q 0" "-q 101" "-q abc" "-q 1.5" "-q 0x5A" "-q" "-s 411" "-s 4:2:0" "-r -1" \
    "-r 65536" "-r x" "--bogus"; do
    # shellcheck disable=SC2086
    expect_fail 2 encode "$SAMPLE" -o out.jpg $a
    [[ ! -e out.jpg ]] || die "out.jpg created despite a usage error ($a)"
  done
  expect_fail 2 encode "$SAMPLE"                   # missing -o
  expect_fail 2 encode -o out.jpg                  # missing input
  expect_fail 2                                    # no subcommand
  expect_fail 2 transcode "$SAMPLE" -o out.jpg     # unknown subcommand
  grep -q "unknown command 'transcode'" err.txt || die "unknown command not named"
  [[ ! -e out.jpg ]] || die "out.jpg created"
}
# File names that begin with '-': after a stand-alone "--" they are file names and the options
# that follow are still read (an option's value too may begin with '-'); without "--" the error
# names the word and says how to write such a name. The outputs equal cjpeg's.
case_double_dash_file_names_and_options() {
  need_cjpeg
  cp "$SAMPLE" ./-x.ppm
  expect_ok encode -- -x.ppm -o y.jpg
  "$CJPEG" -quality 90 -sample 2x2 -outfile theirs.jpg ./-x.ppm || die "cjpeg failed"
  same_bytes y.jpg theirs.jpg
  expect_ok encode -q 75 -- -x.ppm -o -y.jpg -s 444
  "$CJPEG" -quality 75 -sample 1x1 -outfile theirs.jpg ./-x.ppm || die "cjpeg failed"
  same_bytes ./-y.jpg theirs.jpg
  expect_ok quality -- -x.ppm -x.ppm --quiet
  grep -q 'PSNR RGB  min *inf' out.txt || die "quality of -x.ppm with itself: $(cat out.txt)"
  expect_fail 2 encode -x.ppm -o z.jpg
  grep -q "unknown option -x.ppm .*written ./-x.ppm or after --" err.txt || die "unclear: $(cat err.txt)"
  [[ ! -e z.jpg ]] || die "z.jpg created"
}
case_unknown_output_extension_exit_2() {
  local out
  for out in out.png out.mp4 out.ppm out noext.; do
    expect_fail 2 encode "$SAMPLE" -o "$out"
    grep -q '\.jpg' err.txt || die "error does not list the supported extensions"
    [[ ! -e $out ]] || die "$out created"
  done
  expect_ok encode "$SAMPLE" -o upper.JPEG --quiet  # extensions are case-insensitive
}
case_output_is_input_refused() {
  cp "$SAMPLE" in.jpg  # a PPM under a .jpg name: recognised by its signature
  cp in.jpg orig.bin
  mkdir sub
  ln -s ../in.jpg sub/link.jpg
  expect_fail 2 encode in.jpg -o in.jpg
  expect_fail 2 encode in.jpg -o ./in.jpg -y
  expect_fail 2 encode in.jpg -o "$PWD/sub/../in.jpg" -y
  expect_fail 2 encode sub/link.jpg -o in.jpg -y
  same_bytes in.jpg orig.bin
}

# ---------------------------------------------------------------------------------------------
# Cases: runtime failures (exit 1), nothing created
# ---------------------------------------------------------------------------------------------

case_bad_inputs_exit_1() {
  : >empty.ppm
  mkdir adir.ppm
  head -c 1000 "$SAMPLE" >truncated.ppm
  printf 'Hello, this is a text file.\n' >text.ppm
  printf 'P6\n640 360\n255\n' >header_only.ppm
  printf 'P6\n-5 360\n255\n' >negative.ppm
  local f
  for f in missing.ppm empty.ppm adir.ppm truncated.ppm text.ppm header_only.ppm negative.ppm; do
    expect_fail 1 encode "$f" -o out.jpg
    grep -q "$f" err.txt || die "error does not name $f: $(cat err.txt)"
    [[ ! -e out.jpg ]] || die "out.jpg created for bad input $f"
  done
}
case_missing_output_directory_exit_1() {
  expect_fail 1 encode "$SAMPLE" -o no/such/dir/out.jpg
  [[ ! -e no ]] || die "directories were created"
}
# A stream's output in a folder that is not there: one line naming the folder, said before the
# input is opened (no "input ..." line), for every kind of output; nothing created.
case_stream_output_in_missing_folder_exit_1() {
  make_y4m in.y4m 3
  local o
  for o in no/such/out.avi no/such/out.mjpeg no/such/%03d.jpg no/such/one.jpg; do
    if [[ $o == *one.jpg ]]; then
      expect_fail 1 encode in.y4m -o "$o" --frames 1
    else
      expect_fail 1 encode in.y4m -o "$o"
    fi
    grep -q "output folder 'no/such' does not exist" err.txt || die "folder not named: $(cat err.txt)"
  done
  printf 'x' >afile
  expect_fail 1 encode in.y4m -o afile/out.avi
  grep -q "'afile' is not a folder" err.txt || die "not a folder not said: $(cat err.txt)"
  [[ ! -e no ]] || die "folders were created"
}
case_output_is_directory_exit_1() {
  mkdir out.jpg
  expect_fail 1 encode "$SAMPLE" -o out.jpg
  expect_fail 1 encode "$SAMPLE" -o out.jpg -y
  [[ -d out.jpg ]] || die "directory replaced"
  no_temp_files .
}
case_existing_output_refused_without_y() {
  printf 'precious' >out.jpg
  cp out.jpg before.bin
  expect_fail 1 encode "$SAMPLE" -o out.jpg
  grep -q -- '-y' err.txt || die "error does not mention -y"
  same_bytes out.jpg before.bin
}
case_y_overwrites() {
  need_cjpeg
  printf 'old content' >out.jpg
  expect_ok encode "$SAMPLE" -o out.jpg -y
  "$CJPEG" -quality 90 -sample 2x2 -outfile theirs.jpg "$SAMPLE"
  same_bytes out.jpg theirs.jpg
  expect_ok encode "$SAMPLE" -o out.jpg --overwrite -q 50  # long form too
  no_temp_files .
}
case_failed_encode_keeps_existing_output() {
  # With -y, a failing run must still leave the old output intact.
  printf 'old content' >out.jpg
  cp out.jpg before.bin
  head -c 5000 "$SAMPLE" >truncated.ppm
  expect_fail 1 encode truncated.ppm -o out.jpg -y
  same_bytes out.jpg before.bin
}

# ---------------------------------------------------------------------------------------------
# Cases: successful runs, help, version, info
# ---------------------------------------------------------------------------------------------

case_summary_line_and_quiet() {
  expect_ok encode "$SAMPLE" -o a.jpg
  [[ $(wc -l <err.txt) -eq 1 ]] || die "expected one summary line: $(cat err.txt)"
  grep -q '^mjpeg: wrote a.jpg: [0-9]* bytes, 640x360 .*bits/pixel.* ms' err.txt ||
    die "unexpected summary: $(cat err.txt)"
  [[ ! -s out.txt ]] || die "stdout not empty"
  expect_ok encode "$SAMPLE" -o b.jpg --quiet
  [[ ! -s err.txt ]] || die "--quiet still printed: $(cat err.txt)"
  cmp -s a.jpg b.jpg || die "--quiet changed the output"
  [[ $(stat -c %a a.jpg) == "$(printf '%o' $((0666 & ~$(umask))))" ]] ||
    die "output mode $(stat -c %a a.jpg) does not follow the umask"
}
case_help_and_version() {
  expect_ok --help
  grep -q 'encode' out.txt || die "--help lacks encode"
  expect_ok encode --help
  grep -q -- '--quality' out.txt || die "encode --help lacks --quality"
  expect_ok --version
  grep -q '^mjpeg [0-9]' out.txt || die "unexpected --version: $(cat out.txt)"
}
case_info() {
  expect_ok info
  grep -q '^mjpeg [0-9]' out.txt || die "info lacks the version"
  grep -q '^OpenCV: \(yes\|no\)' out.txt || die "info lacks the OpenCV line"
  grep -q '^CUDA devices: ' out.txt || die "info lacks the CUDA devices line"
}

# ---------------------------------------------------------------------------------------------
# Cases: streams (video in, AVI / raw M-JPEG / numbered JPEGs out)
# ---------------------------------------------------------------------------------------------

# make_y4m FILE FRAMES [SIZE]: a test-pattern clip in Y4M 4:2:0 (needs ffmpeg).
make_y4m() {
  need_ffmpeg
  ffmpeg -v error -f lavfi -i "testsrc2=size=${3:-320x180}:rate=25" -frames:v "$2" \
    -pix_fmt yuv420p -f yuv4mpegpipe "$1" || die "ffmpeg could not make $1"
}

# probe_counts FILE: prints "codec width height rate nb_frames nb_read_frames".
probe_counts() {
  ffprobe -v error -count_frames -select_streams v:0 \
    -show_entries stream=codec_name,width,height,r_frame_rate,nb_frames,nb_read_frames \
    -of csv=p=0 "$1" | tr ',' ' '

}

case_y4m_to_avi_plays() {
  make_y4m in.y4m 30
  expect_ok encode in.y4m -o out.avi --quiet
  local got
  got=$(probe_counts out.avi)
  [[ $got == "mjpeg 320 180 25/1 30 30" ]] || die "ffprobe says: $got"
  [[ -z $(ffmpeg -v error -xerror -i out.avi -f null - 2>&1) ]] || die "ffmpeg reports errors"
  no_temp_files .
}
case_stdin_y4m_to_mjpeg_with_frame_limit() {
  make_y4m in.y4m 30
  "$MJPEG" encode - -o out.mjpeg --frames 12 --quiet <in.y4m 2>err.txt || die "$(cat err.txt)"
  local n
  n=$(ffprobe -v error -count_frames -f mjpeg -show_entries stream=nb_read_frames -of csv=p=0 out.mjpeg)
  [[ $n == 12 ]] || die "expected 12 frames, ffprobe read $n"
}
case_still_to_avi_equals_single_jpeg() {
  need_ffmpeg
  expect_ok encode "$SAMPLE" -o one.jpg -q 85 -s 422 --quiet
  expect_ok encode "$SAMPLE" -o one.avi -q 85 -s 422 --quiet
  ffmpeg -v error -i one.avi -c copy -f image2 frame%d.jpg || die "cannot extract the frame"
  same_bytes frame1.jpg one.jpg
}
case_stream_to_numbered_jpegs() {
  make_y4m in.y4m 5
  mkdir frames
  expect_ok encode in.y4m -o frames/%03d.jpg --quiet --dump-input dump
  [[ $(ls frames | tr '\n' ' ') == "001.jpg 002.jpg 003.jpg 004.jpg 005.jpg " ]] ||
    die "unexpected files: $(ls frames)"
  # Each file is its frame: cjpeg's JPEG of the pixels that frame was encoded from, and the
  # frame of that number in an AVI of the same input.
  dump_matches_cjpeg dump frames "-quality 90 -sample 2x2"
  expect_ok encode in.y4m -o all.avi --quiet
  ffmpeg -v error -i all.avi -c copy -f image2 avi%03d.jpg || die "cannot extract the AVI's frames"
  local i
  for i in 001 002 003 004 005; do same_bytes "frames/$i.jpg" "avi$i.jpg"; done
}
case_stream_usage_errors_exit_2() {
  make_y4m in.y4m 3
  expect_fail 2 encode in.y4m -o out.avi --frames 0
  expect_fail 2 encode in.y4m -o out.jpg          # one picture cannot hold a stream
  expect_fail 2 encode in.y4m -o out.avi --mode gpu
  expect_fail 2 encode in.y4m -o out.avi --stages 5
  [[ ! -e out.avi && ! -e out.jpg ]] || die "an output was created"
}
case_gpu_mode_without_device_exit_1() {
  "$MJPEG" info | grep -q '^CUDA devices: none' || skip "a CUDA device is present"
  make_y4m in.y4m 3
  expect_fail 1 encode in.y4m -o out.avi --mode aok --quiet
  grep -q 'CUDA device' err.txt || die "error does not say why: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}
case_truncated_y4m_exit_1_no_output() {
  make_y4m in.y4m 4
  head -c $(( $(stat -c %s in.y4m) - 1000 )) in.y4m >cut.y4m
  expect_fail 1 encode cut.y4m -o out.avi --quiet  # notices (e.g. the CPU fallback) silenced
  grep -q 'truncated' err.txt || die "error does not say truncated: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}

# Video files are decoded by FFmpeg's libraries with the source's colour matrix and range; builds
# without them (OpenCV's FFmpeg backend, which converts everything as BT.601) skip these cases.
# need_libav FILE: skips unless mjpeg's start line for FILE says it was decoded that way.
need_libav() {
  need_ffmpeg
  "$MJPEG" encode "$1" -o probe.avi --mode cpu -y 2>start.txt ||
    die "mjpeg cannot read $1: $(cat start.txt)"
  grep -q "decoded by FFmpeg's libraries" start.txt || skip "this build decodes video without libav"
  rm -f probe.avi
}
# psnr_vs_ffmpeg A B: the average PSNR (dB) of A against B, both converted to RGB by ffmpeg.
psnr_vs_ffmpeg() {
  ffmpeg -v info -nostats -i "$1" -i "$2" \
    -lavfi "[0:v]format=rgb24[a];[1:v]format=rgb24[b];[a][b]psnr" -f null - 2>&1 |
    sed -n 's/.*PSNR r:.* average:\([0-9.inf]*\).*/\1/p' | tail -1
}
# colour_clip_matches MATRIX: a lossless 4:2:0 clip tagged with MATRIX, encoded at q100 4:4:4,
# must be at least 40 dB against ffmpeg's own RGB of the clip. Measured: 52.77 dB for bt709 and
# 56.36 dB for bt601 (JPEG rounding at q100). Reading this BT.709 clip as BT.601 (what OpenCV's
# VideoCapture does; a user's report measured 37.5 dB on its clip) gives 28.4 dB here, and reading it as
# full range 24.9 dB (both measured with ffmpeg's scale filter against its own RGB).
colour_clip_matches() {
  local matrix=$1 tag=$1
  [[ $matrix == bt601 ]] && tag=smpte170m
  need_ffmpeg
  ffmpeg -v error -f lavfi -i testsrc2=size=320x180:rate=25 -frames:v 10 \
    -vf "scale=out_color_matrix=$matrix" -colorspace "$tag" -color_primaries "$tag" \
    -color_trc "$tag" -pix_fmt yuv420p -c:v libx264 -qp 0 "clip.mp4" ||
    skip "ffmpeg cannot make an H.264 clip"
  need_libav clip.mp4
  local want=${matrix/bt709/BT.709}
  want=${want/bt601/BT.601}
  grep -q "320x180 25/1 fps, 10 frames, h264 yuv420p ($want limited range)" start.txt ||
    die "start line does not describe the source: $(cat start.txt)"
  expect_ok encode clip.mp4 -o out.avi -q 100 -s 444 --quiet
  local db
  db=$(psnr_vs_ffmpeg out.avi clip.mp4)
  [[ -n $db ]] || die "no PSNR from ffmpeg"
  awk -v d="$db" 'BEGIN { exit !(d == "inf" || d >= 40) }' ||
    die "$matrix clip: PSNR $db dB against ffmpeg's RGB, expected >= 40"
  echo "$matrix: $db dB"
}
case_video_bt709_colour_matches_ffmpeg() { colour_clip_matches bt709; }
case_video_bt601_colour_matches_ffmpeg() { colour_clip_matches bt601; }
case_video_audio_carried_and_said_once() {
  need_ffmpeg
  ffmpeg -v error -f lavfi -i testsrc2=size=160x90:rate=25 -f lavfi -i sine=frequency=440 \
    -frames:v 5 -t 0.2 -pix_fmt yuv420p -c:v libx264 -c:a aac -shortest av.mp4 ||
    skip "ffmpeg cannot make an H.264 + AAC clip"
  ffmpeg -v error -f lavfi -i testsrc2=size=160x90:rate=25 -frames:v 5 -pix_fmt yuv420p \
    -c:v libx264 silent.mp4 || skip "ffmpeg cannot make an H.264 clip"
  need_libav av.mp4
  # Carried into the AVI (tests/cli/cases_carried.sh checks its packets): said once, in the
  # summary; an .mjpeg output cannot hold it: one note.
  "$MJPEG" encode av.mp4 -o out.avi --mode cpu 2>err.txt || die "$(cat err.txt)"
  local n
  n=$(grep -ci 'audio' err.txt)
  [[ $n -eq 1 ]] || die "expected one line about the audio, got $n: $(cat err.txt)"
  grep -q '^mjpeg: wrote out.avi: .*; carried: aac .* audio' err.txt || die "summary: $(cat err.txt)"
  [[ $(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 out.avi) == aac ]] ||
    die "out.avi has no AAC stream"
  "$MJPEG" encode av.mp4 -o out.mjpeg --mode cpu 2>err.txt || die "$(cat err.txt)"
  [[ $(grep -ci 'audio' err.txt) -eq 1 ]] && grep -q '^mjpeg: note: .*audio is not carried' err.txt ||
    die "no single audio note: $(cat err.txt)"
  "$MJPEG" encode silent.mp4 -o out2.avi --mode cpu 2>err.txt || die "$(cat err.txt)"
  ! grep -qi 'audio' err.txt || die "audio mentioned for a file without audio: $(cat err.txt)"
  [[ $(probe_counts out.avi) == "mjpeg 160 90 25/1 5 5" ]] || die "ffprobe: $(probe_counts out.avi)"
}
case_video_without_video_stream_exit_1() {
  need_ffmpeg
  ffmpeg -v error -f lavfi -i sine=frequency=440 -t 0.2 -c:a aac audio.mp4 ||
    skip "ffmpeg cannot make an AAC file"
  ffmpeg -v error -f lavfi -i testsrc2=size=160x90:rate=25 -frames:v 2 -pix_fmt yuv420p \
    -c:v libx264 v.mp4 || skip "ffmpeg cannot make an H.264 clip"
  need_libav v.mp4
  expect_fail 1 encode audio.mp4 -o out.avi --quiet
  grep -q "audio.mp4' has no video stream" err.txt || die "unclear error: $(cat err.txt)"
  printf 'not a video at all' >junk.mp4
  expect_fail 1 encode junk.mp4 -o out.avi --quiet
  grep -q "cannot read 'junk.mp4': not Y4M, PPM/PGM or a picture, and FFmpeg's libraries do not recognise it" \
    err.txt || die "unclear error: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}
case_video_resolution_change_exit_1() {
  need_ffmpeg
  local size
  for size in 160x90 320x180; do
    ffmpeg -v error -f lavfi -i "testsrc2=size=$size:rate=25" -frames:v 3 -pix_fmt yuv420p \
      -c:v libx264 -f mpegts "$size.ts" || skip "ffmpeg cannot make an H.264 clip"
  done
  cat 160x90.ts 320x180.ts >both.ts
  need_libav 160x90.ts
  expect_fail 1 encode both.ts -o out.avi --quiet
  grep -q "frame 4 is 320x180, but the stream started at 160x90" err.txt ||
    die "unclear error: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}

case_zero_frame_stream_exit_1_no_output() {
  printf 'YUV4MPEG2 W64 H48 F25:1 C420jpeg\n' >empty.y4m
  expect_fail 1 encode empty.y4m -o out.avi --quiet
  grep -q 'no frames' err.txt || die "error does not say there are no frames: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}
case_disk_full_exit_1() {
  [[ -w /dev/full ]] || skip "no /dev/full"
  make_y4m in.y4m 5
  ln -s /dev/full full.avi  # an AVI name on a device that is always full
  expect_fail 1 encode in.y4m -o full.avi -y --quiet
  grep -q 'No space left on device' err.txt || die "error does not say why: $(cat err.txt)"
}

# ---------------------------------------------------------------------------------------------
# Cases: hardening. Every bad input or argument: one error line, a documented exit
# code, nothing under the output name, no temporary file left behind.
# ---------------------------------------------------------------------------------------------

case_stream_bad_inputs_exit_1() {
  # Missing, empty and directory inputs of the stream readers (Y4M and video files).
  : >empty.y4m
  : >empty.mp4
  mkdir dir.y4m dir.mp4
  local f
  for f in missing.y4m empty.y4m dir.y4m missing.mp4 empty.mp4 dir.mp4; do
    expect_fail 1 encode "$f" -o out.avi --quiet
    grep -q "$f" err.txt || die "error does not name $f: $(cat err.txt)"
    [[ ! -e out.avi ]] || die "out.avi created for bad input $f"
  done
}
case_renamed_text_inputs_exit_1() {
  # A text file under the name of every input kind: refused, named, never encoded.
  local f
  for f in text.ppm text.y4m text.mp4 text.avi text.mkv; do
    printf 'Dear diary,\nthis is not a picture.\n' >"$f"
    expect_fail 1 encode "$f" -o out.avi --quiet
    grep -q "$f" err.txt || die "error does not name $f: $(cat err.txt)"
    [[ ! -e out.avi ]] || die "out.avi created for $f"
  done
}
case_corrupt_y4m_mid_stream_exit_1() {
  make_y4m in.y4m 6 64x48
  # Overwrite the 4th FRAME header: frames 1-3 are fine, then the stream is garbage.
  local at
  at=$(grep -abo FRAME in.y4m | sed -n 4p | cut -d: -f1)
  [[ -n $at ]] || die "no 4th FRAME header"
  cp in.y4m orig.y4m
  printf 'XXXXX' | dd of=in.y4m bs=1 seek="$at" conv=notrunc status=none
  expect_fail 1 encode in.y4m -o out.avi --quiet
  grep -q "frame 4" err.txt || die "error does not name the damaged frame: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}
case_corrupt_video_mid_stream_exit_1() {
  need_ffmpeg
  ffmpeg -v error -f lavfi -i testsrc2=size=320x180:rate=25 -frames:v 50 -pix_fmt yuv420p \
    -c:v libx264 -g 10 clip.mp4 || skip "ffmpeg cannot make an H.264 clip"
  need_libav clip.mp4
  # 3000 bytes of (deterministic) noise in the middle of the file, inside the video data.
  local size
  size=$(stat -c %s clip.mp4)
  LC_ALL=C awk 'BEGIN { srand(7); for (i = 0; i < 3000; i++) printf "%c", 1 + int(rand() * 255) }' \
    >noise.bin
  dd if=noise.bin of=clip.mp4 bs=1 seek=$((size / 2)) conv=notrunc status=none
  expect_fail 1 encode clip.mp4 -o out.avi --quiet
  grep -q "clip.mp4: damaged video data" err.txt || die "unclear error: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}
case_y4m_10bit_rejected_exit_1() {
  need_ffmpeg
  ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 2 -pix_fmt yuv420p10le \
    -strict -1 -f yuv4mpegpipe in10.y4m || skip "ffmpeg cannot write a 10-bit Y4M"
  expect_fail 1 encode in10.y4m -o out.avi --quiet
  grep -q "more than 8 bits" err.txt || die "unclear error: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}
# converted_with_notice PIX_FMT NOTICE_REGEX [PIX_FMT2]: a lossless (FFV1) clip in PIX_FMT is
# encoded at q100 4:4:4 with one notice matching NOTICE_REGEX, and its pictures are ffmpeg's own
# 8-bit RGB of the clip (of the clip converted to PIX_FMT2 first, when given) (PSNR >= 40 dB;
# q100 JPEG rounding alone gives ~50 dB).
converted_with_notice() {
  need_ffmpeg
  ffmpeg -v error -f lavfi -i testsrc2=size=160x90:rate=25 -frames:v 5 -pix_fmt "$1" \
    -c:v ffv1 clip.mkv || skip "ffmpeg cannot make an FFV1 $1 clip"
  need_libav clip.mkv
  expect_ok encode clip.mkv -o out.avi -q 100 -s 444 --mode cpu
  [[ $(grep -c "^mjpeg: note: $2" err.txt) -eq 1 ]] || die "expected one notice '$2': $(cat err.txt)"
  [[ $(probe_counts out.avi) == "mjpeg 160 90 25/1 5 5" ]] || die "ffprobe: $(probe_counts out.avi)"
  local db reference=clip.mkv
  if [[ -n ${3:-} ]]; then
    ffmpeg -v error -i clip.mkv -pix_fmt "$3" -c:v ffv1 reference.mkv
    reference=reference.mkv
  fi
  db=$(psnr_vs_ffmpeg out.avi "$reference")
  awk -v d="$db" 'BEGIN { exit !(d == "inf" || d >= 40) }' || die "$1: PSNR $db dB, expected >= 40"
  echo "$1: $db dB; $(grep "note: $2" err.txt)"
}
# 10-bit 4:2:0: reduced to yuv420p as libswscale reduces it (below), then the 8-bit RGB of that.
case_video_10bit_converted_with_notice() {
  converted_with_notice yuv420p10le ".*10-bit samples.*reduced to 8 bits" yuv420p
}
# 10- and 12-bit 4:2:0 video is reduced to 8-bit planes as libswscale reduces it (what ffmpeg's own
# `-pix_fmt yuv420p` gives: its ordered dither), then encoded as 8-bit planes are: the AVI equals
# that of the 8-bit clip ffmpeg makes from it, at an odd size, limited and full range. (The GPU
# decoder reduces NVDEC's 10-bit output so too: tests/gpu/test_nvdec.cpp.)
case_video_10bit_reduced_as_libswscale() {
  need_ffmpeg
  local fmt range
  for fmt in yuv420p10le yuv420p12le; do
    for range in tv pc; do
      ffmpeg -v error -f lavfi -i "nullsrc=size=161x91:rate=25" -frames:v 4 \
        -vf "format=$fmt,geq=lum='mod(X*37+Y*101+N*7,4096)':cb='mod(X*53+Y*19,4096)':cr='mod(X*11+Y*71+N,4096)'" \
        -color_range "$range" -c:v ffv1 deep.mkv -y || skip "ffmpeg cannot make an FFV1 $fmt clip"
      ffmpeg -v error -i deep.mkv -vf "scale=in_range=$range:out_range=$range,format=yuv420p" \
        -color_range "$range" -c:v ffv1 eight.mkv -y
      need_libav deep.mkv
      expect_ok encode deep.mkv -o deep.avi --mode cpu -y
      grep -q "reduced to 8 bits" err.txt || die "$fmt: no notice of the reduction: $(cat err.txt)"
      expect_ok encode eight.mkv -o eight.avi --mode cpu -y
      cmp -s deep.avi eight.avi || die "$fmt $range: not the AVI of ffmpeg's own yuv420p reduction"
      echo "$fmt $range: $(stat -c %s deep.avi) bytes, identical"
    done
  done
}
case_video_16bit_converted_with_notice() { converted_with_notice rgb48le ".*16-bit samples"; }
case_video_alpha_ignored_with_notice() { converted_with_notice yuva420p ".*alpha channel.*ignored"; }
case_stream_output_is_input_refused() {
  make_y4m in.y4m 3 64x48
  expect_ok encode in.y4m -o clip.avi --quiet
  cp clip.avi orig.avi
  mkdir sub
  ln -s ../clip.avi sub/link.avi
  expect_fail 2 encode clip.avi -o clip.avi -y --quiet
  expect_fail 2 encode clip.avi -o ./sub/../clip.avi -y --quiet
  expect_fail 2 encode sub/link.avi -o clip.avi -y --quiet
  grep -q "is the input file" err.txt || die "unclear error: $(cat err.txt)"
  same_bytes clip.avi orig.avi
}
case_stream_existing_output_refused_without_y() {
  make_y4m in.y4m 3 64x48
  local out
  for out in out.avi out.mjpeg; do
    printf 'precious' >"$out"
    expect_fail 1 encode in.y4m -o "$out" --quiet
    grep -q -- '-y' err.txt || die "error does not mention -y"
    [[ $(cat "$out") == precious ]] || die "$out was changed"
  done
}
case_numbered_jpegs_existing_refused_without_y() {
  make_y4m in.y4m 3 64x48
  mkdir frames
  printf 'precious' >frames/001.jpg
  expect_fail 1 encode in.y4m -o frames/%03d.jpg --quiet
  grep -q "frames/001.jpg' already exists (use -y" err.txt || die "unclear error: $(cat err.txt)"
  [[ $(cat frames/001.jpg) == precious && $(ls frames) == 001.jpg ]] || die "frames/ was changed"
  # A later number that exists is refused too (when its turn comes).
  rm frames/001.jpg
  printf 'precious' >frames/003.jpg
  expect_fail 1 encode in.y4m -o frames/%03d.jpg --quiet
  [[ $(cat frames/003.jpg) == precious ]] || die "frames/003.jpg was replaced"
  no_temp_files frames
  expect_ok encode in.y4m -o frames/%03d.jpg --quiet -y
  [[ $(ls frames | tr '\n' ' ') == "001.jpg 002.jpg 003.jpg " ]] || die "files: $(ls frames)"
  [[ $(cat frames/003.jpg) != precious ]] || die "-y did not replace frames/003.jpg"
}
case_read_only_output_directory_exit_1() {
  mkdir ro
  chmod 555 ro
  make_y4m in.y4m 3 64x48
  local run=()
  if [[ $(id -u) -eq 0 ]]; then
    # root ignores directory permissions: run mjpeg as nobody (who can read the inputs).
    command -v setpriv >/dev/null || skip "running as root without setpriv"
    chmod 755 . && chmod 644 in.y4m
    run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    "${run[@]}" true 2>/dev/null || skip "cannot drop to user nobody"
    "${run[@]}" test -r "$MJPEG" -a -x "$MJPEG" -a -r "$SAMPLE" ||
      skip "user nobody cannot run $MJPEG or read the sample"
  fi
  local out rc
  for out in ro/out.jpg ro/out.avi ro/out.mjpeg; do
    rc=0
    "${run[@]}" "$MJPEG" encode "$([[ $out == *.jpg ]] && echo "$SAMPLE" || echo in.y4m)" \
      -o "$out" --quiet >out.txt 2>err.txt || rc=$?
    [[ $rc -eq 1 ]] || die "-o $out exited $rc, expected 1: $(cat err.txt)"
    [[ $(wc -l <err.txt) -eq 1 ]] && grep -q '^mjpeg: error: .*Permission denied' err.txt ||
      die "-o $out: expected one 'Permission denied' error line: $(cat err.txt)"
  done
  [[ -z $(ls -A ro) ]] || die "files created in the read-only directory: $(ls -A ro)"
}
case_file_size_limit_exit_1() {
  make_y4m in.y4m 10 320x180
  local out rc
  for out in out.avi out.mjpeg big.jpg; do
    rc=0
    # 20 KiB limit: the header or the first frames fit, the rest fails with EFBIG. mjpeg ignores
    # SIGXFSZ itself; the subshell does not, so a missing SIG_IGN would kill mjpeg (rc 153).
    (ulimit -f 20; exec "$MJPEG" encode "$([[ $out == *.jpg ]] && echo "$SAMPLE" || echo in.y4m)" \
      -o "$out" --quiet -q 100 -s 444) >out.txt 2>err.txt || rc=$?
    [[ $rc -eq 1 ]] || die "-o $out under ulimit -f exited $rc, expected 1: $(cat err.txt)"
    [[ $(wc -l <err.txt) -eq 1 ]] && grep -q '^mjpeg: error: .*File too large' err.txt ||
      die "-o $out: expected one 'File too large' error line: $(cat err.txt)"
    [[ ! -e $out ]] || die "$out created"
    no_temp_files .
  done
}
case_disk_full_single_picture_exit_1() {
  [[ -w /dev/full ]] || skip "no /dev/full"
  ln -s /dev/full full.jpg
  expect_fail 1 encode "$SAMPLE" -o full.jpg -y --quiet
  grep -q 'No space left on device' err.txt || die "error does not say why: $(cat err.txt)"
}
# ---------------------------------------------------------------------------------------------
# Signals. No case sleeps for a guessed time: each waits (time-boxed) for a sign that mjpeg is
# where the case wants it, and no background process outlives the case (see bg and the EXIT
# trap of the driver): a blocked writer or reader would otherwise hold CTest until its timeout.
# ---------------------------------------------------------------------------------------------

BG_PIDS=()
# bg PID: remembers a background process, killed when the case ends, however it ends.
bg() { BG_PIDS+=("$1"); }
kill_background() {
  local p
  for p in "${BG_PIDS[@]}" $(jobs -p); do kill -KILL "$p" 2>/dev/null; done
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.05 s until it succeeds; fails the
# case (naming WHAT) after SECONDS.
wait_until() {
  local limit=$1 what=$2 i
  shift 2
  for ((i = 0; i < limit * 20; i++)); do
    "$@" && return 0
    sleep 0.05
  done
  die "timed out after $limit s waiting for $what"
}
# handlers_installed PID: PID runs mjpeg (not the shell's fork before the exec, which catches
# signals of its own) and its SIGINT and SIGTERM handlers are in place (SigCgt of
# /proc/PID/status has bits 1 and 14), which mjpeg does first thing in main().
handlers_installed() {
  local mask
  [[ $(readlink "/proc/$1/exe" 2>/dev/null) == "$MJPEG" ]] || return 1
  mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  [[ -n $mask ]] && (( (16#$mask & 0x4002) == 0x4002 ))
}
# has_open PID FILE: the process holds FILE open.
has_open() {
  local f want
  want=$(realpath "$2")
  for f in /proc/"$1"/fd/*; do
    [[ $(readlink "$f" 2>/dev/null) == "$want" ]] && return 0
  done
  return 1
}
# wait_exit PID [SECONDS]: waits (up to SECONDS, default 60, then kills it and fails) for PID to
# end; sets RC.
wait_exit() {
  local i
  for ((i = 0; i < ${2:-60} * 20; i++)); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -KILL "$1"
    die "mjpeg did not end within ${2:-60} s of the signal: $(cat err.txt 2>/dev/null)"
  fi
  RC=0
  wait "$1" || RC=$?
}
progress_shown() { grep -q '^mjpeg: progress: [1-9]' err.txt; }
# interrupted_encode SIGNAL: encodes a real-time feed (-re: 25 frames/s for 20 s, so it is still
# running) to out.avi and sends SIGNAL once a frame has been written (mjpeg's --progress lines
# say so); sets RC to mjpeg's exit code.
interrupted_encode() {
  need_ffmpeg
  ffmpeg -nostdin -v error -re -f lavfi -i testsrc2=size=320x180:rate=25 -t 20 -pix_fmt yuv420p \
    -f yuv4mpegpipe - 2>/dev/null | "$MJPEG" encode - -o out.avi --progress 2>err.txt &
  local pid=$!
  bg $pid
  wait_until 60 "mjpeg's first frame" progress_shown
  kill "-$1" $pid
  wait_exit $pid
}
# expect_finalised_after SIGNAL: a real-time encode interrupted by SIGNAL exits 130 and leaves a
# playable AVI whose ffprobe counts match, and no temporary file.
expect_finalised_after() {
  interrupted_encode "$1"
  [[ $RC -eq 130 ]] || die "exit code $RC after SIG$1, expected 130: $(cat err.txt)"
  local got codec w h rate nb nread
  got=$(probe_counts out.avi)
  read -r codec w h rate nb nread <<<"$got"
  [[ $codec == mjpeg && $nb == "$nread" && $nb -gt 0 && $nb -lt 500 ]] ||
    die "ffprobe after SIG$1: $got"
  [[ -z $(ffmpeg -v error -xerror -i out.avi -f null - 2>&1) ]] || die "ffmpeg reports errors"
  grep -q "^mjpeg: wrote out.avi: $nb frames\? (interrupted)" err.txt ||
    die "the summary does not say $nb frame(s) (interrupted): $(cat err.txt)"
  no_temp_files .
}
case_interrupt_finalises_playable_avi() { expect_finalised_after INT; }
case_sigterm_finalises_playable_avi() { expect_finalised_after TERM; }
# expect_interrupted_nothing_written: RC is 130, err.txt one "interrupted ... nothing written"
# line, no out.avi, no temporary file.
expect_interrupted_nothing_written() {
  [[ $RC -eq 130 ]] || die "exit code $RC after the signal, expected 130: $(cat err.txt)"
  [[ $(wc -l <err.txt) -eq 1 ]] && grep -q '^mjpeg: error: interrupted.*nothing written' \
    err.txt || die "expected one 'interrupted ... nothing written' error line: $(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
  no_temp_files .
}
case_interrupt_before_first_frame_exit_130_no_output() {
  # A FIFO that no writer ever opens: mjpeg waits for its input, where the signal must still be
  # heard (exit 130, one line, nothing written). Nothing here can block: mjpeg opens the FIFO
  # without waiting for a writer, and there is no writer.
  mkfifo feed.y4m || skip "cannot make a FIFO"
  local sig pid
  for sig in TERM INT; do
    "$MJPEG" encode feed.y4m -o out.avi --quiet >out.txt 2>err.txt &
    pid=$!
    bg $pid
    wait_until 60 "mjpeg to open feed.y4m" has_open $pid feed.y4m
    kill -$sig $pid
    wait_exit $pid
    expect_interrupted_nothing_written
    echo "SIG$sig while waiting for the FIFO: $(cat err.txt)"
  done
}
case_signal_during_start_up_exit_130() {
  # The signal arrives as soon as the handlers exist (main's first statement), whatever mjpeg
  # is doing then (parsing, probing CUDA, opening the input): always exit 130 and one line,
  # never death by the signal (143) or a hang.
  mkfifo feed.y4m || skip "cannot make a FIFO"
  local sig pid
  for sig in TERM INT; do
    "$MJPEG" encode feed.y4m -o out.avi --quiet >out.txt 2>err.txt &
    pid=$!
    bg $pid
    wait_until 60 "mjpeg's signal handlers" handlers_installed $pid
    kill -$sig $pid
    wait_exit $pid
    expect_interrupted_nothing_written
    echo "SIG$sig at start-up: $(cat err.txt)"
  done
}
case_interrupt_while_a_read_waits_exit_130_at_once() {
  make_y4m in.y4m 10 64x48
  mkfifo feed || skip "cannot make a FIFO"
  # The test holds the FIFO's write end (opened read-write: never blocks) and writes nothing, or
  # only the first frames: mjpeg's read waits. Ctrl-C must end it at once (not when the writer
  # closes; the limit of 20 s is far above what it takes and far below the writer's patience).
  exec 3<>feed
  "$MJPEG" encode - -o out.avi --quiet <feed >out.txt 2>err.txt &
  local pid=$!
  bg $pid
  wait_until 60 "mjpeg's signal handlers" handlers_installed $pid
  kill -INT $pid
  wait_exit $pid 20
  expect_interrupted_nothing_written
  echo "Ctrl-C while standard input is idle: $(cat err.txt)"
  # A producer stalled after 5 frames: they are encoded, the AVI finalised, exit 130.
  local header frame
  header=$(head -1 in.y4m | wc -c)
  frame=$(( ($(stat -c %s in.y4m) - header) / 10 ))
  "$MJPEG" encode - -o out.avi --progress <feed >out.txt 2>err.txt &
  pid=$!
  bg $pid
  head -c $((header + 5 * frame)) in.y4m >&3
  wait_until 60 "mjpeg's first frame" progress_shown
  kill -INT $pid
  wait_exit $pid 20
  exec 3>&-
  [[ $RC -eq 130 ]] || die "exit code $RC after Ctrl-C with a stalled producer: $(cat err.txt)"
  local got codec w h rate nb nread
  got=$(probe_counts out.avi)
  read -r codec w h rate nb nread <<<"$got"
  [[ $codec == mjpeg && $nb == "$nread" && $nb -ge 1 && $nb -le 5 ]] || die "ffprobe: $got"
  grep -q "^mjpeg: wrote out.avi: $nb frames\? (interrupted)" err.txt || die "summary: $(cat err.txt)"
  no_temp_files .
  echo "stalled after 5 frames: $nb written"
}
case_sigkill_leaves_no_output() {
  interrupted_encode KILL
  [[ $RC -eq 137 ]] || die "exit code $RC after SIGKILL, expected 137"
  [[ ! -e out.avi ]] || die "out.avi exists after SIGKILL"
  # The temporary file cannot be removed by a killed process; it is hidden and named as such.
  find . -maxdepth 1 -name '.out.avi.tmp-*' | grep -q . || echo "(no temporary file either)"
}
case_device_out_of_range_exit_2() {
  make_y4m in.y4m 2 64x48
  local d
  for d in -1 1024 99999999999 x; do
    expect_fail 2 encode in.y4m -o out.avi --device "$d" --quiet
    grep -q -- '--device' err.txt || die "error does not name --device: $(cat err.txt)"
  done
  [[ ! -e out.avi ]] || die "out.avi created"
}
case_device_without_mode_falls_back_to_cpu() {
  "$MJPEG" info | grep -q '^CUDA devices: none' || skip "a CUDA device is present"
  make_y4m in.y4m 2 64x48
  expect_ok encode in.y4m -o out.avi --device 5
  grep -q '^mjpeg: note: CUDA device 5 does not exist .*encoding on the CPU' err.txt ||
    die "no notice naming device 5: $(cat err.txt)"
  grep -q '(cpu mode)' err.txt || die "not encoded in cpu mode: $(cat err.txt)"
  [[ $(probe_counts out.avi) == "mjpeg 64 48 25/1 2 2" ]] || die "ffprobe: $(probe_counts out.avi)"
  expect_fail 1 encode in.y4m -o out2.avi --device 5 --mode sok --quiet  # insisted: an error
  grep -q 'device 5' err.txt || die "error does not name device 5: $(cat err.txt)"
}

# The cases of the other commands (bench, compare, gantt) live beside this script; CMake globs
# the same files.
for cases in "$(dirname "${BASH_SOURCE[0]}")"/cases_*.sh; do
  # shellcheck source=/dev/null
  source "$cases"
done

# ---------------------------------------------------------------------------------------------
# Cases: planar input (Y4M and decoded video reach the encoder as planes). --dump-input writes
# the pixels each frame was encoded from; cjpeg on them is the oracle.
# ---------------------------------------------------------------------------------------------

# dump_matches_cjpeg DIR FRAMES_DIR "CJPEG OPTIONS": every frames_dir/NNN.jpg equals cjpeg of
# DIR/000NNN.ppm (or .pgm).
dump_matches_cjpeg() {
  need_cjpeg
  local dump=$1 frames=$2 opts=$3 n=0 f
  for f in "$frames"/*.jpg; do
    local i=${f##*/}
    i=$((10#${i%.jpg}))
    local src
    src=$(ls "$dump"/$(printf '%06d' "$i").p?m 2>/dev/null) || die "no dumped frame $i"
    # shellcheck disable=SC2086
    "$CJPEG" $opts -outfile theirs.jpg "$src" || die "cjpeg $opts $src failed"
    same_bytes "$f" theirs.jpg
    n=$((n + 1))
  done
  [[ $n -gt 0 ]] || die "no frames in $frames"
  echo "ok: $n frames == cjpeg [$opts] on the dumped pixels"
}

case_y4m_planar_frames_equal_cjpeg_of_dumped_pixels() {
  need_ffmpeg
  # Odd sizes, 4:2:0 / 4:2:2 / 4:4:4 / mono, limited and full range, BT.601 and BT.709 tags.
  local spec
  for spec in "yuv420p:pc:" "yuv422p:tv:" "yuv444p:pc:XCOLORMATRIX=BT709" "gray:tv:"; do
    IFS=: read -r pix range extra <<<"$spec"
    rm -rf f d && mkdir f
    ffmpeg -v error -f lavfi -i "testsrc2=size=40x24:rate=25" -frames:v 4 \
      -vf "format=yuv444p,crop=37:23:0:0,format=$pix" -color_range "$range" -strict -1 \
      -f yuv4mpegpipe -y in.y4m || die "ffmpeg could not make in.y4m"
    head -c 30 in.y4m | grep -q 'W37 H23' || die "in.y4m is not 37x23"
    if [[ -n $extra ]]; then  # our matrix hint, appended to the stream header
      sed -i "1s/\$/ $extra/" in.y4m
    fi
    expect_ok encode in.y4m -o f/%03d.jpg --dump-input d -q 77 -s 422 --mode cpu --quiet
    dump_matches_cjpeg d f "-quality 77 -sample 2x1"
    rm -rf f d && mkdir f
    expect_ok encode in.y4m -o f/%03d.jpg --dump-input d -s gray --mode cpu --quiet
    dump_matches_cjpeg d f "-quality 90 -grayscale"
  done
}

case_y4m_file_and_stdin_write_the_same_bytes() {
  make_y4m in.y4m 20 161x91
  expect_ok encode in.y4m -o file.avi --mode cpu --quiet
  "$MJPEG" encode - -o pipe.avi --mode cpu --quiet <in.y4m 2>err.txt || die "$(cat err.txt)"
  cat in.y4m | "$MJPEG" encode - -o fifo.avi --mode cpu --producers 3 --quiet 2>err.txt ||
    die "$(cat err.txt)"
  same_bytes file.avi pipe.avi
  same_bytes file.avi fifo.avi
}

case_dump_input_refuses_existing_files_without_y() {
  make_y4m in.y4m 2 32x16
  mkdir f
  expect_ok encode in.y4m -o f/%03d.jpg --dump-input d --mode cpu --quiet
  [[ -f d/000001.ppm && -f d/000002.ppm ]] || die "dumped files: $(ls d)"
  expect_fail 1 encode in.y4m -o g.avi --dump-input d --mode cpu --quiet
  [[ ! -e g.avi ]] || die "g.avi written despite the refusal"
  expect_ok encode in.y4m -o g.avi --dump-input d --mode cpu --quiet -y
  : >plain
  expect_fail 1 encode in.y4m -o h.avi --dump-input plain --mode cpu --quiet
}

case_video_planes_equal_ffmpeg_rgb_and_swscale_path() {
  need_ffmpeg
  ffmpeg -v error -f lavfi -i testsrc2=size=160x96:rate=25 -frames:v 6 -pix_fmt yuv420p \
    -c:v libx264 -qp 10 clip.mp4 || skip "ffmpeg cannot make an H.264 clip"
  need_libav clip.mp4
  grep -q "planes to the encoder" start.txt || die "not decoded to planes: $(cat start.txt)"
  mkdir f s
  expect_ok encode clip.mp4 -o f/%03d.jpg --dump-input d --mode cpu --quiet
  expect_ok encode clip.mp4 -o s/%03d.jpg --rgb-decode swscale --mode cpu --quiet
  dump_matches_cjpeg d f "-quality 90 -sample 2x2"
  local i
  for i in 1 6; do  # the planes' RGB is ffmpeg's own rgb24 (libswscale's arithmetic)
    ffmpeg -v error -i clip.mp4 -vf "select=eq(n\,$((i - 1)))" -frames:v 1 -pix_fmt rgb24 \
      "ff$i.ppm" || die "ffmpeg could not extract frame $i"
    same_bytes "d/$(printf '%06d' $i).ppm" "ff$i.ppm"
    same_bytes "f/$(printf '%03d' $i).jpg" "s/$(printf '%03d' $i).jpg"
  done
  expect_fail 2 encode clip.mp4 -o x.avi --rgb-decode bogus
}

# ---------------------------------------------------------------------------------------------
# Cases: quantization tables (--qtables/--qslots as cjpeg -qtables/-qslots; --tune presets)
# ---------------------------------------------------------------------------------------------

# make_qtables N OUT: N tables of 64 values (natural order) with comments, blank lines and
# commas; table 2 goes above 255 (16-bit DQT at quality 50, i.e. without -q).
make_qtables() {
  awk -v n="$1" 'BEGIN {
    print "# test tables: comments, blank lines and commas are allowed"
    for (t = 0; t < n; t++) {
      printf "\n# table %d\n", t
      for (i = 0; i < 64; i++)
        printf "%d%s", (t == 2 ? 1 + 7 * i : 2 + (t + 1) * i % 97), (i % 8 == 7 ? "\n" : ", ")
    }
  }' >"$2"
}

case_qtables_match_cjpeg() {
  make_qtables 3 t.txt
  against_cjpeg "$SAMPLE" "--qtables t.txt" "-qtables t.txt -sample 2x2"
  against_cjpeg "$SAMPLE" "--qtables t.txt -q 75 --qslots 0,1,2 -s 444" \
    "-quality 75 -qtables t.txt -qslots 0,1,2 -sample 1x1"
  against_cjpeg "$SAMPLE" "-q 20 --qtables t.txt --qslots 2,0 --optimize -r 2 -s 422" \
    "-quality 20 -qtables t.txt -qslots 2,0 -optimize -restart 2B -sample 2x1"
  against_cjpeg "$SAMPLE" "--qtables t.txt --qslots 2 -s gray" "-qtables t.txt -qslots 2 -grayscale"
  make_qtables 1 one.txt  # one table: chroma keeps Annex K, scaled by -q
  against_cjpeg "$SAMPLE" "--qtables one.txt -q 95" "-quality 95 -qtables one.txt -sample 2x2"
  # --qslots alone picks among the Annex K tables.
  against_cjpeg "$SAMPLE" "--qslots 1,0 -q 60" "-quality 60 -qslots 1,0 -sample 2x2"
}

case_qtables_file_of_one_table_without_q_matches_cjpeg() {
  # Without -quality cjpeg uses the file's table as it is, and slot 1 (chroma) keeps the table
  # of its default quality 75 (9 9 12 24 ...), not Annex K at 50.
  need_ffmpeg
  make_qtables 1 one.txt
  against_cjpeg "$SAMPLE" "--qtables one.txt" "-qtables one.txt -sample 2x2"
  against_cjpeg "$SAMPLE" "--qtables one.txt -s 444 --qslots 1,0 --optimize" \
    "-qtables one.txt -sample 1x1 -qslots 1,0 -optimize"
  against_cjpeg "$SAMPLE" "--qtables one.txt -s gray" "-qtables one.txt -grayscale"
  # A stream's frames alike.
  expect_ok encode "$SAMPLE" -o one.avi --qtables one.txt --quiet --mode cpu
  ffmpeg -v error -i one.avi -c copy -f image2 frame%d.jpg || die "cannot extract the frame"
  "$CJPEG" -qtables one.txt -sample 2x2 -outfile theirs.jpg "$SAMPLE" || die "cjpeg failed"
  same_bytes frame1.jpg theirs.jpg
  # A slot neither the file nor cjpeg's defaults give is still an error, as in cjpeg.
  expect_fail 2 encode "$SAMPLE" -o x.jpg --qtables one.txt --qslots 0,1,2
  ! "$CJPEG" -qtables one.txt -qslots 0,1,2 -outfile x.jpg "$SAMPLE" 2>/dev/null ||
    die "cjpeg accepted slot 2 without a table"
}

# preset_section PRESET Q OUT: the "# quality Q" section of docs/tuning/PRESET.txt.
preset_section() {
  awk -v q="$2" '/^# quality /{p = ($3 == q)} p' "$SOURCE_DIR/docs/tuning/$1.txt" >"$3"
  [[ $(grep -vc '^#' "$3") -ge 16 ]] || die "no quality $2 in docs/tuning/$1.txt"
}

case_tune_matches_cjpeg_with_the_docs_tables() {
  local t q
  for t in psnr ssim; do
    for q in 10 50 85 100; do
      preset_section "$t" "$q" sec.txt
      against_cjpeg "$SAMPLE" "--tune $t -q $q" "-qtables sec.txt -sample 2x2"
    done
  done
  # At 4:2:2 and 4:4:4 the PSNR preset takes the tables fitted there (docs/tuning/psnr_422.txt,
  # psnr_444.txt), the SSIM preset its own.
  for q in 10 50 85 100; do
    preset_section psnr_422 "$q" sec.txt
    against_cjpeg "$SAMPLE" "--tune psnr -q $q -s 422 --optimize" \
      "-qtables sec.txt -sample 2x1 -optimize"
    preset_section psnr_444 "$q" sec.txt
    against_cjpeg "$SAMPLE" "--tune psnr -q $q -s 444" "-qtables sec.txt -sample 1x1"
    preset_section ssim "$q" sec.txt
    against_cjpeg "$SAMPLE" "--tune ssim -q $q -s 422 --optimize" \
      "-qtables sec.txt -sample 2x1 -optimize"
  done
  preset_section ssim 50 sec.txt
  against_cjpeg "$SAMPLE" "--tune ssim -q 50 -s 444" "-qtables sec.txt -sample 1x1"
  # The default is cjpeg's own tables.
  against_cjpeg "$SAMPLE" "--tune none -q 80" "-quality 80 -sample 2x2"
}

case_qtables_in_a_stream_match_cjpeg() {
  need_cjpeg
  need_ffmpeg
  make_qtables 3 t.txt
  expect_ok encode "$SAMPLE" -o one.avi -q 70 --qtables t.txt --qslots 0,2,1 --quiet --mode cpu
  ffmpeg -v error -i one.avi -c copy -f image2 frame%d.jpg || die "cannot extract the frame"
  "$CJPEG" -quality 70 -qtables t.txt -qslots 0,2,1 -sample 2x2 -outfile theirs.jpg "$SAMPLE" ||
    die "cjpeg failed"
  same_bytes frame1.jpg theirs.jpg
  expect_ok encode "$SAMPLE" -o two.avi --tune ssim -q 60 --quiet --mode cpu
  ffmpeg -v error -i two.avi -c copy -f image2 tune%d.jpg || die "cannot extract the frame"
  preset_section ssim 60 sec.txt
  "$CJPEG" -qtables sec.txt -sample 2x2 -outfile tune.jpg "$SAMPLE" || die "cjpeg failed"
  same_bytes tune1.jpg tune.jpg
}

case_qtables_usage_errors_exit_2() {
  make_qtables 3 t.txt
  make_qtables 5 five.txt
  printf '1 2 3\n' >short.txt
  printf '# nothing\n' >empty.txt
  { head -c 200 t.txt; printf ' x\n'; } >bad.txt
  awk 'BEGIN { for (i = 0; i < 64; i++) printf "200 " }' >big.txt
  expect_fail 2 encode "$SAMPLE" -o o.jpg --qtables missing.txt
  grep -q "missing.txt" err.txt || die "error does not name the file: $(cat err.txt)"
  local f
  for f in five.txt short.txt empty.txt bad.txt; do
    expect_fail 2 encode "$SAMPLE" -o o.jpg --qtables "$f"
    grep -q "$f" err.txt || die "error does not name $f: $(cat err.txt)"
  done
  expect_fail 2 encode "$SAMPLE" -o o.jpg --qtables .  # a directory
  expect_fail 2 encode "$SAMPLE" -o o.jpg --qslots 4
  expect_fail 2 encode "$SAMPLE" -o o.jpg --qslots 0,
  expect_fail 2 encode "$SAMPLE" -o o.jpg --tune bogus
  expect_fail 2 encode "$SAMPLE" -o o.jpg --tune psnr --qtables t.txt
  # A slot that holds no table, and a value above 8191 after scaling (200 * 5000 / 100).
  expect_fail 2 encode "$SAMPLE" -o o.jpg --qslots 0,1,2
  grep -q "not defined" err.txt || die "unclear message: $(cat err.txt)"
  expect_fail 2 encode "$SAMPLE" -o o.jpg --qtables big.txt -q 1
  grep -q "8191" err.txt || die "unclear message: $(cat err.txt)"
  [[ ! -e o.jpg ]] || die "a failed encode left o.jpg"
}

# The tuning tool (src/tools/qtune.cpp, built beside mjpeg): its model gives coarser tables for a
# larger multiplier, and its eval measures what `mjpeg encode` writes and `mjpeg quality` says.
case_qtune_tool_models_and_measures() {
  local tool
  tool="$(dirname "$MJPEG")/mjpeg_qtune"
  [[ -x $tool ]] || skip "mjpeg_qtune not built"
  command -v python3 >/dev/null || skip "python3 not found"
  "$tool" model --lambdas 2,50 "$SAMPLE" >model.jsonl 2>err.txt || die "model: $(cat err.txt)"
  # The model's coefficients are the unquantized ones whatever CPU transform variant is the
  # default (the vector variants quantize with divisors built from the table, 8 x a step of 1,
  # so the model must not take them): the same tables with the scalar reference forced.
  MJPEG_CPU_TRANSFORM=scalar "$tool" model --lambdas 2,50 "$SAMPLE" >scalar.jsonl 2>err.txt \
    || die "model (scalar): $(cat err.txt)"
  cmp -s model.jsonl scalar.jsonl || die "model depends on the CPU transform variant"
  # --ac-rounding: 4 is the rounding to nearest (the same output), 3 a dead zone (other tables).
  "$tool" model --lambdas 2,50 --ac-rounding 4 "$SAMPLE" >r4.jsonl 2>err.txt || die "model: $(cat err.txt)"
  cmp -s model.jsonl r4.jsonl || die "--ac-rounding 4 is not the default rounding"
  "$tool" model --lambdas 2,50 --ac-rounding 3 "$SAMPLE" >r3.jsonl 2>err.txt || die "model: $(cat err.txt)"
  ! cmp -s model.jsonl r3.jsonl || die "--ac-rounding 3 changed nothing"
  printf '[{"id": "a", "quality": 90, "optimize": true}, {"id": "b", "quality": 50, "tune": "psnr"}, {"id": "c", "quality": 90, "optimize": true, "rdo": "trellis"}]' >jobs.json
  "$tool" eval jobs.json "$SAMPLE" >eval.jsonl 2>err.txt || die "eval: $(cat err.txt)"
  expect_ok encode "$SAMPLE" -o c.jpg -q 90 --optimize --rdo trellis
  expect_ok encode "$SAMPLE" -o a.jpg -q 90 --optimize
  # An AVI: `mjpeg quality` decodes it with FFmpeg's mjpeg decoder, as the tool does.
  expect_ok encode "$SAMPLE" -o a.avi -q 90 --optimize
  expect_ok quality "$SAMPLE" a.avi --json a.json
  expect_ok encode "$SAMPLE" -o b.jpg -q 50 --tune psnr
  python3 - "$(stat -c %s a.jpg)" "$(stat -c %s b.jpg)" "$(stat -c %s c.jpg)" <<'EOF' || die "qtune output wrong"
import json, sys
m = [json.loads(l) for l in open("model.jsonl")]
assert [x["lambda"] for x in m] == [2, 50], m
for x in m:
    assert len(x["tables"]) == 3 and all(len(t) == 64 and all(1 <= v <= 255 for v in t)
                                         for t in x["tables"]), x
fine, coarse = (sum(map(sum, x["tables"])) for x in m)
assert coarse > fine and m[1]["model_bits"] < m[0]["model_bits"], m
assert m[1]["model_mse"] > m[0]["model_mse"], m
e = {x["id"]: x for x in map(json.loads, open("eval.jsonl"))}
assert e["a"]["bytes"] == int(sys.argv[1]) and e["b"]["bytes"] == int(sys.argv[2]), e
assert e["c"]["bytes"] == int(sys.argv[3]) and e["c"]["bytes"] < e["a"]["bytes"], e
ours = json.load(open("a.json"))["summary"]
assert abs(e["a"]["psnr_rgb"] - ours["psnr_rgb"]["mean"]) < 1e-6, (e, ours)
assert abs(e["a"]["ssim_y"] - ours["ssim_y"]["mean"]) < 1e-6, (e, ours)
EOF
}

# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------

if [[ ${1:-} == --list ]]; then
  declare -F | awk '$3 ~ /^case_/ { sub(/^case_/, "", $3); print $3 }'
  exit 0
fi
[[ $# -ge 4 ]] || { echo "usage: $0 CASE MJPEG SOURCE_DIR WORK_DIR [CJPEG [MEDIA_DIR]]" >&2; exit 2; }
name=$1
MJPEG=$(realpath "$2")
SOURCE_DIR=$(realpath "$3")
SAMPLE=$(realpath "$3/media/sample.ppm")
CJPEG=${5:-}
[[ $CJPEG == *NOTFOUND* ]] && CJPEG=
MEDIA=${MJPEG_MEDIA_DIR:-${6:-}}
[[ -n $MEDIA ]] && MEDIA=$(realpath -m "$MEDIA")
declare -F "case_$name" >/dev/null || { echo "unknown case $name" >&2; exit 2; }
[[ -x $MJPEG ]] || die "mjpeg binary $MJPEG not found"
[[ -f $SAMPLE ]] || die "sample $SAMPLE not found"

dir="$4/$name"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || die "cannot make $dir"
trap kill_background EXIT
"case_$name"
echo "PASS: $name"
