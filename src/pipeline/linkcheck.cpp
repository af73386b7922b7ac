// The pass list, in one place (docs/contributing.md: "one list of passes"): each input is loaded, its
// checked objects chosen, bound and scanned for run-time look-ups, then diagnosed (pipeline/passes.cpp);
// then the run's own passes. Every pass takes the one run context (pipeline/run.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include <tbb/parallel_pipeline.h>
#include <tbb/task_group.h>

#include "common/paths.h"
#include "common/phase_times.h"
#include "common/short_run.h"
#include "elf/resident.h"
#include "pipeline/run.h"
#include "report/said.h"

namespace mlc {
namespace {

using pipeline::InputCheck;
using pipeline::Mappings;
using pipeline::Run;

// Once the pages of the files this process maps that are resident pass kResidentBudget bytes
// (/proc/self/statm's shared pages: file-backed), every mapping the run has made gives its pages back;
// the objects stay (the cache's share them) and the next input faults in only what it reads. The
// resident pages themselves are counted: a dependency every input loads (torch's libraries on a venv)
// is the same pages again, which a sum of mapped sizes counted once per input, releasing all after
// nearly every input. Done beside the next inputs' passes (a release is only a page-table change: a
// reader of a page given back faults it in again from the page cache).
constexpr size_t kResidentBudget = size_t{128} << 20;

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

// The stages every input goes through, in order; the ordered ones (take, choose, report) write the run's
// shared state, the parallel ones (load, bind, finish) only their input's or what guards itself.
struct Stages {
  const std::vector<std::string>& files;
  Run& run;
  size_t next = 0;

  // The next input, in order.
  std::shared_ptr<InputCheck> take(tbb::flow_control& flow) {
    if (next == files.size()) {
      flow.stop();
      return nullptr;
    }
    if (run.options.progress) run.options.progress(next, files.size());
    auto in = std::make_shared<InputCheck>();
    in->file = files[next++];
    return in;
  }

  // Bind (in parallel: each input's process is its own, the shared objects are only read): the checked
  // objects' relocations, every relocated reference in the global scope, version requirements
  // (src/loader); then the dlopen/dlsym string literals of the checked objects (src/runtime).
  static void bind(Run& run, InputCheck& in) {
    if (!in.loaded) return;
    // The file loaded alone (a file the import brings in through another load), beside this binding.
    tbb::task_group beside;
    std::optional<std::vector<std::string>> alone_names;
    if (pipeline::binds_in_another_load(in))
      beside.run([&run, &alone_names, alone = pipeline::prepare_alone(run, in)] {
        PhaseTime t("bind-alone");
        alone_names = pipeline::bind_alone(run, alone);
      });
    // The kept run-time look-ups, asked beside the binding: their key reads only what the load set.
    tbb::task_group kept_beside;
    literals::KeptAsk kept;
    kept_beside.run([&] { kept = literals::ask_kept_lookups(in.process, in.checked, in.env, &run.literals); });
    {
      PhaseTime t("relocations");
      loader::read_symbol_tables(in.process, in.checked, run.relocations);
    }
    for (const auto& e : in.process.errors) in.messages.errors.push_back(e);
    {
      PhaseTime t("bind");
      in.binding = loader::bind(in.process, in.checked, in.env, run.bindings);
    }
    {
      PhaseTime t("runtime-lookups");
      kept_beside.wait();
      in.lookups = literals::check_runtime_lookups(in.process, in.checked, in.env, &run.literals, &kept);
    }
    PhaseTime t("bind-alone.wait");
    beside.wait();
    in.unresolved_alone = std::move(alone_names);
  }

  // Report (in input order): the load's messages, then the passes that diagnose the input.
  static void report(Run& run, InputCheck& in) {
    Report& out = run.report;
    for (auto& e : in.messages.errors) out.errors.push_back(std::move(e));
    for (auto& w : in.messages.warnings) out.warnings.push_back(std::move(w));
    for (auto& w : in.messages.with_as_import)
      if (std::find(out.with_as_import.begin(), out.with_as_import.end(), w) == out.with_as_import.end())
        out.with_as_import.push_back(std::move(w));
    if (!in.loaded) return;
    if (run.options.inspect) run.options.inspect(in.process);
    PhaseTime t(PhaseTime::enabled() ? "diagnose:" + in.process.objects[in.process.target].path : std::string());
    pipeline::diagnose(run, in);
  }

  // Done with (in parallel, off the ordered stage): what the inputs map is given back to the page cache now
  // and then, so the resident set stays bounded whatever the tree's size (the cache keeps the objects); the
  // input's process is freed with it.
  static void finish(Run& run, InputCheck& in) {
    if (!in.loaded) return;
    PhaseTime t("finish");
    release_pages(in.process, run.mappings);
  }
};

// The file names two or more inputs share with different files (a soname two packages vendor).
std::set<std::string> shared_names(const std::vector<std::string>& files) {
  std::map<std::string, std::set<std::pair<dev_t, ino_t>>> by_name;
  for (const auto& f : files)
    if (struct stat st; stat(f.c_str(), &st) == 0) by_name[base_name(f)].insert({st.st_dev, st.st_ino});
  std::set<std::string> out;
  for (const auto& [name, copies] : by_name)
    if (copies.size() > 1) out.insert(name);
  return out;
}

}  // namespace

Report run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options) {
  Report report;
  TraceResources resources(options.trace, report);
  run_linkcheck(inputs, options, resources, report);
  return report;
}

void run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options, TraceResources& resources,
                   Report& report) {
  const std::vector<std::string> files = [&] {
    PhaseTime t("inputs");
    return expand_inputs(inputs, report.errors);
  }();
  // The owners' indexes, built beside the loads and diagnoses: the last pass only looks them up.
  std::optional<PhaseTime> setup(std::in_place, "setup");
  environment::OwnerPrefetch owner_indexes(pipeline::owner_sources(options), files);
  // Each library is read once per run, however many inputs need it; with one input, each path is stat'ed once.
  loader::ObjectCache objects(files.size() > 1);
  literals::LiteralCache literals(options.trace.cache_dir);
  const elf::KeptRelocations relocations(options.trace.cache_dir);
  const loader::KeptBindings bindings(options.trace.cache_dir);
  KeptFacts hosting(options.trace.cache_dir.empty() ? "" : options.trace.cache_dir + "/python-hosting.tsv",
                    "mlc-python-hosting");
  Run run{.options = options,
          .resources = resources,
          .report = report,
          .literals = literals,
          .env = pipeline::run_env(options),
          .host = options.host_python.empty() ? python::Interpreter{} : python::read_sites(options.host_python),
          .python_torch = pipeline::import_context(options, report),
          .objects = &objects,
          .relocations = &relocations,
          .bindings = &bindings,
          .hosting = &hosting,
          .one_input = files.size() <= 1,
          .files = files,
          .shared_names = shared_names(files)};
  setup.reset();
  Stages stages{.files = files, .run = run, .next = 0};
  // Inputs flow through the stages in order: taken (in order), loaded (in parallel), their checked objects
  // chosen (in order), bound and scanned for run-time look-ups (in parallel), then the passes that write
  // the report (in input order).
  const size_t in_flight = files.size() > 1 ? 2 * std::max<size_t>(1, std::thread::hardware_concurrency()) : 1;
  using Item = std::shared_ptr<InputCheck>;
  auto stage = [&](tbb::filter_mode mode, void (*pass)(Run&, InputCheck&)) {
    return tbb::make_filter<Item, Item>(mode, [&run, pass](Item in) {
      pass(run, *in);
      return in;
    });
  };
  tbb::parallel_pipeline(in_flight, tbb::make_filter<void, Item>(tbb::filter_mode::serial_in_order,
                                                                 [&](tbb::flow_control& f) { return stages.take(f); }) &
                                        stage(tbb::filter_mode::parallel, pipeline::load_input) &
                                        stage(tbb::filter_mode::serial_in_order, pipeline::choose_checked) &
                                        stage(tbb::filter_mode::parallel, Stages::bind) &
                                        stage(tbb::filter_mode::serial_in_order, Stages::report) &
                                        tbb::make_filter<Item, void>(tbb::filter_mode::parallel, [&](Item in) {
                                          Stages::finish(run, *in);
                                          if (run.options.ends_with_process && run.one_input)
                                            leave_to_exit(std::move(in));
                                        }));
  if (options.progress) options.progress(files.size(), files.size());
  {
    PhaseTime t("literals.save");
    literals.save();
    hosting.save();
  }
  // Owners: which package installed each library named (offline sources only).
  {
    PhaseTime t("owners");
    pipeline::add_owners(run, owner_indexes);
  }
  // Drivers: another vendor's driver than the stacks the run loads is optional (src/runtime).
  literals::settle_drivers(report.runtime_lookups, run.gpu_stacks);
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
    pipeline::fail_with_package_imports(run);
  }
  // One warning of a kind per subject, however many inputs or passes gave it (a venv's files share one about
  // their environment), as musa-stubgen's run keeps them (Warning::same_as).
  drop_repeated(report.warnings);
  // Words: every sentence of the report, written from the passes' evidence (src/report/words.cpp).
  PhaseTime t("sentences");
  report::write_sentences(report);
}

}  // namespace mlc
