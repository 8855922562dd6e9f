#!/usr/bin/env bash
# End to end on a GPU machine with compressed video (the rows of e2e.sh for H.264 and HEVC
# files; e2e.sh runs this when MJPEG_E2E_NVDEC_CLIPS is set):
#   tests/gpu/e2e_nvdec.sh MJPEG_BINARY CLIPS_DIR
# CLIPS_DIR holds make_nvdec_clips.sh's bench clips (h264_1080p.mp4, hevc_1080p.mp4: 600
# frames; h264_4k.mp4: 150 frames).
# Per clip, in one run, default options (aok, the self-balancing split), outputs on tmpfs
# (MJPEG_E2E_OUT, default /dev/shm):
#   decode only: NVDEC with 1 and with 7 decoders (the ceiling), libavcodec on every core
#   encode to AVI with --decoder gpu and --decoder cpu: wall fps (the summary line), stages fps
#   (frames over the wall time less the setup), the stage that bounds it
#   compare's AOK fps on the clip's frames, decoded into memory first (the pipeline's own rate)
#   and the ratios the targets name. Every AVI of a clip is byte-identical (checked here).
# Then the short clips: the first 30 and 300 frames of the 1080p H.264 clip, process wall time
# in aok (GPU decoding) beside the cpu mode's.
set -u
mjpeg=$1 clips=$2
out=${MJPEG_E2E_OUT:-/dev/shm}/mjpeg-e2e-nvdec
mkdir -p "$out"
py=${MJPEG_PYTHON:-python3}
rows=()
fail=0

fps_of() {  # the fps of a --decode-only line or an encode summary
  sed -n -e 's/.*: \([0-9.]*\) fps (NVDEC.*/\1/p' -e 's/.*: \([0-9.]*\) fps (CPU.*/\1/p' \
    -e 's/.*frames, \([0-9.]*\) fps (.*/\1/p' "$1" | head -n1
}
stages_of() {  # frames over (stages wall - setup)
  "$py" - "$1" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
n = re.search(r"wrote .*?: ([0-9]+) frames", t)
st = re.search(r"over ([0-9.]+) s wall", t)
setup = re.search(r"setup \(allocation\)\s+([0-9.]+)", t)
b = re.search(r"bound by (.+?) \(([0-9.]+) fps alone\)", t)
s = (int(n.group(1)) / (float(st.group(1)) - float(setup.group(1) if setup else 0))
     if n and st else 0)
print(f"{s:.1f}", b.group(1).replace(" ", "_") if b else "-")
EOF
}

for clip in h264_1080p.mp4 hevc_1080p.mp4 h264_4k.mp4; do
  [[ -f $clips/$clip ]] || { echo "no $clips/$clip"; continue; }
  cat "$clips/$clip" >/dev/null  # into the page cache
  frames=600; [[ $clip == *4k* ]] && frames=150
  log=$out/$clip
  "$mjpeg" encode "$clips/$clip" -o "$out/x.avi" -y --decode-only --decoder gpu --decoders 1 2>"$log.d1"
  "$mjpeg" encode "$clips/$clip" -o "$out/x.avi" -y --decode-only --decoder gpu --decoders 7 2>"$log.d7"
  "$mjpeg" encode "$clips/$clip" -o "$out/x.avi" -y --decode-only --decoder cpu 2>"$log.dc"
  "$mjpeg" encode "$clips/$clip" -o "$out/gpu.avi" -y --stats --decoder gpu 2>"$log.eg"
  "$mjpeg" encode "$clips/$clip" -o "$out/cpu.avi" -y --stats --decoder cpu 2>"$log.ec"
  "$mjpeg" compare "$clips/$clip" --frames "$frames" --modes aok --json "$out/c.json" \
    >"$log.cmp" 2>&1
  same=yes
  cmp -s "$out/gpu.avi" "$out/cpu.avi" || { same=NO; fail=1; }
  cmpfps=$("$py" -c "import json,sys; j=json.load(open('$out/c.json')); print([m for m in j['modes'] if m['mode']=='aok'][0]['fps'])" 2>/dev/null || echo 0)
  d1=$(fps_of "$log.d1") d7=$(fps_of "$log.d7") dc=$(fps_of "$log.dc")
  eg=$(fps_of "$log.eg") ec=$(fps_of "$log.ec")
  read -r sg bg <<<"$(stages_of "$log.eg")"
  read -r sc bc <<<"$(stages_of "$log.ec")"
  rows+=("$(printf '%-15s %8s %8s %8s | %8s %8s %-16s | %8s %8s %-16s | %8.0f | %5s %5s %5s' \
    "$clip" "$d1" "$d7" "$dc" "$eg" "$sg" "$bg" "$ec" "$sc" "$bc" "$cmpfps" \
    "$("$py" -c "print(f'{$eg/min($d7,$cmpfps):.2f}')" 2>/dev/null)" \
    "$("$py" -c "print(f'{$eg/$ec:.2f}')" 2>/dev/null)" "$same")")
  rm -f "$out"/*.avi
done

short=()
if [[ -f $clips/h264_1080p.mp4 ]]; then
  for n in 30 300; do
    for mode in aok cpu; do
      t0=$(date +%s.%N)
      "$mjpeg" encode "$clips/h264_1080p.mp4" -o "$out/s.avi" -y --frames "$n" --mode "$mode" \
        2>"$out/short.$n.$mode"
      t1=$(date +%s.%N)
      short+=("$(awk -v n="$n" -v m="$mode" -v a="$t0" -v b="$t1" \
        'BEGIN { printf "%-4s %5s %7.3f s  %8.1f fps", n, m, b - a, n / (b - a) }')")
    done
  done
  rm -f "$out/s.avi"
fi

echo
echo "compressed video (decode-only fps: NVDEC 1 / 7 decoders, libavcodec; encode to AVI on $(nproc) cores)"
printf '%-15s %8s %8s %8s | %8s %8s %-16s | %8s %8s %-16s | %8s | %5s %5s %5s\n' clip nv1 nv7 \
  cpu gpu-wall stages bound cpu-wall stages bound compare /ceil /cpu same
for r in "${rows[@]}"; do echo "$r"; done
echo "short clips (h264_1080p.mp4 --frames N, process wall time):"
for r in "${short[@]}"; do echo "  $r"; done
exit $fail
