// Custom quantization tables (cjpeg -qtables / -qslots) and the tuned presets (--tune): the
// file parser, the scaling and slot rules, the markers, and byte-exactness against libjpeg-turbo
// in process and against the cjpeg program given the same tables (the presets through the
// committed docs/tuning/*.txt files, read independently of the compiled-in copy).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/oracle.hpp"
#include "common/same_bytes.hpp"
#include "common/test_media.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

using test::Image;

using test::same_bytes;

QuantTableValues ramp(std::uint32_t first, std::uint32_t step) {
  QuantTableValues t{};
  for (int i = 0; i < 64; ++i) t[i] = first + step * static_cast<std::uint32_t>(i);
  return t;
}

// Three distinct tables: one needs 16 bits at the default scale (a value above 255).
std::vector<QuantTableValues> three_tables() {
  return {ramp(2, 3), ramp(5, 1), ramp(1, 7)};  // last value 1 + 7 * 63 = 442
}

std::string text(const EncodeOptions& o) {
  std::string s = "q" + std::to_string(o.quality) + " " + to_string(o.subsampling) +
                  " restart " + std::to_string(o.restart_interval) +
                  (o.optimize ? " optimize" : "") + " tune " + to_string(o.tune) + " tables " +
                  std::to_string(o.qtables.size()) + " slots";
  for (int s2 : o.qslots) s += " " + std::to_string(s2);
  return s;
}

// ---------------------------------------------------------------------------------------------
// The -qtables text format.
// ---------------------------------------------------------------------------------------------
TEST(QtablesFile, ParsesCommentsWhitespaceAndCommas) {
  std::string t = "# two tables\n";
  for (int i = 0; i < 64; ++i) t += std::to_string(i + 1) + (i % 8 == 7 ? "\n" : ", ");
  t += "#second\r\n";
  for (int i = 0; i < 64; ++i) t += std::to_string(100 + i) + (i == 10 ? "# comment\n" : "\t");
  const auto tables = parse_qtables(t, "f");
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0][0], 1u);
  EXPECT_EQ(tables[0][63], 64u);
  EXPECT_EQ(tables[1][10], 110u);
  EXPECT_EQ(tables[1][63], 163u);
}

TEST(QtablesFile, RejectsWhatIsNotWholeTables) {
  const auto fails = [](const std::string& t, const char* what) {
    try {
      parse_qtables(t, "f.txt");
      ADD_FAILURE() << "accepted: " << what;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("f.txt"), std::string::npos) << e.what();
    }
  };
  std::string one;
  for (int i = 0; i < 64; ++i) one += "1 ";
  fails("", "empty");
  fails("# only a comment\n", "no numbers");
  fails(one + "5", "65 values");
  fails(one + one + one + one + one, "5 tables");
  fails("1 -2", "a sign");
  fails("1 2.5", "a decimal point");
  fails("1,,2", "two commas");
  fails("99999999999", "too large");
  EXPECT_EQ(parse_qtables(one + one + one + one, "f").size(), 4u);
  EXPECT_EQ(parse_qtables("4294967295 " + one.substr(2), "f")[0][0], 4294967295u);
}

TEST(QtablesFile, FormatParsesBack) {
  const auto t = three_tables();
  EXPECT_EQ(parse_qtables(format_qtables(t), "f"), t);
}

TEST(Qslots, ParsesDigitsZeroToThree) {
  EXPECT_EQ(parse_qslots("0"), (std::vector<int>{0}));
  EXPECT_EQ(parse_qslots("0,2,1"), (std::vector<int>{0, 2, 1}));
  for (const char* bad : {"", "4", "0,", ",1", "0,1,x", "-1", "01", " 1"})
    EXPECT_THROW(parse_qslots(bad), UsageError) << bad;
}

// ---------------------------------------------------------------------------------------------
// Scaling and slots (jpeg_add_quant_table, set_quant_slots).
// ---------------------------------------------------------------------------------------------
TEST(QuantScaling, ClampsLikeJpegAddQuantTable) {
  EXPECT_EQ(scale_quant_value(16, 100), 16);
  EXPECT_EQ(scale_quant_value(16, 20), 3);      // (320 + 50) / 100
  EXPECT_EQ(scale_quant_value(0, 100), 1);      // below 1 -> 1
  EXPECT_EQ(scale_quant_value(255, 0), 1);      // quality 100: scale 0
  EXPECT_EQ(scale_quant_value(1000, 5000), 32767);
  EXPECT_EQ(scale_quant_value(4294967295u, 5000), 32767);  // no overflow
}

TEST(QuantSlots, FileTablesReplaceSlotsAndLastSlotRepeats) {
  EncodeOptions o;
  o.quality = 75;  // scale 50
  o.qtables = {ramp(10, 2)};
  QuantTables t = make_quant_tables(o, 3);
  EXPECT_EQ(t.slot[0], 0);
  EXPECT_EQ(t.slot[1], 1);
  EXPECT_EQ(t.slot[2], 1);
  EXPECT_EQ(t.natural[0][0], 5);                               // the file's 10, scaled by 50
  EXPECT_EQ(t.natural[1][0], make_quant_tables(75, 2).natural[1][0]);  // Annex K chroma
  o.qslots = {1, 0};
  t = make_quant_tables(o, 3);
  EXPECT_EQ(t.slot[0], 1);
  EXPECT_EQ(t.slot[1], 0);
  EXPECT_EQ(t.slot[2], 0);
  o.qslots = {2};
  EXPECT_THROW(make_quant_tables(o, 3), UsageError);  // slot 2 holds no table
  EXPECT_THROW(make_quant_tables(o, 1), UsageError);
  o.qtables = three_tables();
  t = make_quant_tables(o, 1);
  EXPECT_EQ(t.slot[0], 2);
  o.qslots = {0, 2, 1};
  t = make_quant_tables(o, 3);
  EXPECT_EQ(t.slot[1], 2);
  EXPECT_EQ(t.slot[2], 1);
}

// libjpeg-turbo hands the FDCT quantizer q * 8 as a 16-bit value: from q = 8192 on it divides by
// (8 q) mod 65536 (or by zero), not what the DQT says. Such values (after scaling) are refused;
// 8191 is allowed (and already zeroes every coefficient of 8-bit samples above 2047).
TEST(QuantSlots, ValuesAbove8191AreRefused) {
  EncodeOptions o;
  o.quality = 50;
  o.qtables = {ramp(8191, 0)};
  EXPECT_NO_THROW(make_quant_tables(o, 3));
  o.qtables = {ramp(8192, 0)};
  EXPECT_THROW(make_quant_tables(o, 3), UsageError);
  o.qslots = {1};  // the table is not used: fine
  EXPECT_NO_THROW(make_quant_tables(o, 3));
  o.qslots = {};
  o.qtables = {ramp(164, 0)};
  o.quality = 1;  // 164 * 5000 / 100 = 8200
  EXPECT_THROW(make_quant_tables(o, 1), UsageError);
  EXPECT_NO_THROW(make_quant_tables(1, 2));  // Annex K at q1: at most 6050
}

TEST(QuantSlots, ValidateRejectsBadSlotsAndTooManyTables) {
  EncodeOptions o;
  o.qslots = {4};
  EXPECT_THROW(validate(o), UsageError);
  o.qslots = {};
  o.qtables.assign(5, ramp(1, 0));
  EXPECT_THROW(validate(o), UsageError);
}

// The markers as libjpeg writes them: DQT per table in first-use order, Tq per component,
// 16-bit precision and SOF1 only when a used table needs it.
struct Marker {
  int code;
  std::vector<std::uint8_t> body;
};

std::vector<Marker> markers_before_sos(const std::vector<std::uint8_t>& j) {
  std::vector<Marker> out;
  std::size_t pos = 2;
  while (pos + 4 <= j.size()) {
    const int code = j[pos + 1];
    const std::size_t len = (static_cast<std::size_t>(j[pos + 2]) << 8) | j[pos + 3];
    out.push_back({code, std::vector<std::uint8_t>(j.begin() + pos + 4, j.begin() + pos + 2 + len)});
    if (code == 0xDA) break;
    pos += 2 + len;
  }
  return out;
}

TEST(QuantMarkers, DqtInFirstUseOrderAndSof1ForWideTables) {
  const Image img = test::synthetic(40, 24, 3, 5);
  EncodeOptions o;
  o.quality = 50;  // values as they are
  o.qtables = three_tables();
  o.qslots = {2, 0, 2};
  const auto m = markers_before_sos(encode_jpeg(img.view(), o));
  std::vector<int> dqt_ids;
  int sof = 0;
  std::vector<int> tq;
  for (const Marker& k : m) {
    if (k.code == 0xDB) {
      dqt_ids.push_back(k.body[0]);
      EXPECT_EQ(k.body.size(), (k.body[0] >> 4) ? 129u : 65u);
    }
    if (k.code == 0xC0 || k.code == 0xC1) {
      sof = k.code;
      for (int c = 0; c < 3; ++c) tq.push_back(k.body[6 + 3 * c + 2]);
    }
  }
  EXPECT_EQ(dqt_ids, (std::vector<int>{0x12, 0x00}));  // table 2 (16-bit) first, then 0
  EXPECT_EQ(sof, 0xC1);
  EXPECT_EQ(tq, (std::vector<int>{2, 0, 2}));
  o.qslots = {0, 1, 1};  // the wide table unused: 8-bit, SOF0
  for (const Marker& k : markers_before_sos(encode_jpeg(img.view(), o))) {
    if (k.code == 0xDB) {
      EXPECT_EQ(k.body[0] >> 4, 0);
    }
    EXPECT_NE(k.code, 0xC1);
  }
}

// ---------------------------------------------------------------------------------------------
// Presets.
// ---------------------------------------------------------------------------------------------
// Every preset and rounding that picks its own tables: the PSNR and SSIM presets, the PSNR
// tables fitted for a dead zone that --tune psnr takes under the rdo modes, and the PSNR
// preset's tables that --tune ssim takes with the trellis.
const std::pair<Tune, Rdo> kPresetCases[] = {{Tune::psnr, Rdo::off},
                                             {Tune::ssim, Rdo::off},
                                             {Tune::psnr, Rdo::deadzone},
                                             {Tune::psnr, Rdo::trellis},
                                             {Tune::ssim, Rdo::trellis},
                                             {Tune::ssim, Rdo::deadzone}};

TEST(Presets, EveryQualityHasBaselineTablesEqualToTheDocsFile) {
  for (const auto& [tune, rdo] : kPresetCases)
    for (Subsampling s : {Subsampling::s420, Subsampling::s444, Subsampling::s422}) {
      for (int q = 1; q <= 100; ++q) {
        EncodeOptions o;
        o.tune = tune;
        o.rdo = rdo;
        o.quality = q;
        o.subsampling = s;
        const QuantTables t = make_quant_tables(o, 3);
        EXPECT_FALSE(t.any_16bit()) << to_string(tune) << " q" << q;
        const EncodeOptions file = test::preset_as_qtables(o);
        const QuantTables f = make_quant_tables(file, 3);
        EXPECT_EQ(std::memcmp(t.natural, f.natural, sizeof t.natural), 0)
            << to_string(tune) << " " << to_string(rdo) << " " << to_string(s) << " q" << q
            << ": compiled-in tables differ from docs/tuning";
        EXPECT_EQ(t.slot[1], 1);
        EXPECT_EQ(t.slot[2], 1);
      }
    }
}

TEST(Presets, TheRdoModesTakeTheTablesFittedForADeadZone) {
  // docs/tuning/psnr_rdo.txt, not psnr.txt: flatter tables (finer high frequencies) at the
  // middle qualities, where a dead zone zeroes small coefficients anyway.
  for (int q : {50, 75, 90}) {
    EncodeOptions off, rdo;
    off.tune = rdo.tune = Tune::psnr;
    off.quality = rdo.quality = q;
    rdo.rdo = Rdo::deadzone;
    const QuantTables a = make_quant_tables(off, 3), b = make_quant_tables(rdo, 3);
    EXPECT_NE(std::memcmp(a.natural, b.natural, sizeof a.natural), 0) << "q" << q;
    EXPECT_LT(b.natural[0][63], a.natural[0][63]) << "q" << q;
  }
}

TEST(Presets, NeverFinerAtALowerQuality) {
  for (const auto& [tune, rdo] : kPresetCases)
    for (Subsampling sampling : {Subsampling::s420, Subsampling::s444, Subsampling::s422}) {
      for (int q = 99; q >= 1; --q) {
        EncodeOptions lower, higher;
        lower.tune = higher.tune = tune;
        lower.rdo = higher.rdo = rdo;
        lower.subsampling = higher.subsampling = sampling;
        lower.quality = q;
        higher.quality = q + 1;
        const QuantTables a = make_quant_tables(lower, 3), b = make_quant_tables(higher, 3);
        for (int s = 0; s < 2; ++s)
          for (int i = 0; i < 64; ++i)
            ASSERT_GE(a.natural[s][i], b.natural[s][i])
                << to_string(tune) << " " << to_string(rdo) << " " << to_string(sampling) << " q"
                << q;
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Exactness: in process against libjpeg (as cjpeg sets it up), and against the cjpeg program.
// ---------------------------------------------------------------------------------------------
std::vector<EncodeOptions> table_cases() {
  std::vector<EncodeOptions> out;
  const Subsampling samplings[] = {Subsampling::s444, Subsampling::s422, Subsampling::s420,
                                   Subsampling::gray};
  int k = 0;
  for (Subsampling s : samplings) {
    for (int q : {3, 23, 50, 90, 100}) {  // q3: scale 1666, values up to 7364
      EncodeOptions o;
      o.quality = q;
      o.subsampling = s;
      o.restart_interval = k % 3 == 1 ? 3 : 0;
      o.optimize = k % 2 == 1;
      o.qtables = three_tables();
      const std::vector<int> slots[] = {{}, {0, 1, 2}, {2, 0}, {1}, {0, 2, 1}};
      o.qslots = slots[k % 5];
      out.push_back(o);
      ++k;
    }
    EncodeOptions one;  // one table from the file, chroma from Annex K
    one.quality = 80;
    one.subsampling = s;
    one.qtables = {ramp(3, 1)};
    out.push_back(one);
  }
  return out;
}

TEST(CustomTables, MatchLibjpegInProcess) {
  MJPEG_REQUIRE_MEDIA();
  const Image images[] = {test::crop(test::kodak(23), 100, 60, 161, 97),
                          test::first_channel(test::crop(test::kodak(5), 0, 0, 67, 41))};
  for (const Image& img : images)
    for (const EncodeOptions& o : table_cases()) {
      std::vector<std::uint8_t> ours, ref;
      ASSERT_NO_THROW(ours = encode_jpeg(img.view(), o)) << text(o);
      ASSERT_NO_THROW(ref = test::libjpeg_encode(img.view(), o)) << text(o);
      EXPECT_TRUE(same_bytes(ours, ref)) << img.width << "x" << img.height << " " << text(o);
    }
}

TEST(CustomTables, MatchCjpegProgram) {
  MJPEG_REQUIRE_MEDIA();
  const auto cjpeg = test::find_cjpeg();
  if (!cjpeg) GTEST_SKIP() << "cjpeg is not on PATH (install libjpeg-turbo-progs)";
  const Image img = test::crop(test::kodak(19), 30, 200, 97, 75);
  for (const EncodeOptions& o : table_cases()) {
    if (o.subsampling == Subsampling::gray) continue;  // cjpeg -grayscale: covered in process
    std::vector<std::uint8_t> ref;
    ASSERT_NO_THROW(ref = test::cjpeg_encode(*cjpeg, img, o)) << text(o);
    EXPECT_TRUE(same_bytes(encode_jpeg(img.view(), o), ref)) << text(o);
  }
}

// The PSNR-fitted presets (--tune psnr in every rdo mode, --tune ssim under the trellis) have
// tables of their own at 4:4:4 and at 4:2:2, fitted there (a chroma sample's error counts for
// one or two pixels, not four): at 4:4:4 coarser chroma at the lowest frequencies than the 4:2:0
// ones at every quality but the extremes. Gray takes the 4:2:0 tables; the SSIM tables are the
// same at every sampling.
TEST(Presets, PsnrPresetsAreFittedAgainAtFourFourFourAndFourTwoTwo) {
  int coarser = 0, cases = 0;
  for (const auto& [tune, rdo] : kPresetCases)
    for (int q : {10, 30, 50, 75, 90, 95}) {
      const PresetTables at420 = preset_tables(tune, q, rdo, Subsampling::s420);
      EXPECT_EQ(preset_tables(tune, q, rdo, Subsampling::gray).tables, at420.tables);
      const PresetTables at444 = preset_tables(tune, q, rdo, Subsampling::s444);
      const PresetTables at422 = preset_tables(tune, q, rdo, Subsampling::s422);
      const bool psnr_fitted = tune == Tune::psnr || rdo == Rdo::trellis;
      if (!psnr_fitted) {
        EXPECT_EQ(at444.tables, at420.tables) << to_string(tune) << " " << to_string(rdo);
        EXPECT_EQ(at422.tables, at420.tables) << to_string(tune) << " " << to_string(rdo);
        continue;
      }
      EXPECT_NE(at444.tables, at420.tables) << to_string(rdo) << " q" << q;
      EXPECT_NE(at422.tables, at420.tables) << to_string(rdo) << " q" << q;
      EXPECT_NE(at422.tables, at444.tables) << to_string(rdo) << " q" << q;
      // The chroma DC and the first AC positions (natural order 1, 8, 9).
      int low444 = 0, low420 = 0;
      for (int i : {0, 1, 8, 9}) low444 += at444.tables[1][i], low420 += at420.tables[1][i];
      coarser += low444 > low420;
      ++cases;
    }
  EXPECT_EQ(coarser, cases) << "4:4:4's chroma is coarser at the lowest frequencies";
  EXPECT_EQ(cases, 4 * 6);
}

TEST(Presets, MatchCjpegGivenTheDocsTables) {
  MJPEG_REQUIRE_MEDIA();
  const auto cjpeg = test::find_cjpeg();
  if (!cjpeg) GTEST_SKIP() << "cjpeg is not on PATH (install libjpeg-turbo-progs)";
  const Image rgb = test::crop(test::kodak(3), 300, 100, 120, 88);
  const Image gray = test::first_channel(rgb);
  int k = 0;
  for (Tune tune : {Tune::psnr, Tune::ssim})
    for (int q : {1, 5, 20, 37, 50, 64, 75, 83, 90, 95, 99, 100}) {
      EncodeOptions o;
      o.tune = tune;
      o.quality = q;
      o.subsampling = k % 3 == 0 ? Subsampling::s420 : k % 3 == 1 ? Subsampling::s422
                                                                  : Subsampling::s444;
      o.optimize = k % 2 == 0;
      o.restart_interval = k % 4 == 0 ? 2 : 0;
      ++k;
      const EncodeOptions as_file = test::preset_as_qtables(o);
      std::vector<std::uint8_t> ref;
      ASSERT_NO_THROW(ref = test::cjpeg_encode(*cjpeg, rgb, as_file)) << text(o);
      EXPECT_TRUE(same_bytes(encode_jpeg(rgb.view(), o), ref)) << text(o);
      EXPECT_TRUE(same_bytes(encode_jpeg(gray.view(), o),
                             test::libjpeg_encode(gray.view(), as_file)))
          << "gray8 " << text(o);
    }
}

// Every CPU transform variant (scalar reference, SSE2/AVX2/AVX-512 where this CPU runs them)
// quantizes each component with its own table, Cb and Cr on different ones.
TEST(CustomTables, EveryCpuTransformVariantUsesEachComponentsTable) {
  MJPEG_REQUIRE_MEDIA();
  const Image img = test::crop(test::kodak(8), 40, 40, 203, 77);
  EncodeOptions o;
  o.quality = 40;
  o.qtables = three_tables();
  for (const std::vector<int>& slots : {std::vector<int>{0, 2, 1}, {2, 1, 0}, {1, 0}}) {
    o.qslots = slots;
    for (Subsampling s : {Subsampling::s444, Subsampling::s422, Subsampling::s420}) {
      const FrameGeometry g = make_geometry(img.width, img.height, s);
      const QuantTables t = make_quant_tables(o, 3);
      std::vector<std::int16_t> ref(g.coefficient_count());
      transform_cpu("scalar", img.view(), g, t, ref.data());
      // The reference itself uses the slots: component 2 differs from a 0,1,1 encode.
      EncodeOptions plain = o;
      plain.qslots = {};
      std::vector<std::int16_t> other(g.coefficient_count());
      transform_cpu("scalar", img.view(), g, make_quant_tables(plain, 3), other.data());
      EXPECT_NE(ref, other);
      for (const std::string& v : transform_variants()) {
        std::vector<std::int16_t> got(g.coefficient_count(), 0x5A5A);
        transform_cpu(v, img.view(), g, t, got.data());
        EXPECT_TRUE(got == ref) << v << " " << to_string(s) << " slots " << slots[0];
      }
    }
  }
}

}  // namespace
}  // namespace mjpeg
