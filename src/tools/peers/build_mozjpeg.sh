#!/usr/bin/env bash
# Builds mozjpeg's cjpeg from a checkout of its public sources (github.com/mozilla/mozjpeg), as
# a peer for the size measurements of --rdo (src/tools/rdo_sizes.sh, docs/rdo.md): a program
# run beside mjpeg, never linked into it. Without SIMD (no assembler needed): the files are
# the same, only slower to make.
# Usage: build_mozjpeg.sh MOZJPEG_SOURCE_DIR BUILD_DIR   -> BUILD_DIR/cjpeg
set -euo pipefail
src=${1:?mozjpeg source directory}
out=${2:?build directory}
[[ -f $src/jcdctmgr.c ]] || { echo "build_mozjpeg.sh: $src is not a mozjpeg source tree" >&2; exit 2; }
cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DWITH_SIMD=0 -DENABLE_SHARED=0 \
  -DPNG_SUPPORTED=0 -DWITH_TURBOJPEG=0 >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
cmake --build "$out" -j"$(nproc)" --target cjpeg >>"$out.log" 2>&1 || { tail -30 "$out.log" >&2; exit 1; }
"$out/cjpeg" -version 2>&1 | head -1
