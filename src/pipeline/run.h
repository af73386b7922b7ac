// One run of the link check, as its passes see it (mold's Context&): `Run`, what every input of the run
// shares and what the passes write to, and `InputCheck`, one input on its way through the stages. Every
// pass takes `(Run&, InputCheck&)`; the pass list itself is run_linkcheck's (pipeline/linkcheck.cpp).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/kept_facts.h"
#include "elf/kept_relocations.h"
#include "environment/ownership.h"
#include "literals/lookups.h"
#include "loader/binding.h"
#include "loader/kept_bindings.h"
#include "pipeline/linkcheck.h"
#include "python/import_plan.h"
#include "python/interpreter.h"
#include "trace/finding.h"

namespace mlc::pipeline {

// What the run has mapped, given back to the page cache now and then (release_pages).
struct Mappings {
  std::mutex mutex;
  std::map<void*, std::shared_ptr<const void>> live;  // ElfObject::native -> its keep_alive
  std::atomic<bool> releasing = false;
};

struct Run {
  const LinkcheckOptions& options;
  TraceResources& resources;  // the indexes tracing reads, built once per run
  Report& report;
  literals::LiteralCache& literals;  // dlopen/dlsym literals read by earlier runs
  // The context every input shares: the loader's environment, the host interpreter's site directories
  // (read, never run) and, with --python, the torch that interpreter imports.
  loader::LoaderEnv env;
  python::Interpreter host;
  std::optional<python::TorchInstall> python_torch;
  loader::ObjectCache* objects = nullptr;  // each library read once per run (two inputs or more), each stat once
  const elf::KeptRelocations* relocations = nullptr;  // what earlier runs read of the files' relocations
  const loader::KeptBindings* bindings = nullptr;     // the look-ups of processes earlier runs bound
  KeptFacts* hosting = nullptr;                       // how Python hosts each file, as earlier runs read it
  bool one_input = true;
  const std::vector<std::string>& files;  // the inputs, named or found in a directory given
  // The file names two or more of the run's inputs share (a soname two packages vendor): only a file whose
  // load takes one of them, or misses a name, can be changed by what another package's import loads first.
  // Empty with one input, whose imports are always followed.
  std::set<std::string> shared_names = {};

  // Shared by the parallel loads. What the import plans share guards itself; the rest is asked under `loads`.
  python::ImportMemo memo = {};
  std::mutex loads = {};
  // The interpreters of the environments the run's files are installed in, by program, and each directory's.
  std::map<std::string, python::Interpreter> env_hosts = {};
  std::map<std::string, std::string> env_of_dir = {};
  std::map<std::string, bool> python_elsewhere = {};  // by program: its environment is not --python's
  // What each extension module an import loads first brings in (its load in its host), by name: the names
  // it answers to, each with its file's device and inode. Read once per run.
  std::map<std::string, std::map<std::string, std::pair<dev_t, ino_t>>> closure_of = {};

  // Written by the ordered stages (choose, report), in input order.
  std::map<std::string, std::string> checked_before = {};  // objects an earlier input checked: needed_signature
  // The run-time look-ups in the report, by a hash of (library, kind, name): their indexes in it. libtorch_cpu's
  // process in torch's venv has 600, each once; a set of copied strings cost it 0.5 ms.
  std::unordered_multimap<size_t, size_t> told = {};
  std::set<std::string> reported = {};    // libraries in the report
  std::set<std::string> gpu_stacks = {};  // the GPU vendors the loads are built for

  Mappings mappings = {};  // written by the parallel `finish` stage
};

// One input's check: the process its load makes, the objects checked in it, and one finding per miss.
// The stages fill it in order; report_findings hands it to the report.
struct InputCheck {
  std::string file;
  bool loaded = false;    // whether the file's process could be made (else the error is in `messages`)
  Report messages;        // the load's errors, warnings and --with notes, joined to the report in input order
  loader::LoaderEnv env;  // the loader's environment for this input's import
  loader::Process process;
  std::vector<int> checked;                     // indexes into process.objects
  std::map<int, LibraryReport> libs;            // per checked object: its needed entries and role
  loader::BindOutcome binding;                  // the checked objects' binding
  std::vector<RuntimeLookup> lookups;           // their dlopen/dlsym literals' look-ups
  std::vector<trace::SymbolFinding> symbols;    // one per unresolved reference, in binding order
  std::vector<trace::VersionFinding> versions;  // one per missing (non-weak) version node
  // The interpreter that imports it (its site directories, its version), and how that import loads it
  // (src/python): its host, and the import of torch done first.
  const python::Interpreter* host = nullptr;
  bool asked = false;  // --python's interpreter imports it (host_for kept it): its answer holds for this file
  python::ImportPlan plan;
  // The loads of the import of torch when it comes first (libtorch_global_deps, torch/_C), else none.
  std::vector<std::string> import_roots;
  // For a file another load of the import brings in: the names it leaves undefined loaded alone
  // (bind_alone), else nullopt.
  std::optional<std::vector<std::string>> unresolved_alone;
};

// --- the load (pipeline/load.cpp) ---------------------------------------------------------------------------
// The loader's environment of a run, and (--python) the torch its interpreter imports, said in the report.
loader::LoaderEnv run_env(const LinkcheckOptions& options);
std::optional<python::TorchInstall> import_context(const LinkcheckOptions& options, Report& report);
// The interpreter that imports `file` (asked under run.loads).
const python::Interpreter* host_for(const std::string& file, Run& run);
// The process in.file's import makes (in parallel with other inputs' loads: the object cache and the plans'
// memo are shared), the loader's mapping phase as that import would run it.
void load_input(Run& run, InputCheck& in);
// Which objects a loaded input checks (in input order: a dependency an earlier input checked is not checked
// again where its DT_NEEDED files are the same).
void choose_checked(Run& run, InputCheck& in);

// --- the passes (pipeline/passes.cpp) -----------------------------------------------------------------------
// A file the import loads as part of another load (torch/_C's closure) may load there and not alone
// (warn_scope_only's warning): it is loaded alone too, as ctypes.CDLL would in a bare interpreter, beside the
// import's own binding. prepare_alone runs before that binding (it hands the run's cache the import's
// objects, which the binding then changes); bind_alone may run beside it.
struct AloneLoad {
  std::string file;
  loader::LoaderEnv env;
};
bool binds_in_another_load(const InputCheck& in);
AloneLoad prepare_alone(Run& run, const InputCheck& in);
std::optional<std::vector<std::string>> bind_alone(Run& run, const AloneLoad& alone);

// Everything after the binding, for one input, in order.
void diagnose(Run& run, InputCheck& in);
// After every input: the packages' own imports, and the owners of every library named.
void fail_with_package_imports(Run& run);
environment::OwnerSources owner_sources(const LinkcheckOptions& options);
void add_owners(Run& run, environment::OwnerPrefetch& prefetched);

}  // namespace mlc::pipeline
