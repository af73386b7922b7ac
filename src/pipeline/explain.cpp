// explain: one symbol (or several) traced without a library, or a library's report narrowed to it.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "demangle/demangle.h"
#include "pipeline/linkcheck.h"
#include "report/said.h"
#include "trace/trace.h"
#include "verdict/verdict.h"

namespace mlc {

Report explain_symbol(const std::string& symbol, const std::vector<std::string>& inputs,
                      const LinkcheckOptions& options) {
  // With libraries: their report, narrowed to that symbol (mangled or demangled spelling).
  if (!inputs.empty()) {
    Report full = run_linkcheck(inputs, options);
    full.runtime_lookups.clear();  // names looked up at run time answer no question about this symbol
    for (auto& lib : full.libraries) {
      std::vector<UnresolvedSymbol> keep;
      for (auto& u : lib.unresolved)
        if (u.symbol == symbol || u.demangled == symbol) keep.push_back(std::move(u));
      lib.unresolved = std::move(keep);
      lib.needed.erase(
          std::remove_if(lib.needed.begin(), lib.needed.end(), [](const auto& n) { return n.path.has_value(); }),
          lib.needed.end());
    }
    full.libraries.erase(std::remove_if(full.libraries.begin(), full.libraries.end(),
                                        [](const auto& l) { return l.unresolved.empty() && l.needed.empty(); }),
                         full.libraries.end());
    // Only the causes of what is left (their headlines still count every symbol they explain).
    std::set<std::string> used;
    for (const auto& lib : full.libraries)
      for (const auto& u : lib.unresolved)
        if (u.cause) used.insert(*u.cause);
    full.causes.erase_if([&](const Cause& c) { return !used.count(c.id); });
    return full;
  }
  // Without: the symbol alone, traced from scratch.
  return explain_symbols({symbol}, options);
}

Report explain_symbols(const std::vector<std::string>& symbols, const LinkcheckOptions& options) {
  Report report;
  TraceResources resources(options.trace, report);
  LibraryReport lib;
  lib.path = "(explain)";
  for (const auto& symbol : symbols) {
    UnresolvedSymbol u;
    u.symbol = symbol;
    u.demangled = demangle::is_mangled(symbol) ? demangle::demangle(symbol) : symbol;
    u.type = SymbolType::NoType;
    u.binding = ReferenceBinding::Global;
    say(u, said::NotInSourcesSdkOrCuda{});
    trace::trace_symbol(nullptr, -1, resources.context(nullptr), u);
    verdict::resolve(u);
    lib.unresolved.push_back(std::move(u));
  }
  report.libraries.push_back(std::move(lib));
  report::write_sentences(report);
  return report;
}

}  // namespace mlc
