# Cases of a split encode: `encode --part I/K` and `mjpeg join` (sourced by cli_test.sh; its
# helpers are available). What is checked against what: the joined file against a one-pass
# encode of the same input, byte for byte (cmp); parts and joins read by ffprobe and ffmpeg;
# the frames decoded from each part's --json report against the bound of the seeks.

# split_and_join INPUT EXT K [ENCODE OPTIONS...]: encodes the K parts of INPUT to pK_I.EXT and
# joins them, given shuffled and in reverse, into joinedK.EXT; each join must equal one.EXT
# (made by the caller with the same options).
split_and_join() {
  local input=$1 ext=$2 k=$3 i order
  shift 3
  local parts=()
  for ((i = 1; i <= k; i++)); do
    expect_ok encode "$input" --part "$i/$k" -o "p${k}_$i.$ext" --mode cpu --quiet -y "$@"
    parts+=("p${k}_$i.$ext")
  done
  for order in shuffled reverse; do
    if [[ $order == shuffled ]]; then
      mapfile -t parts < <(printf '%s\n' "${parts[@]}" | shuf --random-source=<(yes))
    else
      mapfile -t parts < <(printf '%s\n' "${parts[@]}" | sort -r)
    fi
    expect_ok join "${parts[@]}" -o "joined$k.$ext" --quiet -y
    same_bytes "joined$k.$ext" "one.$ext"
    echo "ok: $k parts of $(basename "$input") joined == one pass ($ext), given as ${parts[*]}"
  done
}

case_parts_join_equal_one_pass() {
  need_ffmpeg
  make_y4m in.y4m 37 160x96  # 37 frames: parts of unequal sizes
  expect_ok encode in.y4m -o one.avi --mode cpu --quiet
  expect_ok encode in.y4m -o one.mjpeg --mode cpu --quiet
  local k
  for k in 1 2 3; do split_and_join in.y4m avi $k; done
  split_and_join in.y4m mjpeg 3
  # A part plays as what it is: its frames, and its record where players do not look.
  [[ $(probe_counts p3_2.avi) == "mjpeg 160 96 25/1 12 12" ]] || die "p3_2.avi: $(probe_counts p3_2.avi)"
  [[ -z $(ffmpeg -v error -xerror -i p3_2.avi -f null - 2>&1) ]] || die "ffmpeg reports errors in a part"
  [[ $(ffprobe -v error -count_frames -f mjpeg -show_entries stream=nb_read_frames -of csv=p=0 \
    p3_2.mjpeg) == 12 ]] || die "ffprobe does not count the .mjpeg part's 12 frames"
  [[ -z $(ffmpeg -v error -xerror -f mjpeg -i p3_2.mjpeg -f null - 2>&1) ]] ||
    die "ffmpeg reports errors in a .mjpeg part"
  grep -qa "^part: 2/3$" p3_2.avi || die "p3_2.avi holds no part record"
  ! grep -qa "MJPEG-NOTE" joined3.avi || die "the joined file carries a part record"
  # Parts of another output kind than the join's: .mjpeg parts into an AVI.
  expect_ok join p3_1.mjpeg p3_3.mjpeg p3_2.mjpeg -o from-mjpeg.avi --quiet
  same_bytes from-mjpeg.avi one.avi
  # The parts of the frames --start / --frames select equal one pass over that range.
  expect_ok encode in.y4m -o range.avi --start 5 --frames 20 --mode cpu --quiet
  expect_ok encode in.y4m -o r1.avi --start 5 --frames 20 --part 1/2 --mode cpu --quiet
  expect_ok encode in.y4m -o r2.avi --start 5 --frames 20 --part 2/2 --mode cpu --quiet
  expect_ok join r2.avi r1.avi -o range-joined.avi --quiet
  same_bytes range-joined.avi range.avi
}
case_parts_join_equal_one_pass_4_and_8() {
  need_ffmpeg
  make_y4m in.y4m 37 160x96
  expect_ok encode in.y4m -o one.avi --mode cpu --quiet
  split_and_join in.y4m avi 4
  split_and_join in.y4m avi 8
}

case_parts_join_past_avi_segments() {
  # OpenDML: with 64 KiB RIFF segments the one-pass AVI and the join cross many segment
  # boundaries (what 1 GiB segments do past 1 GiB); the join must still equal it.
  need_ffmpeg
  make_y4m in.y4m 40 320x180
  export MJPEG_AVI_SEGMENT_BYTES=65536
  expect_ok encode in.y4m -o one.avi --mode cpu --quiet -q 95
  local segments
  segments=$(grep -c -a -o AVIX one.avi)
  ((segments >= 5)) || die "one.avi has $segments AVIX segments, expected several"
  split_and_join in.y4m avi 3 -q 95
  split_and_join in.y4m avi 8 -q 95
  unset MJPEG_AVI_SEGMENT_BYTES
  [[ $(probe_counts joined8.avi) == "mjpeg 320 180 25/1 40 40" ]] || die "joined8.avi: $(probe_counts joined8.avi)"
  [[ -z $(ffmpeg -v error -xerror -i joined8.avi -f null - 2>&1) ]] || die "ffmpeg reports errors"
  echo "ok: $segments OpenDML segments"
}

case_parts_of_a_video_seek_and_decode_little() {
  # A compressed clip with a known GOP (12 frames, B-frames): its parts seek to the keyframe
  # before their range, so K parts decode at most the clip's frames plus K GOPs in all (the
  # frames decoded come from each part's --json), and still join to the one-pass bytes.
  need_ffmpeg
  local clip=clip.mp4 gop=12 k i sum frames
  need_media video/flower.mp4
  ffmpeg -v error -i "$MEDIA/video/flower.mp4" -an -vf scale=320:180 -c:v libx264 -g $gop \
    -keyint_min $gop -sc_threshold 0 -bf 2 -y "$clip" || die "ffmpeg could not make $clip"
  frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
    -of csv=p=0 "$clip")
  expect_ok encode "$clip" -o one.avi --mode cpu --quiet
  for k in 2 4 8; do
    sum=0
    for ((i = 1; i <= k; i++)); do
      expect_ok encode "$clip" --part "$i/$k" -o "p${k}_$i.avi" --mode cpu --quiet --json "p${k}_$i.json"
      sum=$((sum + $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['frames_decoded'])" "p${k}_$i.json")))
    done
    expect_ok join p"${k}"_*.avi -o "joined$k.avi" --quiet
    same_bytes "joined$k.avi" one.avi
    ((sum <= frames + k * gop)) ||
      die "$k parts decoded $sum frames, more than $frames + $k x $gop"
    echo "ok: $k parts decoded $sum frames of $frames (bound $((frames + k * gop)); decoding and dropping would be about $((frames * (k + 1) / 2)))"
  done
  # --start alone seeks too, and lands on the same frames as one pass.
  expect_ok encode "$clip" -o tail.mjpeg --start 100 --mode cpu --quiet --json tail.json
  expect_ok encode "$clip" -o all.mjpeg --mode cpu --quiet
  ffmpeg -v error -f mjpeg -i all.mjpeg -c copy -f image2 "all%03d.jpg" || die "cannot split all.mjpeg"
  ffmpeg -v error -f mjpeg -i tail.mjpeg -c copy -f image2 "tail%03d.jpg" || die "cannot split tail.mjpeg"
  for ((i = 1; i <= frames - 100; i++)); do
    same_bytes "$(printf 'tail%03d.jpg' "$i")" "$(printf 'all%03d.jpg' $((i + 100)))"
  done
  local decoded
  decoded=$(python3 -c "import json; print(json.load(open('tail.json'))['frames_decoded'])")
  ((decoded <= frames - 100 + gop + 1)) || die "--start 100 decoded $decoded frames"
}

case_parts_numbered_jpegs_land_on_their_names() {
  need_ffmpeg
  make_y4m in.y4m 23 96x64
  mkdir one parts
  expect_ok encode in.y4m -o one/%04d.jpg --mode cpu --quiet
  local i
  for i in 3 1 2; do expect_ok encode in.y4m --part "$i/3" -o parts/%04d.jpg --mode cpu --quiet; done
  diff -r one parts >/dev/null || die "the parts' files differ from one pass: $(diff -rq one parts | head -3)"
  expect_fail 1 encode in.y4m --part 2/3 -o parts/%04d.jpg --mode cpu --quiet  # exists: -y
  grep -q "parts/0008.jpg' already exists" err.txt || die "$(cat err.txt)"
  # An image sequence is split by its files, and joined into numbered JPEGs too.
  expect_ok encode one/%04d.jpg -o seq-one.mjpeg --mode cpu --quiet
  expect_ok encode one/%04d.jpg --part 1/2 -o s1.mjpeg --mode cpu --quiet
  expect_ok encode one/%04d.jpg --part 2/2 -o s2.mjpeg --mode cpu --quiet
  expect_ok join s2.mjpeg s1.mjpeg -o seq-joined.mjpeg --quiet
  same_bytes seq-joined.mjpeg seq-one.mjpeg
  mkdir again again-one
  expect_ok join s1.mjpeg s2.mjpeg -o again/%04d.jpg --quiet
  expect_ok encode one/%04d.jpg -o again-one/%04d.jpg --mode cpu --quiet
  diff -r again again-one >/dev/null || die "join into numbered JPEGs differs from one pass"
}

# A .mjpeg part that lost its last frame but kept its record (a part whose encode stopped
# early): the frames are found by their markers, as an independent reader would.
drop_last_frame() {
  python3 - "$1" "$2" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
note = data.index(b"MJPEG-NOTE\n")
frames, at = [], 0
while at < note:
    start, at = at, at + 2
    while True:
        assert data[at] == 0xFF
        marker = data[at + 1]
        if marker == 0xD9:
            at += 2
            break
        length = data[at + 2] << 8 | data[at + 3]
        at += 2 + length
        if marker == 0xDA:
            while not (data[at] == 0xFF and data[at + 1] not in (0x00, *range(0xD0, 0xD8))):
                at += 1
    frames.append(data[start:at])
open(sys.argv[2], "wb").write(b"".join(frames[:-1]) + data[note:])
PY
}

case_join_refuses_damaged_sets() {
  need_ffmpeg
  make_y4m in.y4m 24 160x96
  ffmpeg -v error -f lavfi -i "testsrc=size=160x96:rate=25" -frames:v 24 -pix_fmt yuv420p \
    -f yuv4mpegpipe other.y4m || die "ffmpeg could not make other.y4m"
  make_y4m small.y4m 24 96x64
  local i
  for i in 1 2 3 4; do expect_ok encode in.y4m --part "$i/4" -o "p$i.avi" --mode cpu --quiet; done
  expect_ok encode in.y4m --part 2/3 -o third2.avi --mode cpu --quiet
  expect_ok encode in.y4m --part 3/4 -o q80.avi --mode cpu --quiet -q 80
  expect_ok encode in.y4m --part 3/4 -o s444.avi --mode cpu --quiet -s 444
  expect_ok encode other.y4m --part 3/4 -o other3.avi --mode cpu --quiet
  expect_ok encode small.y4m --part 3/4 -o small3.avi --mode cpu --quiet
  expect_ok encode in.y4m -o plain.avi --mode cpu --quiet
  expect_ok encode in.y4m --part 2/4 -o p2.mjpeg --mode cpu --quiet
  head -c 20000 p3.avi >cut3.avi
  drop_last_frame p2.mjpeg short2.mjpeg
  # refuse WHY PARTS...: exit 1, one line naming the reason, no output.
  refuse() {
    local why=$1
    shift
    expect_fail 1 join "$@" -o out.avi
    grep -q -- "$why" err.txt || die "join $* did not say '$why': $(cat err.txt)"
    [[ ! -e out.avi ]] || die "out.avi written"
  }
  refuse "frames 12..17 of the 0..23 are missing (part 3/4)" p1.avi p2.avi p4.avi
  refuse "frames 18..23 of the 0..23 are missing (part 4/4)" p3.avi p1.avi p2.avi
  refuse "p3.avi: the same part as p3.avi" p1.avi p2.avi p3.avi p3.avi p4.avi
  refuse "third2.avi: its frames 8..15 overlap those of p2.avi (6..11)" p1.avi p2.avi third2.avi p3.avi p4.avi
  refuse "cut3.avi: cut short: its RIFF segment 1 needs" p1.avi p2.avi cut3.avi p4.avi
  refuse "short2.mjpeg: cut short: it holds 5 of the 6 frames of its part 2/4" p1.avi short2.mjpeg p3.avi p4.avi
  refuse "small3.avi: another frame size (96x64; the other parts: 160x96)" p1.avi p2.avi small3.avi p4.avi
  refuse "q80.avi: other JPEG settings (quality 80; the other parts: quality 90)" p1.avi p2.avi q80.avi p4.avi
  refuse "s444.avi: other JPEG settings (sampling 444; the other parts: sampling 420)" p1.avi s444.avi p2.avi p4.avi
  refuse "other3.avi: another source" p1.avi p2.avi other3.avi p4.avi
  refuse "plain.avi: holds no part record" plain.avi
  refuse "in.y4m: neither an AVI file nor an M-JPEG stream" p1.avi in.y4m
  refuse "missing.avi: cannot open" p1.avi missing.avi
  # The output is checked before anything is read; an existing one is kept without -y.
  printf 'precious' >kept.avi
  expect_fail 1 join p1.avi p2.avi p3.avi p4.avi -o kept.avi
  [[ $(cat kept.avi) == precious ]] || die "kept.avi was replaced"
  expect_fail 2 join p1.avi p2.avi p3.avi p4.avi -o out.mp4
  expect_fail 2 join p1.avi p2.avi p3.avi p4.avi -o p2.avi
  grep -q "output 'p2.avi' is one of the parts" err.txt || die "$(cat err.txt)"
  expect_fail 2 join p1.avi p2.avi p3.avi p4.avi -o one.jpg
  expect_fail 2 join p1.avi p2.avi
  expect_ok join p4.avi p3.avi p2.avi p1.avi -o out.avi
  same_bytes out.avi plain.avi
  grep -q "^mjpeg: joined 4 parts of 'in.y4m' (frames 0..23) into out.avi: 24 frames" err.txt ||
    die "join's summary: $(cat err.txt)"
}

case_part_usage_errors() {
  need_ffmpeg
  make_y4m in.y4m 4 64x48
  local p
  for p in 0/4 5/4 1/0 abc 1/4/2 -1/4 "" 1/100001 " 1/2"; do
    expect_fail 2 encode in.y4m --part "$p" -o out.avi --mode cpu
    grep -q -- "--part" err.txt || die "--part $p: error does not name --part: $(cat err.txt)"
  done
  expect_fail 2 encode "$SAMPLE" --part 1/2 -o out.avi
  grep -q -- "--part splits a stream input" err.txt || die "$(cat err.txt)"
  expect_fail 2 encode in.y4m --part 1/2 -o one.jpg --frames 1
  expect_fail 2 encode in.y4m --part 1/2 -o out.mkv
  grep -q -- "--part writes a part of a stream to .avi, .mjpeg or numbered JPEGs" err.txt ||
    die "$(cat err.txt)"
  expect_fail 2 encode in.y4m --part 1/2 -o out.avi --keep-going
  expect_fail 2 encode - --part 1/2 -o out.avi <in.y4m
  grep -q "not standard input" err.txt || die "$(cat err.txt)"
  expect_fail 1 encode in.y4m --part 5/8 -o out.avi --mode cpu --quiet
  grep -q -- "--part 5/8: 4 frames make at most 4 parts, so part 5 has none" err.txt || die "$(cat err.txt)"
  expect_fail 1 encode in.y4m --part 1/2 --start 4 -o out.avi --mode cpu --quiet
  grep -q "none after the first 4 (--start)" err.txt || die "$(cat err.txt)"
  [[ ! -e out.avi ]] || die "out.avi created"
  expect_ok encode --help
  grep -q -- "--part I/K" out.txt || die "encode --help lacks --part"
  expect_ok join --help
  grep -q "byte-identical to a one-pass encode" out.txt || die "join --help: $(cat out.txt)"
}

case_part_json_report() {
  need_ffmpeg
  make_y4m in.y4m 10 64x48
  expect_ok encode in.y4m --part 2/3 -o p2.avi --mode cpu --quiet --json p2.json
  python3 - <<'PY' || die "the --json report: $(cat p2.json)"
import json
j = json.load(open("p2.json"))
assert j["frames"] == 3 and j["output"] == "p2.avi" and j["interrupted"] is False, j
p = j["part"]
assert p["part"] == "2/3" and p["frames"] == "3..5" and p["of"] == "0..9", p
assert p["first"] == 3 and p["count"] == 3 and p["size"] == "64x48" and p["rate"] == "25/1", p
assert p["source id"].startswith("%d bytes, 10 frames, first MiB " % len(open("in.y4m", "rb").read())), p
PY
  # The record in the file says the same (an independent read of the AVI's bytes).
  grep -qa "^source id: $(python3 -c "import json; print(json.load(open('p2.json'))['part']['source id'])")$" p2.avi ||
    die "p2.avi's record differs from its --json"
  expect_ok encode in.y4m -o plain.avi --mode cpu --quiet --json plain.json
  python3 -c "import json; j = json.load(open('plain.json')); assert j['part'] is None and j['frames'] == 10, j" ||
    die "plain.json: $(cat plain.json)"
  expect_fail 1 encode in.y4m -o again.avi --mode cpu --quiet --json plain.json  # exists: -y
  [[ ! -e again.avi ]] || die "again.avi written although its report was refused"
}

case_join_carries_audio_aspect_and_tags() {
  # What one pass writes beside the frames, the join writes too: the source's audio (read from
  # the source again, as one pass reads it: the parts each hold their own range's), its tags
  # (RIFF INFO) and its pixel aspect ratio (vprp). Judged by cmp against one pass, and the
  # one-pass file by ffprobe, so that the case cannot pass on a file without them.
  need_ffmpeg
  ffmpeg -v error -f lavfi -i "testsrc2=size=320x180:rate=25" -f lavfi \
    -i "sine=frequency=440:sample_rate=48000" -t 4 -vf setsar=4/3 -c:v libx264 -g 12 -bf 2 \
    -c:a aac -metadata title="A, B=C 100% é" -metadata artist=someone -shortest clip.mp4 ||
    die "ffmpeg could not make clip.mp4"
  need_libav clip.mp4
  expect_ok encode clip.mp4 -o one.avi --mode cpu --quiet
  [[ $(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 one.avi | tr '\n' ' ') == "mjpeg aac " ]] ||
    die "one.avi: $(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 one.avi)"
  [[ $(ffprobe -v error -select_streams v:0 -show_entries stream=sample_aspect_ratio -of csv=p=0 one.avi) == 4:3 ]] ||
    die "one.avi's pixel aspect ratio: $(ffprobe -v error -show_entries stream=sample_aspect_ratio -of csv=p=0 one.avi)"
  [[ $(ffprobe -v error -show_entries format_tags=title -of default=nw=1:nk=1 one.avi) == "A, B=C 100% é" ]] ||
    die "one.avi's title: $(ffprobe -v error -show_entries format_tags=title -of default=nw=1:nk=1 one.avi)"
  # Each part carries the audio of its own range (an AVI of its own).
  split_and_join clip.mp4 avi 3
  [[ $(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 p3_2.avi) == aac ]] ||
    die "p3_2.avi carries no audio"
  # A range of the source, its audio cut where one pass over that range cuts it.
  expect_ok encode clip.mp4 -o range.avi --start 10 --frames 60 --mode cpu --quiet
  expect_ok encode clip.mp4 -o r1.avi --start 10 --frames 60 --part 1/2 --mode cpu --quiet
  expect_ok encode clip.mp4 -o r2.avi --start 10 --frames 60 --part 2/2 --mode cpu --quiet
  expect_ok join r2.avi r1.avi -o range-joined.avi --quiet
  same_bytes range-joined.avi range.avi
  # --no-audio on the join equals one pass with --no-audio.
  expect_ok encode clip.mp4 -o silent.avi --mode cpu --quiet --no-audio
  expect_ok join p3_3.avi p3_1.avi p3_2.avi -o silent-joined.avi --quiet --no-audio
  same_bytes silent-joined.avi silent.avi
  # Parts made with and without audio are not one pass.
  expect_ok encode clip.mp4 --part 2/3 -o mute2.avi --mode cpu --quiet --no-audio
  expect_fail 1 join p3_1.avi mute2.avi p3_3.avi -o mixed.avi
  grep -q "mute2.avi: other audio (none; the other parts: aac 48000 Hz mono)" err.txt || die "$(cat err.txt)"
  # Where the source cannot be read, or is another file now, the audio cannot be joined
  # exactly: refused with the reason, nothing written; --no-audio still joins the frames.
  mv clip.mp4 moved.mp4
  expect_fail 1 join p3_1.avi p3_2.avi p3_3.avi -o lost.avi
  grep -q "p3_1.avi: the parts carry aac 48000 Hz mono audio, which join takes from their source as one pass does, but '.*clip.mp4' cannot be read here; nothing written" err.txt ||
    die "$(cat err.txt)"
  [[ ! -e lost.avi ]] || die "lost.avi written"
  ffmpeg -v error -f lavfi -i "testsrc2=size=320x180:rate=25" -f lavfi -i "sine=sample_rate=48000" \
    -t 4 -c:v libx264 -c:a aac -shortest clip.mp4 || die "ffmpeg could not make another clip.mp4"
  expect_fail 1 join p3_1.avi p3_2.avi p3_3.avi -o lost.avi
  grep -q "clip.mp4' is no longer the file the parts were made from" err.txt || die "$(cat err.txt)"
  expect_ok join p3_1.avi p3_2.avi p3_3.avi -o lost.avi --quiet --no-audio
  same_bytes lost.avi silent.avi
  # PCM audio (from Matroska) joins the same way.
  ffmpeg -v error -f lavfi -i "testsrc2=size=160x96:rate=25" -f lavfi \
    -i "sine=frequency=300:sample_rate=44100" -t 3 -c:v libx264 -g 10 -c:a pcm_s16le -shortest \
    pcm.mkv || die "ffmpeg could not make pcm.mkv"
  expect_ok encode pcm.mkv -o one.avi --mode cpu --quiet -y
  [[ $(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 one.avi) == pcm_s16le ]] ||
    die "one.avi of pcm.mkv carries no PCM"
  split_and_join pcm.mkv avi 4
}

case_parts_of_raw_frames() {
  # Raw frames are counted from the file's size and read from the range's offset.
  need_ffmpeg
  make_y4m in.y4m 29 160x96
  ffmpeg -v error -i in.y4m -f rawvideo -pix_fmt yuv420p in.yuv || die "ffmpeg could not make in.yuv"
  local raw=(--pix-fmt yuv420p --size 160x96 --fps 25)
  expect_ok encode in.yuv -o one.avi --mode cpu --quiet "${raw[@]}"
  split_and_join in.yuv avi 3 "${raw[@]}"
  expect_fail 2 encode - --part 1/2 -o out.avi --mode cpu "${raw[@]}" <in.yuv
  grep -q -- "--part splits a file whose frames can be counted, not standard input" err.txt ||
    die "$(cat err.txt)"
}
