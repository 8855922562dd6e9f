# Cases of what an output carries and how it is published (sourced by cli_test.sh; its helpers
# are available): names claimed without replacing, the pixel aspect ratio, the audio, the
# metadata, and the .mkv / .mov outputs. Every result is judged by ffprobe / ffmpeg, cjpeg or
# the file bytes.

# av_clip FILE SECONDS [ENCODER ARGS...]: testsrc2 at 25 frames/s, 160x90, with a 440 Hz tone
# (48 kHz stereo) encoded by the given arguments (default: H.264 and AAC).
av_clip() {
  local f=$1 t=$2
  shift 2
  [[ $# -gt 0 ]] || set -- -c:v libx264 -pix_fmt yuv420p -c:a aac
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=160x90:rate=25 \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -ac 2 -t "$t" "$@" "$f" ||
    skip "ffmpeg cannot make $f"
}
# stream_field FILE SELECTOR FIELD: one field of one stream (v:0, a:0) as ffprobe gives it.
stream_field() {
  ffprobe -v error -select_streams "$2" -show_entries "stream=$3" -of csv=p=0 "$1" |
    grep -v '^$' | head -1 | sed 's/,*$//'
}
# audio_packets FILE: ffmpeg's framemd5 of a stream copy of FILE's first audio stream: per
# packet its timestamps, duration, size and the MD5 of its bytes as they lie in the container.
audio_packets() { ffmpeg -nostdin -v error -i "$1" -map 0:a:0 -c copy -f framemd5 -; }
# close_to A B LIMIT: |A - B| <= LIMIT.
close_to() { awk -v a="$1" -v b="$2" -v l="$3" 'BEGIN { d = a - b; exit !(d <= l && -d <= l) }'; }
have_muxers() { "$MJPEG" info >info.txt && grep -q '^FFmpeg libraries: yes' info.txt; }
have_gstreamer() { command -v gst-launch-1.0 >/dev/null && command -v gst-discoverer-1.0 >/dev/null; }
# gst_plays FILE: GStreamer (another reader than FFmpeg: avidemux, matroskademux, qtdemux, and
# libjpeg's jpegdec) demuxes FILE's video and audio and decodes every frame without an error.
# Nothing is checked without GStreamer (the case says so).
gst_plays() {
  have_gstreamer || { echo "(GStreamer not found: $1 not played by it)"; return 0; }
  local demux=avidemux
  [[ $1 == *.mkv ]] && demux=matroskademux
  [[ $1 == *.mov ]] && demux=qtdemux
  gst-launch-1.0 -q filesrc location="$1" ! $demux name=d d.video_0 ! queue ! jpegdec ! fakesink \
    d.audio_0 ! queue ! fakesink >gst.txt 2>&1 || die "GStreamer cannot play $1: $(head -5 gst.txt)"
}

# ---------------------------------------------------------------------------------------------
# Names claimed without replacing (no -y)
# ---------------------------------------------------------------------------------------------

# start_on_fifo FIFO OUT [ARGS...]: starts `mjpeg encode FIFO -o OUT --quiet ARGS` in the
# background and returns once it holds the FIFO open, that is, after its check of the output
# (which comes before the input is opened). Sets PID.
start_on_fifo() {
  local fifo=$1 out=$2
  shift 2
  "$MJPEG" encode "$fifo" -o "$out" --quiet "$@" >"$fifo.out" 2>"$fifo.err" &
  PID=$!
  bg $PID
  wait_until 60 "mjpeg to open $fifo" has_open $PID "$fifo"
}
# writing_output PID: PID has its output's temporary file (or a pattern's folder) in . or fr/,
# that is, it has made its output and checked its name again there.
writing_output() { compgen -G ".*.tmp-$1-*" >/dev/null || compgen -G "fr/.*.tmp-$1-*" >/dev/null; }
# y4m_part FILE FRAMES: FILE's stream header and its first FRAMES frames (all of the same size).
y4m_part() {
  local header frame total
  header=$(head -1 "$1" | wc -c)
  total=$(grep -c -a '^FRAME' "$1")
  frame=$(( ($(stat -c %s "$1") - header) / total ))
  head -c $((header + $2 * frame)) "$1"
}
# y4m_rest FILE FRAMES: what follows y4m_part FILE FRAMES.
y4m_rest() { tail -c +$(( $(y4m_part "$1" "$2" | wc -c) + 1 )) "$1"; }

case_output_appearing_during_encode_is_kept() {
  make_y4m clip.y4m 3 64x48
  mkdir fr
  printf 'precious' >precious.txt
  local out victim extra first
  local outs=(out.avi out.mjpeg fr/%03d.jpg one.jpg)
  have_muxers && outs+=(out.mkv out.mov)
  for out in "${outs[@]}"; do
    for y in "" -y; do
      victim=$out extra=() first=0
      [[ $out == fr/* ]] && victim=fr/002.jpg first=1  # its folder comes with the first frame
      [[ $out == one.jpg ]] && extra=(--frames 1)
      # The encode checks the name, opens the input and makes its output (a temporary file);
      # only then does the user's file appear, while the encode waits for the rest of its
      # input: without -y it must fail with one line naming the file and leave it as it was.
      rm -f feed.y4m && mkfifo feed.y4m || skip "cannot make a FIFO"
      start_on_fifo feed.y4m "$out" $y "${extra[@]}"
      exec 3>feed.y4m
      y4m_part clip.y4m $first >&3
      wait_until 60 "mjpeg to make $out" writing_output $PID
      cp precious.txt "$victim"
      y4m_rest clip.y4m $first >&3
      exec 3>&-
      wait_exit $PID
      if [[ -z $y ]]; then
        [[ $RC -eq 1 ]] || die "$out: exit $RC, expected 1: $(cat feed.y4m.err)"
        [[ $(wc -l <feed.y4m.err) -eq 1 ]] &&
          grep -qx "mjpeg: error: output '$victim' already exists (use -y to overwrite)" feed.y4m.err ||
          die "$out: expected one line naming $victim: $(cat feed.y4m.err)"
        same_bytes "$victim" precious.txt
        [[ $out != fr/* || $(ls fr) == 002.jpg ]] || die "$out: frames were published: $(ls fr)"
      else
        # -y: the same race replaces it with the encode.
        [[ $RC -eq 0 ]] || die "$out -y: exit $RC: $(cat feed.y4m.err)"
        [[ -s $victim ]] && ! cmp -s "$victim" precious.txt || die "$out -y: $victim not replaced"
      fi
      no_temp_files .
      no_temp_files fr
      rm -f "$victim" fr/*
    done
    echo "ok: $out"
  done
}

case_two_encodes_to_one_new_name() {
  make_y4m three.y4m 3 64x48
  make_y4m five.y4m 5 64x48
  mkfifo a.y4m b.y4m || skip "cannot make a FIFO"
  local pid_a pid_b
  start_on_fifo a.y4m out.avi
  pid_a=$PID
  start_on_fifo b.y4m out.avi
  pid_b=$PID
  # Both check the name and make their outputs while it is free; A finishes first and gets it;
  # B, finishing later, must fail with one line and replace nothing.
  exec 4>b.y4m
  y4m_part five.y4m 1 >&4
  wait_until 60 "the second encode to make its output" writing_output $pid_b
  cat three.y4m >a.y4m
  wait_exit $pid_a
  [[ $RC -eq 0 ]] || die "first encode: exit $RC: $(cat a.y4m.err)"
  y4m_rest five.y4m 1 >&4
  exec 4>&-
  wait_exit $pid_b
  [[ $RC -eq 1 ]] || die "second encode: exit $RC, expected 1: $(cat b.y4m.err)"
  [[ $(wc -l <b.y4m.err) -eq 1 ]] &&
    grep -qx "mjpeg: error: output 'out.avi' already exists (use -y to overwrite)" b.y4m.err ||
    die "second encode: $(cat b.y4m.err)"
  [[ $(probe_counts out.avi) == "mjpeg 64 48 25/1 3 3" ]] ||
    die "out.avi is not the first encode's: $(probe_counts out.avi)"
  no_temp_files .
}

# ---------------------------------------------------------------------------------------------
# Pixel aspect ratio
# ---------------------------------------------------------------------------------------------

# jfif_density FILE: the JFIF density fields (units, X, Y) of a JPEG, as "U X Y".
jfif_density() {
  od -An -tu1 -j13 -N5 "$1" | awk '{ print $1, $2 * 256 + $3, $4 * 256 + $5 }'
}

case_pixel_aspect_ratio_kept() {
  need_ffmpeg
  need_cjpeg
  # 360x270 with pixels 4:3 wide (shown 480x270, 16:9), the way HDV's 1440x1080 is: in H.264
  # (the SPS), in MPEG-2 in a transport stream (its display aspect ratio) and in Y4M (A4:3).
  local src=(testsrc2=size=360x270:rate=25)
  ffmpeg -nostdin -v error -f lavfi -i "${src[0]}" -frames:v 3 -vf setsar=4/3 -pix_fmt yuv420p \
    -c:v libx264 h264.mp4 || skip "ffmpeg cannot make an H.264 clip"
  ffmpeg -nostdin -v error -f lavfi -i "${src[0]}" -frames:v 3 -pix_fmt yuv420p -c:v mpeg2video \
    -aspect 16:9 mpeg2.ts || skip "ffmpeg cannot make an MPEG-2 clip"
  ffmpeg -nostdin -v error -f lavfi -i "${src[0]}" -frames:v 3 -vf setsar=4/3 -pix_fmt yuv420p \
    -f yuv4mpegpipe y4m.y4m || die "ffmpeg cannot make a Y4M clip"
  grep -aq '^YUV4MPEG2 .* A4:3' y4m.y4m || die "ffmpeg wrote no A4:3"
  local input outs o
  for input in y4m.y4m h264.mp4 mpeg2.ts; do
    [[ $input == *.y4m ]] || need_libav "$input"
    [[ $(stream_field "$input" v:0 sample_aspect_ratio) == 4:3 ]] ||
      die "ffprobe does not see 4:3 pixels in $input"
    outs=(out.avi)
    have_muxers && outs+=(out.mkv out.mov)
    for o in "${outs[@]}"; do
      rm -rf px
      expect_ok encode "$input" -o "$o" --dump-input px -y
      grep -q "carried: .*pixel aspect 4:3" err.txt || die "$input -> $o: summary: $(cat err.txt)"
      [[ $(stream_field "$o" v:0 sample_aspect_ratio,display_aspect_ratio) == "4:3,16:9" ]] ||
        die "$input -> $o: ffprobe: $(stream_field "$o" v:0 sample_aspect_ratio,display_aspect_ratio)"
      # GStreamer too (its qtdemux reads QuickTime's pasp atom as 1:1, ffmpeg's own file's too).
      if have_gstreamer && [[ $o != *.mov ]]; then
        gst-discoverer-1.0 "$o" >gst.txt 2>&1
        grep -q 'Pixel aspect ratio: 4/3' gst.txt || die "$input -> $o: GStreamer: $(grep -i aspect gst.txt)"
      fi
    done
    # The JPEG frames: what cjpeg writes for the same pixels but for the density fields, which
    # state the aspect ratio (units 0, X 4, Y 3: what FFmpeg reads as the frame's).
    rm -rf fr && mkdir fr
    ffmpeg -nostdin -v error -i out.avi -c copy -f image2 fr/%d.jpg || die "cannot extract"
    [[ $(stream_field fr/1.jpg v:0 sample_aspect_ratio) == 4:3 ]] ||
      die "$input: the JPEG frame says $(stream_field fr/1.jpg v:0 sample_aspect_ratio)"
    local i
    for i in 1 2 3; do
      [[ $(jfif_density "fr/$i.jpg") == "0 4 3" ]] || die "$input: density $(jfif_density "fr/$i.jpg")"
      "$CJPEG" -quality 90 -sample 2x2 -outfile ref.jpg "px/00000$i.ppm" || die "cjpeg failed"
      [[ $(jfif_density ref.jpg) == "0 1 1" ]] || die "cjpeg's density: $(jfif_density ref.jpg)"
      printf '\x00\x00\x04\x00\x03' | dd of=ref.jpg bs=1 seek=13 conv=notrunc status=none
      same_bytes "fr/$i.jpg" ref.jpg
    done
    echo "ok: $input"
  done
  # Square pixels: the default JFIF header, byte for byte cjpeg's (1:1 stated nowhere else).
  make_y4m sq.y4m 1 64x48
  rm -rf px
  expect_ok encode sq.y4m -o sq.jpg --frames 1 --dump-input px
  "$CJPEG" -quality 90 -sample 2x2 -outfile ref.jpg px/000001.ppm || die "cjpeg failed"
  same_bytes sq.jpg ref.jpg
}

# ---------------------------------------------------------------------------------------------
# Audio
# ---------------------------------------------------------------------------------------------

# expect_audio_copied SOURCE OUTPUT CODEC: OUTPUT has SOURCE's audio: codec CODEC, packets
# byte for byte the source's from its first frame to its end (packets that end before the first
# frame, less than 0.1 s, are left out), as long (within 0.1 s), interleaved with the frames,
# and ffmpeg decodes the whole file without an error.
expect_audio_copied() {
  local src=$1 out=$2 codec=$3
  [[ $(stream_field "$out" a:0 codec_name) == "$codec" ]] ||
    die "$out: audio codec '$(stream_field "$out" a:0 codec_name)', expected $codec"
  audio_packets "$src" >src.md5
  audio_packets "$out" >out.md5
  python3 - src.md5 out.md5 <<'EOF' || die "$out: its audio packets are not $src's"
import sys
def read(path):
    tb, rows = 1.0, []
    for line in open(path):
        if line.startswith('#tb 0:'):
            n, d = line.split(':')[1].split('/')
            tb = int(n) / int(d)
        elif not line.startswith('#') and line.strip():
            f = [x.strip() for x in line.split(',')]
            rows.append((int(f[3]) * tb, f[5]))  # duration (s), md5
    return rows
src, out = read(sys.argv[1]), read(sys.argv[2])
md5s = [m for _, m in src]
got = [m for _, m in out]
k = next((k for k in range(len(md5s)) if md5s[k:] == got), None)
if not got or k is None:
    sys.exit(f"{len(got)} packets, not the last ones of the source's {len(src)}")
dropped = sum(d for d, _ in src[:k])
if dropped >= 0.1:
    sys.exit(f"the first {k} packets ({dropped:.3f} s) are missing")
print(f"{len(got)} packets of {len(src)} byte for byte ({k} before the first frame left out)")
EOF
  local a b
  a=$(stream_field "$src" a:0 duration)
  [[ $a == N/A ]] && a=$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$src")
  b=$(ffmpeg -nostdin -v info -i "$out" -map 0:a:0 -f null - 2>&1 |
      sed -n 's/.*time=\([0-9:.]*\).*/\1/p' | tail -1 |
      awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }')
  close_to "$a" "$b" 0.1 || die "$out: audio of $b s, the source's $a s"
  # Interleaved: audio before the last frame, not all after the video.
  local first_audio last_video
  first_audio=$(ffprobe -v error -select_streams a:0 -show_entries packet=pos -of default=nw=1:nk=1 "$out" | head -1)
  last_video=$(ffprobe -v error -select_streams v:0 -show_entries packet=pos -of default=nw=1:nk=1 "$out" | tail -1)
  (( first_audio < last_video )) || die "$out: the audio is not interleaved with the frames"
  [[ -z $(ffmpeg -nostdin -v error -xerror -i "$out" -f null - 2>&1) ]] ||
    die "$out: ffmpeg reports errors: $(ffmpeg -nostdin -v error -i "$out" -f null - 2>&1 | head -3)"
  gst_plays "$out"
  echo "ok: $src -> $out: $codec, $b s (source $a s)"
}

case_audio_copied_into_avi() {
  need_ffmpeg
  av_clip aac.mp4 2
  need_libav aac.mp4
  av_clip pcm.mkv 2 -c:v ffv1 -c:a pcm_s16le
  av_clip mp3.mkv 2 -c:v ffv1 -c:a libmp3lame
  av_clip ac3.mkv 2 -c:v ffv1 -c:a ac3
  av_clip mp2.ts 2 -c:v mpeg2video -c:a mp2
  local pair src codec
  for pair in aac.mp4:aac pcm.mkv:pcm_s16le mp3.mkv:mp3 ac3.mkv:ac3 mp2.ts:mp2; do
    src=${pair%%:*} codec=${pair#*:}
    expect_ok encode "$src" -o out.avi -y
    [[ $(grep -c 'audio' err.txt) -eq 1 ]] &&
      grep -q "^mjpeg: wrote out.avi: 50 frames, .*; carried: $codec 48000 Hz stereo audio (2\.[0-9]* s)" err.txt ||
      die "$src: the summary does not say what was carried: $(cat err.txt)"
    [[ $(probe_counts out.avi) == "mjpeg 160 90 25/1 50 50" ]] || die "$src: $(probe_counts out.avi)"
    expect_audio_copied "$src" out.avi "$codec"
  done
  # PCM: the samples themselves, byte for byte.
  expect_ok encode pcm.mkv -o pcm.avi --quiet
  ffmpeg -nostdin -v error -i pcm.mkv -map 0:a -f s16le src.raw &&
    ffmpeg -nostdin -v error -i pcm.avi -map 0:a -f s16le out.raw || die "ffmpeg cannot decode"
  same_bytes out.raw src.raw
  # A real clip's AAC track (5 s) from the test media.
  need_media video/flower.mp4
  expect_ok encode "$MEDIA/video/flower.mp4" -o flower.avi --quiet
  expect_audio_copied "$MEDIA/video/flower.mp4" flower.avi aac
}

case_audio_of_a_segment_and_dropped() {
  need_ffmpeg
  av_clip pcm.mkv 4 -c:v ffv1 -c:a pcm_s16le
  need_libav pcm.mkv
  # Frames 25..74 (1 s to 3 s): 2 s of audio, the source's samples from 1 s on.
  expect_ok encode pcm.mkv -o seg.avi --start 25 --frames 50 --quiet
  [[ $(probe_counts seg.avi) == "mjpeg 160 90 25/1 50 50" ]] || die "$(probe_counts seg.avi)"
  ffmpeg -nostdin -v error -i seg.avi -map 0:a -f s16le seg.raw &&
    ffmpeg -nostdin -v error -i pcm.mkv -map 0:a -f s16le src.raw || die "ffmpeg cannot decode"
  local bytes=$(( $(stat -c %s seg.raw) ))
  close_to "$bytes" $((2 * 48000 * 4)) $((48000 * 4 / 10)) || die "segment audio: $bytes bytes for 2 s"
  # Where the segment's audio starts in the source: within a packet (at most 0.1 s) of 1 s.
  local at
  at=$(python3 - "$PWD/seg.raw" "$PWD/src.raw" <<'EOF'
import sys
seg = open(sys.argv[1], 'rb').read(4096)
src = open(sys.argv[2], 'rb').read()
print(src.find(seg) // 4)
EOF
)
  close_to "$at" 48000 4800 || die "the segment's audio starts at sample $at of the source, not near 48000"
  # --no-audio: none, and no note about it.
  expect_ok encode pcm.mkv -o none.avi --no-audio
  ! grep -qi audio err.txt || die "--no-audio: $(cat err.txt)"
  [[ -z $(stream_field none.avi a:0 codec_name) ]] || die "--no-audio: none.avi has audio"
}

case_audio_an_output_cannot_hold_is_noted() {
  need_ffmpeg
  av_clip vorbis.webm 1 -c:v libvpx -c:a libvorbis
  need_libav vorbis.webm
  # AVI has no place for Vorbis: one note, a video-only AVI; Matroska carries it.
  expect_ok encode vorbis.webm -o out.avi
  [[ $(grep -c 'audio' err.txt) -eq 1 ]] &&
    grep -q "^mjpeg: note: the input's vorbis audio is not carried: AVI has no place for vorbis audio; .mkv carries it" err.txt ||
    die "no single note: $(cat err.txt)"
  [[ -z $(stream_field out.avi a:0 codec_name) ]] || die "out.avi has audio"
  if have_muxers; then
    expect_ok encode vorbis.webm -o out.mkv --quiet
    expect_audio_copied vorbis.webm out.mkv vorbis
  fi
  # Outputs that hold only the video: one note each.
  av_clip aac.mp4 1
  local out
  mkdir fr
  for out in out.mjpeg fr/%03d.jpg; do
    expect_ok encode aac.mp4 -o "$out"
    [[ $(grep -c 'audio' err.txt) -eq 1 ]] &&
      grep -q "^mjpeg: note: the input's audio is not carried: .* hold.* only the video" err.txt ||
      die "$out: no single note: $(cat err.txt)"
  done
}

# ---------------------------------------------------------------------------------------------
# Metadata
# ---------------------------------------------------------------------------------------------

case_metadata_copied() {
  need_ffmpeg
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=160x90:rate=25 -frames:v 5 -pix_fmt yuv420p \
    -c:v libx264 -metadata title="A Title" -metadata artist="Some Artist" \
    -metadata comment="said, with commas" -metadata date=2024 -metadata genre=Documentary \
    -metadata copyright="(c) someone" tagged.mp4 || skip "ffmpeg cannot make an H.264 clip"
  need_libav tagged.mp4
  # ffmpeg's own M-JPEG AVI of it is the reference: the same tags (but its encoder's name).
  ffmpeg -nostdin -v error -i tagged.mp4 -c:v mjpeg ref.avi || die "ffmpeg -c:v mjpeg failed"
  # (ffmpeg names itself as the file's encoder: its INFO chunk ISFT, "software")
  tags() {
    ffprobe -v error -show_entries format_tags -of default=nw=1 "$1" |
      grep -v '^TAG:\(encoder\|software\)=' | sort
  }
  tags ref.avi >want.txt
  grep -q '^TAG:title=A Title$' want.txt || die "ffmpeg's AVI lacks the title: $(cat want.txt)"
  expect_ok encode tagged.mp4 -o out.avi --quiet
  tags out.avi >got.txt
  diff want.txt got.txt >/dev/null || die "tags differ from ffmpeg's AVI: $(diff want.txt got.txt)"
  # Matroska keeps its tags in an element of their own, named in upper case ("ARTIST").
  ffmpeg -nostdin -v error -i tagged.mp4 -c copy tagged.mkv || die "remux failed"
  ffmpeg -nostdin -v error -i tagged.mkv -c:v mjpeg ref_mkv.avi || die "ffmpeg -c:v mjpeg failed"
  tags ref_mkv.avi >want_mkv.txt
  grep -q '^TAG:artist=Some Artist$' want_mkv.txt || die "ffmpeg's AVI lacks the artist: $(cat want_mkv.txt)"
  expect_ok encode tagged.mkv -o out_mkv.avi --quiet
  tags out_mkv.avi >got.txt
  diff want_mkv.txt got.txt >/dev/null ||
    die "tags of the .mkv's AVI differ from ffmpeg's: $(diff want_mkv.txt got.txt)"
  if have_muxers; then
    local o
    for o in out.mkv out.mov; do
      expect_ok encode tagged.mp4 -o "$o" --quiet
      ffprobe -v error -show_entries format_tags -of default=nw=1 "$o" >tags.txt
      for t in 'title=A Title' 'artist=Some Artist' 'comment=said, with commas'; do
        grep -qix "TAG:$t" tags.txt || die "$o lacks $t: $(cat tags.txt)"
      done
    done
  fi
}

# ---------------------------------------------------------------------------------------------
# .mkv and .mov
# ---------------------------------------------------------------------------------------------

case_mkv_and_mov_outputs() {
  need_ffmpeg
  if ! have_muxers; then
    make_y4m in.y4m 2 64x48
    expect_fail 2 encode in.y4m -o out.mkv
    grep -q "Matroska output needs FFmpeg's libraries" err.txt || die "unclear: $(cat err.txt)"
    [[ ! -e out.mkv ]] || die "out.mkv created"
    return
  fi
  av_clip clip.mp4 2
  need_libav clip.mp4
  expect_ok encode clip.mp4 -o ref.avi --quiet
  rm -rf avi && mkdir avi
  ffmpeg -nostdin -v error -i ref.avi -map 0:v -c copy -f image2 avi/%03d.jpg || die "cannot extract"
  local o n
  for o in out.mkv out.mov; do
    expect_ok encode clip.mp4 -o "$o"
    grep -q "^mjpeg: wrote $o: 50 frames, .*; carried: aac 48000 Hz stereo audio" err.txt ||
      die "$o: summary: $(cat err.txt)"
    [[ $(stream_field "$o" v:0 codec_name,width,height) == "mjpeg,160,90" ]] ||
      die "$o: ffprobe: $(stream_field "$o" v:0 codec_name,width,height)"
    # Every frame byte for byte the AVI's.
    rm -rf x && mkdir x
    ffmpeg -nostdin -v error -i "$o" -map 0:v -c copy -f image2 x/%03d.jpg || die "cannot extract"
    n=$(ls x | wc -l)
    [[ $n -eq 50 ]] || die "$o: $n frames"
    for f in avi/*.jpg; do same_bytes "$f" "x/${f#avi/}"; done
    expect_audio_copied clip.mp4 "$o" aac
  done
  # The same refusals as every output: an existing file without -y.
  expect_fail 1 encode clip.mp4 -o out.mkv --quiet
  grep -q "output 'out.mkv' already exists (use -y" err.txt || die "unclear: $(cat err.txt)"
  expect_fail 2 encode clip.mp4 -o out.mp4 --quiet
  grep -q "\.mkv, \.mov" err.txt || die "the supported outputs are not listed: $(cat err.txt)"
}

case_interrupted_encode_ends_audio_with_the_frames() {
  need_ffmpeg
  # 10 s of 1080p (M-JPEG in Matroska: quick to make and to decode) with AAC; encoded slowly
  # (q100 4:4:4 on one thread) so that Ctrl-C comes long before the end. The signal is sent to
  # the stopped process, so that however busy the machine, it arrives while frames remain.
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=1920x1080:rate=25 \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -ac 2 -t 10 -c:v mjpeg -q:v 3 \
    -c:a aac long.mkv || skip "ffmpeg cannot make the clip"
  need_libav long.mkv
  "$MJPEG" encode long.mkv -o out.avi -q 100 -s 444 --mode cpu --producers 1 \
    --entropy-threads 1 --progress 2>err.txt &
  local pid=$!
  bg $pid
  wait_until 120 "mjpeg's first frame" progress_shown
  kill -STOP $pid
  kill -INT $pid
  kill -CONT $pid
  wait_exit $pid
  [[ $RC -eq 130 ]] || die "exit $RC after Ctrl-C: $(cat err.txt)"
  local frames video_s audio_s
  frames=$(ffprobe -v error -select_streams v:0 -show_entries stream=nb_frames -of default=nw=1:nk=1 out.avi)
  ((frames > 0 && frames < 250)) || die "$frames frames written"
  grep -q "^mjpeg: wrote out.avi: $frames frames\? (interrupted), .*; carried: aac .*audio" err.txt ||
    die "summary: $(cat err.txt)"
  video_s=$(awk -v f="$frames" 'BEGIN { print f / 25 }')
  audio_s=$(ffmpeg -nostdin -v info -i out.avi -map 0:a:0 -f null - 2>&1 |
    sed -n 's/.*time=\([0-9:.]*\).*/\1/p' | tail -1 | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }')
  # The audio ends with the last frame (within a packet, 21 ms, and ffmpeg's rounding).
  close_to "$audio_s" "$video_s" 0.1 || die "audio of $audio_s s for $video_s s of video"
  [[ -z $(ffmpeg -nostdin -v error -xerror -i out.avi -f null - 2>&1) ]] || die "ffmpeg reports errors"
  no_temp_files .
  echo "interrupted after $frames frames: $video_s s of video, $audio_s s of audio"
}
