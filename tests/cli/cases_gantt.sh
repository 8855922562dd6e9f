# Cases of `mjpeg gantt` (sourced by cli_test.sh; its helpers are available).

# gantt_write_trace FILE FRAMES: a small Chrome trace of an SOK run (pid 1: upload, kernel and
# download of each frame one after another on the default stream, 100 us each) and an AOK run
# (pid 2: the same spans overlapped on three streams), each frame then entropy-coded (50 us).
gantt_write_trace() {
  local f frames=$2
  {
    cat <<'JSON'
{"displayTimeUnit": "ms",
 "otherData": {"runs": [{"name": "SOK", "wall_ms": 1.85, "fps": 3243},
                        {"name": "AOK", "wall_ms": 0.85, "fps": 7059, "frames": 6}]},
 "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "SOK"}},
  {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "AOK"}},
  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "GPU (default stream)"}},
  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "entropy 0"}},
  {"ph": "M", "name": "thread_name", "pid": 2, "tid": 1, "args": {"name": "GPU upload stream"}},
  {"ph": "M", "name": "thread_name", "pid": 2, "tid": 2, "args": {"name": "GPU kernel stream"}},
  {"ph": "M", "name": "thread_name", "pid": 2, "tid": 3, "args": {"name": "GPU download stream"}},
  {"ph": "M", "name": "thread_name", "pid": 2, "tid": 4, "args": {"name": "entropy 0"}},
  {"ph": "C", "name": "slots in use", "pid": 2, "ts": 0, "args": {"used": 2}},
JSON
    for ((f = 0; f < frames; f++)); do
      local s=$((300 * f)) a=$((100 * f))
      printf '  {"ph":"X","name":"upload","cat":"gpu","pid":1,"tid":1,"ts":%d,"dur":100,"args":{"frame":%d}},\n' $s $f
      printf '  {"ph":"X","name":"kernel","cat":"gpu","pid":1,"tid":1,"ts":%d,"dur":100,"args":{"frame":%d}},\n' $((s + 100)) $f
      printf '  {"ph":"X","name":"download","cat":"gpu","pid":1,"tid":1,"ts":%d,"dur":100,"args":{"frame":%d}},\n' $((s + 200)) $f
      printf '  {"ph":"X","name":"entropy","cat":"host","pid":1,"tid":2,"ts":%d,"dur":50,"args":{"frame":%d}},\n' $((s + 300)) $f
      printf '  {"ph":"X","name":"upload","cat":"gpu","pid":2,"tid":1,"ts":%d,"dur":100,"args":{"frame":%d}},\n' $a $f
      printf '  {"ph":"X","name":"kernel","cat":"gpu","pid":2,"tid":2,"ts":%d,"dur":100,"args":{"frame":%d}},\n' $((a + 100)) $f
      printf '  {"ph":"X","name":"download","cat":"gpu","pid":2,"tid":3,"ts":%d,"dur":100,"args":{"frame":%d}},\n' $((a + 200)) $f
      printf '  {"ph":"X","name":"entropy","cat":"host","pid":2,"tid":4,"ts":%d,"dur":50,"args":{"frame":%d}},\n' $((a + 300)) $f
    done
    printf '  {"ph":"i","name":"end","pid":2,"tid":4,"ts":%d,"s":"t"}\n]}\n' $((100 * frames + 300))
  } >"$1"
}

# gantt_count_rgb PNG "X:Y:W:H" RRGGBB: pixels of exactly that colour in the PNG's rectangle.
gantt_count_rgb() {
  ffmpeg -v error -i "$1" -vf "crop=$2" -f rawvideo -pix_fmt rgb24 - | od -An -v -tx1 -w3 |
    tr -d ' ' | grep -c "^$3\$"
}

case_gantt_draws_sok_above_aok() {
  gantt_write_trace trace.json 6
  if ! have_opencv; then  # the GPU machine's build: says it cannot draw
    expect_fail 1 gantt trace.json -o g.png
    grep -q 'OpenCV' err.txt || die "error does not say OpenCV is missing: $(cat err.txt)"
    [[ ! -e g.png ]] || die "g.png created"
    return
  fi
  expect_ok gantt trace.json -o g.png --width 1600
  [[ $(head -c 8 g.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || die "not a PNG"
  # "mjpeg: wrote g.png: 1600xH PNG, N bytes; runs SOK, AOK; all 6 frames; axis 0.000 .. 1.850 ms"
  local summary height
  summary=$(cat err.txt)
  [[ $summary =~ ^mjpeg:\ wrote\ g\.png:\ 1600x([0-9]+)\ PNG ]] || die "summary: $summary"
  height=${BASH_REMATCH[1]}
  [[ $summary == *"runs SOK, AOK; all 6 frames; axis 0.000 .. 1.850 ms"* ]] || die "summary: $summary"
  echo "ok: $summary"
  need_ffmpeg
  local size
  size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 g.png)
  [[ $size == "1600,$height" ]] || die "ffprobe says $size, the summary 1600x$height"
  # The upload colour (#1f77b4): in the legend, on the SOK panel's stream row and on the AOK
  # panel's upload row. The lower half of the picture holds the AOK panel; the upload bars
  # there fill most of 6 x 100 us of 1850 us over ~1400 px at 18 px high (> 3000 pixels).
  local lower
  lower=$(gantt_count_rgb g.png "1600:$((height / 2)):0:$((height / 2))" 1f77b4)
  [[ $lower -gt 3000 ]] || die "only $lower upload-coloured pixels in the AOK half"
  echo "ok: $lower upload-coloured pixels in the lower (AOK) half"
  # The right quarter of the AOK half is after AOK's end (0.85 of 1.85 ms): no bar colours.
  local late
  late=$(gantt_count_rgb g.png "400:$((height / 2)):1200:$((height / 2))" 1f77b4)
  [[ $late -eq 0 ]] || die "$late upload-coloured pixels after AOK's end"
}
case_gantt_windows() {
  have_opencv || skip "built without OpenCV"
  gantt_write_trace trace.json 40
  expect_ok gantt trace.json -o g.png
  grep -q 'first 16 frames; axis 0.000 .. 4.850 ms' err.txt || die "default window: $(cat err.txt)"
  expect_ok gantt trace.json -o g.png -y --frames 3
  grep -q 'first 3 frames; axis 0.000 .. 0.950 ms' err.txt || die "--frames 3: $(cat err.txt)"
  expect_ok gantt trace.json -o g.png -y --frames 010 --width 01000  # decimal, not octal
  grep -q '1000x[0-9]* PNG.*first 10 frames' err.txt || die "--frames 010: $(cat err.txt)"
  expect_ok gantt trace.json -o g.png -y --all
  grep -q 'whole trace; axis 0.000 .. 12.050 ms' err.txt || die "--all: $(cat err.txt)"
  expect_ok gantt trace.json -o g.png -y --from 1 --to 2.5
  grep -q '1 .. 2.5 ms; axis 1.000 .. 2.500 ms' err.txt || die "--from/--to: $(cat err.txt)"
  expect_ok gantt trace.json -o g.png -y --from 11 --quiet
  [[ ! -s err.txt ]] || die "--quiet printed: $(cat err.txt)"
}
case_gantt_bad_traces_exit_1() {
  gantt_write_trace good.json 4
  printf '{"traceEvents": [' >truncated.json
  printf 'not json at all\n' >text.json
  printf '{"traceEvents": []}' >empty.json
  printf '{"events": [{"ph": "X"}]}' >other.json
  head -c 600 good.json >cut.json
  sed 's/"ts":100,/"ts":"soon",/' good.json >badts.json
  mkdir dir.json
  local f
  for f in truncated.json text.json empty.json other.json cut.json badts.json missing.json \
    dir.json; do
    expect_fail 1 gantt "$f" -o g.png
    [[ ! -e g.png ]] || die "g.png created for $f"
    if have_opencv; then
      grep -q "$f" err.txt || die "error does not name $f: $(cat err.txt)"
    fi
  done
}
case_gantt_existing_output_refused_without_y() {
  gantt_write_trace trace.json 4
  printf 'precious' >g.png
  expect_fail 1 gantt trace.json -o g.png
  [[ $(cat g.png) == precious ]] || die "g.png was replaced without -y"
  have_opencv || return 0
  grep -q 'exists' err.txt || die "error does not say the output exists: $(cat err.txt)"
  expect_ok gantt trace.json -o g.png -y
  [[ $(head -c 4 g.png | tail -c 3) == PNG ]] || die "-y did not replace g.png"
  no_temp_files .
}
case_gantt_usage_errors_exit_2() {
  gantt_write_trace trace.json 4
  expect_fail 2 gantt trace.json -o g.jpg
  expect_fail 2 gantt trace.json
  expect_fail 2 gantt trace.json -o g.png --frames 4 --all
  expect_fail 2 gantt trace.json -o g.png --frames 4 --from 1
  expect_fail 2 gantt trace.json -o g.png --to 4 --all
  grep -q 'choose one window' err.txt || die "unclear error: $(cat err.txt)"
  expect_fail 2 gantt trace.json -o g.png --from -inf
  expect_fail 2 gantt trace.json -o g.png --to nan
  expect_fail 2 gantt trace.json -o g.png --frames 0
  expect_fail 2 gantt trace.json -o g.png --width 100
  cp trace.json t.png
  expect_fail 2 gantt t.png -o t.png -y
  [[ ! -e g.png && ! -e g.jpg ]] || die "an output was created"
  if have_opencv; then
    expect_fail 2 gantt trace.json -o g.png --from 2 --to 1
    expect_fail 2 gantt trace.json -o g.png --from 50  # after every span
    grep -q 'the trace ends at 1.250 ms' err.txt || die "unclear error: $(cat err.txt)"
    expect_fail 2 gantt trace.json -o g.png --from 50 --to 60
    grep -q 'no span' err.txt || die "unclear error: $(cat err.txt)"
  fi
  "$MJPEG" gantt --help >help.txt || die "gantt --help failed"
  grep -q -- 'default --frames 16' help.txt || die "--help does not give the default window"
}
