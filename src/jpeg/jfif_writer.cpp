#include "jpeg/jfif_writer.hpp"

#include "core/jpeg_math.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

class SegmentWriter {
 public:
  explicit SegmentWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void byte(int b) { out_.push_back(static_cast<std::uint8_t>(b)); }
  void word(int w) {
    byte(w >> 8);
    byte(w & 0xFF);
  }
  void marker(int code) {
    byte(0xFF);
    byte(code);
  }

 private:
  std::vector<std::uint8_t>& out_;
};

void write_dqt(SegmentWriter& w, const QuantTables& q, int index) {
  const bool wide = q.needs_16bit(index);
  w.marker(0xDB);
  w.word(2 + 1 + (wide ? 128 : 64));
  w.byte((wide ? 0x10 : 0x00) | index);  // precision, table id
  for (int k = 0; k < 64; ++k) {
    const int value = q.natural[index][math::kZigzagToNatural[k]];
    if (wide) w.byte(value >> 8);
    w.byte(value & 0xFF);
  }
}

void write_dht(SegmentWriter& w, const HuffmanSpec& spec, int class_and_id) {
  const int n = spec.count();
  w.marker(0xC4);
  w.word(2 + 1 + 16 + n);
  w.byte(class_and_id);
  for (int i = 1; i <= 16; ++i) w.byte(spec.bits[i]);
  for (int i = 0; i < n; ++i) w.byte(spec.values[i]);
}

}  // namespace

void write_frame_header(const FrameGeometry& g, const QuantTables& q, bool progressive,
                        std::vector<std::uint8_t>& out) {
  SegmentWriter w(out);
  const int nc = g.num_components;
  w.marker(0xD8);  // SOI

  w.marker(0xE0);  // APP0: JFIF 1.01, no density units, 1:1 aspect, no thumbnail
  w.word(16);
  for (char ch : {'J', 'F', 'I', 'F', '\0'}) w.byte(ch);
  w.byte(1);
  w.byte(1);
  w.byte(0);
  w.word(1);
  w.word(1);
  w.byte(0);
  w.byte(0);

  // As libjpeg: one DQT per table, in the order the components first use them (emit_dqt
  // skips a table already sent); SOF1 when any component's table needs 16-bit precision
  // (a progressive frame stays SOF2).
  bool sent[kMaxQuantTables] = {};
  bool wide = false;
  for (int c = 0; c < nc; ++c) {
    const int slot = q.slot[c];
    if (!sent[slot]) write_dqt(w, q, slot);
    sent[slot] = true;
    wide = wide || q.needs_16bit(slot);
  }

  w.marker(progressive ? 0xC2 : wide ? 0xC1 : 0xC0);  // SOF2, SOF0 baseline or SOF1
  w.word(8 + 3 * nc);
  w.byte(8);
  w.word(g.height);
  w.word(g.width);
  w.byte(nc);
  for (int c = 0; c < nc; ++c) {
    w.byte(c + 1);
    w.byte((g.comp[c].h << 4) | g.comp[c].v);
    w.byte(q.slot[c]);  // Tq
  }
}

void set_density(const JfifDensity& density, std::vector<std::uint8_t>& jpeg) {
  // SOI (2 bytes), APP0 marker and length (4), "JFIF\0" (5), version (2): units at 13.
  if (jpeg.size() < 18 || jpeg[2] != 0xFF || jpeg[3] != 0xE0 || jpeg[6] != 'J')
    throw Error("internal error: the JPEG does not start with a JFIF APP0 segment");
  jpeg[13] = static_cast<std::uint8_t>(density.unit);
  jpeg[14] = static_cast<std::uint8_t>(density.x >> 8);
  jpeg[15] = static_cast<std::uint8_t>(density.x & 0xFF);
  jpeg[16] = static_cast<std::uint8_t>(density.y >> 8);
  jpeg[17] = static_cast<std::uint8_t>(density.y & 0xFF);
}

void write_dht(const HuffmanSpec& spec, int class_and_id, std::vector<std::uint8_t>& out) {
  SegmentWriter w(out);
  write_dht(w, spec, class_and_id);
}

void write_dri(int restart_interval, std::vector<std::uint8_t>& out) {
  SegmentWriter w(out);
  w.marker(0xDD);  // DRI
  w.word(4);
  w.word(restart_interval);
}

void write_sos(const int* components, const int* table_selectors, int count, int ss, int se,
               int ah_al, std::vector<std::uint8_t>& out) {
  SegmentWriter w(out);
  w.marker(0xDA);  // SOS
  w.word(6 + 2 * count);
  w.byte(count);
  for (int i = 0; i < count; ++i) {
    w.byte(components[i] + 1);
    w.byte(table_selectors[i]);
  }
  w.byte(ss);
  w.byte(se);
  w.byte(ah_al);
}

void write_headers(const FrameGeometry& g, const QuantTables& q, const HuffmanTables& h,
                   int restart_interval, std::vector<std::uint8_t>& out) {
  const int nc = g.num_components;
  const int tables = nc == 1 ? 1 : 2;
  write_frame_header(g, q, false, out);

  // libjpeg emits each table once, in scan order: DC0, AC0, DC1, AC1.
  for (int t = 0; t < tables; ++t) {
    write_dht(h.dc[t], t, out);
    write_dht(h.ac[t], 0x10 | t, out);
  }

  if (restart_interval > 0) write_dri(restart_interval, out);

  const int components[kMaxComponents] = {0, 1, 2};
  const int selectors[kMaxComponents] = {0x00, 0x11, 0x11};
  write_sos(components, selectors, nc, 0, 63, 0, out);
}

void write_trailer(std::vector<std::uint8_t>& out) {
  out.push_back(0xFF);
  out.push_back(0xD9);
}

}  // namespace mjpeg
