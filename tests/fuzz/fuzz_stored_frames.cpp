// libFuzzer target: the reader behind StoredFrames (io::parse_stored_frames, `mjpeg join`'s
// input) on two kinds of input.
//  - The bytes as they come (first byte even): any file a user may hand `mjpeg join`. The
//    reader must throw mjpeg::Error or describe frames that lie inside the bytes, each a whole
//    JPEG (SOI ... EOI), never read past the end or crash.
//  - A written file (first byte odd): JPEG-like frames of random sizes (SOI, a COM segment,
//    SOS, entropy-coded bytes with stuffed 0xFF 0x00 and restart markers, EOI) written by the
//    AVI writer (small RIFF segments, so OpenDML's 'AVIX' segments occur) or as a raw stream,
//    with or without a note, and read back: the same frames, in order, and the same note.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include <fuzzer/FuzzedDataProvider.h>

#include "io/avi_writer.hpp"
#include "io/frame_sink.hpp"
#include "io/stored_frames.hpp"
#include "mjpeg/error.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_stored_frames: %s\n", what.c_str());
  std::abort();
}

const std::string& scratch_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/mjpeg_fuzz_stored.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) finding("cannot create a scratch directory");
    static std::string keep = tmpl;
    std::atexit([] { std::system(("rm -rf '" + keep + "'").c_str()); });
    return keep;
  }();
  return dir;
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

/// A JPEG's markers as a reader walks them, with entropy-coded data that needs the scan.
std::vector<std::uint8_t> jpeg_like(FuzzedDataProvider& in) {
  std::vector<std::uint8_t> j = {0xFF, 0xD8, 0xFF, 0xFE};
  const std::size_t comment = in.ConsumeIntegralInRange<std::size_t>(0, 300);
  j.push_back(std::uint8_t((comment + 2) >> 8));
  j.push_back(std::uint8_t(comment + 2));
  for (std::size_t i = 0; i < comment; ++i) j.push_back(in.ConsumeIntegral<std::uint8_t>());
  j.insert(j.end(), {0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00});
  const std::size_t data = in.ConsumeIntegralInRange<std::size_t>(0, 3000);
  for (std::size_t i = 0; i < data; ++i) {
    const std::uint8_t b = in.ConsumeIntegral<std::uint8_t>();
    j.push_back(b);
    if (b == 0xFF) j.push_back(in.ConsumeBool() ? 0x00 : std::uint8_t(0xD0 + (i & 7)));
  }
  j.insert(j.end(), {0xFF, 0xD9});
  return j;
}

void check_layout(const mjpeg::io::StoredLayout& l, const std::uint8_t* data, std::size_t size) {
  for (const mjpeg::io::FrameSpan& f : l.frames) {
    if (f.offset > size || f.size > size - f.offset || f.size < 4) finding("a frame outside the bytes");
    const std::uint8_t* p = data + f.offset;
    if (p[0] != 0xFF || p[1] != 0xD8 || p[f.size - 2] != 0xFF || p[f.size - 1] != 0xD9)
      finding("a frame that is no whole JPEG");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0) {
    try {
      // A copy of exactly the input's bytes, so that a read past them is seen by ASan.
      std::vector<std::uint8_t> bytes(data + 1, data + size);
      check_layout(mjpeg::io::parse_stored_frames(bytes.data(), bytes.size(), "input"),
                   bytes.data(), bytes.size());
    } catch (const mjpeg::Error&) {
    }
    return 0;
  }
  FuzzedDataProvider in(data + 1, size - 1);
  const bool avi = in.ConsumeBool();
  const std::string note = in.ConsumeBool() ? "" : in.ConsumeRandomLengthString(400);
  const int count = in.ConsumeIntegralInRange<int>(0, 60);
  std::vector<std::vector<std::uint8_t>> frames;
  for (int i = 0; i < count; ++i) frames.push_back(jpeg_like(in));
  const std::string path = scratch_dir() + (avi ? "/out.avi" : "/out.mjpeg");
  {
    std::unique_ptr<mjpeg::io::FrameSink> sink;
    if (avi)
      sink = std::make_unique<mjpeg::io::AviWriter>(path, 64, 48, 25, 1, 64 << 10);
    else
      sink = std::make_unique<mjpeg::io::MjpegStreamWriter>(path);
    sink->set_note(note);
    for (const auto& f : frames) sink->write_frame(f.data(), f.size());
    sink->close();
  }
  const std::vector<std::uint8_t> bytes = read_file(path);
  ::unlink(path.c_str());
  if (bytes.empty() && !avi && frames.empty() && note.empty()) return 0;  // an empty stream
  mjpeg::io::StoredLayout l;
  try {
    l = mjpeg::io::parse_stored_frames(bytes.data(), bytes.size(), "written");
  } catch (const mjpeg::Error& e) {
    finding(std::string("a written file is refused: ") + e.what());
  }
  check_layout(l, bytes.data(), bytes.size());
  if (l.avi != avi || l.note != note) finding("the container or the note differs");
  if (l.frames.size() != frames.size()) finding("the frame count differs");
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (l.frames[i].size != frames[i].size() ||
        std::memcmp(bytes.data() + l.frames[i].offset, frames[i].data(), frames[i].size()) != 0)
      finding("frame " + std::to_string(i) + " differs");
  return 0;
}
