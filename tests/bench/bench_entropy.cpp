// mjpeg_bench_entropy: the CPU stages against libjpeg-turbo, on the kHD frame (1920x1080
// mosaic of Kodak images at native scale, tiled in the order of kodak_mosaic_order()),
// q90 4:2:0, one thread:
//   ours/transform/VARIANT  the CPU transform alone (colour conversion, downsampling, FDCT,
//                       quantization) for each instruction-set variant this CPU runs, the
//                       scalar reference last
//   ours/encode/VARIANT the whole one-thread encode with that transform (buffers reused, as
//                       the pipeline's workers do)
//   ours/entropy        the CPU mode's coder: encode_coefficients on ready coefficients
//                       (transform_cpu done once)
//   ours/encode_jpeg    the whole CPU encode through the public encode_jpeg (default variant)
//   ours/encode_jpeg_threads/T  the same on T threads (encode_jpeg's `threads`: MCU-row ranges
//                       transformed and coded at once, joined bit-exactly; 0 = every core),
//                       wall time: the latency of one large picture (MJPEG_BENCH_SIZE)
//   libjpeg/tjCompress2 libjpeg-turbo's whole compression (TurboJPEG, TJSAMP_420, TJFLAG_ACCURATEDCT)
//   ours/scan/VARIANT   the coefficient coder's entropy-coded segment alone (no headers), for
//                       each instruction-set variant this CPU runs (the first is ours/entropy's)
//   ours/packer         the packer: the whole JFIF file from the frame's coded blocks (the token
//                       format the GPU modes hand back with MJPEG_TOKEN_FORMAT=coded,
//                       src/core/token_format.hpp; made here by the CPU tokenizer the GPU kernel
//                       is tested against); ours/packer/4k the
//                       same on the 3840x2160 crop, beside libjpeg/entropy/4k
//   ours/block_scan/VARIANT  the scan alone from the coded blocks, for each variant
//   ours/packer_threads/N  the packer on N threads at once, each coding its own copy of the
//                       frame (as N entropy workers do): wall time per frame per thread, N = 1,
//                       2 and every core; the summary says how much slower a thread is beside
//                       the others than alone
//   ours/packer_parallel/T  one frame's coded blocks on T threads (joined bit-exactly), wall
//   ours/tokens         encode_tokens from the frame's symbol slots (the GPU modes' token
//                       format with --optimize or MJPEG_TOKEN_FORMAT=slots)
//   ours/token_scan/VARIANT  the scan alone from the slots, for each token-coder variant
//   ours/tokenize       the CPU slot tokenizer itself (what the GPU does in sok/aok; for reference)
//   libjpeg/entropy     libjpeg-turbo's Huffman coding alone: jpeg_write_coefficients of the
//                       coefficients that jpeg_read_coefficients got from its own output (as
//                       jpegtran does; includes the small per-frame header/setup cost)
//   ours/optimize, ours/progressive, ours/tokens_progressive  encode_coefficients with
//                       --optimize / --progressive, and --progressive from the symbol slots
//                       (expanded back to coefficients first, as the pipeline does)
//   libjpeg/optimize, libjpeg/progressive  libjpeg/entropy with optimize_coding, and with the
//                       scan script of --progressive (jpeg_scan_info): the same files as ours
//   ours/tokens/CASE, libjpeg/entropy/CASE  the token coder at other settings of the same frame,
//                       from the format the GPU modes use there with MJPEG_TOKEN_FORMAT=coded
//                       (q50, q75, q100, 4:4:4, restart interval 8: coded blocks; --optimize:
//                       symbol slots with their histogram,
//                       against libjpeg-turbo's two passes), each with its ratio in the summary;
//                       MJPEG_BENCH_CASES=0 leaves them out
// Each reports frames/s (items_per_second) and JPEG output bytes/s (bytes_per_second); a summary
// with the ours/libjpeg-turbo ratios follows. Frames are checked byte-identical first, and the
// token streams' bytes per frame are printed against the JPEG's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <jpeglib.h>
#include <turbojpeg.h>

#include "common/test_media.hpp"
#include "jpeg/entropy.hpp"
#include "core/geometry.hpp"
#include "jpeg/huffman.hpp"
#include "jpeg/progressive.hpp"
#include "core/quant.hpp"
#include "jpeg/tokens.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/encoder.hpp"

namespace {

constexpr int kQuality = 90;
// libjpeg-turbo 2.x's TurboJPEG uses the fast (ifast) DCT unless TJFLAG_ACCURATEDCT is given
// (checked here with 2.1.5: flags 0 gives cjpeg -dct fast's bytes); 3.x defaults to islow.
// The flag asks for islow in both, so the peer computes what we compute.
constexpr int kTjFlags = TJFLAG_ACCURATEDCT;

struct Frame {
  mjpeg::test::Image image;
  mjpeg::EncodeOptions options{kQuality, mjpeg::Subsampling::s420, 0, false};
  mjpeg::FrameGeometry geometry;
  mjpeg::QuantTables tables;
  std::vector<std::int16_t> coeffs;
  std::vector<std::uint8_t> reference;  // tjCompress2 output
  mjpeg::TokenBuffer tokens;            // the frame's symbol slots (CPU tokenizer)
  mjpeg::TokenBuffer blocks;            // the frame's coded blocks (CPU tokenizer)
};

Frame* g_frame = nullptr;

/// Another setting of the same frame, for the token coder and its libjpeg-turbo peer.
struct Case {
  std::string name;
  mjpeg::EncodeOptions options;
  mjpeg::FrameGeometry geometry;
  mjpeg::QuantTables tables;
  std::vector<std::int16_t> coeffs;
  std::vector<std::uint8_t> reference;  // tjCompress2 at the quality and sampling
  mjpeg::TokenBuffer tokens;
  /// --optimize: the tokens of the frame upside down (other statistics, other tables), coded
  /// every other iteration, so that the coder's tables are rebuilt for each frame as in a
  /// stream, not built once for one frame coded again and again.
  mjpeg::TokenBuffer flipped_tokens;
};

std::vector<std::uint8_t> tj_compress(tjhandle tj, const mjpeg::test::Image& img,
                                      int quality = kQuality, int subsampling = TJSAMP_420) {
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj, img.pixels.data(), img.width, static_cast<int>(img.stride()), img.height,
                  TJPF_RGB, &buf, &size, subsampling, quality, kTjFlags) != 0) {
    std::fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(tj));
    std::exit(1);
  }
  std::vector<std::uint8_t> out(buf, buf + size);
  tjFree(buf);
  return out;
}

void BM_ours_entropy(benchmark::State& state) {
  Frame& f = *g_frame;
  std::vector<std::uint8_t> out;
  out.reserve(f.reference.size() * 2);
  for (auto _ : state) {
    mjpeg::encode_coefficients(f.geometry, f.tables, f.coeffs.data(), f.options, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_ours_scan_variant(benchmark::State& state, const std::string& variant) {
  Frame& f = *g_frame;
  mjpeg::HuffmanTables tables;
  for (int t = 0; t < 2; ++t) {
    tables.dc[t] = mjpeg::standard_dc_spec(t);
    tables.ac[t] = mjpeg::standard_ac_spec(t);
  }
  std::vector<std::uint8_t> out;
  out.reserve(f.reference.size() * 2);
  for (auto _ : state) {
    out.clear();
    mjpeg::encode_scan(variant, f.geometry, f.coeffs.data(), 0, tables, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

mjpeg::HuffmanTables standard_tables() {
  mjpeg::HuffmanTables tables;
  for (int t = 0; t < 2; ++t) {
    tables.dc[t] = mjpeg::standard_dc_spec(t);
    tables.ac[t] = mjpeg::standard_ac_spec(t);
  }
  return tables;
}

void BM_ours_tokens(benchmark::State& state) {
  Frame& f = *g_frame;
  std::vector<std::uint8_t> out;
  out.reserve(f.reference.size() * 2);
  const mjpeg::TokenView view = f.tokens.view();
  for (auto _ : state) {
    mjpeg::encode_tokens(f.geometry, f.tables, view, f.options, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

// One scan coded from the frame's symbol slots (`&Frame::tokens`) or its coded blocks
// (`&Frame::blocks`) with one coder variant.
void BM_ours_scan(benchmark::State& state, mjpeg::TokenBuffer Frame::*buffer,
                  const std::string& variant) {
  Frame& f = *g_frame;
  const mjpeg::HuffmanTables tables = standard_tables();
  std::vector<std::uint8_t> out;
  out.reserve(f.reference.size() * 2);
  const mjpeg::TokenView view = (f.*buffer).view();
  for (auto _ : state) {
    out.clear();
    mjpeg::encode_token_scan(f.geometry, 0, view, tables, out, variant);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

// The packer: a whole JFIF file from a frame's coded blocks (what the GPU modes hand the
// workers), the output written over as the pipeline's workers do.
void BM_ours_packer(benchmark::State& state, const Frame* f) {
  std::vector<std::uint8_t> out;
  out.reserve(f->reference.size() * 2);
  const mjpeg::TokenView view = f->blocks.view();
  for (auto _ : state) {
    mjpeg::encode_tokens(f->geometry, f->tables, view, f->options, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

// The packer on N threads at once, each coding frames of its own (a copy of the coded blocks,
// its own output) as N entropy workers do: the time per frame per thread, against one thread
// in the same harness, says what the threads cost each other (memory bandwidth, the shared
// cache, the clock) rather than what the core costs. Manual time: the wall time of the round
// divided by the frames each thread coded.
void BM_ours_packer_threads(benchmark::State& state, const Frame* f, int threads) {
  constexpr int kFramesPerRound = 8;
  std::vector<mjpeg::TokenBuffer> copies(static_cast<std::size_t>(threads), f->blocks);
  std::vector<std::vector<std::uint8_t>> outs(static_cast<std::size_t>(threads));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const mjpeg::TokenView view = copies[static_cast<std::size_t>(t)].view();
        for (int k = 0; k < kFramesPerRound; ++k)
          mjpeg::encode_tokens(f->geometry, f->tables, view, f->options,
                               outs[static_cast<std::size_t>(t)]);
      });
    for (std::thread& th : pool) th.join();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(wall / kFramesPerRound);
    bytes = outs[0].size();
  }
  state.SetItemsProcessed(state.iterations() * threads);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * threads * bytes));
}

// One frame's coded blocks packed on T threads (MCU-row ranges joined bit-exactly): the latency
// of a single frame, wall time (the CPU time of the calling thread alone would hide the helpers).
void BM_ours_packer_parallel(benchmark::State& state, int threads) {
  Frame& f = *g_frame;
  std::vector<std::uint8_t> out;
  out.reserve(f.reference.size() * 2);
  const mjpeg::TokenView view = f.blocks.view();
  for (auto _ : state) {
    mjpeg::encode_tokens(f.geometry, f.tables, view, f.options, out, threads);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_ours_tokenize(benchmark::State& state) {
  Frame& f = *g_frame;
  mjpeg::TokenBuffer tokens;
  for (auto _ : state) {
    mjpeg::tokenize(f.geometry, f.coeffs.data(), 0, false, tokens);
    benchmark::DoNotOptimize(tokens.slots.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ours_transform_variant(benchmark::State& state, const std::string& variant) {
  Frame& f = *g_frame;
  std::vector<std::int16_t> coeffs(f.geometry.coefficient_count());
  for (auto _ : state) {
    mjpeg::transform_cpu(variant, f.image.view(), f.geometry, f.tables, coeffs.data());
    benchmark::DoNotOptimize(coeffs.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * f.image.pixels.size()));
}

/// The CPU mode's work per frame (transform by `variant`, then coding) with `tables`; the
/// last output must equal `reference` (else the row is an error naming `reference_name`).
void time_cpu_encode(benchmark::State& state, const std::string& variant,
                     const mjpeg::QuantTables& tables, const std::vector<std::uint8_t>& reference,
                     const char* reference_name) {
  Frame& f = *g_frame;
  std::vector<std::int16_t> coeffs(f.geometry.coefficient_count());
  std::vector<std::uint8_t> out;
  out.reserve(reference.size() * 2);
  for (auto _ : state) {
    mjpeg::transform_cpu(variant, f.image.view(), f.geometry, tables, coeffs.data());
    mjpeg::encode_coefficients(f.geometry, tables, coeffs.data(), f.options, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  if (out != reference) state.SkipWithError((std::string("differs from ") + reference_name).c_str());
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_ours_encode_variant(benchmark::State& state, const std::string& variant) {
  time_cpu_encode(state, variant, g_frame->tables, g_frame->reference, "tjCompress2");
}

/// The same with levels chosen by the trellis search (--rdo trellis): what the search costs a
/// CPU encode. The bytes are checked against the scalar reference transform's.
void BM_ours_encode_trellis(benchmark::State& state, const std::string& variant) {
  Frame& f = *g_frame;
  mjpeg::QuantTables tables = f.tables;
  tables.rdo = mjpeg::Rdo::trellis;
  tables.trellis = mjpeg::make_trellis_model(tables, f.options.subsampling);
  std::vector<std::int16_t> coeffs(f.geometry.coefficient_count());
  std::vector<std::uint8_t> reference;
  mjpeg::transform_cpu("scalar", f.image.view(), f.geometry, tables, coeffs.data());
  mjpeg::encode_coefficients(f.geometry, tables, coeffs.data(), f.options, reference);
  time_cpu_encode(state, variant, tables, reference, "the scalar reference's trellis");
}

void BM_ours_encode_jpeg(benchmark::State& state) {
  Frame& f = *g_frame;
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto out = mjpeg::encode_jpeg(f.image.view(), f.options);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

/// encode_jpeg's thread counts measured (0: one per core).
constexpr int kPictureThreads[] = {2, 4, 8, 0};

void BM_ours_encode_jpeg_threads(benchmark::State& state, int threads) {
  Frame& f = *g_frame;
  std::vector<std::uint8_t> out;
  for (auto _ : state) {
    out = mjpeg::encode_jpeg(f.image.view(), f.options, threads);
    benchmark::DoNotOptimize(out.data());
  }
  if (out != f.reference) state.SkipWithError("differs from tjCompress2");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_libjpeg_tjCompress2(benchmark::State& state) {
  Frame& f = *g_frame;
  tjhandle tj = tjInitCompress();
  // A preallocated buffer (TJFLAG_NOREALLOC) so the loop times compression, not malloc.
  const unsigned long cap = tjBufSize(f.image.width, f.image.height, TJSAMP_420);
  unsigned char* buf = tjAlloc(static_cast<int>(cap));
  unsigned long size = 0;
  for (auto _ : state) {
    size = cap;
    if (tjCompress2(tj, f.image.pixels.data(), f.image.width, static_cast<int>(f.image.stride()),
                    f.image.height, TJPF_RGB, &buf, &size, TJSAMP_420, kQuality,
                    kTjFlags | TJFLAG_NOREALLOC) != 0) {
      state.SkipWithError(tjGetErrorStr2(tj));
      break;
    }
    benchmark::DoNotOptimize(buf);
  }
  tjFree(buf);
  tjDestroy(tj);
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

void libjpeg_entropy(benchmark::State& state, const std::vector<std::uint8_t>& reference,
                     int restart_interval, bool optimize);

void BM_libjpeg_entropy(benchmark::State& state, const Frame* f) {
  libjpeg_entropy(state, f->reference, 0, false);
}

void BM_ours_tokens_case(benchmark::State& state, const Case* c) {
  std::vector<std::uint8_t> out;
  const mjpeg::TokenView views[2] = {
      c->tokens.view(), c->flipped_tokens.slots.empty() ? c->tokens.view() : c->flipped_tokens.view()};
  int k = 0;
  for (auto _ : state) {
    mjpeg::encode_tokens(c->geometry, c->tables, views[k], c->options, out);
    k ^= 1;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_libjpeg_entropy_case(benchmark::State& state, const Case* c) {
  libjpeg_entropy(state, c->reference, c->options.restart_interval, c->options.optimize);
}

void libjpeg_entropy(benchmark::State& state, const std::vector<std::uint8_t>& reference,
                     int restart_interval, bool optimize) {
  // Decompressor holding the quantized coefficients of libjpeg-turbo's own output. Default
  // (exit on error) error handling: no longjmp here.
  jpeg_decompress_struct src;
  jpeg_error_mgr src_err;
  src.err = jpeg_std_error(&src_err);
  jpeg_create_decompress(&src);
  jpeg_mem_src(&src, reference.data(), static_cast<unsigned long>(reference.size()));
  jpeg_read_header(&src, TRUE);
  jvirt_barray_ptr* coef_arrays = jpeg_read_coefficients(&src);

  jpeg_compress_struct dst;
  jpeg_error_mgr dst_err;
  dst.err = jpeg_std_error(&dst_err);
  jpeg_create_compress(&dst);
  const unsigned long cap = static_cast<unsigned long>(reference.size() * 2 + 65536);
  std::vector<unsigned char> storage(cap);
  unsigned long size = 0;
  for (auto _ : state) {
    unsigned char* out = storage.data();
    size = cap;  // jpeg_mem_dest writes into our buffer while it is large enough
    jpeg_mem_dest(&dst, &out, &size);
    jpeg_copy_critical_parameters(&src, &dst);
    dst.optimize_coding = optimize ? TRUE : FALSE;
    dst.restart_interval = static_cast<unsigned int>(restart_interval);
    jpeg_write_coefficients(&dst, coef_arrays);
    jpeg_finish_compress(&dst);
    if (out != storage.data()) {  // it had to grow: never expected; keep the result honest
      std::free(out);
      state.SkipWithError("jpeg_mem_dest reallocated");
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  jpeg_destroy_compress(&dst);
  jpeg_finish_decompress(&src);
  jpeg_destroy_decompress(&src);
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

// --optimize / --progressive on ready coefficients (or, `tokens`, from the token stream).
void BM_ours_coding(benchmark::State& state, bool progressive, bool tokens) {
  Frame& f = *g_frame;
  mjpeg::EncodeOptions o = f.options;
  o.optimize = true;
  o.progressive = progressive;
  std::vector<std::uint8_t> out;
  out.reserve(f.reference.size() * 2);
  std::vector<std::int16_t> scratch;
  for (auto _ : state) {
    if (tokens)
      mjpeg::encode_tokens_progressive(f.geometry, f.tables, f.tokens.view(), o, scratch, out);
    else
      mjpeg::encode_coefficients(f.geometry, f.tables, f.coeffs.data(), o, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

// libjpeg-turbo's coding of its own output's coefficients with optimal tables, sequential or
// with the scans of --progressive. Returns the last file (for the byte check).
std::vector<std::uint8_t> libjpeg_coding(benchmark::State* state, bool progressive) {
  Frame& f = *g_frame;
  jpeg_decompress_struct src;
  jpeg_error_mgr src_err;
  src.err = jpeg_std_error(&src_err);
  jpeg_create_decompress(&src);
  jpeg_mem_src(&src, f.reference.data(), static_cast<unsigned long>(f.reference.size()));
  jpeg_read_header(&src, TRUE);
  jvirt_barray_ptr* coef_arrays = jpeg_read_coefficients(&src);
  std::vector<jpeg_scan_info> scans;
  for (const mjpeg::ProgressiveScan& p : mjpeg::progressive_script(3)) {
    jpeg_scan_info si{};
    si.comps_in_scan = p.count;
    for (int i = 0; i < p.count; ++i) si.component_index[i] = p.components[i];
    si.Ss = p.ss;
    si.Se = p.se;
    scans.push_back(si);
  }
  jpeg_compress_struct dst;
  jpeg_error_mgr dst_err;
  dst.err = jpeg_std_error(&dst_err);
  jpeg_create_compress(&dst);
  const unsigned long cap = static_cast<unsigned long>(f.reference.size() * 2 + 65536);
  std::vector<unsigned char> storage(cap);
  unsigned long size = 0;
  auto once = [&]() {
    unsigned char* out = storage.data();
    size = cap;
    jpeg_mem_dest(&dst, &out, &size);
    jpeg_copy_critical_parameters(&src, &dst);
    dst.optimize_coding = TRUE;
    if (progressive) {
      dst.scan_info = scans.data();
      dst.num_scans = static_cast<int>(scans.size());
    }
    jpeg_write_coefficients(&dst, coef_arrays);
    jpeg_finish_compress(&dst);
    if (out != storage.data()) {
      std::free(out);
      size = 0;
      return false;
    }
    return true;
  };
  bool ok = true;
  if (state) {
    for (auto _ : *state) {
      if (!(ok = once())) {
        state->SkipWithError("jpeg_mem_dest reallocated");
        break;
      }
      benchmark::DoNotOptimize(storage.data());
    }
    state->SetItemsProcessed(state->iterations());
    state->SetBytesProcessed(static_cast<std::int64_t>(state->iterations() * size));
  } else {
    ok = once();
  }
  jpeg_destroy_compress(&dst);
  jpeg_finish_decompress(&src);
  jpeg_destroy_decompress(&src);
  return ok ? std::vector<std::uint8_t>(storage.data(), storage.data() + size)
            : std::vector<std::uint8_t>();
}

void BM_libjpeg_coding(benchmark::State& state, bool progressive) {
  libjpeg_coding(&state, progressive);
}

// Console output as usual, and the adjusted real time per iteration of each benchmark kept for
// the summary; a benchmark that reported an error (its bytes differ from tjCompress2's, say)
// is kept too, so that main() fails on it.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  // Colour only on a terminal (the library's --benchmark_color applies to its own reporter).
  RecordingReporter()
      : ConsoleReporter(isatty(fileno(stdout)) ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    // One figure per benchmark: the median when repetitions are aggregated, else the run.
    for (const Run& r : runs) {
      if (r.error_occurred) {
        errors.push_back(r.benchmark_name() + ": " + r.error_message);
        continue;
      }
      std::string name = r.run_name.str();
      // CPU time: the benchmarks are single-threaded, and it is steadier on a shared machine;
      // the multi-threaded ones (UseRealTime or UseManualTime, named .../real_time or
      // .../manual_time): their wall time.
      bool real = false;
      for (const std::string suffix : {"/real_time", "/manual_time"})
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
          name.resize(name.size() - suffix.size());
          real = true;
        }
      const double sec = (real ? r.GetAdjustedRealTime() : r.GetAdjustedCPUTime()) /
                         benchmark::GetTimeUnitMultiplier(r.time_unit);
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
        seconds[name] = sec;
        from_median.insert(name);
      } else if (r.run_type == Run::RT_Iteration && !from_median.count(name)) {
        seconds[name] = sec;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> seconds;
  std::set<std::string> from_median;
  std::vector<std::string> errors;
};

/// A crop of the Kodak mosaic, its coefficients, tjCompress2's file and both token streams (the
/// CPU tokenizers: the same streams the GPU kernels make).
void make_frame(Frame& f, int width, int height) {
  f.image = mjpeg::test::kodak_mosaic(width, height);
  f.geometry = mjpeg::make_geometry(width, height, f.options.subsampling);
  f.tables = mjpeg::make_quant_tables(kQuality, 2);
  f.coeffs.resize(f.geometry.coefficient_count());
  mjpeg::transform_cpu(f.image.view(), f.geometry, f.tables, f.coeffs.data());
  tjhandle tj = tjInitCompress();
  f.reference = tj_compress(tj, f.image);
  tjDestroy(tj);
  mjpeg::tokenize(f.geometry, f.coeffs.data(), 0, false, f.tokens);
  mjpeg::tokenize_blocks(f.geometry, f.coeffs.data(), mjpeg::ac_codes(standard_tables(), 2),
                         f.blocks);
}

/// The coded blocks' size against the JPEG's, and whether the packer writes tjCompress2's bytes.
bool report_blocks(const Frame& f) {
  std::vector<std::uint8_t> jpeg;
  mjpeg::encode_tokens(f.geometry, f.tables, f.blocks.view(), f.options, jpeg);
  const bool same = jpeg == f.reference;
  std::printf("%dx%d coded blocks: %zu bytes per frame = %.2f x the JPEG's %zu (%zu block words, "
              "%zu AC bytes); symbol slots %zu bytes = %.2f x; the packer's JPEG %s tjCompress2's\n",
              f.geometry.width, f.geometry.height, f.blocks.bytes(),
              double(f.blocks.bytes()) / double(f.reference.size()), f.reference.size(),
              f.blocks.blocks.size(), f.blocks.bits.size(), f.tokens.bytes(),
              double(f.tokens.bytes()) / double(f.reference.size()),
              same ? "byte-identical to" : "DIFFERS FROM");
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  // The frame: kHD by default; MJPEG_BENCH_SIZE=WxH picks another crop of the same mosaic
  // (e.g. 3840x2160 = k4K, 7680x4320), for the latency of large frames on several threads.
  int width = 1920, height = 1080;
  if (const char* size = std::getenv("MJPEG_BENCH_SIZE")) {
    if (std::sscanf(size, "%dx%d", &width, &height) != 2 || width < 1 || height < 1) {
      std::fprintf(stderr, "mjpeg_bench_entropy: MJPEG_BENCH_SIZE must be WxH, got '%s'\n", size);
      return 2;
    }
  }
  Frame frame;
  // The 4K frame of the packer's second row (unless the frame is that size already).
  std::unique_ptr<Frame> frame_4k;
  const bool add_4k = !(width == 3840 && height == 2160);
  try {
    make_frame(frame, width, height);
    if (add_4k) {
      frame_4k = std::make_unique<Frame>();
      make_frame(*frame_4k, 3840, 2160);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mjpeg_bench_entropy: cannot build the frames: %s\n", e.what());
    return 1;
  }
  g_frame = &frame;

  // Same bytes first: a speed comparison of different outputs would mean nothing.
  std::vector<std::uint8_t> ours;
  mjpeg::encode_coefficients(frame.geometry, frame.tables, frame.coeffs.data(), frame.options, ours);
  std::vector<std::uint8_t> from_tokens;
  mjpeg::encode_tokens(frame.geometry, frame.tables, frame.tokens.view(), frame.options, from_tokens);
  bool same = ours == frame.reference && mjpeg::encode_jpeg(frame.image.view(), frame.options) == ours &&
              from_tokens == ours;
  same = report_blocks(frame) && same;
  if (frame_4k) same = report_blocks(*frame_4k) && same;
  for (const std::string& v : mjpeg::token_coder_variants()) {
    std::vector<std::uint8_t> scan;
    mjpeg::encode_token_scan(frame.geometry, 0, frame.tokens.view(), standard_tables(), scan, v);
    same = same && std::search(ours.begin(), ours.end(), scan.begin(), scan.end()) != ours.end();
  }
  std::printf("frame %dx%d (Kodak mosaic) q%d 4:2:0: JPEG %zu bytes; ours (coefficients and tokens) %s "
              "tjCompress2; token stream %zu slots = %zu bytes (%.1f%% of the %zu bytes of int16 "
              "coefficients)\n",
              width, height, kQuality, frame.reference.size(),
              same ? "byte-identical to" : "DIFFERS FROM",
              frame.tokens.slots.size(), frame.tokens.slots.size() * 2,
              100.0 * static_cast<double>(frame.tokens.slots.size()) / static_cast<double>(frame.coeffs.size()),
              frame.coeffs.size() * 2);
  // The other settings: their token coding checked against the coefficient coder (itself
  // checked against tjCompress2 where the setting is one TurboJPEG has).
  std::vector<std::unique_ptr<Case>> cases;
  const char* cases_env = std::getenv("MJPEG_BENCH_CASES");
  if (!cases_env || std::string(cases_env) != "0") {
    struct Setting {
      const char* name;
      int quality;
      mjpeg::Subsampling sampling;
      int tj_sampling;
      int restart;
      bool optimize;
    };
    const Setting settings[] = {
        {"q50", 50, mjpeg::Subsampling::s420, TJSAMP_420, 0, false},
        {"q75", 75, mjpeg::Subsampling::s420, TJSAMP_420, 0, false},
        {"q100", 100, mjpeg::Subsampling::s420, TJSAMP_420, 0, false},
        {"q90_444", 90, mjpeg::Subsampling::s444, TJSAMP_444, 0, false},
        {"q90_restart8", 90, mjpeg::Subsampling::s420, TJSAMP_420, 8, false},
        {"q90_optimize", 90, mjpeg::Subsampling::s420, TJSAMP_420, 0, true},
    };
    tjhandle tjc = tjInitCompress();
    for (const Setting& st : settings) {
      auto c = std::make_unique<Case>();
      c->name = st.name;
      c->options = mjpeg::EncodeOptions{st.quality, st.sampling, st.restart, st.optimize};
      c->geometry = mjpeg::make_geometry(width, height, st.sampling);
      c->tables = mjpeg::make_quant_tables(st.quality, 2);
      c->coeffs.resize(c->geometry.coefficient_count());
      mjpeg::transform_cpu(frame.image.view(), c->geometry, c->tables, c->coeffs.data());
      c->reference = tj_compress(tjc, frame.image, st.quality, st.tj_sampling);
      // The format the GPU modes hand the coder at this setting with MJPEG_TOKEN_FORMAT=coded.
      if (mjpeg::token_format_for(c->geometry, c->options, mjpeg::tokens::Format::blocks) ==
          mjpeg::tokens::Format::blocks)
        mjpeg::tokenize_blocks(c->geometry, c->coeffs.data(),
                               mjpeg::ac_codes(standard_tables(), 2), c->tokens);
      else
        mjpeg::tokenize(c->geometry, c->coeffs.data(), st.restart, st.optimize, c->tokens);
      if (st.optimize) {
        mjpeg::test::Image flipped = frame.image;
        const std::size_t stride = frame.image.stride();
        for (int y = 0; y < height; ++y)
          std::memcpy(flipped.pixels.data() + y * stride,
                      frame.image.pixels.data() + (height - 1 - y) * stride, stride);
        std::vector<std::int16_t> fc(c->geometry.coefficient_count());
        mjpeg::transform_cpu(flipped.view(), c->geometry, c->tables, fc.data());
        mjpeg::tokenize(c->geometry, fc.data(), st.restart, true, c->flipped_tokens);
        std::vector<std::uint8_t> a, b;
        mjpeg::encode_coefficients(c->geometry, c->tables, fc.data(), c->options, a);
        mjpeg::encode_tokens(c->geometry, c->tables, c->flipped_tokens.view(), c->options, b);
        if (a != b) {
          std::printf("case %s (flipped): the JPEG from tokens DIFFERS\n", st.name);
          same = false;
        }
      }
      std::vector<std::uint8_t> coef_bytes, token_bytes;
      mjpeg::encode_coefficients(c->geometry, c->tables, c->coeffs.data(), c->options, coef_bytes);
      mjpeg::encode_tokens(c->geometry, c->tables, c->tokens.view(), c->options, token_bytes);
      const bool tj_comparable = st.restart == 0 && !st.optimize;
      if (token_bytes != coef_bytes || (tj_comparable && coef_bytes != c->reference)) {
        std::printf("case %s: the JPEG from tokens DIFFERS FROM the %s\n", st.name,
                    token_bytes != coef_bytes ? "coefficient coder's" : "tjCompress2 output");
        same = false;
      }
      cases.push_back(std::move(c));
    }
    tjDestroy(tjc);
    std::printf("token cases (ours/tokens/CASE vs libjpeg/entropy/CASE):");
    for (const auto& c : cases)
      std::printf(" %s %s %zu bytes = %.2f x the JPEG's %zu;", c->name.c_str(),
                  c->tokens.format == mjpeg::tokens::Format::blocks ? "coded blocks" : "slots",
                  c->tokens.bytes(), double(c->tokens.bytes()) / double(c->reference.size()),
                  c->reference.size());
    std::printf("\n");
  }

  for (const std::string& v : mjpeg::transform_variants()) {  // every variant's bytes, too
    std::vector<std::int16_t> coeffs(frame.geometry.coefficient_count());
    mjpeg::transform_cpu(v, frame.image.view(), frame.geometry, frame.tables, coeffs.data());
    std::vector<std::uint8_t> bytes;
    mjpeg::encode_coefficients(frame.geometry, frame.tables, coeffs.data(), frame.options, bytes);
    if (bytes != frame.reference) {
      std::printf("transform variant %s: the JPEG DIFFERS FROM tjCompress2\n", v.c_str());
      same = false;
    }
  }
  for (bool progressive : {false, true}) {  // the optimised files, against libjpeg's transcode
    mjpeg::EncodeOptions o = frame.options;
    o.optimize = true;
    o.progressive = progressive;
    std::vector<std::uint8_t> bytes;
    mjpeg::encode_coefficients(frame.geometry, frame.tables, frame.coeffs.data(), o, bytes);
    const std::vector<std::uint8_t> theirs = libjpeg_coding(nullptr, progressive);
    std::printf("%s: %zu bytes, %s libjpeg-turbo's (jpeg_write_coefficients)\n",
                progressive ? "--progressive" : "--optimize", bytes.size(),
                bytes == theirs ? "byte-identical to" : "DIFFERS FROM");
    same = same && bytes == theirs;
  }
  std::printf("transform variants:");
  for (const std::string& v : mjpeg::transform_variants()) std::printf(" %s", v.c_str());
  std::printf(" (default %s)\n", mjpeg::transform_variant());

  for (const std::string& v : mjpeg::transform_variants())
    benchmark::RegisterBenchmark(("ours/transform/" + v).c_str(), BM_ours_transform_variant, v)
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ours/entropy", BM_ours_entropy)->Unit(benchmark::kMillisecond);
  for (const std::string& v : mjpeg::huffman_variants())
    benchmark::RegisterBenchmark(("ours/scan/" + v).c_str(), BM_ours_scan_variant, v)
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ours/tokens", BM_ours_tokens)->Unit(benchmark::kMillisecond);
  for (const std::string& v : mjpeg::token_coder_variants())
    benchmark::RegisterBenchmark(("ours/token_scan/" + v).c_str(), BM_ours_scan, &Frame::tokens, v)
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ours/packer", BM_ours_packer, &frame)->Unit(benchmark::kMillisecond);
  for (const std::string& v : mjpeg::token_coder_variants())
    benchmark::RegisterBenchmark(("ours/block_scan/" + v).c_str(), BM_ours_scan, &Frame::blocks, v)
        ->Unit(benchmark::kMillisecond);
  if (frame_4k) {
    benchmark::RegisterBenchmark("ours/packer/4k", BM_ours_packer, frame_4k.get())
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("libjpeg/entropy/4k", BM_libjpeg_entropy, frame_4k.get())
        ->Unit(benchmark::kMillisecond);
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> packer_threads = {1};  // one alone, two, and every core at once
  for (int t : {2, cores})
    if (t > packer_threads.back()) packer_threads.push_back(t);
  for (int t : packer_threads)
    benchmark::RegisterBenchmark(("ours/packer_threads/" + std::to_string(t)).c_str(),
                                 BM_ours_packer_threads, &frame, t)
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
  for (int t : {2, 4, 8})
    benchmark::RegisterBenchmark(("ours/packer_parallel/" + std::to_string(t)).c_str(),
                                 BM_ours_packer_parallel, t)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  benchmark::RegisterBenchmark("ours/tokenize", BM_ours_tokenize)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("libjpeg/entropy", BM_libjpeg_entropy, &frame)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ours/optimize", BM_ours_coding, false, false)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("libjpeg/optimize", BM_libjpeg_coding, false)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ours/progressive", BM_ours_coding, true, false)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ours/tokens_progressive", BM_ours_coding, true, true)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("libjpeg/progressive", BM_libjpeg_coding, true)
      ->Unit(benchmark::kMillisecond);
  for (const auto& c : cases) {
    benchmark::RegisterBenchmark(("ours/tokens/" + c->name).c_str(), BM_ours_tokens_case, c.get())
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("libjpeg/entropy/" + c->name).c_str(), BM_libjpeg_entropy_case,
                                 c.get())
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("ours/encode_jpeg", BM_ours_encode_jpeg)->Unit(benchmark::kMillisecond);
  for (int t : kPictureThreads)
    benchmark::RegisterBenchmark(("ours/encode_jpeg_threads/" + std::to_string(t)).c_str(),
                                 BM_ours_encode_jpeg_threads, t)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (const std::string& v : mjpeg::transform_variants())
    benchmark::RegisterBenchmark(("ours/encode/" + v).c_str(), BM_ours_encode_variant, v)
        ->Unit(benchmark::kMillisecond);
  const std::string default_variant = mjpeg::transform_variant();
  benchmark::RegisterBenchmark(("ours/encode_trellis/" + default_variant).c_str(),
                               BM_ours_encode_trellis, default_variant)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("libjpeg/tjCompress2", BM_libjpeg_tjCompress2)->Unit(benchmark::kMillisecond);

  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  auto& s = reporter.seconds;
  auto line = [&](const char* what, const char* a, const char* b) {
    if (s.count(a) && s.count(b) && s[a] > 0 && s[b] > 0)
      std::printf("  %-34s ours %8.2f ms  libjpeg-turbo %8.2f ms  speed ours/libjpeg-turbo = %.2fx\n",
                  what, s[a] * 1e3, s[b] * 1e3, s[b] / s[a]);
  };
  std::printf("\nSummary (%dx%d, q%d 4:2:0, one thread, CPU time; >1 means ours is faster):\n",
              width, height, kQuality);
  line("the packer (coded blocks):", "ours/packer", "libjpeg/entropy");
  for (const std::string& v : mjpeg::token_coder_variants()) {
    const std::string name = "ours/block_scan/" + v;
    const std::string what = "  the scan alone, " + v + ":";
    line(what.c_str(), name.c_str(), "libjpeg/entropy");
  }
  line("  3840x2160 frame:", "ours/packer/4k", "libjpeg/entropy/4k");
  line("the CPU mode's coder (coefficients):", "ours/entropy", "libjpeg/entropy");
  // Each variant this host runs (the row above is the best of them): an AVX-512 host measures
  // what an AVX2-only one would run.
  for (const std::string& v : mjpeg::huffman_variants()) {
    const std::string name = "ours/scan/" + v;
    const std::string what = "  the coder, " + v + ":";
    line(what.c_str(), name.c_str(), "libjpeg/entropy");
  }
  line("symbol slots (GPU modes' default):", "ours/tokens", "libjpeg/entropy");
  for (const std::string& v : mjpeg::token_coder_variants()) {
    const std::string name = "ours/token_scan/" + v;
    const std::string what = "  token scan, " + v + ":";
    line(what.c_str(), name.c_str(), "libjpeg/entropy");
  }
  line("--optimize of ready coeffs:", "ours/optimize", "libjpeg/optimize");
  line("--progressive of ready coeffs:", "ours/progressive", "libjpeg/progressive");
  line("--progressive from GPU tokens:", "ours/tokens_progressive", "libjpeg/progressive");
  if (s.count("ours/progressive") && s.count("ours/optimize") && s["ours/optimize"] > 0)
    std::printf("  --progressive costs %.2fx the time of --optimize (ours), %.2fx (libjpeg-turbo)\n",
                s["ours/progressive"] / s["ours/optimize"],
                s.count("libjpeg/optimize") && s["libjpeg/optimize"] > 0
                    ? s["libjpeg/progressive"] / s["libjpeg/optimize"]
                    : 0.0);
  for (const auto& c : cases) {
    const std::string what = "  tokens, " + c->name + ":";
    line(what.c_str(), ("ours/tokens/" + c->name).c_str(), ("libjpeg/entropy/" + c->name).c_str());
  }
  line("whole encode:", "ours/encode_jpeg", "libjpeg/tjCompress2");
  for (int t : kPictureThreads) {
    const std::string name = "ours/encode_jpeg_threads/" + std::to_string(t);
    if (s.count(name) && s.count("libjpeg/tjCompress2") && s[name] > 0)
      std::printf("  whole encode on %s: %8.2f ms wall, %.2fx libjpeg-turbo's one thread\n",
                  t ? (std::to_string(t) + " threads").c_str() : "every core", s[name] * 1e3,
                  s["libjpeg/tjCompress2"] / s[name]);
  }
  for (int t : packer_threads) {
    const std::string name = "ours/packer_threads/" + std::to_string(t);
    if (t > 1 && s.count(name) && s.count("ours/packer_threads/1") && s[name] > 0)
      std::printf("  the packer on %d threads at once: %8.3f ms per frame per thread, %.2fx the "
                  "time of one thread alone\n",
                  t, s[name] * 1e3, s[name] / s["ours/packer_threads/1"]);
  }
  for (int t : {2, 4, 8}) {
    const std::string name = "ours/packer_parallel/" + std::to_string(t);
    if (s.count(name) && s.count("ours/packer") && s[name] > 0)
      std::printf("  one frame from coded blocks on %d threads: %8.2f ms wall, %.2fx one thread\n",
                  t, s[name] * 1e3, s["ours/packer"] / s[name]);
  }
  for (const std::string& v : mjpeg::transform_variants()) {
    const std::string t = "ours/transform/" + v, e = "ours/encode/" + v;
    if (!s.count(t) || !s.count("ours/transform/scalar")) continue;
    std::printf("  transform alone, %-7s %8.2f ms (%.1fx the scalar reference)\n", v.c_str(),
                s[t] * 1e3, s["ours/transform/scalar"] / s[t]);
    line(("whole encode, " + v + " transform:").c_str(), e.c_str(), "libjpeg/tjCompress2");
  }
  {
    const std::string& v = default_variant;
    const std::string off = "ours/encode/" + v, trellis = "ours/encode_trellis/" + v;
    if (s.count(off) && s.count(trellis) && s[off] > 0 && s[trellis] > 0)
      std::printf("  --rdo trellis, %s transform and coding: %8.2f ms against %.2f ms with the "
                  "nearest levels: %.2fx their speed\n",
                  v.c_str(), s[trellis] * 1e3, s[off] * 1e3, s[off] / s[trellis]);
  }
  if (s.count("libjpeg/entropy") && s.count("libjpeg/tjCompress2"))
    std::printf("  libjpeg-turbo's Huffman share of its whole compression: %.0f%%\n",
                100.0 * s["libjpeg/entropy"] / s["libjpeg/tjCompress2"]);
  for (const std::string& e : reporter.errors) std::printf("ERROR in a benchmark: %s\n", e.c_str());
  return same && reporter.errors.empty() ? 0 : 2;
}
