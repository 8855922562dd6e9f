#!/usr/bin/env bash
# What one short process costs: `mjpeg --version`, and one picture encoded by `mjpeg encode`
# against libjpeg-turbo's `cjpeg` on the same PPM, each run RUNS times in turn; prints the median
# wall time of each and the ratio to cjpeg. Asserts no speed: exits 1 only when a run fails or
# the two JPEGs differ (they must be byte-identical).
#   tests/bench/startup_bench.sh MJPEG CJPEG PICTURE.ppm [RUNS (default 21)]
# A Kodak picture as PPM: ffmpeg -i kodim23.png kodim23.ppm
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 MJPEG CJPEG PICTURE.ppm [RUNS]" >&2; exit 2; }
mjpeg=$1 cjpeg=$2 picture=$3 runs=${4:-21}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# median_ms CMD...: runs CMD `runs` times (output discarded), prints the median in ms.
median_ms() {
  local t0 t1 times=()
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "startup_bench: failed: $*" >&2; exit 1; }
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) {printf "%.1f", $1 / 1000}'
}

version=$(median_ms "$mjpeg" --version)
encode=$(median_ms "$mjpeg" encode "$picture" -o "$work/m.jpg" -q 90 -y --quiet)
peer=$(median_ms "$cjpeg" -quality 90 -outfile "$work/c.jpg" "$picture")
cmp -s "$work/m.jpg" "$work/c.jpg" || { echo "startup_bench: mjpeg's JPEG differs from cjpeg's" >&2; exit 1; }
size=$(head -c 64 "$picture" | tr '\n' ' ' | awk '{print $2 "x" $3}')
echo "startup: median of $runs runs each, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-44s %8s ms\n' "mjpeg --version" "$version"
printf '%-44s %8s ms\n' "mjpeg encode $size PPM -q 90 (one picture)" "$encode"
printf '%-44s %8s ms\n' "cjpeg -quality 90, the same PPM" "$peer"
awk -v a="$encode" -v b="$peer" 'BEGIN {printf "mjpeg / cjpeg: %.2fx the wall time (identical bytes)\n", a / b}'
