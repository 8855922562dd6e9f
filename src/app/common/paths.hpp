// Small path helpers of the CLI: output kinds by extension, same-file checks.
#pragma once

#include <string>

namespace mjpeg::app {

/// What an output path asks for, by its extension. Video containers come later.
enum class OutputKind { jpeg };

/// The extension of `path` in lower case, with its dot (".jpg"), or "" when there is none.
std::string lower_extension(const std::string& path);

/// The output kind for `path`; throws UsageError listing the supported extensions otherwise.
OutputKind output_kind_for(const std::string& path);

/// The output extensions accepted, for help texts and errors (".jpg, .jpeg").
const char* supported_output_extensions();

/// True when `a` and `b` name the same file: the same inode when both exist, otherwise the
/// same absolute, normalised path.
bool same_file(const std::string& a, const std::string& b);

}  // namespace mjpeg::app
