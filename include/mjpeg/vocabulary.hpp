// The names of the options' values: one table per vocabulary (sampling, table preset, mode,
// kernel variant, GPU output, frame format, YCbCr matrix and range), each entry a value, the
// name the CLI, the JSON and the library's to_string / parse functions use, and a line of help.
// The to_string / parse_* functions of options.hpp and video.hpp, the CLI's choices and help
// texts, and so the man page made from them, all read these tables: a new value is one row.
#pragma once

#include <string>
#include <vector>

#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::vocab {

template <class E>
struct Word {
  E value;
  const char* name;
  const char* help;
};

/// Specialised for each vocabulary: `kind` (how an error names it: "unknown KIND 'x'") and
/// `words`, in the order help and error messages list them.
template <class E>
struct Vocabulary;

template <>
struct Vocabulary<Subsampling> {
  static constexpr const char* kind = "subsampling";
  static constexpr Word<Subsampling> words[] = {
      {Subsampling::s444, "444", "no chroma subsampling"},
      {Subsampling::s422, "422", "chroma halved horizontally"},
      {Subsampling::s420, "420", "chroma halved both ways"},
      {Subsampling::gray, "gray", "luma only (a grayscale JPEG)"},
  };
};

template <>
struct Vocabulary<Tune> {
  static constexpr const char* kind = "table preset";
  static constexpr Word<Tune> words[] = {
      {Tune::none, "none", "cjpeg's tables (ITU-T T.81 Annex K)"},
      {Tune::psnr, "psnr", "tuned for the smallest files at a given PSNR"},
      {Tune::ssim, "ssim", "tuned for the smallest files at a given SSIM"},
  };
};

template <>
struct Vocabulary<Rdo> {
  static constexpr const char* kind = "rounding";
  static constexpr Word<Rdo> words[] = {
      {Rdo::off, "off", "round to the nearest level, as cjpeg (byte-identical)"},
      {Rdo::deadzone, "deadzone", "AC rounds up from 5/8 of a step: smaller, as fast"},
      {Rdo::trellis, "trellis", "levels chosen per block for distortion + lambda x bits"},
  };
};

template <>
struct Vocabulary<Offload> {
  static constexpr const char* kind = "offload mode";
  static constexpr Word<Offload> words[] = {
      {Offload::cpu, "cpu", "everything on the CPU"},
      {Offload::sok, "sok", "synchronous GPU offload from pageable memory"},
      {Offload::sok_pinned, "sok-pinned", "synchronous GPU offload from page-locked memory"},
      {Offload::aok, "aok", "asynchronous GPU offload"},
  };
};

template <>
struct Vocabulary<KernelVariant> {
  static constexpr const char* kind = "kernel variant";
  static constexpr Word<KernelVariant> words[] = {
      {KernelVariant::direct, "direct", "no staging"},
      {KernelVariant::pipeline, "pipeline", "a block-scoped copy pipeline, every thread copies"},
      {KernelVariant::partitioned, "partitioned", "a copy pipeline, producer and consumer warps"},
      {KernelVariant::primitives, "primitives", "the asynchronous-copy primitives"},
  };
};

template <>
struct Vocabulary<GpuOutput> {
  static constexpr const char* kind = "GPU output";
  static constexpr Word<GpuOutput> words[] = {
      {GpuOutput::automatic, "auto", "tokens, but coefficients for progressive JPEG"},
      {GpuOutput::tokens, "tokens", "each block's Huffman symbols"},
      {GpuOutput::coefficients, "coefficients", "the quantized coefficients"},
  };
};

template <>
struct Vocabulary<FrameFormat> {
  static constexpr const char* kind = "frame format";
  static constexpr Word<FrameFormat> words[] = {
      {FrameFormat::rgb24, "rgb24", "packed R, G, B"},
      {FrameFormat::bgr24, "bgr24", "packed B, G, R"},
      {FrameFormat::gray8, "gray8", "one luma byte per pixel"},
      {FrameFormat::yuv420p, "yuv420p", "planar YCbCr 4:2:0"},
      {FrameFormat::yuv422p, "yuv422p", "planar YCbCr 4:2:2"},
      {FrameFormat::yuv444p, "yuv444p", "planar YCbCr 4:4:4"},
      {FrameFormat::yuv400p, "yuv400p", "planar luma only"},
  };
};

template <>
struct Vocabulary<YuvMatrix> {
  static constexpr const char* kind = "YCbCr matrix";
  static constexpr Word<YuvMatrix> words[] = {
      {YuvMatrix::bt601, "bt601", "ITU-R BT.601"},
      {YuvMatrix::bt709, "bt709", "ITU-R BT.709"},
      {YuvMatrix::bt2020, "bt2020", "ITU-R BT.2020, non-constant luminance"},
  };
};

template <>
struct Vocabulary<YuvRange> {
  static constexpr const char* kind = "YCbCr range";
  static constexpr Word<YuvRange> words[] = {
      {YuvRange::limited, "limited", "Y 16..235, C 16..240"},
      {YuvRange::full, "full", "0..255"},
  };
};

/// The name of `value` ("?" for a value outside the table).
template <class E>
const char* name_of(E value) {
  for (const Word<E>& w : Vocabulary<E>::words)
    if (w.value == value) return w.name;
  return "?";
}

/// True when `value` has a row (a value cast from an integer may have none).
template <class E>
bool is_known(E value) {
  for (const Word<E>& w : Vocabulary<E>::words)
    if (w.value == value) return true;
  return false;
}

/// Every name of the vocabulary, in its order.
template <class E>
std::vector<std::string> names_of() {
  std::vector<std::string> names;
  for (const Word<E>& w : Vocabulary<E>::words) names.push_back(w.name);
  return names;
}

/// The names as a sentence: "a, b, c or d".
template <class E>
std::string choices_of() {
  const std::vector<std::string> names = names_of<E>();
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

/// The names joined by '|', for a CLI option's type name ("a|b|c").
template <class E>
std::string alternatives_of() {
  std::string text;
  for (const Word<E>& w : Vocabulary<E>::words) text += (text.empty() ? "" : "|") + std::string(w.name);
  return text;
}

/// "a (help a), b (help b) ...": for an option's help text.
template <class E>
std::string explained_choices_of() {
  std::string text;
  for (const Word<E>& w : Vocabulary<E>::words) {
    if (!text.empty()) text += ", ";
    text += std::string(w.name) + " (" + w.help + ")";
  }
  return text;
}

/// The value named `text`; UsageError "unknown KIND 'text' (expected a, b or c)" otherwise.
template <class E>
E parse_name(const std::string& text) {
  for (const Word<E>& w : Vocabulary<E>::words)
    if (text == w.name) return w.value;
  throw UsageError(std::string("unknown ") + Vocabulary<E>::kind + " '" + text + "' (expected " +
                   choices_of<E>() + ")");
}

}  // namespace mjpeg::vocab
