// The real loader as the loader tests' oracle, beyond test_support.h's dlopen host (real_load): what
// glibc's ld.so names when it lists every cause (trace mode, as ldd -r runs it), and which files it
// tries for a name (LD_DEBUG=libs). Nothing here is the code under test.
#pragma once

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_support.h"

namespace mlc::test {

inline std::string real_path_of(const std::string& path, const std::string& cwd = "") {
  std::error_code ec;
  std::filesystem::path p = path;
  if (p.is_relative() && !cwd.empty()) p = std::filesystem::path(cwd) / p;
  auto real = std::filesystem::canonical(p, ec);
  return ec ? p.lexically_normal().string() : real.string();
}

// ld.so's trace mode (LD_TRACE_LOADED_OBJECTS with LD_WARN and LD_BIND_NOW: what `ldd -r` asks) on a
// library, in a process that has the host's libc loaded first (LD_PRELOAD, as the dlopen host has it)
// and the global preloads after it. Unlike dlopen, which stops at the first cause, it names every one:
// each library not found, each undefined symbol (with its version and the object that references
// it) and each version node missing (with the object that requires it); and each library it maps.
struct RealTrace {
  std::map<std::string, std::string> mapped;  // DT_NEEDED name -> real path of the file mapped for it
  std::set<std::string> causes;  // "missing NAME", "undefined SYM[@VER] in REAL", "version VER required by REAL"
  std::string raw;
};

inline RealTrace real_trace(const std::string& target, const std::vector<std::string>& library_path = {},
                            const std::vector<std::string>& global_preloads = {}, const std::string& cwd = "") {
  std::string llp, preload = "/lib/x86_64-linux-gnu/libc.so.6";
  for (size_t i = 0; i < library_path.size(); ++i) llp += (i ? ":" : "") + library_path[i];
  for (const auto& p : global_preloads) preload += ":" + p;
  std::string dir = cwd.empty() ? std::filesystem::path(target).parent_path().string() : cwd;
  auto r = run("cd " + quote(dir) + " && env " +
               (library_path.empty() ? "-u LD_LIBRARY_PATH" : "LD_LIBRARY_PATH=" + quote(llp)) +
               " LD_PRELOAD=" + quote(preload) +
               " LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=yes "
               "/lib64/ld-linux-x86-64.so.2 " +
               quote(target));
  RealTrace t;
  t.raw = r.out + r.err;
  std::smatch m;
  static const std::regex found(R"(^\s+(\S+) => (\S+) \(0x[0-9a-f]+\)$)");
  static const std::regex missing(R"(^\s+(\S+) => not found$)");
  static const std::regex undefined(R"(^undefined symbol: ([^,\s]+)(?:, version (\S+))?\s+\((.*)\)$)");
  static const std::regex version(R"(^(?:\S+: )?\S+: version `([^']+)' not found \(required by (.*)\)$)");
  std::istringstream lines(t.raw);
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, m, missing)) {
      t.causes.insert("missing " + m[1].str());
    } else if (std::regex_match(line, m, found)) {
      t.mapped[m[1]] = real_path_of(m[2], dir);
    } else if (std::regex_match(line, m, undefined)) {
      t.causes.insert("undefined " + m[1].str() + (m[2].matched ? "@" + m[2].str() : "") + " in " +
                      real_path_of(m[3], dir));
    } else if (std::regex_match(line, m, version)) {
      t.causes.insert("version " + m[1].str() + " required by " + real_path_of(m[2], dir));
    }
  }
  return t;
}

// The dlopen host of test_support.h run with LD_DEBUG=libs: for the first search of `name`, every
// file the loader tries, in order, and the directories of each search path list it announces
// ("search path=" lines: the RPATH, LD_LIBRARY_PATH, RUNPATH directories after dynamic string
// token expansion, each with its hwcaps subdirectories).
struct RealSearch {
  std::vector<std::string> tried;
  std::vector<std::string> tried_from;  // for each tried file, the list it came from: "RPATH", "RUNPATH",
                                        // "LD_LIBRARY_PATH", "system search path"
  std::vector<std::vector<std::string>> lists;
};

inline RealSearch real_search(const std::string& target, const std::string& name,
                              const std::vector<std::string>& library_path = {}, const std::string& cwd = "") {
  RealSearch out;
  if (real_loader_host().empty()) return out;
  std::string llp;
  for (size_t i = 0; i < library_path.size(); ++i) llp += (i ? ":" : "") + library_path[i];
  auto r = run((cwd.empty() ? std::string() : "cd " + quote(cwd) + " && ") +
               (library_path.empty() ? "env -u LD_LIBRARY_PATH " : "env LD_LIBRARY_PATH=" + quote(llp) + " ") +
               "LD_DEBUG=libs " + quote(real_loader_host()) + " " + quote(target));
  std::istringstream lines(r.err);
  bool in = false;
  static const std::regex find(R"(^\s*\d+:\s+find library=(\S+) \[\d+\]; searching$)");
  static const std::regex trying(R"(^\s*\d+:\s+trying file=(.*)$)");
  static const std::regex path(
      R"(^\s*\d+:\s+search path=(\S*)\s+\((RPATH|RUNPATH|LD_LIBRARY_PATH|system search path).*\)$)");
  std::smatch m;
  std::string from;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, m, find)) {
      if (in) break;
      in = m[1] == name;
    } else if (in && std::regex_match(line, m, trying)) {
      out.tried.push_back(m[1]);
      out.tried_from.push_back(from);
    } else if (in && std::regex_match(line, m, path)) {
      from = m[2];
      std::vector<std::string> dirs;
      std::string list = m[1];
      for (size_t start = 0; start <= list.size();) {
        size_t colon = list.find(':', start);
        if (colon == std::string::npos) colon = list.size();
        if (colon > start) dirs.push_back(list.substr(start, colon - start));
        start = colon + 1;
      }
      out.lists.push_back(dirs);
    }
  }
  return out;
}

// The CPU levels this machine's ld.so searches glibc-hwcaps subdirectories for, best first (what
// `ld.so --help` lists as "supported, searched"), under the given GLIBC_TUNABLES.
inline std::vector<std::string> real_hwcaps_levels(const std::string& tunables = "") {
  auto r =
      run((tunables.empty() ? std::string("env -u GLIBC_TUNABLES ") : "env GLIBC_TUNABLES=" + quote(tunables) + " ") +
          "/lib64/ld-linux-x86-64.so.2 --help");
  std::vector<std::string> levels;
  bool in = false, listed = false;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Subdirectories of glibc-hwcaps", 0) == 0) {
      in = listed = true;
    } else if (in && line.rfind("  ", 0) != 0) {
      break;
    } else if (in && line.find("supported, searched") != std::string::npos) {
      levels.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  // No section at all is no answer (an ld.so that failed, or one older than glibc 2.33): the tests
  // that ask would otherwise take "no level" for this machine's.
  if (r.status != 0 || !listed)
    ADD_FAILURE() << "ld.so --help (exit " << r.status << ") lists no \"Subdirectories of glibc-hwcaps\" section";
  return levels;
}

// One line of `ldconfig -p`: "\tSONAME (FLAGS[, hwcap: "NAME"|0xHEX]) => PATH".
struct LdconfigEntry {
  std::string soname, flags, hwcap, path;
};

inline std::vector<LdconfigEntry> ldconfig_entries() {
  std::vector<LdconfigEntry> out;
  auto p = run("ldconfig -p");
  static const std::regex line_re(
      R"re(^\t(\S+) \(([^,)]+(?:,[^,)]+)?)(?:, hwcap: (?:"([^"]+)"|(0x[0-9a-f]+)))?\) => (.*)$)re");
  std::istringstream in(p.out);
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, m, line_re)) out.push_back({m[1], m[2], m[3].matched ? m[3].str() : m[4].str(), m[5]});
  return out;
}

// The copy of a soname the loader takes from ld.so.cache, by `ldconfig -p` (the oracle for what the
// cache says, independent of the tool's reader): of the 64-bit entries of that name, a glibc-hwcaps
// one for the best level this CPU supports (ld.so --help's order), else the first without hwcap
// (dl-cache.c search_cache); "" when there is none.
inline std::string system_copy(const std::string& soname) {
  const auto entries = ldconfig_entries();
  for (const auto& level : real_hwcaps_levels())
    for (const auto& e : entries)
      if (e.soname == soname && e.flags == "libc6,x86-64" && e.hwcap == level) return e.path;
  for (const auto& e : entries)
    if (e.soname == soname && e.flags == "libc6,x86-64" && e.hwcap.empty()) return e.path;
  return "";
}

// The platform name the loader searches a legacy subdirectory for and expands $PLATFORM to (its
// dl_platform: "x86_64", or on some Intel CPUs "haswell"), as `ld.so --help` names it.
// glibc 2.37 dropped that section; `ld.so --list-diagnostics` (2.33 on) gives dl_platform in every
// version. Neither answering is a failure, not "x86_64".
inline std::string real_platform() {
  auto r = run("env -u GLIBC_TUNABLES /lib64/ld-linux-x86-64.so.2 --help");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find("(AT_PLATFORM;") != std::string::npos) return line.substr(2, line.find(' ', 2) - 2);
  auto d = run("env -u GLIBC_TUNABLES /lib64/ld-linux-x86-64.so.2 --list-diagnostics");
  static const std::regex platform_re(R"re(^dl_platform="([^"]+)"$)re");
  std::istringstream diag(d.out);
  std::smatch m;
  for (std::string line; std::getline(diag, line);)
    if (std::regex_match(line, m, platform_re)) return m[1];
  ADD_FAILURE() << "neither ld.so --help nor ld.so --list-diagnostics names the platform (AT_PLATFORM, dl_platform)";
  return "";
}

// Whether this machine's loader searches the legacy avx512_1 subdirectory (HWCAP_X86_AVX512_1: an Intel
// CPU with AVX512F/CD/BW/DQ/VL), as `ld.so --help` lists its legacy hwcaps (glibc 2.36; 2.37 searches none).
inline bool real_hwcap_avx512_1() {
  auto r = run("env -u GLIBC_TUNABLES /lib64/ld-linux-x86-64.so.2 --help");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("  avx512_1 (supported, searched)", 0) == 0) return true;
  return false;
}

}  // namespace mlc::test
