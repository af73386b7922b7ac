// The whole analysis as one list of passes (read ELF -> emulate the loader -> bind -> demangle ->
// classify -> report). Tools build LinkcheckOptions, call run_linkcheck and render the Report.
#pragma once

#include <string>
#include <vector>

#include "loader/loader.h"
#include "report/report.h"

namespace mlc {

struct LinkcheckOptions {
  loader::LoaderEnv env;
  bool closure = false;  // check every loaded object, as `ldd -r` does; default: only the named files
};

// Files and directories as the user named them (directories: every ELF file below them).
// Relative paths are taken as they are; the tool makes them absolute before calling.
Report run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options);

// The ELF files a list of inputs names; errors for missing paths and for directories without any.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::vector<InputError>& errors);

}  // namespace mlc
