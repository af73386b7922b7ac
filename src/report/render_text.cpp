// lld's diagnostic shape: "error: undefined symbol: <demangled>" then ">>>" lines with the
// evidence; locations capped at three, then ">>> referenced N more times".
#include <fmt/format.h>

#include <map>
#include <set>

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

std::string base_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Where a finding's holder sits in the load: "" for a named file, else which load brought it in.
std::string holder_note(const LibraryReport& lib) {
  if (lib.role == "dependency" && lib.loaded_by) return fmt::format(" (a dependency loaded for {})", base_of(*lib.loaded_by));
  if (lib.role == "preloaded" && lib.loaded_by)
    return fmt::format(" (loaded by the import of torch that importing {} does first)", base_of(*lib.loaded_by));
  if (lib.role == "preloaded") return " (loaded before the checked files: --with/--python)";
  return "";
}

// How many causes would fail the load of a named file: each shared cause once and each finding
// without one as a cause of its own (baselined findings do not count); `torch_first` tells whether
// the import of torch it does first fails.
size_t load_causes(const Report& report, const LibraryReport& target, bool& torch_first) {
  std::set<std::string> shared;
  size_t own = 0;
  auto count = [&](const std::optional<std::string>& cause, bool baselined) {
    if (baselined) return;
    if (cause) {
      shared.insert(*cause);
    } else {
      ++own;
    }
  };
  for (const auto& lib : report.libraries) {
    bool torch_import = lib.role == "preloaded" && lib.loaded_by == target.path;
    if (&lib != &target && !(lib.role == "dependency" && lib.loaded_by == target.path) && !torch_import) continue;
    size_t before = shared.size() + own;
    for (const auto& n : lib.needed)
      if (!n.path) count(n.cause, n.baselined);
    for (const auto& mv : lib.missing_versions) count(mv.cause, mv.baselined);
    for (const auto& u : lib.unresolved) count(u.cause, u.baselined);
    torch_first |= torch_import && shared.size() + own > before;
  }
  return shared.size() + own;
}

// "loading X would fail: N causes": one line per named file whose load fails.
std::string render_load_headlines(const Report& report, const TextStyle& style) {
  std::string out;
  for (const auto& target : report.libraries) {
    if (target.role != "target") continue;
    bool torch_first = false;
    size_t n = load_causes(report, target, torch_first);
    if (n == 0) continue;
    out += fmt::format("{}{} {} would fail{}: {} cause{}\n", error_prefix(style, false),
                       target.python_extension ? "importing" : "loading", base_of(target.path),
                       torch_first ? ", in the import of torch it does first" : "", n, n == 1 ? "" : "s");
  }
  return out;
}

// Several named files (a directory, an environment): how many would fail to load, and in which
// packages, so the answer to "what in my environment would fail now?" is one line.
std::string render_environment_summary(const Report& report) {
  size_t named = 0, failing = 0, unowned = 0;
  std::map<std::string, size_t> packages;  // owner name -> failing files
  for (const auto& target : report.libraries) {
    if (target.role != "target") continue;
    ++named;
    bool torch_first = false;
    if (load_causes(report, target, torch_first) == 0) continue;
    ++failing;
    if (target.owner) ++packages[target.owner->name];
    else ++unowned;
  }
  if (named < 2) return "";
  std::string where;
  for (const auto& [name, n] : packages) where += fmt::format("{}{} ({})", where.empty() ? "" : ", ", name, n);
  if (unowned) where += fmt::format("{}{} owned by no package", where.empty() ? "" : ", ", unowned);
  return fmt::format("{} of {} files would fail to load{}\n", failing, named,
                     failing == 0 ? std::string() : fmt::format(", in {} package{}: {}", packages.size() + (unowned ? 1 : 0),
                                                                packages.size() + (unowned ? 1 : 0) == 1 ? "" : "s", where));
}

// One headline per shared cause, then the first few symbols it explains (JSON lists them all).
std::string render_causes(const Report& report, const TextStyle& style) {
  std::string out;
  for (const auto& c : report.causes) {
    std::vector<const UnresolvedSymbol*> symbols;
    std::vector<const LibraryReport*> holders;
    bool all_baselined = true;
    for (const auto& lib : report.libraries) {
      for (const auto& u : lib.unresolved) {
        if (u.cause != c.id) continue;
        symbols.push_back(&u);
        holders.push_back(&lib);
        all_baselined &= u.baselined;
      }
      for (const auto& mv : lib.missing_versions)
        if (mv.cause == c.id) all_baselined &= mv.baselined;
    }
    std::vector<const LibraryReport*> needers;
    for (const auto& lib : report.libraries)
      for (const auto& need : lib.needed)
        if (need.cause == c.id) {
          needers.push_back(&lib);
          all_baselined &= need.baselined;
        }
    out += fmt::format("{}{}\n", error_prefix(style, all_baselined), c.headline);
    if (style.quiet) continue;
    // A missing library: who needs it, where the loader looked, the other versions there are.
    for (const auto* lib : needers) {
      out += fmt::format(">>> needed by {}{}\n", lib->path, holder_note(*lib));
      for (const auto& need : lib->needed)
        if (need.cause == c.id)
          for (const auto& step : need.search) out += fmt::format(">>> searched {} [{}]: {}\n", step.path, step.how, step.outcome);
    }
    for (const auto& o : c.others) out += fmt::format(">>> other version: {} [{}]\n", o.path, o.how);
    for (size_t i = 0; i < symbols.size() && i < kCauseSymbols; ++i) {
      const auto* u = symbols[i];
      const auto* h = holders[i];
      std::string in = h->role == "target" ? "" : " (in " + (h->soname.empty() ? base_of(h->path) : h->soname) + ")";
      out += fmt::format(">>> {}: {}{}{}\n", to_string(u->classification), u->demangled, u->version ? "@" + *u->version : "", in);
    }
    if (symbols.size() > kCauseSymbols)
      out += fmt::format(">>> and {} more (--format json lists them all)\n", symbols.size() - kCauseSymbols);
    if (!c.fix.empty()) out += fmt::format(">>> fix: {}\n", c.fix);
  }
  return out;
}

std::string owner_text(const PackageOwner& o) {
  std::string v = o.version.empty() ? "" : " " + o.version;
  if (o.kind == "dpkg") return "Debian's " + o.name + v;
  if (o.kind == "conda") return "conda's " + o.name + v;
  if (o.kind == "python") return "Python package " + o.name + v;
  return "the SDK " + o.name + v;
}

// --python: the interpreter and the torch it imports, said first (the check is against them).
std::string render_python(const Report& report) {
  if (!report.python) return "";
  const auto& py = *report.python;
  std::string who = py.executable == py.interpreter ? py.executable : fmt::format("{} ({})", py.interpreter, py.executable);
  std::string torch = "no torch package";
  if (py.torch_path) {
    torch = fmt::format("torch {} from {}", py.torch_version.value_or("(version unknown)"), *py.torch_path);
    if (py.torch_owner) torch += fmt::format(" ({})", owner_text(*py.torch_owner));
  }
  return fmt::format("note: import context: {} (Python {}); {}\n", who, py.version, torch);
}

// Names looked up at run time that the environment does not satisfy (runtime-lookup).
std::string render_runtime(const Report& report, const TextStyle& style) {
  std::string out;
  if (style.quiet && !report.runtime_lookups_fatal) return out;  // -q: only the error lines
  std::string prefix = report.runtime_lookups_fatal ? error_prefix(style, false) : "warning: ";
  auto listed = [&](const RuntimeLookup& r) {
    if (r.kind == "dlopen") {
      out += fmt::format("{}runtime-lookup: dlopen(\"{}\") in {}: library not found\n", prefix, r.name, r.library);
      if (!style.quiet)
        for (const auto& s : r.searched) out += fmt::format(">>> searched {}\n", s);
    } else {
      out += fmt::format("{}runtime-lookup: dlsym(\"{}\") in {}: {} ({}) does not export it\n", prefix, r.name, r.library,
                         r.provider_name, r.provider.value_or("?"));
    }
  };
  if (style.runtime || report.runtime_lookups_fatal) {
    for (const auto& r : report.runtime_lookups) listed(r);
    return out;
  }
  // By default: the GPU driver, once per name with the libraries that look it up, then a count.
  std::map<std::string, std::vector<std::string>> drivers;
  std::set<std::string> optional_libraries, optional_names;
  for (const auto& r : report.runtime_lookups) {
    if (r.driver && r.kind == "dlopen") {
      drivers[r.name].push_back(base_of(r.library));
    } else {
      optional_names.insert(r.name);
      if (r.kind == "dlopen") optional_libraries.insert(r.name);
    }
  }
  for (const auto& [name, users] : drivers) {
    std::string who;
    for (size_t i = 0; i < users.size() && i < 3; ++i) who += (i ? ", " : "") + users[i];
    if (users.size() > 3) who += fmt::format(" and {} more", users.size() - 3);
    out += fmt::format("warning: runtime-lookup: the GPU driver {} is not installed here: {} load{} it at run time "
                       "and fail{} when first used (install the driver, or check on a machine that has it)\n",
                       name, who, users.size() == 1 ? "s" : "", users.size() == 1 ? "s" : "");
  }
  if (!optional_names.empty())
    out += fmt::format("note: {} name{} looked up at run time (dlopen/dlsym) not found here, optional: {} librar{} not "
                       "installed, {} entry point{} (--runtime lists them)\n",
                       optional_names.size(), optional_names.size() == 1 ? " is" : "s are", optional_libraries.size(),
                       optional_libraries.size() == 1 ? "y" : "ies", optional_names.size() - optional_libraries.size(),
                       optional_names.size() - optional_libraries.size() == 1 ? "" : "s");
  return out;
}

}  // namespace

std::string render_text(const Report& report, const TextStyle& style) {
  std::string out;
  auto err_for = [&](bool baselined) { return error_prefix(style, baselined); };
  if (style.load_headlines) out += render_load_headlines(report, style);
  if (!style.quiet) out += render_python(report);
  out += render_causes(report, style);
  for (const auto& lib : report.libraries) {
    for (const auto& need : lib.needed) {
      if (need.path || need.cause) continue;  // a cause's library is told under its headline
      out += fmt::format("{}library not found: {}\n", err_for(need.baselined), need.name);
      if (style.quiet) continue;
      out += fmt::format(">>> needed by {}{}\n", lib.path, holder_note(lib));
      for (const auto& step : need.search) out += fmt::format(">>> searched {} [{}]: {}\n", step.path, step.how, step.outcome);
    }
    for (const auto& mv : lib.missing_versions) {
      if (mv.cause) continue;  // told once, under its cause's headline
      out += fmt::format("{}version `{}' not found in {} (required by {}{})\n", err_for(mv.baselined), mv.version, mv.file,
                         lib.path, holder_note(lib));
      if (!style.quiet && mv.provider) {
        std::string owner;
        for (const auto& n : lib.needed)
          if (n.path == mv.provider && n.owner) owner = " (" + owner_text(*n.owner) + ")";
        out += fmt::format(">>> {} was loaded from {}{}\n", mv.file, *mv.provider, owner);
      }
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
      // Which object holds the reference, when it is not the named file ("in the SDK's libmusa.so.1").
      if (lib.role != "target")
        out += fmt::format(">>> in {}{}{}{}\n", lib.in_sdk ? "the SDK's " : "", lib.soname.empty() ? base_of(lib.path) : lib.soname,
                           holder_note(lib), lib.loaded_by ? ", not in " + base_of(*lib.loaded_by) : std::string());
      if (u.referenced_by.size() > kMaxLocations) {
        out += fmt::format(">>> referenced {} more times\n", u.referenced_by.size() - kMaxLocations);
      }
      if (u.symbol != u.demangled) out += fmt::format(">>> mangled: {}\n", u.symbol);
      out += fmt::format(">>> {}: {}\n", to_string(u.classification), u.reason);
      if (u.origin) {
        std::string at = u.origin->line ? fmt::format("{}:{}", u.origin->file, *u.origin->line) : u.origin->file;
        const char* how = u.classification == Classification::UnimplementedKernel ? "listed"  // its backend yaml entry
                          : u.origin->kind == OriginKind::Declaration                 ? "declared"
                                                                                      : "defined";
        out += fmt::format(">>> {} in: {}\n", how, at);
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
  out += render_runtime(report, style);
  if (!style.quiet) {
    // Who installed what: for a file checked alone, and otherwise only where something is wrong (an
    // environment of hundreds of healthy files is not a page of notes).
    for (const auto& lib : report.libraries) {
      bool failing = !lib.unresolved.empty() || !lib.missing_versions.empty() || lib.missing_libraries() > 0;
      if (lib.owner && (report.libraries.size() == 1 || failing))
        out += fmt::format("note: {} from {}\n", lib.path, owner_text(*lib.owner));
    }
    for (const auto& w : report.warnings) out += fmt::format("warning: {}\n", w);
    // The import-context line (render_python) names the interpreter already, with what it resolved to.
    if (!report.interpreter.empty() && !report.python)
      out += fmt::format("interpreter: {} (--python), loaded first\n", report.interpreter);
  }
  // When every input failed there is nothing to sum up: "0 undefined symbols ... in 0 libraries"
  // would read as an all-clear beside the errors (which the tool prints on stderr).
  if (!style.quiet && style.summary) out += render_environment_summary(report);
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
