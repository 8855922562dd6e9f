// Choosing among instruction-set variants of one piece of code (the CPU transform, the Huffman
// coder from coefficients, the token coder): each keeps a table of entries, best first, each
// with a `name` and a `supported()` check of the running CPU, the last one always supported.
// These pick from such a table the same way for all three.
#pragma once

#include <iterator>
#include <string>
#include <vector>

#include "mjpeg/error.hpp"

namespace mjpeg::variant_table {

/// An entry itself, whether the table holds entries or pointers to them.
template <class V>
const V& entry(const V& v) {
  return v;
}
template <class V>
const V& entry(const V* v) {
  return *v;
}

/// The first entry this CPU supports, else the last one.
template <class Table>
const auto& best(const Table& table) {
  for (const auto& v : table)
    if (entry(v).supported()) return entry(v);
  return entry(*std::rbegin(table));
}

/// The entry named `name`; an Error naming `what` where there is none or the CPU lacks it.
template <class Table>
const auto& named(const Table& table, const std::string& name, const char* what) {
  for (const auto& v : table)
    if (name == entry(v).name && entry(v).supported()) return entry(v);
  throw Error(std::string(what) + " variant '" + name + "' is not available on this CPU");
}

/// The names of the entries, best first: all that were built, or only those this CPU runs.
template <class Table>
std::vector<std::string> names(const Table& table, bool supported_only) {
  std::vector<std::string> out;
  for (const auto& v : table)
    if (!supported_only || entry(v).supported()) out.emplace_back(entry(v).name);
  return out;
}

}  // namespace mjpeg::variant_table
