#!/usr/bin/env bash
# tests/gpu/check.sh without a GPU: it runs against stand-in executables (BIN_DIR's binaries,
# and nvidia-smi, compute-sanitizer, nvcc and lscpu first on PATH) that fail, succeed or write
# wrong output, and must say so: exit 1 and a FAIL line naming each failed check, exit 0 only
# when every check passed. (The part "big" makes 1 GB of random pictures and is left out.)
#   check_script_test.sh SOURCE_DIR WORK_DIR
set -uo pipefail
die() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found (e2e.sh reads its figures with it)" >&2; exit 77; }
src=$(cd "$1" && pwd) || die "no source dir $1"
work=$2
rm -rf "$work" && mkdir -p "$work" || die "cannot make $work"
work=$(cd "$work" && pwd)

# standins DIR: the stand-ins, all behaving as $STANDIN says at run time:
#   ok     every binary succeeds, outputs identical across modes
#   fail   every binary (and tool) fails
#   wrong  binaries succeed, but the aok mode's outputs differ, compute-sanitizer finds errors,
#          the kernel benchmark finds a difference, a GoogleTest run runs no test, the CPU
#          claims AVX-512 while its tests are skipped, and the default token format brings back
#          as many bytes as symbol slots
standins() {
  local bin=$1/bin tools=$1/tools
  mkdir -p "$bin" "$tools"
  # A GoogleTest binary.
  cat >"$bin/gtest" <<'EOF'
#!/usr/bin/env bash
case $STANDIN in
  fail) echo "[==========] 2 tests from 1 test suite ran. (1 ms total)"
        echo "[  PASSED  ] 1 test."; echo "[  FAILED  ] 1 test, listed below:"
        echo "[  FAILED  ] Stand.In"; exit 1 ;;
  wrong) if [[ $(basename "$0") == mjpeg_api_tests ]]; then  # a filter that matched nothing
           echo "[==========] 0 tests from 0 test suites ran. (0 ms total)"; echo "[  PASSED  ] 0 tests."
           exit 0
         fi ;;
esac
if [[ $(basename "$0") == mjpeg_tests ]]; then  # the CPU variants: AVX-512 skipped
  echo "[       OK ] Built/EachTransformVariant.EncodesMatchLibjpeg/avx2 (1 ms)"
  echo "[  SKIPPED ] Built/EachTransformVariant.EncodesMatchLibjpeg/avx512 (0 ms)"
  echo "[       OK ] Built/EachHuffmanVariant.MatchesTheReferenceCoder/bmi2 (1 ms)"
  echo "[  SKIPPED ] Built/EachHuffmanVariant.MatchesTheReferenceCoder/avx512 (0 ms)"
  echo "[==========] 4 tests from 2 test suites ran. (2 ms total)"
  echo "[  PASSED  ] 2 tests."; echo "[  SKIPPED ] 2 tests, listed below:"
  exit 0
fi
echo "[==========] 3 tests from 1 test suite ran. (1 ms total)"; echo "[  PASSED  ] 3 tests."
EOF
  chmod +x "$bin/gtest"
  local t
  for t in mjpeg_gpu_tests mjpeg_pipeline_tests mjpeg_api_tests mjpeg_tests; do cp "$bin/gtest" "$bin/$t"; done
  rm "$bin/gtest"
  cat >"$bin/mjpeg_bench_kernels" <<'EOF'
#!/usr/bin/env bash
[[ $STANDIN == fail ]] && { echo "mjpeg_bench_kernels: no usable CUDA device" >&2; exit 1; }
echo "device: stand-in" >&2
echo "size,input,variant,stages,ms,gbs,pct_copy,regs,smem,threads,blocks_per_sm,exact"
if [[ $STANDIN == wrong ]]; then
  echo "hd,rgb24,direct,1,0.1,1,1,1,1,1,1,NO"
  echo "mjpeg_bench_kernels: hd rgb24 direct stages 1 DIFFERS from transform_cpu" >&2
  exit 3
fi
echo "hd,rgb24,direct,1,0.1,1,1,1,1,1,1,yes"
EOF
  # mjpeg: compare, encode, bench, info.
  cat >"$bin/mjpeg" <<'EOF'
#!/usr/bin/env bash
[[ $STANDIN == fail ]] && { echo "mjpeg: error: stand-in failure" >&2; exit 1; }
cmd=$1; shift
out= json= mode=aok modes= input= csv= frames=3 devices=
while (($#)); do
  case $1 in
    -o) out=$2; shift ;;
    --json) json=$2; shift ;;
    --csv) csv=$2; shift ;;
    --mode) mode=$2; shift ;;
    --devices) devices=$2; shift ;;
    --modes) mode=${2%%,*} modes=$2; shift ;;
    -) input=- ;;
    -*) [[ $# -gt 1 && $2 != -* ]] && shift ;;
    *) input=$1 ;;
  esac
  shift
done
case $cmd in
  info) echo "CUDA devices: 1"; echo "  [0] Stand-in, 80.0 GiB, compute capability 9.0, 132 SMs: usable" ;;
  compare)
    # One entry per mode; the bytes down: coded blocks (the default) 1.2 times the JPEG's,
    # symbol slots 2.9 times.
    down=120; [[ ${MJPEG_TOKEN_FORMAT:-} == slots || $STANDIN == wrong ]] && down=290
    entries=()
    modes=${modes:-$mode}
    for m in ${modes//,/ }; do
      entries+=("$(printf '{"mode": "%s", "fps": 100.0, "bound": {"stage": "entropy"}, "producers": 1, "entropy_threads": 2, "upload_bytes_per_frame": 6, "jpeg_bytes": 100, "gpu": {"download_bytes": %d}}' "$m" "$down")")
    done
    [[ -n $json ]] && (IFS=,; printf '{"modes": [%s]}\n' "${entries[*]}") >"$json"
    printf 'mode fps\n%s 100.0\n\noutputs: identical\n' "$(tr a-z A-Z <<<"$mode")" ;;
  encode)
    # The bytes: the input's; when the outputs should be wrong, the aok mode's differ (but on
    # --devices 0 alone).
    { cat "$input" 2>/dev/null; [[ $STANDIN == wrong && $mode == aok && $devices != 0 ]] && echo x; } >"$out"
    echo "mjpeg: wrote $out: $frames frames, 100.0 fps ($mode mode), 0.1 MB, 1.00 bits/pixel, 0.03 s" >&2
    echo "mjpeg: stages over 0.030 s wall (busy s, cores, us per frame):" >&2
    echo "  setup (allocation)                  0.001   0.03      333.3" >&2
    echo "mjpeg: 1 producer + 2 entropy threads; bound by entropy (200.0 fps alone); 6 bytes uploaded per frame" >&2 ;;
  bench) echo "sweep,mode,w,h,fps,identical" >"$csv"; echo "threads,aok,1,1,1,yes" >>"$csv" ;;
esac
exit 0
EOF
  chmod +x "$bin"/*
  # Tools on PATH.
  cat >"$tools/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
[[ $STANDIN == fail ]] && exit 9
[[ $1 == -L ]] && { echo "GPU 0: Stand-in (UUID: GPU-0)"; exit 0; }
echo "name, driver_version"; echo "Stand-in, 1.0"
EOF
  cat >"$tools/compute-sanitizer" <<'EOF'
#!/usr/bin/env bash
# compute-sanitizer --tool T --error-exitcode N BINARY ARGS...: runs BINARY; "wrong": 2 errors.
code=1
while [[ $1 == --* ]]; do [[ $1 == --error-exitcode ]] && code=$2; shift 2; done
"$@"; rc=$?
if [[ $STANDIN == wrong ]]; then echo "========= Invalid __global__ read"; echo "========= ERROR SUMMARY: 2 errors"; exit "$code"; fi
echo "========= ERROR SUMMARY: 0 errors"
exit $rc
EOF
  cat >"$tools/nvcc" <<'EOF'
#!/usr/bin/env bash
[[ $STANDIN == fail ]] && { echo "nvcc: stand-in failure" >&2; exit 1; }
while (($#)); do [[ $1 == -o ]] && out=$2; shift; done
printf '#!/usr/bin/env bash\necho "stand-in probe $*"\n' >"$out"; chmod +x "$out"
EOF
  cat >"$tools/lscpu" <<'EOF'
#!/usr/bin/env bash
echo "Model name: Stand-in CPU"
if [[ $STANDIN == ok ]]; then echo "Flags: fpu sse2 avx avx2 bmi1 bmi2"
else echo "Flags: fpu sse2 avx avx2 bmi1 bmi2 abm popcnt avx512f avx512bw avx512cd avx512vl avx512dq avx512vbmi avx512_vbmi2"; fi
EOF
  chmod +x "$tools"/*
}

# run_check BEHAVIOUR PARTS: check.sh on the stand-ins; its output in $work/BEHAVIOUR.out, its
# exit status in $RC.
run_check() {
  local dir=$work/$1
  standins "$dir"
  mkdir -p "$dir/tmp"
  # The clips the parts would make with numpy: already there (e2e.sh and devices skip making
  # them), tiny.
  printf 'YUV4MPEG2 W16 H16 F25:1 C420jpeg\nFRAME\n%0384d' 0 >"$dir/tmp/mjpeg-devices-1080p.y4m"
  mkdir -p "$dir/tmp/mjpeg-e2e"
  cp "$dir/tmp/mjpeg-devices-1080p.y4m" "$dir/tmp/mjpeg-e2e/clip_1920x1080.y4m"
  STANDIN=$1 PATH="$dir/tools:$PATH" TMPDIR=$dir/tmp LOG_DIR=$dir/logs MJPEG_CHECK_PARTS=$2 \
    MJPEG_E2E_SWEEP=0 MJPEG_E2E_SIZES=1920x1080 MJPEG_E2E_MODES="cpu aok" MJPEG_BENCH_PICTURE=$dir/tmp/mjpeg-devices-1080p.y4m \
    timeout 300 bash "$src/tests/gpu/check.sh" "$dir/bin" >"$work/$1.out" 2>&1
  RC=$?
  echo "---- $1 ($2): exit $RC"
  sed -n '/^==== summary/,$p' "$work/$1.out"
}

# Every check fails: exit 1, no "ok" line, and the verdict names as many checks as failed.
run_check fail tests,slots,devices,sanitize,pipeline-memcheck,kernels,entropy,compare,cpu,bench,e2e,register,upload
[[ $RC == 1 ]] || die "check.sh exited $RC with every stand-in failing"
summary=$(sed -n '/^==== summary/,/^==== check.sh/p' "$work/fail.out")
grep -q '^ok ' <<<"$summary" && die "a check passed although everything failed: $(grep '^ok ' <<<"$summary")"
fails=$(grep -c '^FAIL ' <<<"$summary")
grep -q "^==== check.sh: $fails of $fails checks FAILED:" "$work/fail.out" ||
  die "the verdict does not count the $fails failed checks: $(tail -3 "$work/fail.out")"
[[ $(sed -n '/checks FAILED:$/,$p' "$work/fail.out" | grep -c '^  ') == "$fails" ]] ||
  die "the verdict does not name every failed check"
for what in "gpu tests" "pipeline gpu tests" "library (VideoEncoder) gpu tests" "GPU modes (tests/cli" \
    "multi-device pipeline tests" "mjpeg compare 1920x1080 --devices" "compute-sanitizer memcheck" \
    "compute-sanitizer synccheck (direct)" "kernel benchmark" "mjpeg compare 1920x1080, cpu sok" \
    "mjpeg compare --modes cpu" "CPU variants" "mjpeg bench sweeps" "end to end" "register probe" "upload probe" \
    "symbol slots: pipeline" "symbol slots: mjpeg encode" "symbol slots: mjpeg compare 1920x1080" \
    "token formats: bytes down" "symbol slots: end to end"; do
  grep -q "^FAIL  .*$what" <<<"$summary" || die "no FAIL line for '$what'"
done

# Everything works: exit 0, every check ok. (Part "tests" runs the CLI's GPU cases, which no
# stand-in can pass; "register" would write a 4 GB file.)
run_check ok slots,devices,sanitize,pipeline-memcheck,kernels,entropy,compare,cpu,bench,e2e,upload
[[ $RC == 0 ]] || die "check.sh exited $RC with every stand-in working: $(grep '^FAIL' "$work/ok.out")"
grep -q '^FAIL ' "$work/ok.out" && die "a FAIL line although everything worked"
grep -q '^==== check.sh: all [0-9]* checks passed$' "$work/ok.out" || die "no verdict: $(tail -3 "$work/ok.out")"
grep -q '^skip  entropy benchmark' "$work/ok.out" || die "the missing entropy benchmark is not said"

# Wrong output from working binaries: each shows as the FAIL of its own check, the others pass.
run_check wrong devices,sanitize,kernels,cpu,e2e,tests,slots
[[ $RC == 1 ]] || die "check.sh exited $RC with wrong outputs"
for what in "mjpeg encode 1080p Y4M per device list (AVIs identical): differs" \
    "compute-sanitizer memcheck (small frames): rc=3; ERROR SUMMARY: 2 errors" \
    "kernel benchmark (every configuration's output = the CPU transform's): rc=3" \
    "CPU variants vs their references: AVX-512 skipped; transform avx512: this CPU has its instructions, but 0 of its tests ran and 1 were skipped" \
    "end to end encode vs compare (e2e.sh: every output = the cpu mode's): rc=1" \
    "library (VideoEncoder) gpu tests: no test ran" \
    "symbol slots: mjpeg encode, aok and sok = cpu (5 settings): differs" \
    "token formats: bytes down per frame (aok 1920x1080): coded blocks not handed back by default; FAIL D2H per frame 2.90 x the JPEG by default (coded blocks), 2.90 x with symbol slots"; do
  grep -qF "FAIL  $what" "$work/wrong.out" || die "no FAIL line '$what'"
done
grep -q '^ok    gpu tests (kernels, tokenizer)' "$work/wrong.out" || die "a passing check is not ok"
grep -q 'DIFFERENT' "$work/wrong/logs/e2e.txt" || die "e2e.sh's table does not say DIFFERENT"
echo "PASS: check.sh fails on every failure and passes only when everything passed"
