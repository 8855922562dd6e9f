#!/usr/bin/env bash
# Regenerates media/sample.ppm (640x360 RGB, binary PPM) from FFmpeg's built-in sources:
# the top half is `testsrc2` (colour bars, a gradient ramp, text, noise squares), the bottom
# half is `mandelbrot` (smooth gradients and fine detail). Usage: media/make-sample.sh [OUT]
set -euo pipefail
out="${1:-$(dirname "$0")/sample.ppm}"
ffmpeg -v error -filter_complex \
  "testsrc2=size=640x180:rate=25[a];mandelbrot=size=640x180:rate=25:start_scale=0.3:start_x=-0.743643887037151:start_y=0.13182590420533[b];[a][b]vstack,format=rgb24" \
  -frames:v 1 -y "$out"
