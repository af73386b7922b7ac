// The build model: what a configured build knows, in no generator's terms. Its targets (artifacts,
// what each compiles, the OBJECT libraries it takes), the files it compiles and how (compile
// commands), and where a source or a library is written into it: source lists with each entry's
// exact position, so a fix can be placed and patched (build/edit.h).
//
// trace, confirm and stubgen see the build only through this header and build/edit.h. CMake is the
// one provider today (src/cmake: CMakeCache.txt, the File API or the generator's own files, the
// CMakeLists.txt source lists); a second provider fills the same model.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace mlc::build {

struct ListEntry {
  std::string raw;                 // as written
  std::vector<std::string> files;  // what it names on disk (globs evaluated; a missing explicit path names nothing)
  bool is_glob = false;
  uint32_t line = 0;
  size_t begin = 0, end = 0;  // byte range in the build file
};

// What writes a source list: a variable's value, a glob, an edit of a variable's list, or a
// target's own sources (CMake: set, file(GLOB), list(APPEND|REMOVE_ITEM|FILTER), add_library or the
// backend's helper, add_executable, target_sources), or a project's own function or macro whose
// arguments the build system says are a target's sources (abseil's absl_cc_library(... SRCS ...)).
enum class ListCommand { Set, Glob, ListEdit, AddLibrary, BackendLibrary, AddExecutable, TargetSources, Call };

// True for the commands that create a library target (add_library, cuda_add_library, the backend's helper).
inline bool creates_library(ListCommand c) { return c == ListCommand::AddLibrary || c == ListCommand::BackendLibrary; }
// True for the commands whose list is a variable's value (set, file(GLOB), list(...)), not a target's sources.
inline bool is_variable_list(ListCommand c) {
  return c == ListCommand::Set || c == ListCommand::Glob || c == ListCommand::ListEdit;
}

struct SourceList {
  std::string variable;    // MU_SRCS, or the target name for add_library/target_sources
  std::string cmake_file;  // the build file writing it, absolute
  ListCommand command = ListCommand::Set;
  std::string current_dir;  // the directory its relative entries are read from (CMAKE_CURRENT_SOURCE_DIR)
  uint32_t line = 0;
  std::vector<ListEntry> entries;
  size_t close_paren = 0;               // where the command ends (an insertion point)
  std::vector<std::string> duplicates;  // entries written twice (raw spelling)
  std::set<std::string> targets;  // the targets it feeds: add_library(T ${V}), target_sources(T PRIVATE ${V}), ...
  bool removal = false;           // list(REMOVE_ITEM V ...): its entries are taken out of V
  bool filter = false;            // list(FILTER V EXCLUDE REGEX re) (a removal): its one entry is the regex
  // Entries naming an existing file that none of `targets` has, by the build system's own answer: a
  // command in an if() branch the configure did not take spells such files (File API only).
  size_t foreign = 0;
  uint32_t conditions = 0;  // the if() blocks its command sits in (0: the configure always runs it)
  // A command in an if() branch the configure took (or may have) that names no file any more: its
  // entries went (target_sources(T PRIVATE), list(APPEND V)). What it took is told by the branch's
  // condition ("HAVE_LIBLZMA") and by the files the chain's other branches name (x_win.c beside the
  // x_unix.c an else() held).
  bool emptied = false;
  std::vector<std::string> branch_siblings;  // files the other branches name, absolute
  // Words in the names of a quarter or more of its targets' sources (a project's prefix: "archive" of
  // archive_*.c): a condition's word among them (ARCHIVE_ACL_LIBACL) says nothing of a file.
  std::set<std::string> common_words;
  // The words of its condition and its set()'s name that speak for a file, without common_words and,
  // where the condition names several platforms, without theirs (cmake::mark_emptied).
  std::set<std::string> evidence;
};

// One call of the stack that added a target's source (CMake's File API backtraceGraph node): the
// file and line of the command, and its name. A stack runs from the innermost call (the add_library()
// or target_sources() that added it, perhaps inside a function) out to the CMakeLists.txt calling it.
struct Frame {
  std::string file;  // absolute
  uint32_t line = 0;
  std::string command;  // lower-cased, as the parser names commands
};

// A target's type, as CMake's codemodel names it (EXECUTABLE, SHARED_LIBRARY...). Unknown when nothing
// says; Other for a name this model has no use for.
enum class TargetType {
  Unknown,
  Executable,
  StaticLibrary,
  SharedLibrary,
  ModuleLibrary,
  ObjectLibrary,
  InterfaceLibrary,
  Utility,
  Other
};
// CMake's name of a type ("" for Unknown and Other), and the type CMake's name is.
std::string_view to_string(TargetType type);
TargetType target_type(std::string_view cmake_name);
// A library the linker writes or reads whole: SHARED, MODULE or STATIC (not an OBJECT library).
bool is_library(TargetType type);

// A target's source as the configure added it, with the call stack that added it.
struct AddedSource {
  std::string file;  // absolute, normalized
  bool compiled = false;
  std::vector<Frame> stack;  // innermost first; empty when the reply gives no backtrace
};

struct Target {
  std::string name;
  TargetType type = TargetType::Unknown;
  std::vector<std::string> artifacts;  // absolute paths
  std::vector<std::string> sources;    // absolute paths
  std::vector<std::string> link_fragments;
  std::set<std::string> compiles;         // its sources that it compiles, normalized
  std::vector<std::string> dependencies;  // the targets it depends on, by name
  std::string cmake_file;  // where the target is created (add_library() or the backend's helper), when known
  uint32_t line = 0;
  std::string source_dir;          // its source directory, absolute
  std::vector<AddedSource> added;  // its sources with the calls that added them (File API only)
};

// The provider's own reading of the build files (CMake: each file's text and commands), kept so
// that an edit is planned on the parse the model was read from: a file is parsed once.
struct ProviderParse;

struct Model {
  std::string library_helper;  // the backend's command that creates a library (musa_add_library)
  std::string build_dir;
  std::string source_dir;                    // the top of the sources (CMAKE_HOME_DIRECTORY)
  std::map<std::string, std::string> cache;  // the configure's variables (CMakeCache.txt)
  std::set<std::string> compiled;            // from compile_commands.json and the provider's targets
  // Sources the configure compiles whose object no build has written yet (an entry added, or a glob
  // that sees a new file, since the last build): not in the built artifacts of the targets that list
  // them, so not in their `compiles` nor in `compiled`.
  std::set<std::string> unbuilt;
  bool has_compile_database = false;
  std::vector<Target> targets;
  std::vector<SourceList> lists;
  std::vector<std::string> cmake_files;  // the build files read
  std::vector<InputError> errors;        // unreadable or broken inputs (the rest is still used)
  // Sources a command feeding a target names only inside an if() branch the configure did not take
  // (another platform's: bsd-proctitle.c under if(CMAKE_SYSTEM_NAME MATCHES "FreeBSD|OpenBSD")), each
  // with that command's file:line. Of two files defining a symbol, such a one is not the build's.
  std::map<std::string, std::string> untaken;
  std::vector<std::string> notes;  // what reading the build did that a person should know (one line each)
  // True when the targets and their lists come from the build system's own answer (CMake's File API
  // reply): the lists are then the commands that spell each target's sources, found by its backtraces,
  // and nothing was evaluated. False: the lists are the reader's own evaluation of the build files.
  bool from_build_system = false;
  bool may_run_build_system = false;  // BuildOptions::ask_build_system, kept for the editor's check
  std::shared_ptr<const ProviderParse> parse;

  bool is_compiled(const std::string& abs_path) const;
  const Target* target_for_artifact(const std::string& path) const;
  // True when the configure compiles `abs_path` into the target building `artifact` (into some target,
  // when none is known to build it) and `artifact` is older than the file or than a build file listing
  // it: an entry added, or a glob that sees a new file, since `artifact` was built. Rebuilding is the fix.
  bool awaits_rebuild(const std::string& abs_path, const std::string& artifact) const;
  // True when `target` compiles `abs_path` itself or through an OBJECT library it depends on
  // ($<TARGET_OBJECTS:...> or target_link_libraries(T obj)): another target compiling the same file
  // (a test that is neither built nor linked into it) does not count.
  bool compiled_by(const Target& target, const std::string& abs_path) const;
  // The target and the OBJECT libraries it takes, transitively (it first).
  std::vector<const Target*> with_objects(const Target& target) const;
  // The source files it is built from, its OBJECT libraries' included (not the object files
  // $<TARGET_OBJECTS:...> names).
  std::vector<std::string> source_files(const Target& target) const;
};

struct BuildOptions {
  std::string build_dir;                 // may be empty
  std::vector<std::string> cmake_lists;  // explicit build files; default: the build's own, from the top one
  std::string library_helper;            // the backend's command that creates a library (musa_add_library)
  // The tool's permission to run the build system itself (CMake: configure the existing build tree again
  // so that it writes its File API reply; check an edited tree on a copy). Off, only files are read.
  bool ask_build_system = false;
  unsigned ask_timeout_seconds = 600;  // one configure's limit
};

// The model of the build at options.build_dir (and its build files), read by its provider (CMake).
// With ask_build_system and no current reply of the build system's own, the provider asks it (CMake:
// writes the codemodel query and configures the build tree again, which leaves the cache and the
// built files alone) and says so in `notes`.
Model read_build(const BuildOptions& options);

// The target that builds the library at `path`: the target with that artifact, else the target the
// library is named after (libcore.so.1 -> core), as add_library(core SHARED) names it.
std::string target_of_library(const Model* build, const std::string& path);

// Where the build's own sources live, searched for definitions when no --source-root names them:
// `trees` (walked, build trees below them skipped) are the source directory, each target's source
// directory and the directories of the sources it lists or compiles; `flat` are such directories
// inside a build tree (generated sources), whose files alone are read, never the tree below.
// A directory inside another one listed is left out.
struct SearchRoots {
  std::vector<std::string> trees;
  std::vector<std::string> flat;
};
SearchRoots source_search_roots(const Model& build);

// Where a file that the build does not compile should be listed, and how to spell its entry there.
// `target` (may be empty) is the target whose library references the file's symbols: a list that
// feeds it wins. When a glob of such a list already matches the file, or a removal takes it out, no
// entry is proposed and `covered` says why. Answered by the provider (entries are spelled in its language).
struct GlobCovers {
  enum class Then {
    NeedsNoEntry,       // the fix lies elsewhere (a stale configure, a wrong directory, #if guards)
    RemovedAgain,       // a removal takes it out again: drop that entry
    ConfigureCompiles,  // the configure compiles it: the library predates it
  } then = Then::NeedsNoEntry;
  std::string file, pattern, list, at;  // at: the glob's list, file:line
  std::string removal, removal_at;      // RemovedAgain: the call (in the build's language) and where
};
struct ListChoice {
  std::string cmake_file;
  std::string list;   // the variable, or the target for add_library()/target_sources()
  std::string entry;  // its value as it should be written (quoted at insertion when its neighbours are)
  uint32_t line = 0;
  std::optional<GlobCovers> covered = std::nullopt;  // set instead of cmake_file/list/entry when no entry is the fix
};
std::optional<ListChoice> choose_list(const Model& build, const std::string& file, const std::string& target,
                                      const std::string& porting_dir);

// How `file` is written in `list`, in the style of its nearest entry: the same variable prefix
// (${CMAKE_CURRENT_SOURCE_DIR}/, ${GENERATED_PORTING_DIR}/...) or path relative to the list's directory.
std::string entry_spelling(const SourceList& list, const std::string& file, const std::string& porting_dir);

// A file that a glob of the target's lists matches (`glob`, `glob_entry`), and the removal entry
// (list(REMOVE_ITEM) or list(FILTER ... EXCLUDE REGEX)) that takes it out again, if one does.
struct Exclusion {
  const SourceList* glob = nullptr;
  const ListEntry* glob_entry = nullptr;
  const SourceList* removal = nullptr;
  const ListEntry* removal_entry = nullptr;
};
std::optional<Exclusion> exclusion_for(const Model& build, const std::string& file, const std::string& target);

// True when the build compiles a file the list names: the list is in the branch of an if() that the
// configure took (a list only in an inactive branch compiles nothing).
bool feeds_build(const Model& build, const SourceList& list);

// Lexical path normalisation ("a/./b/../c" -> "a/c"), no symlink resolution.
std::string normalize_path(const std::string& path);

// `path` made absolute against `dir` (the working directory of a compile command), normalized.
std::string absolute_in(const std::string& dir, const std::string& path);

// As absolute_in, but an empty `path` is `dir` itself: a File API path or a list entry relative to a directory.
std::string entry_in(const std::string& dir, const std::string& path);

// One compile command from compile_commands.json: working directory and argv.
struct CompileCommand {
  std::string directory;
  std::vector<std::string> argv;
  std::string file;  // absolute
};
// compile_commands.json as read: parsed once per run (kept while the file's device, inode, size, mtime
// and ctime stay the same), however many passes ask for it.
struct CompileDatabase {
  bool present = false;                                    // the file could be read
  bool valid = false;                                      // it is a JSON array
  std::vector<std::pair<std::string, std::string>> files;  // every entry's directory and "file", as written
  std::vector<CompileCommand> commands;                    // the entries with a command line
};
std::shared_ptr<const CompileDatabase> read_compile_database(const std::string& build_dir);
// A copy of the build's compile commands, for a caller that keeps its own (none when build_dir is empty or has
// no readable compile_commands.json); one that only reads them iterates read_compile_database's.
std::vector<CompileCommand> read_compile_commands(const std::string& build_dir);

// Every compile the build runs: compile_commands.json's, and those it leaves out (CMake: FindCUDA's
// .cu compiles, from the scripts it generates); and the build's CUDA compiler (CMAKE_CUDA_COMPILER,
// else FindCUDA's CUDA_NVCC_EXECUTABLE), for a .cu file that only host commands neighbour.
struct BuildCommands {
  std::vector<CompileCommand> db;
  std::string cuda_compiler;
};
BuildCommands read_build_commands(const std::string& build_dir);

}  // namespace mlc::build
