// AVI (with OpenDML segments), raw .mjpeg and image-sequence outputs; atomic publication.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <random>

#include "io/atomic_file.hpp"
#include "io/avi_writer.hpp"
#include "io/frame_sink.hpp"
#include "io_test_util.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

using namespace mjpeg::io;
using mjpeg::write_file;
using io_test::ScratchDir;
using Bytes = std::vector<std::uint8_t>;

namespace {

/// `count` distinct JPEG frames of a width x height RGB image. `noise` (0..255) adds random
/// texture, which makes the frames large (used to fill OpenDML segments quickly).
std::vector<Bytes> make_frames(int count, int width, int height, int noise, int quality = 90) {
  std::mt19937 rng(1234);
  std::vector<Bytes> frames;
  std::vector<std::uint8_t> rgb(std::size_t(width) * height * 3);
  for (int i = 0; i < count; ++i) {
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        std::uint8_t* p = &rgb[(std::size_t(y) * width + x) * 3];
        const int n = noise ? int(rng() % unsigned(noise)) : 0;
        p[0] = std::uint8_t((x * 4 + i * 9 + n) & 255);
        p[1] = std::uint8_t((y * 3 + i * 5 + n) & 255);
        p[2] = std::uint8_t((x + y + i * 17) & 255);
      }
    mjpeg::ImageView view{rgb.data(), width, height, mjpeg::PixelFormat::rgb24, std::size_t(width) * 3};
    mjpeg::EncodeOptions opt;
    opt.quality = quality;
    frames.push_back(mjpeg::encode_jpeg(view, opt));
  }
  return frames;
}

// --- a small RIFF walker, independent of the writer ------------------------------------------

std::uint32_t le32(const Bytes& b, std::size_t at) {
  return std::uint32_t(b[at]) | std::uint32_t(b[at + 1]) << 8 | std::uint32_t(b[at + 2]) << 16 |
         std::uint32_t(b[at + 3]) << 24;
}
std::uint64_t le64(const Bytes& b, std::size_t at) {
  return std::uint64_t(le32(b, at)) | std::uint64_t(le32(b, at + 4)) << 32;
}
std::string fourcc(const Bytes& b, std::size_t at) { return std::string(b.begin() + at, b.begin() + at + 4); }

struct Chunk {
  std::string id;        // chunk id, or "LIST:xxxx" / "RIFF:xxxx" for lists
  std::size_t pos;       // offset of the chunk header
  std::uint32_t size;    // payload size from the header
  int riff;              // which RIFF segment (0 = 'AVI ')
};

/// Flattens every chunk and list of the file, checking that sizes nest exactly.
void walk(const Bytes& b, std::size_t begin, std::size_t end, int riff, std::vector<Chunk>& out) {
  std::size_t pos = begin;
  while (pos < end) {
    ASSERT_LE(pos + 8, end) << "chunk header past its parent at " << pos;
    const std::string id = fourcc(b, pos);
    const std::uint32_t size = le32(b, pos + 4);
    ASSERT_LE(pos + 8 + size, end) << id << " at " << pos << " overruns its parent";
    if (id == "LIST" || id == "RIFF") {
      out.push_back({id + ":" + fourcc(b, pos + 8), pos, size, riff});
      walk(b, pos + 12, pos + 8 + size, riff, out);
    } else {
      out.push_back({id, pos, size, riff});
    }
    pos += 8 + size + (size & 1);  // word alignment
  }
  ASSERT_EQ(pos, end) << "padding mismatch at the end of a list";
}

struct AviFacts {
  std::vector<Bytes> frames;                 // the '00dc' payloads in file order
  std::vector<Bytes> audio;                  // the '01wb' payloads in file order
  std::vector<std::size_t> riff_sizes;       // 8 + RIFF size of each segment
  std::uint32_t avih_frames = 0, avih_streams = 0, strh_length = 0, dmlh_frames = 0;
  std::uint32_t strh_rate = 0, strh_scale = 0;
  std::uint32_t audio_length = 0, audio_sample_size = 0;  // the 'auds' strh's
  std::vector<std::uint32_t> audio_durations;  // its super index's entries
};

/// Parses the file and checks every index (idx1, and per stream its indx and ix##) against the
/// chunks of the stream ('00dc', and '01wb' when there is an audio stream).
AviFacts check_avi(const std::string& path) {
  AviFacts f;
  const Bytes b = io_test::read_bytes(path);
  std::vector<Chunk> chunks;
  // Top level: a sequence of RIFF segments.
  for (std::size_t pos = 0, riff = 0; pos < b.size(); ++riff) {
    EXPECT_EQ(fourcc(b, pos), "RIFF");
    EXPECT_EQ(fourcc(b, pos + 8), riff == 0 ? "AVI " : "AVIX");
    const std::uint32_t size = le32(b, pos + 4);
    f.riff_sizes.push_back(8 + size);
    chunks.push_back({"RIFF:" + fourcc(b, pos + 8), pos, size, int(riff)});
    walk(b, pos + 12, pos + 8 + size, int(riff), chunks);
    pos += 8 + size;
    if (::testing::Test::HasFatalFailure()) return f;
  }
  const char* const tags[2] = {"00dc", "01wb"};
  std::vector<std::size_t> movi_fourcc;        // per segment
  std::vector<std::size_t> data_pos[2];        // absolute offset of each chunk's payload
  std::vector<std::size_t> per_riff[2];        // chunks of each segment
  std::vector<std::vector<Bytes>*> payloads = {&f.frames, &f.audio};
  std::vector<std::pair<std::string, std::size_t>> first_riff;  // its chunks in file order
  std::size_t idx1 = 0;
  std::vector<std::size_t> indx;               // per stream, in strl order
  std::vector<std::size_t> ix[2];
  int strh_seen = 0;
  for (int s = 0; s < 2; ++s) per_riff[s].assign(f.riff_sizes.size(), 0);
  for (const Chunk& c : chunks) {
    const std::size_t data = c.pos + 8;
    if (c.id == "LIST:movi") movi_fourcc.push_back(data);
    for (int s = 0; s < 2; ++s) {
      if (c.id != tags[s]) continue;
      payloads[std::size_t(s)]->emplace_back(b.begin() + data, b.begin() + data + c.size);
      data_pos[s].push_back(data);
      ++per_riff[s][std::size_t(c.riff)];
      if (c.riff == 0) first_riff.emplace_back(c.id, c.pos);
    }
    if (c.id == "avih") {
      f.avih_frames = le32(b, data + 16);
      f.avih_streams = le32(b, data + 24);
    } else if (c.id == "strh") {
      if (strh_seen++ == 0) {
        EXPECT_EQ(fourcc(b, data), "vids");
        EXPECT_EQ(fourcc(b, data + 4), "MJPG");
        f.strh_scale = le32(b, data + 20);
        f.strh_rate = le32(b, data + 24);
        f.strh_length = le32(b, data + 32);
      } else {
        EXPECT_EQ(fourcc(b, data), "auds");
        f.audio_length = le32(b, data + 32);
        f.audio_sample_size = le32(b, data + 44);
      }
    } else if (c.id == "strf" && strh_seen == 1) EXPECT_EQ(fourcc(b, data + 16), "MJPG");
    else if (c.id == "dmlh") f.dmlh_frames = le32(b, data);
    else if (c.id == "idx1") { EXPECT_EQ(c.riff, 0); idx1 = c.pos; }
    else if (c.id == "indx") indx.push_back(c.pos);
    else if (c.id == "ix00") ix[0].push_back(c.pos);
    else if (c.id == "ix01") ix[1].push_back(c.pos);
  }
  const int streams = strh_seen;
  EXPECT_EQ(f.avih_streams, std::uint32_t(streams));
  EXPECT_EQ(movi_fourcc.size(), f.riff_sizes.size());
  // idx1: the first segment's chunks of every stream in file order, offsets from the first
  // 'movi' fourcc to each chunk header.
  EXPECT_NE(idx1, 0u);
  if (idx1 && !movi_fourcc.empty()) {
    const std::uint32_t n = le32(b, idx1 + 4) / 16;
    EXPECT_EQ(n, first_riff.size());
    for (std::uint32_t i = 0; i < n && i < first_riff.size(); ++i) {
      const std::size_t e = idx1 + 8 + 16 * i;
      EXPECT_EQ(fourcc(b, e), first_riff[i].first);
      EXPECT_EQ(le32(b, e + 4) & 0x10, 0x10u) << "keyframe flag";
      EXPECT_EQ(movi_fourcc[0] + le32(b, e + 8), first_riff[i].second);
      EXPECT_EQ(le32(b, e + 12), le32(b, first_riff[i].second + 4));
    }
  }
  // indx -> ix## -> chunk data, for every stream and segment.
  EXPECT_EQ(indx.size(), std::size_t(streams));
  for (int s = 0; s < streams && s < int(indx.size()); ++s) {
    const std::size_t d = indx[std::size_t(s)] + 8;
    EXPECT_EQ(b[d] | b[d + 1] << 8, 4);    // wLongsPerEntry
    EXPECT_EQ(b[d + 3], 0);                 // AVI_INDEX_OF_INDEXES
    EXPECT_EQ(fourcc(b, d + 8), tags[s]);   // dwChunkId
    const std::uint32_t used = le32(b, d + 4);
    EXPECT_EQ(used, f.riff_sizes.size());
    EXPECT_EQ(ix[s].size(), f.riff_sizes.size());
    std::size_t chunk = 0;
    for (std::uint32_t g = 0; g < used && g < ix[s].size(); ++g) {
      const std::size_t e = d + 24 + 16 * g;
      const std::size_t at = ix[s][g];
      EXPECT_EQ(le64(b, e), at);
      EXPECT_EQ(le32(b, e + 8), 8 + le32(b, at + 4));
      const std::uint32_t n = le32(b, at + 8 + 4);
      EXPECT_EQ(n, per_riff[s][g]);
      if (s == 0) EXPECT_EQ(le32(b, e + 12), n);  // duration: frames
      else f.audio_durations.push_back(le32(b, e + 12));
      EXPECT_EQ(b[at + 8 + 3], 1);          // AVI_INDEX_OF_CHUNKS
      EXPECT_EQ(fourcc(b, at + 16), tags[s]);
      const std::uint64_t base = le64(b, at + 8 + 12);
      for (std::uint32_t i = 0; i < n && chunk < data_pos[s].size(); ++i, ++chunk) {
        const std::size_t e2 = at + 32 + 8 * i;
        EXPECT_EQ(base + le32(b, e2), data_pos[s][chunk]);
        EXPECT_EQ(le32(b, e2 + 4), (*payloads[std::size_t(s)])[chunk].size());
      }
    }
    EXPECT_EQ(chunk, payloads[std::size_t(s)]->size());
  }
  EXPECT_EQ(f.avih_frames, per_riff[0].empty() ? 0u : std::uint32_t(per_riff[0][0]));
  return f;
}

void write_all(FrameSink& sink, const std::vector<Bytes>& frames) {
  for (const Bytes& f : frames) sink.write_frame(f.data(), f.size());
}

/// ffprobe counts, ffmpeg's strict decode, and a byte-exact stream copy back to JPEG files.
void check_with_ffmpeg(const std::string& path, const std::vector<Bytes>& frames, int w, int h,
                       const std::string& rate, const ScratchDir& dir, const std::string& fmt = "") {
  auto kv = io_test::probe_stream(path, fmt);
  EXPECT_EQ(kv["_error"], "");
  EXPECT_EQ(kv["codec_name"], "mjpeg");
  EXPECT_EQ(kv["width"], std::to_string(w));
  EXPECT_EQ(kv["height"], std::to_string(h));
  if (!rate.empty()) {
    EXPECT_EQ(kv["r_frame_rate"], rate);
  }
  EXPECT_EQ(kv["nb_read_frames"], std::to_string(frames.size()));
  if (fmt.empty()) {
    EXPECT_EQ(kv["nb_frames"], std::to_string(frames.size()));
  }

  std::string log;
  EXPECT_EQ(io_test::run("ffmpeg -nostdin -v error -xerror " + fmt + " -i '" + path +
                         "' -f null - 2>&1", &log), 0);
  EXPECT_EQ(log, "") << "ffmpeg decode was not silent";

  const std::string out = dir.file("copy");
  ASSERT_EQ(io_test::run("mkdir -p '" + out + "' && ffmpeg -nostdin -v error " + fmt + " -i '" +
                         path + "' -c copy -f image2 '" + out + "/f%04d.jpg' 2>&1", &log), 0) << log;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/f%04zu.jpg", i + 1);
    EXPECT_TRUE(io_test::read_bytes(out + name) == frames[i]) << "frame " << i << " differs";
  }
  EXPECT_FALSE(io_test::file_exists(out + "/f" + std::to_string(10000 + frames.size() + 1).substr(1) + ".jpg"));
}

// --- AVI ----------------------------------------------------------------------------------

TEST(AviWriter, SmallFileStructureAndFfprobe) {
  ScratchDir dir;
  const auto frames = make_frames(12, 64, 48, 0);
  const std::string path = dir.file("out.avi");
  {
    AviWriter w(path, 64, 48, 30000, 1001);
    write_all(w, frames);
    EXPECT_FALSE(io_test::file_exists(path)) << "nothing under the final name before close()";
    w.close();
    EXPECT_EQ(w.frames_written(), 12);
    EXPECT_EQ(w.segments(), 1);
  }
  const AviFacts f = check_avi(path);
  EXPECT_EQ(f.riff_sizes.size(), 1u);
  EXPECT_EQ(f.frames, frames);
  EXPECT_EQ(f.strh_length, 12u);
  EXPECT_EQ(f.dmlh_frames, 12u);
  EXPECT_EQ(f.strh_rate, 30000u);
  EXPECT_EQ(f.strh_scale, 1001u);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.avi"}) << "no temporary file left";
  if (!io_test::have_tool("ffprobe") || !io_test::have_tool("ffmpeg"))
    GTEST_SKIP() << "ffprobe/ffmpeg not found on PATH: container checks by ffmpeg skipped";
  check_with_ffmpeg(path, frames, 64, 48, "30000/1001", dir);
}

TEST(AviWriter, OddSizedFramesArePadded) {
  ScratchDir dir;
  auto frames = make_frames(3, 16, 16, 0);
  for (Bytes& f : frames)
    if (f.size() % 2 == 0) { f.insert(f.end() - 2, 0xFF); }  // a fill byte before EOI: still valid JPEG
  const std::string path = dir.file("odd.avi");
  AviWriter w(path, 16, 16, 25, 1);
  write_all(w, frames);
  w.close();
  EXPECT_EQ(check_avi(path).frames, frames);
}

TEST(AviWriter, OpenDmlSegmentsPastTheRiffLimit) {
  ScratchDir dir;
  const auto frames = make_frames(48, 320, 240, 250, 95);
  std::size_t total = 0;
  for (const Bytes& f : frames) total += f.size();
  const std::uint64_t limit = 1 << 20;
  ASSERT_GT(total, 3 * limit) << "frames too small to make several segments";
  const std::string path = dir.file("big.avi");
  {
    AviWriter w(path, 320, 240, 24, 1, limit);
    write_all(w, frames);
    w.close();
    EXPECT_GE(w.segments(), 4);
  }
  const AviFacts f = check_avi(path);
  EXPECT_GE(f.riff_sizes.size(), 4u);
  for (std::size_t s : f.riff_sizes) EXPECT_LE(s, limit);
  EXPECT_EQ(f.frames, frames);
  EXPECT_EQ(f.strh_length, 48u);
  EXPECT_EQ(f.dmlh_frames, 48u);
  EXPECT_LT(f.avih_frames, 48u) << "avih counts the first RIFF only";
  if (!io_test::have_tool("ffprobe") || !io_test::have_tool("ffmpeg"))
    GTEST_SKIP() << "ffprobe/ffmpeg not found on PATH: container checks by ffmpeg skipped";
  check_with_ffmpeg(path, frames, 320, 240, "24/1", dir);
}

/// `seconds` of 16-bit stereo PCM at 48 kHz, a tone with some noise (so that it is not all the
/// same bytes).
Bytes make_pcm(double seconds) {
  Bytes pcm;
  std::mt19937 rng(99);
  for (int i = 0; i < int(seconds * 48000); ++i) {
    const auto v = std::int16_t(9000 * std::sin(i * 0.05) + int(rng() % 64));
    for (int c = 0; c < 2; ++c) {
      pcm.push_back(std::uint8_t(v & 0xFF));
      pcm.push_back(std::uint8_t((v >> 8) & 0xFF));
    }
  }
  return pcm;
}

/// Writes `frames` at 24 frames/s with `pcm` interleaved, in packets of `per_packet` bytes,
/// each before the first frame that ends after it starts.
void write_interleaved(AviWriter& w, const std::vector<Bytes>& frames, const Bytes& pcm,
                       std::size_t per_packet) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const double frame_end = double(i + 1) / 24;
    while (at < pcm.size() && double(at / 4) / 48000 < frame_end) {
      const std::size_t n = std::min(per_packet, pcm.size() - at);
      w.write_audio(pcm.data() + at, n);
      at += n;
    }
    w.write_frame(frames[i].data(), frames[i].size());
  }
  if (at < pcm.size()) w.write_audio(pcm.data() + at, pcm.size() - at);
}

TEST(AviWriter, AudioInterleavedAcrossOpenDmlSegments) {
  ScratchDir dir;
  const auto frames = make_frames(48, 320, 240, 250, 95);  // 2 s at 24 frames/s
  const Bytes pcm = make_pcm(2.0);
  AviAudio audio;
  audio.format_tag = 1;
  audio.channels = 2;
  audio.sample_rate = 48000;
  audio.block_align = 4;
  audio.bits_per_sample = 16;
  audio.avg_bytes_per_sec = 192000;
  AviExtras extras;
  extras.audio = audio;
  extras.info = {{"INAM", "odd"}, {"IART", "even!"}};
  const std::uint64_t limit = 1 << 20;
  const std::string path = dir.file("av.avi");
  {
    AviWriter w(path, 320, 240, 24, 1, extras, limit);
    write_interleaved(w, frames, pcm, 4000);
    w.close();
    EXPECT_GE(w.segments(), 4);
    EXPECT_EQ(w.audio_bytes(), pcm.size());
  }
  const AviFacts f = check_avi(path);
  EXPECT_GE(f.riff_sizes.size(), 4u);
  for (std::size_t s : f.riff_sizes) EXPECT_LE(s, limit);
  EXPECT_EQ(f.frames, frames);
  Bytes joined;
  for (const Bytes& a : f.audio) joined.insert(joined.end(), a.begin(), a.end());
  EXPECT_TRUE(joined == pcm) << "the audio chunks are not the samples in order";
  EXPECT_EQ(f.audio_length, pcm.size() / 4) << "PCM counts samples";
  EXPECT_EQ(f.audio_sample_size, 4u);
  std::uint64_t samples = 0;
  for (std::uint32_t d : f.audio_durations) samples += d;
  EXPECT_EQ(samples, pcm.size() / 4) << "the super index's durations count each segment's samples";
  if (!io_test::have_tool("ffprobe") || !io_test::have_tool("ffmpeg"))
    GTEST_SKIP() << "ffprobe/ffmpeg not found on PATH: container checks by ffmpeg skipped";
  check_with_ffmpeg(path, frames, 320, 240, "24/1", dir);
  std::string log;
  ASSERT_EQ(io_test::run("ffmpeg -nostdin -v error -xerror -i '" + path + "' -map 0:a -f s16le '" +
                         dir.file("a.raw") + "' 2>&1", &log), 0) << log;
  EXPECT_TRUE(io_test::read_bytes(dir.file("a.raw")) == pcm) << "ffmpeg decodes other samples";
  EXPECT_EQ(io_test::ScratchDir::lines("ffprobe -v error -show_entries format_tags=title,artist "
                                       "-of default=nw=1 '" + path + "'"),
            (std::vector<std::string>{"TAG:title=odd", "TAG:artist=even!"}));
}

TEST(AviWriter, PixelAspectInVprpAsFfprobeReadsIt) {
  if (!io_test::have_tool("ffprobe")) GTEST_SKIP() << "ffprobe not found on PATH";
  ScratchDir dir;
  const auto frames = make_frames(2, 64, 48, 0);
  for (const auto& [sar, want] : std::vector<std::pair<std::pair<int, int>, std::string>>{
           {{1, 1}, "1:1,4:3"}, {{4, 3}, "4:3,16:9"}, {{64, 45}, "64:45,256:135"}}) {
    AviExtras extras;
    extras.aspect_num = sar.first;
    extras.aspect_den = sar.second;
    const std::string path = dir.file("a" + std::to_string(sar.first) + ".avi");
    AviWriter w(path, 64, 48, 25, 1, extras);
    write_all(w, frames);
    w.close();
    const auto got = io_test::ScratchDir::lines(
        "ffprobe -v error -select_streams v:0 -show_entries "
        "stream=sample_aspect_ratio,display_aspect_ratio -of csv=p=0 '" + path + "'");
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], want);
  }
}

TEST(AtomicFile, NoReplaceClaimWithEveryMethod) {
  // The fallbacks for file systems without renameat2(RENAME_NOREPLACE) (link + unlink) or
  // without hard links (a placeholder created with O_EXCL): each refuses an existing target
  // and leaves both files as they were, and moves the file when the name is free.
  for (const NoReplaceMethod m : {NoReplaceMethod::automatic, NoReplaceMethod::renameat2,
                                  NoReplaceMethod::link, NoReplaceMethod::placeholder}) {
    ScratchDir dir;
    const std::string from = dir.file("new"), to = dir.file("taken");
    write_file(from, std::string("new bytes"));
    write_file(to, std::string("precious"));
    errno = 0;
    EXPECT_EQ(rename_no_replace(from.c_str(), to.c_str(), m), -1) << int(m);
    EXPECT_EQ(errno, EEXIST) << int(m);
    EXPECT_EQ(io_test::read_bytes(to), Bytes({'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'}));
    EXPECT_EQ(io_test::read_bytes(from).size(), 9u);
    const std::string free_name = dir.file("free");
    EXPECT_EQ(rename_no_replace(from.c_str(), free_name.c_str(), m), 0) << int(m);
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"free", "taken"})) << int(m);
    EXPECT_EQ(io_test::read_bytes(free_name).size(), 9u);
  }
}

TEST(AtomicFile, WithoutReplaceTheFileThatAppearedStays) {
  ScratchDir dir;
  const std::string path = dir.file("out.avi");
  const auto frames = make_frames(2, 32, 32, 0);
  AviExtras extras;
  extras.replace_existing = false;
  AviWriter w(path, 32, 32, 25, 1, extras);
  write_all(w, frames);
  write_file(path, std::string("theirs"));  // appears before the writer publishes
  try {
    w.close();
    ADD_FAILURE() << "close() replaced the file";
  } catch (const mjpeg::Error& e) {
    EXPECT_EQ(std::string(e.what()), "output '" + path + "' already exists (use -y to overwrite)");
  }
  EXPECT_EQ(io_test::read_bytes(path), Bytes({'t', 'h', 'e', 'i', 'r', 's'}));
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.avi"}) << "a temporary file stayed";
}

TEST(AviWriter, TooManySegmentsIsAClearError) {
  ScratchDir dir;
  const auto frames = make_frames(1, 128, 128, 250, 98);  // one ~30+ KiB frame, written repeatedly
  ASSERT_GT(frames[0].size(), 20000u);
  const std::string path = dir.file("huge.avi");
  AviWriter w(path, 128, 128, 25, 1, 64 * 1024);
  try {
    for (int i = 0; i < 100000; ++i) w.write_frame(frames[0].data(), frames[0].size());
    ADD_FAILURE() << "no error after 100000 frames";
  } catch (const mjpeg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("256"), std::string::npos) << e.what();
  }
  EXPECT_EQ(w.segments(), AviWriter::kMaxSegments);
}

TEST(AviWriter, RejectsInvalidArguments) {
  ScratchDir dir;
  EXPECT_THROW(AviWriter(dir.file("a.avi"), 0, 10, 25, 1), mjpeg::UsageError);
  EXPECT_THROW(AviWriter(dir.file("a.avi"), 10, 10, 0, 1), mjpeg::UsageError);
  EXPECT_THROW(AviWriter(dir.file("a.avi"), 10, 10, 25, 0), mjpeg::UsageError);
  EXPECT_THROW(AviWriter(dir.file("a.avi"), 10, 10, 25, 1, 1000), mjpeg::UsageError);
  EXPECT_THROW(AviWriter("-", 10, 10, 25, 1), mjpeg::UsageError);
  EXPECT_TRUE(dir.list().empty());
}

TEST(AviWriter, UnclosedWriterLeavesNothing) {
  ScratchDir dir;
  const auto frames = make_frames(3, 32, 32, 0);
  {
    AviWriter w(dir.file("gone.avi"), 32, 32, 25, 1);
    write_all(w, frames);
  }  // destroyed without close(): abandoned
  EXPECT_TRUE(dir.list().empty());
}

TEST(AviWriter, DiskFullIsAnErrorWithStrerror) {
  if (!io_test::file_exists("/dev/full")) GTEST_SKIP() << "/dev/full not available";
  const auto frames = make_frames(4, 32, 32, 0);
  try {
    AviWriter w("/dev/full", 32, 32, 25, 1);
    write_all(w, frames);
    w.close();
    ADD_FAILURE() << "writing to /dev/full succeeded";
  } catch (const mjpeg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOSPC)), std::string::npos) << e.what();
  }
}

/// In a child limited to `limit` bytes per file (RLIMIT_FSIZE, SIGXFSZ ignored, so write()
/// fails with EFBIG like a full disk), writes `frames` to `path`. Exit code 0: Error thrown.
int write_in_limited_child(const std::string& path, const std::vector<Bytes>& frames, rlim_t limit) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    int code = 2;
    try {
      auto sink = make_frame_sink(path, 256, 192, 25, 1);
      for (const Bytes& f : frames) sink->write_frame(f.data(), f.size());
      sink->close();
      code = 1;  // no error
    } catch (const mjpeg::Error& e) {
      code = std::string(e.what()).find(path) != std::string::npos ? 0 : 3;
    }
    std::_Exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FrameSinks, FailedWriteLeavesNoFileUnderTheFinalName) {
  ScratchDir dir;
  const auto frames = make_frames(30, 256, 192, 200, 95);  // a few MiB, past the 4 MiB buffer
  for (const char* name : {"full.avi", "full.mjpeg"}) {
    const std::string path = dir.file(name);
    EXPECT_EQ(write_in_limited_child(path, frames, 1 << 20), 0)
        << name << ": 1: no error, 2: other exception, 3: message lacks the path";
    EXPECT_TRUE(dir.list().empty()) << name << ": a file was left behind";
  }
}

TEST(AtomicFile, SmallAndDirectWritesAndPatchesLandInOrder) {
  // Small writes are buffered, large ones (>= kDirectWrite) go out with what is buffered in one
  // writev: the file must hold every byte in call order, and patches must land where asked.
  ScratchDir dir;
  const std::string path = dir.file("mixed.bin");
  std::mt19937 rng(77);
  Bytes expected;
  {
    AtomicFile file(path, true, 256 << 10);
    const std::size_t sizes[] = {5, AtomicFile::kDirectWrite, 3, 1, AtomicFile::kDirectWrite + 7,
                                 (256 << 10) - 2, 17, 300 << 10, 0, 9};
    for (std::size_t n : sizes) {
      Bytes chunk(n);
      for (auto& b : chunk) b = std::uint8_t(rng());
      file.write(chunk.data(), chunk.size());
      expected.insert(expected.end(), chunk.begin(), chunk.end());
      EXPECT_EQ(file.position(), expected.size());
    }
    const std::uint8_t mark[4] = {0xde, 0xad, 0xbe, 0xef};
    file.patch(2, mark, 4);  // long since written out
    std::copy(mark, mark + 4, expected.begin() + 2);
    file.patch(expected.size() - 5, mark, 4);  // still in the buffer
    std::copy(mark, mark + 4, expected.end() - 5);
    file.commit();
  }
  EXPECT_EQ(io_test::read_bytes(path), expected);
}

// --- raw .mjpeg and image sequences -------------------------------------------------------

TEST(MjpegStreamWriter, ConcatenatedFramesReadableByFfprobe) {
  ScratchDir dir;
  const auto frames = make_frames(7, 48, 32, 0);
  const std::string path = dir.file("out.mjpeg");
  auto sink = make_frame_sink(path, 48, 32, 25, 1);
  write_all(*sink, frames);
  EXPECT_FALSE(io_test::file_exists(path));
  sink->close();
  Bytes all;
  for (const Bytes& f : frames) all.insert(all.end(), f.begin(), f.end());
  EXPECT_TRUE(io_test::read_bytes(path) == all);
  EXPECT_EQ(sink->frames_written(), 7);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.mjpeg"});
  if (!io_test::have_tool("ffprobe") || !io_test::have_tool("ffmpeg"))
    GTEST_SKIP() << "ffprobe/ffmpeg not found on PATH";
  check_with_ffmpeg(path, frames, 48, 32, "", dir, "-f mjpeg");
}

TEST(ImageSequenceWriter, OneFilePerFrame) {
  ScratchDir dir;
  const auto frames = make_frames(3, 16, 16, 0);
  ASSERT_EQ(io_test::run("mkdir '" + dir.file("seq") + "'"), 0);
  auto sink = make_frame_sink(dir.file("seq/%05d.jpg"), 16, 16, 25, 1);
  write_all(*sink, frames);
  sink->close();
  EXPECT_EQ(io_test::ScratchDir::lines("ls -A '" + dir.file("seq") + "'"),
            (std::vector<std::string>{"00001.jpg", "00002.jpg", "00003.jpg"}));
  for (int i = 0; i < 3; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "seq/%05d.jpg", i + 1);
    EXPECT_TRUE(io_test::read_bytes(dir.file(name)) == frames[std::size_t(i)]);
  }
  ImageSequenceWriter w("a_%%_%3d.jpg", 0);
  EXPECT_EQ(w.file_name(7), "a_%_  7.jpg");
  EXPECT_THROW(make_frame_sink(dir.file("missing/%d.jpg"), 16, 16, 25, 1)->write_frame(frames[0].data(), frames[0].size()),
               mjpeg::Error);
}

TEST(ImageSequenceWriter, AllOrNothing) {
  ScratchDir dir;
  const auto frames = make_frames(3, 16, 16, 0);
  const std::string pattern = dir.file("f%03d.jpg");
  {  // abandoned (an error, an interruption): not one file, no temporary folder
    ImageSequenceWriter w(pattern);
    write_all(w, frames);
    EXPECT_EQ(dir.list().size(), 1u) << "the frames wait in one temporary folder";
  }
  EXPECT_TRUE(dir.list().empty());
  {  // a name taken while the frames were written: nothing is published, the file is kept
    ImageSequenceWriter w(pattern, 1, /*replace_existing=*/false);
    write_all(w, frames);
    ASSERT_EQ(io_test::run("printf precious > '" + dir.file("f003.jpg") + "'"), 0);
    EXPECT_THROW(w.close(), mjpeg::Error);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"f003.jpg"});
    EXPECT_EQ(io_test::read_bytes(dir.file("f003.jpg")).size(), 8u);
  }
  {  // -y: all three, the old f003.jpg replaced
    ImageSequenceWriter w(pattern, 1, /*replace_existing=*/true);
    write_all(w, frames);
    w.close();
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"f001.jpg", "f002.jpg", "f003.jpg"}));
    EXPECT_TRUE(io_test::read_bytes(dir.file("f003.jpg")) == frames[2]);
  }
  EXPECT_THROW(ImageSequenceWriter("d%d/x.jpg"), mjpeg::UsageError);  // number in a directory
}

TEST(AtomicFile, TemporaryNameFitsTheNameLimit) {
  ScratchDir dir;
  const std::string name(250, 'n');
  const std::string temp = temp_name_beside(dir.file(name + ".avi"), "12345-0abcdef");
  const std::string base = temp.substr(temp.rfind('/') + 1);
  EXPECT_LE(base.size(), 255u);
  EXPECT_EQ(base.rfind(".nnn", 0), 0u) << base;
  EXPECT_NE(base.find(".tmp-12345-0abcdef"), std::string::npos) << base;
  write_file(dir.file(name + ".avi"), "x");  // a 254-byte name is written and published
  EXPECT_EQ(dir.list(), std::vector<std::string>{name + ".avi"});
}

TEST(FrameSinks, OutputKindByName) {
  EXPECT_EQ(output_kind("a/b.avi"), OutputKind::avi);
  EXPECT_EQ(output_kind("B.AVI"), OutputKind::avi);
  EXPECT_EQ(output_kind("x.mjpeg"), OutputKind::mjpeg_stream);
  EXPECT_EQ(output_kind("x.mjpg"), OutputKind::mjpeg_stream);
  EXPECT_EQ(output_kind("-"), OutputKind::mjpeg_stream);
  EXPECT_EQ(output_kind("out/%05d.jpg"), OutputKind::image_sequence);
  EXPECT_EQ(output_kind("out/f%d.JPEG"), OutputKind::image_sequence);
  EXPECT_THROW(output_kind("out.mp4"), mjpeg::UsageError);
  EXPECT_THROW(output_kind("noext"), mjpeg::UsageError);
  EXPECT_THROW(output_kind("out/%05d.png"), mjpeg::UsageError);
  EXPECT_THROW(output_kind("out/%05d_%d.jpg"), mjpeg::UsageError);
  EXPECT_THROW(output_kind("out/%s.jpg"), mjpeg::UsageError);
  EXPECT_THROW(output_kind("out.d/file"), mjpeg::UsageError);
}

}  // namespace
