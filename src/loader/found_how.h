// How a file was found, the loader's vocabulary shared with the report (JSON `how`): a leaf header,
// so the findings model (report/report.h) names it without the loader's other types.
#pragma once

#include <string>
#include <utility>

namespace mlc::loader {

// A step of the loader's search (search_order.h) or what the process already held; and, for another
// copy of a library only (never the one loaded), a place off the search path where such copies are
// looked for: the SDK's library directories (LoaderEnv::candidate_dirs, --sdk-home), a versioned
// install home beside them (/usr/local/musa-3.1, /usr/local/cuda-12.1: shown as the glob it was
// found by, LibraryCopy::home), the active conda or virtual environment, the requesting object's own
// directory or Python package (Beside: where its author put it, yet off its search path), or a file the
// run itself checks, named or found in a directory given (Checked: lib/server/libjvm.so of a JDK's lib/).
enum class FoundHow {
  Direct,
  Rpath,
  LdLibraryPath,
  Runpath,
  LdSoCache,
  LdSoConf,
  Default,
  With,
  AlreadyLoaded,
  Preload,  // LD_PRELOAD or /etc/ld.so.preload (rtld.c): mapped after the main program, before its dependencies
  Sdk,
  Home,
  Conda,
  Venv,
  Beside,
  Checked
};
const char* to_string(FoundHow how);

// What one candidate of a search came to. The report (JSON `outcome`) writes it as to_string gives:
// "found", "not found", "no entry" (the cache has none for the name), "skipped: " and why (another ELF
// class or machine, NODEFLIB, an open error), for a file glibc refuses glibc's own words, and
// "candidate" for another copy the search would take were the loaded one absent (never tried).
struct SearchOutcome {
  enum class Kind { Found, NotFound, NoEntry, Skipped, Refused, Candidate };
  Kind kind = Kind::NotFound;
  std::string detail;  // Skipped: why; Refused: glibc's words (dl-load.c, dl-map-segments.h...)
  bool operator==(const SearchOutcome&) const = default;
};
std::string to_string(const SearchOutcome& outcome);
inline SearchOutcome skipped(std::string why) {
  return {.kind = SearchOutcome::Kind::Skipped, .detail = std::move(why)};
}

}  // namespace mlc::loader
