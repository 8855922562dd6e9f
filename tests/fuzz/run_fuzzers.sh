#!/usr/bin/env bash
# Time-boxed libFuzzer run of every target in tests/fuzz (what CI runs).
#
#   run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]
#
# BUILD_DIR is a build configured with clang and -DMJPEG_FUZZ=ON (the targets are built
# there). Each target starts from its seed corpus tests/fuzz/corpus/<name>/ (read only: new
# inputs go to a scratch corpus) and runs for SECONDS (default 25). Prints one line per target
# (executions, corpus size, coverage); exits 1 when a target finds a crash, leak, sanitizer
# report or timeout, leaving the reproducer in BUILD_DIR/fuzz-findings/.
set -uo pipefail

build=${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS] [TARGET...]}
seconds=${2:-25}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
((${#targets[@]})) || targets=(y4m avi_roundtrip stored_frames cli jpeg)

findings=$build/fuzz-findings
mkdir -p "$findings"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  [[ -x $bin ]] || { echo "run_fuzzers: $bin not built" >&2; exit 2; }
  mkdir -p "$scratch/$t"
  log=$scratch/$t.log
  # -close_fd_mask=3: the targets' own stdout/stderr (help texts, error lines) are dropped;
  # libFuzzer and the sanitizers still report on a duplicate of stderr.
  "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -close_fd_mask=3 \
    -print_final_stats=1 -artifact_prefix="$findings/$t-" "$scratch/$t" "$here/corpus/$t" \
    >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  corpus=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$log" | tail -1)
  if ((rc != 0)); then
    failed=1
    echo "fuzz_$t: FINDING (exit $rc) after ${runs:-?} executions; reproducer in $findings/"
    grep -E 'ERROR|SUMMARY|fuzz_|runtime error' "$log" | head -20
  else
    echo "fuzz_$t: ${runs:-?} executions in ${seconds} s, $cov, $corpus, no findings"
  fi
done
exit $failed
