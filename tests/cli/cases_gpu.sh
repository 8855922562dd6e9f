# Cases of the GPU modes end to end (sourced by cli_test.sh; its helpers are available). They
# need a usable CUDA device: without one they are skipped, and with MJPEG_REQUIRE_GPU=1 (as
# tests/gpu/check.sh runs them on the GPU machine) they fail instead. They need no ffmpeg.

# need_gpu: device 0 is usable (as `mjpeg info` lists it), else skip (or fail, see above).
need_gpu() {
  "$MJPEG" info >info.txt 2>&1 || die "mjpeg info failed: $(cat info.txt)"
  grep -q '^  \[0\] .*: usable$' info.txt && return 0
  [[ ${MJPEG_REQUIRE_GPU:-} == 1 ]] &&
    die "MJPEG_REQUIRE_GPU=1 but CUDA device 0 is not usable: $(grep -A2 '^CUDA devices' info.txt)"
  skip "no usable CUDA device"
}

# noise_y4m FILE FRAMES W H: a 4:2:0 Y4M clip of random samples.
noise_y4m() {
  local frame=$(($3 * $4 + 2 * (($3 + 1) / 2) * (($4 + 1) / 2))) i
  {
    printf 'YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n' "$3" "$4"
    for ((i = 0; i < $2; ++i)); do
      printf 'FRAME\n'
      head -c "$frame" /dev/urandom
    done
  } >"$1"
}

# Every GPU mode writes the cpu mode's bytes, frame by frame (and cjpeg's, of the pixels each
# frame was encoded from, where cjpeg is here); --stats shows that the GPU did the work: the
# planes went up (1.5 bytes per pixel), the dispatcher offloaded, and in aok the producers
# issued the uploads (sok's are blocking copies). The default on the file itself, whose 24
# small frames are too little work for the GPU to pay for its start, is the cpu mode, and
# --stats says why; on standard input (a stream of unknown length) it starts on the CPU, which
# here encodes the 24 frames before the GPU is ready (the hand-over itself: the next case).
case_gpu_modes_write_the_cpu_modes_bytes() {
  need_gpu
  noise_y4m in.y4m 24 320 180
  mkdir cpu
  expect_ok encode in.y4m -o cpu/%03d.jpg --mode cpu --dump-input dump --quiet
  [[ $(ls cpu | wc -l) -eq 24 ]] || die "cpu: $(ls cpu)"
  if [[ -n $CJPEG ]]; then dump_matches_cjpeg dump cpu "-quality 90 -sample 2x2"; fi
  local run mode f
  for run in sok sok-pinned pinned-alias aok; do
    local args=()
    case $run in
      pinned-alias) args=(--mode sok --pinned) mode=sok-pinned ;;
      *) args=(--mode "$run") mode=$run ;;
    esac
    mkdir "$run"
    expect_ok encode in.y4m -o "$run/%03d.jpg" "${args[@]}" --stats
    for f in cpu/*.jpg; do same_bytes "$run/${f#cpu/}" "$f"; done
    grep -q "^mjpeg: wrote $run/%03d.jpg: 24 frames, .* ($mode mode)" err.txt ||
      die "$run: not encoded in $mode mode: $(cat err.txt)"
    grep -q '; 86400 bytes uploaded per frame$' err.txt ||
      die "$run: the frames' planes were not uploaded: $(cat err.txt)"
    grep -q '^  gpu offload (sok/aok dispatch) ' err.txt || die "$run: no GPU dispatch: $(cat err.txt)"
    grep -q '^  transform (cpu) ' err.txt && die "$run: frames transformed on the CPU: $(cat err.txt)"
    if [[ $mode == aok ]]; then
      grep -q '^  upload issue (aok) ' err.txt || die "$run: no asynchronous uploads: $(cat err.txt)"
    else
      grep -q '^  upload issue (aok) ' err.txt && die "$run: asynchronous uploads in sok: $(cat err.txt)"
    fi
    echo "ok: $run == cpu mode, 24 frames, uploaded to the GPU"
  done
  mkdir little
  expect_ok encode in.y4m -o little/%03d.jpg --stats
  for f in cpu/*.jpg; do same_bytes "little/${f#cpu/}" "$f"; done
  grep -q '^mjpeg: wrote little/%03d.jpg: 24 frames, .* (cpu mode)' err.txt ||
    die "default on a short file: not the cpu mode: $(cat err.txt)"
  grep -q '^mjpeg: mode: the cpu mode, chosen for little work (24 frames of 320x180, 1 Mpixel, below [0-9]* cores x 240 Mpixel' err.txt ||
    die "default on a short file: --stats does not say why the cpu mode: $(cat err.txt)"
  grep -q 'bytes uploaded per frame' err.txt && die "default on a short file: frames uploaded: $(cat err.txt)"
  echo "ok: default on a short file == cpu mode, chosen for little work"
  mkdir stdin
  expect_ok encode - -o stdin/%03d.jpg --stats <in.y4m
  for f in cpu/*.jpg; do same_bytes "stdin/${f#cpu/}" "$f"; done
  grep -q '^mjpeg: mode: .* after a cpu start: ' err.txt ||
    die "default on standard input: no cpu start: $(cat err.txt)"
  echo "ok: default on standard input starts on the CPU, the cpu mode's bytes"
}

# The default on standard input starts on the CPU and hands over to aok once the GPU is ready:
# the stream pauses for 1.5 s after its first 5 frames (longer than the GPU's start), so the
# CPU encodes at least those and the GPU the rest, uploaded; the bytes are the cpu mode's.
case_gpu_default_hands_over_from_the_cpu_to_the_gpu() {
  need_gpu
  noise_y4m in.y4m 40 320 180
  expect_ok encode in.y4m -o cpu.avi --mode cpu --quiet
  local header frame
  header=$(head -1 in.y4m | wc -c)
  frame=$((6 + 320 * 180 * 3 / 2))
  mkfifo feed
  { head -c $((header + 5 * frame)) in.y4m; sleep 1.5; tail -c +$((header + 5 * frame + 1)) in.y4m; } >feed &
  expect_ok encode - -o ho.avi --stats <feed
  wait
  same_bytes ho.avi cpu.avi
  grep -qE '^mjpeg: wrote ho.avi: 40 frames, .* \(aok mode, the first ([5-9]|[1-3][0-9]) frames on the CPU\)' err.txt ||
    die "no hand-over after the first frames: $(cat err.txt)"
  grep -qE '^mjpeg: mode: aok after a cpu start: the CPU encoded [0-9]+ frames while the GPU started \(ready at [0-9.]+ s\), the GPU the rest from [0-9.]+ s$' err.txt ||
    die "--stats does not tell the hand-over: $(cat err.txt)"
  grep -q '; 86400 bytes uploaded per frame$' err.txt ||
    die "the GPU's frames' planes were not uploaded: $(cat err.txt)"
  echo "ok: default on a paused stream: the CPU's first frames, then aok; the cpu mode's bytes"
}

# Two stream buffers on device 0 (--devices 0,0): the same bytes, the frames spread over both.
case_gpu_two_stream_buffers_write_the_same_bytes() {
  need_gpu
  noise_y4m in.y4m 30 200 120
  expect_ok encode in.y4m -o cpu.avi --mode cpu --quiet
  local mode
  for mode in sok aok; do
    expect_ok encode in.y4m -o "$mode.avi" --mode "$mode" --devices 0,0 --stats
    same_bytes "$mode.avi" cpu.avi
    grep -qE '^mjpeg: frames per stream buffer: GPU 0: [1-9][0-9]*, GPU 0: [1-9][0-9]*$' err.txt ||
      die "$mode: frames not spread over both buffers: $(cat err.txt)"
  done
}

# --rdo deadzone and trellis (also with --tune ssim: each block's lambda from its contrast):
# every GPU mode writes the cpu mode's bytes (the trellis search runs in its own kernel after
# the transform, with the CPU's code), on an odd size.
case_gpu_rdo_writes_the_cpu_modes_bytes() {
  need_gpu
  noise_y4m in.y4m 16 333 197
  local r m tune
  for r in deadzone trellis trellis-ssim; do
    tune=none
    [[ $r == trellis-ssim ]] && tune=ssim
    expect_ok encode in.y4m -o cpu-$r.avi --mode cpu --rdo ${r%-ssim} --tune $tune --quiet
    for m in sok aok; do
      expect_ok encode in.y4m -o $m-$r.avi --mode $m --rdo ${r%-ssim} --tune $tune --stats
      grep -q "($m mode)" err.txt || die "--rdo $r: not encoded in $m mode: $(cat err.txt)"
      same_bytes $m-$r.avi cpu-$r.avi
      echo "ok: --rdo $r: $m == cpu mode"
    done
  done
}
