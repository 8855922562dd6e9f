# Cases of everyday use (sourced by cli_test.sh): the progress line on a terminal, grey and
# alpha sources, and the wording of what mjpeg says.

# on_terminal COLS CMD...: runs CMD with stderr on a pseudo-terminal COLS columns wide (stdin
# and stdout not a terminal), writes what the terminal received to tty.txt; returns CMD's exit
# status.
on_terminal() {
  python3 - "$@" <<'EOF'
import fcntl, os, pty, struct, subprocess, sys, termios
cols, cmd = int(sys.argv[1]), sys.argv[2:]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                     env=env)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the last writer closed it
        break
    if not chunk:
        break
    out += chunk
open("tty.txt", "wb").write(out)
sys.exit(p.wait())
EOF
}

case_progress_line_fits_the_terminal() {
  make_y4m in.y4m 100 480x272  # long enough for a few updates, on one thread of each kind
  local cols
  for cols in 30 60 80; do
    on_terminal "$cols" "$MJPEG" encode in.y4m -o out.avi -y --mode cpu --producers 1 \
      --entropy-threads 1 || die "encode on a $cols-column terminal failed: $(cat tty.txt)"
    # Every piece of a line that a later "\r" overwrites is a progress update: each must fit in
    # COLS - 1 columns, or the terminal wraps it and the wrapped part stays on the screen.
    python3 - "$cols" <<'EOF' || die "progress line wider than the terminal: $(od -c tty.txt | head -20)"
import sys
cols = int(sys.argv[1])
text = open("tty.txt", "rb").read().decode().replace("\r\n", "\n")
updates = [piece for line in text.split("\n") for piece in line.split("\r")[:-1]]
shown = [u for u in updates if " frames" in u]
assert shown, "no progress update on the terminal: %r" % text
too_wide = [u for u in updates if len(u) > cols - 1]
assert not too_wide, "%d columns: %r" % (cols, too_wide)
assert "mjpeg: wrote out.avi: 100 frames" in text, text
print("%d columns: %d updates, the widest %d characters" % (cols, len(shown), max(map(len, updates))))
EOF
  done
}

case_no_gpu_note_where_there_is_no_nvidia_gpu() {
  # Without an NVIDIA driver (the machine has no NVIDIA GPU; /proc/driver/nvidia is the kernel
  # driver's own folder) the CPU is the only way to encode: no notice on every run, the summary
  # says "cpu mode", and `mjpeg info` says why. A named device still gets its notice.
  [[ -e /proc/driver/nvidia ]] && skip "this machine has an NVIDIA driver"
  make_y4m in.y4m 3 64x48
  expect_ok encode in.y4m -o out.avi
  ! grep -qi 'nvidia\|cuda\|encoding on the CPU' err.txt ||
    die "a GPU notice on a machine without an NVIDIA GPU: $(cat err.txt)"
  grep -q '^mjpeg: wrote out.avi: 3 frames, .* (cpu mode)' err.txt || die "summary: $(cat err.txt)"
  expect_ok info
  grep -q '^CUDA devices: none (.*); encoding runs on the CPU' out.txt || die "info: $(cat out.txt)"
  expect_ok encode in.y4m -o dev.avi --device 0
  grep -q '^mjpeg: note: CUDA device 0 does not exist .*encoding on the CPU' err.txt ||
    die "no notice for the named device: $(cat err.txt)"
}

# ncomp JPEG: the number of components in the frame header of a JPEG file.
ncomp() {
  python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); i = d.find(b'\xff\xc0'); print(d[i + 9] if i >= 0 else -1)" "$1"
}

# mono_frame_as_pgm Y4M N OUT: frame N (1-based) of a mono Y4M as the PGM OUT, its plane as
# stored, cut here from the file's bytes.
mono_frame_as_pgm() {
  python3 - "$@" <<'PY' || die "cannot cut frame $2 of $1"
import sys
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
head, _, rest = data.partition(b"\n")
fields = dict((f[:1], f[1:]) for f in head.split()[1:])
w, h = int(fields[b"W"]), int(fields[b"H"])
for _ in range(n):
    _, _, rest = rest.partition(b"\n")  # FRAME
    plane, rest = rest[:w * h], rest[w * h:]
open(out, "wb").write(b"P5\n%d %d\n255\n" % (w, h) + plane)
PY
}

case_grey_sources_make_grayscale_jpegs_like_cjpeg() {
  need_ffmpeg
  need_cjpeg
  # A grey picture, a PGM sequence and a mono Y4M: one component, the bytes cjpeg writes for
  # the grey plane as a PGM (cjpeg needs no -grayscale for a PGM).
  local i
  for i in 1 2 3; do
    ffmpeg -v error -i "$SAMPLE" -vf "crop=203:101:${i}0:7,format=gray" -y "g$i.pgm" ||
      die "ffmpeg cannot write g$i.pgm"
  done
  against_cjpeg "$PWD/g1.pgm" "" "-quality 90"
  [[ $(ncomp ours.jpg) == 1 ]] || die "a PGM gave $(ncomp ours.jpg) components"
  mkdir seq
  expect_ok encode 'g%d.pgm' -o seq/%d.jpg --dump-input dump -q 80
  for i in 1 2 3; do
    "$CJPEG" -quality 80 -outfile c.jpg "g$i.pgm" || die "cjpeg failed"
    same_bytes "seq/$i.jpg" c.jpg
    cmp -s "dump/00000$i.pgm" "g$i.pgm" || die "--dump-input did not write frame $i as the PGM"
  done
  [[ ! -e dump/000001.ppm ]] || die "--dump-input wrote a PPM for grey frames"
  expect_ok encode 'g%d.pgm' -o seq.avi --mode cpu
  [[ $(ffprobe -v error -show_entries stream=pix_fmt -of csv=p=0 seq.avi) == gray ]] ||
    die "ffprobe does not read grey frames: $(ffprobe -v error -show_entries stream=pix_fmt -of csv=p=0 seq.avi)"
  expect_ok quality 'g%d.pgm' seq.avi --quiet
  # Mono Y4M: ffmpeg's, full range (XCOLORRANGE=FULL), and the same plane tagged limited.
  ffmpeg -v error -f lavfi -i testsrc2=size=97x61:rate=25 -frames:v 2 -pix_fmt gray \
    -strict -1 -f yuv4mpegpipe -y mono.y4m || die "ffmpeg cannot write a mono Y4M"
  head -1 mono.y4m | grep -q 'Cmono XCOLORRANGE=FULL' || die "unexpected header: $(head -1 mono.y4m)"
  sed '1s/XCOLORRANGE=FULL/XCOLORRANGE=LIMITED/' mono.y4m >limited.y4m
  local range
  for range in full limited; do
    rm -rf m && mkdir m
    expect_ok encode "$([[ $range == full ]] && echo mono || echo limited).y4m" -o m/%d.jpg \
      -q 70 --mode cpu --quiet
    for i in 1 2; do
      # The plane as it is, whatever its range: what ffmpeg's rgb24 (R = G = B) and its PGM of
      # a grey frame hold, and so what the RGB of every planar source is (README).
      mono_frame_as_pgm mono.y4m "$i" plane.pgm
      "$CJPEG" -quality 70 -outfile c.jpg plane.pgm || die "cjpeg failed"
      same_bytes "m/$i.jpg" c.jpg
    done
  done
  echo "ok: a PGM, a PGM sequence and mono Y4M (full and limited range) equal cjpeg of the grey plane"
}

case_grey_alpha_png_stays_grey_with_one_notice() {
  need_ffmpeg
  need_cjpeg
  have_opencv || skip "PNG needs OpenCV"
  ffmpeg -v error -i "$SAMPLE" -vf "crop=120:80:30:40,format=ya8" -y ga.png &&
    ffmpeg -v error -i ga.png -pix_fmt gray -y ga.pgm &&
    ffmpeg -v error -i "$SAMPLE" -vf "crop=120:80:30:40,format=ya16be" -y ga16.png &&
    ffmpeg -v error -i ga16.png -pix_fmt gray16be -y ga16.pgm || die "ffmpeg failed"
  expect_ok encode ga.png -o ours.jpg
  [[ $(grep -c '^mjpeg: note: .*alpha' err.txt) -eq 1 ]] || die "not one alpha notice: $(cat err.txt)"
  "$CJPEG" -quality 90 -outfile theirs.jpg ga.pgm || die "cjpeg failed"
  same_bytes ours.jpg theirs.jpg
  expect_ok encode ga16.png -o ours16.jpg  # 16 bits to 8 as cjpeg rounds them
  "$CJPEG" -quality 90 -outfile theirs16.jpg ga16.pgm || die "cjpeg failed"
  same_bytes ours16.jpg theirs16.jpg
  # A sequence of them: grey frames, and one notice for the sequence.
  cp ga.png s1.png && cp ga.png s2.png && mkdir s
  expect_ok encode 's%d.png' -o s/%d.jpg
  [[ $(grep -c '^mjpeg: note: .*alpha' err.txt) -eq 1 ]] || die "not one alpha notice: $(cat err.txt)"
  same_bytes s/2.jpg theirs.jpg
}

case_grey_source_with_explicit_subsampling_makes_colour_frames() {
  # -s 420 (or 422, 444) asks for 3-component frames (a decoder that takes only YCbCr):
  # the grey as R = G = B, the bytes cjpeg writes for that PPM.
  need_ffmpeg
  need_cjpeg
  ffmpeg -v error -i "$SAMPLE" -vf "crop=203:101:10:7,format=gray" -y g1.pgm &&
    cp g1.pgm g2.pgm && ffmpeg -v error -i g1.pgm -pix_fmt rgb24 -y g.ppm || die "ffmpeg failed"
  expect_ok encode g1.pgm -o ours.jpg -s 420
  "$CJPEG" -quality 90 -sample 2x2 -outfile theirs.jpg g.ppm || die "cjpeg failed"
  same_bytes ours.jpg theirs.jpg
  mkdir s
  expect_ok encode 'g%d.pgm' -o s/%d.jpg -s 444 -q 60
  "$CJPEG" -quality 60 -sample 1x1 -outfile c.jpg g.ppm || die "cjpeg failed"
  same_bytes s/2.jpg c.jpg
  ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 1 -pix_fmt gray \
    -strict -1 -f yuv4mpegpipe -y mono.y4m || die "ffmpeg cannot write a mono Y4M"
  expect_ok encode mono.y4m -o m.jpg --frames 1 -s 422
  [[ $(ncomp m.jpg) == 3 ]] || die "-s 422 on mono gave $(ncomp m.jpg) components"
  expect_ok encode mono.y4m -o m.jpg --frames 1 -y
  [[ $(ncomp m.jpg) == 1 ]] || die "mono gave $(ncomp m.jpg) components"
}

case_sequence_of_grey_and_colour_files_stays_colour() {
  # A grey file among colour ones (an optimiser stores grey-looking pictures as grey): the
  # sequence is colour, each grey file as R = G = B; nothing refused.
  need_ffmpeg
  need_cjpeg
  ffmpeg -v error -i "$SAMPLE" -vf "crop=64:48:0:0,format=gray" -y f1.pgm &&
    ffmpeg -v error -i "$SAMPLE" -vf "crop=64:48:0:0" -pix_fmt rgb24 -y f2.ppm &&
    ffmpeg -v error -i f1.pgm -pix_fmt rgb24 -y grey.ppm || die "ffmpeg failed"
  cp f1.pgm f1.ppm  # a PGM named .ppm: the reader goes by the signature
  mkdir s
  expect_ok encode 'f%d.ppm' -o s/%d.jpg
  "$CJPEG" -quality 90 -sample 2x2 -outfile c1.jpg grey.ppm &&
    "$CJPEG" -quality 90 -sample 2x2 -outfile c2.jpg f2.ppm || die "cjpeg failed"
  same_bytes s/1.jpg c1.jpg
  same_bytes s/2.jpg c2.jpg
}

# expect_line "LINE": err.txt is exactly that one line.
expect_line() {
  [[ "$(cat err.txt)" == "$1" ]] || die "expected: $1
got: $(cat err.txt)"
}

case_wording_of_everyday_errors() {
  make_y4m in.y4m 38 64x48
  # --frames: 0 and negative counts each say what is wrong (the range starts at 1).
  expect_fail 2 encode in.y4m -o out.avi --frames -3
  expect_line "mjpeg: error: --frames: -3 is not a number of frames (1 to 1099511627776)"
  expect_fail 2 encode in.y4m -o out.avi --frames 0
  expect_line "mjpeg: error: --frames: 0 asks for nothing to encode (1 or more frames)"
  # The output without -o: the stray argument is named, with the way to give it.
  expect_fail 2 encode in.y4m out/a.avi
  expect_line "mjpeg: error: --output is required, and 'out/a.avi' is an extra argument: the output is given with -o (mjpeg encode in.y4m -o out/a.avi)"
  # --start past the end gives the count where the input tells it.
  expect_fail 1 encode in.y4m -o out.avi --start 40 --quiet
  expect_line "mjpeg: error: 'in.y4m' has 38 frames, all before --start 40 (frames count from 0: its last is --start 37)"
  "$MJPEG" encode - -o out.avi --start 40 --quiet <in.y4m >out.txt 2>err.txt && die "stdin past the end exited 0"
  expect_line "mjpeg: error: standard input ends before frame 40: --start 40 skips every frame it has"
  if have_opencv; then
    ffmpeg -v error -i in.y4m -frames:v 3 f%d.png || die "ffmpeg failed"
    expect_fail 1 encode 'f%d.png' -o out.avi --start 3 --quiet
    expect_line "mjpeg: error: 'f%d.png' has 3 frames, all before --start 3 (frames count from 0: its last is --start 2)"
  fi
  [[ ! -e out.avi && ! -d out ]] || die "an output was created"
  # mjpeg info lists every input kind of this build and the outputs.
  expect_ok info
  grep -q '^inputs: Y4M (a file, a FIFO or - for standard input), PPM/PGM pictures, ' out.txt ||
    die "info's inputs: $(grep inputs out.txt)"
  if "$MJPEG" info | grep -q '^FFmpeg libraries: yes'; then
    grep -q "^inputs: .*videos through FFmpeg's libraries" out.txt || die "no videos: $(grep inputs out.txt)"
  fi
  grep -q '^outputs: .jpg, .jpeg (one picture); .avi' out.txt || die "info's outputs: $(cat out.txt)"
}

case_cover_picture_of_an_audio_file_is_one_frame() {
  # An audio file with a cover picture (ffmpeg encodes the cover as one frame): to a .jpg with
  # --frames 1 and to an AVI, the bytes cjpeg writes for the picture.
  need_ffmpeg
  need_cjpeg
  "$MJPEG" info | grep -q '^FFmpeg libraries: yes' || skip "built without FFmpeg's libraries"
  ffmpeg -v error -f lavfi -i testsrc2=size=96x64 -frames:v 1 cover.png &&
    ffmpeg -v error -i cover.png -pix_fmt rgb24 cover.ppm || die "ffmpeg failed"
  ffmpeg -v error -f lavfi -i sine=duration=1 -i cover.png -map 0 -map 1 -c:a flac -c:v copy \
    -disposition:v attached_pic song.flac || skip "ffmpeg cannot attach a cover to FLAC"
  "$CJPEG" -quality 90 -sample 2x2 -outfile theirs.jpg cover.ppm || die "cjpeg failed"
  expect_ok encode song.flac -o ours.jpg --frames 1
  grep -q "^mjpeg: note: 'song.flac' has no video stream but a cover picture (png 96x64): it is encoded as one frame$" err.txt ||
    die "no notice of the cover: $(cat err.txt)"
  same_bytes ours.jpg theirs.jpg
  expect_ok encode song.flac -o song.avi
  [[ $(probe_counts song.avi) == "mjpeg 96 64 25/1 1 1" ]] || die "ffprobe: $(probe_counts song.avi)"
  ffmpeg -v error -i song.avi -c copy -f image2 frame%d.jpg || die "cannot extract the frame"
  same_bytes frame1.jpg theirs.jpg
}

case_timestamps_going_back_are_a_discontinuity_not_a_rate() {
  # Two MPEG-TS recordings joined (the second starts 0.5 s before the first ends): one notice
  # that time goes back, where it happens and by how much, not a rate of "-460 to 40 ms".
  need_ffmpeg
  "$MJPEG" info | grep -q '^FFmpeg libraries: yes' || skip "built without FFmpeg's libraries"
  ffmpeg -v error -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v 25 -c:v mpeg2video \
    -f mpegts a.ts &&
    ffmpeg -v error -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v 25 -c:v mpeg2video \
      -output_ts_offset 0.5 -f mpegts b.ts || skip "ffmpeg cannot write MPEG-2 in MPEG-TS"
  cat a.ts b.ts >joined.ts
  # What ffprobe reads: the first frame of b.ts is shown 500 ms before the last of a.ts.
  local back
  back=$(ffprobe -v error -select_streams v:0 -show_entries frame=best_effort_timestamp_time \
    -of csv=p=0 joined.ts | python3 -c "
import sys
t = [float(l.split(',')[0]) for l in sys.stdin if l.strip(', \n')]
jumps = [(i, t[i - 1] - t[i]) for i in range(1, len(t)) if t[i] <= t[i - 1]]
assert len(jumps) == 1, jumps
print('%d %.1f' % (jumps[0][0] + 1, 1e3 * jumps[0][1]))") || die "ffprobe does not see one jump back"
  expect_ok encode joined.ts -o out.avi --mode cpu
  grep -qx "mjpeg: note: 'joined.ts' has 1 place where its timestamps go back (the first before frame ${back% *}, by ${back#* } ms; e.g. recordings joined together): its frames are written in decode order at a constant 25/1 fps" err.txt ||
    die "notice of the jump (ffprobe: frame ${back% *}, ${back#* } ms back): $(cat err.txt)"
  ! grep -q 'variable frame rate' err.txt || die "a rate notice: $(cat err.txt)"
  [[ $(probe_counts out.avi) == "mjpeg 96 64 25/1 50 50" ]] || die "ffprobe: $(probe_counts out.avi)"
}

case_alpha_dropped_with_one_notice_for_every_input_kind() {
  # Alpha cannot go into a JPEG: it is dropped, and said once, whatever carries it.
  need_ffmpeg
  need_cjpeg
  # VP9 with alpha in WebM: the alpha travels beside the picture (the track's AlphaMode, which
  # ffprobe shows); FFmpeg's own vp9 decoder gives yuv420p without it.
  if "$MJPEG" info | grep -q '^FFmpeg libraries: yes' &&
    ffmpeg -v error -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v 5 \
      -vf "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='X*2'" -c:v libvpx-vp9 \
      -pix_fmt yuva420p alpha.webm 2>/dev/null; then
    ffprobe -v error -show_entries stream_tags=alpha_mode -of csv=p=0 alpha.webm | grep -qx 1 ||
      die "the WebM has no alpha track (ffprobe)"
    expect_ok encode alpha.webm -o a.avi --mode cpu
    [[ $(grep -c '^mjpeg: note: .*alpha' err.txt) -eq 1 ]] ||
      die "not one alpha notice for VP9 alpha: $(cat err.txt)"
    grep -q "^mjpeg: note: the source's alpha channel (vp9 alpha, stored beside the picture) is ignored$" err.txt ||
      die "alpha notice: $(cat err.txt)"
    ffmpeg -v error -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v 5 -c:v libvpx-vp9 plain.webm &&
      expect_ok encode plain.webm -o p.avi --mode cpu &&
      ! grep -q 'alpha' err.txt || die "an alpha notice for VP9 without alpha: $(cat err.txt)"
  fi
  have_opencv || return 0
  # RGBA PNG sequences: one notice for the sequence (not one per file, nor none), the frames
  # cjpeg's of the RGB.
  local i
  for i in 1 2 3; do
    ffmpeg -v error -i "$SAMPLE" -vf "crop=64:48:${i}0:0,format=rgba" -y "a$i.png" &&
      ffmpeg -v error -i "a$i.png" -pix_fmt rgb24 -y "a$i.ppm" || die "ffmpeg failed"
  done
  mkdir s
  expect_ok encode 'a%d.png' -o s/%d.jpg
  [[ $(grep -c '^mjpeg: note: .*alpha' err.txt) -eq 1 ]] || die "not one alpha notice: $(cat err.txt)"
  grep -q "^mjpeg: note: 'a%d.png' has an alpha channel; it is dropped$" err.txt ||
    die "alpha notice: $(cat err.txt)"
  for i in 1 2 3; do
    "$CJPEG" -quality 90 -sample 2x2 -outfile c.jpg "a$i.ppm" || die "cjpeg failed"
    same_bytes "s/$i.jpg" c.jpg
  done
  # Alpha from the third file on only: said once the frames are read.
  cp a1.ppm b1.ppm && cp a2.ppm b2.ppm && cp a3.png b3.png
  ffmpeg -v error -i a1.ppm -y b1.png && ffmpeg -v error -i a2.ppm -y b2.png || die "ffmpeg failed"
  expect_ok encode 'b%d.png' -o b.avi --mode cpu
  [[ $(grep -c '^mjpeg: note: .*alpha' err.txt) -eq 1 ]] ||
    die "not one alpha notice for a later file: $(cat err.txt)"
  [[ $(grep -n "alpha" err.txt | cut -d: -f1) -gt $(grep -n "^mjpeg: input b%d.png" err.txt | cut -d: -f1) ]] ||
    die "the later file's notice should come after the frames: $(cat err.txt)"
}

case_grey_video_makes_grayscale_jpegs() {
  # A grey video: gray planes (tagged full range, as ffmpeg writes them) equal cjpeg of
  # ffmpeg's PGM of the frame, whether the planes or libswscale's RGB reach the encoder; a
  # 10-bit grey video, converted by libswscale, equals cjpeg -grayscale of ffmpeg's rgb24.
  need_ffmpeg
  need_cjpeg
  "$MJPEG" info | grep -q '^FFmpeg libraries: yes' || skip "built without FFmpeg's libraries"
  local fmt
  for fmt in gray gray10le; do
    ffmpeg -v error -f lavfi -i testsrc2=size=97x61:rate=25 -frames:v 2 -pix_fmt "$fmt" \
      -c:v ffv1 -y "$fmt.mkv" || die "ffmpeg cannot write $fmt FFV1"
    ffmpeg -v error -i "$fmt.mkv" -frames:v 1 -pix_fmt gray -y "$fmt.pgm" &&
      ffmpeg -v error -i "$fmt.mkv" -frames:v 1 -pix_fmt rgb24 -y "$fmt.ppm" || die "ffmpeg failed"
  done
  "$CJPEG" -quality 90 -outfile gray.jpg gray.pgm &&
    "$CJPEG" -quality 90 -grayscale -outfile gray10le.jpg gray10le.ppm || die "cjpeg failed"
  expect_ok encode gray.mkv -o a.jpg --frames 1 --mode cpu
  same_bytes a.jpg gray.jpg
  expect_ok encode gray.mkv -o b.jpg --frames 1 --mode cpu --rgb-decode swscale
  same_bytes b.jpg gray.jpg
  expect_ok encode gray10le.mkv -o c.jpg --frames 1 --mode cpu
  same_bytes c.jpg gray10le.jpg
  expect_ok encode gray.mkv -o g.avi --mode cpu
  [[ $(ffprobe -v error -show_entries stream=pix_fmt -of csv=p=0 g.avi) == gray ]] ||
    die "ffprobe: $(ffprobe -v error -show_entries stream=pix_fmt -of csv=p=0 g.avi)"
  expect_ok encode gray.mkv -o d.jpg --frames 1 --mode cpu -s 420
  [[ $(ncomp d.jpg) == 3 ]] || die "-s 420 on a grey video gave $(ncomp d.jpg) components"
}
