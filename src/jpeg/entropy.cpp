#include "jpeg/entropy.hpp"

#include "jpeg/huffman.hpp"
#include "jpeg/jfif_writer.hpp"
#include "jpeg/progressive.hpp"

namespace mjpeg {

void encode_coefficients(const FrameGeometry& g, const QuantTables& tables,
                         const std::int16_t* coeffs, const EncodeOptions& options,
                         std::vector<std::uint8_t>& out, int threads) {
  if (options.progressive) {
    encode_progressive(g, tables, coeffs, options, out);
    return;
  }
  const int table_count = g.num_components == 1 ? 1 : 2;
  HuffmanTables huff;
  if (options.optimize) {  // the statistics only where they are used (4 KB to zero)
    HuffmanStats stats;
    if (threads > 1)
      gather_stats_parallel(g, coeffs, options.restart_interval, threads, stats);
    else
      gather_stats(g, coeffs, options.restart_interval, stats);
    huff = frame_tables(table_count, &stats);
  } else {
    huff = frame_tables(table_count, nullptr);
  }
  out.clear();
  write_headers(g, tables, huff, options.restart_interval, out);
  if (threads > 1)
    encode_scan_parallel(g, coeffs, options.restart_interval, huff, threads, out);
  else
    encode_scan(g, coeffs, options.restart_interval, huff, out);
  write_trailer(out);
}

}  // namespace mjpeg
