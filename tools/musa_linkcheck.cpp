// musa-linkcheck: report what the dynamic loader would fail to resolve in ELF shared objects,
// without running them. Exit status (docs/contract.md): 0 clean, 1 findings, 2 bad input, 3 internal.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

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

std::string default_cache_dir(const std::string& build_dir) {
  if (!build_dir.empty()) return absolute(build_dir) + "/.musa-linkcheck-cache";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/musa-linkcheck";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/musa-linkcheck";
  return "";
}

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int run(int argc, char** argv) {
  CLI::App app{"Report the symbols the dynamic loader would fail to resolve, trace each to its origin, and say "
               "what to change - without running anything.",
               "musa-linkcheck"};
  app.set_version_flag("--version", std::string("musa-linkcheck ") + MLC_VERSION);
  std::vector<std::string> inputs, with, library_path, source_roots, cmake_lists;
  std::string sysroot, format = "text", output, color = "auto", fail_on = "any";
  std::string build_dir, porting_dir, mapping, cache_dir;
  std::optional<std::string> sdk_home, cuda_home;
  bool closure = false, quiet = false, no_cache = false;
  app.add_option("FILE_OR_DIR", inputs, "ELF shared objects or executables; a directory means every ELF file below it");
  app.add_option("--with", with, "a library already loaded before FILE (repeatable, in load order)")->allow_extra_args(false);
  app.add_option("--library-path", library_path, "extra directory searched like LD_LIBRARY_PATH (repeatable)")->allow_extra_args(false);
  app.add_option("--sysroot", sysroot, "resolve absolute search paths and ld.so.cache inside DIR");
  app.add_flag("--closure", closure, "check every object in the DT_NEEDED closure, as ldd -r does");
  app.add_option("--build-dir", build_dir, "a CMake build tree (CMakeCache.txt, compile_commands.json, File API)");
  app.add_option("--porting-dir", porting_dir, "the generated porting tree (default: GENERATED_PORTING_DIR)");
  app.add_option("--source-root", source_roots, "a source tree to search for definitions (repeatable)")->allow_extra_args(false);
  app.add_option("--cmake-lists", cmake_lists, "a CMakeLists.txt whose source lists may be patched (repeatable)")->allow_extra_args(false);
  app.add_option("--sdk-home", sdk_home, "the vendor SDK root (default: $MUSA_HOME, else /usr/local/musa)");
  app.add_option("--cuda-home", cuda_home, "a reference CUDA install (default: /usr/local/cuda; '' for none)");
  app.add_option("--mapping", mapping, "torch_musa's porting map: a directory of *.json or one file");
  app.add_option("--cache-dir", cache_dir, "where source and header indexes are cached");
  app.add_flag("--no-cache", no_cache, "build the indexes afresh and keep no cache");
  app.add_option("--format", format, "output format")->check(CLI::IsMember({"text", "json"}));
  app.add_option("-o,--output", output, "write the report to FILE (atomically) instead of standard output");
  app.add_option("--color", color, "colour the text report")->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--fail-on", fail_on, "which findings make the exit status 1")->check(CLI::IsMember({"any", "none"}));
  app.add_flag("-q,--quiet", quiet, "only the error lines");
  std::string symbol;
  CLI::App* explain = app.add_subcommand("explain", "trace one symbol (mangled or demangled); FILEs are optional");
  explain->add_option("SYMBOL", symbol, "the symbol")->required();
  explain->add_option("FILE_OR_DIR", inputs, "libraries that reference it");
  explain->fallthrough();
  try {
    app.parse(argc, argv);
    if (!*explain && inputs.empty()) throw CLI::RequiredError("FILE_OR_DIR");
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
  auto& t = options.trace;
  t.build_dir = build_dir.empty() ? "" : absolute(build_dir);
  t.porting_dir = porting_dir.empty() ? "" : absolute(porting_dir);
  for (const auto& r : source_roots) t.source_roots.push_back(absolute(r));
  for (const auto& c : cmake_lists) t.cmake_lists.push_back(absolute(c));
  if (sdk_home) {
    t.sdk_home = sdk_home->empty() ? "" : absolute(*sdk_home);
  } else if (const char* m = std::getenv("MUSA_HOME"); m && *m) {
    t.sdk_home = m;
  } else if (is_dir("/usr/local/musa")) {
    t.sdk_home = "/usr/local/musa";
  }
  if (cuda_home) {
    t.cuda_home = cuda_home->empty() ? "" : absolute(*cuda_home);
  } else if (is_dir("/usr/local/cuda")) {
    t.cuda_home = "/usr/local/cuda";
  }
  t.mapping = mapping.empty() ? "" : absolute(mapping);
  t.cache_dir = no_cache ? "" : (cache_dir.empty() ? default_cache_dir(build_dir) : absolute(cache_dir));

  mlc::Report report = *explain ? mlc::explain_symbol(symbol, inputs, options) : mlc::run_linkcheck(inputs, options);

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
