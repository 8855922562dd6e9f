#!/usr/bin/env bash
# Makes the compressed clips of the NVDEC tests and benchmarks with ffmpeg (libx264, libx265,
# libvpx-vp9, mpeg2video) from the real clips of the media folder, on a machine with ffmpeg
# (the GPU machine has none: the clips are carried there):
#   tests/gpu/make_nvdec_clips.sh MEDIA_DIR OUT_DIR [tests|bench|all]
# tests: small clips, one per case the GPU decoder must get exactly right (each encodes to the
#   same JPEGs whether NVDEC or libavcodec decodes it; tests/gpu/test_nvdec.cpp):
#     h264_bframes.mp4   718x406 (not a multiple of 16: cropped), 3 B-frames, closed GOPs of 30
#     h264_opengop.mkv   640x360, open GOPs (non-IDR I frames with recovery points), B-frames
#     h264_raw.h264      an Annex B stream without container or timestamps, SPS/PPS once
#     hevc_8bit.mp4      960x540, x265's default open GOPs (CRA with RASL frames), keyint 30
#     hevc_10bit.mkv     640x480 yuv420p10le, B-frames
#     vp9_odd.webm       479x271 (odd width and height), key frames every 20
#     mpeg2.ts           720x406 MPEG-2 in a transport stream, open GOPs of 15 with B-frames
#                        (decoded on the CPU: MPEG-2 decoders may round their IDCT differently)
#   and counts.txt: each clip's frames as ffprobe -count_frames counts them.
# bench: a window panning across the Kodak 4K mosaic (put twice side by side):
#   h264_1080p.mp4 and hevc_1080p.mp4 (600 frames), h264_4k.mp4 (150), GOPs of 60 frames
#   (2.4 s at 25 fps).
set -euo pipefail
media=$1 out=$2 what=${3:-all}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
ff() { ffmpeg -v error -y "$@"; }
v=$media/video

if [[ $what == tests || $what == all ]]; then
  ff -i "$v/tears-of-steel-battle-clip-medium.webm" -frames:v 120 -an -vf scale=718:406 \
    -c:v libx264 -preset fast -bf 3 -g 30 -keyint_min 30 -sc_threshold 0 "$out/h264_bframes.mp4"
  ff -i "$v/bottle-detection.mp4" -frames:v 150 -an -c:v libx264 -preset fast -bf 2 \
    -x264-params open-gop=1:keyint=30:min-keyint=30:scenecut=0 "$out/h264_opengop.mkv"
  ff -i "$v/flower.mp4" -frames:v 120 -an -c:v libx264 -preset fast -g 24 -bf 2 \
    -bsf:v h264_mp4toannexb -f h264 "$out/h264_raw.h264"
  ff -i "$v/flower.mp4" -frames:v 150 -an -c:v libx265 -preset fast \
    -x265-params keyint=30:min-keyint=30:log-level=error "$out/hevc_8bit.mp4"
  ff -i "$v/friday.mp4" -frames:v 120 -an -c:v libx265 -preset fast -pix_fmt yuv420p10le \
    -x265-params keyint=40:bframes=3:log-level=error "$out/hevc_10bit.mkv"
  ff -i "$v/car-detection.mp4" -frames:v 60 -an -vf scale=479:271 -c:v libvpx-vp9 -b:v 400k \
    -g 20 -deadline realtime -cpu-used 8 "$out/vp9_odd.webm"
  ff -i "$v/car-detection.mp4" -frames:v 90 -an -vf scale=720:406 -c:v mpeg2video -q:v 4 \
    -g 15 -bf 2 "$out/mpeg2.ts"
  : >"$out/counts.txt"
  for f in h264_bframes.mp4 h264_opengop.mkv h264_raw.h264 hevc_8bit.mp4 hevc_10bit.mkv \
           vp9_odd.webm mpeg2.ts; do
    n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
          -of default=nw=1:nk=1 "$out/$f" | sed -n 1p)
    echo "$f $n" >>"$out/counts.txt"
  done
fi

if [[ $what == bench || $what == all ]]; then
  # The Kodak 4K mosaic (tests/common/test_media.hpp's kodak_mosaic_order(), 5 x 5 tiles of
  # 768x512 cut to 3840x2160) and a window panning across it, 4 pixels a frame.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  inputs=() layout=()
  n=0
  for k in 1 2 3 5 6 7 8 11 12 13 14 15 16 20 21 22 23 24 1 5 8 13 14 21 22; do
    inputs+=(-i "$(printf '%s/images/kodak/kodim%02d.png' "$media" "$k")")
    layout+=("$((n % 5 * 768))_$((n / 5 * 512))")
    n=$((n + 1))
  done
  ff "${inputs[@]}" -filter_complex "xstack=inputs=25:layout=$(IFS='|'; echo "${layout[*]}"),crop=3840:2160:0:0" \
    -frames:v 1 "$tmp/k4k.png"
  pan() {  # SIZE FRAMES OUT: a clip of the window, 25 fps, 4:2:0
    local w=${1%x*} h=${1#*x}
    # The picture is decoded once, put twice side by side (so that a 3840x2160 window moves
    # too) and repeated in memory (the loop filter), then cut.
    ff -i "$tmp/k4k.png" -frames:v "$2" \
      -filter_complex "[0]split[a][b];[a][b]hstack,loop=loop=$(($2 - 1)):size=1,setpts=N/25/TB,crop=$w:$h:'mod(4*n,7680-$w+1)':'mod(2*n,2160-$h+1)',format=yuv420p" \
      -r 25 -f yuv4mpegpipe "$3"
  }
  pan 1920x1080 600 "$tmp/1080.y4m"
  ff -i "$tmp/1080.y4m" -c:v libx264 -preset fast -crf 23 -g 60 -bf 3 "$out/h264_1080p.mp4"
  ff -i "$tmp/1080.y4m" -c:v libx265 -preset fast -crf 26 \
    -x265-params keyint=60:log-level=error "$out/hevc_1080p.mp4"
  rm -f "$tmp/1080.y4m"
  pan 3840x2160 150 "$tmp/4k.y4m"
  ff -i "$tmp/4k.y4m" -c:v libx264 -preset fast -crf 23 -g 60 -bf 3 "$out/h264_4k.mp4"
fi
ls -l "$out"
