// Renderers turn a Report into text (lld-style diagnostics) or the JSON of docs/contract.md (which
// read_json_report reads back). They return strings; printing is the tools' business.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "report/report.h"

namespace mlc {

struct TextStyle {
  bool color = false;
  bool quiet = false;          // only the error lines, no ">>>" details and no summary
  bool load_headlines = true;  // "loading X would fail: N causes" before the findings of each input
  bool summary = true;         // the closing count line (explain has no library count to give)
  // Every run-time look-up on its own lines (--runtime); by default one warning per missing GPU
  // driver and one note line counting the optional rest.
  bool runtime = false;
  // A directory was named (an environment): with several named files, each shared cause once with the
  // files it breaks by package, then per package the files failing on their own, one line each.
  bool environment = false;
  // The directories named (absolute): a file found below one is named by its path there
  // ("test/test_jit", not "test_jit"); any other file by its base name.
  std::vector<std::string> named_directories = {};
};

std::string render_text(const Report& report, const TextStyle& style);
std::string render_json(const Report& report, const std::string& tool_version);
// A JSON report read back (musa-stubgen --report): the target libraries and their unresolved symbols;
// a kind the contract does not name makes it malformed.
Result<Report> read_json_report(const std::string& path);
// The same, of a report's text; `path` names it in errors.
Result<Report> parse_json_report(std::string_view text, const std::string& path);

// The CI formats (docs/user-guide.md, "Reports in CI"). Every name passes through as valid UTF-8 (stray
// bytes written as "\xNN"), so a report never breaks its consumer.

// A text edit that fixes one finding: replace lines [start_line, end_line) of `file` (1-based; equal
// for a pure insertion before start_line) with `inserted`. The region ends at column end_column of
// end_line: 1 but where a deletion runs to the end of a last line without a newline (columns count
// Unicode code points). Lines are those of the original file; the edits of one file are in file
// order and do not overlap. The tool computes them (musa-stubgen's plan, stubgen::sarif_fixes); the
// SARIF renderer turns them into `fixes`.
struct TextEdit {
  std::string file;
  int start_line = 1;
  int end_line = 1;
  int end_column = 1;
  std::string inserted;
};
struct SymbolFix {
  std::string library;  // LibraryReport::path
  std::string symbol;   // mangled
  std::string description;
  std::vector<TextEdit> edits;
};

// Whether a reference's source file (a DWARF path) is on this machine. A CI format places a finding at
// its reference's file:line only when it is: a path from the build's container (/project/...,
// /opt/_internal/...) would name a file nobody can open, so the finding goes on the library instead.
// Null: every path is taken as it is. The tool stats; the core only asks.
using SourceExists = std::function<bool(const std::string& path)>;

struct SarifOptions {
  std::string tool_version;
  std::string help_uri;  // the classifications page; each rule's helpUri is help_uri + "#" + classification
  std::vector<SymbolFix> fixes;
  // The checkout the findings are reported against (absolute; "" for none): a file below it is named
  // by a URI relative to %SRCROOT%, which the run's originalUriBaseIds maps to it, so code scanning
  // maps it to the repository; a file elsewhere keeps its absolute file URI.
  std::string source_root = "";
  SourceExists source_exists = nullptr;
};
// SARIF 2.1.0: one rule per classification, one result per finding, located at the reference.
std::string render_sarif(const Report& report, const SarifOptions& options);
// JUnit XML as Jenkins and GitLab read it: a testsuite per library, a testcase per finding.
std::string render_junit(const Report& report, const SourceExists& source_exists = nullptr);
// GitHub Actions workflow commands: one ::error (::notice when baselined) per finding, on the
// referencing source line, else on the library (no line: without debug information there is none).
// Paths below `source_root` (the checkout, where the runner resolves them) are given relative to it.
std::string render_github(const Report& report, const std::string& source_root = "",
                          const SourceExists& source_exists = nullptr);

// `path` relative to `root` when it lies below it ("" root, or a path elsewhere: the path itself).
std::string relative_to_root(const std::string& path, const std::string& root);

}  // namespace mlc
