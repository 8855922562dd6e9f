// A minimal RIFF/AVI reader for the AVI round-trip fuzzer, written from the RIFF/AVI and
// OpenDML layouts (see src/io/avi_writer.hpp), independently of the writer's code.
//
// read_avi() walks every RIFF segment ('AVI ' then 'AVIX'), checks that chunk and list sizes
// nest and stay inside the file, collects the '00dc' frames (and '01wb' audio chunks) of each
// LIST 'movi' in file order, and resolves the indexes separately: 'idx1' (first segment), and
// per stream the 'indx' super index of its 'strl' and the 'ix00' / 'ix01' standard indexes it
// points to. It returns an error message (empty when the file is consistent) and fills `out`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace avi_reader {

struct Frame {
  std::size_t offset;  // of the frame's data (past the 8-byte chunk header)
  std::size_t size;
};

struct Contents {
  std::uint32_t width = 0, height = 0;
  std::uint32_t rate = 0, scale = 0;      // strh dwRate / dwScale
  std::uint32_t avih_frames = 0;          // avih dwTotalFrames (first RIFF)
  std::uint32_t strh_length = 0;          // strh dwLength (all frames)
  std::uint32_t dmlh_frames = 0;          // dmlh dwTotalFrames (all frames)
  int segments = 0;
  std::vector<Frame> movi;                // '00dc' chunks in file order
  std::vector<std::size_t> movi_first_riff;  // how many of them are in the first RIFF
  std::vector<Frame> idx1;                // frames as idx1 lists them
  std::vector<Frame> odml;                // frames as indx -> ix00 list them
  int streams = 0;                        // strh chunks: 1, or 2 with audio
  std::uint32_t audio_length = 0;         // the 'auds' strh's dwLength
  std::vector<Frame> audio;               // '01wb' chunks in file order
  std::vector<Frame> audio_idx1;          // as idx1 lists them
  std::vector<Frame> audio_odml;          // as indx -> ix01 list them
};

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& bytes) : b_(bytes) {}

  std::string read(Contents& out) {
    std::size_t pos = 0;
    std::size_t first_movi = 0;  // offset of the first 'movi' fourcc (idx1 offsets' base)
    std::vector<std::size_t> ix_chunks[2];
    std::size_t idx1_pos = 0, idx1_size = 0;
    while (pos < b_.size()) {
      if (!fits(pos, 12)) return "truncated RIFF header at " + std::to_string(pos);
      if (id(pos) != "RIFF") return "expected RIFF at " + std::to_string(pos);
      const std::string type = id(pos + 8);
      if (type != (out.segments == 0 ? "AVI " : "AVIX"))
        return "RIFF " + std::to_string(out.segments) + " has type '" + type + "'";
      const std::size_t end = pos + 8 + u32(pos + 4);
      if (end > b_.size() || (end - pos) % 2) return "RIFF size runs past the file or is odd";
      for (std::size_t c = pos + 12; c < end;) {
        if (!fits(c, 8) || c + 8 > end) return "chunk header past its RIFF at " + std::to_string(c);
        const std::string cid = id(c);
        const std::size_t csize = u32(c + 4), cend = c + 8 + csize + (csize & 1);
        if (cend > end) return "chunk '" + cid + "' runs past its RIFF";
        if (cid == "LIST" && csize >= 4 && id(c + 8) == "hdrl") {
          if (out.segments != 0) return "hdrl outside the first RIFF";
          std::string e = read_hdrl(c + 12, c + 8 + csize, out);
          if (!e.empty()) return e;
        } else if (cid == "LIST" && csize >= 4 && id(c + 8) == "movi") {
          if (out.segments == 0) first_movi = c + 8;
          for (std::size_t m = c + 12; m < c + 8 + csize;) {
            if (!fits(m, 8) || m + 8 > c + 8 + csize) return "chunk header past movi";
            const std::size_t msize = u32(m + 4);
            if (m + 8 + msize > c + 8 + csize) return "chunk runs past movi";
            if (id(m) == "00dc") out.movi.push_back({m + 8, msize});
            else if (id(m) == "01wb" && out.streams == 2) out.audio.push_back({m + 8, msize});
            else if (id(m) == "ix00") ix_chunks[0].push_back(m);
            else if (id(m) == "ix01" && out.streams == 2) ix_chunks[1].push_back(m);
            else return "unexpected chunk '" + id(m) + "' in movi";
            m += 8 + msize + (msize & 1);
          }
          if (out.segments == 0) out.movi_first_riff.push_back(out.movi.size());
        } else if (cid == "idx1") {
          if (out.segments != 0) return "idx1 outside the first RIFF";
          idx1_pos = c + 8;
          idx1_size = csize;
        }
        c = cend;
      }
      ++out.segments;
      pos = end;
    }
    if (out.segments == 0) return "empty file";

    // idx1: offsets from the first 'movi' fourcc to each chunk header.
    if (idx1_size % 16) return "idx1 size is not a multiple of 16";
    for (std::size_t e = idx1_pos; e < idx1_pos + idx1_size; e += 16) {
      const std::string tag = id(e);
      if (tag != "00dc" && !(tag == "01wb" && out.streams == 2))
        return "idx1 entry is not 00dc or 01wb";
      const std::size_t at = first_movi + u32(e + 8);
      if (!fits(at, 8) || id(at) != tag || u32(at + 4) != u32(e + 12))
        return "idx1 entry does not point at its chunk";
      (tag == "00dc" ? out.idx1 : out.audio_idx1).push_back({at + 8, u32(e + 12)});
    }

    // Per stream: indx (super index) -> ix0N chunks -> chunks.
    for (int s = 0; s < out.streams; ++s) {
      const char* tag = s == 0 ? "00dc" : "01wb";
      const std::size_t indx_pos = indx_pos_[s], indx_size = indx_size_[s];
      if (indx_size < 24 || u16(indx_pos) != 4 || b_[indx_pos + 3] != 0x00 || id(indx_pos + 8) != tag)
        return "indx of stream " + std::to_string(s) + " is not its super index";
      const std::uint32_t entries = u32(indx_pos + 4);
      if (24 + std::size_t(entries) * 16 > indx_size) return "indx has more entries than room";
      if (entries != ix_chunks[s].size()) return "indx entries != ix0N chunks";
      std::vector<Frame>& list = s == 0 ? out.odml : out.audio_odml;
      for (std::uint32_t i = 0; i < entries; ++i) {
        const std::size_t e = indx_pos + 24 + std::size_t(i) * 16;
        const std::uint64_t ix = u64(e);
        if (ix != ix_chunks[s][i]) return "indx entry " + std::to_string(i) + " does not point at ix0N";
        const std::size_t n = u32(ix + 8 + 4), base = std::size_t(u64(ix + 8 + 12));
        if (u32(e + 8) != 8 + 24 + n * 8) return "indx entry size wrong";
        if (s == 0 && u32(e + 12) != n) return "indx entry duration wrong";
        if (u16(ix + 8) != 2 || b_[ix + 8 + 3] != 0x01 || id(ix + 16) != tag)
          return "ix0N is not a standard index of its stream";
        for (std::size_t k = 0; k < n; ++k) {
          const std::size_t se = ix + 8 + 24 + k * 8;
          if (!fits(se, 8)) return "ix0N entry past the file";
          const std::size_t at = base + u32(se);
          const std::size_t sz = u32(se + 4) & 0x7FFFFFFFu;
          if (at < 8 || !fits(at - 8, 8 + sz) || id(at - 8) != tag || u32(at - 4) != sz)
            return "ix0N entry does not point at its chunk";
          list.push_back({at, sz});
        }
      }
    }
    return {};
  }

 private:
  std::string read_hdrl(std::size_t from, std::size_t to, Contents& out) {
    for (std::size_t c = from; c < to;) {
      if (!fits(c, 8) || c + 8 > to) return "chunk header past hdrl";
      const std::string cid = id(c);
      const std::size_t csize = u32(c + 4), p = c + 8;
      if (p + csize > to) return "chunk '" + cid + "' runs past hdrl";
      if (cid == "avih" && csize >= 56) {
        out.avih_frames = u32(p + 16);
        out.width = u32(p + 32);
        out.height = u32(p + 36);
      } else if (cid == "LIST" && csize >= 4 && (id(p) == "strl" || id(p) == "odml")) {
        std::string e = read_hdrl(p + 4, p + csize, out);
        if (!e.empty()) return e;
      } else if (cid == "strh" && csize >= 56) {
        if (out.streams == 0) {
          if (id(p) != "vids" || id(p + 4) != "MJPG") return "first strh is not vids/MJPG";
          out.scale = u32(p + 20);
          out.rate = u32(p + 24);
          out.strh_length = u32(p + 32);
        } else if (out.streams == 1) {
          if (id(p) != "auds") return "second strh is not auds";
          out.audio_length = u32(p + 32);
        } else {
          return "more than two streams";
        }
        ++out.streams;
      } else if (cid == "indx" && out.streams >= 1) {
        indx_pos_[out.streams - 1] = p;
        indx_size_[out.streams - 1] = csize;
      } else if (cid == "dmlh" && csize >= 4) {
        out.dmlh_frames = u32(p);
      }
      c = p + csize + (csize & 1);
    }
    return {};
  }

  bool fits(std::size_t pos, std::size_t n) const { return pos <= b_.size() && n <= b_.size() - pos; }
  std::string id(std::size_t p) const {
    return fits(p, 4) ? std::string(reinterpret_cast<const char*>(&b_[p]), 4) : std::string();
  }
  std::uint32_t u16(std::size_t p) const { return fits(p, 2) ? b_[p] | (b_[p + 1] << 8) : 0; }
  std::uint32_t u32(std::size_t p) const {
    return fits(p, 4) ? std::uint32_t(b_[p]) | (std::uint32_t(b_[p + 1]) << 8) |
                            (std::uint32_t(b_[p + 2]) << 16) | (std::uint32_t(b_[p + 3]) << 24)
                      : 0;
  }
  std::uint64_t u64(std::size_t p) const { return u32(p) | (std::uint64_t(u32(p + 4)) << 32); }

  const std::vector<std::uint8_t>& b_;
  std::size_t indx_pos_[2] = {0, 0}, indx_size_[2] = {0, 0};  // per stream, from its strl
};

inline std::string read_avi(const std::vector<std::uint8_t>& bytes, Contents& out) {
  return Reader(bytes).read(out);
}

}  // namespace avi_reader
