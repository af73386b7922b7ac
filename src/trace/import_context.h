// The import context as evidence: what a Python extension's import has at hand
// beyond its own load - torch's own libraries (torch/lib of the torch that --python found, or of a
// torch installed beside the target) and the other shared objects of the target's package. A symbol
// the load leaves undefined that one of them defines is a library the module does not link (however
// --as-needed dropped it); one they define under another ABI is an ABI mismatch naming it.
#pragma once

#include <string>
#include <vector>

#include "loader/loader.h"
#include "report/report.h"

namespace mlc::trace {

struct ImportContext {
  // Each library read (never loaded: no scope, no dependencies), in a Process so that the near-miss
  // pass (suggest.h) walks it as it walks a load. Objects the load already holds are left out.
  loader::Process libraries;
  // Per object, how a sentence names it: "torch/lib/libc10.so (torch 1.13.0a0)",
  // "pkg/_ops.so (in this module's package)".
  std::vector<std::string> labels;
};

struct ImportContextSources {
  std::string target;         // the file checked
  std::string torch_dir;      // .../site-packages/torch, "" when no torch is known
  std::string torch_version;  // "" when unknown
};

// The libraries of torch_dir/lib (*.so*) and of the target's package (the topmost directory above it
// holding __init__.py, below it), other than those `loaded` holds (by device and inode).
ImportContext read_import_context(const ImportContextSources& sources, const loader::Process& loaded);

// The index of the import-context object that exports `name` (default or protected visibility), or -1.
int import_definition(const ImportContext& context, const std::string& name);

// Near misses in the import context for the symbols still unknown (the ABI's std::__cxx11 against
// the old string, by-value against const&...): abi-mismatch naming the library, whose reason says
// the module does not link it.
void suggest_in_import_context(const ImportContext& context, const std::vector<UnresolvedSymbol*>& symbols);

}  // namespace mlc::trace
