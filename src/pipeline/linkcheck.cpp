// The pass sequence, in one place (docs/contributing.md: "one list of passes").
#include "pipeline/linkcheck.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>

#include "backend/cuda_api.h"
#include "buildmodel/model.h"
#include "common/paths.h"
#include "common/phase_times.h"
#include "common/walk.h"
#include "confirm/confirm.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "dwarf/references.h"
#include "elf/resident.h"
#include "environment/ownership.h"
#include "host/host_load.h"
#include "host/program_host.h"
#include "host/python_api.h"
#include "host/python_host.h"
#include "installed/installed.h"
#include "loader/binding.h"
#include "loader/program.h"
#include "python/import_plan.h"
#include "python/interpreter.h"
#include "python/package.h"
#include "report/said.h"
#include "runtime/runtime_lookup.h"
#include "trace/causes.h"
#include "trace/finding.h"
#include "trace/loader_miss.h"
#include "trace/suggest.h"
#include "trace/trace.h"
#include "verdict/verdict.h"

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

// Names that no shared object or program is given (sources, Python, text and data): a directory's walk skips
// them without opening them. A name with none of these endings is identified by its first bytes.
bool never_elf(const std::string& path) {
  static const std::vector<std::string_view> kEndings = {
      ".py",    ".pyc", ".pyi", ".pyx", ".pxd", ".h",    ".hpp",  ".hh",  ".cuh",  ".c",   ".cc",
      ".cpp",   ".cu",  ".txt", ".md",  ".rst", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini",
      ".html",  ".css", ".js",  ".svg", ".png", ".jpg",  ".csv",  ".xml", ".pem",  ".mo",  ".po",
      ".typed", ".npz", ".npy", ".gz",  ".zip", ".whl",  ".pt",   ".pth", ".proto"};
  const std::string_view name(path.c_str() + path.rfind('/') + 1);
  return std::any_of(kEndings.begin(), kEndings.end(), [&](std::string_view e) { return name.ends_with(e); });
}

// Every ELF shared object or executable below dir. Symlinks (libfoo.so -> libfoo.so.1) are skipped:
// the file they name is listed itself. `unloadable` gets the first .o or .a seen (for the error when
// the directory holds nothing else).
void collect_dir(const std::string& dir, std::vector<std::string>& out, std::string& unloadable) {
  // A site directory holds tens of thousands of sources, text and data files: those are not opened. The
  // rest are walked and identified in parallel, then taken in the walk's (sorted) order.
  const std::vector<std::string> candidates = collect_tree(
      dir, [](const std::string& path, const struct stat& st) { return st.st_size >= 64 && !never_elf(path); },
      WalkOptions{false, false});
  enum class Kind { Loadable, Unloadable, Other };
  std::vector<Kind> kinds(candidates.size(), Kind::Other);
  tbb::parallel_for(size_t{0}, candidates.size(), [&](size_t i) {
    auto ident = ident_of(candidates[i]);
    if (ident && (ident->kind == elf::ObjectKind::SharedObject || ident->kind == elf::ObjectKind::Executable))
      kinds[i] = Kind::Loadable;
    else if (!never_loaded(candidates[i], ident).empty()) kinds[i] = Kind::Unloadable;
  });
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (kinds[i] == Kind::Loadable) out.push_back(candidates[i]);
    else if (kinds[i] == Kind::Unloadable && unloadable.empty()) unloadable = candidates[i];
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

// The loader's environment of a file's process (src/python/import_plan.h): the loads done before it (the
// interpreter, then what `import torch` loads: libtorch_global_deps with RTLD_GLOBAL, torch/_C with RTLD_LOCAL
// as every import), then the --with libraries.
loader::LoaderEnv planned_env(const loader::LoaderEnv& env, const python::ImportPlan& plan,
                              const std::vector<std::string>& unscoped) {
  loader::LoaderEnv out = env;
  // Before an extension module, --with libraries given without a scope are what Python's import of torch
  // loaded: RTLD_LOCAL (torch/_C's closure), not the RTLD_GLOBAL of LD_PRELOAD.
  if (plan.hosting == host::PythonHosting::ExtensionModule)
    for (const auto& w : unscoped)
      if (std::find(out.with_local.begin(), out.with_local.end(), w) == out.with_local.end())
        out.with_local.push_back(w);
  if (plan.loads.empty()) return out;
  out.with.clear();
  for (const auto& load : plan.loads) {
    out.with.push_back(load.path);
    if (!load.global) out.with_local.push_back(load.path);
  }
  out.with.insert(out.with.end(), env.with.begin(), env.with.end());
  return out;
}

PythonContext python_context(const environment::PythonEnv& py, const std::optional<environment::TorchInstall>& torch) {
  PythonContext c{.interpreter = py.interpreter,
                  .executable = py.executable,
                  .version = py.version,
                  .torch_path = std::nullopt,
                  .torch_version = std::nullopt,
                  .torch_owner = std::nullopt};
  if (torch) {
    c.torch_path = torch->dir;
    if (!torch->version.empty()) c.torch_version = torch->version;
  }
  return c;
}

environment::OwnerSources owner_sources(const LinkcheckOptions& options) {
  environment::OwnerSources sources{
      .dpkg_dir = options.dpkg_dir, .sdk_homes = {}, .cache_dir = options.trace.cache_dir};
  if (!options.trace.sdk_home.empty()) sources.sdk_homes.push_back(options.trace.sdk_home);
  if (!options.trace.cuda_home.empty()) sources.sdk_homes.push_back(options.trace.cuda_home);
  return sources;
}

void add_owners(Report& report, const LinkcheckOptions& options, environment::OwnerPrefetch& prefetched) {
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
  auto owners = environment::find_owners(paths, owner_sources(options), &prefetched);
  for (auto& lib : report.libraries) {
    if (auto it = owners.find(lib.path); it != owners.end()) lib.owner = it->second;
    for (auto& n : lib.needed)
      if (auto it = n.path ? owners.find(*n.path) : owners.end(); it != owners.end()) n.owner = it->second;
  }
  if (auto it = owners.find(torch_init); it != owners.end()) report.python->torch_owner = it->second;
}

}  // namespace

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
        errors.push_back({in,
                          "no ELF shared object or executable in this directory, only relocatable objects or "
                          "static archives (such as " +
                              unloadable +
                              "), which the dynamic loader never loads: "
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

namespace {

// One input's check: the process its load makes, the objects checked in it, and one finding per
// miss. The passes of run_linkcheck fill it in order; report_findings hands it to the report.
struct InputCheck {
  loader::LoaderEnv env;  // the loader's environment for this input's import
  loader::Process process;
  std::vector<int> checked;                     // indexes into process.objects
  std::map<int, LibraryReport> libs;            // per checked object: its needed entries and role
  std::vector<trace::SymbolFinding> symbols;    // one per unresolved reference, in binding order
  std::vector<trace::VersionFinding> versions;  // one per missing (non-weak) version node
  // The interpreter that imports it (its site directories, its version), and how that import loads it
  // (src/python): its host, and the import of torch done first.
  const python::InterpreterSites* host = nullptr;
  python::ImportPlan plan;
  // The loads of the import of torch when it comes first (libtorch_global_deps, torch/_C), else none.
  std::vector<std::string> import_roots;
};

// What every input of a run shares: the loader's environment, the host interpreter's site directories,
// the torch --python imports, the object cache.
struct RunContext {
  const LinkcheckOptions& options;
  loader::LoaderEnv env;
  python::InterpreterSites host;
  std::optional<environment::TorchInstall> python_torch;
  loader::ObjectCache* objects = nullptr;
  // What the import plans of the run's files share (it guards itself: the plans run in parallel).
  python::ImportMemo memo = {};
  // The interpreters of the environments the run's files are installed in, by program, and each directory's
  // (asked under the loads' lock: load_input).
  std::map<std::string, python::InterpreterSites> env_hosts = {};
  std::map<std::string, std::string> env_of_dir = {};
  // What each extension module an import loads first brings in (its load in its host), by name: the names
  // it answers to, each with its file's device and inode. Read once per run (under the loads' lock).
  std::map<std::string, std::map<std::string, std::pair<dev_t, ino_t>>> closure_of = {};
  // The file names two or more of the run's inputs share (a soname two packages vendor): only a file whose
  // load takes one of them, or misses a name, can be changed by what another package's import loads first.
  // Empty with one input, whose imports are always followed.
  std::set<std::string> shared_names = {};
  bool one_input = true;
};

// The interpreter that imports `file`: --python's; else the one of the venv or conda environment the file is
// installed in (a file under VENV runs in VENV's interpreter, not the python3 on PATH); else python3 on PATH.
const python::InterpreterSites* host_for(const std::string& file, RunContext& run) {
  if (run.options.python) return &run.host;
  const std::string dir = dir_name(file);
  auto known = run.env_of_dir.find(dir);
  if (known == run.env_of_dir.end()) known = run.env_of_dir.emplace(dir, python::environment_interpreter(file)).first;
  const std::string& exe = known->second;
  if (exe.empty()) return &run.host;
  auto it = run.env_hosts.find(exe);
  if (it == run.env_hosts.end()) it = run.env_hosts.emplace(exe, python::read_sites(exe)).first;
  return &it->second;
}

// The loader's environment of a run: the SDK's copies of a library count as candidates when a stale
// copy is picked instead.
loader::LoaderEnv run_env(const LinkcheckOptions& options) {
  loader::LoaderEnv env = options.env;
  if (!options.trace.sdk_home.empty())
    for (const auto& sub : options.trace.backend.library_dirs)
      env.candidate_dirs.push_back(options.trace.sdk_home + "/" + sub);
  return env;
}

// --python: the torch that interpreter imports, said in the report.
std::optional<environment::TorchInstall> import_context(const LinkcheckOptions& options, Report& report) {
  if (!options.python) return std::nullopt;
  auto torch = environment::find_torch(*options.python);
  report.python = python_context(*options.python, torch);
  return torch;
}

// What a loaded object's DT_NEEDED entries name in this process. Its dependencies' search depends on the
// objects that loaded it (a module's DT_RPATH is searched for its vendored library's dependencies), so
// a library checked for one input is checked again for another where they differ.
std::string needed_signature(const loader::Process& p, size_t i) {
  std::string out;
  for (const auto& n : p.objects[i].needed)
    out += (n.object >= 0       ? p.objects[static_cast<size_t>(n.object)].path
            : n.refused.empty() ? "-"
                                : "!" + n.refused) +
           '\n';
  return out;
}

// What loading the file binds (default), everything (--closure), or the file alone (--only-named).
// The import of the file includes the import of torch before it (`import_roots`: torch/_C and
// libtorch_global_deps): what those loads bring in is checked too, since a failure there fails the
// import first. A dependency an earlier input of this run checked is not checked again when its
// DT_NEEDED entries name the same files here (needed_signature).
std::vector<int> checked_objects(const loader::Process& p, const LinkcheckOptions& options,
                                 const std::map<std::string, std::string>& checked_before,
                                 const std::vector<std::string>& import_roots) {
  std::vector<int> checked;
  for (size_t i = 0; i < p.objects.size(); ++i) {
    const auto& o = p.objects[i];
    bool target = static_cast<int>(i) == p.target;
    bool imported_first = o.root >= 0 && std::find(import_roots.begin(), import_roots.end(), p.objects[o.root].path) !=
                                             import_roots.end();
    if (target || options.closure ||
        (!options.only_named && (!o.is_with || imported_first) &&
         (!checked_before.count(o.path) || checked_before.at(o.path) != needed_signature(p, i))))
      checked.push_back(static_cast<int>(i));
  }
  return checked;
}

// How Python's import would load the file (src/python/import_plan.h), from its headers.
// `headers`: the file's, read_headers_for_plan's.
using PlanHeaders = Result<elf::ElfObject>;
PlanHeaders read_headers_for_plan(const std::string& file) {
  return elf::read_object(file, elf::ReadOptions{.relocations = false, .symbols = true, .lookup_only = true});
}
python::ImportPlan import_plan(const std::string& file, const PlanHeaders& headers,
                               const python::InterpreterSites* host, RunContext& run, Report& report,
                               bool follow_imports = false) {
  const auto& options = run.options;
  python::ImportQuestion q{.file = file,
                           .needed = headers ? headers->needed : std::vector<std::string>{},
                           .hosting = headers ? host::python_hosting(headers.value()) : host::PythonHosting::None,
                           .program = headers && loader::is_program(headers.value()),
                           .python = options.python ? &*options.python : nullptr,
                           .python_torch = run.python_torch ? &*run.python_torch : nullptr,
                           .host = host,
                           .memo = &run.memo,
                           .follow_imports = follow_imports};
  python::ImportPlan plan = python::plan_import(q);
  // Not Python's: a plugin of a program that exports what it uses is loaded into that program.
  if (plan.loads.empty() && headers && !q.program && q.hosting == host::PythonHosting::None)
    if (auto program = host::plugin_host(file, headers.value(), {.sysroot = run.env.sysroot})) {
      plan.host = plan.plugin_of = *program;
      plan.loads.push_back({.path = *program, .global = true});
    }
  if (plan.torch && !plan.torch->torch)
    report.warnings.push_back(said::TorchNotFound{.file = file,
                                                  .reason = plan.torch->reason,
                                                  .evidence = plan.torch->evidence,
                                                  .python = options.python ? options.python->executable : "",
                                                  .host = host->executable}
                                  .words());
  return plan;
}

// The process the file's import makes, the objects checked in it, and their symbol tables (the
// checked objects' relocations say which names ld.so would look up; every object is looked up
// through its own hash table). Empty, with the error in the report, when the file cannot be loaded.
// The names a process's objects answer to (sonames and the names requested), with their files; and the names
// requested that nothing answered.
struct LoadedNames {
  std::map<std::string, std::pair<dev_t, ino_t>> found;
  std::set<std::string> missing;
};
LoadedNames loaded_names(const loader::Process& p) {
  LoadedNames out;
  for (const auto& o : p.objects) {
    if (o.host) continue;
    if (!o.elf.soname.empty()) out.found.emplace(o.elf.soname, std::make_pair(o.dev, o.ino));
    for (const auto& n : o.names) out.found.emplace(n, std::make_pair(o.dev, o.ino));
    for (const auto& need : o.needed)
      if (need.object < 0) out.missing.insert(need.expanded.empty() ? need.name : need.expanded);
  }
  return out;
}

// The extension modules the package chain's imports load first change the file's process only through the
// names they load (glibc matches a DT_NEEDED against every loaded object's names, whatever its scope; an
// RTLD_LOCAL module's symbols bind nothing loaded after it): one matters when its load answers to a name the
// file's own load took from another file, or could not find. Only those are loaded before the file; the rest
// would cost a load each for every file of the package and change nothing it binds.
std::vector<python::PriorLoad> prior_loads_that_matter(const python::ImportPlan& plan, const loader::Process& alone,
                                                       RunContext& run) {
  std::vector<python::PriorLoad> out;
  const LoadedNames own = loaded_names(alone);
  for (const auto& load : plan.loads) {
    if (load.imported_by.empty()) continue;
    auto it = run.closure_of.find(load.path);
    if (it == run.closure_of.end()) {
      loader::LoaderEnv env = run.env;
      env.with.clear();
      env.with_local.clear();
      if (!plan.host.empty()) env.with.push_back(plan.host);
      auto p = loader::load_process(load.path, env, run.objects);
      it = run.closure_of.emplace(load.path, p ? loaded_names(*p).found : decltype(it->second){}).first;
    }
    const bool matters = std::any_of(it->second.begin(), it->second.end(), [&](const auto& entry) {
      const auto& [name, file] = entry;
      auto mine = own.found.find(name);
      return own.missing.count(name) > 0 || (mine != own.found.end() && mine->second != file);
    });
    if (matters) out.push_back(load);
  }
  return out;
}

// Whether what another package's import loads first can change this process: it misses a name, or takes a
// file whose name another input shares (with one input, always).
bool may_be_changed_by_imports(const loader::Process& p, const RunContext& run) {
  if (run.one_input) return true;
  for (const auto& o : p.objects) {
    if (o.host) continue;
    for (const auto& need : o.needed)
      if (need.object < 0) return true;
    if (static_cast<int>(&o - p.objects.data()) != p.target && run.shared_names.count(base_name(o.path))) return true;
  }
  return false;
}

// The loads of a tree's inputs run in parallel, their plans too: the run's memo of imports guards itself
// (python::ImportMemo), and what else they share (the interpreters by directory, the closures of prior
// loads) is asked under `shared`. Which objects each input checks is decided afterwards, in input order
// (checked_objects).
std::optional<InputCheck> load_input(const std::string& file, RunContext& run, std::mutex& shared, Report& report) {
  InputCheck in;
  const PlanHeaders headers = read_headers_for_plan(file);
  {
    std::lock_guard<std::mutex> lock(shared);
    in.host = host_for(file, run);
  }
  in.plan = [&] {
    PhaseTime t("plan");
    return import_plan(file, headers, in.host, run, report);
  }();
  if (in.plan.hosting == host::PythonHosting::ExtensionModule)
    for (const auto& w : run.options.with_unscoped)
      if (std::find(report.with_as_import.begin(), report.with_as_import.end(), w) == report.with_as_import.end())
        report.with_as_import.push_back(w);
  in.env = planned_env(run.env, in.plan, run.options.with_unscoped);
  auto process = [&] {
    PhaseTime t("load");
    return loader::load_process(file, in.env, run.objects);
  }();
  // The extension modules the package chain's imports load first: followed only where they can change this
  // file's process, and loaded only where they do (prior_loads_that_matter).
  std::vector<python::PriorLoad> priors;
  if (process && in.plan.hosting != host::PythonHosting::None && may_be_changed_by_imports(*process, run)) {
    PhaseTime t("plan.imports");
    Report again;  // the plan's warnings are the first plan's, already told
    for (auto& l : import_plan(file, headers, in.host, run, again, true).loads)
      if (!l.imported_by.empty()) priors.push_back(std::move(l));
  }
  if (process && !priors.empty()) {
    python::ImportPlan with_priors = in.plan;
    with_priors.loads.insert(with_priors.loads.end(), priors.begin(), priors.end());
    std::vector<python::PriorLoad> matter;
    {
      std::lock_guard<std::mutex> lock(shared);  // the closures of prior loads, read once per run
      matter = prior_loads_that_matter(with_priors, *process, run);
    }
    if (!matter.empty()) {
      in.plan.loads.insert(in.plan.loads.end(), matter.begin(), matter.end());
      in.env = planned_env(run.env, in.plan, run.options.with_unscoped);
      PhaseTime t("load");
      process = loader::load_process(file, in.env, run.objects);
    }
  }
  if (!process) {
    report.errors.push_back(process.error());
    return std::nullopt;
  }
  in.process = std::move(process).value();
  // A file the import of torch already loaded (torch/lib's libraries) is that object, found under the name
  // the loader took; the report names it as the user did.
  in.process.objects[in.process.target].path = file;
  // torch/_C and, when loaded, libtorch_global_deps: either failing fails `import torch`.
  for (const auto& load : in.plan.loads)
    if (load.path != in.plan.host) in.import_roots.push_back(load.path);
  return in;
}

// `told` holds (library, kind, name) of what the report has.
void add_runtime_lookups(std::vector<RuntimeLookup>&& found,
                         std::set<std::tuple<std::string, LookupKind, std::string>>& told, Report& report) {
  for (auto& r : found)
    if (told.emplace(r.library, r.kind, r.name).second) report.runtime_lookups.push_back(std::move(r));
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
  if (options.python) return options.python->version;
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
  if (in.plan.hosting != host::PythonHosting::ExtensionModule || in.plan.host.empty()) return std::nullopt;
  auto tag = python::extension_tag(in.process.objects[in.process.target].path);
  const OwnSuffix own = own_suffix(in, options);
  if (!tag || python::interpreter_imports(*tag, own.version, own.platform, own.flags)) return std::nullopt;
  if (!tag->platform.empty() && tag->platform != own.platform) tag->tag += "-" + tag->platform;
  return tag;
}

// The sibling the interpreter's import opens instead of the file (_core.cpython-311-...so beside _core.so).
std::string imported_instead(const InputCheck& in, const LinkcheckOptions& options) {
  if (in.plan.hosting != host::PythonHosting::ExtensionModule || in.plan.host.empty()) return "";
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
void collect_findings(InputCheck& in, loader::BindOutcome&& binding, const LinkcheckOptions& options) {
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
      lib.python_extension = host::is_extension_module(o.elf);
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
void reclaim_own_build(InputCheck& in, const LinkcheckOptions& options, TraceResources& resources, Report& report) {
  if (options.trace.build_dir.empty() || std::none_of(in.symbols.begin(), in.symbols.end(), [](const auto& f) {
        return verdict::current(f.symbol) == Classification::Shadowed;
      }))
    return;
  trace::reclaim_own_build(in.process, in.symbols, resources.context(&in.process), report.causes);
}

// The places other versions of a missing library may be installed: the SDK's lib dirs, then the
// tool's (/usr/local/musa*, conda, venv).
void find_missing_libraries(InputCheck& in, const loader::LoaderEnv& env, const LinkcheckOptions& options,
                            Report& report) {
  std::vector<installed::Place> places;
  for (const char* sub : {"/lib", "/lib64"})
    if (!options.trace.sdk_home.empty())
      places.push_back({.dir = options.trace.sdk_home + sub, .how = loader::FoundHow::Sdk});
  places.insert(places.end(), options.places.begin(), options.places.end());
  installed::find_missing_libraries(in.process, in.libs, in.symbols, places, env, report.causes);
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
void confirm_findings(InputCheck& in, const trace::TraceContext& ctx, const LinkcheckOptions& options,
                      std::vector<UnresolvedSymbol*>& unknown, Report& report) {
  std::vector<UnresolvedSymbol*> all;
  for (auto& f : in.symbols) all.push_back(&f.symbol);
  confirm::confirm_symbols(ctx, all,
                           {.build_dir = options.trace.build_dir,
                            .cache_dir = options.trace.cache_dir,
                            .budget_compiles = options.trace.confirm_budget,
                            .jobs = 0,
                            .verbose = options.trace.confirm_verbose},
                           report.warnings);
  std::erase_if(unknown, [](const UnresolvedSymbol* u) { return verdict::current(*u) != Classification::Unknown; });
}

// The interpreter that is the main program of the input's process, with the objects it hosts (the target
// and what its load brought in); none for a plugin's program or a file Python does not load.
host::HostInterpreter hosting_interpreter(const InputCheck& in, const RunContext& run) {
  host::HostInterpreter h;
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
void trace_origins(InputCheck& in, const RunContext& run, TraceResources& resources, Report& report) {
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
                 : run.python_torch                    ? run.python_torch
                                                       : environment::torch_beside(target);
    if (!options.python && !found) return nullptr;
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
  if (options.trace.confirm) confirm_findings(in, ctx, options, unknown, report);
  // The Python C API the interpreter that hosts the file lacks (an extension built for a newer Python)...
  unknown = host::find_api_the_interpreter_lacks(unknown, hosting_interpreter(in, run), report.causes);
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
// time as ctypes.CDLL would load it in a bare interpreter, and what that leaves undefined is named by the
// library the import's scope took it from.
void warn_scope_only(const InputCheck& in, const RunContext& run, Report& report) {
  const loader::Process& p = in.process;
  const auto& target = p.objects[p.target];
  if (target.root == p.target || target.root < 0) return;
  for (const auto& f : in.symbols)
    if (f.ref.object == p.target) return;  // it fails in the import too: its findings say so
  for (const auto& v : in.versions)
    if (v.missing.object == p.target) return;
  loader::LoaderEnv alone = run.env;
  alone.with.clear();
  alone.with_local.clear();
  if (!in.plan.host.empty()) alone.with.push_back(in.plan.host);
  auto own = loader::load_process(target.path, alone, run.objects);
  if (!own) return;
  loader::read_symbol_tables(*own, {own->target});
  auto outcome = loader::bind(*own, {own->target});
  std::set<std::string> providers;
  for (const auto& ref : outcome.unresolved) {
    auto b = loader::bind_one(p, p.target, ref.name);
    if (b.provider >= 0)
      providers.insert(p.objects[b.provider].elf.soname.empty() ? base_name(p.objects[b.provider].path)
                                                                : p.objects[b.provider].elf.soname);
  }
  if (providers.empty()) return;
  report.warnings.push_back(
      said::LoadsOnlyInImport{.file = target.path, .providers = {providers.begin(), providers.end()}}.words());
}

// The findings joined to their libraries, in load order, symbols sorted by mangled name. By default
// a dependency is listed only when its load fails (--closure lists every object); a library already
// reported for an earlier input is not listed again.
void report_findings(InputCheck& in, const LinkcheckOptions& options, std::set<std::string>& reported, Report& report) {
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

// Once the pages of the files this process maps that are resident pass kResidentBudget bytes
// (/proc/self/statm's shared pages: file-backed), every mapping the run has made gives its pages back;
// the objects stay (the cache's share them) and the next input faults in only what it reads. The
// resident pages themselves are counted: a dependency every input loads (torch's libraries on a venv)
// is the same pages again, which a sum of mapped sizes counted once per input, releasing all after
// nearly every input. Done beside the next inputs' passes (a release is only a page-table change: a
// reader of a page given back faults it in again from the page cache).
constexpr size_t kResidentBudget = size_t{128} << 20;
struct Mappings {
  std::mutex mutex;
  std::map<void*, std::shared_ptr<const void>> live;  // ElfObject::native -> its keep_alive
  std::atomic<bool> releasing = false;
};
size_t resident_file_bytes() {
  unsigned long size = 0, resident = 0, shared = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  const int read = std::fscanf(f, "%lu %lu %lu", &size, &resident, &shared);
  std::fclose(f);
  return read == 3 ? shared * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}
void release_pages(const loader::Process& p, Mappings& mappings) {
  {
    std::lock_guard<std::mutex> lock(mappings.mutex);
    for (const auto& o : p.objects)
      if (o.elf.native) mappings.live.emplace(o.elf.native, o.elf.keep_alive);
  }
  if (resident_file_bytes() < kResidentBudget || mappings.releasing.exchange(true)) return;
  std::vector<void*> natives;
  {
    std::lock_guard<std::mutex> lock(mappings.mutex);
    for (const auto& [native, keep] : mappings.live) natives.push_back(native);
  }
  for (void* native : natives) elf::release_resident_pages(native);  // each kept alive by `live`
  mappings.releasing = false;
}

// What the passes of every input write to: the report, the indexes, what has been told and checked.
struct RunState {
  RunContext run;
  TraceResources& resources;
  Report& report;
  std::set<std::tuple<std::string, LookupKind, std::string>> told;  // run-time look-ups in the report
  std::set<std::string> reported;                                   // libraries in the report
  std::map<std::string, std::string> checked_before;  // objects an earlier input checked: their needed_signature
  std::set<std::string> gpu_stacks;                   // the GPU vendors the loads are built for
};

// The passes after the binding, for one input, in order.
void diagnose(InputCheck& in, loader::BindOutcome&& binding, std::vector<RuntimeLookup>&& lookups, RunState& state) {
  const LinkcheckOptions& options = state.run.options;
  const loader::LoaderEnv& env = state.run.env;
  TraceResources& resources = state.resources;
  Report& report = state.report;
  auto& told = state.told;
  auto& reported = state.reported;
  // Run-time look-ups: dlopen/dlsym string literals (read in the parallel stage), each told once per run;
  // the GPU stacks the load brings in decide later which drivers are the run's (src/runtime).
  std::optional<PhaseTime> step(std::in_place, "diagnose.collect");
  add_runtime_lookups(std::move(lookups), told, report);
  runtime::add_gpu_stacks(in.process, state.gpu_stacks);
  // Demangle and classify at the loader's level: one finding per miss.
  collect_findings(in, std::move(binding), options);
  // Unexported: a definition present only in a .symtab explains a missing one.
  step.emplace("diagnose.unexported");
  trace::find_unexported(in.process, in.symbols);
  step.emplace("diagnose.shadowing");
  // Stale copies: another candidate for a loaded soname has what the picked copy lacks (src/trace/causes).
  trace::find_shadowing(in.process, in.symbols, in.versions, report.causes);
  // Missing libraries: one cause per needed library found nowhere, with its other installed
  // versions; the symbols it would have provided are its, not traced further (src/installed).
  step.emplace("diagnose.missing");
  find_missing_libraries(in, env, options, report);
  step.emplace("diagnose.own-build");
  // The build's own product: a copy of it that lacks what an uncompiled source defines is a
  // missing source, not a search-path problem.
  reclaim_own_build(in, options, resources, report);
  // Locate: where each symbol is referenced in the library's source (DWARF call sites), and which
  // ones are variables (src/dwarf).
  step.emplace("diagnose.locate");
  trace::locate_references(in.process, in.symbols);
  step.emplace("diagnose.trace");
  // Trace: origin, class and fix of what the loader could not explain; confirm, host symbols,
  // near misses, provider mismatches (src/trace, src/confirm, src/installed).
  trace_origins(in, state.run, resources, report);
  step.emplace("diagnose.scope");
  // A file torch's import loads binds in that import's scope: loads, but not alone (a warning).
  warn_scope_only(in, state.run, report);
  // Decide: each finding's classification from its passes' claims (src/verdict).
  step.emplace("diagnose.resolve");
  for (auto& f : in.symbols) verdict::resolve(f.symbol);
  step.emplace("diagnose.report");
  // Report: the findings joined to their libraries, in load order.
  report_findings(in, options, reported, report);
}

// One input on its way through the stages of run_linkcheck.
struct Stage {
  const std::string* file = nullptr;
  std::optional<InputCheck> in;
  loader::BindOutcome binding;
  std::vector<RuntimeLookup> lookups;
  Report loaded;  // the load's errors and warnings, joined to the report in input order
};

// The stages every input goes through, in order.
struct Stages {
  const std::vector<std::string>& files;
  RunState& state;
  runtime::LiteralCache& literals;
  Mappings mappings;  // what the run has mapped, given back to the page cache now and then
  size_t next = 0;
  std::mutex shared = {};  // what the loads' plans share (load_input)

  // The next input, in order.
  std::shared_ptr<Stage> take(tbb::flow_control& flow) {
    if (next == files.size()) {
      flow.stop();
      return nullptr;
    }
    const LinkcheckOptions& options = state.run.options;
    if (options.progress) options.progress(next, files.size());
    auto stage = std::make_shared<Stage>();
    stage->file = &files[next++];
    return stage;
  }

  // Load (in parallel; the object cache and the plans' memo are shared): read the ELF file and emulate
  // the loader's mapping phase as its import would.
  std::shared_ptr<Stage> load(std::shared_ptr<Stage> stage) {
    stage->in = load_input(*stage->file, state.run, shared, stage->loaded);
    return stage;
  }

  // Which objects the input checks (in input order: a dependency an earlier input checked is not
  // checked again where its DT_NEEDED files are the same).
  std::shared_ptr<Stage> choose(std::shared_ptr<Stage> stage) {
    if (!stage->in) return stage;
    InputCheck& in = *stage->in;
    in.checked = checked_objects(in.process, state.run.options, state.checked_before, in.import_roots);
    for (int i : in.checked)
      state.checked_before.emplace(in.process.objects[i].path, needed_signature(in.process, static_cast<size_t>(i)));
    return stage;
  }

  // Bind (in parallel: each input's process is its own, the shared objects are only read): the checked
  // objects' relocations, every relocated reference in the global scope, version requirements
  // (src/loader); then the dlopen/dlsym string literals of the checked objects (src/runtime).
  std::shared_ptr<Stage> bind(std::shared_ptr<Stage> stage) {
    if (!stage->in) return stage;
    InputCheck& in = *stage->in;
    {
      PhaseTime t("relocations");
      loader::read_symbol_tables(in.process, in.checked);
    }
    for (const auto& e : in.process.errors) stage->loaded.errors.push_back(e);
    {
      PhaseTime t("bind");
      stage->binding = loader::bind(in.process, in.checked, in.env);
    }
    PhaseTime t("runtime-lookups");
    stage->lookups = runtime::check_runtime_lookups(in.process, in.checked, in.env, &literals);
    return stage;
  }

  // Report (in input order): the load's messages, then the passes that diagnose the input.
  void report(const std::shared_ptr<Stage>& stage) {
    Report& out = state.report;
    for (auto& e : stage->loaded.errors) out.errors.push_back(std::move(e));
    for (auto& w : stage->loaded.warnings) out.warnings.push_back(std::move(w));
    for (auto& w : stage->loaded.with_as_import)
      if (std::find(out.with_as_import.begin(), out.with_as_import.end(), w) == out.with_as_import.end())
        out.with_as_import.push_back(std::move(w));
    if (!stage->in) return;
    if (state.run.options.inspect) state.run.options.inspect(stage->in->process);
    PhaseTime t(PhaseTime::enabled() ? "diagnose:" + stage->in->process.objects[stage->in->process.target].path
                                     : std::string());
    diagnose(*stage->in, std::move(stage->binding), std::move(stage->lookups), state);
  }

  // Done with (in parallel, off the ordered stage): the input's process is freed, and what the inputs map
  // is given back to the page cache now and then, so the resident set stays bounded whatever the tree's
  // size (the cache keeps the objects).
  void finish(std::shared_ptr<Stage> stage) {
    if (!stage->in) return;
    PhaseTime t("finish");
    release_pages(stage->in->process, mappings);
    stage->in.reset();
  }
};

}  // namespace

Report run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options) {
  Report report;
  TraceResources resources(options.trace, report);
  run_linkcheck(inputs, options, resources, report);
  return report;
}

// The passes, in order (docs/architecture.md). Each input is loaded, bound and diagnosed on its own;
// the indexes tracing reads (`resources`) and the object cache are shared by all inputs of the run.
namespace {

// Importing pkg.mod runs pkg/__init__.py first (and, depth first, the modules its module-level lines
// import): an extension module imported there that fails to load fails this import too, whatever this
// file's own load says. Known for the modules the run checks itself (a directory's, or those named).
void fail_with_package_imports(Report& report, RunContext& run) {
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
      const python::InterpreterSites* host = host_for(report.libraries[i].path, run);
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

}  // namespace

void run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options, TraceResources& resources,
                   Report& report) {
  const std::vector<std::string> files = [&] {
    PhaseTime t("inputs");
    return expand_inputs(inputs, report.errors);
  }();
  // The owners' indexes, built beside the loads and diagnoses: the last pass only looks them up.
  std::optional<PhaseTime> setup(std::in_place, "setup");
  environment::OwnerPrefetch owner_indexes(owner_sources(options), files);
  loader::ObjectCache objects;  // each library is read once per run, however many inputs need it
  // The context every input shares: the loader's environment, the host interpreter's site directories
  // (read, never run) and, with --python, the torch that interpreter imports.
  RunState state{.run = {.options = options,
                         .env = run_env(options),
                         .host = options.host_python.empty() ? python::InterpreterSites{}
                                                             : python::read_sites(options.host_python),
                         .python_torch = import_context(options, report),
                         .objects = files.size() > 1 ? &objects : nullptr},
                 .resources = resources,
                 .report = report,
                 .told = {},
                 .reported = {},
                 .checked_before = {},
                 .gpu_stacks = {}};
  state.run.one_input = files.size() <= 1;
  {
    std::map<std::string, std::set<std::pair<dev_t, ino_t>>> by_name;
    for (const auto& f : files)
      if (struct stat st; stat(f.c_str(), &st) == 0) by_name[base_name(f)].insert({st.st_dev, st.st_ino});
    for (const auto& [name, copies] : by_name)
      if (copies.size() > 1) state.run.shared_names.insert(name);
  }
  runtime::LiteralCache literals(options.trace.cache_dir);  // dlopen/dlsym literals read by earlier runs
  setup.reset();
  Stages stages{.files = files, .state = state, .literals = literals, .mappings = {}, .next = 0, .shared = {}};
  // Inputs flow through the stages in order: taken (in order), loaded (in parallel), their checked objects
  // chosen (in order), bound and scanned for run-time look-ups (in parallel), then the passes that write
  // the report (in input order).
  const size_t in_flight = files.size() > 1 ? 2 * std::max<size_t>(1, std::thread::hardware_concurrency()) : 1;
  using Item = std::shared_ptr<Stage>;
  tbb::parallel_pipeline(in_flight,
                         tbb::make_filter<void, Item>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& f) {
                           return stages.take(f);
                         }) & tbb::make_filter<Item, Item>(tbb::filter_mode::parallel, [&](Item item) {
                           return stages.load(std::move(item));
                         }) & tbb::make_filter<Item, Item>(tbb::filter_mode::serial_in_order, [&](Item item) {
                           return stages.choose(std::move(item));
                         }) & tbb::make_filter<Item, Item>(tbb::filter_mode::parallel, [&](Item item) {
                           return stages.bind(std::move(item));
                         }) & tbb::make_filter<Item, Item>(tbb::filter_mode::serial_in_order, [&](Item item) {
                           stages.report(item);
                           return item;
                         }) & tbb::make_filter<Item, void>(tbb::filter_mode::parallel, [&](Item item) {
                           stages.finish(std::move(item));
                         }));
  if (options.progress) options.progress(files.size(), files.size());
  {
    PhaseTime t("literals.save");
    literals.save();
  }
  // Owners: which package installed each library named (offline sources only).
  {
    PhaseTime t("owners");
    add_owners(report, options, owner_indexes);
  }
  // Drivers: another vendor's driver than the stacks the run loads is optional (src/runtime).
  runtime::settle_drivers(report.runtime_lookups, state.gpu_stacks);
  // Found in a directory: the files its walk brought, not named themselves (a program found so is told
  // apart, report.h: program_apart). A path the walk and the loader spell differently stays named.
  {
    std::set<std::string> walked(files.begin(), files.end());
    for (const auto& in : inputs) walked.erase(in);
    for (auto& lib : report.libraries)
      lib.found_in_directory = lib.role == LibraryRole::Target && walked.count(lib.path);
  }
  {
    PhaseTime t("package imports");
    fail_with_package_imports(report, state.run);
  }
  // Words: every sentence of the report, written from the passes' evidence (src/report/words.cpp).
  PhaseTime t("sentences");
  report::write_sentences(report);
}

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
    lib.unresolved.push_back(std::move(u));
  }
  report.libraries.push_back(std::move(lib));
  report::write_sentences(report);
  return report;
}

}  // namespace mlc
