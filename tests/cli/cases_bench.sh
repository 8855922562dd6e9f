# Cases of `mjpeg bench` (sourced by cli_test.sh; its helpers are available).

case_bench_small_sweeps_csv_and_plots() {
  expect_ok bench "$SAMPLE" --sizes 64x48,96x64 --threads 1,2 --slots 1,3 --stages 1,2 \
    --modes cpu --repeat 1 --frames 10 --csv points.csv --quiet
  [[ -s points.csv ]] || die "no CSV"
  head -1 points.csv | grep -q '^sweep,mode,width,height,frames,' || die "bad header: $(head -1 points.csv)"
  # resolution: 2 sizes x 1 mode; threads: 2 counts (+2 libjpeg-turbo rows when built in);
  # cpu: 2 thread counts (+2 libjpeg-turbo rows on as many threads); slots: 2; stages: none
  # (aok only).
  [[ $(grep -c '^resolution,cpu,' points.csv) -eq 2 ]] || die "resolution rows: $(cat points.csv)"
  [[ $(grep -c '^threads,cpu,64,48,' points.csv) -eq 2 ]] || die "threads rows: $(cat points.csv)"
  [[ $(grep -c '^slots,cpu,64,48,40,[0-9]*,[0-9]*,[13],' points.csv) -eq 2 ]] || die "slots rows: $(cat points.csv)"
  # The cpu sweep: 1 producer (it only hands out the in-memory frames) and T = 1, 2 workers.
  [[ $(grep -c '^cpu,cpu,64,48,40,1,[12],' points.csv) -eq 2 ]] || die "cpu rows: $(cat points.csv)"
  if "$MJPEG" info | grep -q '^TurboJPEG: yes'; then
    [[ $(grep -c '^threads,libjpeg-turbo,' points.csv) -eq 2 ]] || die "no libjpeg-turbo rows"
    [[ $(grep -c '^cpu,libjpeg-turbo,64,48,40,0,[12],' points.csv) -eq 2 ]] || die "no libjpeg-turbo rows in the cpu sweep: $(cat points.csv)"
  fi
  ! grep -q ',no$' points.csv || die "a run was not identical: $(grep ',no$' points.csv)"
  if have_opencv; then
    expect_ok bench --from points.csv --plots plots
    for f in fps_vs_threads cpu_vs_libjpeg_turbo fps_vs_slots stages_vs_resolution; do
      [[ -s plots/$f.png ]] || die "plots/$f.png missing"
      [[ $(head -c 8 plots/$f.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || die "$f.png is not a PNG"
    done
    [[ ! -e plots/fps_vs_stages.png ]] || die "a plot of a sweep without rows"
  else
    expect_fail 1 bench --from points.csv --plots plots
  fi
}

# The CSV's folder is checked before the sweep: one line, no progress.
case_bench_csv_in_missing_folder_exit_1() {
  expect_fail 1 bench "$SAMPLE" --sizes 64x48 --csv no/such/b.csv
  grep -q "output folder 'no/such' does not exist" err.txt || die "folder not named: $(cat err.txt)"
  [[ ! -e no ]] || die "folders were created"
}

case_bench_usage_errors() {
  expect_fail 2 bench "$SAMPLE" --sizes 64x
  expect_fail 2 bench "$SAMPLE" --sweeps resolution,speed
  expect_fail 2 bench "$SAMPLE" --threads 0
  expect_fail 2 bench "$SAMPLE" --slots 1,x
  expect_fail 2 bench --from nothing.csv
  expect_fail 2 bench
  printf 'sweep,mode\nresolution,cpu\n' >bad.csv
  expect_fail 1 bench --from bad.csv --plots plots
  [[ ! -e plots ]] || ! ls plots/*.png >/dev/null 2>&1 || die "plots drawn from a bad CSV"
}
