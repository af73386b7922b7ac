// musa-linkcheck: report what the dynamic loader would fail to resolve in ELF shared objects,
// without running them. Exit status (docs/contract.md): 0 clean, 1 findings, 2 bad input, 3 internal.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/phase_times.h"
#include "common/short_run.h"
#include "context_options.h"
#include "coverage_command.h"
#include "demangle/demangle.h"
#include "elf/elf_object.h"
#include "explain/explain.h"
#include "pipeline/linkcheck.h"
#include "python_context.h"
#include "report/baseline.h"
#include "report/escape.h"
#include "report/render.h"
#include "stubgen/stubgen.h"
#include "version.h"

namespace {

using mlc::tools::absolute;

// The classifications page SARIF rules link to: the installed copy beside the tool, else the source tree's.
std::string classifications_uri() {
  std::string page = MLC_SOURCE_CLASSIFICATIONS;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    auto installed =
        std::filesystem::path(exe).parent_path().parent_path() / MLC_INSTALLED_DOCDIR / "classifications.md";
    if (std::filesystem::exists(installed)) page = installed.string();
  }
  return "file://" + page;
}

// SARIF fixes: the plan musa-stubgen would make, run from this directory with its defaults (stubs in
// unimplemented_functions.cpp/.h beside the target's sources when the build knows them, else in ./,
// with the stub runtime header; CMake files patched in place).
// Planning writes nothing; a stub file it cannot merge into costs its fixes, not the report.
std::vector<mlc::SymbolFix> stub_fixes(const mlc::Report& report, mlc::TraceResources& resources) {
  bool any = false;
  for (const auto& lib : report.libraries) any |= !lib.unresolved.empty();
  if (!any) return {};
  mlc::stubgen::StubOptions so;
  so.out_cpp = absolute(so.out_cpp);
  so.out_header = absolute(so.out_header);
  so.runtime_header = mlc::tools::stub_runtime_header();
  so.beside_target = true;
  mlc::stubgen::place_beside_target(so, resources.context(nullptr), report);
  mlc::stubgen::Plan plan = mlc::stubgen::plan(report, resources.context(nullptr), so);
  for (const auto& e : plan.errors) {
    // A CMake file the build reader could not parse either is already an error of the report.
    bool said = std::find(report.errors.begin(), report.errors.end(), e) != report.errors.end();
    if (!said) std::fprintf(stderr, "musa-linkcheck: warning: no fixes from %s\n", e.to_line().c_str());
  }
  return mlc::stubgen::sarif_fixes(plan, report);
}

// explain's JSON: the report plus "explain", one entry per library named, what the text says of it
// (docs/contract.md): where the reference binds ("resolved", with the provider's real path and how the
// loader found it), or that nothing references it, with the spellings it does reference ("near").
std::string with_bindings(const std::string& json, const std::vector<mlc::explain::SymbolBinding>& bindings) {
  auto doc = nlohmann::ordered_json::parse(json);
  auto list = nlohmann::ordered_json::array();
  for (const auto& b : bindings) {
    nlohmann::ordered_json e;
    e["library"] = b.library;
    e["symbol"] = b.symbol;
    e["state"] = b.state == mlc::explain::SymbolBinding::State::Resolved     ? "resolved"
                 : b.state == mlc::explain::SymbolBinding::State::Unresolved ? "unresolved"
                                                                             : "unreferenced";
    if (b.state == mlc::explain::SymbolBinding::State::Resolved) {
      e["provider"] = b.provider;
      e["provider_soname"] = b.provider_name;
      e["how"] = mlc::loader::to_string(b.how);
      e["weak"] = b.weak;
    }
    if (!b.near.empty()) e["near"] = b.near;
    list.push_back(std::move(e));
  }
  doc["explain"] = std::move(list);
  return doc.dump(2) + "\n";
}

// What the command line asked for: CLI11 writes into these fields, so the value stays where it was made.
struct Arguments {
  std::vector<std::string> inputs;
  std::string format = "text", output, color = "auto", fail_on = "any";
  bool quiet = false;
  mlc::tools::ContextOptions context;
  std::string json_report;
  std::string baseline, update_baseline;
  bool runtime_listed = false;
  std::string symbol;
  CLI::App* explain = nullptr;
  mlc::tools::CoverageCommand coverage;
};

// --fail-on's value: a comma list of at most one of any, new, none, and the additions runtime and programs.
std::string check_fail_on(const std::string& value) {
  size_t start = 0;
  int kinds = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    std::string token = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const bool addition = token == "runtime" || token == "programs";
    if (!addition && token != "any" && token != "new" && token != "none")
      return "'" + token + "' is not one of any, new, none, runtime, programs";
    kinds += !addition;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return kinds > 1 ? "give at most one of any, new, none" : "";
}

// The command line: usage, every option, and the explain and coverage subcommands.
void add_options(CLI::App& app, Arguments& a) {
  app.set_version_flag("--version", mlc::tools::version_text("musa-linkcheck"));
  app.formatter(std::make_shared<mlc::tools::GnuUsage>(
      "Usage: musa-linkcheck [OPTION]... FILE_OR_DIR...\n       musa-linkcheck explain SYMBOL [OPTION]... "
      "[FILE_OR_DIR]...\n       musa-linkcheck coverage [OPTION]... SOURCE_DIR...",
      "Usage: musa-linkcheck explain SYMBOL [OPTION]... [FILE_OR_DIR]..."));
  app.footer(
      "Exit status:\n  0 nothing unresolved (beyond the baseline)\n  1 unresolved symbols, missing libraries or "
      "versions\n"
      "  2 usage error or unusable input\n  3 internal error\n\n"
      "Full documentation: man musa-linkcheck, and docs/ in the source tree.");
  app.add_option("FILE_OR_DIR", a.inputs,
                 "ELF shared objects or executables; a directory means every ELF file below it");
  a.context.add_to(app);
  app.add_option("--format", a.format,
                 "output format: text, json, or for CI sarif (code scanning), junit (test "
                 "reports), github (Actions annotations)")
      ->check(CLI::IsMember({"text", "json", "sarif", "junit", "github"}));
  app.add_option("-o,--output", a.output, "write the report to FILE (atomically) instead of standard output");
  app.add_option("--json-report", a.json_report, "also write the JSON report to FILE (as the CMake gate does)");
  app.add_option("--color", a.color,
                 "colour the text report: auto (on a terminal, unless NO_COLOR is set), always "
                 "or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--baseline", a.baseline, "findings listed in FILE are reported but do not fail");
  app.add_option("--update-baseline", a.update_baseline, "write the current findings to FILE as a baseline");
  app.add_option(
         "--fail-on", a.fail_on,
         "which findings make the exit status 1: any, new (not in the baseline) or "
         "none; add ',runtime' (or give 'runtime' alone for any,runtime) to make run-time look-ups (dlopen/dlsym "
         "names not satisfied, warnings by default) fail too, ',programs' to make programs found in a named "
         "directory that would not start fail too (warnings by default: no import runs them; a program named "
         "itself always counts)")
      ->check(check_fail_on);
  app.add_flag("-q,--quiet", a.quiet, "only the error lines");
  app.add_flag("--runtime", a.runtime_listed,
               "list every name looked up at run time (dlopen/dlsym literals) that is not found; by default a "
               "missing GPU driver gets one warning and the optional rest one note line (JSON always lists all)");
  a.explain = app.add_subcommand("explain", "trace one symbol (mangled or demangled); FILEs are optional");
  a.explain->add_option("SYMBOL", a.symbol, "the symbol")->required();
  a.explain->add_option("FILE_OR_DIR", a.inputs, "libraries that reference it");
  a.explain->fallthrough();
  a.coverage.add_to(app);
  mlc::tools::document_options(app);
}

// The files the run writes, for the outputs rule (common/outputs.h).
std::vector<mlc::FileWrite> writes_of(const Arguments& a) {
  std::vector<mlc::FileWrite> out;
  auto add = [&](const std::string& option, const std::string& path, std::vector<mlc::ReadKind> may_be) {
    if (!path.empty() && path != "-")
      out.push_back({.option = option, .shown = path, .path = absolute(path), .may_be = may_be});
  };
  add("-o", a.output, {});
  add("--json-report", a.json_report, {});
  add("--update-baseline", a.update_baseline,
      {mlc::ReadKind::BaselineFile});  // rewriting the baseline given is its point
  return out;
}

// The files the command line names for the run to read: the inputs, the context files, the baseline.
std::vector<mlc::FileRead> named_reads(const Arguments& a) {
  std::vector<mlc::FileRead> reads = mlc::tools::inputs_read(a.inputs);
  for (auto& r : a.context.files_named()) reads.push_back(std::move(r));
  if (!a.baseline.empty())
    reads.push_back(
        {.path = absolute(a.baseline), .what = "the --baseline " + a.baseline, .kind = mlc::ReadKind::BaselineFile});
  return reads;
}

// Usage errors the parser cannot see (no input, an output that is also read, unusable paths, an
// unreadable baseline): each is exit status 2 before any report is printed. Reads the baseline.
std::optional<int> check_arguments(const Arguments& a, std::optional<mlc::Baseline>& known) {
  if (!*a.explain && a.inputs.empty()) {
    std::fprintf(stderr, "musa-linkcheck: missing FILE_OR_DIR\nTry 'musa-linkcheck --help' for more information.\n");
    return 2;
  }
  // What the command line names is refused before the run; what the run finds it reads, after it.
  if (mlc::tools::refuse_clobber("musa-linkcheck", writes_of(a), named_reads(a))) return 2;
  if (auto e = a.context.path_error()) {
    std::fprintf(stderr, "musa-linkcheck: error: %s\n", e->c_str());
    return 2;
  }
  // A baseline that cannot be read fails the run before any report is printed.
  if (!a.baseline.empty()) {
    auto b = mlc::read_baseline(absolute(a.baseline));
    if (!b) {
      std::fprintf(stderr, "musa-linkcheck: error: %s\n", b.error().to_line().c_str());
      return 2;
    }
    known = std::move(b.value());
  }
  for (const auto& w : a.context.path_warnings()) std::fprintf(stderr, "musa-linkcheck: warning: %s\n", w.c_str());
  if (auto bad = a.context.codegen_errors(); !bad.empty()) {
    for (const auto& e : bad) std::fprintf(stderr, "musa-linkcheck: error: %s\n", e.c_str());
    return 2;
  }
  return std::nullopt;
}

// --python's interpreter is asked where its packages live (src/ gets the answer), and wheels are
// checked as the directory they unpack to, under the cache (or temporary) directory.
void prepare_inputs(Arguments& a, mlc::LinkcheckOptions& options, mlc::tools::UnpackedWheels& wheels,
                    std::vector<mlc::InputError>& context_errors) {
  if (*a.explain) return;
  std::string parent =
      options.trace.cache_dir.empty() ? std::filesystem::temp_directory_path().string() : options.trace.cache_dir;
  std::string unzip = options.python ? options.python->executable : "python3";
  for (auto& in : a.inputs) {
    if (!mlc::tools::is_wheel(in)) continue;
    auto dir = wheels.unpack(in, unzip, parent + "/wheels");
    if (dir) in = dir.value();
    else context_errors.push_back(dir.error());
  }
  std::erase_if(a.inputs, [](const std::string& in) { return mlc::tools::is_wheel(in); });
}

// What the analysis produced; resources stay for planning the SARIF fixes with the same indexes.
struct Analysis {
  mlc::Report report;
  std::optional<mlc::TraceResources> resources;
  std::string explained;  // explain: where the symbol binds, or that nothing references it
  std::vector<mlc::explain::SymbolBinding> explained_bindings;  // the same, for JSON
};

// explain: the symbol's report, and where it binds in each input. A malformed name is exit status 2.
std::optional<int> explain_symbol(const Arguments& a, mlc::LinkcheckOptions& options, Analysis& out) {
  const std::string& symbol = a.symbol;
  if (std::string why = mlc::explain::malformed_reason(symbol); !why.empty()) {
    std::fprintf(stderr, "musa-linkcheck: error: '%s' is not a symbol name: %s\n", symbol.c_str(), why.c_str());
    return 2;
  }
  // One load per input: the binding is read in the process the findings come from (with --python,
  // the import's), not from a second load in another environment.
  auto also = options.inspect;  // the outputs rule's collection of what the run reads
  options.inspect = [&](const mlc::loader::Process& process) {
    if (also) also(process);
    out.explained_bindings.push_back(mlc::explain::binding_in(symbol, process));
  };
  out.report = mlc::explain_symbol(symbol, a.inputs, options);
  options.inspect = also;
  for (const auto& b : out.explained_bindings)
    out.explained += mlc::explain::describe(
        b, b.symbol == symbol && mlc::demangle::is_mangled(symbol) ? mlc::demangle::demangle(symbol) : symbol);
  return std::nullopt;
}

// The check itself, over every input, with wheels named by their file rather than the unpacked copy.
void check_inputs(const Arguments& a, mlc::LinkcheckOptions& options, mlc::tools::UnpackedWheels& wheels,
                  Analysis& out) {
  // A progress line on a terminal, for runs over a second: never in the CI formats (their logs are
  // files) nor when stderr is not a tty; erased before the report is written.
  const auto start = std::chrono::steady_clock::now();
  bool drawn = false;
  if (isatty(STDERR_FILENO) && !a.quiet && (a.format == "text" || a.format == "json"))
    options.progress = [&](size_t done, size_t total) {
      if (done == total) {
        if (drawn) std::fprintf(stderr, "\r\x1b[K");
        return;
      }
      if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
      std::fprintf(stderr, "\rmusa-linkcheck: checked %zu of %zu files\x1b[K", done, total);
      drawn = true;
    };
  out.resources.emplace(options.trace, out.report);
  if (!a.inputs.empty()) mlc::run_linkcheck(a.inputs, options, *out.resources, out.report);
  wheels.rename_paths(out.report);
}

// The report in the format asked for.
std::string render(const Arguments& a, Analysis& in, const std::vector<std::string>& named_directories) {
  const mlc::Report& report = in.report;
  if (a.format == "json") {
    std::string text = mlc::render_json(report, MLC_VERSION);
    if (*a.explain) text = with_bindings(text, in.explained_bindings);
    return text;
  }
  // CI names files relative to the checkout (SARIF's %SRCROOT%, the runner's file=).
  auto root = [&] {
    const mlc::build::Model* build = in.resources ? in.resources->context(nullptr).build : nullptr;
    return mlc::tools::report_root(build ? build->source_dir : "", a.context.source_roots);
  };
  // An annotation goes on a source the DWARF names only where that file is here: a library built in a
  // container names /project/... or /opt/_internal/..., which no one reading the run can open.
  const mlc::SourceExists exists = [](const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec);
  };
  if (a.format == "sarif")
    return mlc::render_sarif(report,
                             {.tool_version = MLC_VERSION,
                              .help_uri = classifications_uri(),
                              .fixes = in.resources ? stub_fixes(report, *in.resources) : std::vector<mlc::SymbolFix>{},
                              .source_root = root(),
                              .source_exists = exists});
  if (a.format == "junit") return mlc::render_junit(report, exists);
  if (a.format == "github") return mlc::render_github(report, root(), exists);
  bool use_color = a.color == "always" ||
                   (a.color == "auto" && a.output.empty() && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
  // explain narrows the report to one symbol: a count of the load's causes would be a partial one,
  // and it has no library count to give.
  return (a.quiet ? "" : in.explained) + mlc::render_text(report, {.color = use_color,
                                                                   .quiet = a.quiet,
                                                                   .load_headlines = !*a.explain,
                                                                   .summary = !*a.explain,
                                                                   .runtime = a.runtime_listed,
                                                                   .environment = !named_directories.empty(),
                                                                   .named_directories = named_directories});
}

// Writes the report (and the JSON copy), names bad inputs on stderr, and maps the findings to the exit status.
int write_and_judge(const Arguments& a, const mlc::Report& report, const std::string& text, bool runtime_fatal) {
  if (!a.json_report.empty()) {
    if (auto e = mlc::tools::write_report(absolute(a.json_report), mlc::render_json(report, MLC_VERSION))) {
      std::fprintf(stderr, "musa-linkcheck: error: %s\n", e->to_line().c_str());
      return 2;
    }
  }
  if (auto e = mlc::tools::write_report(a.output == "-" ? a.output : absolute(a.output), text)) {
    std::fprintf(stderr, "musa-linkcheck: error: %s\n", e->to_line().c_str());
    return 2;
  }
  for (const auto& n : report.notes) std::fprintf(stderr, "musa-linkcheck: note: %s\n", n.c_str());
  // Bad inputs are named on stderr, one line each, whatever the format (JSON also lists them).
  for (const auto& e : report.errors)
    std::fprintf(stderr, "musa-linkcheck: error: %s\n", mlc::controls_escaped(e.to_line()).c_str());
  if (!report.errors.empty()) return 2;
  // Baselined findings never fail the run; "any" and "new" differ only in name once a baseline is given.
  if (runtime_fatal && !report.runtime_lookups.empty()) return 1;
  bool none = ("," + a.fail_on + ",").find(",none,") != std::string::npos;
  // A program found in a named directory fails the run only with --fail-on ...,programs (failing_findings).
  return mlc::failing_findings(report) > 0 && !none ? 1 : 0;
}

// The passes: parse, check the arguments, prepare the inputs, analyse, apply the baseline, render, write.
int run(int argc, char** argv) {
  CLI::App app{
      "Report the symbols the dynamic loader would fail to resolve, trace each to its origin, and say "
      "what to change - without running anything.",
      "musa-linkcheck"};
  Arguments a;
  add_options(app, a);
  if (int status = mlc::tools::parse_gnu(app, argc, argv); status >= 0) return status;
  if (*a.coverage.app) return a.coverage.run(a.context);
  std::optional<mlc::Baseline> known;
  if (auto status = check_arguments(a, known)) return *status;
  std::vector<mlc::InputError> context_errors;
  std::optional<mlc::PhaseTime> step(std::in_place, "context");
  mlc::LinkcheckOptions options = a.context.prepare(context_errors);
  mlc::elf::keep_mappings_until_exit();  // the process ends with the run: exit unmaps everything at once
  options.ends_with_process = true;      // and frees what the run built
  for (auto& in : a.inputs) in = absolute(in);
  std::vector<std::string> named_directories;
  for (const auto& in : a.inputs)
    if (std::error_code ec; std::filesystem::is_directory(in, ec)) named_directories.push_back(in);
  const bool runtime_fatal = ("," + a.fail_on + ",").find(",runtime,") != std::string::npos;
  mlc::tools::UnpackedWheels wheels;
  step.emplace("prepare-inputs");
  prepare_inputs(a, options, wheels, context_errors);
  step.reset();
  mlc::tools::LoadedFiles loaded(a.inputs);  // every object each input's load reads
  options.inspect = [&](const mlc::loader::Process& process) { loaded.add(process); };

  // Left to the process's end: end_run _exits without freeing what the report holds (a process's report
  // is thousands of strings, 0.2 ms to free), as lld leaves its arenas to the exit. In a sanitizer's build,
  // whose leak check runs at exit, it is freed on return.
  struct LeftToExit {
    std::unique_ptr<Analysis> analysis = std::make_unique<Analysis>();
    ~LeftToExit() {
      if (mlc::heap_preparation_built()) (void)analysis.release();
    }
  } kept;
  Analysis& analysis = *kept.analysis;
  if (*a.explain) {
    if (auto status = explain_symbol(a, options, analysis)) return *status;
  } else {
    mlc::PhaseTime t("analyse");
    check_inputs(a, options, wheels, analysis);
  }
  // The outputs rule again, with everything the run read: what the loads brought in, what tracing indexed.
  if (auto writes = writes_of(a); !writes.empty()) {
    mlc::PhaseTime t("outputs");
    std::vector<mlc::FileRead> reads = named_reads(a);
    reads.insert(reads.end(), loaded.reads().begin(), loaded.reads().end());
    if (analysis.resources)
      for (auto& r : analysis.resources->files_read()) reads.push_back(std::move(r));
    if (mlc::tools::refuse_clobber("musa-linkcheck", writes, reads)) return 2;
  }
  mlc::Report& report = analysis.report;
  report.errors.insert(report.errors.begin(), context_errors.begin(), context_errors.end());
  report.runtime_lookups_fatal = runtime_fatal;
  report.programs_fatal = ("," + a.fail_on + ",").find(",programs,") != std::string::npos;

  // Which interpreter --python took, said in text and JSON: what it said it runs (sys.executable, past
  // any shim), else the file found on PATH.
  report.interpreter = options.python ? options.python->executable : "";
  if (known) mlc::apply_baseline(report, *known);
  // --update-baseline accepts what it writes: once the file holds them, the findings are baselined, so
  // `musa-linkcheck --update-baseline f lib.so && git add f` reaches git add. A write that fails is exit 2.
  if (!a.update_baseline.empty()) {
    if (mlc::tools::write_output(absolute(a.update_baseline), mlc::render_baseline(report)))
      mlc::apply_baseline(report, mlc::baseline_of(report));
    else report.errors.push_back({absolute(a.update_baseline), "cannot write the baseline"});
  }
  step.emplace("render");
  std::string text = render(a, analysis, named_directories);
  step.emplace("write");
  return write_and_judge(a, report, text, runtime_fatal);
}

}  // namespace

int main(int argc, char** argv) {
  mlc::prepare_heap();
  mlc::start_parallel_runtime();  // beside the command line and the context, before the first load
  try {
    int status = 0;
    {
      mlc::PhaseTime t("main");
      status = run(argc, argv);
    }
    mlc::end_run(status);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "musa-linkcheck: internal error: %s\n", e.what());
    mlc::end_run(3);  // as every other end: exit's destructors would race start_parallel_runtime's thread
  } catch (...) {
    std::fprintf(stderr, "musa-linkcheck: internal error\n");
    mlc::end_run(3);
  }
}
