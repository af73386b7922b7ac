// lld's diagnostic shape: "error: undefined symbol: <demangled>" then ">>>" lines with the
// evidence; locations capped at three, then ">>> referenced N more times".
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/paths.h"
#include "report/baseline.h"
#include "report/escape.h"
#include "report/render.h"
#include "report/said.h"
#include "report/text_block.h"

namespace mlc {
namespace {

using text::holder_note;
using text::owner_text;

std::string error_prefix(const TextStyle& style, bool baselined) {
  if (baselined) return style.color ? "\x1b[1;36mbaselined:\x1b[0m " : "baselined: ";
  return style.color ? "\x1b[1;31merror:\x1b[0m " : "error: ";
}

constexpr size_t kCauseSymbols = 5;

// A named file as a headline names it: its path below the directory named that holds it (two files
// of one name in two folders stay apart), else its base name.
std::string target_name(const LibraryReport& target, const TextStyle& style) {
  for (const auto& dir : style.named_directories) {
    std::string rel = relative_to_root(target.path, dir);
    if (rel != target.path) return rel;
  }
  return base_name(target.path);
}

// Every text the report holds, for one escaping rule over all of them (the report is bytes from ELF
// files and file names: a newline or an escape sequence in a name must not reach the terminal raw).
template <class R, class F>
void for_each_text(R& r, F&& f) {
  auto opt = [&](auto& o) {
    if (o) f(*o);
  };
  auto owner = [&](auto& o) {
    if (o) f(o->name), f(o->version);
  };
  auto copy = [&](auto& c) {
    if (c) f(c->path), f(c->home);
  };
  for (auto& lib : r.libraries) {
    f(lib.path), f(lib.soname), opt(lib.loaded_by), opt(lib.host), owner(lib.owner);
    for (auto& n : lib.needed) {
      f(n.name), opt(n.path), opt(n.refused), owner(n.owner);
      for (auto& s : n.searched) f(s);
      for (auto& s : n.search) f(s.path), f(s.outcome.detail);
    }
    for (auto& mv : lib.missing_versions) f(mv.version), f(mv.file), opt(mv.provider);
    for (auto& lf : lib.load_failures) f(lf.file), f(lf.message), opt(lf.symbol), f(lf.fix);
    for (auto& u : lib.unresolved) {
      f(u.symbol), f(u.demangled), opt(u.version), f(u.reason);
      for (auto& ref : u.referenced_by) f(ref.library), opt(ref.function), opt(ref.file);
      if (u.origin) f(u.origin->file), opt(u.origin->library), opt(u.origin->ported_from);
      if (u.counterpart) f(u.counterpart->name), opt(u.counterpart->library);
      for (auto& s : u.suggestions) f(s.symbol), f(s.demangled), f(s.library);
      if (u.fix) opt(u.fix->cmake_file), opt(u.fix->list), opt(u.fix->entry), opt(u.fix->library), f(u.fix->detail);
    }
  }
  for (auto& w : r.warnings) f(w.text);
  for (auto& c : r.causes) {
    f(c.headline), f(c.library), f(c.fix), copy(c.picked), copy(c.other);
    for (auto& v : c.missing_versions) f(v);
    for (auto& o : c.others) f(o.path), f(o.home);
    for (auto& n : c.needed_by) f(n);
    for (auto& h : c.host_libraries) f(h);
  }
  for (auto& l : r.runtime_lookups) {
    f(l.library), f(l.name), opt(l.provider), f(l.provider_name);
    for (auto& s : l.searched) f(s);
  }
  if (r.python) {
    f(r.python->interpreter), f(r.python->executable), f(r.python->version), opt(r.python->torch_path),
        opt(r.python->torch_version), owner(r.python->torch_owner);
  }
  f(r.interpreter);
}

// What one finding without a shared cause is a cause of: a missing source file is one cause however
// many symbols it would define, and so is a library left unlinked; any other finding is its own.
std::string own_cause(const UnresolvedSymbol& u) {
  if (u.classification == Classification::MissingSource && u.origin) return "source\n" + u.origin->file;
  if ((u.classification == Classification::UnlinkedLibrary || u.classification == Classification::StaticArchive) &&
      u.fix && u.fix->library)
    return "link\n" + *u.fix->library;
  return "symbol\n" + u.symbol;
}

// What would fail the load of a named file: its causes (each shared cause once, each missing source
// or unlinked library once, any other finding as its own), baselined findings left out;
// `torch_first` tells whether the import of torch it does first fails.
struct LoadCount {
  size_t causes = 0;
  bool torch_first = false;
};

LoadCount load_causes(const Report& report, const LibraryReport& target) {
  std::set<std::string> causes;
  size_t own = 0;
  LoadCount n;
  std::set<std::string> seen;  // a library listed twice (a dependency, then a named file) counts once
  for (const auto& lib : report.libraries) {
    bool torch_import = lib.role == LibraryRole::Preloaded && lib.loaded_by == target.path;
    if (!part_of_load(target, lib) || !seen.insert(lib.path).second) continue;
    size_t before = causes.size() + own;
    for (const auto& need : lib.needed)
      if (!need.path && !need.refused && !need.baselined)
        need.cause ? (void)causes.insert("cause\n" + *need.cause) : (void)++own;
    for (const auto& mv : lib.missing_versions)
      if (!mv.baselined) mv.cause ? (void)causes.insert("cause\n" + *mv.cause) : (void)++own;
    for (const auto& u : lib.unresolved)
      if (!u.baselined) causes.insert(u.cause ? "cause\n" + *u.cause : own_cause(u));
    for (const auto& f : lib.load_failures)
      if (!f.baselined) ++own;
    n.torch_first |= torch_import && causes.size() + own > before;
  }
  n.causes = causes.size() + own;
  return n;
}

// How the named file is loaded: Python imports a module, a program is started, a library is loaded.
const char* load_verb(const LibraryReport& target) {
  return target.program ? "starting" : target.python_extension ? "importing" : "loading";
}

// A program told apart (report.h: program_apart) fails the run only with --fail-on programs: a warning
// until then.
std::string program_prefix(const Report& report, const TextStyle& style) {
  return report.programs_fatal ? error_prefix(style, false) : "warning: ";
}

// "loading X would fail: N causes": one line per named file whose load fails.
std::string render_load_headlines(const Report& report, const TextStyle& style) {
  std::string out;
  for (const auto& target : report.libraries) {
    if (target.role != LibraryRole::Target) continue;
    LoadCount n = load_causes(report, target);
    if (n.causes == 0) continue;
    // Causes, not symbols: three unlinked libraries are three causes however many symbols each
    // leaves (the closing line counts those).
    out +=
        fmt::format("{}{} {} would fail{}: {} cause{}\n",
                    program_apart(target) ? program_prefix(report, style) : error_prefix(style, false),
                    load_verb(target), target_name(target, style),
                    n.torch_first ? ", in the import of torch it does first" : "", n.causes, n.causes == 1 ? "" : "s");
  }
  return out;
}

// Several named files (a directory, an environment): how many would fail to load, and in which
// packages, so the answer to "what in my environment would fail now?" is one line.
// The programs found in a directory are counted apart: no import runs them.
std::string render_environment_summary(const Report& report) {
  size_t named = 0, failing = 0, unowned = 0, programs = 0, not_starting = 0;
  std::map<std::string, size_t> packages;  // owner name -> failing files
  for (const auto& target : report.libraries) {
    if (target.role != LibraryRole::Target) continue;
    if (program_apart(target)) {
      ++programs;
      not_starting += load_causes(report, target).causes > 0;
      continue;
    }
    ++named;
    if (load_causes(report, target).causes == 0) continue;
    ++failing;
    if (target.owner) ++packages[target.owner->name];
    else ++unowned;
  }
  if (named + programs < 2) return "";
  std::string where;
  for (const auto& [name, n] : packages) where += fmt::format("{}{} ({})", where.empty() ? "" : ", ", name, n);
  if (unowned) where += fmt::format("{}{} owned by no package", where.empty() ? "" : ", ", unowned);
  std::string out;
  if (named > 0 || programs == 0)
    out = fmt::format("{} of {} files would fail to load{}\n", failing, named,
                      failing == 0 ? std::string()
                                   : fmt::format(", in {} package{}: {}", packages.size() + (unowned ? 1 : 0),
                                                 packages.size() + (unowned ? 1 : 0) == 1 ? "" : "s", where));
  if (programs > 0)
    out += fmt::format("{} of {} program{} would not start\n", not_starting, programs, programs == 1 ? "" : "s");
  return out;
}

// What fails the load of a named file: the shared causes it meets (ids) and its own findings (no
// cause), over the file, its dependencies and the import of torch it does first (baselined: none).
struct LoadFailure {
  std::set<std::string> causes;
  std::vector<std::string> own;  // one short phrase per finding without a shared cause
};

LoadFailure load_failure(const Report& report, const LibraryReport& target) {
  LoadFailure f;
  std::set<std::string> seen;  // a library listed twice (a dependency, then a named file) counts once
  for (const auto& lib : report.libraries) {
    if (!part_of_load(target, lib) || !seen.insert(lib.path).second) continue;
    std::string in = &lib == &target ? "" : " (in " + (lib.soname.empty() ? base_name(lib.path) : lib.soname) + ")";
    for (const auto& n : lib.needed)
      if (!n.path && !n.refused && !n.baselined)
        n.cause ? (void)f.causes.insert(*n.cause) : f.own.push_back("library not found: " + n.name + in);
    for (const auto& lf : lib.load_failures)
      if (!lf.baselined) f.own.push_back(base_name(lf.file) + ": " + *lf.message + in);
    for (const auto& mv : lib.missing_versions)
      if (!mv.baselined)
        mv.cause ? (void)f.causes.insert(*mv.cause)
                 : f.own.push_back("version " + mv.version + " not found in " + mv.file + in);
    for (const auto& u : lib.unresolved)
      if (!u.baselined) u.cause ? (void)f.causes.insert(*u.cause) : f.own.push_back(u.demangled + in);
  }
  return f;
}

std::string package_of(const LibraryReport& lib) {
  return lib.owner ? lib.owner->name + (lib.owner->version.empty() ? "" : " " + lib.owner->version) : "(no package)";
}

// "a.so, b.so and 3 more"
std::string first_names(const std::vector<std::string>& names, size_t cap) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < cap; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > cap) out += fmt::format(" and {} more", names.size() - cap);
  return out;
}

constexpr size_t kEnvironmentFiles = 4;      // files named per cause or package line
constexpr size_t kEnvironmentPackages = 12;  // packages with findings of their own, then a count

// The programs found in a named directory that would not start (report.h: program_apart): no import runs
// them, so they are counted apart from what the directory's imports load, warnings unless --fail-on
// programs. -q keeps only error lines: one per program when they fail the run.
std::string render_programs_apart(const Report& report,
                                  const std::vector<std::pair<std::string, std::string>>& programs,
                                  const TextStyle& style) {
  if (programs.empty()) return "";
  const std::string prefix = program_prefix(report, style);
  std::string out;
  if (style.quiet) {
    if (report.programs_fatal)
      for (const auto& [name, why] : programs) out += fmt::format("{}starting {} would fail: {}\n", prefix, name, why);
    return out;
  }
  out += fmt::format("{}{} program{} found in the directory would not start{}\n", prefix, programs.size(),
                     programs.size() == 1 ? "" : "s",
                     report.programs_fatal ? ""
                                           : ": no import runs them, so they fail the run only with --fail-on "
                                             "any,programs");
  for (size_t i = 0; i < programs.size() && i < kEnvironmentFiles; ++i)
    out += fmt::format(">>> {}: starting would fail: {}\n", programs[i].first, programs[i].second);
  if (programs.size() > kEnvironmentFiles)
    out += fmt::format(">>> and {} more (--format json lists them)\n", programs.size() - kEnvironmentFiles);
  return out;
}

// Several named files (a directory is an environment): each shared cause once, with the files whose
// load it breaks grouped by package; then, per package, the files that fail on findings of their own,
// one line each. What a single file's report spells out (every symbol, the search) is in the JSON
// report, or in a run on that file alone; this stays on one screen for a whole environment.
std::string render_environment(const Report& report, const TextStyle& style) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> broken;  // cause -> package -> files
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> own;    // package -> (file, what)
  std::string own_lines;
  std::vector<std::pair<std::string, std::string>> programs;  // (program, why it would not start)
  for (const auto& target : report.libraries) {
    if (target.role != LibraryRole::Target) continue;
    LoadFailure f = load_failure(report, target);
    if (program_apart(target)) {
      // Told apart, with what stops it: its own findings, then the headlines of the causes it meets.
      if (f.causes.empty() && f.own.empty()) continue;
      std::vector<std::string> what = f.own;
      for (const auto& c : report.causes)
        if (f.causes.count(c.id)) what.push_back(c.headline);
      programs.push_back({target_name(target, style),
                          f.causes.empty() ? fmt::format("{} finding{} of its own: {}", f.own.size(),
                                                         f.own.size() == 1 ? "" : "s", first_names(what, 2))
                                           : fmt::format("{} cause{}: {}", what.size(), what.size() == 1 ? "" : "s",
                                                         first_names(what, 2))});
      continue;
    }
    for (const auto& c : f.causes) broken[c][package_of(target)].push_back(target_name(target, style));
    if (f.own.empty()) continue;
    const char* verb = load_verb(target);
    std::string why = fmt::format("would fail: {} finding{} of its own: {}", f.own.size(), f.own.size() == 1 ? "" : "s",
                                  first_names(f.own, 2));
    std::string what = fmt::format("{} {}", verb, why);
    // -q: one error line per failing file, which names it.
    if (style.quiet)
      own_lines += fmt::format("{}{} {} {}\n", error_prefix(style, false), verb, target_name(target, style), why);
    own[package_of(target)].push_back({target.path, what});
  }
  std::string out;
  for (const auto& c : report.causes) {
    auto it = broken.find(c.id);
    if (it == broken.end()) continue;
    size_t files = 0;
    std::string where;
    for (const auto& [package, names] : it->second) {
      files += names.size();
      where += fmt::format("\n>>>   {} ({}): {}", package, names.size(), first_names(names, kEnvironmentFiles));
    }
    out += fmt::format("{}{}\n", error_prefix(style, false), *c.headline);
    if (style.quiet) continue;
    out += fmt::format(">>> breaks {} file{}, by package:{}\n", files, files == 1 ? "" : "s", where);
    if (!c.fix->empty()) out += fmt::format(">>> fix: {}\n", *c.fix);
  }
  if (style.quiet) return out + own_lines + render_programs_apart(report, programs, style);
  size_t shown = 0;
  for (const auto& [package, files] : own) {
    if (shown++ == kEnvironmentPackages) {
      out += fmt::format(
          "{}{} more packages have files that fail on findings of their own (--format json lists "
          "them)\n",
          error_prefix(style, false), own.size() - kEnvironmentPackages);
      break;
    }
    out += fmt::format("{}{}: {} file{} would fail to load on findings of their own\n", error_prefix(style, false),
                       package, files.size(), files.size() == 1 ? "" : "s");
    for (size_t i = 0; i < files.size() && i < kEnvironmentFiles; ++i)
      out += fmt::format(">>> {}: {}\n", files[i].first, files[i].second);
    if (files.size() > kEnvironmentFiles)
      out += fmt::format(">>> and {} more (check one alone for its whole report)\n", files.size() - kEnvironmentFiles);
  }
  return out + render_programs_apart(report, programs, style);  // after what imports load, as warnings are
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
    out += fmt::format("{}{}\n", error_prefix(style, all_baselined), *c.headline);
    if (style.quiet) continue;
    // A missing library: who needs it, where the loader looked, the other versions there are.
    for (const auto* lib : needers) {
      out += fmt::format(">>> needed by {}{}\n", lib->path, holder_note(*lib));
      for (const auto& need : lib->needed)
        if (need.cause == c.id)
          for (const auto& step : need.search)
            out += fmt::format(">>> searched {} [{}]: {}\n", step.path, loader::to_string(step.how),
                               loader::to_string(step.outcome));
    }
    for (const auto& o : c.others) out += fmt::format(">>> other version: {} [{}]\n", o.path, shown_how(o));
    for (size_t i = 0; i < symbols.size() && i < kCauseSymbols; ++i) {
      const auto* u = symbols[i];
      const auto* h = holders[i];
      std::string in =
          h->role == LibraryRole::Target ? "" : " (in " + (h->soname.empty() ? base_name(h->path) : h->soname) + ")";
      out += fmt::format(">>> {}: {}{}{}\n", to_string(u->classification), u->demangled,
                         u->version ? "@" + *u->version : "", in);
    }
    if (symbols.size() > kCauseSymbols)
      out += fmt::format(">>> and {} more (--format json lists them all)\n", symbols.size() - kCauseSymbols);
    if (!c.fix->empty()) out += fmt::format(">>> fix: {}\n", *c.fix);
  }
  return out;
}

// --python: the interpreter and the torch it imports, said first (the check is against them).
std::string render_python(const Report& report) {
  if (!report.python) return "";
  const auto& py = *report.python;
  std::string who =
      py.executable == py.interpreter ? py.executable : fmt::format("{} ({})", py.interpreter, py.executable);
  std::string torch = "no torch package";
  if (py.torch_path) {
    torch = fmt::format("torch {} from {}", py.torch_version.value_or("(version unknown)"), *py.torch_path);
    if (py.torch_owner) torch += fmt::format(" ({})", owner_text(*py.torch_owner));
  }
  return fmt::format("note: import context: {} (Python {}); {}\n", who, py.version, torch);
}

// Why a file was checked after the import of torch, as one clause.
std::string torch_reason(const ImportedAfter& a) { return report::torch_reason(a.reason, a.evidence); }

std::string torch_named(const ImportedAfter& a) {
  return fmt::format("torch {}from {}", a.version ? *a.version + " " : std::string(), a.torch);
}

// The context a file was checked in, when the tool inferred it (src/python): one line per file, or for an
// environment one line per torch with the count of files and why.
std::string render_imported_after(const Report& report, bool environment) {
  std::string out;
  if (!environment) {
    size_t targets = 0;
    for (const auto& lib : report.libraries) targets += lib.role == LibraryRole::Target;
    for (const auto& lib : report.libraries)
      if (lib.role == LibraryRole::Target && lib.imported_after && !report.python)
        out += fmt::format("note: {}checked as imported after {}: {}\n", targets > 1 ? lib.path + ": " : "",
                           torch_named(*lib.imported_after), torch_reason(*lib.imported_after));
    return out;
  }
  struct Count {
    const ImportedAfter* first = nullptr;
    size_t by_reason[3] = {0, 0, 0};
    size_t total = 0;
  };
  std::map<std::string, Count> by_torch;
  for (const auto& lib : report.libraries) {
    if (lib.role != LibraryRole::Target || !lib.imported_after) continue;
    Count& c = by_torch[lib.imported_after->torch];
    if (!c.first) c.first = &*lib.imported_after;
    ++c.by_reason[static_cast<int>(lib.imported_after->reason)];
    ++c.total;
  }
  for (const auto& [dir, c] : by_torch) {
    std::string why;
    auto part = [&](size_t n, const char* one, const char* many) {
      if (n) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, n == 1 ? one : many);
    };
    part(c.by_reason[static_cast<int>(TorchImportReason::PartOfTorch)], "is part of torch", "are part of torch");
    part(c.by_reason[static_cast<int>(TorchImportReason::PackageImportsTorch)], "is in a package that imports it",
         "are in packages that import it");
    part(c.by_reason[static_cast<int>(TorchImportReason::NeedsTorchLibraries)], "needs its libraries",
         "need its libraries");
    out += fmt::format("note: {} file{} checked as imported after {}: {}\n", c.total, c.total == 1 ? "" : "s",
                       torch_named(*c.first), why);
  }
  return out;
}

// One finding's block (report/text_block.h): its error line, then, unless -q, its evidence, a
// detail's second line aligned under the text of its first.
std::string print_block(const std::string& prefix, const text::Block& block, const TextStyle& style) {
  std::string out = prefix + block.title + "\n";
  if (style.quiet) return out;
  for (const auto& d : block.details) {
    out += ">>> " + d.line + "\n";
    if (!d.under.empty()) out += ">>>               " + d.under + "\n";
  }
  return out;
}

// Names looked up at run time that the environment does not satisfy (runtime-lookup).
std::string render_runtime(const Report& report, const TextStyle& style) {
  std::string out;
  if (style.quiet && !report.runtime_lookups_fatal) return out;  // -q: only the error lines
  std::string prefix = report.runtime_lookups_fatal ? error_prefix(style, false) : "warning: ";
  auto listed = [&](const RuntimeLookup& r) {
    out += print_block(prefix + "runtime-lookup: ", text::runtime_lookup_block(r), style);
  };
  if (style.runtime || report.runtime_lookups_fatal) {
    for (const auto& r : report.runtime_lookups) listed(r);
    return out;
  }
  // By default: each GPU driver once, with the libraries that look it up, then a count. One driver
  // is one library however it is spelled: libcuda.so.1, and libcuda.so where a caller falls back to it.
  struct Driver {
    std::vector<std::string> names, users;
  };
  std::map<std::string, Driver> drivers;  // by the name up to ".so"
  std::set<std::string> optional_libraries, optional_names;
  auto add_once = [](std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const auto& r : report.runtime_lookups) {
    if (r.driver && r.kind == LookupKind::Dlopen) {
      Driver& d = drivers[r.name.substr(0, r.name.find(".so"))];
      add_once(d.names, r.name);
      add_once(d.users, base_name(r.library));
    } else {
      optional_names.insert(r.name);
      if (r.kind == LookupKind::Dlopen) optional_libraries.insert(r.name);
    }
  }
  for (auto& [stem, d] : drivers) {
    // The versioned name first (what the driver's package installs), the others as also looked up.
    std::stable_sort(d.names.begin(), d.names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    std::string also;
    for (size_t i = 1; i < d.names.size(); ++i) also += (i > 1 ? ", " : " (also as ") + d.names[i];
    if (!also.empty()) also += ")";
    const auto& users = d.users;
    std::string who;
    for (size_t i = 0; i < users.size() && i < 3; ++i) who += (i ? ", " : "") + users[i];
    if (users.size() > 3) who += fmt::format(" and {} more", users.size() - 3);
    out += fmt::format(
        "warning: runtime-lookup: the GPU driver {}{} is not installed here: {} load{} it at run time "
        "and fail{} when first used (install the driver, or check on a machine that has it)\n",
        d.names.front(), also, who, users.size() == 1 ? "s" : "", users.size() == 1 ? "s" : "");
  }
  if (!optional_names.empty())
    out += fmt::format(
        "note: {} name{} looked up at run time (dlopen/dlsym) not found here, optional: {} librar{} not "
        "installed, {} entry point{} (--runtime lists them)\n",
        optional_names.size(), optional_names.size() == 1 ? " is" : "s are", optional_libraries.size(),
        optional_libraries.size() == 1 ? "y" : "ies", optional_names.size() - optional_libraries.size(),
        optional_names.size() - optional_libraries.size() == 1 ? "" : "s");
  return out;
}

// The notes after the findings: who installed what, the host a module was checked in, the plugins,
// the --with libraries taken as an import's, the run's warnings and the interpreter loaded first.
std::string render_notes(const Report& report, bool environment) {
  std::string out;
  // Who installed what: for a file checked alone, and otherwise only where something is wrong (an
  // environment of hundreds of healthy files is not a page of notes).
  for (const auto& lib : report.libraries) {
    bool failing = !lib.unresolved.empty() || !lib.missing_versions.empty() || lib.missing_libraries() > 0 ||
                   !lib.load_failures.empty();
    if (lib.owner && !environment && (report.libraries.size() == 1 || failing))
      out += fmt::format("note: {} from {}\n", lib.path, owner_text(*lib.owner));
  }
  // Which host a library of modules was checked in (it needs the Python C API and links no
  // libpython: only a Python process loads it), told as the owner is: for a file checked alone, or
  // where its load fails.
  for (const auto& lib : report.libraries) {
    bool failing = !lib.unresolved.empty() || !lib.missing_versions.empty() || lib.missing_libraries() > 0 ||
                   !lib.load_failures.empty();
    if (lib.needs_python_api && lib.host && (report.libraries.size() == 1 || failing))
      out += fmt::format(
          "note: {} uses the Python C API and links no libpython: checked as loaded into {}, which "
          "provides it\n",
          lib.path, *lib.host);
  }
  out += render_imported_after(report, environment);
  for (const auto& lib : report.libraries) {
    bool failing = !lib.unresolved.empty() || !lib.missing_versions.empty() || lib.missing_libraries() > 0;
    if (lib.plugin_of && !environment && (report.libraries.size() == 1 || failing))
      out += fmt::format("note: {} is a plugin of {}, which exports what it uses: checked as loaded into it\n",
                         lib.path, *lib.plugin_of);
  }
  if (!report.with_as_import.empty()) {
    std::string names;
    for (const auto& w : report.with_as_import) names += (names.empty() ? "" : ", ") + base_name(w);
    out += fmt::format(
        "note: --with {}: loaded with RTLD_LOCAL before an extension module, as Python's import of torch "
        "loads {} (the module binds only what it links); write LIB:global for RTLD_GLOBAL\n",
        names, report.with_as_import.size() == 1 ? "it" : "them");
  }
  for (const auto& w : report.warnings) out += fmt::format("warning: {}\n", w.text);
  // The import-context line (render_python) names the interpreter already, with what it resolved to.
  if (!report.interpreter.empty() && !report.python)
    out += fmt::format("interpreter: {} (--python), loaded first\n", report.interpreter);
  return out;
}

}  // namespace

std::string render_text(const Report& report, const TextStyle& style) {
  // Control characters in a name are written \xNN: the text is rendered from a copy so escaped (only
  // when some name has one).
  bool controls = false;
  for_each_text(report, [&](const std::string& s) { controls = controls || has_controls(s); });
  if (controls) {
    Report shown = report;
    const Pen pen;
    for_each_text(shown, [&](auto& s) {
      const std::string& text = s;
      if (!has_controls(text)) return;
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(s)>, std::string>) s = controls_escaped(text);
      else s.write(pen, controls_escaped(text));
    });
    return render_text(shown, style);
  }
  std::string out;
  size_t targets = std::count_if(report.libraries.begin(), report.libraries.end(),
                                 [](const LibraryReport& l) { return l.role == LibraryRole::Target; });
  const bool environment = style.environment && style.load_headlines && targets > 1;
  if (style.load_headlines && !environment) out += render_load_headlines(report, style);
  if (!style.quiet) out += render_python(report);
  if (environment) out += render_environment(report, style);
  if (!environment) out += render_causes(report, style);
  for (const auto& lib : report.libraries) {
    if (environment) break;  // told above, grouped
    // A program told apart warns until --fail-on programs (render_programs_apart).
    auto err_for = [&](bool baselined) {
      return !baselined && program_apart(lib) ? program_prefix(report, style) : error_prefix(style, baselined);
    };
    for (const auto& f : lib.load_failures)
      out += print_block(err_for(f.baselined), text::load_failure_block(lib, f), style);
    for (const auto& need : lib.needed) {
      if (need.path || need.cause || need.refused) continue;  // a cause's library is told under its headline
      out += print_block(err_for(need.baselined), text::missing_library_block(lib, need), style);
    }
    for (const auto& mv : lib.missing_versions) {
      if (mv.cause) continue;  // told once, under its cause's headline
      out += print_block(err_for(mv.baselined), text::missing_version_block(lib, mv), style);
    }
    for (const auto& u : lib.unresolved) {
      if (u.cause) continue;  // told once, under its cause's headline
      out += print_block(err_for(u.baselined), text::undefined_symbol_block(lib, u), style);
    }
  }
  out += render_runtime(report, style);
  if (!style.quiet) out += render_notes(report, environment);
  // When every input failed there is nothing to sum up: "0 undefined symbols ... in 0 libraries"
  // would read as an all-clear beside the errors (which the tool prints on stderr).
  if (!style.quiet && style.summary) out += render_environment_summary(report);
  if (!style.quiet && style.summary && !(report.libraries.empty() && !report.errors.empty())) {
    size_t u = report.unresolved_count(), m = report.missing_library_count(), v = report.missing_version_count();
    size_t l = report.load_failure_count();
    size_t fresh = new_findings(report), total = u + m + v + l;
    out += fmt::format("{} undefined symbol{}, {} missing librar{}, {} missing version{}{} in {} librar{}{}\n", u,
                       u == 1 ? "" : "s", m, m == 1 ? "y" : "ies", v, v == 1 ? "" : "s",
                       l ? fmt::format(", {} other load failure{}", l, l == 1 ? "" : "s") : std::string(),
                       report.libraries.size(), report.libraries.size() == 1 ? "y" : "ies",
                       fresh < total ? fmt::format(" ({} baselined)", total - fresh) : std::string());
  }
  return utf8_escaped(out);  // names are bytes from the ELF files; the terminal gets valid UTF-8
}

}  // namespace mlc
