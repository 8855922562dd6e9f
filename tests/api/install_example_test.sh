#!/usr/bin/env bash
# The installed package, as a user sees it (ctest install_example):
#   1. cmake --install BUILD_DIR into a fresh temporary prefix; every installed piece is there
#      (libmjpeg.a, headers, mjpegConfig.cmake + version file, mjpeg.pc, the CLI, mjpeg.1);
#   2. examples/encode_frames, a separate CMake project, configured against that prefix only
#      (find_package(mjpeg), no CUDA language), built and run: its AVIs are read by ffprobe
#      (codec, size, frame count) and decoded by ffmpeg without an error;
#   3. the README's sample (examples/encode_frames/minimal.cpp) also built with pkg-config;
#   4. the installed CLI runs and the man page renders; find_package(mjpeg 99) is refused;
#   5. the package finds CUDAToolkit in a CUDA build and names no CUDA in a CPU-only one.
# Usage: install_example_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mjpeg_install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "install_example: $*" >&2; exit 1; }
command -v ffprobe >/dev/null || fail "ffprobe not found (.ci/setup installs the ffmpeg package)"

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "install failed"; }
libdir=$(cd "$prefix" && dirname "$(find . -name libmjpeg.a | head -1)")
[ -n "$libdir" ] && [ "$libdir" != "." ] || fail "libmjpeg.a not installed"
for f in "$libdir/libmjpeg.a" include/mjpeg/video.hpp include/mjpeg/encoder.hpp \
         include/mjpeg/options.hpp include/mjpeg/error.hpp \
         "$libdir/cmake/mjpeg/mjpegConfig.cmake" "$libdir/cmake/mjpeg/mjpegConfigVersion.cmake" \
         "$libdir/cmake/mjpeg/mjpegTargets.cmake" "$libdir/pkgconfig/mjpeg.pc" bin/mjpeg \
         share/man/man1/mjpeg.1; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
# Public headers name no CUDA, OpenCV or FFmpeg type.
if grep -nE 'cuda|cv::|opencv|libav|AVFrame|nvjpeg' "$prefix"/include/mjpeg/*.hpp | grep -v '^[^:]*:[0-9]*: *//'; then
  fail "a public header uses CUDA, OpenCV or FFmpeg"
fi

# The package asks for CUDA exactly when the library was built with it: a CPU-only build
# (MJPEG_WITH_CUDA=OFF) installs a package that needs no CUDA toolkit at all.
config="$prefix/$libdir/cmake/mjpeg/mjpegConfig.cmake"
if grep -q '^MJPEG_WITH_CUDA:BOOL=OFF' "$build/CMakeCache.txt"; then
  echo "== a CPU-only build: no CUDA in the package"
  if grep -hn 'CUDA' "$prefix/$libdir/cmake/mjpeg/"*.cmake | grep -v '^[0-9]*: *#'; then
    fail "the CMake package of a CPU-only build names CUDA"
  fi
  if grep -n 'cuda' "$prefix/$libdir/pkgconfig/mjpeg.pc"; then fail "mjpeg.pc of a CPU-only build names CUDA"; fi
  "$prefix/bin/mjpeg" info | grep -q '^CUDA devices: none (this mjpeg was built without CUDA)' ||
    fail "the installed CPU-only mjpeg does not say it was built without CUDA"
else
  grep -q 'find_dependency(CUDAToolkit)' "$config" || fail "mjpegConfig.cmake of a CUDA build does not find CUDAToolkit"
fi

echo "== examples/encode_frames against the installed package"
cmake -S "$src/examples/encode_frames" -B "$work/example" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" || { cat "$work/configure.log"; fail "configure failed"; }
cmake --build "$work/example" -j 2 >"$work/build.log" || { cat "$work/build.log"; fail "build failed"; }

probe() {  # FILE -> "codec,width,height,frames"
  ffprobe -v error -count_frames -select_streams v:0 \
    -show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 "$1"
}
expect_probe() {  # FILE EXPECTED
  local got
  got=$(probe "$1") || fail "ffprobe cannot read $1"
  [ "$got" = "$2" ] || fail "$1: ffprobe says '$got', expected '$2'"
  if command -v ffmpeg >/dev/null; then
    local errors
    errors=$(ffmpeg -nostdin -v error -i "$1" -f null - 2>&1) || fail "ffmpeg cannot decode $1"
    [ -z "$errors" ] || fail "ffmpeg reports errors decoding $1: $errors"
  fi
  echo "   $1: $got"
}

cd "$work"
"$work/example/encode_frames" frames.avi --frames 40 --size 320x240
expect_probe frames.avi "mjpeg,320,240,40"
"$work/example/encode_frames" planar.avi --frames 12 --size 97x61 --format yuv420p --quality 60
expect_probe planar.avi "mjpeg,97,61,12"
"$work/example/encode_frames" gray.avi --frames 5 --size 64x48 --format gray8
expect_probe gray.avi "mjpeg,64,48,5"
set +e
"$work/example/encode_frames" bad.avi --quality 0 2>"$work/err.txt"
rc=$?
set -e
[ "$rc" = 2 ] || fail "quality 0: exit $rc, expected 2"
grep -q "quality 0 is outside 1..100" "$work/err.txt" || fail "quality 0: message '$(cat "$work/err.txt")'"
[ ! -e bad.avi ] || fail "a refused encode left bad.avi"
"$work/example/minimal"
expect_probe minimal.avi "mjpeg,640,360,50"

echo "== the same sample through pkg-config"
rm -f minimal.avi
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
pkg-config --exists mjpeg || fail "pkg-config does not find mjpeg"
[ "$(pkg-config --modversion mjpeg)" = "$(sed -n 's/^Version: //p' "$prefix/$libdir/pkgconfig/mjpeg.pc")" ]
# shellcheck disable=SC2046
g++ -std=c++17 -O1 "$src/examples/encode_frames/minimal.cpp" -o minimal_pc $(pkg-config --cflags --libs mjpeg) \
  || fail "g++ with pkg-config --cflags --libs mjpeg failed"
./minimal_pc
expect_probe minimal.avi "mjpeg,640,360,50"

echo "== the installed CLI, its man page, the version check"
"$prefix/bin/mjpeg" --version | grep -q "^mjpeg " || fail "installed mjpeg --version"
grep -q '^\.TH MJPEG 1' "$prefix/share/man/man1/mjpeg.1" || fail "mjpeg.1 has no .TH line"
grep -q '^\.SS mjpeg encode' "$prefix/share/man/man1/mjpeg.1" || fail "mjpeg.1 lacks the encode command"
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$prefix/share/man/man1/mjpeg.1" 2>&1 | grep -q -- "--quality" \
    || fail "man -l mjpeg.1 does not render the options"
fi
mkdir -p "$work/too_new"
cat >"$work/too_new/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(too_new LANGUAGES CXX)
find_package(mjpeg 99 REQUIRED)
CMAKE
if cmake -S "$work/too_new" -B "$work/too_new/b" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
  fail "find_package(mjpeg 99) was accepted"
fi
echo "install_example: ok"
