// The passes that diagnose one input after its binding, in order (diagnose), and those of the run after
// every input (the packages' own imports, the owners). Each takes the run and the input.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <tbb/parallel_for.h>

#include "common/paths.h"
#include "common/phase_times.h"
#include "confirm/confirm.h"
#include "demangle/demangle.h"
#include "host/host_load.h"
#include "installed/installed.h"
#include "loader/program.h"
#include "pipeline/run.h"
#include "python/c_api.h"
#include "python/hosting.h"
#include "python/package.h"
#include "report/said.h"
#include "trace/causes.h"
#include "trace/loader_miss.h"
#include "trace/suggest.h"
#include "trace/trace.h"
#include "verdict/verdict.h"

namespace mlc::pipeline {
namespace {

LibraryReport report_object(const loader::Process& p, int index) {
  const auto& o = p.objects[index];
  LibraryReport lib;
  lib.path = o.path;
  lib.soname = o.elf.soname;
  for (const auto& need : o.needed) {
    if (need.object >= 0) {
      const auto& found = p.objects[need.object];
      // A name satisfied by an already-loaded object reports how that object was found.
      auto how = need.how == loader::FoundHow::AlreadyLoaded ? found.how : need.how;
      lib.needed.push_back(
          NeededLibrary{.name = need.name, .path = found.path, .how = how, .searched = {}, .search = {}});
      continue;
    }
    NeededLibrary n{.name = need.name, .path = std::nullopt, .searched = {}, .search = {}};
    if (!need.refused.empty()) n.refused = need.refused;
    for (const auto& step : need.searched) {
      std::string where = step.path;
      if (step.how != loader::FoundHow::LdSoCache && step.how != loader::FoundHow::LdSoConf &&
          step.path.front() != '(') {
        where = step.path.substr(0, step.path.rfind('/'));
      }
      n.searched.push_back(where);
      n.search.push_back({.path = step.path, .how = step.how, .outcome = step.outcome});
    }
    lib.needed.push_back(std::move(n));
  }
  return lib;
}

}  // namespace

environment::OwnerSources owner_sources(const LinkcheckOptions& options) {
  environment::OwnerSources sources{
      .dpkg_dir = options.dpkg_dir, .sdk_homes = {}, .cache_dir = options.trace.cache_dir};
  if (!options.trace.sdk_home.empty()) sources.sdk_homes.push_back(options.trace.sdk_home);
  if (!options.trace.cuda_home.empty()) sources.sdk_homes.push_back(options.trace.cuda_home);
  return sources;
}

void add_owners(Run& run, environment::OwnerPrefetch& prefetched) {
  Report& report = run.report;
  std::vector<std::string> paths;
  for (const auto& lib : report.libraries) {
    paths.push_back(lib.path);
    for (const auto& n : lib.needed)
      if (n.path) paths.push_back(*n.path);
  }
  std::string torch_init;
  if (report.python && report.python->torch_path)
    paths.push_back(torch_init = *report.python->torch_path + "/__init__.py");
  // Each path once: a closure names a shared library as needed by dozens of others (libtorch_cpu's:
  // 1,500 paths, 290 distinct, each probed for dist-info and conda-meta up its ancestors).
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  auto owners = environment::find_owners(paths, owner_sources(run.options), &prefetched);
  for (auto& lib : report.libraries) {
    if (auto it = owners.find(lib.path); it != owners.end()) lib.owner = it->second;
    for (auto& n : lib.needed)
      if (auto it = n.path ? owners.find(*n.path) : owners.end(); it != owners.end()) n.owner = it->second;
  }
  if (auto it = owners.find(torch_init); it != owners.end()) report.python->torch_owner = it->second;
}

bool binds_in_another_load(const InputCheck& in) {
  const loader::Process& p = in.process;
  const int root = p.objects[p.target].root;
  return root != p.target && root >= 0;
}

AloneLoad prepare_alone(Run& run, const InputCheck& in) {
  const loader::Process& p = in.process;
  AloneLoad alone{.file = p.objects[p.target].path, .env = run.env};
  alone.env.with.clear();
  alone.env.with_local.clear();
  if (!in.plan.host.empty()) alone.env.with.push_back(in.plan.host);
  // The load alone reads no file again and stats no path again: the run's cache answers the stats the
  // import's load asked, and, where it keeps no objects (one input), is handed that load's objects.
  if (!run.objects->keeps_objects())
    for (const auto& o : p.objects)
      if (o.ino != 0) run.objects->seed(o.dev, o.ino, o.elf);
  return alone;
}

std::optional<std::vector<std::string>> bind_alone(Run& run, const AloneLoad& alone) {
  auto own = loader::load_process(alone.file, alone.env, run.objects);
  if (!own) return std::nullopt;
  loader::read_symbol_tables(*own, {own->target}, run.relocations);
  const loader::BindOutcome outcome = loader::bind(*own, {own->target}, {}, run.bindings);
  std::vector<std::string> names;
  names.reserve(outcome.unresolved.size());
  for (const auto& ref : outcome.unresolved) names.emplace_back(ref.name);
  return names;
}

namespace {

// Each look-up not in the report yet, by (library, kind, name); `told` indexes the report's (Run::told).
void add_runtime_lookups(std::vector<RuntimeLookup>&& found, std::unordered_multimap<size_t, size_t>& told,
                         Report& report) {
  auto& out = report.runtime_lookups;
  out.reserve(out.size() + found.size());
  const auto same = [](const RuntimeLookup& a, const RuntimeLookup& b) {
    return a.kind == b.kind && a.name == b.name && a.library == b.library;
  };
  for (auto& r : found) {
    const size_t key = std::hash<std::string_view>{}(r.library) * 31 + static_cast<size_t>(r.kind) * 7 +
                       std::hash<std::string_view>{}(r.name);
    const auto [from, to] = told.equal_range(key);
    if (std::any_of(from, to, [&](const auto& e) { return same(out[e.second], r); })) continue;
    told.emplace(key, out.size());
    out.push_back(std::move(r));
  }
}

// The other objects the named file's load makes of: what it brings in, and what the import of torch done
// first brings in (either failing fails the file's import).
std::vector<std::string> load_objects(const InputCheck& in) {
  std::vector<std::string> out;
  const auto& p = in.process;
  for (size_t i = 0; i < p.objects.size(); ++i) {
    const auto& o = p.objects[i];
    if (static_cast<int>(i) == p.target || o.root < 0) continue;
    bool imported_first =
        std::find(in.import_roots.begin(), in.import_roots.end(), p.objects[o.root].path) != in.import_roots.end();
    if (o.root == p.target || imported_first) out.push_back(o.path);
  }
  return out;
}

// The import of torch the file was checked after, as the report says it.
std::optional<ImportedAfter> imported_after(const python::ImportPlan& plan) {
  if (!plan.torch || !plan.torch->torch) return std::nullopt;
  const auto& t = *plan.torch;
  ImportedAfter out{.torch = t.torch->dir,
                    .version = t.torch->version.empty() ? std::nullopt : std::optional<std::string>(t.torch->version),
                    .reason = t.reason,
                    .evidence = t.evidence};
  return out;
}

// The version of the interpreter that imports the input: --python's answer, else what its files say.
std::string host_version(const InputCheck& in, const LinkcheckOptions& options) {
  if (in.asked) return options.python->version;
  return in.host ? in.host->version : "";
}

// The interpreter's own extension suffix: its version, glibc's multiarch of the file's machine (the loader
// is glibc's), and its build's ABI flags, by its program's name (python3.13t, python3.11d).
struct OwnSuffix {
  std::string version, platform, flags;
};

OwnSuffix own_suffix(const InputCheck& in, const LinkcheckOptions& options) {
  const auto& target = in.process.objects[in.process.target];
  OwnSuffix out{.version = host_version(in, options),
                .platform = loader::multiarch_for(target.elf.machine, target.elf.is_64),
                .flags = ""};
  const std::string program = base_name(in.plan.host);
  if (const size_t digits = program.find_last_of("0123456789");
      digits != std::string::npos && program.find('.') != std::string::npos)
    out.flags = program.substr(digits + 1);
  return out;
}

// An extension module whose name's tag is another Python's than the interpreter importing it
// (cpython-311 under 3.12): that import never opens the file (python::interpreter_imports).
std::optional<python::ExtensionTag> tag_of_another_python(const InputCheck& in, const LinkcheckOptions& options) {
  if (in.plan.hosting != python::Hosting::ExtensionModule || in.plan.host.empty()) return std::nullopt;
  auto tag = python::extension_tag(in.process.objects[in.process.target].path);
  const OwnSuffix own = own_suffix(in, options);
  if (!tag || python::interpreter_imports(*tag, own.version, own.platform, own.flags)) return std::nullopt;
  if (!tag->platform.empty() && tag->platform != own.platform) tag->tag += "-" + tag->platform;
  return tag;
}

// The sibling the interpreter's import opens instead of the file (_core.cpython-311-...so beside _core.so).
std::string imported_instead(const InputCheck& in, const LinkcheckOptions& options) {
  if (in.plan.hosting != python::Hosting::ExtensionModule || in.plan.host.empty()) return "";
  const OwnSuffix own = own_suffix(in, options);
  return python::sibling_imported_instead(in.process.objects[in.process.target].path,
                                          python::extension_suffixes(own.version, own.platform, own.flags));
}

// A module's dotted name through its packages (Python's "No module named" names it so).
std::string module_name(const std::string& file) {
  std::string name = base_name(file);
  name = name.substr(0, name.find('.'));
  const auto chain = python::package_chain(file);
  for (auto it = chain.packages.rbegin(); it != chain.packages.rend(); ++it) name = base_name(*it) + "." + name;
  return name;
}

// One library report per checked object; one finding per unresolved reference, demangled and
// classified as the loader saw it; one per missing version node (glibc: a weak one only warns).
void collect_findings(Run& run, InputCheck& in) {
  const LinkcheckOptions& options = run.options;
  loader::BindOutcome& binding = in.binding;
  const loader::Process& p = in.process;
  for (int i : in.checked) {
    LibraryReport lib = report_object(p, i);
    const auto& o = p.objects[i];
    lib.role = i == p.target ? LibraryRole::Target : o.is_with ? LibraryRole::Preloaded : LibraryRole::Dependency;
    if (lib.role == LibraryRole::Dependency) lib.loaded_by = p.objects[p.target].path;
    // Part of the import of torch that importing the target does first: its failure is the target's.
    if (o.is_with && o.root >= 0 &&
        std::find(in.import_roots.begin(), in.import_roots.end(), p.objects[o.root].path) != in.import_roots.end())
      lib.loaded_by = p.objects[p.target].path;
    const std::string& sdk = options.trace.sdk_home;
    lib.in_sdk = !sdk.empty() && o.path.rfind(sdk + "/", 0) == 0;
    if (i == p.target) {
      lib.python_extension = python::is_extension_module(o.elf);
      lib.program = loader::is_program(o.elf);
      if (!in.plan.host.empty()) lib.host = in.plan.host;
      lib.needs_python_api = in.plan.needs_python_api;
      lib.imported_after = imported_after(in.plan);
      lib.load_objects = load_objects(in);
      if (!in.plan.plugin_of.empty()) lib.plugin_of = in.plan.plugin_of;
    }
    in.libs.emplace(i, std::move(lib));
  }
  for (auto& ref : binding.unresolved) {
    const auto sym = p.objects[ref.object].elf.dynamic_symbol(ref.symbol_index);
    UnresolvedSymbol u;
    u.symbol = std::string(ref.name);
    u.demangled = demangle::demangle(ref.name);
    if (!ref.version.empty()) u.version = std::string(ref.version);
    u.type = trace::symbol_type(sym.type);
    u.binding = sym.binding == elf::Binding::Weak ? ReferenceBinding::Weak : ReferenceBinding::Global;
    u.referenced_by.push_back({p.objects[ref.object].path, std::nullopt, std::nullopt, std::nullopt});
    trace::classify_loader_miss(p, ref, u);
    in.symbols.push_back({.ref = std::move(ref), .symbol = std::move(u)});
  }
  for (auto& mv : binding.missing_versions) {
    if (mv.weak) continue;
    MissingVersionFinding finding{mv.version, mv.file, p.objects[mv.provider].path};
    in.versions.push_back({.missing = std::move(mv), .finding = std::move(finding)});
  }
  // Loads that fail for another reason (loader::FailureKind): told with the object whose load fails,
  // or with the target when that object is not reported (a library loaded before it, the host's).
  auto failures = p.failures;
  failures.insert(failures.end(), binding.failures.begin(), binding.failures.end());
  // The interpreter's import never opens a module tagged for another Python: the first failure, Python's.
  if (auto tag = tag_of_another_python(in, options)) {
    const std::string& file = p.objects[p.target].path;
    failures.insert(failures.begin(), loader::LoadFailure{.kind = loader::FailureKind::ExtensionTag,
                                                          .object = p.target,
                                                          .file = file,
                                                          .symbol = "",
                                                          .facts = {.by = base_name(file),
                                                                    .provider = in.plan.host,
                                                                    .version = tag->version,
                                                                    .needed = tag->tag,
                                                                    .python = host_version(in, options),
                                                                    .module = module_name(file)}});
  }
  if (const std::string instead = imported_instead(in, options); !instead.empty()) {
    const std::string& file = p.objects[p.target].path;
    failures.insert(failures.begin(), loader::LoadFailure{.kind = loader::FailureKind::ShadowedModule,
                                                          .object = p.target,
                                                          .file = file,
                                                          .symbol = "",
                                                          .facts = {.by = base_name(file), .provider = instead}});
  }
  for (const auto& f : failures) {
    auto lib = in.libs.find(f.object);
    if (lib == in.libs.end()) lib = in.libs.find(p.target);
    if (lib == in.libs.end()) continue;
    lib->second.load_failures.push_back(
        {.kind = f.kind,
         .file = f.file,
         .symbol = f.symbol.empty() ? std::nullopt : std::optional<std::string>(f.symbol),
         .baselined = false,
         .facts = f.facts});
  }
}

// A shadowed symbol whose picked copy is this build's own product, re-traced through its sources.
void reclaim_own_build(Run& run, InputCheck& in) {
  if (run.options.trace.build_dir.empty() || std::none_of(in.symbols.begin(), in.symbols.end(), [](const auto& f) {
        return verdict::current(f.symbol) == Classification::Shadowed;
      }))
    return;
  trace::reclaim_own_build(in.process, in.symbols, run.resources.context(&in.process), run.report.causes);
}

// The places other versions of a missing library may be installed: the SDK's lib dirs, then the
// tool's (/usr/local/musa*, conda, venv).
void find_missing_libraries(Run& run, InputCheck& in) {
  const LinkcheckOptions& options = run.options;
  std::vector<installed::Place> places;
  for (const char* sub : {"/lib", "/lib64"})
    if (!options.trace.sdk_home.empty())
      places.push_back({.dir = options.trace.sdk_home + sub, .how = loader::FoundHow::Sdk});
  places.insert(places.end(), options.places.begin(), options.places.end());
  installed::find_missing_libraries(in.process, in.libs, in.symbols, places, run.files, run.env, run.report.causes);
}

// Each symbol the loader could not explain, traced by the FAQ's decision tree (src/trace). Returns
// those left unknown: defined nowhere (the reason then says where it looked), or a template found in
// the sources (checked later for a missing instantiation).
std::vector<UnresolvedSymbol*> trace_symbols(InputCheck& in, const trace::TraceContext& ctx) {
  std::vector<UnresolvedSymbol*> unknown;
  for (auto& [ref, u] : in.symbols) {
    if (!trace::wants_tracing(u, ref)) continue;
    trace::trace_symbol(&in.process, ref.object, ctx, u);
    if (verdict::current(u) == Classification::Unknown && !u.origin) say(u, trace::nowhere_reason(ctx, u));
    if (verdict::current(u) == Classification::Unknown) unknown.push_back(&u);
  }
  return unknown;
}

// What text matching left unsettled, the real compiler decides (src/confirm); `unknown` keeps only
// what it did not settle.
void confirm_findings(Run& run, InputCheck& in, const trace::TraceContext& ctx,
                      std::vector<UnresolvedSymbol*>& unknown) {
  const LinkcheckOptions& options = run.options;
  std::vector<UnresolvedSymbol*> all;
  for (auto& f : in.symbols) all.push_back(&f.symbol);
  confirm::confirm_symbols(ctx, all,
                           {.build_dir = options.trace.build_dir,
                            .cache_dir = options.trace.cache_dir,
                            .budget_compiles = options.trace.confirm_budget,
                            .jobs = 0,
                            .verbose = options.trace.confirm_verbose},
                           run.report.warnings);
  std::erase_if(unknown, [](const UnresolvedSymbol* u) { return verdict::current(*u) != Classification::Unknown; });
}

// The interpreter that is the main program of the input's process, with the objects it hosts (the target
// and what its load brought in); none for a plugin's program or a file Python does not load.
python::HostInterpreter hosting_interpreter(const Run& run, const InputCheck& in) {
  python::HostInterpreter h;
  if (in.plan.host.empty() || !in.plan.plugin_of.empty()) return h;
  h.path = in.plan.host;
  h.version = host_version(in, run.options);
  if (auto tag = tag_of_another_python(in, run.options)) {
    h.built_for_tag = tag->tag;
    h.built_for = tag->version;
  }
  const auto& p = in.process;
  for (const auto& o : p.objects)
    if (o.is_target || o.root == p.target) h.hosted.push_back(o.path);
  return h;
}

// Origin tracing and what refines it, for the findings the loader could not explain (none of it
// runs, and no index is built, when every miss is explained already).
void trace_origins(Run& run, InputCheck& in) {
  TraceResources& resources = run.resources;
  Report& report = run.report;
  const LinkcheckOptions& options = run.options;
  const loader::LoaderEnv& env = run.env;
  if (std::none_of(in.symbols.begin(), in.symbols.end(),
                   [](const auto& f) { return trace::wants_tracing(f.symbol, f.ref); }))
    return;
  // The import context (with --python, or a torch installed beside the target): torch's own libraries
  // and the target's package, read only if tracing gets that far (src/trace/import_context.h).
  std::optional<trace::ImportContext> import;
  auto read_import = [&]() -> const trace::ImportContext* {
    const std::string& target = in.process.objects[in.process.target].path;
    auto found = in.plan.torch && in.plan.torch->torch ? in.plan.torch->torch
                 : in.asked && run.python_torch        ? run.python_torch
                                                       : python::torch_beside(target);
    if (!in.asked && !found) return nullptr;
    import.emplace(trace::read_import_context(
        {.target = target, .torch_dir = found ? found->dir : "", .torch_version = found ? found->version : ""},
        in.process));
    return &*import;
  };
  const TraceOptions& t = options.trace;
  const bool trees_named =
      !t.build_dir.empty() || !t.source_roots.empty() || !t.cmake_lists.empty() || !t.porting_dir.empty();
  const auto inferred = trees_named ? std::nullopt : trace::dwarf_sources(in.process, in.symbols);
  const trace::TraceContext& ctx = resources.context(&in.process, read_import, inferred ? &*inferred : nullptr);
  // Where each should come from, its class and its fix.
  std::vector<UnresolvedSymbol*> unknown = trace_symbols(in, ctx);
  // (--confirm) the compiler's verdict on what text matching could not settle.
  if (options.trace.confirm) confirm_findings(run, in, ctx, unknown);
  // The Python C API the interpreter that hosts the file lacks (an extension built for a newer Python)...
  unknown = python::find_api_the_interpreter_lacks(unknown, hosting_interpreter(run, in), report.causes);
  // ... symbols the host program provides (the Python C API from the interpreter, when none hosts it)...
  const std::vector<UnresolvedSymbol*> before_host = unknown;
  unknown = trace::find_host_symbols(unknown, report.causes);
  // ... and what that interpreter's own load defines (libm's pow, for a module linked without -lm).
  unknown = host::find_host_load_symbols(before_host, unknown, in.host->executable, env, report.causes);
  // Near misses among the loaded definitions (ABI drift, extern "C", namespace moves).
  trace::suggest(in.process, unknown, ctx.sources);
  // ... and in the import context, for what no loaded object comes near (a library --as-needed dropped).
  if (std::any_of(unknown.begin(), unknown.end(),
                  [](const UnresolvedSymbol* u) { return verdict::current(*u) == Classification::Unknown; }))
    if (const auto* ic = ctx.import_context()) trace::suggest_in_import_context(*ic, unknown);
  trace::filter_suggestions(unknown);
  // A symbol a loaded library should own (its class, namespace or C prefix) but lacks: the
  // referencing object was built against another version of that library.
  installed::find_provider_mismatch(in.process, in.symbols, report.causes, ctx.build);
}

// A file the import of torch loads as part of torch/_C's closure binds in that load's scope, which may hold
// libraries it does not link itself (torch 2.x's libtorch_nvshmem uses libc10_cuda): the import works, so
// that is its verdict, but loading it alone fails, which is worth a warning. The file is loaded a second
// time as ctypes.CDLL would load it in a bare interpreter (bind_alone, beside the import's binding), and
// what that leaves undefined is named by the library the import's scope took it from.
void warn_scope_only(Run& run, const InputCheck& in) {
  if (!in.unresolved_alone || in.unresolved_alone->empty()) return;
  const loader::Process& p = in.process;
  for (const auto& f : in.symbols)
    if (f.ref.object == p.target) return;  // it fails in the import too: its findings say so
  for (const auto& v : in.versions)
    if (v.missing.object == p.target) return;
  std::set<std::string> providers;
  for (const auto& name : *in.unresolved_alone) {
    auto b = loader::bind_one(p, p.target, name);
    if (b.provider >= 0)
      providers.insert(p.objects[b.provider].elf.soname.empty() ? base_name(p.objects[b.provider].path)
                                                                : p.objects[b.provider].elf.soname);
  }
  if (providers.empty()) return;
  run.report.warnings.push_back(said::warning(
      said::LoadsOnlyInImport{.file = p.objects[p.target].path, .providers = {providers.begin(), providers.end()}}));
}

// The findings joined to their libraries, in load order, symbols sorted by mangled name. By default
// a dependency is listed only when its load fails (--closure lists every object); a library already
// reported for an earlier input is not listed again.
void report_findings(Run& run, InputCheck& in) {
  const LinkcheckOptions& options = run.options;
  std::set<std::string>& reported = run.reported;
  Report& report = run.report;
  for (auto& f : in.symbols) in.libs[f.ref.object].unresolved.push_back(std::move(f.symbol));
  for (auto& v : in.versions) in.libs[v.missing.object].missing_versions.push_back(std::move(v.finding));
  auto fails = [](const LibraryReport& lib) {
    return !lib.unresolved.empty() || !lib.missing_versions.empty() || lib.missing_libraries() > 0 ||
           !lib.load_failures.empty();
  };
  // A library checked in this process and loading here is no part of the file's failure, whatever
  // another input's listing of the same path says (found there without this loader's DT_RPATH):
  // report.cpp's part_of_load matches by path. One checked before with the same DT_NEEDED files stays.
  if (auto target = in.libs.find(in.process.target); target != in.libs.end()) {
    std::set<std::string> passing;  // checked here and loading: an earlier listing of the path says nothing
    for (int i : in.checked)
      if (i != in.process.target && !fails(in.libs[i])) passing.insert(in.libs[i].path);
    std::erase_if(target->second.load_objects, [&](const std::string& path) { return passing.count(path) > 0; });
  }
  for (int i : in.checked) {
    auto& lib = in.libs[i];
    // A dependency, or a library of the import of torch done first, is listed only when its load fails.
    bool loaded_for_target =
        lib.role == LibraryRole::Dependency || (lib.role == LibraryRole::Preloaded && lib.loaded_by);
    if (loaded_for_target && !options.closure && !fails(lib) &&
        std::none_of(lib.needed.begin(), lib.needed.end(),
                     [](const NeededLibrary& n) { return n.refused.has_value(); }))
      continue;
    // A library is reported once, unless it fails here and its earlier listing did not; a named file once
    // more as itself, when an earlier file's load reported it as a dependency: its own load is another
    // scope, and the file must have its verdict.
    const bool named = lib.role == LibraryRole::Target;
    const bool first = reported.insert(lib.path).second;
    const bool failing_again = fails(lib) && reported.insert("\r" + lib.path).second;
    if (!first && !failing_again && !(named && reported.insert("\n" + lib.path).second)) continue;
    if (named) reported.insert("\n" + lib.path);
    if (fails(lib)) reported.insert("\r" + lib.path);
    std::stable_sort(lib.unresolved.begin(), lib.unresolved.end(), [](const auto& a, const auto& b) {
      return std::tie(a.symbol, a.version) < std::tie(b.symbol, b.version);
    });
    report.libraries.push_back(std::move(lib));
  }
}

}  // namespace

// The passes after the binding, for one input, in order.
void diagnose(Run& run, InputCheck& in) {
  // Run-time look-ups: dlopen/dlsym string literals (read in the parallel stage), each told once per run;
  // the GPU stacks the load brings in decide later which drivers are the run's (src/runtime).
  std::optional<PhaseTime> step(std::in_place, "diagnose.collect");
  add_runtime_lookups(std::move(in.lookups), run.told, run.report);
  literals::add_gpu_stacks(in.process, run.gpu_stacks);
  // Demangle and classify at the loader's level: one finding per miss.
  collect_findings(run, in);
  // Unexported: a definition present only in a .symtab explains a missing one.
  step.emplace("diagnose.unexported");
  trace::find_unexported(in.process, in.symbols);
  step.emplace("diagnose.shadowing");
  // Stale copies: another candidate for a loaded soname has what the picked copy lacks (src/trace/causes).
  trace::find_shadowing(in.process, in.symbols, in.versions, run.report.causes);
  // Missing libraries: one cause per needed library found nowhere, with its other installed
  // versions; the symbols it would have provided are its, not traced further (src/installed).
  step.emplace("diagnose.missing");
  find_missing_libraries(run, in);
  step.emplace("diagnose.own-build");
  // The build's own product: a copy of it that lacks what an uncompiled source defines is a
  // missing source, not a search-path problem.
  reclaim_own_build(run, in);
  // Locate: where each symbol is referenced in the library's source (DWARF call sites), and which
  // ones are variables (src/dwarf).
  step.emplace("diagnose.locate");
  trace::locate_references(in.process, in.symbols);
  step.emplace("diagnose.trace");
  // Trace: origin, class and fix of what the loader could not explain; confirm, host symbols,
  // near misses, provider mismatches (src/trace, src/confirm, src/installed).
  trace_origins(run, in);
  step.emplace("diagnose.scope");
  // A file torch's import loads binds in that import's scope: loads, but not alone (a warning).
  warn_scope_only(run, in);
  // Decide: each finding's classification from its passes' claims (src/verdict).
  step.emplace("diagnose.resolve");
  for (auto& f : in.symbols) verdict::resolve(f.symbol);
  step.emplace("diagnose.report");
  // Report: the findings joined to their libraries, in load order.
  report_findings(run, in);
}

// Importing pkg.mod runs pkg/__init__.py first (and, depth first, the modules its module-level lines
// import): an extension module imported there that fails to load fails this import too, whatever this
// file's own load says. Known for the modules the run checks itself (a directory's, or those named).
void fail_with_package_imports(Run& run) {
  Report& report = run.report;
  std::set<std::string> failing;  // the named extension modules that fail
  for (const auto& lib : report.libraries) {
    // (a module its import never opens fails no import)
    if (lib.role == LibraryRole::Target && lib.python_extension && load_fails(report, lib) &&
        std::none_of(lib.load_failures.begin(), lib.load_failures.end(),
                     [](const auto& f) { return f.kind == loader::FailureKind::ShadowedModule; }))
      failing.insert(lib.path);
  }
  if (failing.empty()) return;
  // Each module that may fail so, with its package chain.
  std::optional<PhaseTime> step(std::in_place, "package.chains");
  std::vector<python::PackageChain> chains(report.libraries.size());
  for (size_t i = 0; i < report.libraries.size(); ++i) {
    const auto& lib = report.libraries[i];
    if (lib.role == LibraryRole::Target && lib.python_extension && !failing.count(lib.path) && lib.host)
      chains[i] = python::package_chain(lib.path);
  }
  // The walks of the packages not walked yet, in parallel (a venv's hundreds of packages were a serial
  // fifth of its run): each package is walked once, with the first of its modules' interpreter, as in
  // the report's order; they share the run's module look-ups (ImportCache guards its maps).
  struct Walk {
    python::PackageChain chain;
    std::vector<std::string> site_dirs;
    std::vector<python::ImportedFirst> found;
  };
  std::vector<Walk> walks;
  {
    std::set<std::string> listed;
    for (size_t i = 0; i < report.libraries.size(); ++i) {
      const auto& chain = chains[i];
      if (chain.packages.empty() || run.memo.imported_first.count(chain.packages.back()) ||
          !listed.insert(chain.packages.back()).second)
        continue;
      const python::Interpreter* host = host_for(report.libraries[i].path, run);
      walks.push_back({chain, host ? host->site_dirs : std::vector<std::string>{}, {}});
    }
    step.emplace("package.walks");
    tbb::parallel_for(size_t{0}, walks.size(), [&](size_t k) {
      PhaseTime t(PhaseTime::enabled() ? "package.walk:" + walks[k].chain.packages.back() : std::string(), 5.0);
      walks[k].found =
          python::extensions_imported_first(walks[k].chain, walks[k].site_dirs, "", 256, &run.memo.imports);
    });
    for (auto& w : walks) run.memo.imported_first.emplace(w.chain.packages.back(), std::move(w.found));
  }
  step.emplace("package.failures");
  for (size_t i = 0; i < report.libraries.size(); ++i) {
    auto& lib = report.libraries[i];
    if (chains[i].packages.empty()) continue;
    auto memo = run.memo.imported_first.find(chains[i].packages.back());
    for (const auto& e : memo->second) {
      if (e.module == lib.path || !failing.count(e.module)) continue;
      lib.load_failures.push_back({.kind = loader::FailureKind::PackageImport,
                                   .file = e.module,
                                   .symbol = std::nullopt,
                                   .baselined = false,
                                   .facts = loader::FailureFacts{.by = e.importer, .needed = e.module}});
      break;
    }
  }
}

}  // namespace mlc::pipeline
