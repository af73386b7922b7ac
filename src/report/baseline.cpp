// Keys are built the same way for reading and writing, so a baseline written by --update-baseline
// matches the report it came from exactly.
#include "report/baseline.h"

#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/file_io.h"

namespace mlc {
namespace {

std::string library_key(const LibraryReport& lib) {
  return lib.soname.empty() ? lib.path.substr(lib.path.rfind('/') + 1) : lib.soname;
}

std::string key(const LibraryReport& lib, const UnresolvedSymbol& u) {
  return library_key(lib) + " undefined " + u.symbol + (u.version ? "@" + *u.version : "");
}
std::string key(const LibraryReport& lib, const NeededLibrary& n) {
  return library_key(lib) + " missing-library " + n.name;
}
std::string key(const LibraryReport& lib, const MissingVersionFinding& v) {
  return library_key(lib) + " missing-version " + v.file + " " + v.version;
}
std::string key(const LibraryReport& lib, const LoadFailureFinding& f) {
  return library_key(lib) + " load-failure " + loader::to_string(f.kind) + " " + f.file.substr(f.file.rfind('/') + 1);
}

}  // namespace

Result<Baseline> read_baseline(const std::string& path) {
  auto text = read_text(path);
  if (!text) return InputError{path, "cannot open the baseline: " + std::string(std::strerror(errno))};
  Baseline b;
  std::istringstream in(*text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    std::istringstream words(line);
    std::string lib, kind, rest;
    words >> lib >> kind;
    if (kind != "undefined" && kind != "missing-library" && kind != "missing-version" && kind != "load-failure") {
      return InputError{path, "line " + std::to_string(n) +
                                  ": expected '<library> undefined|missing-library|"
                                  "missing-version|load-failure ...', found '" +
                                  line + "'"};
    }
    b.insert(line);
  }
  return b;
}

Baseline baseline_of(const Report& report) {
  Baseline keys;
  for (const auto& lib : report.libraries) {
    for (const auto& u : lib.unresolved) keys.insert(key(lib, u));
    for (const auto& n : lib.needed)
      if (!n.path && !n.refused) keys.insert(key(lib, n));
    for (const auto& v : lib.missing_versions) keys.insert(key(lib, v));
    for (const auto& f : lib.load_failures) keys.insert(key(lib, f));
  }
  return keys;
}

std::string render_baseline(const Report& report) {
  std::string out = "# musa-linkcheck baseline: findings accepted for now (musa-linkcheck --update-baseline).\n";
  for (const auto& k : baseline_of(report)) out += k + "\n";
  return out;
}

size_t apply_baseline(Report& report, const Baseline& baseline) {
  for (auto& lib : report.libraries) {
    for (auto& u : lib.unresolved) u.baselined = baseline.count(key(lib, u)) > 0;
    for (auto& n : lib.needed)
      if (!n.path) n.baselined = baseline.count(key(lib, n)) > 0;
    for (auto& v : lib.missing_versions) v.baselined = baseline.count(key(lib, v)) > 0;
    for (auto& f : lib.load_failures) f.baselined = baseline.count(key(lib, f)) > 0;
  }
  return new_findings(report);
}

namespace {

// The findings of one library not in the baseline.
size_t new_in(const LibraryReport& lib) {
  size_t n = 0;
  for (const auto& u : lib.unresolved) n += !u.baselined;
  for (const auto& need : lib.needed) n += !need.path && !need.refused && !need.baselined;
  for (const auto& v : lib.missing_versions) n += !v.baselined;
  for (const auto& f : lib.load_failures) n += !f.baselined;
  return n;
}

}  // namespace

bool fails_the_run(const Report& report, const LibraryReport& lib) {
  // A library counts unless every named file whose load it is part of is a program told apart: a
  // dependency a library of the directory also loads still fails the run.
  if (report.programs_fatal || lib.role == LibraryRole::Preloaded) return true;
  if (lib.role == LibraryRole::Target) return !program_apart(lib);
  bool any = false;
  for (const auto& target : report.libraries) {
    if (target.role != LibraryRole::Target || !part_of_load(target, lib)) continue;
    if (!program_apart(target)) return true;
    any = true;
  }
  return !any;
}

size_t failing_findings(const Report& report) {
  size_t n = 0;
  for (const auto& lib : report.libraries)
    if (fails_the_run(report, lib)) n += new_in(lib);
  return n;
}

size_t new_findings(const Report& report) {
  size_t n = 0;
  for (const auto& lib : report.libraries) n += new_in(lib);
  return n;
}

}  // namespace mlc
