// GitHub Actions workflow commands: "::error file=F,line=L,title=T::MESSAGE" per finding, so each one
// becomes an annotation on the run (and on the pull request's diff where the file is in the repository).
// Escaping follows the runner's rules: in data % \r \n; in property values also : and ,.
#include <fmt/format.h>

#include "report/ci_findings.h"
#include "report/render.h"

namespace mlc {
namespace {

std::string escape(const std::string& s, bool property) {
  std::string out;
  for (char c : ci::printable_utf8(s)) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      case ':': out += property ? "%3A" : ":"; break;
      case ',': out += property ? "%2C" : ","; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_github(const Report& report, const std::string& source_root, const SourceExists& source_exists) {
  auto file = [&](const std::string& path) { return "file=" + escape(relative_to_root(path, source_root), true); };
  std::string out;
  for (const auto& f : ci::findings(report, source_exists)) {
    std::string message = f.title;
    for (const auto& d : f.details) message += "\n" + d;
    // On the referencing line; without debug information, on the library, with no line.
    std::string props = file(f.file ? *f.file : f.library->path);
    if (f.file && f.line && *f.line > 0) props += fmt::format(",line={}", *f.line);
    props += ",title=" + escape(ci::rule_id(f.rule) + ": " + f.title, true);
    // Baselined findings stay visible without marking the run as failed; a program found in a directory
    // warns unless --fail-on programs.
    out += fmt::format("::{} {}::{}\n",
                       f.baselined ? "notice"
                       : f.warning ? "warning"
                                   : "error",
                       props, escape(message, false));
  }
  // Run-time look-ups: warnings on the library holding the literal (errors with --fail-on runtime).
  for (const auto& f : ci::runtime_findings(report)) {
    std::string message = f.title;
    for (const auto& d : f.details) message += "\n" + d;
    out += fmt::format("::{} {},title={}::{}\n", f.fatal ? "error" : "warning", file(f.lookup->library),
                       escape(ci::rule_id(ci::kRuntimeLookupRule) + ": " + f.title, true), escape(message, false));
  }
  for (const auto& e : report.errors) {
    out += fmt::format("::error {},title=unusable input::{}\n", file(e.path), escape(e.to_line(), false));
  }
  return out;
}

}  // namespace mlc
