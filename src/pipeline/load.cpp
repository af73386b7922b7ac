// The load stage: how Python's import (or a program) would load each input (src/python), and the process
// that load makes (src/loader), read, never run.
#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/paths.h"
#include "common/phase_times.h"
#include "host/program_host.h"
#include "loader/program.h"
#include "pipeline/run.h"
#include "python/hosting.h"
#include "python/package.h"
#include "python/torch.h"
#include "report/said.h"

namespace mlc::pipeline {
namespace {

// The loader's environment of a file's process (src/python/import_plan.h): the loads done before it (the
// interpreter, then what `import torch` loads: libtorch_global_deps with RTLD_GLOBAL, torch/_C with RTLD_LOCAL
// as every import), then the --with libraries.
loader::LoaderEnv planned_env(const loader::LoaderEnv& env, const python::ImportPlan& plan,
                              const std::vector<std::string>& unscoped) {
  loader::LoaderEnv out = env;
  // Before an extension module, --with libraries given without a scope are what Python's import of torch
  // loaded: RTLD_LOCAL (torch/_C's closure), not the RTLD_GLOBAL of LD_PRELOAD.
  if (plan.hosting == python::Hosting::ExtensionModule)
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

PythonContext python_context(const python::Interpreter& py, const std::optional<python::TorchInstall>& torch) {
  PythonContext c{.interpreter = py.named,
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

}  // namespace

// The interpreter of the venv or conda environment `file` is installed in ("" for none), by directory.
// Asked under run.loads.
const std::string& installed_in(const std::string& file, Run& run) {
  const std::string dir = dir_name(file);
  auto known = run.env_of_dir.find(dir);
  if (known == run.env_of_dir.end()) known = run.env_of_dir.emplace(dir, python::environment_interpreter(file)).first;
  return known->second;
}

// Whether --python's interpreter runs in the environment whose interpreter is `env_exe` (ROOT/bin/python3):
// its sys.prefix is ROOT (a venv's, a conda environment's), or, not asked, it is in ROOT/bin.
bool runs_in(const python::Interpreter& python, const std::string& env_exe) {
  const std::string root = real_path(parent_dir(parent_dir(env_exe)));
  if (!python.prefix.empty()) return real_path(python.prefix) == root;
  return real_path(parent_dir(python.executable)) == real_path(parent_dir(env_exe));
}

// Whether the environment whose interpreter is `env_exe` is another than the one --python's interpreter runs in
// (false without --python or without an environment): one answer per environment, asked under run.loads.
bool python_elsewhere(const std::string& env_exe, Run& run) {
  if (!run.options.python || env_exe.empty()) return false;
  auto it = run.python_elsewhere.find(env_exe);
  if (it == run.python_elsewhere.end())
    it = run.python_elsewhere.emplace(env_exe, !runs_in(*run.options.python, env_exe)).first;
  return it->second;
}

// --python named by PATH (bare, or --python=python3): the user named no interpreter of their own.
bool python_from_path(const LinkcheckOptions& options) {
  return options.python && options.python->named.find('/') == std::string::npos;
}

// The interpreter that imports `file`: the one of the venv or conda environment the file is installed in (a
// file under VENV is imported by VENV's interpreter, not by the python3 PATH finds), read from its files; else
// --python's, or python3 on PATH. --python=EXE, an interpreter named by its path, is taken for every file, as
// asked (load_input warns where the file's own environment is another); bare --python means "as Python
// imports it", so a file of another environment than PATH's python3 is checked as that environment imports it.
const python::Interpreter* host_for(const std::string& file, Run& run) {
  const bool named_python = run.options.python && !python_from_path(run.options);
  if (named_python) return &run.host;
  const std::string& exe = installed_in(file, run);
  if (exe.empty() || (run.options.python && !python_elsewhere(exe, run))) return &run.host;
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
std::optional<python::TorchInstall> import_context(const LinkcheckOptions& options, Report& report) {
  if (!options.python) return std::nullopt;
  auto torch = python::find_torch(*options.python);
  report.python = python_context(*options.python, torch);
  return torch;
}

namespace {

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

// How Python hosts the file (python::hosting_of reads every undefined .dynsym entry: libtorch_cpu's are spread
// over its 200,000), kept between runs by the file's identity.
python::Hosting hosting(const elf::ElfObject& o, Run& run) {
  constexpr int kLast = static_cast<int>(python::Hosting::PythonApi);
  if (auto kept = run.hosting ? run.hosting->find(o.path, o.identity) : std::nullopt;
      kept && kept->size() == 1 && (*kept)[0] >= '0' && (*kept)[0] <= '0' + kLast)
    return static_cast<python::Hosting>((*kept)[0] - '0');
  const python::Hosting h = python::hosting_of(o);
  if (run.hosting) run.hosting->keep(o.path, o.identity, o.changed_at, std::to_string(static_cast<int>(h)));
  return h;
}

// `asked`: --python's answer holds for the file (InputCheck::asked); else it is planned as without --python, from
// its own environment's files (host_for chose that environment's interpreter).
python::ImportPlan import_plan(const std::string& file, const PlanHeaders& headers, const python::Interpreter* host,
                               bool asked, Run& run, Report& report, bool follow_imports = false) {
  const auto& options = run.options;
  python::ImportQuestion q{.file = file,
                           .needed = headers ? headers->needed : std::vector<std::string>{},
                           .hosting = headers ? hosting(headers.value(), run) : python::Hosting::None,
                           .program = headers && loader::is_program(headers.value()),
                           .python = asked ? &*options.python : nullptr,
                           .python_torch = asked && run.python_torch ? &*run.python_torch : nullptr,
                           .host = host,
                           .memo = &run.memo,
                           .follow_imports = follow_imports};
  python::ImportPlan plan = python::plan_import(q);
  // Not Python's: a plugin of a program that exports what it uses is loaded into that program.
  if (plan.loads.empty() && headers && !q.program && q.hosting == python::Hosting::None)
    if (auto program = host::plugin_host(file, headers.value(), {.sysroot = run.env.sysroot})) {
      plan.host = plan.plugin_of = *program;
      plan.loads.push_back({.path = *program, .global = true});
    }
  if (plan.torch && !plan.torch->torch)
    report.warnings.push_back(said::warning(said::TorchNotFound{.file = file,
                                                                .reason = plan.torch->reason,
                                                                .evidence = plan.torch->evidence,
                                                                .python = asked ? options.python->executable : "",
                                                                .host = host->executable}));
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
                                                       Run& run) {
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
bool may_be_changed_by_imports(const loader::Process& p, const Run& run) {
  if (run.one_input) return true;
  for (const auto& o : p.objects) {
    if (o.host) continue;
    for (const auto& need : o.needed)
      if (need.object < 0) return true;
    if (static_cast<int>(&o - p.objects.data()) != p.target && run.shared_names.count(base_name(o.path))) return true;
  }
  return false;
}

}  // namespace

// The loads of a tree's inputs run in parallel, their plans too: the run's memo of imports guards itself
// (python::ImportMemo), and what else they share (the interpreters by directory, the closures of prior
// loads) is asked under `shared`. Which objects each input checks is decided afterwards, in input order
// (checked_objects).
void load_input(Run& run, InputCheck& in) {
  const std::string& file = in.file;
  Report& report = in.messages;
  const PlanHeaders headers = [&] {
    PhaseTime t("plan.headers");
    return read_headers_for_plan(file);
  }();
  std::string environment;
  bool elsewhere = false;
  {
    PhaseTime t("plan.host");
    std::lock_guard<std::mutex> lock(run.loads);
    in.host = host_for(file, run);
    in.asked = run.options.python && in.host == &run.host;
    environment = installed_in(file, run);
    elsewhere = python_elsewhere(environment, run);
  }
  // --python's interpreter and the file's own environment differ: which one the verdict is for is said.
  if (elsewhere)
    report.warnings.push_back(said::warning(said::OtherEnvironment{.environment = parent_dir(parent_dir(environment)),
                                                                   .interpreter = environment,
                                                                   .python = run.options.python->executable,
                                                                   .python_from_path = !in.asked}));
  in.plan = [&] {
    PhaseTime t("plan");
    return import_plan(file, headers, in.host, in.asked, run, report);
  }();
  if (in.plan.hosting == python::Hosting::ExtensionModule)
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
  if (process && in.plan.hosting != python::Hosting::None && may_be_changed_by_imports(*process, run)) {
    PhaseTime t("plan.imports");
    Report again;  // the plan's warnings are the first plan's, already told
    for (auto& l : import_plan(file, headers, in.host, in.asked, run, again, true).loads)
      if (!l.imported_by.empty()) priors.push_back(std::move(l));
  }
  if (process && !priors.empty()) {
    python::ImportPlan with_priors = in.plan;
    with_priors.loads.insert(with_priors.loads.end(), priors.begin(), priors.end());
    std::vector<python::PriorLoad> matter;
    {
      std::lock_guard<std::mutex> lock(run.loads);  // the closures of prior loads, read once per run
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
    return;
  }
  in.process = std::move(process).value();
  // A file the import of torch already loaded (torch/lib's libraries) is that object, found under the name
  // the loader took; the report names it as the user did.
  in.process.objects[in.process.target].path = file;
  // torch/_C and, when loaded, libtorch_global_deps: either failing fails `import torch`.
  for (const auto& load : in.plan.loads)
    if (load.path != in.plan.host) in.import_roots.push_back(load.path);
  in.loaded = true;
}

// A dependency an earlier input checked is not checked again where its DT_NEEDED files are the same; each
// object's DT_NEEDED signature is written once, by the first input that checks it.
void choose_checked(Run& run, InputCheck& in) {
  if (!in.loaded) return;
  in.checked = checked_objects(in.process, run.options, run.checked_before, in.import_roots);
  for (int i : in.checked)
    if (const auto& path = in.process.objects[i].path; !run.checked_before.count(path))
      run.checked_before.emplace(path, needed_signature(in.process, static_cast<size_t>(i)));
}

}  // namespace mlc::pipeline
