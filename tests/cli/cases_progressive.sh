# --progressive: SOF2 by spectral selection (sourced by cli_test.sh).

# The scan script of --progressive in cjpeg's -scans syntax (colour; gray: component 0 only).
write_scans() {
  if [[ ${2:-} == gray ]]; then
    printf '0: 0-0, 0, 0;\n0: 1-2, 0, 0;\n0: 3-9, 0, 0;\n0: 10-63, 0, 0;\n' >"$1"
  else
    printf '0,1,2: 0-0, 0, 0;\n0: 1-2, 0, 0;\n0: 3-9, 0, 0;\n0: 10-63, 0, 0;\n1: 1-63, 0, 0;\n2: 1-63, 0, 0;\n' >"$1"
  fi
}

case_progressive_matches_cjpeg_scans() {
  write_scans s.txt
  write_scans g.txt gray
  against_cjpeg "$SAMPLE" "--progressive" "-quality 90 -sample 2x2 -scans s.txt"
  against_cjpeg "$SAMPLE" "--progressive --optimize -q 40 -s 444 -r 3" \
    "-quality 40 -sample 1x1 -optimize -restart 3B -scans s.txt"
  against_cjpeg "$SAMPLE" "--progressive -q 12 -s 422" "-quality 12 -sample 2x1 -scans s.txt"
  against_cjpeg "$SAMPLE" "--progressive -s gray -r 1" "-quality 90 -grayscale -restart 1B -scans g.txt"
  preset_section psnr 70 sec.txt
  against_cjpeg "$SAMPLE" "--progressive --tune psnr -q 70" "-qtables sec.txt -sample 2x2 -scans s.txt"
  make_qtables 3 t.txt
  against_cjpeg "$SAMPLE" "--progressive --qtables t.txt --qslots 0,2,1 -q 60" \
    "-quality 60 -qtables t.txt -qslots 0,2,1 -sample 2x2 -scans s.txt"
  # The file says what it is: SOF2.
  need_ffmpeg
  [[ $(ffprobe -v error -show_entries stream=profile -of csv=p=0 ours.jpg) == Progressive ]] ||
    die "ffprobe does not see a progressive JPEG"
}

case_progressive_avi_decodes_in_ffmpeg() {
  need_ffmpeg
  need_cjpeg
  make_y4m in.y4m 20
  write_scans s.txt
  local r
  for r in 0 4; do
    rm -rf dump && mkdir dump
    expect_ok encode in.y4m -o prog$r.avi --progressive -r $r --quiet --mode cpu --dump-input dump
    expect_ok encode in.y4m -o opt$r.avi --optimize -r $r --quiet --mode cpu
    local got
    got=$(probe_counts prog$r.avi)
    [[ $got == "mjpeg 320 180 25/1 20 20" ]] || die "ffprobe says: $got"
    [[ -z $(ffmpeg -v error -xerror -i prog$r.avi -f null - 2>&1) ]] || die "ffmpeg reports errors"
    # Every frame decodes to the same pixels as the sequential --optimize frame (the same
    # coefficients, coded differently).
    local a b
    a=$(ffmpeg -v error -i prog$r.avi -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}')
    b=$(ffmpeg -v error -i opt$r.avi -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}')
    [[ $(wc -l <<<"$a") -eq 20 && $a == "$b" ]] ||
      die "progressive frames decode to other pixels than --optimize (-r $r)"
    # The first and last frames are cjpeg's file of the pixels they were encoded from.
    rm -f f*.jpg
    ffmpeg -v error -i prog$r.avi -c copy -f image2 f%d.jpg || die "cannot extract the frames"
    local n
    for n in 1 20; do
      "$CJPEG" -quality 90 -sample 2x2 -restart ${r}B -scans s.txt \
        -outfile c$n.jpg "dump/$(printf '%06d' $n).ppm" || die "cjpeg failed"
      same_bytes f$n.jpg c$n.jpg
    done
    echo "ok: -r $r: $(stat -c %s prog$r.avi) bytes progressive, $(stat -c %s opt$r.avi) --optimize"
  done
}

case_progressive_in_quality_sweep_and_errors() {
  expect_ok quality --sweep "$SAMPLE" --qualities 50 --tunes psnr --progressive --csv s.csv
  grep -q '^mjpeg --tune psnr --progressive,50,' s.csv || die "no --progressive point: $(cat s.csv)"
  grep -q '^mjpeg --tune psnr --optimize,50,' s.csv || die "no --optimize point: $(cat s.csv)"
  expect_fail 2 quality "$SAMPLE" "$SAMPLE" --progressive
  grep -q -- "--progressive" err.txt || die "the error does not name --progressive"
}
