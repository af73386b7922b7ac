// Renderers turn a Report into text (lld-style diagnostics) or the JSON of docs/contract.md.
// They return strings; printing is the tools' business.
#pragma once

#include <string>

#include "report/report.h"

namespace mlc {

struct TextStyle {
  bool color = false;
  bool quiet = false;  // only the error lines, no ">>>" details and no summary
};

std::string render_text(const Report& report, const TextStyle& style);
std::string render_json(const Report& report, const std::string& tool_version);

}  // namespace mlc
