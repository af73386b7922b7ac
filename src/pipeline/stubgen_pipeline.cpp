// musa-stubgen's passes in one place, as run_linkcheck lists the link check's: find (or reread) the
// findings, close over the sources a patch gives back, plan, and prove the plan with the compiler.
#include "pipeline/stubgen_pipeline.h"

#include <fstream>
#include <set>

#include "dwarf/references.h"
#include "report/render.h"
#include "report/said.h"
#include "verdict/verdict.h"

namespace mlc {
namespace {

// The real compiler settles what text matching could not, and proves the patch, whenever the build
// has compile commands (trace.confirm false: text only).
bool can_confirm(const TraceOptions& trace) {
  return trace.confirm && !trace.build_dir.empty() && std::ifstream(trace.build_dir + "/compile_commands.json").good();
}

confirm::ConfirmOptions confirm_options(const TraceOptions& trace) {
  return {.build_dir = trace.build_dir,
          .cache_dir = trace.cache_dir,
          .budget_compiles = trace.confirm_budget,
          .jobs = 0,
          .verbose = trace.confirm_verbose};
}

// A saved report may have been made with less context (a post-build gate without --sdk-home): what
// it left unknown is traced again with this run's context.
std::optional<InputError> reread_report(const std::string& file, TraceResources& resources, Report& report) {
  auto saved = read_json_report(file);
  if (!saved) return saved.error();
  report.libraries = std::move(saved.value().libraries);
  const trace::TraceContext& ctx = resources.context(nullptr);
  for (auto& lib : report.libraries)
    for (auto& u : lib.unresolved)
      if (u.classification == Classification::Unknown) {
        trace::trace_symbol(nullptr, -1, ctx, u);
        verdict::resolve(u);
      }
  // A report made before findings carried `size` (or by another tool) has none: the referencing
  // library's DWARF gives it, as the link check's own DWARF pass would have.
  for (auto& lib : report.libraries) {
    std::set<std::string> unsized;
    for (const auto& u : lib.unresolved)
      if (u.type == SymbolType::Object && !u.size) unsized.insert(u.symbol);
    if (unsized.empty()) continue;
    const auto refs = dwarf::references(lib.path, unsized);
    for (auto& u : lib.unresolved)
      if (auto v = refs.variables.find(u.symbol); !u.size && v != refs.variables.end() && v->second > 0)
        u.size = v->second;
  }
  // What was traced again is said from its evidence; the rest keeps the saved report's words.
  report::write_sentences(report);
  return std::nullopt;
}

// The sources the patch gives back may need others the build leaves out: one run gives back them all. What
// the library's process defines is the link check's process of it (`checked`), when the link check ran on it;
// else (a saved report) the library is loaded here.
void close_over_sources(const LinkcheckOptions& options, const trace::TraceContext& ctx,
                        const std::optional<loader::Process>& checked, Report& report) {
  std::string target;
  const std::string& library = report.libraries.front().path;
  if (ctx.build)
    if (const auto* t = ctx.build->target_for_artifact(library)) target = t->name;
  std::optional<loader::Process> loaded;
  const loader::Process* process = nullptr;
  if (checked && checked->target >= 0 && checked->objects[checked->target].path == library) {
    process = &*checked;
  } else if (auto p = loader::load_process(library, options.env)) {
    loaded = std::move(p).value();
    process = &*loaded;
  }
  confirm::close_over_sources(report, ctx, process, target, confirm_options(options.trace), report.warnings);
  // What the compiler placed is decided again (src/verdict), and said again (src/report).
  for (auto& lib : report.libraries)
    for (auto& u : lib.unresolved) verdict::resolve(u);
  report::write_sentences(report);
}

// What the patch would leave: the planned stubs and the objects of the planned add-source files.
confirm::AfterPatch after_patch(const LinkcheckOptions& options, const stubgen::Plan& plan, Report& report) {
  // A stub counts once its file reaches the build (stubgen::Plan::unreached lists those that do not).
  const std::set<std::string> left(plan.unreached.begin(), plan.unreached.end());
  std::vector<std::string> stubbed;
  for (const auto& st : plan.stubs)
    if (!left.count(st.mangled)) stubbed.push_back(st.mangled);
  return confirm::after_patch(report, stubbed, plan.unreached, confirm_options(options.trace), report.warnings);
}

}  // namespace

Result<StubgenRun> run_stubgen(const std::vector<std::string>& inputs, const StubgenOptions& options) {
  StubgenRun run;
  run.stubs = options.stubs;
  LinkcheckOptions linkcheck = options.linkcheck;
  // Stubs and CMake patches go into the named libraries: what their dependencies lack cannot be
  // fixed there, so only the named files are checked unless --closure asks for everything.
  if (!linkcheck.closure) linkcheck.only_named = true;
  run.confirmed = can_confirm(linkcheck.trace);
  linkcheck.trace.confirm = run.confirmed;
  TraceResources resources(linkcheck.trace, run.report);
  // Findings: the link check's passes, or a saved report's findings traced again. The first named file's
  // process is kept as the link check made it: the closure asks it what is loaded, without a second load.
  std::optional<loader::Process> first;
  if (!options.report_file.empty()) {
    if (auto error = reread_report(options.report_file, resources, run.report)) return *error;
  } else {
    if (run.confirmed)
      linkcheck.inspect = [&first, inspect = linkcheck.inspect](const loader::Process& p) {
        if (inspect) inspect(p);
        if (!first) first = p;
      };
    run_linkcheck(inputs, linkcheck, resources, run.report);
  }
  const trace::TraceContext& ctx = resources.context(nullptr);
  if (ctx.build && !ctx.build->source_dir.empty()) run.stubs.relative_to = ctx.build->source_dir;
  stubgen::place_beside_target(run.stubs, ctx, run.report);
  // Closure (with the compiler): the sources a patch gives back, and the ones they need in turn.
  if (run.confirmed && !run.report.libraries.empty()) close_over_sources(linkcheck, ctx, first, run.report);
  // Plan: stubs for what the SDK lacks, CMake edits for what the build leaves out (src/stubgen).
  run.plan = stubgen::plan(run.report, ctx, run.stubs);
  run.errors = run.report.errors;
  run.errors.insert(run.errors.end(), run.plan.errors.begin(), run.plan.errors.end());
  // Proof (with the compiler): how many symbols the planned patch would still leave unresolved.
  if (run.confirmed) run.after = after_patch(linkcheck, run.plan, run.report);
  // The closure, the plan's proof and the link check compile the same files: a failure is said once.
  drop_repeated(run.report.warnings);
  run.read = resources.files_read();
  return run;
}

}  // namespace mlc
