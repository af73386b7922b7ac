// The context options both tools take (docs/contract.md): the loader's environment and where
// tracing looks. Declared once here, turned into mlc::LinkcheckOptions after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/outputs.h"
#include "option_docs.h"
#include "pipeline/linkcheck.h"

namespace mlc::tools {

struct ContextOptions {
  std::vector<std::string> with, library_path, source_roots, cmake_lists;
  std::string sysroot, build_dir, porting_dir, mapping, cache_dir;
  std::string cpu_level;  // --cpu-level: the x86-64 level the loader's process runs at ("" for this machine's)
  std::vector<std::string> codegen_yamls;
  std::string backend = mlc::backend::all().front()->name;  // --backend: a backend::all() name, the first by default
  std::optional<std::string> sdk_home, cuda_home;
  bool closure = false, only_named = false, no_cache = false;
  bool no_reconfigure = false;  // --no-reconfigure: never run cmake on the build tree
  // The confirm pass (src/confirm): on whenever a build tree is given (or with --confirm), unless
  // --no-confirm.
  bool confirm = false, no_confirm = false;
  double confirm_budget = 60;
  bool verbose = false;  // --verbose: every candidate's failed compile said
  // --python [EXE]: the interpreter (and its libpython, a dependency) first in --with's load order.
  std::string python;
  CLI::Option* python_option = nullptr;

  void add_to(CLI::App& app);
  // One warning per context path given that does not exist or is not what the option wants
  // ("--build-dir /nonexistent: No such file or directory"): a wrong path otherwise shows only as
  // silence.
  std::vector<std::string> path_warnings() const;
  // The context path a run cannot go on without (a --sysroot that is no directory, a --mapping that
  // does not exist), as one line: the tool says it and exits 2 before any report.
  std::optional<std::string> path_error() const;
  // "FILE: reason" for each --codegen-yaml that is no backend yaml: an unusable input, refused (exit 2)
  // before anything is checked, whether or not a symbol would have needed it.
  std::vector<std::string> codegen_errors() const;
  // The interpreter --python resolves to ("" without --python): said in the report.
  std::string python_interpreter() const;
  // The context files named on the command line, as the run reads them (--with, --mapping or its
  // *.json, --cmake-lists, --codegen-yaml): no output may replace one (common/outputs.h).
  std::vector<FileRead> files_named() const;
  // Paths made absolute, defaults filled from the environment ($MUSA_HOME, LD_LIBRARY_PATH...).
  LinkcheckOptions resolve() const;
  // resolve(), and --python's interpreter asked where its packages live (tools/python_context.h): the one
  // context both tools check in. An interpreter that cannot answer is an error in `errors`; the run then
  // goes on as without --python.
  LinkcheckOptions prepare(std::vector<InputError>& errors) const;
};

// Lexically absolute (no symlink resolution: $ORIGIN depends on the path as given).
std::string absolute(const std::string& path);

// GNU-style --version text: "<tool> (MusaLinkcheck) X.Y.Z" and a copyright line.
std::string version_text(const std::string& tool);

// The stub runtime's header (musa_stubs.h) that musa-stubgen copies beside the stubs: installed
// beside the tools (../include), else the source tree's.
std::string stub_runtime_header();

// The checkout CI reports are relative to (SARIF's %SRCROOT%, GitHub annotations' file=): the git work
// tree (the nearest directory holding .git) around the build's source directory (`build_source_dir`,
// "" without a build), else around the first --source-root, else around the working directory; where
// none holds .git, that directory itself.
std::string report_root(const std::string& build_source_dir, const std::vector<std::string>& source_roots);

// The named inputs as the outputs rule names them ("the input ./lib.so"), as given.
std::vector<FileRead> inputs_read(const std::vector<std::string>& inputs);

// Every object of each input's process (LinkcheckOptions::inspect hands them over), as the outputs
// rule names it: the file checked (named, or found under a named directory), --with's and the
// interpreter, and what its load brings in.
class LoadedFiles {
 public:
  explicit LoadedFiles(const std::vector<std::string>& named) : named_(named) {}
  void add(const loader::Process& process);
  const std::vector<FileRead>& reads() const { return reads_; }

 private:
  std::vector<std::string> named_;  // the inputs as named, absolute
  std::vector<FileRead> reads_;
  std::set<std::string> seen_;
};

// The outputs rule (common/outputs.h): when a write would replace a file the run reads, or another
// write, says so on one line ("TOOL: error: ...") and returns true; the tool then exits 2.
bool refuse_clobber(const std::string& tool, const std::vector<FileWrite>& writes, const std::vector<FileRead>& reads);

// Writes to stdout ("" or "-") or atomically to a file.
bool write_output(const std::string& path, const std::string& text);
// The same, saying why it could not (the system's error text, e.g. "cannot write: Permission denied").
std::optional<InputError> write_report(const std::string& path, const std::string& text);

}  // namespace mlc::tools
