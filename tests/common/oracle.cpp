#include "common/oracle.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

namespace mjpeg::test {

namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void oracle_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

extern "C" void oracle_silent_output(j_common_ptr) {}  // warnings (e.g. "too coarse") are fine

// The only function that uses libjpeg's setjmp/longjmp error handling. It holds no C++
// objects with destructors: output is a malloc'd buffer (jpeg_mem_dest), errors a C string.
// Returns true on success; on failure `err.message` says why and *out is freed.
bool compress_with_libjpeg(const ImageView& image, const EncodeOptions& options,
                           bool force_baseline, ErrorManager& err, unsigned char** out,
                           unsigned long* out_size) {
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = oracle_error_exit;
  err.pub.output_message = oracle_silent_output;
  err.message[0] = '\0';
  *out = nullptr;
  *out_size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(*out);
    *out = nullptr;
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, out, out_size);

  const bool gray_input = image.format == PixelFormat::gray8;
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = gray_input ? 1 : 3;
  cinfo.in_color_space = gray_input ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  if (!gray_input && options.subsampling == Subsampling::gray)
    jpeg_set_colorspace(&cinfo, JCS_GRAYSCALE);
  jpeg_set_quality(&cinfo, options.quality, force_baseline ? TRUE : FALSE);
  for (std::size_t t = 0; t < options.qtables.size(); ++t) {  // as cjpeg -qtables
    unsigned int table[64];
    for (int i = 0; i < 64; ++i) table[i] = options.qtables[t][i];
    jpeg_add_quant_table(&cinfo, static_cast<int>(t), table, jpeg_quality_scaling(options.quality),
                         force_baseline ? TRUE : FALSE);
  }
  if (cinfo.num_components == 3) {
    int h = 1, v = 1;
    if (options.subsampling == Subsampling::s420) h = v = 2;
    if (options.subsampling == Subsampling::s422) h = 2;
    cinfo.comp_info[0].h_samp_factor = h;
    cinfo.comp_info[0].v_samp_factor = v;
    for (int c = 1; c < 3; ++c) cinfo.comp_info[c].h_samp_factor = cinfo.comp_info[c].v_samp_factor = 1;
  }
  if (!options.qslots.empty())  // as cjpeg -qslots: the last slot repeats
    for (int c = 0; c < cinfo.num_components; ++c)
      cinfo.comp_info[c].quant_tbl_no =
          options.qslots[std::min<std::size_t>(static_cast<std::size_t>(c), options.qslots.size() - 1)];
  cinfo.restart_in_rows = 0;
  cinfo.restart_interval = static_cast<unsigned int>(options.restart_interval);
  cinfo.optimize_coding = options.optimize ? TRUE : FALSE;
  cinfo.dct_method = JDCT_ISLOW;
  // The JFIF header's density (a BMP's resolution, a pixel aspect ratio), as libjpeg takes it.
  cinfo.density_unit = static_cast<UINT8>(options.density.unit);
  cinfo.X_density = static_cast<UINT16>(options.density.x);
  cinfo.Y_density = static_cast<UINT16>(options.density.y);
  // --progressive: the script as cjpeg -scans reads it (progressive_scan_script()).
  jpeg_scan_info scans[8];
  if (options.progressive) {
    const bool gray = cinfo.num_components == 1;
    const int luma[3][2] = {{1, 2}, {3, 9}, {10, 63}};
    int n = 0;
    scans[n].comps_in_scan = cinfo.num_components;
    for (int c = 0; c < cinfo.num_components; ++c) scans[n].component_index[c] = c;
    scans[n].Ss = scans[n].Se = scans[n].Ah = scans[n].Al = 0;
    ++n;
    for (const auto& band : luma) {
      scans[n] = jpeg_scan_info{1, {0, 0, 0, 0}, band[0], band[1], 0, 0};
      ++n;
    }
    for (int c = 1; !gray && c < 3; ++c) {
      scans[n] = jpeg_scan_info{1, {c, 0, 0, 0}, 1, 63, 0, 0};
      ++n;
    }
    cinfo.scan_info = scans;
    cinfo.num_scans = n;
  }

  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.data + image.stride * cinfo.next_scanline);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

// JPEG's zigzag order: the natural (row-major) index of the k-th coefficient (ITU-T T.81
// figure A.6).
constexpr int kZigzagToNatural[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

// Like compress_with_libjpeg, from coefficients (jpeg_write_coefficients).
bool code_with_libjpeg(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                       bool optimize, ErrorManager& err, unsigned char** out,
                       unsigned long* out_size) {
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = oracle_error_exit;
  err.pub.output_message = oracle_silent_output;
  err.message[0] = '\0';
  *out = nullptr;
  *out_size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(*out);
    *out = nullptr;
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, out, out_size);
  const bool gray = g.num_components == 1;
  cinfo.image_width = static_cast<JDIMENSION>(g.width);
  cinfo.image_height = static_cast<JDIMENSION>(g.height);
  cinfo.input_components = g.num_components;
  cinfo.in_color_space = gray ? JCS_GRAYSCALE : JCS_YCbCr;
  jpeg_set_defaults(&cinfo);
  jpeg_set_colorspace(&cinfo, gray ? JCS_GRAYSCALE : JCS_YCbCr);
  for (int c = 0; c < g.num_components; ++c) {
    cinfo.comp_info[c].h_samp_factor = g.comp[c].h;
    cinfo.comp_info[c].v_samp_factor = g.comp[c].v;
  }
  cinfo.restart_in_rows = 0;
  cinfo.restart_interval = static_cast<unsigned int>(restart_interval);
  cinfo.optimize_coding = optimize ? TRUE : FALSE;
  jvirt_barray_ptr arrays[kMaxComponents] = {};
  for (int c = 0; c < g.num_components; ++c) {
    const ComponentGeometry& cg = g.comp[c];
    // As jpegtran sizes them: the real blocks rounded up to whole MCUs of the component.
    const int w = (cg.width_in_blocks + cg.h - 1) / cg.h * cg.h;
    const int h = (cg.height_in_blocks + cg.v - 1) / cg.v * cg.v;
    arrays[c] = (*cinfo.mem->request_virt_barray)(reinterpret_cast<j_common_ptr>(&cinfo),
                                                  JPOOL_IMAGE, FALSE, static_cast<JDIMENSION>(w),
                                                  static_cast<JDIMENSION>(h),
                                                  static_cast<JDIMENSION>(cg.v));
  }
  (*cinfo.mem->realize_virt_arrays)(reinterpret_cast<j_common_ptr>(&cinfo));
  for (int c = 0; c < g.num_components; ++c) {
    const ComponentGeometry& cg = g.comp[c];
    const int w = (cg.width_in_blocks + cg.h - 1) / cg.h * cg.h;
    const int h = (cg.height_in_blocks + cg.v - 1) / cg.v * cg.v;
    for (int by = 0; by < h; ++by) {
      JBLOCKARRAY row = (*cinfo.mem->access_virt_barray)(reinterpret_cast<j_common_ptr>(&cinfo),
                                                         arrays[c], static_cast<JDIMENSION>(by),
                                                         1, TRUE);
      for (int bx = 0; bx < w; ++bx) {
        const std::int16_t* b = coeffs + g.block_index(c, by, bx) * kBlockSize;
        for (int k = 0; k < 64; ++k) row[0][bx][kZigzagToNatural[k]] = b[k];
      }
    }
  }
  jpeg_write_coefficients(&cinfo, arrays);
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/mjpeg-oracle-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed for " + pattern + ": " + std::strerror(errno));
    path_ = buf.data();
  }
  ~TempDir() {
    for (const char* name : {"in.ppm", "in.pgm", "out.jpg", "stderr.txt", "qtables.txt", "scans.txt"})
      ::unlink((path_ + "/" + name).c_str());
    ::rmdir(path_.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs argv[0] with stdout/stderr redirected to `log`; returns the wait status.
int run_process(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    std::FILE* f = std::fopen(log.c_str(), "wb");
    if (f != nullptr) {
      ::dup2(::fileno(f), 1);
      ::dup2(::fileno(f), 2);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  return status;
}

const char* marker_name(int m) {
  switch (m) {
    case 0xD8: return "SOI";
    case 0xE0: return "APP0";
    case 0xDB: return "DQT";
    case 0xC0: return "SOF0";
    case 0xC1: return "SOF1";
    case 0xC2: return "SOF2";
    case 0xC4: return "DHT";
    case 0xDD: return "DRI";
    case 0xDA: return "SOS";
    case 0xD9: return "EOI";
    default: return "marker";
  }
}

// Names the segment of `jpeg` that contains byte `offset`.
std::string segment_at(const std::vector<std::uint8_t>& jpeg, std::size_t offset) {
  std::ostringstream os;
  std::size_t pos = 0;
  if (jpeg.size() < 2) return "a truncated file";
  if (offset < 2) return "SOI";
  pos = 2;
  while (pos + 4 <= jpeg.size()) {
    if (jpeg[pos] != 0xFF) return "unparseable data";
    const int m = jpeg[pos + 1];
    if (m == 0xD9) return "EOI";
    const std::size_t len = (static_cast<std::size_t>(jpeg[pos + 2]) << 8) | jpeg[pos + 3];
    const std::size_t end = pos + 2 + len;
    if (offset < end) {
      os << marker_name(m) << " (0xFF" << std::hex << m << std::dec << ") segment at " << pos
         << ", byte " << (offset - pos) << " of it";
      return os.str();
    }
    pos = end;
    if (m == 0xDA) {
      // Entropy-coded data up to EOI; count restart markers before `offset`.
      int rst = 0;
      std::size_t last_rst = pos;
      for (std::size_t i = pos; i + 1 < jpeg.size() && i < offset; ++i) {
        if (jpeg[i] == 0xFF && jpeg[i + 1] >= 0xD0 && jpeg[i + 1] <= 0xD7) {
          ++rst;
          last_rst = i + 2;
        }
      }
      os << "entropy-coded data, " << (offset - pos) << " bytes after the SOS header";
      if (rst > 0)
        os << ", after " << rst << " restart markers (" << (offset - last_rst)
           << " bytes into restart interval " << rst << ")";
      return os.str();
    }
  }
  return "past the last segment";
}

std::string hex_window(const std::vector<std::uint8_t>& v, std::size_t at) {
  std::ostringstream os;
  const std::size_t from = at >= 8 ? at - 8 : 0;
  const std::size_t to = std::min(v.size(), at + 8);
  char buf[8];
  for (std::size_t i = from; i < to; ++i) {
    std::snprintf(buf, sizeof buf, i == at ? "[%02x]" : "%02x", v[i]);
    os << buf << (i + 1 < to ? " " : "");
  }
  return os.str();
}

}  // namespace

// Not in jpeglib.h, but exported by libjpeg (jchuff.h, jdct.h of its sources).
extern "C" void jpeg_gen_optimal_table(j_compress_ptr cinfo, JHUFF_TBL* htbl, long freq[]);
extern "C" void jpeg_fdct_islow(void* data);  // DCTELEM data[64]

void libjpeg_optimal_table(const std::uint32_t freq[256], std::uint8_t bits[17],
                           std::uint8_t values[256]) {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  cinfo.err = jpeg_std_error(&err);  // it only errs on a code longer than 32 bits
  jpeg_create_compress(&cinfo);
  long counts[257] = {};
  std::copy(freq, freq + 256, counts);
  JHUFF_TBL table{};
  jpeg_gen_optimal_table(&cinfo, &table, counts);
  jpeg_destroy_compress(&cinfo);
  std::copy(table.bits, table.bits + 17, bits);
  std::copy(table.huffval, table.huffval + 256, values);
}

void libjpeg_fdct_islow(const int in[64], int out[64]) {
  // DCTELEM is 16 bits in a SIMD build of libjpeg-turbo (Debian's, Ubuntu's), 32 otherwise.
  // A flat block of 32-bit -28s tells which: with 32-bit elements the DCT zeroes every AC
  // coefficient, the last included; with 16-bit ones it transforms the first 128 bytes only
  // and the last element stays as it was.
  static const bool elements16 = [] {
    std::int32_t probe[64];
    std::fill(probe, probe + 64, -28);
    jpeg_fdct_islow(probe);
    return probe[63] == -28;
  }();
  if (elements16) {
    std::int16_t block[64];
    for (int i = 0; i < 64; ++i) block[i] = static_cast<std::int16_t>(in[i]);
    jpeg_fdct_islow(block);
    for (int i = 0; i < 64; ++i) out[i] = block[i];
  } else {
    std::int32_t block[64];
    for (int i = 0; i < 64; ++i) block[i] = in[i];
    jpeg_fdct_islow(block);
    for (int i = 0; i < 64; ++i) out[i] = block[i];
  }
}

std::vector<std::uint8_t> libjpeg_encode(const ImageView& image, const EncodeOptions& options,
                                         bool force_baseline) {
  ErrorManager err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  if (!compress_with_libjpeg(image, options, force_baseline, err, &buffer, &size))
    throw std::runtime_error(std::string("libjpeg: ") + err.message);
  std::vector<std::uint8_t> out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

std::vector<std::uint8_t> libjpeg_scan(const FrameGeometry& g, const std::int16_t* coeffs,
                                       int restart_interval, bool optimize) {
  ErrorManager err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  if (!code_with_libjpeg(g, coeffs, restart_interval, optimize, err, &buffer, &size))
    throw std::runtime_error(std::string("libjpeg: ") + err.message);
  const std::vector<std::uint8_t> file(buffer, buffer + size);
  std::free(buffer);
  // The segments up to SOS, each FF xx with a 16-bit length; the scan runs to EOI at the end.
  std::size_t at = 2;  // after SOI
  while (at + 4 <= file.size() && file[at] == 0xFF && file[at + 1] != 0xDA)
    at += 2 + (std::size_t{file[at + 2]} << 8 | file[at + 3]);
  if (at + 4 > file.size() || file[at + 1] != 0xDA || file.size() < 2 ||
      file[file.size() - 2] != 0xFF || file.back() != 0xD9)
    throw std::runtime_error("libjpeg_scan: no SOS ... EOI in libjpeg's output");
  const std::size_t begin = at + 2 + (std::size_t{file[at + 2]} << 8 | file[at + 3]);
  return std::vector<std::uint8_t>(file.begin() + static_cast<std::ptrdiff_t>(begin),
                                   file.end() - 2);
}

std::optional<std::string> find_cjpeg() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/cjpeg";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

std::string progressive_scan_script(bool gray) {
  std::string text = gray ? "0: 0-0, 0, 0;\n" : "0,1,2: 0-0, 0, 0;\n";
  text += "0: 1-2, 0, 0;\n0: 3-9, 0, 0;\n0: 10-63, 0, 0;\n";
  if (!gray) text += "1: 1-63, 0, 0;\n2: 1-63, 0, 0;\n";
  return text;
}

std::vector<std::string> cjpeg_arguments(const EncodeOptions& options, bool gray_input,
                                         const std::string& qtables_file,
                                         const std::string& scans_file) {
  std::vector<std::string> args = {"-quality", std::to_string(options.quality), "-dct", "int"};
  if (!gray_input) {
    switch (options.subsampling) {
      case Subsampling::s444: args.insert(args.end(), {"-sample", "1x1"}); break;
      case Subsampling::s422: args.insert(args.end(), {"-sample", "2x1"}); break;
      case Subsampling::s420: args.insert(args.end(), {"-sample", "2x2"}); break;
      case Subsampling::gray: args.push_back("-grayscale"); break;
    }
  }
  if (options.restart_interval > 0)
    args.insert(args.end(), {"-restart", std::to_string(options.restart_interval) + "B"});
  if (options.optimize) args.push_back("-optimize");
  if (!options.qtables.empty()) args.insert(args.end(), {"-qtables", qtables_file});
  if (!options.qslots.empty()) {
    std::string list;
    for (int s : options.qslots) list += (list.empty() ? "" : ",") + std::to_string(s);
    args.insert(args.end(), {"-qslots", list});
  }
  if (options.progressive) args.insert(args.end(), {"-scans", scans_file});
  return args;
}

void write_qtables_file(const std::vector<QuantTableValues>& tables, const std::string& path) {
  std::ofstream out(path);
  for (std::size_t t = 0; t < tables.size(); ++t) {
    out << "# table " << t << "\n";
    for (std::uint32_t v : tables[t]) out << v << "\n";
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

EncodeOptions preset_as_qtables(const EncodeOptions& options) {
  // --tune psnr under the rdo modes takes the tables fitted for a dead zone; --tune ssim with
  // the trellis the PSNR preset's (docs/rdo.md); at 4:4:4 and 4:2:2 the PSNR presets fitted
  // there.
  std::string name = options.tune == Tune::psnr
                         ? (options.rdo == Rdo::off ? "psnr" : "psnr_rdo")
                         : (options.rdo == Rdo::trellis ? "psnr" : "ssim");
  if (name != "ssim" && options.subsampling == Subsampling::s444) name += "_444";
  if (name != "ssim" && options.subsampling == Subsampling::s422) name += "_422";
  const std::string path = std::string(MJPEG_SOURCE_DIR) + "/docs/tuning/" + name + ".txt";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::string header = "# quality " + std::to_string(options.quality);
  std::string line;
  bool found = false;
  std::vector<std::uint32_t> values;
  while (std::getline(in, line)) {
    if (!found) {
      found = line == header;
      continue;
    }
    if (line.rfind("# quality ", 0) == 0) break;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    for (std::uint32_t v; row >> v;) values.push_back(v);
  }
  if (!found || values.size() != 128)
    throw std::runtime_error(path + ": no two tables under '" + header + "'");
  EncodeOptions o = options;
  o.tune = Tune::none;
  o.quality = 50;
  o.qtables.assign(2, QuantTableValues{});
  for (std::size_t i = 0; i < 128; ++i) o.qtables[i / 64][i % 64] = values[i];
  o.qslots = {0, 1, 1};
  return o;
}

std::vector<std::uint8_t> cjpeg_encode(const std::string& cjpeg, const Image& img,
                                       const EncodeOptions& options) {
  TempDir dir;
  const std::string input = dir.path() + (img.channels == 3 ? "/in.ppm" : "/in.pgm");
  const std::string output = dir.path() + "/out.jpg";
  const std::string log = dir.path() + "/stderr.txt";
  write_pnm(img, input);
  const std::string qtables = dir.path() + "/qtables.txt";
  if (!options.qtables.empty()) write_qtables_file(options.qtables, qtables);
  const std::string scans = dir.path() + "/scans.txt";
  if (options.progressive) {
    std::ofstream out(scans);
    out << progressive_scan_script(img.channels == 1 || options.subsampling == Subsampling::gray);
    if (!out) throw std::runtime_error("cannot write " + scans);
  }
  std::vector<std::string> args = {cjpeg};
  for (auto& a : cjpeg_arguments(options, img.channels == 1, qtables, scans))
    args.push_back(std::move(a));
  args.insert(args.end(), {"-outfile", output, input});
  const int status = run_process(args, log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string cmd;
    for (const auto& a : args) cmd += (cmd.empty() ? "" : " ") + a;
    std::string msg;
    try {
      const auto text = read_file(log);
      msg.assign(text.begin(), text.end());
    } catch (const std::exception&) {
    }
    throw std::runtime_error("'" + cmd + "' failed (status " + std::to_string(status) + "): " + msg);
  }
  return read_file(output);
}

std::string describe_difference(const std::vector<std::uint8_t>& ours,
                                const std::vector<std::uint8_t>& reference) {
  if (ours == reference) return {};
  const std::size_t n = std::min(ours.size(), reference.size());
  std::size_t first = 0;
  while (first < n && ours[first] == reference[first]) ++first;
  std::ostringstream os;
  os << "sizes: ours " << ours.size() << ", reference " << reference.size() << "; ";
  if (first == n) {
    os << "one is a prefix of the other (first " << n << " bytes equal)";
  } else {
    os << "first difference at offset " << first << " (0x" << std::hex << first << std::dec
       << ") in the reference's " << segment_at(reference, first) << "\n  ours:      "
       << hex_window(ours, first) << "\n  reference: " << hex_window(reference, first);
  }
  return os.str();
}

}  // namespace mjpeg::test
