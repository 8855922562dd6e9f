#!/usr/bin/env bash
# End-to-end frames/s of `mjpeg encode` in each mode on a GPU machine, on a 1920x1080 clip
# panned across the Kodak 4K mosaic (make_y4m_clip.py; the mosaic is
# ../shared/tools/make-bench-frames.sh's k4k.png saved as PPM):
#   tests/gpu/e2e.sh MJPEG_BINARY K4K.ppm [FRAMES]
# Prints one line per mode with --stats, then a table; checks that every mode's AVI is
# byte-identical to the cpu mode's.
set -u
mjpeg=$1 src=$2 frames=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
work=${TMPDIR:-/tmp}/mjpeg-e2e; mkdir -p "$work"
python3 "$here/make_y4m_clip.py" "$src" "$work/clip.y4m" --frames "$frames" || exit 1
cores=$(nproc)
table=()
for run in "cpu" "sok" "sok --pinned" "aok"; do
  name=${run// /_}
  out=$work/$name.avi
  args=(--mode $run --producers 6 --entropy-threads $((cores - 6)))
  "$mjpeg" encode "$work/clip.y4m" -o "$out" -y --stats "${args[@]}" 2>"$work/$name.log"
  rc=$?
  cat "$work/$name.log"
  fps=$(grep -o '[0-9.]* fps (' "$work/$name.log" | head -1 | tr -d '(')
  same="-"
  [[ $name != cpu ]] && { cmp -s "$out" "$work/cpu.avi" && same=identical || same=DIFFERENT; }
  table+=("$(printf '%-12s rc=%-3s %-14s vs cpu: %s' "$name" "$rc" "$fps" "$same")")
done
echo; echo "==== end-to-end, 1920x1080 q90 4:2:0, $frames frames, $cores cores"
printf '%s\n' "${table[@]}"
