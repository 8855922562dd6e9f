#!/usr/bin/env bash
# Figures of a split encode (`encode --part`, `mjpeg join`), each with its peer as a ratio;
# nothing here passes or fails on speed (only on wrong bytes).
#
#   split_join_bench.sh MJPEG MEDIA_DIR [WORK_DIR]
#
#  1. join: the parts of a large AVI (MJPEG_BENCH_JOIN_MB, default 1200: past 1 GiB, so the
#     joined file has OpenDML segments) joined by `mjpeg join`, against `cat` of the same
#     parts' bytes into one file; both from the page cache, each the best of 3 runs. The join
#     must equal the one-pass AVI.
#  2. decode work: K parts (MJPEG_BENCH_KS, default "2 4 8") of a compressed clip
#     (MJPEG_BENCH_CLIP, default the VP8 clip of the media, 1691 frames) against one pass:
#     frames decoded (from --json) and CPU seconds, summed over the parts.
#  3. an 8-task Slurm array and its join against one process, on this machine
#     (tests/slurm/slurm_test.sh with K = 8; needs root and Slurm, else skipped with the reason).
# MJPEG_BENCH_SMOKE=1: small sizes, as the CTest smoke run uses. MJPEG_BENCH_PARTS="1 2 3"
# (default) picks the parts to run.
set -uo pipefail

die() { echo "split_join_bench: $*" >&2; exit 1; }
[[ $# -ge 2 ]] || { echo "usage: $0 MJPEG MEDIA_DIR [WORK_DIR]" >&2; exit 2; }
MJPEG=$(realpath "$1")
MEDIA=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
smoke=${MJPEG_BENCH_SMOKE:-0}
join_mb=${MJPEG_BENCH_JOIN_MB:-$([[ $smoke == 1 ]] && echo 12 || echo 1200)}
ks=${MJPEG_BENCH_KS:-$([[ $smoke == 1 ]] && echo 2 || echo "2 4 8")}
clip=${MJPEG_BENCH_CLIP:-$MEDIA/video/tears-of-steel-battle-clip-medium.webm}
[[ -f $clip ]] || die "clip $clip not found"
command -v ffmpeg >/dev/null || die "ffmpeg not found"
work=${3:-$(mktemp -d)}
mkdir -p "$work" && cd "$work" || die "cannot use $work"
[[ -z ${3:-} ]] && trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# cpu_of COMMAND...: runs it (output dropped), prints its user + system CPU seconds; fails
# when it fails.
cpu_of() {
  python3 -c '
import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f" % (r.ru_utime + r.ru_stime))
sys.exit(rc)' "$@"
}
frames_decoded() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['frames_decoded'])" "$1"; }

run_part() { [[ " ${MJPEG_BENCH_PARTS:-1 2 3} " == *" $1 "* ]]; }

if run_part 1; then
echo "== 1. join against cat (${join_mb} MB of q100 1080p frames, 4 parts)"
# Noise in every channel at q100 and 4:4:4 hardly compresses: about 5 MB per 1920x1080 frame.
frames=$(( (join_mb + 4) / 5 < 8 ? 8 : (join_mb + 4) / 5 ))
ffmpeg -v error -f lavfi \
  -i "nullsrc=s=1920x1080:r=25,geq=lum='random(1)*255':cb='random(2)*255':cr='random(3)*255'" \
  -frames:v "$frames" -pix_fmt yuv444p -f yuv4mpegpipe -y noise.y4m || die "ffmpeg failed"
"$MJPEG" encode noise.y4m -o one.avi -q 100 -s 444 --mode cpu --quiet -y || die "one pass failed"
for i in 1 2 3 4; do
  "$MJPEG" encode noise.y4m --part "$i/4" -o "part$i.avi" -q 100 -s 444 --mode cpu --quiet -y ||
    die "part $i failed"
done
rm -f noise.y4m
bytes=$(cat part?.avi | wc -c)
best_join=999999 best_cat=999999
for run in 1 2 3; do
  cat part?.avi >/dev/null  # into the page cache
  t=$(now); "$MJPEG" join part4.avi part2.avi part1.avi part3.avi -o joined.avi -y --quiet ||
    die "join failed"; sync -f joined.avi 2>/dev/null; j=$(since "$t")
  t=$(now); cat part1.avi part2.avi part3.avi part4.avi >cat.bin; sync -f cat.bin 2>/dev/null; c=$(since "$t")
  best_join=$(awk -v a="$j" -v b="$best_join" 'BEGIN { print (a < b ? a : b) }')
  best_cat=$(awk -v a="$c" -v b="$best_cat" 'BEGIN { print (a < b ? a : b) }')
  rm -f cat.bin
done
cmp -s joined.avi one.avi || die "joined.avi differs from the one-pass AVI"
segments=$(grep -c -a -o 'AVIX' joined.avi)
printf 'join: %.2f GB/s (%.3f s), cat: %.2f GB/s (%.3f s), join/cat speed %.2f; %d MB in %d frames, %d OpenDML segments; joined == one pass\n' \
  "$(awk -v b="$bytes" -v s="$best_join" 'BEGIN { print b / s / 1e9 }')" "$best_join" \
  "$(awk -v b="$bytes" -v s="$best_cat" 'BEGIN { print b / s / 1e9 }')" "$best_cat" \
  "$(ratio "$best_cat" "$best_join")" $((bytes / 1000000)) "$frames" $((segments + 1))
rm -f part?.avi joined.avi one.avi
fi

if run_part 2; then
echo "== 2. decode work of K parts against one pass ($(basename "$clip"))"
total=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$clip")
[[ $smoke == 1 ]] && total=$((total < 120 ? total : 120))
limit=()
[[ $smoke == 1 ]] && limit=(--frames "$total")
one_cpu=$(cpu_of "$MJPEG" encode "$clip" "${limit[@]}" -o one.mjpeg --mode cpu --quiet -y --json one.json) ||
  die "one pass failed"
one_dec=$(frames_decoded one.json)
printf '%-3s %-16s %-10s %-10s %s\n' K "frames decoded" "x 1 pass" "CPU s" "x 1 pass (CPU)"
printf '%-3s %-16s %-10s %-10s %s\n' 1 "$one_dec" 1.00 "$one_cpu" 1.00
for k in $ks; do
  dec=0 cpu=0 parts=()
  for ((i = 1; i <= k; i++)); do
    c=$(cpu_of "$MJPEG" encode "$clip" "${limit[@]}" --part "$i/$k" -o "p$i.mjpeg" --mode cpu --quiet -y \
      --json "p$i.json") || die "part $i/$k failed"
    cpu=$(awk -v a="$cpu" -v b="$c" 'BEGIN { print a + b }')
    dec=$((dec + $(frames_decoded "p$i.json")))
    parts+=("p$i.mjpeg")
  done
  "$MJPEG" join "${parts[@]}" -o joined.mjpeg -y --quiet || die "join of $k parts failed"
  cmp -s joined.mjpeg one.mjpeg || die "$k parts joined differ from one pass"
  printf '%-3s %-16s %-10s %-10s %s   (decoding and dropping the frames before each range: %s passes)\n' \
    "$k" "$dec" "$(ratio "$dec" "$one_dec")" "$cpu" "$(ratio "$cpu" "$one_cpu")" \
    "$(awk -v k="$k" 'BEGIN { printf "%.2f", (k + 1) / 2 }')"
  rm -f p*.mjpeg p*.json joined.mjpeg
done
fi

run_part 3 || exit 0
echo "== 3. an 8-task Slurm array and its join against one process"
if [[ $smoke == 1 ]]; then
  echo "skipped in the smoke run"
else
  MJPEG_SLURM_CLIP=$clip MJPEG_SLURM_BASELINE=1 \
    bash "$here/../slurm/slurm_test.sh" "$MJPEG" "$here/../.." "$MEDIA" 8 2>&1 |
    grep -E '^(wall time|ok|SKIP|FAIL)'
fi
