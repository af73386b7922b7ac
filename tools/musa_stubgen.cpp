// musa-stubgen: write signature-accurate stubs for what the SDK lacks and patch CMake source lists
// and link lines, so that the library links. Exit status (docs/contract.md): 0 done or nothing to
// do, 1 some symbol can be neither stubbed nor patched (each named), 2 bad input.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "backend/backend.h"
#include "context_options.h"
#include "pipeline/stubgen_pipeline.h"
#include "report/escape.h"
#include "stubgen/stubgen.h"
#include "version.h"

namespace {

using mlc::tools::absolute;

// What the command line asked for: CLI11 writes into these fields, so the value stays where it was made.
struct Arguments {
  std::vector<std::string> inputs, stub_classes;
  std::string report_file, style = "throw", cmake_patch, ns;
  mlc::stubgen::StubOptions so;
  bool apply = false, dry_run = false, no_runtime = false, c10 = false, no_c10 = false;
  std::optional<int> guard;
  mlc::tools::ContextOptions context;
  std::string out_cpp_given, out_header_given;  // --out-cpp and --out-header as named (a refusal quotes them)
};

// The command line: usage and every option.
void add_options(CLI::App& app, Arguments& a) {
  app.set_version_flag("--version", mlc::tools::version_text("musa-stubgen"));
  app.formatter(std::make_shared<mlc::tools::GnuUsage>(
      "Usage: musa-stubgen [OPTION]... FILE...\n       musa-stubgen [OPTION]... --report REPORT.json"));
  app.footer(
      "Exit status:\n  0 done (or nothing to do)\n  1 some symbol can be neither stubbed nor patched\n"
      "  2 usage error or bad input\n  3 internal error\n\n"
      "Full documentation: man musa-stubgen, and docs/ in the source tree.");
  app.add_option("FILE", a.inputs, "the libraries to fix (or use --report)");
  a.context.add_to(app);
  app.add_option("--report", a.report_file, "reuse a musa-linkcheck JSON report instead of analysing FILEs");
  app.add_option("--out-cpp", a.so.out_cpp, "the stub source")->capture_default_str();
  app.add_option("--out-header", a.so.out_header, "the stub header")->capture_default_str();
  app.add_option("--namespace", a.ns, "enclosing namespace for C++ stubs whose own namespace cannot be used");
  app.add_option("--style", a.style, "stub bodies: throw (default), abort or return-error")
      ->check(CLI::IsMember({"throw", "abort", "return-error"}));
  // A name the contract does not have is a usage error (naming the valid ones), not a silent no-op.
  std::vector<std::string> classifications;
  for (int k = 0; k <= static_cast<int>(mlc::Classification::Unknown); ++k)
    classifications.push_back(mlc::to_string(static_cast<mlc::Classification>(k)));
  app.add_option("--stub", a.stub_classes, "also stub symbols of this classification (repeatable), e.g. unknown")
      ->allow_extra_args(false)
      ->check(CLI::IsMember(classifications));
  // The names each backend gives its version macro and stub runtime (src/backend), for the help.
  std::string macros, runtimes;
  for (const mlc::backend::Backend* b : mlc::backend::all()) {
    macros += (macros.empty() ? "" : ", ") + b->name + ": " + b->version_macro;
    runtimes += (runtimes.empty() ? "" : ", ") + b->name + ": " + b->stubs_header;
  }
  app.add_option("--version-guard", a.guard,
                 "wrap stubs in #if defined(V) && (V < N), V the backend's version macro (" + macros + ")");
  app.add_option("--cmake-patch", a.cmake_patch, "write the source-list / link patches as a unified diff to PATH");
  app.add_flag("--apply", a.apply, "apply the CMake patches in place (atomically)");
  app.add_flag("--prune", a.so.prune, "remove generated stubs no longer needed");
  app.add_flag("--dry-run", a.dry_run, "print what would change, write nothing");
  app.add_flag("--no-runtime", a.no_runtime, "do not copy the stub runtime header (" + runtimes + ") beside the stubs");
  app.add_flag("--c10", a.c10, "throw with C10_THROW_ERROR (default: when c10/util/Exception.h is in a source tree)");
  app.add_flag("--no-c10", a.no_c10, "throw a standard exception");
  mlc::tools::document_options(app);
}

// The files the run writes, for the outputs rule (common/outputs.h): the stub files, which it merges into
// (the source index reads them as sources), the patch, and with a plan the stub runtime header and
// the build files --apply patches (read by the build model, for that very patch).
std::vector<mlc::FileWrite> writes_of(const Arguments& a, const mlc::stubgen::Plan* plan) {
  using mlc::ReadKind;
  std::vector<mlc::FileWrite> out;
  out.push_back({.option = "--out-cpp", .shown = a.out_cpp_given, .path = a.so.out_cpp, .may_be = {ReadKind::Source}});
  out.push_back(
      {.option = "--out-header", .shown = a.out_header_given, .path = a.so.out_header, .may_be = {ReadKind::Source}});
  if (!a.cmake_patch.empty())
    out.push_back({.option = "--cmake-patch", .shown = a.cmake_patch, .path = absolute(a.cmake_patch), .may_be = {}});
  if (!plan) return out;
  for (const auto& f : plan->stub_files)
    if (f.path != a.so.out_cpp && f.path != a.so.out_header)
      out.push_back(
          {.option = "the stub runtime header", .shown = f.path, .path = f.path, .may_be = {ReadKind::Source}});
  if (a.apply)
    for (const auto& f : plan->cmake_files)
      out.push_back({.option = "--apply", .shown = f.path, .path = f.path, .may_be = {ReadKind::BuildFile}});
  return out;
}

// The files the command line names for the run to read: the inputs, the saved report, the context files.
std::vector<mlc::FileRead> named_reads(const Arguments& a) {
  std::vector<mlc::FileRead> reads = mlc::tools::inputs_read(a.inputs);
  if (!a.report_file.empty())
    reads.push_back(
        {.path = absolute(a.report_file), .what = "the --report " + a.report_file, .kind = mlc::ReadKind::Context});
  for (auto& r : a.context.files_named()) reads.push_back(std::move(r));
  return reads;
}

// The stub options from the parsed flags, then the usage errors the parser cannot see (no input, an
// output that is also read, unusable paths): each is exit status 2.
std::optional<int> check_arguments(Arguments& a) {
  if (a.inputs.empty() && a.report_file.empty()) {
    std::fprintf(
        stderr,
        "musa-stubgen: missing FILE (or --report REPORT.json)\nTry 'musa-stubgen --help' for more information.\n");
    return 2;
  }
  auto& so = a.so;
  so.style = a.style == "abort"          ? mlc::stubgen::Style::Abort
             : a.style == "return-error" ? mlc::stubgen::Style::ReturnError
                                         : mlc::stubgen::Style::Throw;
  for (const auto& c : a.stub_classes) so.classes.insert(*mlc::from_string<mlc::Classification>(c));
  so.version_guard = a.guard;
  so.ns = a.ns;
  a.out_cpp_given = so.out_cpp;
  a.out_header_given = so.out_header;
  so.out_cpp = absolute(so.out_cpp);
  so.out_header = absolute(so.out_header);
  so.runtime_header = a.no_runtime ? "" : mlc::tools::stub_runtime_header();
  if (a.c10) so.c10 = true;
  if (a.no_c10) so.c10 = false;

  if (mlc::tools::refuse_clobber("musa-stubgen", writes_of(a, nullptr), named_reads(a))) return 2;
  if (auto e = a.context.path_error()) {
    std::fprintf(stderr, "musa-stubgen: error: %s\n", e->c_str());
    return 2;
  }
  for (const auto& w : a.context.path_warnings()) std::fprintf(stderr, "musa-stubgen: warning: %s\n", w.c_str());
  if (auto bad = a.context.codegen_errors(); !bad.empty()) {
    for (const auto& e : bad) std::fprintf(stderr, "musa-stubgen: error: %s\n", e.c_str());
    return 2;
  }
  return std::nullopt;
}

// --dry-run prints the whole diff; otherwise the stubs are written, and the CMake changes applied,
// written to --cmake-patch or printed.
void write_changes(const Arguments& a, mlc::StubgenRun& done) {
  const mlc::stubgen::Plan& plan = done.plan;
  if (a.dry_run) {
    std::string diff = mlc::stubgen::diff_of(plan, a.so, true, true);
    std::fwrite(diff.data(), 1, diff.size(), stdout);
    return;
  }
  auto written = mlc::stubgen::apply(plan, true, a.apply);
  done.errors.insert(done.errors.end(), written.begin(), written.end());
  std::string cmake_diff = mlc::stubgen::diff_of(plan, a.so, false, true);
  if (!a.cmake_patch.empty()) {
    if (!mlc::tools::write_output(absolute(a.cmake_patch), cmake_diff)) {
      done.errors.push_back({absolute(a.cmake_patch), "cannot write the patch"});
    }
  } else if (!a.apply && !cmake_diff.empty()) {
    std::fwrite(cmake_diff.data(), 1, cmake_diff.size(), stdout);
    std::fprintf(stderr,
                 "musa-stubgen: CMake changes printed above; --apply applies them, --cmake-patch writes them\n");
  }
}

// Warnings, notes, refusals and errors on stderr, the one-line summary, and the exit status.
int summarize(const Arguments& a, const mlc::StubgenRun& done) {
  const mlc::stubgen::Plan& plan = done.plan;
  for (const auto& n : done.report.notes) std::fprintf(stderr, "musa-stubgen: note: %s\n", n.c_str());
  for (const auto& w : done.report.warnings) std::fprintf(stderr, "musa-stubgen: warning: %s\n", w.text.c_str());
  for (const auto& w : plan.warnings) std::fprintf(stderr, "musa-stubgen: warning: %s\n", w.c_str());
  for (const auto& n : plan.notes) std::fprintf(stderr, "musa-stubgen: %s\n", n.c_str());
  for (const auto& r : plan.refused)
    std::fprintf(stderr, "musa-stubgen: cannot fix %s: %s\n", r.symbol.c_str(), r.reason.c_str());
  // A broken CMake file is said once: the editor plans on the build reader's parse (buildmodel/edit.h).
  for (const auto& e : done.errors)
    std::fprintf(stderr, "musa-stubgen: error: %s\n", mlc::controls_escaped(e.to_line()).c_str());
  size_t changed = 0;
  for (const auto& f : plan.stub_files) changed += f.changed();
  for (const auto& f : plan.cmake_files) changed += (a.apply || a.dry_run) && f.changed();
  std::fprintf(stderr, "musa-stubgen: %zu stub%s, %zu build file%s to patch, %zu file%s %s, %zu symbol%s refused\n",
               plan.stubs.size(), plan.stubs.size() == 1 ? "" : "s", plan.cmake_files.size(),
               plan.cmake_files.size() == 1 ? "" : "s", changed, changed == 1 ? "" : "s",
               a.dry_run ? "would change" : "changed", plan.refused.size(), plan.refused.size() == 1 ? "" : "s");
  if (!done.errors.empty()) return 2;
  return plan.refused.empty() ? 0 : 1;
}

// The passes: parse, check the arguments, plan (and check) the fix, write it, summarize.
int run(int argc, char** argv) {
  CLI::App app{"Write stubs for symbols the SDK lacks and patch CMake lists so the library links.", "musa-stubgen"};
  Arguments a;
  add_options(app, a);
  if (int status = mlc::tools::parse_gnu(app, argc, argv); status >= 0) return status;
  a.so.beside_target = app.count("--out-cpp") == 0 && app.count("--out-header") == 0;
  if (auto status = check_arguments(a)) return *status;
  a.so.relative_to = std::filesystem::current_path().string();  // when the build names no source directory
  for (auto& in : a.inputs) in = absolute(in);
  // The context musa-linkcheck checks in, --python's answer included.
  std::vector<mlc::InputError> context_errors;
  mlc::LinkcheckOptions context = a.context.prepare(context_errors);
  for (const auto& e : context_errors) std::fprintf(stderr, "musa-stubgen: error: %s\n", e.to_line().c_str());
  mlc::tools::LoadedFiles loaded(a.inputs);  // every object each input's load reads
  context.inspect = [&](const mlc::loader::Process& process) { loaded.add(process); };
  auto result = mlc::run_stubgen(
      a.inputs,
      {.linkcheck = context, .report_file = a.report_file.empty() ? "" : absolute(a.report_file), .stubs = a.so});
  if (!result) {
    std::fprintf(stderr, "musa-stubgen: error: %s\n", result.error().to_line().c_str());
    return 2;
  }
  mlc::StubgenRun& done = result.value();
  a.so = done.stubs;
  // The outputs rule again, with everything the run read and every file the plan writes.
  std::vector<mlc::FileRead> reads = named_reads(a);
  reads.insert(reads.end(), loaded.reads().begin(), loaded.reads().end());
  reads.insert(reads.end(), done.read.begin(), done.read.end());
  if (mlc::tools::refuse_clobber("musa-stubgen", writes_of(a, &done.plan), reads)) return 2;
  if (done.after) {
    // Resolved counts only what compiled proof shows; what the sources' text alone promises is said apart.
    std::string text_alone;
    if (done.after->by_text > 0)
      text_alone = " (" + std::to_string(done.after->by_text) +
                   " resolved by the sources' text alone, not compiled here: known only after the rebuild)";
    std::fprintf(stderr, "musa-stubgen: after this patch: %zu of %zu still unresolved%s\n", done.after->still,
                 done.after->total, text_alone.c_str());
  }
  write_changes(a, done);
  int status = summarize(a, done);
  return context_errors.empty() ? status : 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "musa-stubgen: internal error: %s\n", e.what());
    return 3;
  }
}
