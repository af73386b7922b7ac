// musa-stubgen's passes, beside run_linkcheck's: the link check (or a saved report, its unknowns
// traced again with this run's context), the sources a patch gives back closed over, the plan of stubs
// and CMake edits, and what the patch would leave. The tool parses options, calls it, writes and prints.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "confirm/confirm.h"
#include "pipeline/linkcheck.h"
#include "report/report.h"
#include "stubgen/stubgen.h"

namespace mlc {

struct StubgenOptions {
  // The context. Only the named files are checked unless `closure` (stubs and CMake patches go into
  // them); trace.confirm asks for the compiler, which runs only when the build has compile commands.
  LinkcheckOptions linkcheck;
  std::string report_file;     // a musa-linkcheck JSON report to reuse instead of checking inputs
  stubgen::StubOptions stubs;  // relative_to: used when the build names no source directory
};

struct StubgenRun {
  Report report;
  stubgen::Plan plan;
  stubgen::StubOptions stubs;                // as planned with (relative_to: the build's source dir when known)
  bool confirmed = false;                    // the compiler ran (the build has compile commands)
  std::optional<confirm::AfterPatch> after;  // when confirmed: what the planned patch would leave unresolved
  std::vector<InputError> errors;            // the report's, then the plan's
  std::vector<FileRead> read;                // what tracing and planning read (TraceResources::files_read)
};

// Fails only when `report_file` cannot be read; every other problem is in the run's errors.
Result<StubgenRun> run_stubgen(const std::vector<std::string>& inputs, const StubgenOptions& options);

}  // namespace mlc
