// The pass sequence, in one place (style.md: "the pipeline reads as a list of passes").
#include "pipeline/linkcheck.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include "common/walk.h"
#include "backend/hipify_map.h"
#include "confirm/confirm.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "dwarf/references.h"
#include "loader/binding.h"
#include "trace/causes.h"
#include "trace/suggest.h"
#include "trace/trace.h"

namespace mlc {
namespace {

// Every ELF shared object or executable below dir. Symlinks (libfoo.so -> libfoo.so.1) are skipped:
// the file they name is listed itself.
void collect_dir(const std::string& dir, std::vector<std::string>& out) {
  walk_tree(dir, [&](const std::string& path, const struct stat&) {
    auto ident = elf::read_ident(path);
    if (ident && (ident->kind == elf::ObjectKind::SharedObject || ident->kind == elf::ObjectKind::Executable)) {
      out.push_back(path);
    }
  }, WalkOptions{false, false});
}

const char* type_name(elf::SymbolType t) {
  switch (t) {
    case elf::SymbolType::Func:
    case elf::SymbolType::GnuIfunc: return "func";
    case elf::SymbolType::Object:
    case elf::SymbolType::Common: return "object";
    case elf::SymbolType::Tls: return "tls";
    default: return "notype";
  }
}

// Pass: classify what the loader saw. Later passes (origin tracing) refine Unknown.
void classify_loader_miss(const loader::Process& p, const loader::UnresolvedRef& ref, UnresolvedSymbol& u) {
  auto lib_of = [&](int i) { return p.objects[i].path; };
  switch (ref.miss) {
    case loader::Miss::LibraryMissing:
      u.classification = Classification::MissingLibrary;
      u.reason = "required from " + std::string(ref.version_file) + ", which was not found";
      break;
    case loader::Miss::WrongVersion:
      u.classification = Classification::VersionMismatch;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) + ", but not with version " +
                 (ref.version.empty() ? std::string("(default)") : std::string(ref.version));
      u.fix = Fix{"use-library", {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "rebuild against the library that is loaded at run time, or load the one it was linked against"};
      break;
    case loader::Miss::HiddenVersion:
      u.classification = Classification::Hidden;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) +
                 " only under a hidden (non-default) version, invisible to an unversioned reference";
      u.fix = Fix{"export-symbol", {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "make the version the default (@@) in the provider's version script"};
      break;
    case loader::Miss::HiddenVisibility:
      u.classification = Classification::Hidden;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) + " with hidden or internal visibility";
      u.fix = Fix{"export-symbol", {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "give the definition default visibility (or list it in the export map)"};
      break;
    case loader::Miss::NoDefinition: {
      const auto& refobj = p.objects[ref.object];
      size_t missing = 0;
      for (const auto& need : refobj.needed) missing += need.object < 0 ? 1 : 0;
      if (missing > 0) {
        u.classification = Classification::MissingLibrary;
        u.reason = "no loaded object defines it, and " + std::to_string(missing) + " needed librar" +
                   (missing == 1 ? "y was" : "ies were") + " not found";
      } else {
        u.classification = Classification::Unknown;
        u.reason = "no object in the global scope (" + std::to_string(p.objects.size()) + " loaded) defines it";
      }
      break;
    }
  }
}

// Pass: a definition present only in a .symtab (not exported) explains a NoDefinition miss.
void find_unexported(const loader::Process& p, std::vector<std::pair<const loader::UnresolvedRef*, UnresolvedSymbol*>>& open) {
  std::vector<std::pair<const loader::UnresolvedRef*, UnresolvedSymbol*>> unknown;
  for (auto& o : open)
    if (o.first->miss == loader::Miss::NoDefinition) unknown.push_back(o);
  if (unknown.empty()) return;
  for (const auto& obj : p.objects) {
    if (!obj.elf.has_static_symtab) continue;  // stripped: nothing more to learn
    auto full = elf::read_object(obj.path, elf::ReadOptions{true, false});
    if (!full || full->static_symbols.empty()) continue;
    std::set<std::string_view> local;
    for (const auto& s : full->static_symbols)
      if (!s.is_undefined() && s.type != elf::SymbolType::Section && s.type != elf::SymbolType::File) local.insert(s.name);
    for (auto& [ref, u] : unknown) {
      if (u->classification == Classification::Hidden || !local.count(ref->name)) continue;
      u->classification = Classification::Hidden;
      u->reason = "defined in " + obj.path + " but not exported (local or hidden in its symbol table)";
      u->origin = Origin{obj.path, std::nullopt, "library", obj.path, std::nullopt};
      u->fix = Fix{"export-symbol", {}, {}, {}, obj.path,
                   "give the definition default visibility (or list it in the export map)"};
    }
  }
}

LibraryReport report_object(const loader::Process& p, int index) {
  const auto& o = p.objects[index];
  LibraryReport lib;
  lib.path = o.path;
  lib.soname = o.elf.soname;
  for (const auto& need : o.needed) {
    if (need.object >= 0) {
      const auto& found = p.objects[need.object];
      // A name satisfied by an already-loaded object reports how that object was found.
      std::string how = loader::to_string(need.how == loader::FoundHow::AlreadyLoaded ? found.how : need.how);
      lib.needed.push_back(NeededLibrary{need.name, found.path, how, {}, {}});
      continue;
    }
    NeededLibrary n{need.name, std::nullopt, "not-found", {}, {}};
    for (const auto& step : need.searched) {
      std::string where = step.path;
      if (step.how != loader::FoundHow::LdSoCache && step.how != loader::FoundHow::LdSoConf && step.path.front() != '(') {
        where = step.path.substr(0, step.path.rfind('/'));
      }
      n.searched.push_back(where);
      n.search.push_back({step.path, loader::to_string(step.how), step.outcome});
    }
    lib.needed.push_back(std::move(n));
  }
  return lib;
}

// What "defined nowhere" covered, so a reader knows which context was missing.
std::string nowhere_reason(const trace::TraceContext& ctx) {
  std::vector<std::string> searched;
  if (ctx.sources) searched.push_back(std::to_string(ctx.sources->files().size()) + " indexed source files");
  if (!ctx.sdk_home.empty()) searched.push_back("the SDK (" + ctx.sdk_home + ")");
  if (!ctx.cuda_home.empty()) searched.push_back("CUDA (" + ctx.cuda_home + ")");
  if (searched.empty()) return "no loaded object defines it (no sources, SDK or CUDA were given to trace it further)";
  std::string list;
  for (size_t i = 0; i < searched.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == searched.size() ? " or " : ", ") + searched[i];
  }
  return "no loaded object defines it, nor was it found in " + list;
}

bool wants_tracing(const UnresolvedSymbol& u, const loader::UnresolvedRef& ref) {
  if (u.cause) return false;  // a shared cause (a stale copy picked first) already explains it
  return u.classification == Classification::Unknown ||
         (u.classification == Classification::MissingLibrary && ref.miss == loader::Miss::NoDefinition);
}

}  // namespace

TraceResources::TraceResources(const TraceOptions& o, Report& report)
    : o_(o), errors_(report.errors), warnings_(report.warnings) {}
TraceResources::~TraceResources() = default;

const trace::TraceContext& TraceResources::context(const loader::Process* p) {
  if (!ready_) prepare();
  search_path_.reset();
  ctx_.search_path = nullptr;
  if (p) {
    // Other copies of loaded libraries and unlinked candidates: the directories the process used,
    // except the system directories (their libraries are in ld.so.cache's world, not the SDK's).
    std::set<std::string> dirs;
    for (const auto& obj : p->objects) {
      std::string dir = obj.path.substr(0, obj.path.rfind('/'));
      if (dir.rfind("/lib", 0) == 0 || dir.rfind("/usr/lib", 0) == 0) continue;
      dirs.insert(dir);
    }
    search_path_.emplace(sdk::index_libraries({dirs.begin(), dirs.end()}));
    ctx_.search_path = &*search_path_;
  }
  return ctx_;
}

std::string TraceResources::cache_file(const std::string& kind, const std::vector<std::string>& roots) const {
  if (o_.cache_dir.empty()) return "";
  std::string key;
  for (const auto& r : roots) key += r + "\n";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>{}(key));
  return o_.cache_dir + "/" + kind + "-" + hex + ".idx";
}

void TraceResources::prepare() {
  ready_ = true;
  if (!o_.build_dir.empty() || !o_.cmake_lists.empty()) {
    build_.emplace(build::read_build({o_.build_dir, o_.cmake_lists}));
    for (const auto& e : build_->errors) errors_.push_back(e);
    for (const auto& l : build_->lists)
      for (const auto& d : l.duplicates)
        warnings_.push_back(d + " is listed twice in " + l.variable + " (" + l.cmake_file + ":" + std::to_string(l.line) + ")");
    ctx_.build = &*build_;
  }
  ctx_.porting_dir = o_.porting_dir;
  if (ctx_.porting_dir.empty() && build_) {
    if (auto it = build_->cache.find("GENERATED_PORTING_DIR"); it != build_->cache.end()) ctx_.porting_dir = it->second;
  }
  ctx_.porting_dir = ctx_.porting_dir.empty() ? "" : build::normalize_path(ctx_.porting_dir);
  for (const auto& r : o_.source_roots) ctx_.source_roots.push_back(build::normalize_path(r));
  std::vector<std::string> roots;
  if (!ctx_.porting_dir.empty()) roots.push_back(ctx_.porting_dir);
  roots.insert(roots.end(), ctx_.source_roots.begin(), ctx_.source_roots.end());
  if (!roots.empty()) {
    // The build directory's generated headers (config.h, export headers) define namespace macros.
    std::vector<std::string> macro_roots;
    if (!o_.build_dir.empty()) macro_roots.push_back(build::normalize_path(o_.build_dir));
    sources_.emplace(source::SourceIndex::build({roots, cache_file("sources", roots)}, nullptr, macro_roots));
    ctx_.sources = &*sources_;
  }
  if (!o_.mapping.empty()) {
    auto m = backend::load_any_map(o_.mapping);
    if (m) {
      mapping_.emplace(std::move(m).value());
      ctx_.mapping = &*mapping_;
    } else {
      errors_.push_back(m.error());
    }
  }
  ctx_.sdk_home = o_.sdk_home;
  ctx_.backend = &o_.backend;
  ctx_.cuda_home = o_.cuda_home;
  if (!o_.sdk_home.empty()) {
    ctx_.load_sdk = [this] {
      const backend::Backend& b = o_.backend;
      sdk_.emplace(sdk::index_sdk({.home = o_.sdk_home,
                                   .header_cache = cache_file("sdk-headers-" + b.name, {o_.sdk_home}),
                                   .include_dirs = b.include_dirs,
                                   .library_dirs = b.library_dirs,
                                   .library_prefixes = b.library_prefixes,
                                   .index_archives = b.index_archives}));
      return &*sdk_;
    };
  }
  if (!o_.cuda_home.empty()) {
    ctx_.load_cuda = [this] {
      cuda_.emplace(sdk::index_sdk({o_.cuda_home, cache_file("cuda-headers", {o_.cuda_home})}));
      return &*cuda_;
    };
  }
}

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::vector<InputError>& errors) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    struct stat st;
    if (stat(in.c_str(), &st) != 0) {
      errors.push_back({in, std::string("cannot open: ") + std::strerror(errno)});
    } else if (S_ISDIR(st.st_mode)) {
      size_t before = files.size();
      collect_dir(in, files);
      if (files.size() == before) errors.push_back({in, "no ELF shared object or executable in this directory"});
    } else {
      files.push_back(in);
    }
  }
  return files;
}

Report run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options) {
  Report report;
  TraceResources resources(options.trace, report);
  run_linkcheck(inputs, options, resources, report);
  return report;
}

void run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options, TraceResources& resources,
                   Report& report) {
  std::set<std::string> reported;
  // The SDK's copies of a library count as candidates when a stale copy is picked instead.
  loader::LoaderEnv env = options.env;
  if (!options.trace.sdk_home.empty())
    for (const auto& sub : options.trace.backend.library_dirs) env.candidate_dirs.push_back(options.trace.sdk_home + "/" + sub);
  loader::ObjectCache objects;  // each library is read once per run, however many inputs need it
  const std::vector<std::string> files = expand_inputs(inputs, report.errors);
  for (const auto& file : files) {
    // Pass 1+2: read the ELF file and emulate the loader's mapping phase (with one input, nothing
    // is read twice: the cache would only cost a copy of every object).
    auto process = loader::load_process(file, env, files.size() > 1 ? &objects : nullptr);
    if (!process) {
      report.errors.push_back(process.error());
      continue;
    }
    std::vector<int> checked;
    if (options.closure) {
      for (size_t i = 0; i < process.value().objects.size(); ++i) checked.push_back(static_cast<int>(i));
    } else {
      checked.push_back(process.value().target);
    }
    // The checked objects' relocations say which names ld.so would look up; every object is looked
    // up through its own hash table.
    loader::read_symbol_tables(process.value(), checked);
    const loader::Process& p = process.value();
    for (const auto& e : p.errors) report.errors.push_back(e);

    // Pass 3: bind every relocated reference in the global scope; check version requirements.
    loader::BindOutcome binding = loader::bind(p, checked);

    // Pass 4+5: demangle and classify, per referencing library.
    std::map<int, LibraryReport> libs;
    for (int i : checked) libs.emplace(i, report_object(p, i));
    std::vector<std::pair<const loader::UnresolvedRef*, UnresolvedSymbol*>> open;
    for (const auto& ref : binding.unresolved) {
      const auto sym = p.objects[ref.object].elf.dynamic_symbol(ref.symbol_index);
      UnresolvedSymbol u;
      u.symbol = std::string(ref.name);
      u.demangled = demangle::demangle(ref.name);
      if (!ref.version.empty()) u.version = std::string(ref.version);
      u.type = type_name(sym.type);
      u.binding = sym.binding == elf::Binding::Weak ? "weak" : "global";
      u.referenced_by.push_back({p.objects[ref.object].path, std::nullopt, std::nullopt, std::nullopt});
      classify_loader_miss(p, ref, u);
      libs[ref.object].unresolved.push_back(std::move(u));
    }
    for (const auto& mv : binding.missing_versions) {
      if (mv.weak) continue;  // glibc: a weak version reference only warns
      libs[mv.object].missing_versions.push_back({mv.version, mv.file, p.objects[mv.provider].path});
    }
    // Pointers into libs are stable from here on (no more insertions).
    std::map<int, size_t> next;
    for (const auto& ref : binding.unresolved) open.push_back({&ref, &libs[ref.object].unresolved[next[ref.object]++]});
    find_unexported(p, open);

    // Pass: stale copies - another candidate for a loaded soname has what the picked copy lacks.
    std::vector<trace::OpenVersion> open_versions;
    {
      std::map<int, size_t> next_version;
      for (const auto& mv : binding.missing_versions) {
        if (mv.weak) continue;
        open_versions.push_back({&mv, &libs[mv.object].missing_versions[next_version[mv.object]++]});
      }
    }
    trace::find_shadowing(p, open, open_versions, report.causes);

    // Pass: where each symbol is referenced in the library's source (DWARF call sites), and which
    // ones are variables.
    for (auto& [index, lib] : libs) {
      if (lib.unresolved.empty()) continue;
      std::set<std::string> names;
      for (const auto& u : lib.unresolved) names.insert(u.symbol);
      auto refs = dwarf::references(p.objects[index].path, names);
      for (auto& u : lib.unresolved) {
        // An undefined reference carries no type in .dynsym; the library's DWARF knows a variable.
        if (u.type == "notype" && refs.variables.count(u.symbol)) u.type = "object";
        auto it = refs.calls.find(u.symbol);
        if (it == refs.calls.end() || it->second.empty()) continue;
        u.referenced_by.clear();
        for (const auto& site : it->second) {
          u.referenced_by.push_back({lib.path, site.function.empty() ? std::nullopt : std::optional<std::string>(site.function),
                                     site.file.empty() ? std::nullopt : std::optional<std::string>(site.file),
                                     site.line > 0 ? std::optional<int>(site.line) : std::nullopt});
        }
      }
    }

    // Pass 6: trace what the loader could not explain to its origin, and plan the fix.
    bool any = false;
    for (auto& [ref, u] : open) any |= wants_tracing(*u, *ref);
    if (any) {
      const trace::TraceContext& ctx = resources.context(&p);
      std::vector<UnresolvedSymbol*> unknown;
      for (auto& [ref, u] : open) {
        if (!wants_tracing(*u, *ref)) continue;
        trace::trace_symbol(&p, ref->object, ctx, *u);
        if (u->classification == Classification::Unknown && !u->origin) {
          u->reason = nowhere_reason(ctx);
          unknown.push_back(u);
        } else if (u->classification == Classification::Unknown) {
          unknown.push_back(u);  // a template found in the sources: checked for a missing instantiation
        }
      }
      // Pass (--confirm): what text matching left unsettled, the real compiler decides.
      if (options.trace.confirm) {
        std::vector<UnresolvedSymbol*> all;
        for (auto& [ref, u] : open) all.push_back(u);
        confirm::confirm_symbols(ctx, all, {.build_dir = options.trace.build_dir, .cache_dir = options.trace.cache_dir,
                                            .budget_seconds = options.trace.confirm_budget, .jobs = 0}, report.warnings);
        std::erase_if(unknown, [](const UnresolvedSymbol* u) { return u->classification != Classification::Unknown; });
      }
      // Pass: symbols the host program provides (the Python C API from the interpreter).
      unknown = trace::find_host_symbols(unknown, report.causes);
      // Pass: near misses among the loaded definitions (ABI drift, extern "C", namespace moves).
      trace::suggest(p, unknown, ctx.sources);
      trace::filter_suggestions(unknown);
    }

    // Pass 7: report, in load order, symbols sorted by mangled name.
    for (int i : checked) {
      auto& lib = libs[i];
      if (!reported.insert(lib.path).second) continue;
      std::stable_sort(lib.unresolved.begin(), lib.unresolved.end(), [](const auto& a, const auto& b) {
        return std::tie(a.symbol, a.version) < std::tie(b.symbol, b.version);
      });
      report.libraries.push_back(std::move(lib));
    }
  }
}

Report explain_symbol(const std::string& symbol, const std::vector<std::string>& inputs, const LinkcheckOptions& options) {
  // With libraries: their report, narrowed to that symbol (mangled or demangled spelling).
  if (!inputs.empty()) {
    Report full = run_linkcheck(inputs, options);
    for (auto& lib : full.libraries) {
      std::vector<UnresolvedSymbol> keep;
      for (auto& u : lib.unresolved)
        if (u.symbol == symbol || u.demangled == symbol) keep.push_back(std::move(u));
      lib.unresolved = std::move(keep);
      lib.needed.erase(std::remove_if(lib.needed.begin(), lib.needed.end(), [](const auto& n) { return n.path.has_value(); }),
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
    std::erase_if(full.causes, [&](const Cause& c) { return !used.count(c.id); });
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
    u.type = "notype";
    u.binding = "global";
    u.reason = "not found in the sources, the SDK or CUDA";
    trace::trace_symbol(nullptr, -1, resources.context(nullptr), u);
    lib.unresolved.push_back(std::move(u));
  }
  report.libraries.push_back(std::move(lib));
  return report;
}

}  // namespace mlc
