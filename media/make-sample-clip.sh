#!/usr/bin/env bash
# Regenerates media/sample.mp4, the default video input: 4 s of 640x360 at 25 frames/s
# (100 frames), H.264 4:2:0 tagged BT.601 limited range, from the same FFmpeg synthetic
# sources as sample.ppm (testsrc2 on top, a mandelbrot zoom below; both move over time).
# Usage: media/make-sample-clip.sh [OUT]
set -euo pipefail
out="${1:-$(dirname "$0")/sample.mp4}"
ffmpeg -v error -filter_complex \
  "testsrc2=size=640x180:rate=25[a];mandelbrot=size=640x180:rate=25:start_scale=0.3:start_x=-0.743643887037151:start_y=0.13182590420533[b];[a][b]vstack,format=yuv420p" \
  -t 4 -c:v libx264 -crf 20 -preset slow -colorspace bt470bg -color_primaries bt470bg \
  -color_trc smpte170m -color_range tv -movflags +faststart -y "$out"
