#!/usr/bin/env bash
# GPU check, on a machine with a CUDA GPU:
#   tests/gpu/check.sh [BIN_DIR]
# BIN_DIR (or env MJPEG_GPU_BIN) holds prebuilt mjpeg, mjpeg_gpu_tests, mjpeg_bench_kernels,
# mjpeg_pipeline_tests and mjpeg_api_tests (their GPU suites are Gpu* and */Gpu*; e.g. a static
# build copied to .gpu/); without it the script
# configures and builds build-gpu-check/.
# Parts (env MJPEG_CHECK_PARTS, a comma list; default all, in this order):
#   tests     GPU tests (kernels, the sok/aok pipeline, the library's VideoEncoder) with
#             MJPEG_REQUIRE_GPU=1
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
#   kernels   the kernel benchmark (CSV): rgb24 and planar yuv420p input
#   entropy   mjpeg_bench_entropy (the CPU coders against libjpeg-turbo's Huffman coding on this
#             machine's CPU), when BIN_DIR has it (a shared libbenchmark may sit in BIN_DIR/lib)
#   compare   `mjpeg compare` on 1920x1080 frames cut from the Kodak mosaic (env
#             MJPEG_BENCH_PICTURE, default BIN_DIR/k4k.ppm): cpu, sok, sok-pinned, aok and
#             libjpeg-turbo; JSON, Chrome trace; then nvJPEG on the same frames
#             (tests/gpu/nvjpeg_peer.cpp, built with nvcc where CUDA has nvJPEG); then AOK with
#             the coefficients coming back instead of tokens, --optimize, --tune psnr with
#             --optimize and with --progressive (cpu, sok, aok byte-identical), and the D2H
#             bytes per frame of the token output at qualities 50, 75, 90 and 100
#   cpu       the CPU mode against libjpeg-turbo on every core: `mjpeg compare --modes cpu` at
#             1920x1080 and 3840x2160 (the same picture), and, when BIN_DIR has mjpeg_tests, the
#             CPU transform's variants (AVX-512, AVX2, SSE2) against the scalar reference on this
#             CPU (env MJPEG_MEDIA_DIR for the Kodak images)
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
#   big       pictures beyond the old 16384 limit (20000x3000, 65500x64, 64x65500; random
#             pixels, 4:2:0 and 4:4:4) as one-frame AVIs in sok and aok: byte-identical to cpu
#             mode, and a frame too big for device memory refused with one clear line
# The tables of the parts that ran are printed last; the script exits 1 when a part noted a
# non-zero rc. Logs go to $LOG_DIR (default: $OUT or
# ./gpu-check-logs).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-${MJPEG_GPU_BIN:-}}
logs=${LOG_DIR:-${OUT:-$here/gpu-check-logs}}
mkdir -p "$logs"
if [[ -z "$bin" ]]; then
  bin=$here/build-gpu-check
  cmake -S "$here" -B "$bin" -DMJPEG_WITH_OPENCV=OFF -DMJPEG_BUILD_BENCH=OFF >"$logs/build.log" 2>&1 &&
    cmake --build "$bin" -j"$(nproc)" --target mjpeg mjpeg_gpu_tests mjpeg_bench_kernels mjpeg_pipeline_tests mjpeg_api_tests >>"$logs/build.log" 2>&1 ||
    { echo "build failed (see $logs/build.log)"; tail -30 "$logs/build.log"; exit 1; }
fi
tests=$bin/mjpeg_gpu_tests
bench=$bin/mjpeg_bench_kernels
summary=()
red=0  # the exit status: 1 once any part noted a non-zero rc
note() {
  summary+=("$1")
  echo "== $1"
  [[ $1 =~ rc=[1-9] ]] && red=1
  return 0
}
parts=",${MJPEG_CHECK_PARTS:-tests,nvdec,devices,sanitize,pipeline-memcheck,kernels,entropy,compare,cpu,bench,e2e,register,big},"
want() { [[ $parts == *",$1,"* ]]; }
picture=${MJPEG_BENCH_PICTURE:-$bin/k4k.ppm}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$logs/gpu.txt" 2>&1
lscpu | grep -E "^(Model name|Thread|Core|Socket|CPU\(s\)|Flags)" | cut -c1-200 >>"$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"

export MJPEG_REQUIRE_GPU=1
# The NVDEC tests' clips (make_nvdec_clips.sh) and the CLI they run.
export MJPEG_NVDEC_CLIPS=${MJPEG_NVDEC_CLIPS:-$bin/nvdec} MJPEG_CLI=$bin/mjpeg
if want tests; then
  timeout 420 "$tests" --gtest_brief=1 >"$logs/tests.log" 2>&1
  rc=$?; tail -5 "$logs/tests.log"
  note "gpu tests (MJPEG_REQUIRE_GPU=1): rc=$rc"
  # The streaming pipeline in sok, sok --pinned and aok: every frame byte-identical to the CPU.
  if [[ -x $bin/mjpeg_pipeline_tests ]]; then
    timeout 240 "$bin/mjpeg_pipeline_tests" --gtest_brief=1 --gtest_filter='Gpu*:*/Gpu*-*Devices*' \
      >"$logs/pipeline_tests.log" 2>&1
    rc=$?; tail -3 "$logs/pipeline_tests.log"
    note "pipeline gpu tests, sok/aok (MJPEG_REQUIRE_GPU=1): rc=$rc"
  else
    note "pipeline gpu tests: $bin/mjpeg_pipeline_tests is missing (not run)"
  fi
  # The public VideoEncoder in sok, sok-pinned and aok: the same bytes as encode_jpeg.
  if [[ -x $bin/mjpeg_api_tests ]]; then
    timeout 240 "$bin/mjpeg_api_tests" --gtest_brief=1 --gtest_filter='Gpu*:*/Gpu*' \
      >"$logs/api_tests.log" 2>&1
    rc=$?; tail -3 "$logs/api_tests.log"
    note "library (VideoEncoder) gpu tests, sok/aok (MJPEG_REQUIRE_GPU=1): rc=$rc"
  else
    note "library gpu tests: $bin/mjpeg_api_tests is missing (not run)"
  fi
fi

# NVDEC: every test clip decoded on the GPU gives the AVI the CPU's libavcodec gives
# (tests/gpu/test_nvdec.cpp); then, where the bench clips are there, e2e_nvdec.sh's rows.
if want nvdec; then
  timeout 400 "$tests" --gtest_brief=1 --gtest_filter='GpuNvdec*:*/GpuNvdec*' \
    >"$logs/nvdec_tests.log" 2>&1
  rc=$?; tail -3 "$logs/nvdec_tests.log"
  note "NVDEC tests (--decoder gpu == cpu on every clip of $MJPEG_NVDEC_CLIPS): rc=$rc"
  if [[ -f $MJPEG_NVDEC_CLIPS/h264_1080p.mp4 ]]; then
    timeout 400 bash "$here/tests/gpu/e2e_nvdec.sh" "$bin/mjpeg" "$MJPEG_NVDEC_CLIPS" \
      >"$logs/e2e_nvdec.txt" 2>&1
    note "compressed video end to end (NVDEC / libavcodec, encode, compare): rc=$? (table below)"
  fi
fi

if want devices; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  test_lists=${MJPEG_TEST_DEVICES:-0,0}
  [[ -z ${MJPEG_TEST_DEVICES:-} && $gpus -ge 2 ]] && test_lists="0,0 0,1"
  for list in $test_lists; do
    MJPEG_TEST_DEVICES=$list timeout 400 "$bin/mjpeg_pipeline_tests" --gtest_brief=1 \
      --gtest_filter='GpuDevices*:*/GpuDevices*' >"$logs/devices_tests_${list//,/-}.log" 2>&1
    rc=$?; tail -3 "$logs/devices_tests_${list//,/-}.log"
    note "multi-device pipeline tests, buffers on devices $list (MJPEG_REQUIRE_GPU=1): rc=$rc"
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
  for list in 0 $lists; do
    f=${list//,/-}
    timeout 400 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
      --modes sok,aok --devices "$list" --nvjpeg-threads 0 --json "$logs/compare_devices_$f.json" \
      --trace "$logs/trace_devices_$f.json" >"$logs/compare_devices_$f.txt" 2>"$logs/compare_devices_$f.err"
    rc=$?
    { echo "compare 1920x1080 --devices $list (rc=$rc):"; rows_fps "$logs/compare_devices_$f.txt"; } >>"$logs/devices_fps.txt"
    note "mjpeg compare 1920x1080 --devices $list: rc=$rc"
  done
  # mjpeg encode of a 1080p Y4M clip from the page cache, aok, per device list (stages fps from
  # --stats leaves out the one-off setup, as compare's fps does).
  py=${MJPEG_PYTHON:-python3}
  clip=${TMPDIR:-/tmp}/mjpeg-devices-1080p.y4m
  if [[ -s $clip ]] || "$py" "$here/tests/gpu/make_y4m_clip.py" "$picture" "$clip" --size 1920x1080 \
      --frames 300 >"$logs/devices_clip.log" 2>&1; then
    cat "$clip" >/dev/null
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
      [[ $list == 0 ]] && ref_avi=$out
      if [[ $list != 0 ]]; then
        cmp -s "$ref_avi" "$out" && same=identical || same=DIFFERENT
        echo "  AVI $same to --devices 0" >>"$logs/devices_fps.txt"
      fi
    done
    rm -f "${TMPDIR:-/tmp}"/mjpeg-devices-*.avi
    note "mjpeg encode 1080p Y4M per device list: (fps below)"
  else
    note "mjpeg encode per device list: no clip (see $logs/devices_clip.log)"
  fi
fi

if want sanitize; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  small="Matrix/GpuExact.*:Planar/GpuPlanarExact.*:GpuTest.*:GpuTokenize.*"
  for tool in memcheck racecheck initcheck; do
    to=150; [[ $tool == racecheck ]] && to=300
    MJPEG_GPU_SMALL=1 timeout $to "$cs" --tool $tool --error-exitcode 3 "$tests" --gtest_filter="$small" \
      --gtest_brief=1 >"$logs/sanitizer_$tool.log" 2>&1
    rc=$?
    errs=$(grep -m1 -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer_$tool.log")
    note "compute-sanitizer $tool (small frames): rc=$rc ${errs:-}"
  done
  # synccheck: direct + primitives (no block-scoped cuda::pipeline) must be clean; the
  # block-scoped variants are tried once and reported (known tool limit: "Missing wait").
  for v in direct primitives pipeline partitioned; do
    MJPEG_GPU_SMALL=1 MJPEG_GPU_ONLY_VARIANT=$v timeout 45 "$cs" --tool synccheck --error-exitcode 3 "$tests" \
      --gtest_filter="Matrix/GpuExact.*:Planar/GpuPlanarExact.*" --gtest_brief=1 >"$logs/sanitizer_synccheck_$v.log" 2>&1
    rc=$?
    errs=$(grep -m1 -E "ERROR SUMMARY" "$logs/sanitizer_synccheck_$v.log")
    first=$(grep -m1 -E "Missing|Barrier|Invalid" "$logs/sanitizer_synccheck_$v.log")
    note "compute-sanitizer synccheck ($v): rc=$rc ${errs:-} ${first:-}"
  done
fi
if want pipeline-memcheck && [[ -x $bin/mjpeg_pipeline_tests ]]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 240 "$cs" --tool memcheck --error-exitcode 3 "$bin/mjpeg_pipeline_tests" \
    --gtest_filter='GpuPipeline.*:Cases/GpuStream.*:Cases/GpuPlanar.*:-GpuPipeline.DeviceOutOfMemory*' --gtest_brief=1 \
    >"$logs/sanitizer_pipeline_memcheck.log" 2>&1
  rc=$?
  errs=$(grep -m1 -E "ERROR SUMMARY" "$logs/sanitizer_pipeline_memcheck.log")
  note "compute-sanitizer memcheck (pipeline sok/aok tests): rc=$rc ${errs:-}"
fi
if want kernels; then
  timeout 150 "$bench" --csv >"$logs/bench.csv" 2>"$logs/bench.err"
  note "kernel benchmark: rc=$? (csv in $logs/bench.csv)"
fi

if want entropy && [[ -x $bin/mjpeg_bench_entropy ]]; then
  LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 240 "$bin/mjpeg_bench_entropy" \
    --benchmark_repetitions=5 --benchmark_report_aggregates_only=true >"$logs/entropy.txt" 2>&1
  note "entropy benchmark (this CPU): rc=$? (summary below)"
fi

# End to end: what asynchronous offload buys (compare), and the sweeps (bench).
if want compare; then
  timeout 300 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes cpu,sok,sok-pinned,aok --json "$logs/compare.json" --trace "$logs/trace.json" \
    >"$logs/compare.txt" 2>"$logs/compare.err"
  note "mjpeg compare 1920x1080: rc=$? (table below; JSON, trace in $logs)"
  # nvJPEG, the same frames (built here: only the GPU machine's CUDA has nvjpeg.h).
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if "$nvcc_bin" -O2 -std=c++17 -o "$logs/nvjpeg_peer" "$here/tests/gpu/nvjpeg_peer.cpp" -lnvjpeg \
      >"$logs/nvjpeg_build.log" 2>&1; then
    for t in 4 16; do
      timeout 120 "$logs/nvjpeg_peer" "$picture" --size 1920x1080 --frames 300 --threads $t \
        >>"$logs/nvjpeg.txt" 2>&1
    done
    note "nvJPEG peer: rc=$? (below the compare table)"
  else
    note "nvJPEG peer: not built (see $logs/nvjpeg_build.log)"
  fi
  # What the compact output buys: AOK with int16 coefficients coming back instead of tokens.
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes aok --gpu-output coefficients >"$logs/compare_coefficients.txt" 2>&1
  note "mjpeg compare, aok --gpu-output coefficients: rc=$?"
  # What per-frame optimal Huffman tables cost (the GPU's histogram, libjpeg's table builder).
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes aok --optimize >"$logs/compare_optimize.txt" 2>&1
  note "mjpeg compare, aok --optimize: rc=$?"
  # --progressive: the tokens are expanded back to coefficient blocks on the CPU and coded in
  # six scans; every mode must write the same bytes (compare exits 1 otherwise). Against
  # --tune psnr --optimize above, same frames.
  timeout 300 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes cpu,sok,aok --tune psnr --progressive >"$logs/compare_progressive.txt" 2>&1
  note "mjpeg compare, --tune psnr --progressive (cpu, sok, aok byte-identical): rc=$?"
  # Quantization tables: a tuned preset, and three own tables with Cb and Cr on
  # different ones (the third DeviceTables table); compare checks that every mode wrote the same
  # bytes (exit 1 otherwise).
  printf '%s\n' "$(seq 1 64 | tr '\n' ' ')" "$(seq 5 68 | tr '\n' ' ')" "$(seq 9 72 | tr '\n' ' ')" \
    >"$logs/qtables3.txt"
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 300 --repeat 3 \
    --modes cpu,sok,aok --tune psnr --optimize >"$logs/compare_tune_psnr.txt" 2>&1
  note "mjpeg compare, --tune psnr --optimize: rc=$?"
  timeout 200 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 60 --repeat 1 \
    --modes cpu,sok,aok --qtables "$logs/qtables3.txt" --qslots 0,2,1 -q 80 \
    >"$logs/compare_qtables.txt" 2>&1
  note "mjpeg compare, own tables --qslots 0,2,1: rc=$?"
  for q in 50 75 90 100; do
    timeout 100 "$bin/mjpeg" compare "$picture" --size 1920x1080 --frames 60 --repeat 1 \
      --modes aok -q $q >"$logs/compare_q$q.txt" 2>&1
    echo "q$q: $(grep -A1 '^GPU ' "$logs/compare_q$q.txt" | tail -1)" >>"$logs/d2h_by_quality.txt"
  done
  note "D2H bytes of the token output by quality: (below)"
fi
if want cpu; then
  for size in 1920x1080 3840x2160; do
    timeout 300 "$bin/mjpeg" compare "$picture" --size $size --frames 200 --repeat 5 --modes cpu \
      --json "$logs/compare_cpu_$size.json" >"$logs/compare_cpu_$size.txt" 2>"$logs/compare_cpu_$size.err"
    rc=$?
    ratio=$(awk '/^CPU /&&!c{c=$2} /^libjpeg-t/{t=$2} END{if (t > 0) printf "%.2f", c / t}' \
      "$logs/compare_cpu_$size.txt")
    note "mjpeg compare --modes cpu $size: rc=$rc, cpu/libjpeg-turbo fps = ${ratio:-?}"
  done
  if [[ -x $bin/mjpeg_tests ]]; then
    (unset MJPEG_REQUIRE_GPU; timeout 300 "$bin/mjpeg_tests" --gtest_brief=1 \
      --gtest_filter='TransformVariants.*:*TransformMatrix.*:TransformRowSource.*:*QuantizerExhaustive.*' \
      >"$logs/cpu_transform_tests.log" 2>&1)
    rc=$?; tail -3 "$logs/cpu_transform_tests.log"
    note "CPU transform variants vs the scalar reference: rc=$rc ($(grep -m1 -o 'variants:.*' "$logs/cpu_transform_tests.log"))"
  fi
fi
if want bench; then
  timeout 600 "$bin/mjpeg" bench "$picture" --frames 120 --repeat 3 --csv "$logs/bench_sweep.csv" \
    >"$logs/bench_sweep.log" 2>&1
  note "mjpeg bench sweeps: rc=$? (csv in $logs/bench_sweep.csv)"
fi

if want e2e; then
  MJPEG_E2E_SWEEP=${MJPEG_E2E_SWEEP:-1} timeout 560 bash "$here/tests/gpu/e2e.sh" "$bin/mjpeg" "$picture" 300 \
    >"$logs/e2e.txt" 2>"$logs/e2e.err"
  note "end to end encode vs compare: rc=$? (table below; logs in \${TMPDIR:-/tmp}/mjpeg-e2e)"
fi

if want register; then
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  probe_file=${TMPDIR:-/tmp}/mjpeg-register-probe.bin
  if "$nvcc_bin" -O2 -std=c++17 -o "$logs/register_probe" "$here/tests/gpu/register_probe.cu" \
      >"$logs/register_build.log" 2>&1; then
    dd if=/dev/zero of="$probe_file" bs=1M count=4096 status=none && cat "$probe_file" >/dev/null
    timeout 120 "$logs/register_probe" "$probe_file" >"$logs/register.txt" 2>&1
    rc_idle=$?
    LOAD=12 timeout 120 "$logs/register_probe" "$probe_file" >>"$logs/register.txt" 2>&1
    note "register probe: rc=$rc_idle idle, rc=$? beside 12 copying threads (below)"
    rm -f "$probe_file"
  else
    note "register probe: nvcc failed (see $logs/register_build.log)"
  fi
fi
if want big; then
  # random_ppm W H FILE: a P6 of random pixels (the worst case for the entropy coder).
  random_ppm() { { printf 'P6\n%d %d\n255\n' "$1" "$2"; head -c $(($1 * $2 * 3)) /dev/urandom; } >"$3"; }
  big_rc=0
  for size in 20000x3000 65500x64 64x65500; do
    random_ppm "${size%x*}" "${size#*x}" "$logs/big.ppm"
    for s in 420 444; do
      "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_cpu.avi" -y --quiet --mode cpu -s $s -q 95 ||
        big_rc=1
      for m in sok aok; do
        "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_$m.avi" -y --quiet --mode $m -s $s -q 95 \
          2>>"$logs/big.log" && cmp -s "$logs/big_cpu.avi" "$logs/big_$m.avi" ||
          { big_rc=1; echo "big $size $s $m: differs or failed" >>"$logs/big.log"; }
      done
    done
  done
  # Far more slots than device memory holds: one line, exit 1, nothing written (--quiet: without
  # the notice naming the input that a run prints first).
  random_ppm 16000 16000 "$logs/big.ppm"
  "$bin/mjpeg" encode "$logs/big.ppm" -o "$logs/big_many.avi" --mode aok --slots 128 -y --quiet \
    >"$logs/big_many.out" 2>&1
  many_rc=$?
  [[ $many_rc -eq 1 && $(wc -l <"$logs/big_many.out") -eq 1 && ! -e $logs/big_many.avi ]] &&
    grep -q 'device memory' "$logs/big_many.out" || big_rc=1
  cat "$logs/big_many.out" >>"$logs/big.log"
  rm -f "$logs"/big*.ppm "$logs"/big_*.avi
  note "big pictures (20000x3000, 65500x64, 64x65500; sok/aok == cpu; too big refused): rc=$big_rc (see $logs/big.log)"
fi

echo
echo "==== summary"
printf '%s\n' "${summary[@]}"
if want kernels; then
  echo
  echo "==== kernel benchmark (4:2:0 q90)"
  head -1 "$logs/bench.err"
  column -s, -t <"$logs/bench.csv" 2>/dev/null || cat "$logs/bench.csv"
fi
if want cpu; then
  for size in 1920x1080 3840x2160; do
    echo
    echo "==== mjpeg compare --modes cpu ($size q90 4:2:0, Kodak mosaic)"
    cat "$logs/compare_cpu_$size.txt"
  done
fi
if want e2e; then
  echo
  sed -n '/^==== end to end/,$p' "$logs/e2e.txt"
fi
if want nvdec && [[ -f $logs/e2e_nvdec.txt ]]; then
  echo
  sed -n '/^compressed video/,$p' "$logs/e2e_nvdec.txt"
fi
if want devices; then
  echo
  echo "==== fps per device count (stream buffers), 1920x1080 q90 4:2:0, Kodak mosaic"
  cat "$logs/devices_fps.txt"
  for list in $lists; do
    echo; echo "==== mjpeg compare --devices $list"
    cat "$logs/compare_devices_${list//,/-}.txt"
  done
fi
if want compare; then
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
if want register && [[ -f $logs/register.txt ]]; then
  echo; echo "==== page-locking a page-cached file against pread"
  cat "$logs/register.txt"
fi
if want entropy && [[ -f $logs/entropy.txt ]]; then
  echo; echo "==== entropy benchmark (this CPU)"
  sed -n '/^Summary/,$p' "$logs/entropy.txt"
fi
exit $red
