# Cases of `mjpeg compare` (sourced by cli_test.sh; its helpers are available).

# compare_json_check FILE [TRACE]: the JSON says every mode's output was identical (and, where
# the libjpeg-turbo row ran, as many bytes as TurboJPEG wrote for the same frames); each mode's
# figures agree with each other: fps is frames over the stages' time of the run shown, each
# stage's rate its lanes times frames over its busy time, the bound the slowest of them, "of
# it" their ratio, no GPU figure in cpu mode. The trace (if given) has complete events, one
# process per mode, and no overlapping spans on a track.
compare_json_check() {
  python3 - "$@" <<'PY' || die "compare outputs are not as expected"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["identical"] is True, "modes not identical"
modes = [m["mode"] for m in report["modes"]]
close = lambda a, b: abs(a - b) <= 1e-6 + 1e-3 * abs(b)
tj = report.get("libjpeg_turbo")
for m in report["modes"]:
    n = report["frames"]
    assert m["frames"] == n, m
    assert m["identical"] is True, m
    assert len(m["fps_of_runs"]) == report["repeat"], m
    assert min(m["fps_of_runs"]) <= m["fps"] <= max(m["fps_of_runs"]), m
    assert m["wall_s"] > m["setup_s"] >= 0, m
    assert close(m["fps"], n / (m["wall_s"] - m["setup_s"])), (m["fps"], m["wall_s"], m["setup_s"])
    for st in m["stages"]:
        assert st["lanes"] >= 1 and st["busy_s"] >= 0, st
        assert close(st["bound_fps"], st["lanes"] * n / st["busy_s"] if st["busy_s"] > 0 else 0), st
    slowest = min((st for st in m["stages"] if st["busy_s"] > 0), key=lambda st: st["bound_fps"])
    assert m["bound"]["stage"] == slowest["name"], (m["bound"], slowest)
    assert close(m["bound"]["fps"], slowest["bound_fps"]), (m["bound"], slowest)
    assert close(m["bound"]["of_bound"], m["fps"] / m["bound"]["fps"]), m["bound"]
    assert m["producers"] + m["entropy_threads"] >= 2, m
    if m["mode"] == "cpu":
        assert m["upload_bytes_per_frame"] == 0 and m["devices"] == [], m
        assert m["busy_s"]["transform_cpu"] > 0 and m["busy_s"]["gpu_dispatch"] == 0, m
    if tj and tj.get("identical"):
        assert m["jpeg_bytes"] == tj["jpeg_bytes"], (m["jpeg_bytes"], tj["jpeg_bytes"])
if len(sys.argv) > 2:
    trace = json.load(open(sys.argv[2]))
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(names.values()) == sorted(m.upper() for m in modes), names
    tracks = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    assert tracks, "no spans"
    for key, spans in tracks.items():
        spans.sort()
        for a, b in zip(spans, spans[1:]):
            assert a[1] <= b[0], f"overlap on {key}: {a} {b}"
print("compare outputs ok:", modes)
PY
}

case_compare_cpu_table_json_trace() {
  command -v python3 >/dev/null || skip "python3 not found"
  expect_ok compare "$SAMPLE" --modes cpu --frames 12 --repeat 2 --size 160x96 \
    --json report.json --trace trace.json --quiet
  grep -q '^CPU ' out.txt || die "no CPU row: $(cat out.txt)"
  grep -q 'bound by' out.txt || die "no bound column: $(cat out.txt)"
  grep -q 'outputs: cpu reference' out.txt || die "no outputs line: $(cat out.txt)"
  if "$MJPEG" info | grep -q '^TurboJPEG: yes'; then
    grep -q 'libjpeg-turbo identical' out.txt || die "libjpeg-turbo row not identical: $(cat out.txt)"
  fi
  compare_json_check report.json trace.json
  if have_opencv; then
    expect_ok compare "$SAMPLE" --modes cpu --frames 6 --repeat 1 --size 64x48 --gantt g.png --quiet
    [[ $(head -c 8 g.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || die "g.png is not a PNG"
  else
    expect_fail 1 compare "$SAMPLE" --modes cpu --frames 6 --gantt g.png
    [[ ! -e g.png ]] || die "g.png written by a build that cannot draw"
  fi
}

# An output in a folder that is not there is refused before any run (one line, no progress).
case_compare_output_in_missing_folder_exit_1() {
  local opt
  for opt in --json --trace; do
    expect_fail 1 compare "$SAMPLE" --modes cpu --frames 4 --repeat 1 --size 64x48 "$opt" no/such/f.json
    grep -q "output folder 'no/such' does not exist" err.txt || die "folder not named: $(cat err.txt)"
  done
  [[ ! -e no ]] || die "folders were created"
}

case_compare_video_input() {
  command -v python3 >/dev/null || skip "python3 not found"
  make_y4m in.y4m 6 128x72
  expect_ok compare in.y4m --modes cpu --repeat 1 --json report.json --quiet -q 75 -s 444
  python3 -c 'import json,sys; r=json.load(open("report.json")); assert r["frames"]==6 and r["width"]==128 and r["subsampling"]=="444", r' \
    || die "report does not describe the input: $(cat report.json)"
}

# The split and the slots asked for are the ones the runs use (and the report says).
case_compare_keeps_the_requested_counts() {
  command -v python3 >/dev/null || skip "python3 not found"
  expect_ok compare "$SAMPLE" --modes cpu --frames 8 --repeat 1 --size 96x64 --producers 1 \
    --entropy-threads 2 --slots 11 --json report.json --quiet
  python3 -c 'import json; m=json.load(open("report.json"))["modes"][0]; assert (m["slots"], m["producers"], m["entropy_threads"]) == (11, 1, 2), m' \
    || die "the report's counts are not the ones asked for: $(cat report.json)"
}

case_compare_usage_errors_exit_2() {
  expect_fail 2 compare "$SAMPLE" --modes cpu,gpu
  expect_fail 2 compare "$SAMPLE" --modes cpu,cpu
  expect_fail 2 compare "$SAMPLE" --size 10by10
  expect_fail 2 compare "$SAMPLE" --frames 0
  expect_fail 2 compare "$SAMPLE" --repeat 0
  make_y4m in.y4m 2
  expect_fail 2 compare in.y4m --size 64x64
}

case_compare_gpu_mode_without_device_exit_1() {
  "$MJPEG" info | grep -q '^CUDA devices: none' || skip "a CUDA device is present"
  expect_fail 1 compare "$SAMPLE" --modes cpu,aok --frames 2
  grep -q 'CUDA device' err.txt || die "error does not say why: $(cat err.txt)"
}
