#!/usr/bin/env bash
# GPU check, on a machine with a CUDA GPU:
#   tests/gpu/check.sh [BIN_DIR]
# BIN_DIR (or env MJPEG_GPU_BIN) holds prebuilt mjpeg, mjpeg_gpu_tests, mjpeg_bench_kernels,
# mjpeg_pipeline_tests, mjpeg_api_tests (their GPU suites are Gpu* and */Gpu*) and mjpeg_tests
# (the CPU variants; e.g. a static build copied to .gpu/); without it the script configures
# and builds build-gpu-check/.
# Parts (env MJPEG_CHECK_PARTS, a comma list; default all, in this order):
#   tests     GPU tests (kernels, the sok/aok pipeline, the library's VideoEncoder) with
#             MJPEG_REQUIRE_GPU=1, and the CLI in the GPU modes (tests/cli/cases_gpu.sh: each
#             mode's bytes = the cpu mode's, the frames uploaded; a skip fails)
#   slots     symbol slots, the other token format (MJPEG_TOKEN_FORMAT=slots; the default is
#             coded blocks, whose GpuTokenize kernel tests run in part `tests`): the sok/aok
#             pipeline GPU tests with symbol slots; `mjpeg encode` of the picture in aok and sok
#             against the cpu mode's bytes (4:2:0, 4:2:2 -r 7, 4:4:4 q100, gray -r 1, q10's
#             16-bit tables); `mjpeg compare` at 1920x1080 and 3840x2160 (cpu, sok, aok
#             identical; nvJPEG's row beside them); the bytes down per frame of the default
#             (coded blocks: at most 1.5 times the JPEG's) against symbol slots'; tests/gpu/e2e.sh's
#             encodes (cpu, aok) with symbol slots
#   nvdec     NVDEC input: the GpuNvdec tests (every clip of MJPEG_NVDEC_CLIPS, default
#             BIN_DIR/nvdec, made by tests/gpu/make_nvdec_clips.sh, encodes to the same AVI
#             decoded by NVDEC as by libavcodec), then, where its bench clips are there,
#             tests/gpu/e2e_nvdec.sh (decode-only and encode rates against compare)
#   sanitize  compute-sanitizer memcheck, racecheck and initcheck over the kernel tests in
#             small-frame mode; synccheck over the kernels without a block-scoped pipeline
#             (direct, primitives) plus one try of the block-scoped ones (synccheck reports
#             "Missing wait" at producer_commit on every block-scoped pipeline: a tool limit)
#   pipeline-memcheck  compute-sanitizer memcheck over the sok/aok pipeline tests (streams,
#             events, traces), without the test whose cudaMalloc fails on purpose (memcheck
#             reports every failing API call as an error)
#   kernels   the kernel benchmark (CSV): rgb24 and planar yuv420p input; every configuration's
#             output compared with the CPU transform's
#   entropy   mjpeg_bench_entropy (the CPU coders against libjpeg-turbo's Huffman coding on this
#             machine's CPU), when BIN_DIR has it (a shared libbenchmark may sit in BIN_DIR/lib)
#   compare   `mjpeg compare` on 1920x1080 frames cut from the Kodak mosaic (env
#             MJPEG_BENCH_PICTURE, default BIN_DIR/k4k.ppm): cpu, sok, sok-pinned, aok and
#             libjpeg-turbo, with compare's nvJPEG row (4 threads); JSON, Chrome trace; then
#             AOK beside nvJPEG with 16 threads; then AOK with
#             the coefficients coming back instead of tokens, --optimize, --tune psnr with
#             --optimize and with --progressive (cpu, sok, aok byte-identical), and the D2H
#             bytes per frame of the token output at qualities 50, 75, 90 and 100
#   cpu       the CPU mode against libjpeg-turbo on every core: `mjpeg compare --modes cpu` at
#             1920x1080 and 3840x2160 (the same picture), and (mjpeg_tests) the CPU transform's
#             variants (AVX-512, AVX2, SSE2) against the scalar reference and the Huffman
#             coder's and the token coder's (AVX-512, AVX2) against the reference coder and
#             libjpeg's scan on this CPU (env
#             MJPEG_MEDIA_DIR for the Kodak images); AVX-512's tests skipped on a CPU whose
#             lscpu flags have its instructions fail
#   bench     `mjpeg bench` sweeps on the same picture (CSV; plots are drawn elsewhere with
#             `mjpeg bench --from bench.csv --plots DIR`)
#   devices   several stream buffers: the multi-device pipeline GPU tests (env
#             MJPEG_TEST_DEVICES, default 0,0 = two stream buffers on device 0; 0,1 on a machine
#             with two GPUs), then at 1920x1080 `mjpeg compare --modes sok,aok` with --devices 0
#             and with the list (env MJPEG_CHECK_DEVICES, default 0,0 and, with two GPUs, also
#             0,1; compare then shows each GPU mode per device count) and `mjpeg encode` of a
#             1080p Y4M clip (MJPEG_PYTHON with numpy) with each list; fps per device count
#   e2e       tests/gpu/e2e.sh: `mjpeg encode` of Y4M clips (file in the page cache, stdin) against
#             `mjpeg compare` on the same frames, 1920x1080 and 3840x2160, every mode, with the
#             self-balancing split and (MJPEG_E2E_SWEEP, default 1 here) fixed aok splits
#   register  tests/gpu/register_probe.cu (built with nvcc): page-locking a page-cached 4 GB
#             file with cudaHostRegister from 1..8 threads, against pread into pinned buffers,
#             idle and beside 12 copying threads (why the GPU modes read Y4M files with pread)
#   upload    tests/gpu/upload_probe.cu (built with nvcc): page-locked frames copied to the GPU
#             one stream as AOK does, round-robin on 2 or 3 streams, halves on 2 streams, and
#             beside downloads, at 1920x1080 and 3840x2160 RGB (the ceiling of compare's RGB rows)
#   big       pictures over 16384 pixels wide or high (20000x3000, 65500x64, 64x65500; random
#             pixels, 4:2:0 and 4:4:4) as one-frame AVIs in sok and aok: byte-identical to cpu
#             mode; a frame too big for device memory refused with one clear line with --mode
#             aok, and encoded on the CPU with a notice without --mode (the cpu mode's bytes)
# Every check of a part turns red on any failure: a non-zero exit status (a test, a sanitizer
# error, a crash, a compare that finds the modes' outputs differ, a time-out), a GoogleTest run
# in which no test ran, outputs that differ where they must be identical, a binary the part
# needs that is missing, the AVX-512 variants' tests skipped on a CPU that has the
# instructions. Benchmarks fail only that way (a crash, an error, wrong bytes), never on a
# speed. The tables of the parts that ran come first, then the summary, one line per check
# (ok / FAIL / skip, with what it ran), and last the verdict naming every failed check; the
# exit status is 1 when any check failed (2: usage).
# Logs go to $LOG_DIR (default: $OUT or ./gpu-check-logs).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-${MJPEG_GPU_BIN:-}}
logs=${LOG_DIR:-${OUT:-$here/gpu-check-logs}}
mkdir -p "$logs"
if [[ -z "$bin" ]]; then
  bin=$here/build-gpu-check
  cmake -S "$here" -B "$bin" -DMJPEG_WITH_OPENCV=OFF -DMJPEG_BUILD_BENCH=OFF >"$logs/build.log" 2>&1 &&
    cmake --build "$bin" -j"$(nproc)" --target mjpeg mjpeg_gpu_tests mjpeg_bench_kernels mjpeg_pipeline_tests mjpeg_api_tests mjpeg_tests >>"$logs/build.log" 2>&1 ||
    { echo "build failed (see $logs/build.log)"; tail -30 "$logs/build.log"; exit 1; }
fi
tests=$bin/mjpeg_gpu_tests
bench=$bin/mjpeg_bench_kernels
all_parts=tests,slots,nvdec,devices,sanitize,pipeline-memcheck,kernels,entropy,compare,cpu,bench,e2e,register,upload,big
parts=",${MJPEG_CHECK_PARTS:-$all_parts},"
want() { [[ $parts == *",$1,"* ]]; }
for p in ${parts//,/ }; do
  [[ ,$all_parts, == *",$p,"* ]] || { echo "check.sh: unknown part '$p' (parts: $all_parts)" >&2; exit 2; }
done
picture=${MJPEG_BENCH_PICTURE:-$bin/k4k.ppm}

# The summary: one line per check. result NAME RC [DETAILS]: RC 0 passes; anything else (a
# number or a word) fails the check, which the verdict then names.
summary=()
failed=()
result() {
  local name=$1 rc=$2 line
  shift 2
  if [[ $rc == 0 ]]; then
    line="ok    $name${*:+: $*}"
  else
    if [[ $rc =~ ^[0-9]+$ ]]; then line="FAIL  $name: rc=$rc${*:+; $*}"; else line="FAIL  $name: $rc${*:+; $*}"; fi
    failed+=("$name")
  fi
  summary+=("$line")
  echo "== $line"
}
skipped() { summary+=("skip  $1: $2"); echo "== skip  $1: $2"; }
# need FILE CHECK: FILE is there and executable, else CHECK fails (it cannot run).
need() {
  [[ -x $1 ]] && return 0
  result "$2" missing "$1 is not there"
  return 1
}
# gtest_result CHECK RC LOG [NOTE]: a GoogleTest run: its exit status, and at least one test ran
# (a filter that matches nothing passes vacuously otherwise).
gtest_result() {
  local name=$1 rc=$2 log=$3 note=${4:-} ran passed skipped failures
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$log" | tail -1)
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$log" | tail -1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}.*/\1/p' "$log" | tail -1)
  failures=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below.*/\1/p' "$log" | tail -1)
  [[ $rc == 0 && ${ran:-0} -eq 0 ]] && rc="no test ran"
  local counts="${note:+$note; }${ran:-0} ran, ${passed:-0} passed, ${skipped:-0} skipped, ${failures:-0} failed"
  if [[ $rc == 0 ]]; then
    result "$name" 0 "$counts"
  else
    local first
    first=$(grep -m1 '^\[  FAILED  \] [A-Za-z]' "$log" | sed 's/^\[  FAILED  \] //; s/, where GetParam.*//')
    result "$name" "$rc" "$counts${first:+, first: $first}; log $log"
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$logs/gpu.txt" 2>&1
lscpu | grep -E "^(Model name|Thread|Core|Socket|CPU\(s\)|Flags)" | cut -c1-200 >>"$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"


export MJPEG_REQUIRE_GPU=1
# The NVDEC tests' clips (make_nvdec_clips.sh) and the CLI they run.
export MJPEG_NVDEC_CLIPS=${MJPEG_NVDEC_CLIPS:-$bin/nvdec} MJPEG_CLI=$bin/mjpeg
if want tests; then
  if need "$tests" "gpu tests (kernels, tokenizer)"; then
    timeout 420 "$tests" --gtest_brief=1 >"$logs/tests.log" 2>&1
    gtest_result "gpu tests (kernels, tokenizer)" $? "$logs/tests.log"
  fi
  # The streaming pipeline in sok, sok --pinned and aok: every frame byte-identical to the CPU,
  # and transformed by the GPU (bytes up and down, frames per stream buffer, token frames).
  if need "$bin/mjpeg_pipeline_tests" "pipeline gpu tests, sok/aok"; then
    timeout 240 "$bin/mjpeg_pipeline_tests" --gtest_brief=1 --gtest_filter='Gpu*:*/Gpu*-*Devices*' \
      >"$logs/pipeline_tests.log" 2>&1
    gtest_result "pipeline gpu tests, sok/aok" $? "$logs/pipeline_tests.log"
  fi
  # The public VideoEncoder in sok, sok-pinned and aok: the same bytes as encode_jpeg, and the
  # GPU's own measurements (uploads, downloads, kernel spans in the profile).
  if need "$bin/mjpeg_api_tests" "library (VideoEncoder) gpu tests"; then
    timeout 240 "$bin/mjpeg_api_tests" --gtest_brief=1 --gtest_filter='Gpu*:*/Gpu*' \
      >"$logs/api_tests.log" 2>&1
    gtest_result "library (VideoEncoder) gpu tests" $? "$logs/api_tests.log"
  fi
  # The CLI in the GPU modes (tests/cli/cases_gpu.sh): sok, sok-pinned (and --pinned), aok, the default
  # write the cpu mode's bytes with the frames uploaded; two stream buffers. A skip fails here.
  if need "$bin/mjpeg" "mjpeg encode in the GPU modes (tests/cli/cases_gpu.sh)"; then
    cli_rc=0 cli_ran=()
    for c in $(sed -n 's/^case_\([a-z0-9_]*\)() {$/\1/p' "$here/tests/cli/cases_gpu.sh"); do
      timeout 300 bash "$here/tests/cli/cli_test.sh" "$c" "$bin/mjpeg" "$here" "$logs/cli" \
        "$(command -v cjpeg)" >"$logs/cli_$c.log" 2>&1
      rc=$?
      cli_ran+=("$c rc=$rc")
      [[ $rc == 0 ]] || { cli_rc=$rc; tail -3 "$logs/cli_$c.log"; }
    done
    ((${#cli_ran[@]})) || cli_rc="no case found"
    result "mjpeg encode in the GPU modes (tests/cli/cases_gpu.sh)" "$cli_rc" "${cli_ran[*]}"
  fi
fi

# Symbol slots (MJPEG_TOKEN_FORMAT=slots), the token format that is not the default: every way
# they reach a file against the cpu mode's bytes, and the bytes down against the default's.
if want slots; then
  if need "$bin/mjpeg_pipeline_tests" "symbol slots: pipeline gpu tests, sok/aok"; then
    MJPEG_TOKEN_FORMAT=slots timeout 240 "$bin/mjpeg_pipeline_tests" --gtest_brief=1 \
      --gtest_filter='Gpu*:*/Gpu*-*Devices*' >"$logs/slots_pipeline_tests.log" 2>&1
    gtest_result "symbol slots: pipeline gpu tests, sok/aok" $? "$logs/slots_pipeline_tests.log"
  fi
  if need "$bin/mjpeg" "symbol slots: mjpeg encode, aok and sok = cpu"; then
    enc_rc=0 enc_what=()
    : >"$logs/slots_encode.log"
    for settings in "-s 420 -q 90" "-s 422 -q 75 -r 7" "-s 444 -q 100" "-s gray -q 50 -r 1" "-s 420 -q 10 -r 3"; do
      f=$(tr -d ' -' <<<"$settings")
      if ! "$bin/mjpeg" encode "$picture" -o "$logs/slots_cpu_$f.avi" -y --quiet --mode cpu $settings \
          2>>"$logs/slots_encode.log"; then
        enc_rc=failed enc_what+=("cpu $settings failed")
        continue
      fi
      for m in aok sok; do
        if ! MJPEG_TOKEN_FORMAT=slots "$bin/mjpeg" encode "$picture" -o "$logs/slots_${m}_$f.avi" -y --quiet \
            --mode $m $settings 2>>"$logs/slots_encode.log"; then
          enc_rc=failed enc_what+=("$m $settings failed")
        elif ! cmp -s "$logs/slots_cpu_$f.avi" "$logs/slots_${m}_$f.avi"; then
          enc_rc=differs enc_what+=("$m $settings DIFFERS from cpu")
        fi
      done
    done
    rm -f "$logs"/slots_*.avi
    result "symbol slots: mjpeg encode, aok and sok = cpu (5 settings)" "$enc_rc" "$(IFS=';'; echo "${enc_what[*]}")"
  fi
  if need "$bin/mjpeg" "symbol slots: mjpeg compare"; then
    for size in 1920x1080 3840x2160; do
      n=300; [[ $size == 3840x2160 ]] && n=120
      MJPEG_TOKEN_FORMAT=slots timeout 300 "$bin/mjpeg" compare "$picture" --size $size --frames $n \
        --repeat 3 --modes cpu,sok,aok --json "$logs/compare_slots_$size.json" \
        >"$logs/compare_slots_$size.txt" 2>"$logs/compare_slots_$size.err"
      result "symbol slots: mjpeg compare $size, cpu sok aok (identical)" $? "table below"
    done
    # The bytes down per frame, the default (coded blocks) against symbol slots on the same
    # frames: coded blocks are about 1.2 times the JPEG's bytes at q90, symbol slots 2.9 times.
    timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 --modes aok \
      --json "$logs/compare_default_1920x1080.json" >"$logs/compare_default_1920x1080.txt" 2>&1
    rc=$?
    d2h=$("${MJPEG_PYTHON:-python3}" - "$logs/compare_default_1920x1080.json" "$logs/compare_slots_1920x1080.json" <<'PY'
import json, sys
def ratio(path):
    try:
        m = [m for m in json.load(open(path))["modes"] if m["mode"] == "aok"][0]
        return m["gpu"]["download_bytes"] / m["jpeg_bytes"]
    except (OSError, ValueError, KeyError, IndexError, ZeroDivisionError):
        return None
coded, slots = ratio(sys.argv[1]), ratio(sys.argv[2])
if coded is None or slots is None:
    print("no figures")
else:
    ok = coded <= 1.5 and coded < slots
    print(("ok" if ok else "FAIL"), f"D2H per frame {coded:.2f} x the JPEG by default (coded blocks), {slots:.2f} x with symbol slots")
PY
)
    echo "$d2h" >"$logs/slots_d2h.txt"
    [[ $rc == 0 && $d2h != ok* ]] && rc="coded blocks not handed back by default"
    result "token formats: bytes down per frame (aok 1920x1080)" "$rc" "${d2h#ok }"
  fi
  if need "$bin/mjpeg" "symbol slots: end to end encode vs compare (e2e.sh cpu aok)"; then
    MJPEG_TOKEN_FORMAT=slots MJPEG_E2E_SWEEP=0 MJPEG_E2E_MODES="cpu aok" timeout 400 \
      bash "$here/tests/gpu/e2e.sh" "$bin/mjpeg" "$picture" 300 >"$logs/e2e_slots.txt" 2>"$logs/e2e_slots.err"
    result "symbol slots: end to end encode vs compare (e2e.sh: aok = the cpu mode's)" $? \
      "$(grep -m1 '^e2e: ' "$logs/e2e_slots.txt")"
  fi
fi

# NVDEC: every test clip decoded on the GPU gives the AVI the CPU's libavcodec gives
# (tests/gpu/test_nvdec.cpp); then, where the bench clips are there, e2e_nvdec.sh's rows.
if want nvdec; then
  if need "$tests" "NVDEC tests"; then
    timeout 400 "$tests" --gtest_brief=1 --gtest_filter='GpuNvdec*:*/GpuNvdec*' \
      >"$logs/nvdec_tests.log" 2>&1
    gtest_result "NVDEC tests (--decoder gpu == cpu on every clip of $MJPEG_NVDEC_CLIPS)" $? \
      "$logs/nvdec_tests.log"
  fi
  if [[ -f $MJPEG_NVDEC_CLIPS/h264_1080p.mp4 ]]; then
    timeout 400 bash "$here/tests/gpu/e2e_nvdec.sh" "$bin/mjpeg" "$MJPEG_NVDEC_CLIPS" \
      >"$logs/e2e_nvdec.txt" 2>&1
    result "compressed video end to end (NVDEC / libavcodec, encode, compare)" $? "table below"
  else
    skipped "compressed video end to end" "no bench clips in $MJPEG_NVDEC_CLIPS (make_nvdec_clips.sh bench)"
  fi
fi

if want devices; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  test_lists=${MJPEG_TEST_DEVICES:-0,0}
  [[ -z ${MJPEG_TEST_DEVICES:-} && $gpus -ge 2 ]] && test_lists="0,0 0,1"
  for list in $test_lists; do
    if need "$bin/mjpeg_pipeline_tests" "multi-device pipeline tests, buffers on devices $list"; then
      MJPEG_TEST_DEVICES=$list timeout 400 "$bin/mjpeg_pipeline_tests" --gtest_brief=1 \
        --gtest_filter='GpuDevices*:*/GpuDevices*' >"$logs/devices_tests_${list//,/-}.log" 2>&1
      gtest_result "multi-device pipeline tests, buffers on devices $list" $? \
        "$logs/devices_tests_${list//,/-}.log"
    fi
  done
  lists=${MJPEG_CHECK_DEVICES:-0,0}
  [[ -z ${MJPEG_CHECK_DEVICES:-} && $gpus -ge 2 ]] && lists="0,0 0,1"
  : >"$logs/devices_fps.txt"
  # "ROW: fps, bound by ..." of every SOK/AOK row of compare's first table.
  rows_fps() {
    awk '/^mode .* fps/ { on = 1; next } on && /^$/ { exit }
         on && /^(SOK|AOK)/ { name = $1; i = 2; while ($i !~ /^[0-9.]+$/) name = name " " $(i++)
                              print "  " name ": " $i " fps" }' "$1"
  }
  if need "$bin/mjpeg" "mjpeg compare and encode per device list"; then
    for list in 0 $lists; do
      f=${list//,/-}
      timeout 400 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
        --modes sok,aok --devices "$list" --nvjpeg-threads 0 --json "$logs/compare_devices_$f.json" \
        --trace "$logs/trace_devices_$f.json" >"$logs/compare_devices_$f.txt" 2>"$logs/compare_devices_$f.err"
      rc=$?
      { echo "compare 1920x1080 --devices $list (rc=$rc):"; rows_fps "$logs/compare_devices_$f.txt"; } >>"$logs/devices_fps.txt"
      result "mjpeg compare 1920x1080 --devices $list (modes byte-identical)" $rc
    done
    # mjpeg encode of a 1080p Y4M clip from the page cache, aok, per device list (stages fps from
    # --stats leaves out the one-off setup, as compare's fps does); every list's AVI identical to
    # --devices 0's.
    py=${MJPEG_PYTHON:-python3}
    clip=${TMPDIR:-/tmp}/mjpeg-devices-1080p.y4m
    if [[ -s $clip ]] || "$py" "$here/tests/gpu/make_y4m_clip.py" "$picture" "$clip" --size 1920x1080 \
        --frames 300 >"$logs/devices_clip.log" 2>&1; then
      cat "$clip" >/dev/null
      enc_rc=0 enc_what=()
      for list in 0 $lists; do
        f=${list//,/-}
        out=${TMPDIR:-/tmp}/mjpeg-devices-$f.avi
        timeout 300 "$bin/mjpeg" encode "$clip" -o "$out" -y --mode aok --devices "$list" --stats \
          >"$logs/encode_devices_$f.txt" 2>&1
        rc=$?
        line=$(grep -m1 '^mjpeg: wrote' "$logs/encode_devices_$f.txt")
        # fps over the stages (the summary's fps includes the setup: contexts, slot allocation).
        stages=$(awk '/over [0-9.]+ s wall/ { for (i = 1; i <= NF; i++) if ($i == "over") w = $(i + 1) }
                      /setup \(allocation\)/ { s = $3 } /^mjpeg: wrote/ { n = $4 }
                      END { if (w > s) printf "%.1f", n / (w - s) }' "$logs/encode_devices_$f.txt")
        echo "encode 1080p Y4M --devices $list (rc=$rc): ${stages:-?} fps over the stages; ${line#mjpeg: wrote }" >>"$logs/devices_fps.txt"
        grep -E 'bound by|frames per stream buffer' "$logs/encode_devices_$f.txt" | sed 's/^/  /' >>"$logs/devices_fps.txt"
        [[ $rc == 0 ]] || { enc_rc=$rc; enc_what+=("--devices $list rc=$rc"); }
        [[ $list == 0 ]] && ref_avi=$out
        if [[ $list != 0 ]]; then
          if cmp -s "$ref_avi" "$out"; then
            echo "  AVI identical to --devices 0" >>"$logs/devices_fps.txt"
          else
            echo "  AVI DIFFERENT from --devices 0" >>"$logs/devices_fps.txt"
            enc_rc=differs
            enc_what+=("--devices $list: AVI differs from --devices 0's")
          fi
        fi
      done
      rm -f "${TMPDIR:-/tmp}"/mjpeg-devices-*.avi
      result "mjpeg encode 1080p Y4M per device list (AVIs identical)" "$enc_rc" "${enc_what[*]}"
    else
      result "mjpeg encode 1080p Y4M per device list" "no clip" "see $logs/devices_clip.log (MJPEG_PYTHON needs numpy)"
    fi
  fi
fi

if want sanitize && need "$tests" "compute-sanitizer (kernel tests)"; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  small="Matrix/GpuExact.*:Planar/GpuPlanarExact.*:GpuTest.*:GpuTokenize.*"
  for tool in memcheck racecheck initcheck; do
    to=150; [[ $tool == racecheck ]] && to=300
    MJPEG_GPU_SMALL=1 timeout $to "$cs" --tool $tool --error-exitcode 3 "$tests" --gtest_filter="$small" \
      --gtest_brief=1 >"$logs/sanitizer_$tool.log" 2>&1
    rc=$?
    errs=$(grep -m1 -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer_$tool.log" | sed 's/^=* *//')
    gtest_result "compute-sanitizer $tool (small frames)" $rc "$logs/sanitizer_$tool.log" "${errs:-no summary}"
  done
  # synccheck: direct + primitives (no block-scoped cuda::pipeline) must be clean, the trellis's
  # kernels after them too (its DC search's shuffles and ballots: GpuTest.RateDistortion*); the
  # block-scoped variants pass with the tool's known limit and nothing else: every error it
  # reports a "Missing wait" (at producer_commit), no other kind, and the tests themselves pass.
  for v in direct primitives pipeline partitioned; do
    log=$logs/sanitizer_synccheck_$v.log
    filter="Matrix/GpuExact.*:Planar/GpuPlanarExact.*"
    [[ $v == direct || $v == primitives ]] && filter+=":GpuTest.RateDistortion*"
    MJPEG_GPU_SMALL=1 MJPEG_GPU_ONLY_VARIANT=$v timeout 45 "$cs" --tool synccheck --error-exitcode 3 "$tests" \
      --gtest_filter="$filter" --gtest_brief=1 >"$log" 2>&1
    rc=$?
    errs=$(grep -m1 -E "ERROR SUMMARY" "$log" | sed 's/^=* *//')
    n=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -1)
    missing=$(grep -c "Missing wait" "$log")
    if [[ $rc == 3 && ($v == pipeline || $v == partitioned) && ${n:-0} -gt 0 && $missing -ge ${n:-0} ]] &&
       ! grep -qE "Invalid|Divergent|Misaligned|Out-of-range|hazard" "$log" &&
       grep -q '^\[  PASSED  \]' "$log" && ! grep -q '^\[  FAILED  \]' "$log"; then
      result "compute-sanitizer synccheck ($v)" 0 "${errs:-}, all \"Missing wait\" (the tool's limit on block-scoped pipelines)"
    else
      gtest_result "compute-sanitizer synccheck ($v)" $rc "$log" "${errs:-no summary}, $missing \"Missing wait\""
    fi
  done
fi
if want pipeline-memcheck && need "$bin/mjpeg_pipeline_tests" "compute-sanitizer memcheck (pipeline sok/aok tests)"; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 240 "$cs" --tool memcheck --error-exitcode 3 "$bin/mjpeg_pipeline_tests" \
    --gtest_filter='GpuPipeline.*:Cases/GpuStream.*:Cases/GpuPlanar.*:-GpuPipeline.DeviceOutOfMemory*' --gtest_brief=1 \
    >"$logs/sanitizer_pipeline_memcheck.log" 2>&1
  rc=$?
  errs=$(grep -m1 -E "ERROR SUMMARY" "$logs/sanitizer_pipeline_memcheck.log" | sed 's/^=* *//')
  gtest_result "compute-sanitizer memcheck (pipeline sok/aok tests)" $rc \
    "$logs/sanitizer_pipeline_memcheck.log" "${errs:-no summary}"
fi
# The kernel benchmark compares every configuration's output with the CPU transform (exit 3
# and "NO" in its exact column when one differs).
if want kernels && need "$bench" "kernel benchmark"; then
  timeout 150 "$bench" --csv >"$logs/bench.csv" 2>"$logs/bench.err"
  rc=$?
  rows=$(($(wc -l <"$logs/bench.csv") - 1))
  ((rows < 0)) && rows=0
  [[ $rc == 0 && $rows -lt 1 ]] && rc="no rows"
  result "kernel benchmark (every configuration's output = the CPU transform's)" "$rc" \
    "$rows configurations$(grep -m1 'DIFFERS' "$logs/bench.err" | sed 's/^/; /')"
fi

if want entropy; then
  if [[ -x $bin/mjpeg_bench_entropy ]]; then
    LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 240 "$bin/mjpeg_bench_entropy" \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true >"$logs/entropy.txt" 2>&1
    result "entropy benchmark on this CPU (bytes = libjpeg-turbo's)" $? "summary below"
  else
    skipped "entropy benchmark" "$bin/mjpeg_bench_entropy is not there (built only with Google Benchmark)"
  fi
fi

# End to end: what asynchronous offload buys (compare), and the sweeps (bench). compare exits 1
# when the modes' outputs differ.
if want compare && need "$bin/mjpeg" "mjpeg compare"; then
  timeout 300 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes cpu,sok,sok-pinned,aok --json "$logs/compare.json" --trace "$logs/trace.json" \
    >"$logs/compare.txt" 2>"$logs/compare.err"
  result "mjpeg compare 1920x1080, cpu sok sok-pinned aok libjpeg-turbo (identical)" $? "table below"
  # nvJPEG with 16 threads (the compare above has its row with the default 4), same frames.
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes aok --nvjpeg-threads 16 >"$logs/nvjpeg.txt" 2>&1
  nv_rc=$?
  if ((nv_rc == 0)) && ! grep -q '^nvJPEG' "$logs/nvjpeg.txt"; then
    skipped "nvJPEG peer, 16 threads" "no nvJPEG row (see $logs/nvjpeg.txt)"
  else
    result "mjpeg compare, aok and the nvJPEG peer with 16 threads" $nv_rc "below the compare table"
  fi
  # What the compact output buys: AOK with int16 coefficients coming back instead of tokens.
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes aok --gpu-output coefficients >"$logs/compare_coefficients.txt" 2>&1
  result "mjpeg compare, aok --gpu-output coefficients" $?
  # What per-frame optimal Huffman tables cost (the GPU's histogram, libjpeg's table builder).
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes aok --optimize >"$logs/compare_optimize.txt" 2>&1
  result "mjpeg compare, aok --optimize" $?
  # --progressive: the tokens are expanded back to coefficient blocks on the CPU and coded in
  # six scans; every mode must write the same bytes. Against --tune psnr --optimize below, same
  # frames.
  timeout 300 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes cpu,sok,aok --tune psnr --progressive >"$logs/compare_progressive.txt" 2>&1
  result "mjpeg compare, --tune psnr --progressive (cpu, sok, aok identical)" $?
  # Quantization tables: a tuned preset, and three own tables with Cb and Cr on
  # different ones (the third DeviceTables table).
  printf '%s\n' "$(seq 1 64 | tr '\n' ' ')" "$(seq 5 68 | tr '\n' ' ')" "$(seq 9 72 | tr '\n' ' ')" \
    >"$logs/qtables3.txt"
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes cpu,sok,aok --tune psnr --optimize >"$logs/compare_tune_psnr.txt" 2>&1
  result "mjpeg compare, --tune psnr --optimize (cpu, sok, aok identical)" $?
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 60 --repeat 1 \
    --modes cpu,sok,aok --qtables "$logs/qtables3.txt" --qslots 0,2,1 -q 80 \
    >"$logs/compare_qtables.txt" 2>&1
  result "mjpeg compare, own tables --qslots 0,2,1 (cpu, sok, aok identical)" $?
  : >"$logs/d2h_by_quality.txt"
  q_rc=0
  for q in 50 75 90 100; do
    timeout 100 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 60 --repeat 1 \
      --modes aok -q $q >"$logs/compare_q$q.txt" 2>&1 || q_rc=$?
    echo "q$q: $(grep -A1 '^GPU ' "$logs/compare_q$q.txt" | tail -1)" >>"$logs/d2h_by_quality.txt"
  done
  result "mjpeg compare, aok at q50, 75, 90, 100 (D2H bytes of the token output)" $q_rc "below"
fi
if want cpu && need "$bin/mjpeg" "mjpeg compare --modes cpu"; then
  for size in 1920x1080 3840x2160; do
    timeout 300 "$bin/mjpeg" compare "$picture" --size $size --frames 200 --repeat 5 --modes cpu \
      --json "$logs/compare_cpu_$size.json" >"$logs/compare_cpu_$size.txt" 2>"$logs/compare_cpu_$size.err"
    rc=$?
    ratio=$(awk '/^CPU /&&!c{c=$2} /^libjpeg-t/{t=$2} END{if (t > 0) printf "%.2f", c / t}' \
      "$logs/compare_cpu_$size.txt")
    result "mjpeg compare --modes cpu $size (= libjpeg-turbo's bytes)" $rc "cpu/libjpeg-turbo fps = ${ratio:-?}"
  done
fi
# The CPU transform's and Huffman coder's instruction-set variants against their references, on
# this CPU (a Xeon of the GPU machine has AVX-512): one test per variant of the build, so a
# variant this CPU cannot run shows as skipped by name; skipped although lscpu lists its
# instructions fails.
if want cpu && need "$bin/mjpeg_tests" "CPU variants vs their references (mjpeg_tests)"; then
  log=$logs/cpu_variant_tests.log
  (unset MJPEG_REQUIRE_GPU; timeout 400 "$bin/mjpeg_tests" \
    --gtest_filter='TransformVariants.*:*EachTransformVariant.*:*TransformMatrix.*:*QuantizerExhaustive.*:Huffman.*:*EachHuffmanVariant.*:*EachHuffmanVariantVsLibjpeg.*:CoderVariants.*:*EachTokenCoderVariant.*' \
    >"$log" 2>&1)
  rc=$?
  flags=" $(lscpu | sed -n 's/^Flags: *//p') "
  has() { local f; for f; do [[ $flags == *" $f "* ]] || return 1; done; }
  avx512=()  # "WHAT SUITE": the variants this CPU must have run
  has avx2 avx512f avx512bw avx512vbmi && avx512+=("transform EachTransformVariant")
  has bmi1 bmi2 abm popcnt avx512f avx512bw avx512cd avx512vl avx512dq avx512_vbmi2 &&
    avx512+=("Huffman EachHuffmanVariant")
  has movbe avx2 bmi1 bmi2 abm avx512f avx512bw && avx512+=("token-coder EachTokenCoderVariant")
  notes=()
  for entry in "${avx512[@]}"; do
    what=${entry% *} suite=${entry#* }
    ok=$(grep -cE "^\[       OK \] .*$suite.*/avx512" "$log")
    skips=$(grep -cE "^\[  SKIPPED \] .*$suite.*/avx512" "$log")
    if [[ $ok -eq 0 || $skips -gt 0 ]]; then
      [[ $rc == 0 ]] && rc="AVX-512 skipped"
      notes+=("$what avx512: this CPU has its instructions, but $ok of its tests ran and $skips were skipped")
    else
      notes+=("$what avx512 tested")
    fi
  done
  ((${#avx512[@]})) || notes+=("this CPU has no AVX-512: those variants' tests skipped")
  gtest_result "CPU variants vs their references" "$rc" "$log" "$(IFS=';'; echo "${notes[*]}")"
fi
# The sweeps; every point's bytes are checked against the first run of its row (CSV column
# "identical").
if want bench && need "$bin/mjpeg" "mjpeg bench sweeps"; then
  timeout 600 "$bin/mjpeg" bench "$picture" --frames 120 --repeat 3 --csv "$logs/bench_sweep.csv" \
    >"$logs/bench_sweep.log" 2>&1
  rc=$?
  differ=$(grep -c ',no$' "$logs/bench_sweep.csv" 2>/dev/null)
  [[ $rc == 0 && ${differ:-0} -gt 0 ]] && rc="outputs differ"
  [[ $rc == 0 && ! -s $logs/bench_sweep.csv ]] && rc="no csv"
  result "mjpeg bench sweeps" "$rc" "${differ:-0} points not identical; csv in $logs/bench_sweep.csv"
fi

# e2e.sh exits 1 when an encode or a compare fails or an output differs from the cpu mode's.
if want e2e; then
  if need "$bin/mjpeg" "end to end encode vs compare (e2e.sh)"; then
    MJPEG_E2E_SWEEP=${MJPEG_E2E_SWEEP:-1} timeout 560 bash "$here/tests/gpu/e2e.sh" "$bin/mjpeg" "$picture" 300 \
      >"$logs/e2e.txt" 2>"$logs/e2e.err"
    result "end to end encode vs compare (e2e.sh: every output = the cpu mode's)" $? \
      "$(grep -m1 '^e2e: ' "$logs/e2e.txt")"
  fi
fi

if want register; then
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  probe_file=${TMPDIR:-/tmp}/mjpeg-register-probe.bin
  if "$nvcc_bin" -O2 -std=c++17 -o "$logs/register_probe" "$here/tests/gpu/register_probe.cu" \
      >"$logs/register_build.log" 2>&1; then
    dd if=/dev/zero of="$probe_file" bs=1M count=4096 status=none && cat "$probe_file" >/dev/null
    timeout 120 "$logs/register_probe" "$probe_file" >"$logs/register.txt" 2>&1
    result "register probe, idle" $? "below"
    LOAD=12 timeout 120 "$logs/register_probe" "$probe_file" >>"$logs/register.txt" 2>&1
    result "register probe, beside 12 copying threads" $? "below"
    rm -f "$probe_file"
  else
    result "register probe" "nvcc failed" "see $logs/register_build.log"
  fi
fi
if want upload; then
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if "$nvcc_bin" -O2 -std=c++17 -o "$logs/upload_probe" "$here/tests/gpu/upload_probe.cu" \
      >"$logs/upload_build.log" 2>&1; then
    { timeout 120 "$logs/upload_probe" 6220800 64 && timeout 120 "$logs/upload_probe" 24883200 24; } \
      >"$logs/upload.txt" 2>&1
    result "upload probe (1080p and 4K RGB frames)" $? "$logs/upload.txt"
  else
    result "upload probe" "nvcc failed" "see $logs/upload_build.log"
  fi
fi
if want big && need "$bin/mjpeg" "big pictures"; then
  # random_ppm W H FILE: a P6 of random pixels (the worst case for the entropy coder).
  random_ppm() { { printf 'P6\n%d %d\n255\n' "$1" "$2"; head -c $(($1 * $2 * 3)) /dev/urandom; } >"$3"; }
  : >"$logs/big.log"
  big_rc=0
  for size in 20000x3000 65500x64 64x65500; do
    random_ppm "${size%x*}" "${size#*x}" "$logs/big.ppm"
    for s in 420 444; do
      if ! "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_cpu.avi" -y --quiet --mode cpu -s $s -q 95 \
          2>>"$logs/big.log"; then
        big_rc=failed
        echo "big $size $s cpu: failed" >>"$logs/big.log"
        continue
      fi
      for m in sok aok; do
        if ! "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_$m.avi" -y --quiet --mode $m -s $s -q 95 \
            2>>"$logs/big.log"; then
          big_rc=failed
          echo "big $size $s $m: failed" >>"$logs/big.log"
        elif ! cmp -s "$logs/big_cpu.avi" "$logs/big_$m.avi"; then
          big_rc=differs
          echo "big $size $s $m: DIFFERENT from cpu mode" >>"$logs/big.log"
        fi
      done
    done
  done
  result "big pictures 20000x3000, 65500x64, 64x65500 (sok, aok = cpu)" "$big_rc" "see $logs/big.log"
  # Far more slots than device memory holds: asked for (--mode aok), one line, exit 1, nothing
  # written (--quiet: without the notice naming the input that a run prints first); not asked
  # for, the CPU encodes it with a notice, the cpu mode's bytes.
  random_ppm 16000 16000 "$logs/big.ppm"
  "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_many.avi" --mode aok --slots 128 -y --quiet \
    >"$logs/big_many.out" 2>&1
  many_rc=$?
  cat "$logs/big_many.out" >>"$logs/big.log"
  if [[ $many_rc -eq 1 && $(wc -l <"$logs/big_many.out") -eq 1 && ! -e $logs/big_many.avi ]] &&
      grep -q 'device memory' "$logs/big_many.out"; then
    result "a frame too big for device memory, --mode aok: refused" 0 "$(cat "$logs/big_many.out")"
  else
    result "a frame too big for device memory, --mode aok: refused" "rc=$many_rc" "$(head -3 "$logs/big_many.out")"
  fi
  fb_rc=0
  "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_fallback.avi" --slots 128 -y \
    >"$logs/big_fallback.out" 2>&1 || fb_rc=$?
  "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_cpu.avi" --slots 128 --mode cpu -y --quiet \
    >>"$logs/big.log" 2>&1 || fb_rc=cpu-failed
  cat "$logs/big_fallback.out" >>"$logs/big.log"
  if [[ $fb_rc == 0 ]]; then
    grep -q 'device memory.*; encoding on the CPU' "$logs/big_fallback.out" || fb_rc="no notice"
    grep -q '(cpu mode)' "$logs/big_fallback.out" || fb_rc="not in cpu mode"
    cmp -s "$logs/big_fallback.avi" "$logs/big_cpu.avi" || fb_rc="differs from --mode cpu"
  fi
  result "a frame too big for device memory, no --mode: encoded on the CPU with a notice" "$fb_rc" \
    "$(grep -m1 'device memory' "$logs/big_fallback.out")"
  rm -f "$logs"/big*.ppm "$logs"/big_*.avi
fi

# The tables of the parts that ran, then the summary and the verdict (last: the GPU machine's
# reply shows the end of the output).
if want kernels && [[ -f $logs/bench.csv ]]; then
  echo
  echo "==== kernel benchmark (4:2:0 q90)"
  head -1 "$logs/bench.err"
  column -s, -t <"$logs/bench.csv" 2>/dev/null || cat "$logs/bench.csv"
fi
if want cpu; then
  for size in 1920x1080 3840x2160; do
    [[ -f $logs/compare_cpu_$size.txt ]] || continue
    echo
    echo "==== mjpeg compare --modes cpu ($size q90 4:2:0, Kodak mosaic)"
    cat "$logs/compare_cpu_$size.txt"
  done
fi
if want e2e && [[ -f $logs/e2e.txt ]]; then
  echo
  sed -n '/^==== end to end/,$p' "$logs/e2e.txt"
fi
if want nvdec && [[ -f $logs/e2e_nvdec.txt ]]; then
  echo
  sed -n '/^compressed video/,$p' "$logs/e2e_nvdec.txt"
fi
if want devices && [[ -f $logs/devices_fps.txt ]]; then
  echo
  echo "==== fps per device count (stream buffers), 1920x1080 q90 4:2:0, Kodak mosaic"
  cat "$logs/devices_fps.txt"
  for list in $lists; do
    [[ -f $logs/compare_devices_${list//,/-}.txt ]] || continue
    echo; echo "==== mjpeg compare --devices $list"
    cat "$logs/compare_devices_${list//,/-}.txt"
  done
fi
if want compare && [[ -f $logs/compare.txt ]]; then
  echo
  echo "==== mjpeg compare (1920x1080 q90 4:2:0, Kodak mosaic)"
  cat "$logs/compare.txt"
  [[ -f $logs/nvjpeg.txt ]] && cat "$logs/nvjpeg.txt"
  echo; echo "==== AOK with coefficients coming back"
  grep -E "^(AOK|mode|GPU) " "$logs/compare_coefficients.txt"
  echo; echo "==== AOK with --optimize"
  grep -E "^(AOK|mode|nvJPEG) " "$logs/compare_optimize.txt"
  echo; echo "==== --tune psnr --optimize, and own tables --qslots 0,2,1"
  grep -E "^(CPU|SOK|AOK|mode|libjpeg|identical|all)" "$logs/compare_tune_psnr.txt"
  echo; echo "==== --tune psnr --progressive (fps against --tune psnr --optimize above)"
  grep -E "^(CPU|SOK|AOK|mode|libjpeg|identical|all)" "$logs/compare_progressive.txt"
  grep -iE "identical|differ" "$logs/compare_qtables.txt"
  echo; echo "==== token output, D2H per frame by quality (kHD)"
  cat "$logs/d2h_by_quality.txt"
fi
if want slots; then
  for size in 1920x1080 3840x2160; do
    [[ -f $logs/compare_slots_$size.txt ]] || continue
    echo; echo "==== symbol slots (MJPEG_TOKEN_FORMAT=slots): mjpeg compare $size"
    cat "$logs/compare_slots_$size.txt"
  done
  [[ -f $logs/compare_default_1920x1080.txt ]] &&
    { echo; echo "==== coded blocks (the default), aok 1920x1080"; grep -E "^(AOK|mode|GPU|nvJPEG) " "$logs/compare_default_1920x1080.txt"; }
  [[ -f $logs/slots_d2h.txt ]] && cat "$logs/slots_d2h.txt"
  [[ -f $logs/e2e_slots.txt ]] && { echo; sed -n '/^==== end to end/,$p' "$logs/e2e_slots.txt"; }
fi
if want register && [[ -f $logs/register.txt ]]; then
  echo; echo "==== page-locking a page-cached file against pread"
  cat "$logs/register.txt"
fi
if want entropy && [[ -f $logs/entropy.txt ]]; then
  echo; echo "==== entropy benchmark (this CPU)"
  sed -n '/^Summary/,$p' "$logs/entropy.txt"
fi

echo
echo "==== summary"
printf '%s\n' "${summary[@]}"
checks=$(printf '%s\n' "${summary[@]}" | grep -cv '^skip')
if ((${#failed[@]})); then
  echo "==== check.sh: ${#failed[@]} of $checks checks FAILED:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
if ((checks == 0)); then
  echo "==== check.sh: no check ran"
  exit 1
fi
echo "==== check.sh: all $checks checks passed"
