#!/usr/bin/env bash
# Every frame that `mjpeg encode` puts into an AVI equals cjpeg's JPEG of the same RGB frame:
# an image-sequence input (PNG frames, decoded to RGB exactly) through each sampling, with the
# frames copied back out of the AVI by ffmpeg and compared byte for byte.
#   sequence_exactness_test.sh MJPEG WORK_DIR CJPEG
# Exit 0 = pass, 77 = skipped (no OpenCV in this build, or ffmpeg/cjpeg missing).
set -uo pipefail
mjpeg=$(realpath "$1") work=$2 cjpeg=${3:-}
die() { echo "FAIL: $*" >&2; exit 1; }
[[ -n $cjpeg && $cjpeg != *NOTFOUND* && -x $cjpeg ]] || { echo "SKIP: cjpeg not found"; exit 77; }
command -v ffmpeg >/dev/null || { echo "SKIP: ffmpeg not found"; exit 77; }
"$mjpeg" info | grep -q '^OpenCV: yes' || { echo "SKIP: image sequences need OpenCV"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || die "cannot use $work"

frames=6
ffmpeg -v error -f lavfi -i "testsrc2=size=334x198:rate=25" -frames:v $frames f%03d.png ||
  die "ffmpeg could not make the frames"
for ((i = 1; i <= frames; i++)); do
  ffmpeg -v error -i "$(printf 'f%03d.png' $i)" -pix_fmt rgb24 "p$i.ppm" || die "ppm $i"
done
for s in "444 1x1" "422 2x1" "420 2x2"; do
  read -r ours theirs <<<"$s"
  "$mjpeg" encode 'f%03d.png' -o "s$ours.avi" -q 87 -s "$ours" -r 3 --quiet ||
    die "mjpeg failed for $ours"
  mkdir "x$ours"
  ffmpeg -v error -i "s$ours.avi" -c copy -f image2 "x$ours/%d.jpg" || die "extract $ours"
  n=$(ls "x$ours" | wc -l)
  [[ $n -eq $frames ]] || die "$ours: $n frames in the AVI, expected $frames"
  for ((i = 1; i <= frames; i++)); do
    "$cjpeg" -quality 87 -sample "$theirs" -restart 3B "p$i.ppm" >"c$i.jpg" || die "cjpeg"
    cmp -s "c$i.jpg" "x$ours/$i.jpg" || die "$ours frame $i differs from cjpeg's"
  done
  echo "ok: $ours, $frames frames equal cjpeg's"
done
