# Cases of the outputs (sourced by cli_test.sh; its helpers are available): quality figures of
# every output kind, pattern outputs published whole or not at all, temporary files, names.

# mean_rgb FILE: the mean PSNR RGB of a summary printed by `quality` or `encode --psnr`.
mean_rgb() { sed -n 's/^  PSNR RGB  min *[0-9.inf]*  mean *\([0-9.inf]*\) .*/\1/p' "$1" | head -1; }

case_psnr_and_quality_agree_on_every_output_kind() {
  need_ffmpeg
  # An awkward size (334x91: not a multiple of 8 or 16, odd height), a lossless 4:2:0 source of
  # real content (real_clip, cases_inputs.sh), whose RGB is libswscale's at that odd height.
  real_clip clip.mkv 334x91 yuv420p ffv1 3
  need_libav clip.mkv
  mkdir src f
  ffmpeg -nostdin -v error -i clip.mkv -pix_fmt rgb24 src/%03d.ppm || die "ffmpeg cannot decode"
  local out psnr qual ref fmt
  for out in out.avi out.mjpeg f/%03d.jpg one.jpg; do
    local input=clip.mkv refsrc=src/%03d.ppm
    [[ $out == one.jpg ]] && input=src/001.ppm refsrc=src/001.ppm
    expect_ok encode "$input" -o "$out" --psnr -q 80
    psnr=$(mean_rgb err.txt)
    "$MJPEG" quality "$input" "$out" >q.txt 2>err.txt || die "quality $out: $(cat err.txt)"
    qual=$(mean_rgb q.txt)
    # ffmpeg's own decode of what was written, against ffmpeg's RGB of the source.
    rm -rf dec && mkdir dec
    fmt=()
    [[ $out == *.mjpeg ]] && fmt=(-f mjpeg)
    ffmpeg -nostdin -v error "${fmt[@]}" -i "$out" -pix_fmt rgb24 dec/%03d.ppm || die "ffmpeg cannot decode $out"
    ref=$(ffmpeg -nostdin -v info -i "$refsrc" -i dec/%03d.ppm -lavfi psnr -f null - 2>&1 |
      sed -n 's/.*PSNR r:.* average:\([0-9.inf]*\).*/\1/p' | tail -1)
    [[ -n $psnr && -n $qual && -n $ref ]] || die "$out: missing figures (--psnr '$psnr', quality '$qual', ffmpeg '$ref')"
    [[ $psnr == "$qual" ]] || die "$out: encode --psnr says $psnr dB, quality says $qual dB"
    awk -v a="$qual" -v b="$ref" 'BEGIN { d = a - b; exit !(d < 0.006 && d > -0.006) }' ||
      die "$out: quality says $qual dB, ffmpeg's psnr filter $ref dB"
    echo "$out: --psnr $psnr, quality $qual, ffmpeg $ref"
  done
}

case_failed_pattern_output_leaves_nothing() {
  make_y4m in.y4m 20 64x48
  mkdir fr
  # A truncated input: the frames before the damage are not left behind.
  head -c $(( $(stat -c %s in.y4m) - 3000 )) in.y4m >cut.y4m
  expect_fail 1 encode cut.y4m -o fr/%04d.jpg --quiet
  [[ -z $(ls -A fr) ]] || die "left in fr/ after a truncated input: $(ls -A fr)"
  # A write that fails part-way (file-size limit: the first frames are small, the later ones
  # noise at q100, too big).
  ffmpeg -nostdin -v error -filter_complex \
    "color=black:s=320x180:r=25:d=0.12[a];testsrc2=s=320x180:r=25:d=0.08,noise=alls=100:allf=t[b];[a][b]concat=n=2" \
    -pix_fmt yuv420p -f yuv4mpegpipe grow.y4m || die "ffmpeg cannot make the clip"
  local rc=0
  (ulimit -f 20; exec "$MJPEG" encode grow.y4m -o fr/%04d.jpg -q 100 -s 444 --quiet) \
    >out.txt 2>err.txt || rc=$?
  [[ $rc -eq 1 ]] && grep -q 'File too large' err.txt || die "rc $rc: $(cat err.txt)"
  [[ -z $(ls -A fr) ]] || die "left in fr/ after a failed write: $(ls -A fr)"
  # A later name that exists, without -y: none of the earlier frames appear either.
  printf 'precious' >fr/0004.jpg
  expect_fail 1 encode in.y4m -o fr/%04d.jpg --quiet
  [[ $(ls -A fr) == 0004.jpg && $(cat fr/0004.jpg) == precious ]] || die "fr/ changed: $(ls -A fr)"
  # Success leaves all of them (-y replaces 0004.jpg).
  expect_ok encode in.y4m -o fr/%04d.jpg --quiet -y
  [[ $(ls -A fr | wc -l) -eq 20 ]] && ! grep -q precious fr/0004.jpg || die "fr/: $(ls -A fr)"
}

# big_y4m FILE: 12 frames of 1920x1080, slow enough to encode (q100 4:4:4, one thread) that a
# second signal arrives while the first one's stop is still finishing the frames in flight.
big_y4m() { make_y4m "$1" 12 1920x1080; }
case_second_interrupt_removes_temporary_files() {
  need_ffmpeg
  big_y4m in.y4m
  local out pid
  mkdir fr
  for out in out.avi fr/%03d.jpg; do
    # The previous round's progress lines must not pass for this one's (the signals would then
    # reach the shell's fork before it runs mjpeg: exit 143).
    rm -f err.txt
    "$MJPEG" encode in.y4m -o "$out" -q 100 -s 444 --mode cpu --producers 1 \
      --entropy-threads 1 --progress 2>err.txt &
    pid=$!
    bg $pid
    wait_until 120 "mjpeg's first frame" progress_shown
    # Both signals pending at once (another signal: it cannot merge with the first): sent to
    # the stopped process, so that on a busy machine the first one's clean stop cannot finish
    # the output before the second one arrives.
    kill -STOP $pid
    kill -INT $pid
    kill -TERM $pid
    kill -CONT $pid
    wait_exit $pid
    [[ $RC -eq 130 ]] || die "$out: exit code $RC after two signals, expected 130: $(cat err.txt)"
    grep '^mjpeg: error: ' err.txt >errors.txt
    [[ $(wc -l <errors.txt) -eq 1 ]] &&
      grep -q '^mjpeg: error: interrupted again; stopped at once, nothing written' errors.txt ||
      die "$out: expected one 'interrupted again' line: $(cat err.txt)"
    [[ ! -e out.avi && -z $(ls -A fr) ]] || die "$out: output left: $(ls -A . fr)"
    no_temp_files .
  done
}
case_long_output_names() {
  make_y4m in.y4m 3 64x48
  local long
  long=$(printf 'n%.0s' {1..246})  # + ".avi" = 250 bytes, + ".jpg", the limit is 255
  expect_ok encode in.y4m -o "$long.avi" --quiet
  [[ $(probe_counts "$long.avi") == "mjpeg 64 48 25/1 3 3" ]] || die "ffprobe: $(probe_counts "$long.avi")"
  expect_ok encode "$SAMPLE" -o "${long}xxxxx.jpg" --quiet  # 255 bytes
  [[ -s ${long}xxxxx.jpg ]] || die "the 255-byte JPEG name is missing"
  mkdir fr
  expect_ok encode in.y4m -o "fr/${long}%03d.jpg" --quiet
  [[ $(ls fr | wc -l) -eq 3 ]] || die "fr/: $(ls fr)"
  no_temp_files .
  no_temp_files fr
}

case_stdout_output_refused_on_a_terminal() {
  make_y4m in.y4m 4 64x48
  # -o -: the JPEGs back to back on standard output (as .mjpeg), for a pipe.
  "$MJPEG" encode in.y4m -o - --quiet 2>err.txt >out.mjpeg || die "-o - failed: $(cat err.txt)"
  [[ $(ffprobe -v error -f mjpeg -count_frames -show_entries stream=nb_read_frames -of csv=p=0 out.mjpeg) == 4 ]] ||
    die "ffprobe does not read 4 frames from -o -"
  expect_ok encode in.y4m -o out2.mjpeg --quiet
  same_bytes out.mjpeg out2.mjpeg
  # ... and refused when standard output is a terminal (binary on the screen).
  command -v script >/dev/null || skip "script (util-linux) not found"
  script -qec "\"$MJPEG\" encode in.y4m -o - --quiet; echo rc=\$?" /dev/null >tty.txt 2>&1
  grep -q 'mjpeg: error: -o - writes an M-JPEG stream to standard output, which is a terminal' tty.txt &&
    grep -q 'rc=2' tty.txt || die "not refused on a terminal: $(cat -v tty.txt | head -5)"
}
case_device_and_fifo_outputs_take_the_stream() {
  make_y4m in.y4m 4 64x48
  expect_ok encode in.y4m -o ref.mjpeg --quiet
  # /dev/null: the stream is written there (a benchmark's output), nothing created, no -y asked.
  expect_ok encode in.y4m -o /dev/null
  grep -q '^mjpeg: wrote /dev/null: 4 frames' err.txt || die "summary: $(cat err.txt)"
  expect_ok encode "$SAMPLE" -o /dev/null --quiet  # a still image too
  # A named pipe of any name: the JPEGs back to back, as -o - writes them.
  mkfifo stream
  timeout 60 cat stream >from_fifo.bin 2>/dev/null &  # (bounded: no writer would block it)
  local reader=$!
  expect_ok encode in.y4m -o stream --quiet
  wait "$reader" || die "the FIFO's reader failed"
  same_bytes from_fifo.bin ref.mjpeg
  [[ -p stream ]] || die "the FIFO was replaced"
  # A regular file without an output extension is still not an output, and stays as it was.
  printf 'keep' >plain
  expect_fail 2 encode in.y4m -o plain -y
  grep -q "unsupported output type (no extension) of 'plain'" err.txt || die "unclear: $(cat err.txt)"
  [[ $(cat plain) == keep ]] || die "plain was written"
  # A folder is named as one, with what to write instead.
  mkdir -p frames
  expect_fail 2 encode in.y4m -o frames/
  grep -q "^mjpeg: error: 'frames/' is a folder; name a file in it (such as frames/out.avi) or a pattern (frames/%05d.jpg)$" err.txt ||
    die "folder: $(cat err.txt)"
  expect_fail 2 encode in.y4m -o frames
  grep -q "'frames' is a folder; name a file in it (such as frames/out.avi)" err.txt || die "folder: $(cat err.txt)"
  [[ -z $(ls -A frames) ]] || die "something was written into the folder"
  no_temp_files .
}
case_one_frame_of_a_stream_to_jpg() {
  need_ffmpeg
  need_cjpeg
  make_h264 clip.mp4 5 160x90
  need_libav clip.mp4
  ffmpeg -nostdin -v error -i clip.mp4 -frames:v 1 -pix_fmt rgb24 first.ppm || die "ffmpeg failed"
  "$CJPEG" -quality 90 -outfile ref.jpg first.ppm || die "cjpeg failed"
  # A video with --frames 1 to a .jpg: its first frame, as cjpeg encodes ffmpeg's RGB of it.
  expect_ok encode clip.mp4 -o one.jpg --frames 1
  same_bytes one.jpg ref.jpg
  grep -q '^mjpeg: wrote one.jpg: 1 frame,' err.txt || die "summary: $(cat err.txt)"
  expect_fail 2 encode clip.mp4 -o all.jpg --quiet  # without --frames 1: a usage error
  grep -q -- "add --frames 1" err.txt || die "unclear: $(cat err.txt)"
  # A GIF to a .jpg: its first frame (OpenCV reads no GIF; FFmpeg's libraries do).
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=160x90:rate=10 -frames:v 3 anim.gif &&
    ffmpeg -nostdin -v error -i anim.gif -frames:v 1 -pix_fmt rgb24 gif1.ppm || die "ffmpeg: GIF"
  "$CJPEG" -quality 90 -outfile gref.jpg gif1.ppm || die "cjpeg failed"
  expect_ok encode anim.gif -o gif.jpg
  grep -q "note: 'gif.jpg' holds one picture: the first frame of 'anim.gif' is encoded" err.txt ||
    die "no note: $(cat err.txt)"
  same_bytes gif.jpg gref.jpg
  [[ ! -e all.jpg ]] || die "all.jpg created"
  no_temp_files .
}

case_wording_of_messages() {
  make_y4m in.y4m 1 64x48
  expect_ok encode in.y4m -o one.avi
  grep -q '^mjpeg: wrote one.avi: 1 frame,' err.txt || die "summary: $(cat err.txt)"
  # A misspelt option is named as unknown (CLI11 said "not expected: 90 --qualty").
  expect_fail 2 encode in.y4m -o x.avi --qualty 90
  grep -qx 'mjpeg: error: unknown option --qualty (see mjpeg encode --help)' err.txt ||
    die "misspelt option: $(cat err.txt)"
  expect_fail 2 --bogus
  grep -qx 'mjpeg: error: unknown option --bogus (see mjpeg --help)' err.txt || die "$(cat err.txt)"
  # quality's usage line names its files.
  expect_ok quality --help
  grep -q '^Usage: mjpeg quality \[OPTIONS\] \[SOURCE ENCODED\]$' out.txt ||
    die "usage line: $(grep Usage out.txt)"
  # Counts of one.
  expect_ok compare in.y4m --frames 1 --repeat 1 --producers 1 --entropy-threads 1 --slots 1 \
    --modes cpu
  grep -q ', 1 frame, 1 producer, 1 entropy thread, 1 slot, .*median of 1 run ' out.txt ||
    die "compare's counts: $(head -3 out.txt)"
  # One CUDA note where an NVIDIA GPU cannot be used, and only when the mode was chosen
  # automatically (a machine without an NVIDIA driver gets none: cases_everyday.sh).
  if "$MJPEG" info | grep -q '^CUDA devices: none' && [[ -e /proc/driver/nvidia ]]; then
    expect_ok encode in.y4m -o a.avi
    [[ $(grep -ci 'cuda' err.txt) -eq 1 && $(grep -c '^mjpeg: note: .*CUDA' err.txt) -eq 1 ]] ||
      die "expected one CUDA note: $(cat err.txt)"
    expect_ok encode in.y4m -o b.avi --mode cpu
    ! grep -qi 'cuda' err.txt || die "a CUDA note with --mode cpu: $(cat err.txt)"
  fi
}

# --stats: each stage's busy time, cores (busy over the wall time) and microseconds per frame
# (busy over the frames), the split, the bound and its rate, consistent with each other and
# with what was encoded; no GPU line in cpu mode.
case_stats_report_what_the_encode_did() {
  make_y4m in.y4m 60 640x360
  expect_ok encode in.y4m -o out.avi --mode cpu --stats --producers 1 --entropy-threads 2
  grep -q '^mjpeg: wrote out.avi: 60 frames, .* (cpu mode)' err.txt || die "summary: $(cat err.txt)"
  [[ $(probe_counts out.avi) == "mjpeg 640 360 25/1 60 60" ]] || die "ffprobe: $(probe_counts out.avi)"
  ! grep -qE 'upload|gpu offload|wait for coefficients|per stream buffer' err.txt ||
    die "GPU figures in cpu mode: $(cat err.txt)"
  awk -v frames=60 -v want_split="1 producer + 2 entropy threads" '
    function fail(m) { print m; bad = 1 }
    /^mjpeg: stages over [0-9.]+ s wall/ {
      wall = $4
      if (index($0, "(busy s, cores, us per frame):") == 0) fail("columns: " $0)
    }
    /^  [a-z]/ {
      busy = $(NF - 2); cores = $(NF - 1); us = $NF
      name = $0; sub(/^  /, "", name); sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+$/, "", name)
      stage[name] = busy
      # cores = busy / wall, each printed rounded (cores to 0.005, busy and wall to 0.0005 s:
      # on a short run the quotient of the rounded figures moves by more than 0.01)
      tol = wall > 0 ? 0.006 + 0.0005 / wall + busy * 0.0005 / (wall * wall) : 0
      if (wall > 0 && (cores - busy / wall > tol || busy / wall - cores > tol))
        fail(name ": " cores " cores for " busy " s busy over " wall " s")
      # us = busy / frames; busy is printed to the millisecond, so within 0.5 ms / frames
      d = us - 1e6 * busy / frames
      if (d > 500 / frames + 0.1 || -d > 500 / frames + 0.1)
        fail(name ": " us " us per frame for " busy " s busy over " frames " frames")
      lanes = name ~ /^(transform|entropy)/ ? 2 : 1
      if (busy > lanes * wall + 0.002) fail(name ": busy " busy " s on " lanes " threads in " wall " s")
    }
    /^mjpeg: [0-9]+ producers? \+/ {
      split_line = $0
      if (index($0, "mjpeg: " want_split ";") != 1) fail("split: " $0)
      if (match($0, /bound by [a-z+ ]+ \(/)) bound = substr($0, RSTART + 9, RLENGTH - 11)
      if (match($0, /\([0-9.]+ fps alone\)/)) alone = substr($0, RSTART + 1, RLENGTH - 13) + 0
    }
    END {
      if (wall <= 0) fail("no stages line")
      if (!("transform (cpu)" in stage) || !("entropy coding" in stage)) fail("no transform or entropy line")
      if (split_line == "") fail("no split line")
      # The bound: the stage with the fewest frames per second its threads alone allow,
      # lanes * frames / busy.
      if (bound == "transform+entropy") busy = stage["transform (cpu)"] + stage["entropy coding"]
      else if (bound == "produce") busy = stage["read/decode (producers)"]
      else if (bound == "write") busy = stage["write"]
      else fail("bound by \"" bound "\"")
      lanes = bound == "transform+entropy" ? 2 : 1
      if (busy > 0) {
        want = lanes * frames / busy
        if (alone < 0.95 * want || alone > 1.05 * want)
          fail("bound " bound ": " alone " fps alone, its busy time gives " want)
      }
      exit bad
    }' err.txt >stats_check.txt || die "--stats: $(cat stats_check.txt); $(cat err.txt)"
  # The set-up before the first frame (the cpu mode: no device check, no slot memory), and no
  # word of a mode chosen: --mode asked for it.
  grep -qE '^mjpeg: set-up: devices checked 0\.000 s, input opened [0-9.]+ s, encode started at [0-9.]+ s; pipeline set-up [0-9.]+ s; first frame written at [0-9.]+ s$' err.txt ||
    die "--stats set-up: $(cat err.txt)"
  grep -q '^mjpeg: mode:' err.txt && die "--mode cpu, yet a mode chosen: $(cat err.txt)"
  # Without --mode, 60 frames of 640x360 are too little work for a GPU on any machine: the cpu
  # mode, the same bytes, and --stats says why (frames that need no decoding: 240 Mpixel per
  # core; compressed video, which NVDEC would decode: 40).
  expect_ok encode in.y4m -o auto.avi --stats
  same_bytes auto.avi out.avi
  grep -qE '^mjpeg: mode: the cpu mode, chosen for little work \(60 frames of 640x360, 14 Mpixel, below [0-9]+ cores x 240 Mpixel; --mode aok uses the GPU\)$' err.txt ||
    die "no mode chosen for little work: $(cat err.txt)"
  ffmpeg -v error -i in.y4m -c:v mpeg4 -q:v 3 -y in.mp4 || die "ffmpeg could not make in.mp4"
  expect_ok encode in.mp4 -o video.avi --stats
  grep -qE '^mjpeg: mode: the cpu mode, chosen for little work \(60 frames of 640x360, 14 Mpixel, below [0-9]+ cores x 40 Mpixel; --mode aok uses the GPU\)$' err.txt ||
    die "no mode chosen for little work of a video: $(cat err.txt)"
}

# --progress: progress lines also when stderr is not a terminal, four a second at most, their
# frame counts rising; none without it, and none with --quiet.
case_progress_lines_at_most_four_a_second() {
  make_y4m in.y4m 24 160x96
  local header frame=$((160 * 96 * 3 / 2 + 6))
  header=$(($(head -n1 in.y4m | wc -c)))
  # slow_feed: the clip through a pipe at about ten frames a second (2.4 s or more).
  slow_feed() {
    head -c "$header" in.y4m
    local i
    for ((i = 0; i < 24; ++i)); do
      tail -c +$((header + i * frame + 1)) in.y4m | head -c "$frame"
      sleep 0.1
    done
  }
  slow_feed | "$MJPEG" encode - -o out.avi --mode cpu --progress 2>err.txt ||
    die "encode failed: $(cat err.txt)"
  [[ $(probe_counts out.avi) == "mjpeg 160 96 25/1 24 24" ]] || die "ffprobe: $(probe_counts out.avi)"
  local wall lines
  wall=$(sed -n 's/^mjpeg: wrote out.avi: .*, \([0-9.]*\) s$/\1/p' err.txt)
  [[ -n $wall ]] || die "no summary: $(cat err.txt)"
  lines=$(grep -c '^mjpeg: progress: [0-9]* frames\{0,1\}, [0-9.]* fps$' err.txt)
  awk -v n="$lines" -v w="$wall" 'BEGIN { exit !(n >= 2 && n <= 4 * w + 1) }' ||
    die "$lines progress lines in $wall s (2 at least, four a second at most): $(cat err.txt)"
  grep '^mjpeg: progress: ' err.txt | awk '{ n = $3 + 0; if (n <= last) exit 1; last = n }' ||
    die "frame counts do not rise: $(grep progress err.txt)"
  expect_ok encode in.y4m -o out2.avi --mode cpu
  ! grep -q '^mjpeg: progress' err.txt || die "progress lines without --progress: $(cat err.txt)"
  expect_ok encode in.y4m -o out3.avi --mode cpu --progress --quiet
  [[ ! -s err.txt ]] || die "--quiet --progress printed: $(cat err.txt)"
}
