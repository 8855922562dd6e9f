// The vocabulary tables (mjpeg/vocabulary.hpp): every name parses back to its value, names are
// unique, an unknown name is a UsageError that lists the choices, and the public to_string /
// parse functions say the same as the tables.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"
#include "mjpeg/vocabulary.hpp"

namespace mjpeg {
namespace {

template <class E>
void check_vocabulary(std::size_t expected_size) {
  const auto& words = vocab::Vocabulary<E>::words;
  EXPECT_EQ(std::size(words), expected_size);
  std::set<std::string> names;
  for (const vocab::Word<E>& w : words) {
    EXPECT_TRUE(names.insert(w.name).second) << "name twice: " << w.name;
    EXPECT_EQ(vocab::parse_name<E>(w.name), w.value) << w.name;
    EXPECT_STREQ(vocab::name_of(w.value), w.name);
    EXPECT_GT(std::string(w.help).size(), 2u) << w.name;
    EXPECT_TRUE(vocab::is_known(w.value)) << w.name;
  }
  EXPECT_FALSE(vocab::is_known(static_cast<E>(99)));
  try {
    vocab::parse_name<E>("no-such-name");
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(std::string("unknown ") + vocab::Vocabulary<E>::kind + " 'no-such-name'", 0),
              0u)
        << m;
    for (const std::string& n : names) EXPECT_NE(m.find(n), std::string::npos) << m;
  }
}

TEST(Vocabulary, EveryNameParsesBackAndAnUnknownOneListsTheChoices) {
  check_vocabulary<Subsampling>(4);
  check_vocabulary<Tune>(3);
  check_vocabulary<Offload>(4);
  check_vocabulary<KernelVariant>(4);
  check_vocabulary<GpuOutput>(3);
  check_vocabulary<FrameFormat>(7);
  check_vocabulary<YuvMatrix>(3);
  check_vocabulary<YuvRange>(2);
}

TEST(Vocabulary, SentencesAndTypeNames) {
  EXPECT_EQ(vocab::choices_of<Subsampling>(), "444, 422, 420 or gray");
  EXPECT_EQ(vocab::alternatives_of<GpuOutput>(), "auto|tokens|coefficients");
  EXPECT_EQ(vocab::choices_of<YuvRange>(), "limited or full");
  EXPECT_EQ(vocab::explained_choices_of<YuvRange>(),
            "limited (Y 16..235, C 16..240), full (0..255)");
}

TEST(Vocabulary, ThePublicFunctionsReadTheTables) {
  EXPECT_EQ(to_string(Subsampling::s420), "420");
  EXPECT_EQ(parse_subsampling("gray"), Subsampling::gray);
  EXPECT_EQ(to_string(Tune::ssim), "ssim");
  EXPECT_EQ(parse_tune("psnr"), Tune::psnr);
  EXPECT_STREQ(to_string(Offload::sok_pinned), "sok-pinned");
  EXPECT_EQ(parse_offload("aok"), Offload::aok);
  EXPECT_STREQ(to_string(KernelVariant::partitioned), "partitioned");
  EXPECT_EQ(parse_kernel_variant("primitives"), KernelVariant::primitives);
  EXPECT_STREQ(to_string(GpuOutput::automatic), "auto");
  EXPECT_EQ(parse_gpu_output("coefficients"), GpuOutput::coefficients);
  EXPECT_STREQ(to_string(FrameFormat::yuv400p), "yuv400p");
  EXPECT_EQ(parse_frame_format("bgr24"), FrameFormat::bgr24);
  EXPECT_THROW(parse_subsampling("411"), UsageError);
  EXPECT_THROW(parse_tune("butteraugli"), UsageError);
}

// What sets the modes apart is one table: the cpu mode has no GPU, sok's host memory is
// pageable, only aok overlaps frames; every mode of the vocabulary has a row.
TEST(Vocabulary, EveryOffloadModeHasTraits) {
  for (const std::string& name : vocab::names_of<Offload>()) {
    const Offload mode = parse_offload(name);
    const OffloadTraits t = traits_of(mode);
    EXPECT_EQ(t.gpu, uses_gpu(mode)) << name;
    EXPECT_EQ(t.gpu, mode != Offload::cpu) << name;
    EXPECT_EQ(t.pinned_host, mode == Offload::sok_pinned || mode == Offload::aok) << name;
    EXPECT_EQ(t.asynchronous, mode == Offload::aok) << name;
    if (t.asynchronous) {
      EXPECT_TRUE(t.pinned_host && t.gpu) << name;
    }
  }
  EXPECT_THROW(traits_of(static_cast<Offload>(42)), std::logic_error);
}

}  // namespace
}  // namespace mjpeg
