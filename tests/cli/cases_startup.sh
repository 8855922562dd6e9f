# Cases of what a process costs before its first frame (sourced by cli_test.sh): FFmpeg's and
# OpenCV's libraries are loaded when a command first needs them, not at every start
# (src/app/CMakeLists.txt, MJPEG_LAZY_LIBS). Judged by the dynamic loader's own trace
# (LD_DEBUG=libs: glibc prints "calling init: LIB" for every library it initialises).

# lazy_build: skips unless `mjpeg info` says this build loads libraries on first use.
lazy_build() {
  expect_ok info
  grep -q '^loaded on first use: .*FFmpeg' out.txt ||
    skip "this build loads every library at start ($(grep '^loaded on first use' out.txt))"
}

# inits CMD...: runs mjpeg CMD... under LD_DEBUG=libs; the libraries it initialised, one a line,
# into inits.txt (its own output goes to run.txt); returns mjpeg's exit status.
inits() {
  local rc=0
  LD_DEBUG=libs LD_DEBUG_OUTPUT="$PWD/ld" "$MJPEG" "$@" >run.txt 2>&1 || rc=$?
  cat ld.* 2>/dev/null | sed -n 's/.*calling init: //p' | sort -u >inits.txt
  rm -f ld.*
  return $rc
}

case_startup_loads_no_video_or_picture_library() {
  lazy_build
  need_ffmpeg
  # --version and a PPM (read by our own reader) touch neither FFmpeg nor OpenCV.
  inits --version || die "--version failed: $(cat run.txt)"
  [[ -s inits.txt ]] || die "LD_DEBUG=libs traced nothing (is this glibc?)"
  ! grep -E 'libav(format|codec|util)|libswscale|libopencv' inits.txt ||
    die "--version loaded FFmpeg or OpenCV: $(grep -E 'libav|libsw|opencv' inits.txt | tr '\n' ' ')"
  inits encode "$SAMPLE" -o one.jpg --quiet || die "PPM encode failed: $(cat run.txt)"
  ! grep -E 'libav(format|codec|util)|libswscale|libopencv' inits.txt ||
    die "a PPM encode loaded FFmpeg or OpenCV: $(grep -E 'libav|libsw|opencv' inits.txt | tr '\n' ' ')"
  if [[ -n ${CJPEG:-} ]]; then
    "$CJPEG" -quality 90 -sample 2x2 -outfile ref.jpg "$SAMPLE" || die "cjpeg failed"
    same_bytes one.jpg ref.jpg
  fi
  # A video loads FFmpeg's libraries when it is opened, and encodes as the build always did.
  ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=160x96:rate=25" -frames:v 5 \
    -c:v libx264 -pix_fmt yuv420p clip.mp4 || die "ffmpeg could not make clip.mp4"
  inits encode clip.mp4 -o clip.avi --quiet || die "video encode failed: $(cat run.txt)"
  grep -q 'libavformat' inits.txt || die "a video encode did not load libavformat: $(tr '\n' ' ' <inits.txt)"
  ! grep -q 'libopencv' inits.txt || die "a video encode loaded OpenCV: $(grep opencv inits.txt)"
  [[ $(probe_counts clip.avi) == "mjpeg 160 96 25/1 5 5" ]] ||
    die "clip.avi: $(probe_counts clip.avi)"
  # A PNG loads OpenCV (where the build reads pictures with it) and not FFmpeg.
  if have_opencv; then
    ffmpeg -nostdin -v error -i "$SAMPLE" sample.png || die "ffmpeg could not make sample.png"
    inits encode sample.png -o png.jpg --quiet || die "PNG encode failed: $(cat run.txt)"
    grep -q 'libopencv_imgcodecs' inits.txt || die "a PNG encode did not load OpenCV: $(tr '\n' ' ' <inits.txt)"
    ! grep -q 'libavformat' inits.txt || die "a PNG encode loaded FFmpeg's libraries"
    [[ -z ${CJPEG:-} ]] || same_bytes png.jpg ref.jpg
  fi
}

case_library_that_cannot_load_is_one_line() {
  lazy_build
  need_ffmpeg
  # The name the executable loads FFmpeg's container library by (its SONAME, in the stubs).
  local soname
  soname=$(grep -ao 'libavformat\.so\.[0-9]*' "$MJPEG" | head -1)
  [[ -n $soname ]] || die "no libavformat SONAME in $MJPEG"
  ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=64x64:rate=25" -frames:v 2 \
    -c:v libx264 -pix_fmt yuv420p clip.mp4 || die "ffmpeg could not make clip.mp4"
  # A damaged library (an empty file) found first on LD_LIBRARY_PATH: dlopen refuses it.
  mkdir -p broken && : >"broken/$soname"
  local rc=0
  LD_LIBRARY_PATH="$PWD/broken" "$MJPEG" encode clip.mp4 -o clip.avi >out.txt 2>err.txt || rc=$?
  [[ $rc -eq 1 ]] || die "exit $rc, not 1: $(cat err.txt)"
  [[ $(wc -l <err.txt) -eq 1 ]] || die "not one line: $(cat err.txt)"
  grep -q "^mjpeg: error: cannot load FFmpeg's libraries ($soname): " err.txt ||
    die "unexpected error: $(cat err.txt)"
  [[ ! -e clip.avi ]] || die "clip.avi was written"
  no_temp_files
  # Commands that need no FFmpeg still run there.
  LD_LIBRARY_PATH="$PWD/broken" "$MJPEG" encode "$SAMPLE" -o one.jpg --quiet ||
    die "a PPM encode failed beside a broken FFmpeg"
}
