#!/usr/bin/env bash
# Short clips on a GPU machine: the process wall time of `mjpeg encode` on 30 and 300 frames of
# 1920x1080 and 30 of 3840x2160 (env MJPEG_SHORT_CLIPS, default "1920x1080:30 1920x1080:300
# 3840x2160:30"; clips panning across the Kodak 4K mosaic, make_y4m_clip.py, in the page
# cache), by default, with --mode cpu and with --mode aok, three runs each, and the --stats
# lines that say which mode ran (the default: the cpu mode for little work, else a cpu start
# handing over to aok) and where the time before the first frame went.
# A benchmark: it prints figures (the cpu mode beside the others) and fails only when an
# encode fails or the modes' outputs differ.
#   tests/gpu/short_clips.sh MJPEG_BINARY K4K.ppm
# Env: MJPEG_PYTHON (a python3 with numpy), TMPDIR (the clips and outputs; default /tmp).
set -u
m=$1 pic=$2
here=$(cd "$(dirname "$0")" && pwd)
py=${MJPEG_PYTHON:-python3}
d=${TMPDIR:-/tmp}/mjpeg-short; mkdir -p "$d"
bad=0
for spec in ${MJPEG_SHORT_CLIPS:-1920x1080:30 1920x1080:300 3840x2160:30}; do
  size=${spec%:*} n=${spec#*:}
  clip=$d/c_${size}_$n.y4m
  "$py" "$here/make_y4m_clip.py" "$pic" "$clip" --size "$size" --frames "$n" || exit 1
  cat "$clip" >/dev/null
  for run in 1 2 3; do
    for mode in cpu default aok; do
      args=(); [[ $mode != default ]] && args=(--mode "$mode")
      s=$(date +%s%N)
      "$m" encode "$clip" -o "$d/o_$mode.avi" -y --stats "${args[@]}" 2>"$d/err_$mode.txt"
      rc=$?
      e=$(date +%s%N)
      [[ $rc == 0 ]] || bad=1
      printf '%s %4s frames  %-8s run %d: %6d ms wall rc=%d  %s\n' "$size" "$n" "$mode" "$run" \
        $(((e - s) / 1000000)) "$rc" "$(grep -oE '\(([a-z]+) mode[^)]*\)' "$d/err_$mode.txt" | head -1)"
      [[ $run == 1 ]] && grep -E "^mjpeg: (mode|set-up)" "$d/err_$mode.txt" | sed 's/^/    /'
    done
    if ! cmp -s "$d/o_cpu.avi" "$d/o_aok.avi" || ! cmp -s "$d/o_cpu.avi" "$d/o_default.avi"; then
      echo "    OUTPUTS DIFFER"
      bad=1
    fi
  done
  rm -f "$clip"
done
rm -rf "$d"
exit $bad
