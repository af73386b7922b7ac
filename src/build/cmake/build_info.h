// The CMake provider of the build model (buildmodel/model.h): CMakeCache.txt variables, the files
// compile_commands.json compiles, the targets (CMake File API, else the generator's own files), and the
// source lists written in CMakeLists.txt files (set, list(APPEND), file(GLOB|GLOB_RECURSE), add_library,
// musa_add_library, target_sources), each entry with its exact position for patching. What only this
// provider and its editor need is declared here; the rest of the tool includes buildmodel/model.h.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "build/cmake/cmake_lang.h"
#include "build/model.h"
#include "common/result.h"

namespace mlc::build {
// Each CMake file the reader parsed: its text and commands, for the editor (cmake/edit.cpp).
struct ProviderParse {
  struct File {
    std::string text;
    std::vector<cmake::CMakeCommand> commands;
  };
  std::map<std::string, File> files;
};

// Of lists that could take `file` (absolute), the nearest: the command that names its own header or
// source, else files of its kind, in its directory, with names like its; of that command, the section
// holding files of its kind. Null when there is none.
const SourceList* nearest_list(const std::vector<const SourceList*>& candidates, const std::string& file);

// True for an entry that is only a reference to other lists (${SRCS}) or a generator expression:
// it names no file of its own and is never a neighbour for a new entry.
bool is_indirect_entry(const std::string& raw);
}  // namespace mlc::build

namespace mlc::build::cmake {

// The provider works in the model's terms.
using build::absolute_in;
using build::CompileCommand;
using build::ListEntry;
using build::Model;
using build::normalize_path;
using build::read_compile_commands;
using build::SourceList;
using build::Target;

// The list command a CMake command is, for the source lists it writes.
build::ListCommand list_command(const std::string& name, const std::string& library_helper);

// The cache's variables plus CMAKE_SOURCE_DIR, PROJECT_SOURCE_DIR, CMAKE_BINARY_DIR, PROJECT_BINARY_DIR.
std::map<std::string, std::string> variables(const Model& build);

std::map<std::string, std::string> read_cmake_cache(const std::string& path, std::optional<InputError>& error);

// Source lists of one CMake file, with ${VAR} expanded from `vars` (updated by set()/list()).
// `library_helper` is the backend's CMake command that creates a library (musa_add_library).
std::vector<SourceList> find_source_lists(const std::vector<CMakeCommand>& commands, const std::string& cmake_file,
                                          std::map<std::string, std::string>& vars, const std::string& library_helper);

// The nvcc commands of FindCUDA's cuda_add_library()/cuda_add_executable(), which compile_commands.json
// leaves out: each generated CMakeFiles/<target>.dir/.../<target>_generated_<file>.cu.o.cmake script's
// command for its source, as it runs it in `configuration` (CMAKE_BUILD_TYPE; the script's default Debug).
std::vector<CompileCommand> read_findcuda_commands(const std::string& build_dir, const std::string& configuration);

// ${VAR} expansion (nested references inside-out); unknown variables expand to nothing, as in CMake.
std::string expand_variables(const std::string& text, const std::map<std::string, std::string>& vars);

// One argument of a list command as an entry: its text and position, and the files it names with
// `vars` expanded (a glob's matches in file(GLOB); an explicit path that exists; in add_library() and
// the like, the path even when absent).
ListEntry make_entry(const CMakeArg& arg, const std::map<std::string, std::string>& vars, const std::string& cur_dir,
                     bool glob_command, bool recurse);

// The items that a regex written in a CMake file (its escapes first: "/d\\.cc$" is /d\.cc$) finds in;
// none for a regex CMake accepts and std::regex does not.
std::vector<std::string> regex_matches(const std::string& written, const std::vector<std::string>& items);

// A header by its extension (.h, .hpp, .cuh, .inl, ...): never a translation unit of its own.
bool is_header(const std::string& path);

// A word CMake's list commands take as a keyword, never as a file (PRIVATE, SHARED, CACHE, ...).
bool is_keyword(const std::string& word);

// The if() branch a command sits in (cmake/branches.cpp): its condition's arguments (none for else()),
// the conditions of the branches before it in its chain, and the commands of the chain's other branches.
struct Branch {
  std::vector<std::string> condition;
  std::vector<std::vector<std::string>> earlier;
  std::vector<const CMakeCommand*> others;
};
// The innermost if() chain around the command ending at `close_paren`; none outside any if().
std::optional<Branch> branch_of(const std::vector<CMakeCommand>& commands, size_t close_paren);

// A condition as far as `vars` (the cache) and the Linux platform tell: a variable nobody knows, a
// target, a file or a regex leave it Unknown.
enum class Truth { False, True, Unknown };
Truth evaluate_condition(const std::vector<std::string>& args, const std::map<std::string, std::string>& vars);
// The branch is taken: its condition holds and none before it in the chain does.
Truth branch_taken(const Branch& branch, const std::map<std::string, std::string>& vars);

// Whether two words name one thing: one holds the other, both of four letters or more.
bool overlaps(const std::string& a, const std::string& b);
// The words a branch's condition asks for ("HAVE_LIBLZMA" -> liblzma), without those under NOT.
std::set<std::string> condition_words(const std::string& condition);
// The names of platforms as words of file names and conditions (unix, win32, linux, ...).
const std::set<std::string>& platform_names();

// A source list command inside an if() that names no file (target_sources(T PRIVATE), list(APPEND V),
// set(V ${V})): its entries went.
bool names_no_file(const SourceList& list);
// Marks such a list `emptied`, with the words of its branch's condition (`evidence`) and the files
// the chain's other branches name, when the configure took (or may have taken) the branch: its
// condition is not False by `vars`, and no command of another branch is in `ran` (the close_paren
// offsets of the file's commands that CMake's backtraces name). `target_sources` (the sources of the targets it feeds)
// give its common_words. Returns whether it did.
bool mark_emptied(SourceList& list, const std::vector<CMakeCommand>& commands,
                  const std::map<std::string, std::string>& vars, const std::set<size_t>& ran,
                  const std::vector<std::string>& target_sources);

// The source lists of a build read from its File API reply (cmake/spans.cpp): for each target's
// source, the innermost call of its stack whose text spells it, directly (add_library(T a.c),
// absl_cc_library(... SRCS a.cc)) or through a set()/list()/file(GLOB)/foreach() of a variable that call
// references. The CMake files are parsed once into `parse`: those the stacks name (a broken one is an
// error) and `inputs`, the other project files the configure read (a file of another language that
// only ends in .cmake is passed over). Nothing is evaluated.
std::vector<SourceList> lists_from_reply(Model& info, build::ProviderParse& parse,
                                         const std::vector<std::string>& inputs);

}  // namespace mlc::build::cmake
