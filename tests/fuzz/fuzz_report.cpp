// The report writers on arbitrary bytes in every name and path: whatever the input, the text,
// JUnit and GitHub writers must not throw, and the JSON and SARIF writers must produce documents that
// parse.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "report/render.h"
#include "report/said.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlc;
  auto f = fuzz::split_parts({reinterpret_cast<const char*>(data), size}, {"\0", 1}, 8);
  f.resize(8);
  auto s = [&](size_t i) { return std::string(f[i]); };
  Report report;
  LibraryReport lib;
  lib.path = s(0);
  lib.soname = s(1);
  lib.needed.push_back(NeededLibrary{.name = s(2),
                                     .path = std::nullopt,
                                     .searched = {s(3)},
                                     .search = {{s(3), loader::FoundHow::Default, loader::skipped(s(4))}}});
  UnresolvedSymbol u;
  u.symbol = s(5);
  u.demangled = s(6);
  u.version = s(7);
  u.type = SymbolType::Func;
  u.binding = ReferenceBinding::Global;
  say(u, said::DeclaredNotDefined{.file = s(4), .line = 1});  // the reason quotes the bytes
  u.referenced_by.push_back({s(0), s(6), s(3), 7});
  u.origin = Origin{s(3), 1, OriginKind::Definition, std::nullopt, s(2)};
  u.suggestions.push_back({s(5), s(6), s(0), SuggestionReason::Signature});
  u.fix = Fix{.kind = FixKind::AddSource,
              .cmake_file = s(3),
              .list = s(7),
              .entry = s(2),
              .library = {},
              .why = saying(said::InstantiateOrInclude{.file = s(4)})};
  lib.unresolved.push_back(u);
  lib.missing_versions.push_back({s(7), s(1), s(0)});
  report.libraries.push_back(lib);
  report.errors.push_back({s(0), s(4)});
  report.warnings.push_back({WarningKind::ListedTwice, s(5), s(6)});
  report::write_sentences(report);
  (void)render_text(report, TextStyle{});
  (void)render_text(report, TextStyle{true, false});
  std::string json = render_json(report, "fuzz");
  if (!nlohmann::json::accept(json)) __builtin_trap();  // the writer produced invalid JSON
  if (!nlohmann::json::accept(render_sarif(report, SarifOptions{.tool_version = s(1), .help_uri = s(2), .fixes = {}})))
    __builtin_trap();
  (void)render_junit(report);
  (void)render_github(report);
  return 0;
}
