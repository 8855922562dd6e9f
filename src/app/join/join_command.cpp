#include "join_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/common/part_record.hpp"
#include "app/common/paths.hpp"
#include "app/common/wording.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/stored_frames.hpp"
#include "mjpeg/video.hpp"
#if MJPEG_HAVE_LIBAV
#include "app/input/libav_extras.hpp"
#endif

namespace mjpeg::app {
namespace {

struct Part {
  std::string path;
  std::unique_ptr<StoredFrames> frames;
  PartRecord record;
};

/// The parts' value of `key` held by most of them (on a tie, the first part's): the one a
/// part that differs is measured against.
std::string usual_value(const std::vector<Part>& parts, const std::string& key) {
  std::map<std::string, int> votes;
  for (const Part& p : parts) ++votes[p.record.get(key)];
  std::string best = parts.front().record.get(key);
  for (const Part& p : parts)
    if (votes[p.record.get(key)] > votes[best]) best = p.record.get(key);
  return best;
}

/// What differs between two values of a record line: for lists ("a, b, c"), the first item
/// that differs; otherwise the whole value.
std::pair<std::string, std::string> first_difference(const std::string& a, const std::string& b) {
  const auto items = [](const std::string& s) {
    std::vector<std::string> out;
    std::size_t at = 0;
    for (;;) {
      const std::size_t comma = s.find(", ", at);
      out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) return out;
      at = comma + 2;
    }
  };
  const std::vector<std::string> x = items(a), y = items(b);
  if (x.size() == y.size())
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i] != y[i]) return {x[i], y[i]};
  return {a, b};
}

const char* key_words(const std::string& key) {
  if (key == "source id") return "another source";
  if (key == "of") return "a split of other frames";
  if (key == "size") return "another frame size";
  if (key == "rate") return "another frame rate";
  if (key == "jpeg") return "other JPEG settings";
  if (key == "aspect") return "another pixel aspect ratio";
  if (key == "tags") return "other tags";
  if (key == "audio" || key == "audio timing") return "other audio";
  return "input read otherwise";
}

Part open_part(const std::string& path) {
  Part p;
  p.path = path;
  p.frames = std::make_unique<StoredFrames>(path);  // Error names the file
  if (p.frames->note().empty())
    throw Error(fmt::format("{}: holds no part record: it was not written by `mjpeg encode "
                            "--part I/K` (or was rewritten since)",
                            path));
  try {
    p.record = PartRecord::parse(p.frames->note());
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
  const PartRecord& r = p.record;
  if (p.frames->frame_count() != r.range.count)
    throw Error(fmt::format("{}: cut short: it holds {} of the {} frames of its part {}/{} "
                            "(frames {}); was its encode interrupted?",
                            path, p.frames->frame_count(), r.range.count, r.part.index,
                            r.part.count, range_text(r.range)));
  if (p.frames->container() == StoredFrames::Container::avi) {
    const std::string size = fmt::format("{}x{}", p.frames->width(), p.frames->height());
    const std::string rate = fmt::format("{}/{}", p.frames->fps_num(), p.frames->fps_den());
    if (size != r.get("size") || rate != r.get("rate"))
      throw Error(fmt::format("{}: its AVI header ({}, {} fps) disagrees with its part record "
                              "({}, {} fps)",
                              path, size, rate, r.get("size"), r.get("rate")));
  }
  return p;
}

/// Throws Error naming the first part that cannot be joined with the others, and why.
void check_parts(std::vector<Part>& parts) {
  for (const std::string& key : shared_part_keys()) {
    const std::string usual = usual_value(parts, key);
    for (const Part& p : parts) {
      const std::string& value = p.record.get(key);
      if (value == usual) continue;
      const auto [mine, theirs] = first_difference(value, usual);
      throw Error(fmt::format("{}: {} ({}; {} {})", p.path, key_words(key), mine,
                              parts.size() == 2 ? "the other part:" : "the other parts:",
                              theirs));
    }
  }
  // In frame order, the ranges must follow each other from the first frame of the whole to
  // its last.
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return a.record.range.first < b.record.range.first;
  });
  const FrameRange whole = parts.front().record.whole;
  const auto missing = [&](std::int64_t from, std::int64_t to) {
    // Which parts of the split would hold them, when every part given is of one K.
    std::string which;
    const int k = parts.front().record.part.count;
    const bool one_k = std::all_of(parts.begin(), parts.end(),
                                   [&](const Part& p) { return p.record.part.count == k; });
    if (one_k) {
      for (int i = 1; i <= k; ++i) {
        const std::int64_t a = whole.first + (i - 1) * whole.count / k;
        const std::int64_t b = whole.first + i * whole.count / k;
        if (a < to && b > from) which += fmt::format("{}{}/{}", which.empty() ? "" : ", ", i, k);
      }
    }
    return Error(fmt::format("frames {}..{} of the {} are missing{}: no part given holds them; "
                             "nothing written",
                             from, to - 1, range_text(whole),
                             which.empty() ? "" : fmt::format(" (part {})", which)));
  };
  std::int64_t next = whole.first;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const PartRecord& r = parts[i].record;
    if (r.range.first > next) throw missing(next, r.range.first);
    if (r.range.first < next) {
      const Part& before = parts[i - 1];
      if (before.record.range.first == r.range.first && before.record.range.count == r.range.count)
        throw Error(fmt::format("{}: the same part as {} (frames {}): given twice",
                                parts[i].path, before.path, range_text(r.range)));
      throw Error(fmt::format("{}: its frames {} overlap those of {} ({})", parts[i].path,
                              range_text(r.range), before.path, range_text(before.record.range)));
    }
    next = r.range.end();
  }
  if (next < whole.end()) throw missing(next, whole.end());
}

/// "N:D" of a record's aspect line; 1:1 for records without one.
void parse_aspect(const Part& p, int& num, int& den) {
  const std::string& text = p.record.get("aspect");
  num = den = 1;
  if (text.empty()) return;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d:%d%c", &num, &den, &tail) != 2 || num <= 0 || den <= 0)
    throw Error(fmt::format("{}: its part record is damaged (aspect)", p.path));
}

/// What one pass over the whole would carry beside the frames, from the parts' records: the
/// pixel aspect ratio and the tags always; the audio from the source, read as that pass reads
/// it (`audio` receives it; null when the parts carry none, the output holds none or
/// --no-audio). Throws Error when the audio cannot be read as it was.
void carried_options(const JoinArgs& args, const std::vector<Part>& parts, FileSinkOptions& so,
                     std::vector<std::string>& notes, std::unique_ptr<AudioSource>& audio) {
  const Part& first = parts.front();
  parse_aspect(first, so.aspect_num, so.aspect_den);
  try {
    so.metadata = parse_tags(first.record.get("tags"));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", first.path, e.what()));
  }
  const std::string& carried = first.record.get("audio");
  if (carried.empty() || carried == "none" || args.no_audio) return;
  if (carried == kAudioNotHeld) {
    if (!why_no_audio(args.output).empty()) return;  // one pass holds none either
    throw Error(fmt::format("{}: the parts hold no audio (their output has no place for it), but "
                            "their source has audio that one pass into '{}' would carry; "
                            "nothing written (join into .mjpeg, or give --no-audio for the "
                            "frames alone, as one pass with --no-audio)",
                            first.path, args.output));
  }
#if !MJPEG_HAVE_LIBAV
  static_cast<void>(notes);
  static_cast<void>(audio);
  throw Error(fmt::format("{}: the parts carry {} audio, which join takes from their source; "
                          "this build has no FFmpeg libraries to read it (--no-audio joins the "
                          "frames alone)",
                          first.path, carried));
#else
  const std::string& timing = first.record.get("audio timing");
  int stream = -1, read = 0;
  double zero = 0;
  char end[32] = {};
  if (std::sscanf(timing.c_str(), "video stream %d, frame 0 at %lf s, %n", &stream, &zero,
                  &read) != 2 ||
      read == 0)
    throw Error(fmt::format("{}: its part record is damaged (audio timing)", first.path));
  const std::string until = timing.substr(static_cast<std::size_t>(read));
  long long frames = -1;
  if (until != "to its end" &&
      (std::sscanf(until.c_str(), "for %lld frames%1s", &frames, end) != 1 || frames <= 0))
    throw Error(fmt::format("{}: its part record is damaged (audio timing)", first.path));
  // The audio is not in the parts as one pass has it (each part holds its own range's, cut
  // where its frames are): it is read from the source again, as one pass reads it.
  std::string source, why = "no part says where it was read";
  for (const Part& p : parts) {
    const std::string& path = p.record.get("source path");
    if (path.empty()) continue;
    try {
      if (is_source(path, p.record.get("source id"))) {
        source = path;
        break;
      }
      why = fmt::format("'{}' is no longer the file the parts were made from", path);
    } catch (const std::exception&) {
      why = fmt::format("'{}' cannot be read here", path);
    }
  }
  if (source.empty())
    throw Error(fmt::format("{}: the parts carry {} audio, which join takes from their source "
                            "as one pass does, but {}; nothing written (join where the source "
                            "is, or give --no-audio for the frames alone)",
                            first.path, carried, why));
  const double start = zero + static_cast<double>(first.record.whole.first) * so.fps_den / so.fps_num;
  SourceExtras extras = read_source_extras(source, stream, start, true);
  if (!extras.audio || extras.audio->describe() != carried)
    throw Error(fmt::format("{}: the audio of '{}' is not the {} audio the parts carry; nothing "
                            "written (--no-audio joins the frames alone)",
                            first.path, source, carried));
  const std::string problem = FileSink::audio_problem(args.output, extras.audio->format());
  if (!problem.empty()) {
    notes.push_back(fmt::format("the parts' {} audio is not carried: {} (--no-audio drops it "
                                "without this note)",
                                carried, problem));
    return;
  }
  if (frames > 0) extras.audio->end_at(static_cast<double>(frames) * so.fps_den / so.fps_num);
  so.audio = extras.audio.get();
  audio = std::move(extras.audio);
#endif
}

}  // namespace

CLI::App* add_join_command(CLI::App& app, JoinArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "join",
      "Join the parts of a split encode (mjpeg encode --part I/K) into one AVI, .mjpeg stream "
      "or numbered JPEGs, byte-identical to a one-pass encode: the parts are checked (one "
      "source, the same settings, every frame once, each part complete) and their frames "
      "copied without decoding");
  cmd->add_option("parts", args.parts, "The parts (.avi or .mjpeg), in any order")
      ->type_name("PART...")
      ->required();
  cmd->add_option("-o,--output", args.output,
                  "Output: .avi, .mjpeg/.mjpg, - (standard output) or a pattern like "
                  "out/%05d.jpg")
      ->type_name("OUTPUT")
      ->required();
  cmd->add_flag("-y,--overwrite", args.overwrite, "Replace the output if it exists");
  cmd->add_flag("--no-audio", args.no_audio,
                "Leave the audio out (the parts' audio is otherwise read from their source, "
                "as one pass reads it): the output equals a one-pass encode with --no-audio");
  cmd->add_flag("--quiet", args.quiet, "No summary line on stderr");
  return cmd;
}

int run_join(const JoinArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  FileSink::check_name(args.output);  // UsageError for an unknown output
  if (file_extension(args.output) == "jpg" || file_extension(args.output) == "jpeg") {
    if (args.output.find('%') == std::string::npos)
      throw UsageError(fmt::format("'{}' holds one picture: join into .avi, .mjpeg or a "
                                   "pattern such as out/%05d.jpg",
                                   args.output));
  }
  if (args.output == "-" && isatty(STDOUT_FILENO))
    throw UsageError("-o - writes an M-JPEG stream to standard output, which is a terminal: "
                     "redirect it to a file or a pipe");
  for (const std::string& part : args.parts)
    if (args.output != "-" && same_file(part, args.output))
      throw UsageError(fmt::format("output '{}' is one of the parts", args.output));
  FileSink::check_target(args.output, args.overwrite);

  std::vector<Part> parts;
  for (const std::string& path : args.parts) parts.push_back(open_part(path));
  check_parts(parts);

  const PartRecord& first = parts.front().record;
  int width = 0, height = 0, fps_num = 0, fps_den = 0;
  if (std::sscanf(first.get("size").c_str(), "%dx%d", &width, &height) != 2 ||
      std::sscanf(first.get("rate").c_str(), "%d/%d", &fps_num, &fps_den) != 2)
    throw Error(fmt::format("{}: its part record is damaged (size or rate)", parts.front().path));
  FileSinkOptions options;
  options.fps_num = fps_num;
  options.fps_den = fps_den;
  options.overwrite = args.overwrite;
  std::vector<std::string> notes;
  std::unique_ptr<AudioSource> audio;
  carried_options(args, parts, options, notes, audio);
  if (!args.quiet)
    for (const std::string& n : notes) std::fprintf(stderr, "mjpeg: note: %s\n", n.c_str());
  FileSink sink(args.output, width, height, options);
  std::uint64_t jpeg_bytes = 0;
  for (const Part& p : parts) {
    for (std::int64_t i = 0; i < p.frames->frame_count(); ++i) {
      EncodedFrame f = p.frames->frame(i);
      f.index = i + p.record.range.first - first.whole.first;
      sink.write(f);
      jpeg_bytes += f.size;
    }
  }
  sink.close();
  if (!args.quiet) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: joined {} of '{}' (frames {}) into {}: {}, {:.1f} MB, "
                             "{:.2f} s ({:.2f} GB/s)",
                             count_of(static_cast<std::int64_t>(parts.size()), "part", "parts"),
                             first.get("source"), range_text(first.whole), args.output,
                             count_of(first.whole.count, "frame", "frames"),
                             sink.bytes_written() / 1e6, s,
                             s > 0 ? static_cast<double>(jpeg_bytes) / s / 1e9 : 0.0)
                     .c_str());
  }
  return 0;
}

}  // namespace mjpeg::app
