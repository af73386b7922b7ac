// lld's diagnostic shape: "error: undefined symbol: <demangled>" then ">>>" lines with the
// evidence; locations capped at three, then ">>> referenced N more times".
#include <fmt/format.h>

#include "report/baseline.h"
#include "report/escape.h"
#include "report/render.h"

namespace mlc {
namespace {

constexpr size_t kMaxLocations = 3;

std::string error_prefix(const TextStyle& style, bool baselined) {
  if (baselined) return style.color ? "\x1b[1;36mbaselined:\x1b[0m " : "baselined: ";
  return style.color ? "\x1b[1;31merror:\x1b[0m " : "error: ";
}

constexpr size_t kCauseSymbols = 5;

// One headline per shared cause, then the first few symbols it explains (JSON lists them all).
std::string render_causes(const Report& report, const TextStyle& style) {
  std::string out;
  for (const auto& c : report.causes) {
    std::vector<const UnresolvedSymbol*> symbols;
    bool all_baselined = true;
    for (const auto& lib : report.libraries) {
      for (const auto& u : lib.unresolved) {
        if (u.cause != c.id) continue;
        symbols.push_back(&u);
        all_baselined &= u.baselined;
      }
      for (const auto& mv : lib.missing_versions)
        if (mv.cause == c.id) all_baselined &= mv.baselined;
    }
    out += fmt::format("{}{}\n", error_prefix(style, all_baselined), c.headline);
    if (style.quiet) continue;
    for (size_t i = 0; i < symbols.size() && i < kCauseSymbols; ++i) {
      const auto* u = symbols[i];
      out += fmt::format(">>> {}: {}{}\n", to_string(u->classification), u->demangled, u->version ? "@" + *u->version : "");
    }
    if (symbols.size() > kCauseSymbols)
      out += fmt::format(">>> and {} more (--format json lists them all)\n", symbols.size() - kCauseSymbols);
    if (!c.fix.empty()) out += fmt::format(">>> fix: {}\n", c.fix);
  }
  return out;
}

}  // namespace

std::string render_text(const Report& report, const TextStyle& style) {
  std::string out;
  auto err_for = [&](bool baselined) { return error_prefix(style, baselined); };
  out += render_causes(report, style);
  for (const auto& lib : report.libraries) {
    for (const auto& need : lib.needed) {
      if (need.path) continue;
      out += fmt::format("{}library not found: {}\n", err_for(need.baselined), need.name);
      if (style.quiet) continue;
      out += fmt::format(">>> needed by {}\n", lib.path);
      for (const auto& step : need.search) out += fmt::format(">>> searched {} [{}]: {}\n", step.path, step.how, step.outcome);
    }
    for (const auto& mv : lib.missing_versions) {
      if (mv.cause) continue;  // told once, under its cause's headline
      out += fmt::format("{}version `{}' not found in {} (required by {})\n", err_for(mv.baselined), mv.version, mv.file,
                         lib.path);
      if (!style.quiet && mv.provider) out += fmt::format(">>> {} was loaded from {}\n", mv.file, *mv.provider);
    }
    for (const auto& u : lib.unresolved) {
      if (u.cause) continue;  // told once, under its cause's headline
      std::string name = u.demangled + (u.version ? "@" + *u.version : "");
      out += fmt::format("{}undefined symbol: {}\n", err_for(u.baselined), name);
      if (style.quiet) continue;
      for (size_t i = 0; i < u.referenced_by.size() && i < kMaxLocations; ++i) {
        const auto& r = u.referenced_by[i];
        std::string where = r.file ? fmt::format("{}:{}", *r.file, r.line.value_or(0)) : std::string();
        if (r.function) where = where.empty() ? *r.function : fmt::format("{} ({})", where, *r.function);
        out += where.empty() ? fmt::format(">>> referenced by {}\n", r.library)
                             : fmt::format(">>> referenced by {}\n>>>               {}\n", where, r.library);
      }
      if (u.referenced_by.size() > kMaxLocations) {
        out += fmt::format(">>> referenced {} more times\n", u.referenced_by.size() - kMaxLocations);
      }
      if (u.symbol != u.demangled) out += fmt::format(">>> mangled: {}\n", u.symbol);
      out += fmt::format(">>> {}: {}\n", to_string(u.classification), u.reason);
      if (u.origin) {
        std::string at = u.origin->line ? fmt::format("{}:{}", u.origin->file, *u.origin->line) : u.origin->file;
        out += fmt::format(">>> {} in: {}\n", u.origin->kind == "declaration" ? "declared" : "defined", at);
        if (u.origin->ported_from) out += fmt::format(">>> ported from: {}\n", *u.origin->ported_from);
      }
      if (u.counterpart) {
        out += fmt::format(">>> counterpart: {}{}\n", u.counterpart->name,
                           u.counterpart->library ? " in " + *u.counterpart->library : std::string());
      }
      for (const auto& s : u.suggestions) out += fmt::format(">>> did you mean: {} ({}, {})\n", s.demangled, s.reason, s.library);
      if (u.fix && !u.fix->detail.empty()) out += fmt::format(">>> fix: {}\n", u.fix->detail);
    }
  }
  if (!style.quiet) {
    for (const auto& w : report.warnings) out += fmt::format("warning: {}\n", w);
    if (!report.interpreter.empty()) out += fmt::format("interpreter: {} (--python), loaded first\n", report.interpreter);
  }
  // When every input failed there is nothing to sum up: "0 undefined symbols ... in 0 libraries"
  // would read as an all-clear beside the errors (which the tool prints on stderr).
  if (!style.quiet && style.summary && !(report.libraries.empty() && !report.errors.empty())) {
    size_t u = report.unresolved_count(), m = report.missing_library_count(), v = report.missing_version_count();
    size_t fresh = new_findings(report), total = u + m + v;
    out += fmt::format("{} undefined symbol{}, {} missing librar{}, {} missing version{} in {} librar{}{}\n", u,
                       u == 1 ? "" : "s", m, m == 1 ? "y" : "ies", v, v == 1 ? "" : "s", report.libraries.size(),
                       report.libraries.size() == 1 ? "y" : "ies",
                       fresh < total ? fmt::format(" ({} baselined)", total - fresh) : std::string());
  }
  return utf8_escaped(out);  // names are bytes from the ELF files; the terminal gets valid UTF-8
}

}  // namespace mlc
