#!/usr/bin/env bash
# An AVI past 1 GiB and past 4 GiB (OpenDML: RIFF AVIX segments, indx/ix00 indexes) stays valid
# for ffprobe and ffmpeg. Fast path: write_repeated_avi writes one pre-encoded q100 frame of
# noise (~6.5 MB) again and again, each copy tagged "mjpeg frame N" in a COM marker.
#
#   large_avi_test.sh WRITER WORK_DIR [MIN_BYTES]
#
# Checks: ffprobe's header count (nb_frames) equals the packets it reads (nb_read_packets) and
# the frames written; size 1920x1080, rate 25/1; the audio stream (one PCM chunk of 1/25 s
# before each frame) has as many packets, its length in its header and ffprobe's; `ffmpeg
# -xerror -c copy` through the whole file is silent; frames around the 1 GiB and 4 GiB
# boundaries (and the last) seek, decode without a message and are the frame the index says
# (their COM tag), and the audio found there is that frame's (its sample value). Exit 77
# (skip) without ffmpeg/ffprobe or without enough free disk space. The file is deleted
# afterwards.
set -uo pipefail

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

[[ $# -ge 2 ]] || { echo "usage: $0 WRITER WORK_DIR [MIN_BYTES]" >&2; exit 2; }
writer=$1
work=$2
gib=$((1 << 30))
min_bytes=${3:-$((4 * gib + 64 * (1 << 20)))}  # just past 4 GiB

command -v ffprobe >/dev/null && command -v ffmpeg >/dev/null || skip "ffmpeg/ffprobe not found"
mkdir -p "$work" || die "cannot make $work"
need=$((min_bytes + 512 * (1 << 20)))
free=$(( $(df -Pk "$work" | awk 'NR == 2 { print $4 }') * 1024 ))
((free >= need)) ||
  skip "needs $((need >> 20)) MiB free in $work, only $((free >> 20)) MiB available"

avi=$work/large.avi
trap 'rm -f "$avi" "$work"/.large.avi.tmp-* "$work"/frame.jpg' EXIT
rm -f "$avi"

start=$SECONDS
summary=$("$writer" "$avi" "$min_bytes") || die "write_repeated_avi failed"
echo "wrote: $summary in $((SECONDS - start)) s"
read -r _ frames _ jpeg_bytes _ stride _ segments _ file_bytes <<<"$summary"
(( $(stat -c %s "$avi") == file_bytes )) || die "file size $(stat -c %s "$avi") != $file_bytes"
((file_bytes > 4 * gib)) || die "the file is not past 4 GiB ($file_bytes bytes)"
((segments >= 5)) || die "only $segments RIFF segments for $file_bytes bytes"

# Header and index agree with the data.
got=$(ffprobe -v error -count_packets -select_streams v:0 \
  -show_entries stream=codec_name,width,height,r_frame_rate,nb_frames,nb_read_packets \
  -of csv=p=0 "$avi" | tr ',' ' ')
[[ $got == "mjpeg 1920 1080 25/1 $frames $frames" ]] ||
  die "ffprobe says '$got', expected 'mjpeg 1920 1080 25/1 $frames $frames'"
echo "ffprobe: $got ($((SECONDS - start)) s)"
# The audio: its header counts samples (nb_frames), and its packets hold all of them (ffmpeg
# may cut a chunk into several packets).
got=$(ffprobe -v error -select_streams a:0 \
  -show_entries stream=codec_name,sample_rate,channels,nb_frames -of csv=p=0 "$avi" | tr ',' ' ')
[[ $got == "pcm_s16le 48000 2 $((frames * 1920))" ]] ||
  die "ffprobe says '$got' of the audio, expected 'pcm_s16le 48000 2 $((frames * 1920))'"
audio_bytes=$(ffprobe -v error -select_streams a:0 -show_entries packet=size -of csv=p=0 "$avi" |
  awk '{ n += $1 } END { print n }')
((audio_bytes == frames * 7680)) || die "the audio packets hold $audio_bytes bytes, not $((frames * 7680))"
echo "ffprobe: $got, $audio_bytes bytes of audio ($((SECONDS - start)) s)"

# The whole file demuxes without a message.
msgs=$(ffmpeg -nostdin -v error -xerror -i "$avi" -c copy -f null - 2>&1)
[[ -z $msgs ]] || die "ffmpeg -c copy reports: $(head -c 500 <<<"$msgs")"
echo "ffmpeg -c copy: silent ($((SECONDS - start)) s)"

# Frames around the boundaries: seek by index, decode, and check the COM tag.
header=$((file_bytes - frames * stride))  # headers + indexes; small next to a frame
k1=$(( (gib - header) / stride ))
k4=$(( (4 * gib - header) / stride ))
for k in 0 $((k1 - 1)) $k1 $((k1 + 1)) $((k4 - 1)) $k4 $((k4 + 1)) $((frames - 1)); do
  ((k >= 0 && k < frames)) || continue
  t=$(awk -v k="$k" 'BEGIN { printf "%.2f", k / 25 }')
  msgs=$(ffmpeg -nostdin -v error -xerror -ss "$t" -i "$avi" -frames:v 1 -f null - 2>&1)
  [[ -z $msgs ]] || die "decoding frame $k (t=$t) reports: $(head -c 300 <<<"$msgs")"
  rm -f "$work/frame.jpg"
  ffmpeg -nostdin -v error -ss "$t" -i "$avi" -frames:v 1 -c copy -f image2 "$work/frame.jpg" ||
    die "cannot extract frame $k"
  tag=$(grep -ao 'mjpeg frame [0-9]*' "$work/frame.jpg" | head -1)
  [[ $tag == "$(printf 'mjpeg frame %010d' "$k")" ]] ||
    die "seeking to frame $k (t=$t) gave '$tag'"
  (( $(stat -c %s "$work/frame.jpg") == jpeg_bytes )) || die "frame $k has the wrong size"
  # The audio there: the chunk written before frame k (its samples are k % 30000 + 1).
  sample=$(ffmpeg -nostdin -v error -ss "$t" -i "$avi" -map 0:a -frames:a 1 -c copy -f s16le - |
    od -An -td2 -N2 | tr -d ' ')
  [[ $sample == $((k % 30000 + 1)) ]] || die "seeking the audio to t=$t gave sample '$sample'"
  echo "frame $k (t=$t s): decodes silently, tag ok, its audio found"
done
echo "PASS: $frames frames, $segments RIFF segments, $file_bytes bytes, $((SECONDS - start)) s"
