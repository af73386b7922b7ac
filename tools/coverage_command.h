// `musa-linkcheck coverage [CONTEXT OPTIONS] SOURCE_DIR...`: the porting-coverage report
// (src/coverage) over a CUDA tree or its ported tree, in text, JSON, markdown or HTML.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "context_options.h"

namespace mlc::tools {

struct CoverageCommand {
  std::vector<std::string> roots;
  std::string format = "text", output;
  CLI::App* app = nullptr;

  // Adds the subcommand to `parent` (context options fall through to the parent's).
  void add_to(CLI::App& parent);
  // Exit status: 0 report written, 2 bad input (each named on stderr; the report keeps the rest).
  int run(const ContextOptions& context) const;
};

}  // namespace mlc::tools
