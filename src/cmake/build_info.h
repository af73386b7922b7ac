// What the build knows: CMakeCache.txt variables, the files compile_commands.json compiles, the
// CMake File API's targets (sources, artifacts, link fragments), and the source lists written in
// CMakeLists.txt files (set, list(APPEND), file(GLOB|GLOB_RECURSE), add_library,
// musa_add_library, target_sources), each entry with its exact position for patching.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cmake/cmake_lang.h"
#include "common/result.h"

namespace mlc::cmake {

struct ListEntry {
  std::string raw;                 // as written
  std::vector<std::string> files;  // what it names on disk (globs evaluated; a missing explicit path names nothing)
  bool is_glob = false;
  uint32_t line = 0;
  size_t begin = 0, end = 0;       // byte range in the CMake file
};

struct SourceList {
  std::string variable;     // MU_SRCS, or the target name for add_library/target_sources
  std::string cmake_file;   // absolute path
  std::string command;      // set | list | file | add_library | the backend's (musa_add_library) | target_sources
  std::string current_dir;  // CMAKE_CURRENT_SOURCE_DIR of that file
  uint32_t line = 0;
  std::vector<ListEntry> entries;
  size_t close_paren = 0;   // where the command ends (an insertion point)
  std::vector<std::string> duplicates;  // entries written twice (raw spelling)
  std::set<std::string> targets;  // the targets it feeds: add_library(T ${V}), target_sources(T PRIVATE ${V}), ...
  bool removal = false;           // list(REMOVE_ITEM V ...): its entries are taken out of V
  bool filter = false;            // list(FILTER V EXCLUDE REGEX re) (a removal): its one entry is the regex
};

struct TargetInfo {
  std::string name;
  std::string type;                   // SHARED_LIBRARY, ...
  std::vector<std::string> artifacts;  // absolute paths
  std::vector<std::string> sources;    // absolute paths
  std::vector<std::string> link_fragments;
  std::set<std::string> compiles;          // its sources that it compiles (File API compileGroupIndex), normalized
  std::vector<std::string> dependencies;   // the targets it depends on, by name (File API dependencies)
  std::string cmake_file;             // where add_library() (or the backend's helper) is written, when known
  uint32_t line = 0;
  std::string source_dir;             // its CMAKE_CURRENT_SOURCE_DIR (File API paths.source), absolute
};

struct BuildInfo {
  std::string library_helper;  // the backend's CMake command that creates a library (musa_add_library)
  std::string build_dir;
  std::string source_dir;  // CMAKE_HOME_DIRECTORY
  std::map<std::string, std::string> cache;
  std::set<std::string> compiled;            // from compile_commands.json and the File API
  bool has_compile_database = false;
  std::vector<TargetInfo> targets;
  std::vector<SourceList> lists;
  std::vector<std::string> cmake_files;      // the CMakeLists.txt files read
  std::vector<InputError> errors;            // unreadable or broken inputs (the rest is still used)

  bool is_compiled(const std::string& abs_path) const;
  // The cache's variables plus CMAKE_SOURCE_DIR, PROJECT_SOURCE_DIR, CMAKE_BINARY_DIR, PROJECT_BINARY_DIR.
  std::map<std::string, std::string> variables() const;
  const TargetInfo* target_for_artifact(const std::string& path) const;
  // True when `target` compiles `abs_path` itself or through an OBJECT library it depends on
  // ($<TARGET_OBJECTS:...> or target_link_libraries(T obj)): another target compiling the same file
  // (a test that is neither built nor linked into it) does not count.
  bool compiled_by(const TargetInfo& target, const std::string& abs_path) const;
};

// The CMake target that builds the library at `path`: the File API's target with that artifact, else
// the target the library is named after (libcore.so.1 -> core), as add_library(core SHARED) names it.
std::string target_of_library(const BuildInfo* build, const std::string& path);

// Where the build's own sources live, searched for definitions when no --source-root names them:
// `trees` (walked, build trees below them skipped) are CMAKE_HOME_DIRECTORY, each target's source
// directory and the directories of the sources it lists or compiles; `flat` are such directories
// inside a build tree (generated sources), whose files alone are read, never the tree below.
// A directory inside another one listed is left out.
struct SearchRoots {
  std::vector<std::string> trees;
  std::vector<std::string> flat;
};
SearchRoots source_search_roots(const BuildInfo& build);

struct BuildOptions {
  std::string build_dir;                 // may be empty
  std::vector<std::string> cmake_lists;  // explicit CMakeLists.txt files; default: the build's own, read from
                                         // the top CMakeLists.txt through add_subdirectory() and include()
  std::string library_helper;            // the backend's CMake command that creates a library (musa_add_library)
};

BuildInfo read_build(const BuildOptions& options);

std::map<std::string, std::string> read_cmake_cache(const std::string& path, std::optional<InputError>& error);

// Source lists of one CMake file, with ${VAR} expanded from `vars` (updated by set()/list()).
// `library_helper` is the backend's CMake command that creates a library (musa_add_library).
std::vector<SourceList> find_source_lists(const std::vector<CMakeCommand>& commands, const std::string& cmake_file,
                                          std::map<std::string, std::string>& vars, const std::string& library_helper);

// Where a file that the build does not compile should be listed, and how to spell its entry there.
// `target` (may be empty) is the target whose library references the file's symbols: a list that
// feeds it wins. When a file(GLOB) of such a list already matches the file, or a list(REMOVE_ITEM)
// takes it out, no entry is proposed and `note` says why.
struct ListChoice {
  std::string cmake_file;
  std::string list;   // the variable, or the target for add_library()/target_sources()
  std::string entry;  // its value as it should be written (quoted at insertion when its neighbours are)
  uint32_t line = 0;
  std::string note;   // set instead of cmake_file/list/entry when no entry is the fix
};
std::optional<ListChoice> choose_list(const BuildInfo& build, const std::string& file, const std::string& target,
                                      const std::string& porting_dir);

// How `file` is written in `list`, in the style of its nearest entry: the same variable prefix
// (${CMAKE_CURRENT_SOURCE_DIR}/, ${GENERATED_PORTING_DIR}/...) or path relative to the list's directory.
std::string entry_spelling(const SourceList& list, const std::string& file, const std::string& porting_dir);

// A file that a file(GLOB) of the target's lists matches (`glob`, `glob_entry`), and the list(REMOVE_ITEM)
// or list(FILTER ... EXCLUDE REGEX) entry that takes it out again, if one does (`removal`, `removal_entry`).
struct Exclusion {
  const SourceList* glob = nullptr;
  const ListEntry* glob_entry = nullptr;
  const SourceList* removal = nullptr;
  const ListEntry* removal_entry = nullptr;
};
std::optional<Exclusion> exclusion_for(const BuildInfo& build, const std::string& file, const std::string& target);

// True when the build compiles a file the list names: the list is in the branch of an if() that the
// configure took (a list only in an inactive branch compiles nothing).
bool feeds_build(const BuildInfo& build, const SourceList& list);

// True for an entry that is only a reference to other lists (${SRCS}) or a generator expression:
// it names no file of its own and is never a neighbour for a new entry.
bool is_indirect_entry(const std::string& raw);

// ${VAR} expansion (nested references inside-out); unknown variables expand to nothing, as in CMake.
std::string expand_variables(const std::string& text, const std::map<std::string, std::string>& vars);

// Lexical path normalisation ("a/./b/../c" -> "a/c"), no symlink resolution.
std::string normalize_path(const std::string& path);

// `path` made absolute against `dir` (the working directory of a compile command), normalized.
std::string absolute_in(const std::string& dir, const std::string& path);

// One compile command from compile_commands.json: working directory and argv.
struct CompileCommand {
  std::string directory;
  std::vector<std::string> argv;
  std::string file;  // absolute
};
// The build's compile commands (none when build_dir is empty or has no readable compile_commands.json).
std::vector<CompileCommand> read_compile_commands(const std::string& build_dir);

}  // namespace mlc::cmake
