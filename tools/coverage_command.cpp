// The coverage subcommand: the SDK and the map come from the same context options and caches as
// a link check (TraceResources), so a warm run reuses the SDK's header index.
#include "coverage_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "coverage/coverage.h"
#include "version.h"

namespace mlc::tools {

void CoverageCommand::add_to(CLI::App& parent) {
  app = parent.add_subcommand("coverage",
                              "list every CUDA API a source tree (or its ported tree) references, its counterpart, and "
                              "whether the backend's SDK declares and exports it");
  app->add_option("SOURCE_DIR", roots, "CUDA or ported source trees (or files)")->required();
  app->add_option("--format", format, "text, json, markdown or html (one self-contained page)")
      ->check(CLI::IsMember({"text", "json", "markdown", "html"}));
  app->add_option("-o,--output", output, "write the report to FILE (atomically) instead of standard output");
  app->footer(
      "Exit status:\n  0 the report was written\n  2 usage error or unusable input (a source tree, the map, the SDK)\n"
      "  3 internal error\n\nFull documentation: man musa-linkcheck, and docs/ in the source tree.");
  app->fallthrough();
  // It reads the SDK, the map and the caches, nothing loaded and no baseline: the loader, CI, confirm
  // and link-check output options would be ignored, so they are usage errors here.
  take_parent_groups(*app, {std::string(kContextGroup)});
}

int CoverageCommand::run(const ContextOptions& context) const {
  // A --source-root or a map that cannot be read fails the run before any report: a report whose header
  // names the map as used would claim what was not done.
  auto fail = [](const std::string& line) {
    std::fprintf(stderr, "musa-linkcheck: error: %s\n", line.c_str());
    return 2;
  };
  if (auto e = context.path_error()) return fail(*e);
  // The outputs rule (common/outputs.h): the report never replaces a tree scanned, the map or the SDK.
  std::vector<FileWrite> writes;
  if (!output.empty() && output != "-") writes.push_back({.option = "-o", .shown = output, .path = absolute(output)});
  std::vector<FileRead> reads = inputs_read(roots);
  for (auto& r : context.files_named()) reads.push_back(std::move(r));
  if (refuse_clobber("musa-linkcheck", writes, reads)) return 2;
  // (A SOURCE_DIR operand that cannot be read is named, and the others still reported, as for any input.)
  for (const auto& r : context.source_roots)
    if (access(r.c_str(), R_OK) != 0) return fail("--source-root " + r + ": " + std::strerror(errno));
  LinkcheckOptions options = context.resolve();
  Report errors_only;  // TraceResources reports problems reading the map or the SDK here
  TraceResources resources(options.trace, errors_only);
  const trace::TraceContext& ctx = resources.context(nullptr);
  if (!errors_only.errors.empty()) {
    for (const auto& e : errors_only.errors) fail(e.to_line());
    return 2;
  }
  coverage::CoverageOptions co;
  for (const auto& r : roots) co.roots.push_back(absolute(r));
  co.map = ctx.mapping;
  co.sdk = ctx.sdk();
  co.backend = &options.trace.backend;
  co.sdk_home = options.trace.sdk_home;
  co.mapping = options.trace.mapping;
  coverage::CoverageReport report = coverage::run_coverage(co);
  for (auto& r : resources.files_read()) reads.push_back(std::move(r));
  if (refuse_clobber("musa-linkcheck", writes, reads)) return 2;
  report.errors.insert(report.errors.begin(), errors_only.errors.begin(), errors_only.errors.end());
  if (co.sdk)
    for (const auto& e : co.sdk->errors) report.errors.push_back(e);
  std::string text = format == "json"       ? coverage::render_json(report, MLC_VERSION)
                     : format == "markdown" ? coverage::render_markdown(report)
                     : format == "html"     ? coverage::render_html(report)
                                            : coverage::render_text(report);
  if (!write_output(output.empty() ? "" : absolute(output), text)) {
    std::fprintf(stderr, "musa-linkcheck: error: %s: cannot write the report\n", output.c_str());
    return 2;
  }
  for (const auto& e : report.errors) std::fprintf(stderr, "musa-linkcheck: error: %s\n", e.to_line().c_str());
  return report.errors.empty() ? 0 : 2;
}

}  // namespace mlc::tools
