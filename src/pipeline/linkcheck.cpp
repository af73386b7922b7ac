// The pass sequence, in one place (docs/contributing.md: "one list of passes").
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
#include "source/preprocessor.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "dwarf/references.h"
#include "installed/installed.h"
#include "environment/ownership.h"
#include "loader/binding.h"
#include "runtime/runtime_lookup.h"
#include "trace/causes.h"
#include "trace/suggest.h"
#include "trace/trace.h"

namespace mlc {
namespace {

// What the dynamic loader never loads, said with what to check instead: a relocatable object or a
// static archive has undefined symbols by design (the link resolves them), so no verdict on it is
// true, and "0 undefined symbols" would be a false all-clear. Empty for anything else.
std::string never_loaded(const std::string& path, const std::optional<elf::ElfIdent>& ident) {
  if (ident && ident->kind == elf::ObjectKind::Relocatable)
    return "a relocatable object (.o), which the dynamic loader never loads: check the shared library or "
           "executable it is linked into (nm -u lists its undefined symbols)";
  if (!ident && elf::is_archive(path))
    return "a static archive (.a), which the dynamic loader never loads: check the shared library or "
           "executable it is linked into (nm -u lists its members' undefined symbols)";
  return "";
}

std::optional<elf::ElfIdent> ident_of(const std::string& path) {
  auto ident = elf::read_ident(path);
  return ident ? std::optional<elf::ElfIdent>(ident.value()) : std::nullopt;
}

// Every ELF shared object or executable below dir. Symlinks (libfoo.so -> libfoo.so.1) are skipped:
// the file they name is listed itself. `unloadable` gets the first .o or .a seen (for the error when
// the directory holds nothing else).
void collect_dir(const std::string& dir, std::vector<std::string>& out, std::string& unloadable) {
  walk_tree(dir, [&](const std::string& path, const struct stat&) {
    auto ident = ident_of(path);
    if (ident && (ident->kind == elf::ObjectKind::SharedObject || ident->kind == elf::ObjectKind::Executable)) {
      out.push_back(path);
    } else if (unloadable.empty() && !never_loaded(path, ident).empty()) {
      unloadable = path;
    }
  }, WalkOptions{false, false});
}

SymbolType symbol_type(elf::SymbolType t) {
  switch (t) {
    case elf::SymbolType::Func:
    case elf::SymbolType::GnuIfunc: return SymbolType::Func;
    case elf::SymbolType::Object:
    case elf::SymbolType::Common: return SymbolType::Object;
    case elf::SymbolType::Tls: return SymbolType::Tls;
    default: return SymbolType::NoType;
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
      u.fix = Fix{FixKind::UseLibrary, {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "rebuild against the library that is loaded at run time, or load the one it was linked against"};
      break;
    case loader::Miss::HiddenVersion:
      u.classification = Classification::Hidden;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) +
                 " only under a hidden (non-default) version, invisible to an unversioned reference";
      u.fix = Fix{FixKind::ExportSymbol, {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "make the version the default (@@) in the provider's version script"};
      break;
    case loader::Miss::HiddenVisibility:
      u.classification = Classification::Hidden;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) + " with hidden or internal visibility";
      u.fix = Fix{FixKind::ExportSymbol, {}, {}, {}, lib_of(ref.near_definitions.front()),
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
      u->origin = Origin{obj.path, std::nullopt, OriginKind::Library, obj.path, std::nullopt};
      u->fix = Fix{FixKind::ExportSymbol, {}, {}, {}, obj.path,
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

// A Python extension module exports PyInit_<module> (the name before the first dot of its file).
bool is_python_extension(const loader::LoadedObject& o) {
  std::string file = o.path.substr(o.path.rfind('/') + 1);
  std::string init = "PyInit_" + file.substr(0, file.find('.'));
  std::vector<uint32_t> hits;
  o.elf.find_defined(init, elf::gnu_hash(init), hits);
  return !hits.empty();
}

bool wants_tracing(const UnresolvedSymbol& u, const loader::UnresolvedRef& ref) {
  if (u.cause) return false;  // a shared cause (a stale copy picked first) already explains it
  return u.classification == Classification::Unknown ||
         (u.classification == Classification::MissingLibrary && ref.miss == loader::Miss::NoDefinition);
}

// The process Python's import makes: the interpreter, then torch's _C extension (whose DT_NEEDED
// closure is torch's libraries, from where that torch loads them), then the --with libraries.
loader::LoaderEnv import_env(const loader::LoaderEnv& env, const environment::TorchInstall& torch, const std::string& file) {
  if (file.rfind(torch.dir + "/", 0) == 0) return env;  // torch's own files
  auto headers = elf::read_object(file, elf::ReadOptions{.relocations = false, .symbols = false});
  if (!headers || !environment::needs_torch(headers->needed, file)) return env;
  loader::LoaderEnv out = env;
  out.with.insert(out.with.begin() + (out.with.empty() ? 0 : 1), torch.extension);
  return out;
}

bool needs_torch_warning(const std::string& file) {
  auto headers = elf::read_object(file, elf::ReadOptions{.relocations = false, .symbols = false});
  return headers && environment::needs_torch(headers->needed, file);
}

PythonContext python_context(const environment::PythonEnv& py, const std::optional<environment::TorchInstall>& torch) {
  PythonContext c{.interpreter = py.interpreter, .executable = py.executable, .version = py.version,
                  .torch_path = std::nullopt, .torch_version = std::nullopt, .torch_owner = std::nullopt};
  if (torch) {
    c.torch_path = torch->dir;
    if (!torch->version.empty()) c.torch_version = torch->version;
  }
  return c;
}

void add_owners(Report& report, const LinkcheckOptions& options) {
  std::vector<std::string> paths;
  for (const auto& lib : report.libraries) {
    paths.push_back(lib.path);
    for (const auto& n : lib.needed)
      if (n.path) paths.push_back(*n.path);
  }
  std::string torch_init;
  if (report.python && report.python->torch_path) paths.push_back(torch_init = *report.python->torch_path + "/__init__.py");
  environment::OwnerSources sources{.dpkg_dir = options.dpkg_dir, .sdk_homes = {}};
  if (!options.trace.sdk_home.empty()) sources.sdk_homes.push_back(options.trace.sdk_home);
  if (!options.trace.cuda_home.empty()) sources.sdk_homes.push_back(options.trace.cuda_home);
  auto owners = environment::find_owners(paths, sources);
  for (auto& lib : report.libraries) {
    if (auto it = owners.find(lib.path); it != owners.end()) lib.owner = it->second;
    for (auto& n : lib.needed)
      if (auto it = n.path ? owners.find(*n.path) : owners.end(); it != owners.end()) n.owner = it->second;
  }
  if (auto it = owners.find(torch_init); it != owners.end()) report.python->torch_owner = it->second;
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
    build_.emplace(cmake::read_build({o_.build_dir, o_.cmake_lists}));
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
  ctx_.porting_dir = ctx_.porting_dir.empty() ? "" : cmake::normalize_path(ctx_.porting_dir);
  for (const auto& r : o_.source_roots) ctx_.source_roots.push_back(cmake::normalize_path(r));
  std::vector<std::string> roots;
  if (!ctx_.porting_dir.empty()) roots.push_back(ctx_.porting_dir);
  roots.insert(roots.end(), ctx_.source_roots.begin(), ctx_.source_roots.end());
  if (!roots.empty()) {
    // The build directory's generated headers (config.h, export headers) define namespace macros.
    std::vector<std::string> macro_roots;
    if (!o_.build_dir.empty()) macro_roots.push_back(cmake::normalize_path(o_.build_dir));
    // The build's -D/-U flags decide which #if branch of a config header defines a namespace macro.
    std::map<std::string, std::string> defines;
    for (const auto& c : confirm::read_compile_commands(o_.build_dir)) source::add_command_definitions(c.argv, defines);
    sources_.emplace(source::SourceIndex::build({.roots = roots, .cache_file = cache_file("sources", roots), .defines = defines},
                                                &source_stats_, macro_roots));
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
      std::string unloadable;
      collect_dir(in, files, unloadable);
      if (files.size() == before && unloadable.empty()) {
        errors.push_back({in, "no ELF shared object or executable in this directory"});
      } else if (files.size() == before) {
        errors.push_back({in, "no ELF shared object or executable in this directory, only relocatable objects or "
                              "static archives (such as " + unloadable + "), which the dynamic loader never loads: "
                              "check the shared library or executable they are linked into"});
      }
    } else if (std::string what = never_loaded(in, ident_of(in)); !what.empty()) {
      errors.push_back({in, what});
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
  std::set<std::string> reported, checked_before;
  // The SDK's copies of a library count as candidates when a stale copy is picked instead.
  loader::LoaderEnv env = options.env;
  if (!options.trace.sdk_home.empty())
    for (const auto& sub : options.trace.backend.library_dirs) env.candidate_dirs.push_back(options.trace.sdk_home + "/" + sub);
  loader::ObjectCache objects;  // each library is read once per run, however many inputs need it
  const std::vector<std::string> files = expand_inputs(inputs, report.errors);
  // Pass 0 (--python): the torch that interpreter imports, loaded first for extensions that need it.
  const auto torch = options.python ? environment::find_torch(*options.python) : std::nullopt;
  if (options.python) report.python = python_context(*options.python, torch);
  for (const auto& file : files) {
    // Pass 1+2: read the ELF file and emulate the loader's mapping phase (with one input, nothing
    // is read twice: the cache would only cost a copy of every object).
    const loader::LoaderEnv file_env = torch ? import_env(env, *torch, file) : env;
    if (options.python && !torch && needs_torch_warning(file))
      report.warnings.push_back(file + " needs torch, which " + options.python->executable + " does not import");
    auto process = loader::load_process(file, file_env, files.size() > 1 ? &objects : nullptr);
    if (!process) {
      report.errors.push_back(process.error());
      continue;
    }
    // Which objects are checked: what loading the file binds (default), everything (--closure), or
    // the file alone (--only-named). A dependency already reported for an earlier input of this run
    // is not checked again.
    std::vector<int> checked;
    const auto& objects_loaded = process.value().objects;
    for (size_t i = 0; i < objects_loaded.size(); ++i) {
      const auto& o = objects_loaded[i];
      bool target = static_cast<int>(i) == process.value().target;
      if (target || options.closure || (!options.only_named && !o.is_with && !checked_before.count(o.path)))
        checked.push_back(static_cast<int>(i));
    }
    // The checked objects' relocations say which names ld.so would look up; every object is looked
    // up through its own hash table.
    loader::read_symbol_tables(process.value(), checked);
    const loader::Process& p = process.value();
    for (const auto& e : p.errors) report.errors.push_back(e);

    // Pass 3: bind every relocated reference in the global scope; check version requirements.
    loader::BindOutcome binding = loader::bind(p, checked);
    // Pass: names looked up at run time (dlopen/dlsym string literals), each told once per run.
    for (auto& r : runtime::check_runtime_lookups(p, checked, file_env)) {
      bool told = std::any_of(report.runtime_lookups.begin(), report.runtime_lookups.end(), [&](const RuntimeLookup& t) {
        return t.library == r.library && t.kind == r.kind && t.name == r.name;
      });
      if (!told) report.runtime_lookups.push_back(std::move(r));
    }

    // Pass 4+5: demangle and classify, per referencing library.
    std::map<int, LibraryReport> libs;
    for (int i : checked) {
      LibraryReport lib = report_object(p, i);
      const auto& o = p.objects[i];
      lib.role = i == p.target ? "target" : o.is_with ? "preloaded" : "dependency";
      if (lib.role == "dependency") lib.loaded_by = p.objects[p.target].path;
      const std::string& sdk = options.trace.sdk_home;
      lib.in_sdk = !sdk.empty() && o.path.rfind(sdk + "/", 0) == 0;
      if (i == p.target) lib.python_extension = is_python_extension(o);
      libs.emplace(i, std::move(lib));
    }
    std::vector<std::pair<const loader::UnresolvedRef*, UnresolvedSymbol*>> open;
    for (const auto& ref : binding.unresolved) {
      const auto sym = p.objects[ref.object].elf.dynamic_symbol(ref.symbol_index);
      UnresolvedSymbol u;
      u.symbol = std::string(ref.name);
      u.demangled = demangle::demangle(ref.name);
      if (!ref.version.empty()) u.version = std::string(ref.version);
      u.type = symbol_type(sym.type);
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
    // Pass: what the build produces comes first - a copy of the build's own library that lacks a symbol
    // one of its uncompiled sources defines is a missing source, not a search-path problem.
    if (!options.trace.build_dir.empty() &&
        std::any_of(open.begin(), open.end(), [](const auto& o) { return o.second->classification == Classification::Shadowed; }))
      trace::reclaim_own_build(p, open, resources.context(&p), report.causes);

    // Pass: a needed library found nowhere is one cause, with the other versions of it installed;
    // the symbols it would have provided are its, not traced further.
    {
      std::vector<installed::Place> places;
      for (const char* sub : {"/lib", "/lib64"})
        if (!options.trace.sdk_home.empty()) places.push_back({options.trace.sdk_home + sub, "sdk"});
      places.insert(places.end(), options.places.begin(), options.places.end());
      installed::find_missing_libraries(p, libs, open, places, env, report.causes);
    }

    // Pass: where each symbol is referenced in the library's source (DWARF call sites), and which
    // ones are variables, of what size.
    for (auto& [index, lib] : libs) {
      if (lib.unresolved.empty()) continue;
      std::set<std::string> names;
      for (const auto& u : lib.unresolved) names.insert(u.symbol);
      auto refs = dwarf::references(p.objects[index].path, names);
      for (auto& u : lib.unresolved) {
        // An undefined reference carries no type in .dynsym; the library's DWARF knows a variable.
        if (u.type == SymbolType::NoType && refs.variables.count(u.symbol)) u.type = SymbolType::Object;
        if (auto v = refs.variables.find(u.symbol); v != refs.variables.end() && v->second > 0) u.size = v->second;
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
      // Pass: a symbol a loaded library should own (its class, namespace or C prefix) but lacks:
      // the referencing object was built against another version of that library.
      installed::find_provider_mismatch(p, open, report.causes);
    }

    // Pass 7: report, in load order, symbols sorted by mangled name.
    for (int i : checked) {
      auto& lib = libs[i];
      checked_before.insert(lib.path);
      // By default a dependency is listed only when its load fails (--closure lists every object).
      if (lib.role == "dependency" && !options.closure && lib.unresolved.empty() && lib.missing_versions.empty() &&
          lib.missing_libraries() == 0)
        continue;
      if (!reported.insert(lib.path).second) continue;
      std::stable_sort(lib.unresolved.begin(), lib.unresolved.end(), [](const auto& a, const auto& b) {
        return std::tie(a.symbol, a.version) < std::tie(b.symbol, b.version);
      });
      report.libraries.push_back(std::move(lib));
    }
  }
  // Pass 8: which package installed each library named (offline sources only).
  add_owners(report, options);
}

Report explain_symbol(const std::string& symbol, const std::vector<std::string>& inputs, const LinkcheckOptions& options) {
  // With libraries: their report, narrowed to that symbol (mangled or demangled spelling).
  if (!inputs.empty()) {
    Report full = run_linkcheck(inputs, options);
    full.runtime_lookups.clear();  // names looked up at run time answer no question about this symbol
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
    u.type = SymbolType::NoType;
    u.binding = "global";
    u.reason = "not found in the sources, the SDK or CUDA";
    trace::trace_symbol(nullptr, -1, resources.context(nullptr), u);
    lib.unresolved.push_back(std::move(u));
  }
  report.libraries.push_back(std::move(lib));
  return report;
}

}  // namespace mlc
