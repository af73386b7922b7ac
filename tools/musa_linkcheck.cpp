// musa-linkcheck: report what the dynamic loader would fail to resolve in ELF shared objects,
// without running them. Exit status (docs/contract.md): 0 clean, 1 findings, 2 bad input, 3 internal.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "pipeline/linkcheck.h"
#include "report/render.h"
#include "version.h"

namespace {

std::string absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  // Lexical only: realpath would resolve symlinks, and $ORIGIN depends on the unresolved path.
  char buf[4096];
  if (!getcwd(buf, sizeof buf)) return path;
  std::string p = path;
  while (p.rfind("./", 0) == 0) p = p.substr(2);
  return std::string(buf) + "/" + p;
}

std::vector<std::string> split_env_path(const char* value) {
  std::vector<std::string> out;
  if (!value || !*value) return out;
  std::string s = value;
  size_t start = 0;
  while (true) {
    size_t sep = s.find_first_of(":;", start);
    out.push_back(s.substr(start, sep == std::string::npos ? std::string::npos : sep - start));
    if (sep == std::string::npos) break;
    start = sep + 1;
  }
  return out;
}

bool write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0;
  }
  // Atomic: a reader never sees half a report.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!(out << text)) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

int run(int argc, char** argv) {
  CLI::App app{"Report the symbols the dynamic loader would fail to resolve, without running anything.",
               "musa-linkcheck"};
  app.set_version_flag("--version", std::string("musa-linkcheck ") + MLC_VERSION);
  std::vector<std::string> inputs, with, library_path;
  std::string sysroot, format = "text", output, color = "auto", fail_on = "any";
  bool closure = false, quiet = false;
  app.add_option("FILE_OR_DIR", inputs, "ELF shared objects or executables; a directory means every ELF file below it")
      ->required();
  app.add_option("--with", with, "a library already loaded before FILE (repeatable, in load order)");
  app.add_option("--library-path", library_path, "extra directory searched like LD_LIBRARY_PATH (repeatable)");
  app.add_option("--sysroot", sysroot, "resolve absolute search paths and ld.so.cache inside DIR");
  app.add_flag("--closure", closure, "check every object in the DT_NEEDED closure, as ldd -r does");
  app.add_option("--format", format, "output format")->check(CLI::IsMember({"text", "json"}));
  app.add_option("-o,--output", output, "write the report to FILE (atomically) instead of standard output");
  app.add_option("--color", color, "colour the text report")->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--fail-on", fail_on, "which findings make the exit status 1")->check(CLI::IsMember({"any", "none"}));
  app.add_flag("-q,--quiet", quiet, "only the error lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  mlc::LinkcheckOptions options;
  options.closure = closure;
  options.env.sysroot = sysroot;
  for (const auto& d : library_path) options.env.library_path.push_back(absolute(d));
  for (const auto& d : split_env_path(std::getenv("LD_LIBRARY_PATH"))) options.env.library_path.push_back(d);
  for (const auto& w : with) options.env.with.push_back(absolute(w));
  for (auto& in : inputs) in = absolute(in);

  mlc::Report report = mlc::run_linkcheck(inputs, options);

  std::string text;
  if (format == "json") {
    text = mlc::render_json(report, MLC_VERSION);
  } else {
    bool use_color = color == "always" ||
                     (color == "auto" && output.empty() && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
    text = mlc::render_text(report, {use_color, quiet});
  }
  if (!write_output(output, text)) {
    std::fprintf(stderr, "musa-linkcheck: error: %s: cannot write the report\n", output.c_str());
    return 2;
  }
  // Bad inputs are named on stderr, one line each, whatever the format (JSON also lists them).
  for (const auto& e : report.errors) std::fprintf(stderr, "musa-linkcheck: error: %s\n", e.to_line().c_str());
  if (!report.errors.empty()) return 2;
  bool findings = report.unresolved_count() + report.missing_library_count() + report.missing_version_count() > 0;
  return findings && fail_on == "any" ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "musa-linkcheck: internal error: %s\n", e.what());
    return 3;
  } catch (...) {
    std::fprintf(stderr, "musa-linkcheck: internal error\n");
    return 3;
  }
}
