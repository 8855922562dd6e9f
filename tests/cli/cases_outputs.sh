# Cases of the outputs (sourced by cli_test.sh; its helpers are available): quality figures of
# every output kind, pattern outputs published whole or not at all, temporary files, names.

# mean_rgb FILE: the mean PSNR RGB of a summary printed by `quality` or `encode --psnr`.
mean_rgb() { sed -n 's/^  PSNR RGB  min *[0-9.inf]*  mean *\([0-9.inf]*\) .*/\1/p' "$1" | head -1; }

case_psnr_and_quality_agree_on_every_output_kind() {
  need_ffmpeg
  # An awkward size (334x91: not a multiple of 8 or 16, odd height), lossless source.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=334x91:rate=25 -frames:v 3 -pix_fmt yuv420p \
    -c:v ffv1 clip.mkv || die "ffmpeg cannot make the clip"
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
