# --rdo deadzone|trellis: rate-distortion quantization (sourced by cli_test.sh). Not cjpeg's
# bytes, so judged by what they are for: libjpeg-turbo's djpeg, ffmpeg and GStreamer decode
# them, they are smaller than cjpeg's rounding at the same PSNR (measured by ffmpeg), and every
# thread count writes the same bytes.

# psnr REFERENCE JPEG: ffmpeg's PSNR of JPEG's decoded RGB against REFERENCE's (average, dB).
psnr() {
  ffmpeg -nostdin -i "$1" -i "$2" -lavfi '[0]format=rgb24[a];[1]format=rgb24[b];[a][b]psnr' \
    -f null - 2>&1 | sed -n 's/.* average:\([0-9.]*\) .*/\1/p'
}

case_rdo_is_smaller_at_the_same_psnr() {
  need_ffmpeg
  need_media images/kodak/kodim19.png images/kodak/kodim23.png
  local img q r
  for img in kodim19 kodim23; do
    ffmpeg -nostdin -v error -i "$MEDIA/images/kodak/$img.png" "$img.ppm" || die "ffmpeg failed"
    # cjpeg's rounding (--rdo off) at qualities around the points below: PSNR and size.
    : >curve.txt
    for q in 15 25 35 45 55 65 75 80 85 90 93 95 97; do
      expect_ok encode "$img.ppm" -o off$q.jpg -q $q --quiet -y
      echo "$(psnr "$img.ppm" off$q.jpg) $(stat -c %s off$q.jpg)" >>curve.txt
    done
    for r in deadzone trellis; do
      for q in 50 75 90; do
        expect_ok encode "$img.ppm" -o $r$q.jpg -q $q --rdo $r --quiet -y
        djpeg -outfile $r$q.ppm $r$q.jpg && [[ -s $r$q.ppm ]] || die "djpeg cannot decode $r$q.jpg"
        [[ -z $(ffmpeg -nostdin -v error -xerror -i $r$q.jpg -f null - 2>&1) ]] ||
          die "ffmpeg reports errors in $r$q.jpg"
        local p s ratio
        p=$(psnr "$img.ppm" $r$q.jpg)
        s=$(stat -c %s $r$q.jpg)
        # The size of cjpeg's rounding at PSNR p, interpolated on its curve (log size).
        ratio=$(sort -n curve.txt | awk -v p="$p" -v s="$s" '
          { P[NR] = $1; S[NR] = $2 }
          END { for (i = 1; i < NR; i++) if (P[i] <= p && p <= P[i + 1]) {
                  t = (p - P[i]) / (P[i + 1] - P[i])
                  printf "%.4f", s / exp(log(S[i]) + t * (log(S[i + 1]) - log(S[i]))); exit } }')
        [[ -n $ratio ]] || die "$img $r q$q: PSNR $p outside the curve of --rdo off"
        echo "ok: $img --rdo $r -q $q: $s bytes, $p dB: ${ratio}x the size of --rdo off at that PSNR"
        # The dead zone saves a little (measured 0.95-0.97 on Kodak), the trellis more
        # (0.86-0.92); these bounds leave room for the picture.
        local most=0.99
        [[ $r == trellis ]] && most=0.96
        awk -v a="$ratio" -v b=$most 'BEGIN { exit !(a <= b) }' ||
          die "$img --rdo $r -q $q: ${ratio}x the size of --rdo off at the same PSNR (at most $most)"
      done
    done
  done
}

case_rdo_writes_the_same_bytes_with_any_threads() {
  make_y4m in.y4m 12 333x197
  expect_ok encode in.y4m -o off.avi --mode cpu --quiet
  local r t
  for r in deadzone trellis; do
    expect_ok encode in.y4m -o $r.avi --rdo $r --mode cpu --quiet
    for t in 1 3; do
      expect_ok encode in.y4m -o $r$t.avi --rdo $r --mode cpu --entropy-threads $t --quiet
      same_bytes $r$t.avi $r.avi
    done
    cmp -s off.avi $r.avi && die "--rdo $r wrote cjpeg's bytes"
    # GStreamer (avidemux, then libjpeg's jpegdec) decodes every frame.
    if have_gstreamer; then
      local decoded
      decoded=$(gst-launch-1.0 -v filesrc location=$r.avi ! avidemux ! jpegdec ! \
        fakesink silent=false 2>gst.txt | grep 'last-message' | grep -c 'chain')
      [[ $decoded -eq 12 ]] || die "GStreamer decoded $decoded of 12 frames of $r.avi: $(head -3 gst.txt)"
    else
      echo "(GStreamer not found: $r.avi not decoded by it)"
    fi
    [[ $(stat -c %s $r.avi) -lt $(stat -c %s off.avi) ]] || die "--rdo $r is not smaller"
    echo "ok: --rdo $r: the same bytes with 1 and 3 entropy threads, smaller than off"
  done
  # off is the default and cjpeg's rounding.
  expect_ok encode in.y4m -o off2.avi --mode cpu --rdo off --quiet
  same_bytes off2.avi off.avi
  expect_fail 2 encode in.y4m -o o.avi --rdo bogus
  grep -q "deadzone" err.txt || die "the error does not list the names: $(cat err.txt)"
}
