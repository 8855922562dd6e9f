// NVDEC input end to end (label gpu): `mjpeg encode CLIP --decoder gpu` against `--decoder cpu`
// (FFmpeg's libavcodec, and libswscale for the 10-bit reduction) on the clips of
// tests/gpu/make_nvdec_clips.sh: every AVI byte-identical, frame counts as ffprobe counted them
// where the clips were made (counts.txt). Per codec (H.264 with B-frames and a cropped size, an
// open GOP, a raw Annex B stream; HEVC 8-bit with CRA open GOPs, HEVC 10-bit; VP9 at an odd
// size), in aok (frames straight from device memory), with one decoder
// and seven, in sok (frames through the host), and with a frame range (--start, --frames).
// Env: MJPEG_NVDEC_CLIPS (the clips' folder) and MJPEG_CLI (the mjpeg binary). Without a usable
// GPU or those, the tests skip; with MJPEG_REQUIRE_GPU=1 they fail instead.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/gpu_guard.hpp"
#include "gpu_transform.hpp"

namespace {

struct Env {
  std::string clips, cli, work;
  std::map<std::string, long> counts;  // ffprobe -count_frames where the clips were made
};

/// The clips and the CLI, or a skip (a failure with MJPEG_REQUIRE_GPU=1).
bool get_env(Env& e, std::string& why) {
  const char* clips = std::getenv("MJPEG_NVDEC_CLIPS");
  const char* cli = std::getenv("MJPEG_CLI");
  if (clips == nullptr || cli == nullptr) {
    why = "MJPEG_NVDEC_CLIPS and MJPEG_CLI not set";
    return false;
  }
  e.clips = clips;
  e.cli = cli;
  std::ifstream counts(e.clips + "/counts.txt");
  std::string name;
  long n = 0;
  while (counts >> name >> n) e.counts[name] = n;
  if (e.counts.empty()) {
    why = e.clips + "/counts.txt missing";
    return false;
  }
  const char* tmp = std::getenv("TMPDIR");
  e.work = std::string(tmp ? tmp : "/tmp") + "/mjpeg-nvdec-test-" + std::to_string(::getpid());
  return std::system(("mkdir -p '" + e.work + "'").c_str()) == 0;
}

#define NEED_CLIPS(env)                                                           \
  Env env;                                                                        \
  do {                                                                            \
    MJPEG_NEED_GPU();                                                             \
    std::string why_;                                                             \
    if (!get_env(env, why_)) {                                                    \
      if (::mjpeg::test::gpu_required()) FAIL() << "MJPEG_REQUIRE_GPU=1: " << why_; \
      GTEST_SKIP() << why_;                                                       \
    }                                                                             \
  } while (0)

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

/// Runs `mjpeg encode CLIP -o OUT ARGS` and returns its exit code; stderr in `err`.
int encode(const Env& e, const std::string& clip, const std::string& out, const std::string& args,
           std::string& err) {
  const std::string log = out + ".err";
  const std::string cmd = "'" + e.cli + "' encode '" + e.clips + "/" + clip + "' -o '" + out +
                          "' -y " + args + " 2>'" + log + "'";
  const int rc = std::system(cmd.c_str());
  err = slurp(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/// The frame count of the summary line ("wrote X: N frames").
long frames_written(const std::string& err) {
  const auto line = err.find("mjpeg: wrote ");
  if (line == std::string::npos) return -1;
  const auto at = err.find(": ", line + 13);
  if (at == std::string::npos) return -1;
  return std::strtol(err.c_str() + at + 2, nullptr, 10);
}

/// GPU and CPU decoding of `clip` with `args` give the same AVI; returns the frames written.
long same_as_cpu(const Env& e, const std::string& clip, const std::string& args,
                 const std::string& gpu_args = "") {
  std::string gerr, cerr;
  const std::string gpu = e.work + "/" + clip + ".gpu.avi", cpu = e.work + "/" + clip + ".cpu.avi";
  EXPECT_EQ(encode(e, clip, gpu, "--decoder gpu " + gpu_args + " " + args, gerr), 0) << gerr;
  EXPECT_NE(gerr.find("decoded by NVDEC"), std::string::npos) << gerr;
  EXPECT_EQ(encode(e, clip, cpu, "--decoder cpu " + args, cerr), 0) << cerr;
  EXPECT_EQ(cerr.find("NVDEC"), std::string::npos) << cerr;
  const std::string a = slurp(gpu), b = slurp(cpu);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a.size(), b.size()) << clip << " " << args;
  EXPECT_TRUE(a == b) << clip << " " << args << ": the GPU-decoded AVI differs";
  EXPECT_EQ(frames_written(gerr), frames_written(cerr)) << gerr << cerr;
  return frames_written(gerr);
}

class GpuNvdec : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuNvdec, SameBytesAsLibavcodecInAokWithOneAndSevenDecoders) {
  NEED_CLIPS(env);
  const std::string clip = GetParam();
  ASSERT_TRUE(env.counts.count(clip)) << clip << " not in counts.txt";
  EXPECT_EQ(same_as_cpu(env, clip, "--mode aok", "--decoders 7"), env.counts[clip]);
  EXPECT_EQ(same_as_cpu(env, clip, "--mode aok", "--decoders 1"), env.counts[clip]);
}

TEST_P(GpuNvdec, SameBytesThroughTheHostInSok) {
  NEED_CLIPS(env);
  const std::string clip = GetParam();
  EXPECT_EQ(same_as_cpu(env, clip, "--mode sok -q 75"), env.counts[clip]);
}

// --stats' NVDEC line: decoders are made one at a time, only while parts wait for one (never
// more than the stream has parts), from the format probed at the start (none made again for
// another coded size), and every frame of every part is decoded.
TEST_P(GpuNvdec, DecodersAreMadeOnlyWhilePartsWaitForOne) {
  NEED_CLIPS(env);
  const std::string clip = GetParam();
  std::string err;
  ASSERT_EQ(encode(env, clip, env.work + "/" + clip + ".stats.avi",
                   "--decoder gpu --decoders 7 --mode aok --stats", err),
            0)
      << err;
  const auto at = err.find("mjpeg: NVDEC: ");
  ASSERT_NE(at, std::string::npos) << err;
  const std::string line = err.substr(at, err.find('\n', at) - at);
  std::smatch m;
  const std::regex counts(R"(NVDEC: (\d+) decoders? of (\d+) made, (\d+) parts?, (\d+) frames?;)");
  ASSERT_TRUE(std::regex_search(line, m, counts)) << line;
  const long made = std::stol(m[1]), most = std::stol(m[2]), parts = std::stol(m[3]),
             frames = std::stol(m[4]);
  EXPECT_EQ(most, 7) << line;
  EXPECT_GE(made, 1) << line;
  EXPECT_LE(made, std::min<long>(parts, 7)) << line;
  EXPECT_EQ(frames, env.counts[clip]) << line;
  EXPECT_EQ(line.find("made again"), std::string::npos) << line;
  // The busy share is taken against each decoder's own lifetime: made one at a time after the
  // source started, together they existed for less than `made` times the run.
  const std::regex busy(
      R"(decoders busy (\d+)% of the ([0-9.]+) s they existed \(summed\) in ([0-9.]+) s)");
  ASSERT_TRUE(std::regex_search(line, m, busy)) << line;
  const double share = std::stod(m[1]), alive = std::stod(m[2]), elapsed = std::stod(m[3]);
  EXPECT_LE(share, 100) << line;
  EXPECT_GT(alive, 0) << line;
  EXPECT_LT(alive, static_cast<double>(made) * elapsed) << line;
  // Planes stay in device memory: nothing is uploaded. (An odd height's frames go to the host
  // to be made RGB by libswscale, as the CPU reader makes them, and are uploaded.)
  const bool planes = err.find("into device memory, planes to the encoder") != std::string::npos;
  EXPECT_EQ(err.find("bytes uploaded per frame") == std::string::npos, planes) << err;
}

INSTANTIATE_TEST_SUITE_P(Clips, GpuNvdec,
                         ::testing::Values("h264_bframes.mp4", "h264_opengop.mkv",
                                           "h264_raw.h264", "hevc_8bit.mp4", "hevc_10bit.mkv",
                                           "vp9_odd.webm"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '.') c = '_';
                           return n;
                         });

TEST(GpuNvdecRange, StartAndFramesPickTheSameFrames) {
  NEED_CLIPS(env);
  EXPECT_EQ(same_as_cpu(env, "hevc_8bit.mp4", "--start 37 --frames 50 --mode aok"), 50);
  EXPECT_EQ(same_as_cpu(env, "h264_opengop.mkv", "--start 31 --mode aok"),
            env.counts["h264_opengop.mkv"] - 31);
}

// MPEG-2 decoders may round their IDCT differently (the standard allows it; NVDEC's frames
// were measured up to 5 levels off libavcodec's): the CPU decodes it, with one notice, and
// --decoder gpu refuses it with one line.
TEST(GpuNvdecChoice, Mpeg2IsDecodedOnTheCpu) {
  NEED_CLIPS(env);
  std::string err;
  ASSERT_EQ(encode(env, "mpeg2.ts", env.work + "/m.avi", "--mode aok", err), 0) << err;
  EXPECT_NE(err.find("is decoded on the CPU: MPEG-2"), std::string::npos) << err;
  EXPECT_NE(err.find("decoded by FFmpeg's libraries"), std::string::npos) << err;
  EXPECT_EQ(encode(env, "mpeg2.ts", env.work + "/m.avi", "--mode aok --decoder gpu", err), 1);
  EXPECT_NE(err.find("mjpeg: error: --decoder gpu: "), std::string::npos) << err;
}

TEST(GpuNvdecChoice, AutoDecodesOnTheGpuInAokAndOnTheCpuInCpuMode) {
  NEED_CLIPS(env);
  std::string err;
  ASSERT_EQ(encode(env, "h264_bframes.mp4", env.work + "/auto.avi", "--mode aok", err), 0) << err;
  EXPECT_NE(err.find("decoded by NVDEC"), std::string::npos) << err;
  ASSERT_EQ(encode(env, "h264_bframes.mp4", env.work + "/cpu.avi", "--mode cpu", err), 0) << err;
  EXPECT_EQ(err.find("NVDEC"), std::string::npos) << err;
}

}  // namespace
