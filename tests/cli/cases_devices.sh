# Cases of --devices (several stream buffers) and of frame ranges (--start) joined without
# re-encoding (sourced by cli_test.sh; its helpers are available).

no_gpu() { "$MJPEG" info | grep -q '^CUDA devices: none'; }

case_devices_usage_errors_exit_2() {
  make_y4m in.y4m 2 64x48
  local d
  for d in x "" "0,,1" "0," ",1" "-1" "1024" "0,99999999999" "all,0" "0,all" "1.5" \
    "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"; do
    expect_fail 2 encode in.y4m -o out.avi --devices "$d" --quiet
    grep -q -- "--devices" err.txt || die "error does not name --devices: $(cat err.txt)"
    expect_fail 2 compare in.y4m --devices "$d" --modes cpu --quiet
    expect_fail 2 bench "$SAMPLE" --devices "$d" --modes cpu --quiet
  done
  expect_fail 2 encode in.y4m -o out.avi --devices 0,x
  grep -q "'x' is not a device index" err.txt || die "the item is not named: $(cat err.txt)"
  expect_fail 2 encode in.y4m -o out.avi --devices 1024
  grep -q "device 1024 is outside 0..1023" err.txt || die "the range is not said: $(cat err.txt)"
  expect_fail 2 encode in.y4m -o out.avi --device 0 --devices 0  # one or the other
  [[ ! -e out.avi ]] || die "out.avi created"
}

case_devices_help_says_what_a_repeat_means() {
  expect_ok encode --help
  tr -s ' \n' ' ' <out.txt | grep -q -- "--devices LIST|all .*0,0 runs two stream buffers on device 0" ||
    die "encode --help does not explain --devices 0,0: $(grep -A3 -- --devices out.txt)"
  expect_ok compare --help
  grep -q -- "--devices" out.txt || die "compare --help lacks --devices"
  expect_ok bench --help
  grep -q -- "--devices" out.txt || die "bench --help lacks --devices"
}

# Without a GPU: a device list without --mode encodes on the CPU with one notice naming the
# device; with --mode sok/aok it is one error line naming the device.
case_devices_without_gpu() {
  no_gpu || skip "a CUDA device is present"
  make_y4m in.y4m 3 64x48
  expect_ok encode in.y4m -o a.avi --devices 0,0
  grep -q '^mjpeg: note: CUDA device 0 does not exist .*encoding on the CPU' err.txt ||
    die "no notice naming device 0: $(cat err.txt)"
  grep -q '(cpu mode)' err.txt || die "not encoded in cpu mode: $(cat err.txt)"
  expect_ok encode in.y4m -o b.avi --devices all
  grep -q '^mjpeg: note: --devices all: no CUDA device .*encoding on the CPU' err.txt ||
    die "no notice for --devices all: $(cat err.txt)"
  same_bytes a.avi b.avi
  expect_fail 1 encode in.y4m -o c.avi --devices 0,3 --mode aok
  grep -q 'needs CUDA device 0' err.txt || die "error does not name device 0: $(cat err.txt)"
  expect_fail 1 encode in.y4m -o c.avi --devices all --mode sok
  grep -q -- '--devices all: no CUDA device' err.txt || die "error does not say why: $(cat err.txt)"
  expect_fail 1 compare in.y4m --modes cpu,aok --devices 0,0 --frames 2
  grep -q 'CUDA device' err.txt || die "error does not say why: $(cat err.txt)"
  [[ ! -e c.avi ]] || die "c.avi created"
}

# A build without CUDA (MJPEG_WITH_CUDA=OFF): info says so; sok and aok are one error line each
# (exit 1, no output) in encode, compare and bench; without --mode the CPU encodes, with one
# note about CUDA.
case_cpu_only_build_refuses_gpu_modes() {
  "$MJPEG" info | grep -q '^CUDA devices: none (this mjpeg was built without CUDA)' ||
    skip "this mjpeg was built with CUDA"
  expect_ok info
  grep -q '^CUDA architectures: none (built without CUDA)$' out.txt || die "$(cat out.txt)"
  make_y4m in.y4m 3 64x48
  local m
  for m in sok sok-pinned aok; do
    expect_fail 1 encode in.y4m -o g.avi --mode "$m"
    [[ "$(cat err.txt)" == "mjpeg: error: --mode $m needs CUDA device 0: this mjpeg was built without CUDA" ]] ||
      die "--mode $m: $(cat err.txt)"
    expect_fail 1 compare in.y4m --modes "cpu,$m" --frames 2
    grep -q "^mjpeg: error: mode $m needs a CUDA device: this mjpeg was built without CUDA$" err.txt ||
      die "compare --modes cpu,$m: $(cat err.txt)"
    expect_fail 1 bench "$SAMPLE" --modes "$m" --frames 2
    grep -q "built without CUDA" err.txt || die "bench --modes $m: $(cat err.txt)"
  done
  expect_fail 1 encode in.y4m -o g.avi --mode sok --pinned
  [[ ! -e g.avi ]] || die "g.avi created"
  expect_ok encode in.y4m -o c.avi
  if [[ -e /proc/driver/nvidia ]]; then  # a GPU machine: one note says why its GPU is unused
    [[ "$(grep -ci 'cuda' err.txt)" -eq 1 ]] &&
      grep -q '^mjpeg: note: this mjpeg was built without CUDA; encoding on the CPU$' err.txt ||
      die "not one note saying why the CPU encodes: $(cat err.txt)"
  else  # no NVIDIA GPU here: the CPU is the only way; the summary says the mode
    ! grep -qi 'cuda' err.txt && grep -q '(cpu mode)' err.txt ||
      die "a note about CUDA on a machine without an NVIDIA GPU: $(cat err.txt)"
  fi
  expect_ok encode in.y4m -o cpu.avi --mode cpu
  same_bytes c.avi cpu.avi
}

# The cpu mode has no stream buffers: a device list changes no byte; compare and bench take it.
case_devices_cpu_mode_same_bytes() {
  make_y4m in.y4m 8 96x64
  expect_ok encode in.y4m -o one.avi --mode cpu --quiet
  expect_ok encode in.y4m -o two.avi --mode cpu --devices 0,0 --quiet
  same_bytes one.avi two.avi
  expect_ok compare in.y4m --modes cpu --devices 0,0 --repeat 1 --quiet
  grep -q 'outputs: cpu reference' out.txt || die "no outputs line: $(cat out.txt)"
}

# Every listed device appears in `mjpeg info`, each said usable or unusable (and why).
case_info_lists_every_device_and_whether_usable() {
  expect_ok info
  if no_gpu; then
    grep -q '^CUDA devices: none (.*); encoding runs on the CPU' out.txt || die "$(cat out.txt)"
    return
  fi
  local n
  n=$(sed -n 's/^CUDA devices: \([0-9]*\)$/\1/p' out.txt)
  [[ -n $n ]] || die "no device count: $(cat out.txt)"
  [[ $(grep -cE '^  \[[0-9]+\] .*: (usable|unusable \(CUDA device [0-9]+ .*\))$' out.txt) -eq $n ]] ||
    die "not every device says whether it is usable: $(cat out.txt)"
}

# A frame range per run (--start, --frames) and the AVIs joined without re-encoding (FFmpeg's
# concat demuxer, -c copy), as README "Past one host" describes: the joined AVI has every frame
# once, in order, each byte-identical to a one-pass encode; raw .mjpeg segments join with cat,
# byte-identical to the one-pass stream as a whole.
case_segments_joined_equal_one_pass() {
  need_ffmpeg
  make_y4m in.y4m 30 160x96
  expect_ok encode in.y4m -o full.avi --mode cpu --quiet
  expect_ok encode in.y4m -o part1.avi --mode cpu --frames 12 --quiet
  expect_ok encode in.y4m -o part2.avi --mode cpu --start 12 --quiet
  [[ $(probe_counts part1.avi) == "mjpeg 160 96 25/1 12 12" ]] || die "part1: $(probe_counts part1.avi)"
  [[ $(probe_counts part2.avi) == "mjpeg 160 96 25/1 18 18" ]] || die "part2: $(probe_counts part2.avi)"
  printf "file '%s'\n" part1.avi part2.avi >segments.txt
  ffmpeg -v error -f concat -safe 0 -i segments.txt -c copy joined.avi || die "ffmpeg concat failed"
  [[ $(probe_counts joined.avi) == "mjpeg 160 96 25/1 30 30" ]] || die "joined: $(probe_counts joined.avi)"
  [[ -z $(ffmpeg -v error -xerror -i joined.avi -f null - 2>&1) ]] || die "ffmpeg reports errors"
  mkdir one joined
  ffmpeg -v error -i full.avi -c copy -f image2 one/%03d.jpg || die "cannot extract the frames"
  ffmpeg -v error -i joined.avi -c copy -f image2 joined/%03d.jpg || die "cannot extract the frames"
  [[ $(ls joined | wc -l) -eq 30 ]] || die "$(ls joined | wc -l) frames extracted"
  local f
  for f in one/*.jpg; do same_bytes "$f" "joined/${f#one/}"; done
  # A middle range through stdin (read sequentially) and raw M-JPEG segments joined by cat.
  expect_ok encode in.y4m -o full.mjpeg --mode cpu --quiet
  "$MJPEG" encode - -o a.mjpeg --mode cpu --frames 7 --quiet <in.y4m || die "segment a failed"
  "$MJPEG" encode - -o b.mjpeg --mode cpu --start 7 --frames 16 --quiet <in.y4m || die "segment b failed"
  expect_ok encode in.y4m -o c.mjpeg --mode cpu --start 23 --frames 100 --quiet
  cat a.mjpeg b.mjpeg c.mjpeg >joined.mjpeg
  same_bytes joined.mjpeg full.mjpeg
  echo "ok: 2 AVI segments joined == one pass (30 frames); 3 .mjpeg segments == one pass"
}

case_start_errors() {
  make_y4m in.y4m 5 64x48
  expect_fail 1 encode in.y4m -o out.avi --start 5 --mode cpu --quiet
  grep -qx "mjpeg: error: 'in.y4m' has 5 frames, all before --start 5 (frames count from 0: its last is --start 4)" err.txt ||
    die "$(cat err.txt)"
  expect_fail 2 encode in.y4m -o out.avi --start -1
  expect_fail 2 encode in.y4m -o out.avi --start x
  expect_fail 2 encode "$SAMPLE" -o out.avi --start 1
  grep -q -- "--start applies to a stream input" err.txt || die "$(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
}
