// libFuzzer target: AviWriter -> file -> an independent RIFF/AVI reader (avi_reader.hpp).
// The input picks the frame size, rate, RIFF segment limit (small, so that OpenDML 'AVIX'
// segments and their indexes are exercised) and a sequence of frames of random sizes and
// contents. The file read back must hold exactly those frames, in order, in its 'movi' lists,
// in idx1 (first segment) and through indx -> ix00, with consistent header counts. With an
// audio stream (the input says), packets of random sizes go between the frames: they must come
// back the same way ('01wb' chunks, idx1, indx -> ix01), and the strh count their samples. A
// writer that refuses (mjpeg::Error, e.g. too many segments) must leave no file behind.
#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "avi_reader.hpp"
#include "io/avi_writer.hpp"
#include "mjpeg/error.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_avi_roundtrip: %s\n", what.c_str());
  std::abort();
}

/// A private scratch directory for the whole run (removed at exit).
const std::string& scratch_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/mjpeg_fuzz_avi.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) finding("cannot create a scratch directory");
    std::string d = tmpl;
    static std::string keep = d;
    std::atexit([] { std::system(("rm -rf '" + keep + "'").c_str()); });
    return d;
  }();
  return dir;
}

std::size_t entries_in(const std::string& dir) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
    ::closedir(d);
  }
  return n;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::vector<std::uint8_t> bytes;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fseek(f, 0, SEEK_END);
    bytes.resize(std::size_t(std::ftell(f)));
    std::fseek(f, 0, SEEK_SET);
    if (std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size()) bytes.clear();
    std::fclose(f);
  }
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int width = in.ConsumeIntegralInRange<int>(1, 65535);
  const int height = in.ConsumeIntegralInRange<int>(1, 65535);
  const int fps_num = in.ConsumeIntegralInRange<int>(1, 240000);
  const int fps_den = in.ConsumeIntegralInRange<int>(1, 1001);
  const std::uint64_t riff_limit = (64u << 10) + in.ConsumeIntegralInRange<std::uint32_t>(0, 192u << 10);
  const int frame_count = in.ConsumeIntegralInRange<int>(0, 200);
  const bool with_audio = in.ConsumeBool();

  // Frames: mostly up to 6000 bytes (tens per segment at the smallest limit), sometimes up to
  // 40000 (past half the limit, which the writer must refuse); contents a pattern of the frame
  // number and an input byte, so that a swapped frame is noticed.
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<std::vector<std::vector<std::uint8_t>>> audio_before;  // per frame
  for (int i = 0; i < frame_count; ++i) {
    const std::size_t n = in.ConsumeIntegralInRange<std::size_t>(1, in.ConsumeBool() ? 6000 : 40000);
    const std::uint8_t salt = in.ConsumeIntegral<std::uint8_t>();
    std::vector<std::uint8_t> f(n);
    for (std::size_t k = 0; k < n; ++k) f[k] = std::uint8_t(k * 31 + i * 7 + salt);
    frames.push_back(std::move(f));
    audio_before.emplace_back();
    // PCM of 4-byte samples: 0 to 3 packets of up to 3000 samples before the frame.
    for (int p = with_audio ? in.ConsumeIntegralInRange<int>(0, 3) : 0; p > 0; --p) {
      std::vector<std::uint8_t> a(4 * in.ConsumeIntegralInRange<std::size_t>(1, 3000));
      for (std::size_t k = 0; k < a.size(); ++k) a[k] = std::uint8_t(k * 13 + i * 3 + p);
      audio_before.back().push_back(std::move(a));
    }
  }

  const std::string path = scratch_dir() + "/out.avi";
  try {
    mjpeg::io::AviExtras extras;
    if (with_audio) {
      extras.audio = mjpeg::io::AviAudio{};
      extras.audio->format_tag = 1;
      extras.audio->channels = 2;
      extras.audio->sample_rate = 48000;
      extras.audio->block_align = 4;
      extras.audio->bits_per_sample = 16;
      extras.audio->avg_bytes_per_sec = 192000;
    }
    mjpeg::io::AviWriter writer(path, width, height, fps_num, fps_den, extras, riff_limit);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      for (const auto& a : audio_before[i]) writer.write_audio(a.data(), a.size());
      writer.write_frame(frames[i].data(), frames[i].size());
    }
    writer.close();
  } catch (const mjpeg::Error&) {
    // A refusal: nothing may be left under the final name or as a temporary file.
    if (entries_in(scratch_dir()) != 0) finding("a refused AVI left a file behind");
    return 0;
  }

  const std::vector<std::uint8_t> bytes = read_file(path);
  ::unlink(path.c_str());
  if (entries_in(scratch_dir()) != 0) finding("a temporary file was left behind");

  avi_reader::Contents avi;
  const std::string err = avi_reader::read_avi(bytes, avi);
  if (!err.empty()) finding("unreadable AVI: " + err);
  if (avi.width != std::uint32_t(width) || avi.height != std::uint32_t(height))
    finding("frame size differs");
  if (avi.rate != std::uint32_t(fps_num) || avi.scale != std::uint32_t(fps_den))
    finding("frame rate differs");
  const std::size_t n = frames.size();
  if (avi.movi.size() != n || avi.odml.size() != n || avi.strh_length != n || avi.dmlh_frames != n)
    finding("frame counts differ: wrote " + std::to_string(n) + ", movi " +
            std::to_string(avi.movi.size()) + ", ix00 " + std::to_string(avi.odml.size()) +
            ", strh " + std::to_string(avi.strh_length) + ", dmlh " +
            std::to_string(avi.dmlh_frames));
  if (avi.movi_first_riff.size() != 1 || avi.idx1.size() != avi.movi_first_riff[0] ||
      avi.avih_frames != avi.idx1.size())
    finding("idx1 / avih do not describe the first RIFF's frames");
  for (std::size_t i = 0; i < n; ++i) {
    const auto same = [&](const avi_reader::Frame& f) {
      return f.size == frames[i].size() &&
             std::memcmp(bytes.data() + f.offset, frames[i].data(), f.size) == 0;
    };
    if (!same(avi.movi[i])) finding("movi frame " + std::to_string(i) + " differs");
    if (!same(avi.odml[i])) finding("ix00 entry " + std::to_string(i) + " differs");
    if (i < avi.idx1.size() && !same(avi.idx1[i]))
      finding("idx1 entry " + std::to_string(i) + " differs");
  }
  // The audio: every packet once, in order, in movi and through ix01; idx1 lists those of the
  // first segment; the strh counts samples.
  std::vector<const std::vector<std::uint8_t>*> packets;
  for (const auto& before : audio_before)
    for (const auto& a : before) packets.push_back(&a);
  if (avi.streams != (with_audio ? 2 : 1)) finding("wrong number of streams");
  std::size_t samples = 0;
  for (const auto* a : packets) samples += a->size() / 4;
  if (with_audio && avi.audio_length != samples) finding("the audio strh does not count its samples");
  if (avi.audio.size() != packets.size() || avi.audio_odml.size() != packets.size() ||
      avi.audio_idx1.size() > packets.size())
    finding("audio chunk counts differ");
  for (std::size_t i = 0; i < packets.size(); ++i) {
    const auto same = [&](const avi_reader::Frame& f) {
      return f.size == packets[i]->size() &&
             std::memcmp(bytes.data() + f.offset, packets[i]->data(), f.size) == 0;
    };
    if (!same(avi.audio[i]) || !same(avi.audio_odml[i]))
      finding("audio packet " + std::to_string(i) + " differs");
    if (i < avi.audio_idx1.size() && !same(avi.audio_idx1[i]))
      finding("idx1 audio entry " + std::to_string(i) + " differs");
  }
  return 0;
}
