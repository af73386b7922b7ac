// Helpers shared by the test suites: running a command and capturing its output, scratch dirs.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tree_paths.h"

namespace mlc::test {

struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// This process's scratch area, under the suite's one scratch root (never /tmp):
// <build>/test-tmp/mlc-test-<pid>. It is removed when the test process exits, so a run of the suite
// leaves nothing behind; CTest also points TMPDIR at <build>/test-tmp/tmp, and the
// `test_scratch_is_clean` check, run last, fails when anything is left in either.
inline const std::filesystem::path& scratch_root() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::path(MLC_BINARY_DIR) / "test-tmp" / ("mlc-test-" + std::to_string(getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Root root;
  return root.path;
}

// HOME and XDG_CACHE_HOME of the test process and of everything it runs: <scratch>/home and
// <scratch>/cache of this process, set before main (an inline variable is initialised once per
// program) and removed with the scratch area. So a tool run without --cache-dir caches there, never in
// the person's ~/.cache/musa-linkcheck, and one test's index is never another's (or the next run's)
// input; whatever survives a crashed process is what the scratch check reports.
inline const bool scratch_home_set = [] {
  for (const char* var : {"HOME", "XDG_CACHE_HOME"}) {
    auto dir = scratch_root() / (std::string(var) == "HOME" ? "home" : "cache");
    std::filesystem::create_directories(dir);
    setenv(var, dir.c_str(), 1);
  }
  return true;
}();

// A fresh directory in this process's scratch area, removed and recreated.
inline std::string scratch_dir(const std::string& name) {
  auto dir = scratch_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Runs `command` through /bin/sh; stdout and stderr captured separately.
inline CommandResult run(const std::string& command) {
  std::string err_file = scratch_dir("stderr-capture") + "/err";
  CommandResult r;
  FILE* pipe = popen((command + " 2>" + err_file).c_str(), "r");
  if (!pipe) return r;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_file(err_file);
  return r;
}

// CI runs the README's test command, which installs every prerequisite: there a test that would skip
// has lost a capability without anyone noticing, so under CI (CI set, and not "false" or "0") a skip
// is a failure that names the test (gtest does) and the reason.
inline bool skips_fail() {
  const char* ci = std::getenv("CI");
  return ci && *ci && std::string(ci) != "false" && std::string(ci) != "0";
}

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The real loader as an oracle: a C host linked with libc alone dlopens each preload (RTLD_NOW, with
// RTLD_GLOBAL or RTLD_LOCAL as asked), then `target` with RTLD_NOW, in a fresh process with the given
// LD_LIBRARY_PATH and working directory. `ok` is whether every load worked, `error` dlerror()'s line
// when one did not, and `mapped` the real paths of the shared objects in its /proc/self/maps (the host's
// own libc and ld.so included).
struct RealLoad {
  bool ok = false;
  std::string error;
  std::vector<std::string> mapped;
  bool maps(const std::string& path) const {
    std::error_code ec;
    auto real = std::filesystem::canonical(path, ec);
    for (const auto& m : mapped)
      if (!ec && m == real.string()) return true;
    return false;
  }
};

inline const std::string& real_loader_host() {
  static const std::string host = [] {
    auto dir = scratch_root() / "real-loader-host";
    std::filesystem::create_directories(dir);
    write_file((dir / "host.c").string(), R"(#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
/* argv: [g:|l:]preload... target. Prints "ok" and /proc/self/maps, or "error: " and dlerror(). */
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* path = argv[i];
    int mode = RTLD_NOW;
    if (i + 1 < argc) {
      mode |= strncmp(path, "l:", 2) == 0 ? RTLD_LOCAL : RTLD_GLOBAL;
      path += 2;
    }
    if (!dlopen(path, mode)) { printf("error: %s\n", dlerror()); return 1; }
  }
  printf("ok\n");
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[8192];
  while (maps && fgets(line, sizeof line, maps)) fputs(line, stdout);
  return 0;
}
)");
    auto r = run("gcc -O1 -o " + quote((dir / "host").string()) + " " + quote((dir / "host.c").string()));
    return r.status == 0 ? (dir / "host").string() : std::string();
  }();
  return host;
}

inline RealLoad real_load(const std::string& target, const std::vector<std::string>& library_path = {},
                          const std::vector<std::pair<std::string, bool>>& preloads = {}, const std::string& cwd = "") {
  RealLoad out;
  if (real_loader_host().empty()) {
    out.error = "the real-loader host could not be compiled with gcc";
    return out;
  }
  std::string llp;
  for (size_t i = 0; i < library_path.size(); ++i) llp += (i ? ":" : "") + library_path[i];
  std::string cmd = (cwd.empty() ? std::string() : "cd " + quote(cwd) + " && ") +
                    (library_path.empty() ? "env -u LD_LIBRARY_PATH " : "env LD_LIBRARY_PATH=" + quote(llp) + " ") +
                    quote(real_loader_host());
  for (const auto& [p, global] : preloads) cmd += " " + quote((global ? "g:" : "l:") + p);
  cmd += " " + quote(target);
  auto r = run(cmd);
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  out.ok = r.status == 0 && line == "ok";
  if (!out.ok) out.error = line.rfind("error: ", 0) == 0 ? line.substr(7) : line + r.err;
  while (std::getline(lines, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    auto file = line.substr(slash);
    if (file.find(".so") == std::string::npos) continue;
    std::error_code ec;
    auto real = std::filesystem::canonical(file, ec);
    auto name = ec ? file : real.string();
    if (std::find(out.mapped.begin(), out.mapped.end(), name) == out.mapped.end()) out.mapped.push_back(name);
  }
  return out;
}
}  // namespace mlc::test

// GTEST_SKIP() outside CI; under CI a fatal failure with the same message. Used as GTEST_SKIP is:
// `MLC_SKIP() << "why";`.
#define MLC_SKIP()                                                                                                    \
  return ::testing::internal::AssertHelper(                                                                           \
             ::mlc::test::skips_fail() ? ::testing::TestPartResult::kFatalFailure : ::testing::TestPartResult::kSkip, \
             __FILE__, __LINE__,                                                                                      \
             ::mlc::test::skips_fail()                                                                                \
                 ? "a skip fails under CI, where the test command installs every prerequisite; the skip reason:"      \
                 : "") = ::testing::Message()
