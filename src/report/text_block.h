// The text report's block for one finding - its error line and its ">>>" evidence - as data, built
// from the finding model once: the text renderer prints it, and the CI formats (ci_findings.cpp)
// carry the same words, so SARIF, JUnit and GitHub say what the build log says. Internal to src/report/.
#pragma once

#include <string>
#include <vector>

#include "report/report.h"

namespace mlc::text {

// One ">>>" line. `under` is a second line the text report aligns beneath it (a reference's library
// under its file:line, as lld does); the CI formats join it to the first with " in ".
struct Detail {
  std::string line;
  std::string under = "";
};

// The error line without its "error: " / "baselined: " prefix, then its evidence.
struct Block {
  std::string title;
  std::vector<Detail> details;
};

Block missing_library_block(const LibraryReport& lib, const NeededLibrary& need);
Block missing_version_block(const LibraryReport& lib, const MissingVersionFinding& mv);
Block load_failure_block(const LibraryReport& lib, const LoadFailureFinding& f);
Block undefined_symbol_block(const LibraryReport& lib, const UnresolvedSymbol& u);
// Without "warning: " / "error: " and without "runtime-lookup: ".
Block runtime_lookup_block(const RuntimeLookup& r);

// Where a finding's holder sits in the load: "" for a named file, else which load brought it in.
std::string holder_note(const LibraryReport& lib);
// Who installed a file, as the text report says it ("Debian's libc10 1.13").
std::string owner_text(const PackageOwner& o);

}  // namespace mlc::text
