// Helpers of the IO tests: scratch directories, running ffmpeg/ffprobe, files as bytes.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace io_test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/mjpeg_io_test.XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) != nullptr) path_ = buf.data();
  }
  ~ScratchDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  /// Names of the entries in the directory (no "." / ".."), sorted.
  std::vector<std::string> list() const { return lines("ls -A '" + path_ + "'"); }

  static std::vector<std::string> lines(const std::string& cmd) {
    std::vector<std::string> out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return out;
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
      std::string s(line);
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      out.push_back(s);
    }
    ::pclose(p);
    return out;
  }

 private:
  std::string path_;
};

/// Runs a shell command; returns its exit status and its stdout (stderr goes into `out` too
/// when the command redirects it with 2>&1).
inline int run(const std::string& cmd, std::string* out = nullptr) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int status = ::pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline bool have_tool(const std::string& name) {
  return run("command -v " + name + " >/dev/null 2>&1") == 0;
}

inline bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), {});
}

inline void write_bytes(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), std::streamsize(data.size()));
}

/// ffprobe's "key=value" lines of the first video stream.
inline std::map<std::string, std::string> probe_stream(const std::string& path,
                                                       const std::string& extra_args = "") {
  std::string text;
  run("ffprobe -v error " + extra_args + " -count_frames -select_streams v:0 -show_entries "
      "stream=codec_name,width,height,r_frame_rate,nb_frames,nb_read_frames "
      "-of default=noprint_wrappers=1 '" + path + "' 2>&1", &text);
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
    else kv["_error"] += line;
  }
  return kv;
}

}  // namespace io_test
