// The context options both tools take (docs/contract.md): the loader's environment and where
// tracing looks. Declared once here, turned into mlc::LinkcheckOptions after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "option_docs.h"
#include "pipeline/linkcheck.h"

namespace mlc::tools {

struct ContextOptions {
  std::vector<std::string> with, library_path, source_roots, cmake_lists;
  std::string sysroot, build_dir, porting_dir, mapping, cache_dir;
  std::vector<std::string> codegen_yamls;
  std::string backend = mlc::backend::all().front()->name;  // --backend: a backend::all() name, the first by default
  std::optional<std::string> sdk_home, cuda_home;
  bool closure = false, only_named = false, no_cache = false;
  bool no_reconfigure = false;  // --no-reconfigure: never run cmake on the build tree
  // The confirm pass (src/confirm): on whenever a build tree is given (or with musa-linkcheck's
  // --confirm), unless --no-confirm.
  bool confirm = false, no_confirm = false;
  double confirm_budget = 60;
  // --python [EXE]: the interpreter (and its libpython, a dependency) first in --with's load order.
  std::string python;
  CLI::Option* python_option = nullptr;

  void add_to(CLI::App& app);
  // One warning per context path given that does not exist or is not what the option wants
  // ("--sysroot /nonexistent: No such file or directory"): a wrong path otherwise shows only as a
  // flood of findings (every library missing under a wrong sysroot) or as silence.
  std::vector<std::string> path_warnings() const;
  // The context path a run cannot go on without (a --mapping that does not exist), as one line: the
  // tool says it and exits 2 before any report.
  std::optional<std::string> path_error() const;
  // "FILE: reason" for each --codegen-yaml that is no backend yaml: an unusable input, refused (exit 2)
  // before anything is checked, whether or not a symbol would have needed it.
  std::vector<std::string> codegen_errors() const;
  // The interpreter --python resolves to ("" without --python): said in the report.
  std::string python_interpreter() const;
  // Paths made absolute, defaults filled from the environment ($MUSA_HOME, LD_LIBRARY_PATH...).
  LinkcheckOptions resolve() const;
};

// Lexically absolute (no symlink resolution: $ORIGIN depends on the path as given).
std::string absolute(const std::string& path);

// GNU-style --version text: "<tool> (MusaLinkcheck) X.Y.Z" and a copyright line.
std::string version_text(const std::string& tool);

// The stub runtime's header (musa_stubs.h) that musa-stubgen copies beside the stubs: installed
// beside the tools (../include), else the source tree's.
std::string stub_runtime_header();

// The usage error for an output file that is one of the inputs (the same device and inode, whatever
// the spelling): writing it would replace what is analysed with its report. "" when it is not.
std::string output_is_input(const std::string& option, const std::string& output, const std::vector<std::string>& inputs);

// Writes to stdout ("" or "-") or atomically to a file.
bool write_output(const std::string& path, const std::string& text);
// The same, saying why it could not (the system's error text, e.g. "cannot write: Permission denied").
std::optional<InputError> write_report(const std::string& path, const std::string& text);

}  // namespace mlc::tools
