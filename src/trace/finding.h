// One record per miss, as lld collects an UndefinedDiag per undefined symbol before reporting: the
// loader's reference and what every pass since has learned about it. The pipeline keeps one vector
// of them per input; the passes (trace/, installed/) refine them in place; the report takes them last.
#pragma once

#include "loader/binding.h"
#include "report/report.h"

namespace mlc::trace {

struct SymbolFinding {
  loader::UnresolvedRef ref;  // what ld.so could not bind in which object, and why
  UnresolvedSymbol symbol;    // the finding as it will be reported
};

struct VersionFinding {
  loader::MissingVersion missing;  // the version node a provider lacks
  MissingVersionFinding finding;
};

}  // namespace mlc::trace
