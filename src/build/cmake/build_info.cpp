// Reads the build tree and the CMake sources. compile_commands.json and the File API say what was
// compiled; the CMake reader says where each list lives, so a missing file can be put in the right one.
#include "build/cmake/build_info.h"

#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <sstream>

#include "build/cmake/file_api.h"
#include "build/cmake/generator_targets.h"
#include "build/command_line.h"
#include "common/file_io.h"
#include "common/paths.h"
#include "common/walk.h"

namespace mlc::build::cmake {

std::string expand_variables(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out = text;
  for (int guard = 0; guard < 32; ++guard) {
    size_t close = out.find('}');
    size_t open = close == std::string::npos ? std::string::npos : out.rfind("${", close);
    if (open == std::string::npos) break;
    std::string name = out.substr(open + 2, close - open - 2);
    auto it = vars.find(name);
    out.replace(open, close - open + 1, it == vars.end() ? "" : it->second);
  }
  return out;
}

namespace {

std::vector<std::string> split_semicolons(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ';') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool has_wildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> evaluate_glob(const std::string& pattern, bool recurse) {
  std::vector<std::string> out;
  if (!recurse) {
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i)
        if (!is_dir(g.gl_pathv[i])) out.push_back(normalize_path(g.gl_pathv[i]));
    }
    globfree(&g);
    return out;
  }
  // GLOB_RECURSE "dir/*.mu": every matching file in dir and below.
  size_t wild = pattern.find_first_of("*?[");
  size_t slash = pattern.rfind('/', wild);
  std::string base = slash == std::string::npos ? "." : pattern.substr(0, slash);
  // "/*.cpp" or "${UNSET}/*.cpp": CMake would walk the whole file system; no build means that.
  if (base.empty() || base == "/") return out;
  std::string rest = slash == std::string::npos ? pattern : pattern.substr(slash + 1);
  walk_tree(base, [&](const std::string& f, const struct stat&) {
    std::string rel = f.substr(base.size() + 1);
    std::string name = rel.substr(rel.rfind('/') + 1);
    if (fnmatch(rest.c_str(), rel.c_str(), 0) == 0 || fnmatch(rest.c_str(), name.c_str(), 0) == 0) {
      out.push_back(normalize_path(f));
    }
  });
  return out;
}

}  // namespace

ListEntry make_entry(const CMakeArg& arg, const std::map<std::string, std::string>& vars, const std::string& cur_dir,
                     bool glob_command, bool recurse) {
  ListEntry e;
  e.raw = arg.value;
  e.line = arg.line;
  e.begin = arg.begin;
  e.end = arg.end;
  if (arg.value.find("$<") != std::string::npos) return e;  // a generator expression: left as written, names nothing
  for (const auto& piece : split_semicolons(expand_variables(arg.value, vars))) {
    // No file name holds a NUL byte: the C library would read the path only up to it (a
    // GLOB_RECURSE over "/\0..." would walk the whole file system).
    if (piece.find('\0') != std::string::npos) continue;
    std::string path = entry_in(cur_dir, piece);
    if (glob_command && has_wildcard(piece)) {
      e.is_glob = true;
      auto files = evaluate_glob(path, recurse);
      e.files.insert(e.files.end(), files.begin(), files.end());
    } else if (path_exists(path)) {
      e.files.push_back(path);
    } else if (!glob_command) {
      e.files.push_back(path);  // add_library names it even if absent: CMake would fail at configure
    }
    // In file(GLOB), an explicit path that does not exist silently names nothing.
  }
  return e;
}

bool is_keyword(const std::string& a) {
  static const std::set<std::string> kw = {"PRIVATE",
                                           "PUBLIC",
                                           "INTERFACE",
                                           "STATIC",
                                           "SHARED",
                                           "MODULE",
                                           "OBJECT",
                                           "EXCLUDE_FROM_ALL",
                                           "CONFIGURE_DEPENDS",
                                           "LIST_DIRECTORIES",
                                           "FOLLOW_SYMLINKS",
                                           "RELATIVE",
                                           "ALIAS",
                                           "IMPORTED",
                                           "GLOBAL",
                                           "PARENT_SCOPE",
                                           "CACHE",
                                           "FORCE",
                                           "FILE_SET",
                                           "BASE_DIRS",
                                           "FILES",
                                           "TYPE",
                                           "HEADERS"};
  return kw.count(a) > 0;
}

std::map<std::string, std::string> read_cmake_cache(const std::string& path, std::optional<InputError>& error) {
  std::map<std::string, std::string> vars;
  auto text = read_text(path);
  if (!text) {
    error = InputError{path, "cannot open CMakeCache.txt"};
    return vars;
  }
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("//", 0) == 0) continue;
    size_t colon = line.find(':');
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    size_t name_end = colon != std::string::npos && colon < eq ? colon : eq;
    std::string name = line.substr(0, name_end);
    if (!name.empty() && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    std::string value = line.substr(eq + 1);
    if (!value.empty() && value.back() == '\r') value.pop_back();
    vars[name] = value;
  }
  return vars;
}

namespace {

// One directory scope of the CMake language: its variables, and for each variable the source lists
// (indexes into the output) whose entries make it up, so add_library(T ${V}) can tie them to T.
struct Scope {
  std::map<std::string, std::string> vars;
  std::map<std::string, std::set<size_t>> origins;
  std::string library_helper;  // the backend's add_library helper (musa_add_library): child scopes keep it
};

using Vars = std::map<std::string, std::string>;

// The lists that arguments from `from` on draw on through their ${...} references.
void draw_on(const std::vector<CMakeArg>& a, size_t from, const Scope& scope, std::set<size_t>& sources) {
  for (size_t k = from; k < a.size(); ++k)
    for (const auto& v : referenced_variables(a[k].value))
      if (auto it = scope.origins.find(v); it != scope.origins.end())
        sources.insert(it->second.begin(), it->second.end());
}

// The reader evaluates no loop, so a value grows only by what the text spells; this cap holds a file
// that spells an exponential growth (set(A ${A} ${A}) repeated) to linear time and memory.
constexpr size_t kMaxValue = size_t{1} << 20;

std::string bounded(std::string value) {
  if (value.size() <= kMaxValue) return value;
  size_t cut = value.rfind(';', kMaxValue);
  value.resize(cut == std::string::npos ? kMaxValue : cut);
  return value;
}

// The items of `a` then those of `b` that `a` lacks, each once (CMake lists: ';'-separated).
std::string union_of(const std::string& a, const std::string& b) {
  std::set<std::string_view> seen;
  std::string out;
  out.reserve(a.size() + b.size() + 1);
  auto add = [&](const std::string& list) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(';', start);
      if (end == std::string::npos) end = list.size();
      std::string_view item(list.data() + start, end - start);
      if (!item.empty() && seen.insert(item).second) {
        out += out.empty() ? "" : ";";
        out.append(item);
      }
      start = end + 1;
    }
  };
  add(a);
  add(b);
  return bounded(std::move(out));
}

// Where the reading of a file stands at a command: its scope, the parent's (for set(... PARENT_SCOPE)),
// and how many if()/foreach()/while() blocks hold the command.
struct ReadScope {
  Scope& scope;
  Scope* parent = nullptr;
  int conditional = 0;
};

// set(V ...): the variable's new value, in this scope or (PARENT_SCOPE) the parent's; the list is
// list number `index`.
void read_set(const std::vector<CMakeArg>& a, SourceList& list, const ReadScope& at, size_t index,
              std::set<size_t>& sources) {
  auto& [scope, parent, conditional] = at;
  const auto& vars = scope.vars;
  list.variable = expand_variables(a[0].value, vars);
  std::string value;
  bool up = false;
  for (size_t k = 1; k < a.size(); ++k) {
    if (a[k].value == "CACHE") break;
    if (a[k].value == "PARENT_SCOPE") {
      up = true;
      break;
    }
    value += (value.empty() ? "" : ";") + expand_variables(a[k].value, vars);
  }
  draw_on(a, 1, scope, sources);
  sources.insert(index);
  Scope& into = up && parent ? *parent : scope;
  if (up && !parent) return;
  // set() in one branch of an if() does not undo the other branch's: both lists may feed the target.
  // The union keeps each item once: `set(X ${X} a.c)` under n if()s would otherwise double X n times.
  if (conditional > 0 && into.vars.count(list.variable)) {
    std::string& old = into.vars[list.variable];
    old = union_of(old, value);
    into.origins[list.variable].insert(sources.begin(), sources.end());
  } else {
    into.vars[list.variable] = bounded(std::move(value));
    into.origins[list.variable] = sources;
  }
}

// list(APPEND|PREPEND|REMOVE_ITEM V ...): the variable's new value; an addition draws on its arguments' lists.
void read_list_edit(const std::vector<CMakeArg>& a, SourceList& list, Scope& scope, size_t index,
                    std::set<size_t>& sources) {
  auto& vars = scope.vars;
  list.variable = expand_variables(a[1].value, vars);
  std::string& value = vars[list.variable];
  if (a[0].value == "REMOVE_ITEM") {
    list.removal = true;
    std::set<std::string> gone;
    for (size_t k = 2; k < a.size(); ++k)
      for (const auto& piece : split_semicolons(expand_variables(a[k].value, vars))) gone.insert(piece);
    std::string kept;
    for (const auto& piece : split_semicolons(value))
      if (!gone.count(piece)) kept += (kept.empty() ? "" : ";") + piece;
    value = kept;
  } else {
    for (size_t k = 2; k < a.size(); ++k) value += (value.empty() ? "" : ";") + expand_variables(a[k].value, vars);
    value = bounded(std::move(value));
    draw_on(a, 2, scope, sources);
    scope.origins[list.variable].insert(sources.begin(), sources.end());
    scope.origins[list.variable].insert(index);
  }
}

// list(FILTER V EXCLUDE REGEX re): a removal whose one entry is the regex, naming what it takes out.
void read_list_filter(const std::vector<CMakeArg>& a, SourceList& list, Vars& vars, const std::string& cur_dir) {
  list.variable = expand_variables(a[1].value, vars);
  list.removal = true;
  list.filter = true;
  ListEntry e;
  e.raw = a[4].value;
  e.line = a[4].line;
  e.begin = a[4].begin;
  e.end = a[4].end;
  std::string& value = vars[list.variable];
  const auto pieces = split_semicolons(value);
  const auto matched = regex_matches(expand_variables(a[4].value, vars), pieces);
  const std::set<std::string> gone(matched.begin(), matched.end());
  std::string kept;
  for (const auto& piece : pieces) {
    if (gone.count(piece)) e.files.push_back(entry_in(cur_dir, piece));
    else kept += (kept.empty() ? "" : ";") + piece;
  }
  value = kept;
  list.entries.push_back(std::move(e));
}

}  // namespace

std::vector<std::string> regex_matches(const std::string& written, const std::vector<std::string>& items) {
  std::vector<std::string> out;
  try {
    // CMake's escapes first: written "/d\\.cc$", the regex is /d\.cc$.
    std::string pattern;
    for (size_t k = 0; k < written.size(); ++k) {
      if (written[k] == '\\' && k + 1 < written.size()) {
        char next = written[++k];
        pattern += next == 'n' ? '\n' : next == 't' ? '\t' : next == 'r' ? '\r' : next;
      } else {
        pattern += written[k];
      }
    }
    const std::regex re(pattern, std::regex::extended);
    for (const auto& item : items)
      if (std::regex_search(item, re)) out.push_back(item);
  } catch (const std::regex_error&) {
    // A regex CMake accepts but std::regex does not: it takes nothing out here.
  }
  return out;
}

namespace {

// How a command's arguments name files: relative to `cur_dir`, and as glob patterns (file(GLOB)),
// recursive ones (file(GLOB_RECURSE)).
struct EntryKind {
  const std::string& cur_dir;
  bool glob_cmd = false, recurse = false;
};

// The list's entries, from argument `first` on (keywords and file sets skipped, repeats noted); a
// glob's variable becomes the files it matched.
void read_entries(const std::vector<CMakeArg>& a, size_t first, SourceList& list, Vars& vars, const EntryKind& kind) {
  const auto& [cur_dir, glob_cmd, recurse] = kind;
  std::set<std::string> seen;
  bool file_set = false;  // target_sources(T FILE_SET ...): headers of a file set, not sources
  for (size_t k = first; k < a.size(); ++k) {
    const std::string& v = a[k].value;
    if (v == "PRIVATE" || v == "PUBLIC" || v == "INTERFACE") file_set = false;
    if (v == "FILE_SET") file_set = true;
    if (file_set) continue;
    if (is_keyword(v)) {
      if (v == "RELATIVE" || v == "LIST_DIRECTORIES") ++k;  // skip its value
      continue;
    }
    if (list.command == build::ListCommand::Set && (v == "CACHE" || v == "PARENT_SCOPE")) break;
    ListEntry e = make_entry(a[k], vars, cur_dir, glob_cmd, recurse);
    if (!e.raw.empty() && !seen.insert(e.raw).second) list.duplicates.push_back(e.raw);  // "" is no source
    list.entries.push_back(std::move(e));
  }
  if (glob_cmd) {
    std::string value;
    for (const auto& e : list.entries)
      for (const auto& f : e.files) value += (value.empty() ? "" : ";") + f;
    vars[list.variable] = value;
  }
}

// One CMake file's commands, read as the file `cmake_file` in the source directory `cur_dir`.
struct ListFile {
  const std::vector<CMakeCommand>& commands;
  const std::string& cmake_file;
  const std::string& cur_dir;
};

// Reads the source-list commands of one file into `lists`, updating `scope` (and `parent` for
// set(... PARENT_SCOPE)) as CMake would; other commands go to `other` (add_subdirectory, include).
void read_commands(const ListFile& file, Scope& scope, Scope* parent, std::vector<SourceList>& lists,
                   const std::function<void(const CMakeCommand&)>& other) {
  const auto& [commands, cmake_file, cur_dir] = file;
  auto& vars = scope.vars;
  vars["CMAKE_CURRENT_SOURCE_DIR"] = cur_dir;
  vars["CMAKE_CURRENT_LIST_DIR"] = cmake_file.substr(0, cmake_file.rfind('/'));
  int conditional = 0;  // inside if()/foreach()/while(): branches are not evaluated, so each one counts
  for (const auto& cmd : commands) {
    const auto& a = cmd.args;
    if (cmd.name == "if" || cmd.name == "foreach" || cmd.name == "while") ++conditional;
    if ((cmd.name == "endif" || cmd.name == "endforeach" || cmd.name == "endwhile") && conditional > 0) --conditional;
    SourceList list;
    list.cmake_file = cmake_file;
    list.command = list_command(cmd.name, scope.library_helper);
    list.current_dir = cur_dir;
    list.line = cmd.line;
    list.close_paren = cmd.close_paren;
    list.conditions = static_cast<uint32_t>(conditional);
    size_t first = 0;
    bool glob_cmd = false, recurse = false;
    size_t index = lists.size();
    std::set<size_t> sources;  // the lists this command's ${...} arguments draw on
    if (cmd.name == "set" && a.size() >= 1) {
      read_set(a, list, {.scope = scope, .parent = parent, .conditional = conditional}, index, sources);
      first = 1;
    } else if (cmd.name == "list" && a.size() >= 2 &&
               (a[0].value == "APPEND" || a[0].value == "PREPEND" || a[0].value == "REMOVE_ITEM")) {
      read_list_edit(a, list, scope, index, sources);
      first = 2;
    } else if (cmd.name == "list" && a.size() == 5 && a[0].value == "FILTER" && a[2].value == "EXCLUDE" &&
               a[3].value == "REGEX") {
      read_list_filter(a, list, vars, cur_dir);
      lists.push_back(std::move(list));
      continue;
    } else if (cmd.name == "file" && a.size() >= 2 && (a[0].value == "GLOB" || a[0].value == "GLOB_RECURSE")) {
      list.variable = expand_variables(a[1].value, vars);
      first = 2;
      glob_cmd = true;
      recurse = a[0].value == "GLOB_RECURSE";
      scope.origins[list.variable] = {index};
    } else if (creates_target(cmd.name, scope.library_helper) && !a.empty()) {
      bool alias = std::any_of(a.begin(), a.end(),
                               [](const CMakeArg& x) { return x.value == "ALIAS" || x.value == "IMPORTED"; });
      if (alias) continue;
      list.variable = expand_variables(a[0].value, vars);
      first = 1;
      draw_on(a, 1, scope, sources);
      list.targets.insert(list.variable);
      for (size_t k : sources) lists[k].targets.insert(list.variable);
    } else {
      other(cmd);
      continue;
    }
    read_entries(a, first, list, vars, {.cur_dir = cur_dir, .glob_cmd = glob_cmd, .recurse = recurse});
    lists.push_back(std::move(list));
  }
}

}  // namespace

std::vector<SourceList> find_source_lists(const std::vector<CMakeCommand>& commands, const std::string& cmake_file,
                                          std::map<std::string, std::string>& vars, const std::string& library_helper) {
  std::vector<SourceList> lists;
  Scope scope{.vars = vars, .origins = {}, .library_helper = library_helper};
  const std::string cur_dir = cmake_file.substr(0, cmake_file.rfind('/'));
  read_commands({.commands = commands, .cmake_file = cmake_file, .cur_dir = cur_dir}, scope, nullptr, lists,
                [](const CMakeCommand&) {});
  vars = std::move(scope.vars);
  return lists;
}

namespace {

// The objects each source's compile commands write that the build has not written yet (by source).
using MissingObjects = std::map<std::string, std::vector<std::string>>;

MissingObjects take_compile_database(Model& info) {
  MissingObjects missing;
  const auto database = build::read_compile_database(info.build_dir);
  if (!database->present) return missing;
  if (!database->valid) {
    info.errors.push_back(
        {info.build_dir + "/compile_commands.json", "invalid JSON (expected an array of compile commands)"});
    return missing;
  }
  info.has_compile_database = true;
  for (const auto& [dir, file] : database->files) info.compiled.insert(entry_in(dir, file));
  // A source whose object the build has not written yet (an entry added, a glob that sees a new file,
  // since the last build) is compiled by the configure but in no library built so far.
  for (const auto& c : database->commands) {
    auto out = build::output_argument(c.argv);
    if (!out) continue;
    const std::string object = entry_in(c.directory, c.argv[out->index].substr(out->offset));
    if (path_exists(object)) continue;
    info.unbuilt.insert(normalize_path(c.file));
    missing[normalize_path(c.file)].push_back(object);
  }
  return missing;
}

// What is compiled, as far as the libraries built so far are concerned: a target whose artifact exists
// was built without its unbuilt sources (a target never built yet keeps them: nothing is behind).
// A source is unbuilt for a target whose own object of it is missing (CMakeFiles/<target>.dir/...): the
// shared library built, the static twin of the same sources (archive_static) never, leaves the shared
// one's sources compiled. An object under no target's directory counts for every target.
void drop_unbuilt(Model& info, const MissingObjects& missing) {
  if (info.unbuilt.empty()) return;
  std::set<std::string> dropped;
  for (auto& t : info.targets) {
    if (std::none_of(t.artifacts.begin(), t.artifacts.end(), [](const std::string& a) { return path_exists(a); }))
      continue;
    const std::string own = "/CMakeFiles/" + t.name + ".dir/";
    for (const auto& f : info.unbuilt) {
      auto it = missing.find(f);
      const bool ours = it == missing.end() || std::any_of(it->second.begin(), it->second.end(), [&](const auto& o) {
                          return o.find(own) != std::string::npos || o.find("/CMakeFiles/") == std::string::npos;
                        });
      if (ours && t.compiles.erase(f)) dropped.insert(f);
    }
  }
  for (const auto& f : dropped)
    if (std::none_of(info.targets.begin(), info.targets.end(),
                     [&](const Target& t) { return t.compiles.count(f) > 0; }))
      info.compiled.erase(f);
}

}  // namespace

namespace {

// The CMake files the last configure read (CMakeFiles/Makefile.cmake lists them, absolute), so a
// CMakeLists.txt under a switched-off add_subdirectory() or in packaging (debian/tests) is not taken
// for part of the build. Empty when unknown (another generator): then every reached file counts.
std::set<std::string> files_the_build_read(const std::string& build_dir) {
  std::set<std::string> out;
  std::string path = build_dir + "/CMakeFiles/Makefile.cmake";
  auto text = read_text(path);
  if (!text) return out;
  auto cmds = parse_cmake(*text, path);
  if (!cmds) return out;
  for (const auto& c : cmds.value())
    if (c.name == "set" && !c.args.empty() && c.args[0].value == "CMAKE_MAKEFILE_DEPENDS")
      for (size_t k = 1; k < c.args.size(); ++k) out.insert(entry_in(build_dir, c.args[k].value));
  return out;
}

// A CMake file read and parsed once, kept in the model's parse for the editor; a file that cannot be
// is an error, once. Null then.
const build::ProviderParse::File* parse_once(const std::string& file, build::ProviderParse& parse,
                                             std::set<std::string>& failed, std::vector<InputError>& errors) {
  if (auto it = parse.files.find(file); it != parse.files.end()) return &it->second;
  if (failed.count(file)) return nullptr;
  auto text = read_text(file);
  if (!text) {
    failed.insert(file);
    errors.push_back({file, "cannot open"});
    return nullptr;
  }
  auto commands = parse_cmake(*text, file);
  if (!commands) {
    failed.insert(file);
    errors.push_back(commands.error());
    return nullptr;
  }
  return &parse.files.emplace(file, build::ProviderParse::File{std::move(*text), std::move(commands).value()})
              .first->second;
}

// Reads the project as CMake does: the top CMakeLists.txt, each add_subdirectory() in a child scope
// and each include()d project file in the same scope, in order, so variables (and PARENT_SCOPE)
// carry what CMake would carry.
class TreeWalker {
 public:
  TreeWalker(Model& info, build::ProviderParse& parse, std::set<std::string> read)
      : info_(info), parse_(parse), read_(std::move(read)) {}

  void visit(const std::string& file, const std::string& cur_dir, Scope& scope, Scope* parent, int depth) {
    if (depth > 64 || !visited_.insert(file + "\n" + cur_dir).second) return;
    const auto* parsed = parse_once(file, parse_, failed_, info_.errors);
    if (!parsed) return;
    info_.cmake_files.push_back(file);
    read_commands({.commands = parsed->commands, .cmake_file = file, .cur_dir = cur_dir}, scope, parent, info_.lists,
                  [&](const CMakeCommand& c) {
                    if (c.args.empty()) return;
                    std::string arg = expand_variables(c.args[0].value, scope.vars);
                    if (c.name == "add_subdirectory") {
                      std::string dir = entry_in(cur_dir, arg);
                      std::string child_file = dir + "/CMakeLists.txt";
                      if (!path_exists(child_file) || (!read_.empty() && !read_.count(child_file))) return;
                      Scope child = scope;
                      visit(child_file, dir, child, &scope, depth + 1);
                      scope.vars["CMAKE_CURRENT_SOURCE_DIR"] = cur_dir;
                      scope.vars["CMAKE_CURRENT_LIST_DIR"] = file.substr(0, file.rfind('/'));
                    } else if (c.name == "include") {
                      // Only the project's own files: a module name (include(GNUInstallDirs)) is CMake's.
                      std::string path = entry_in(file.substr(0, file.rfind('/')), arg);
                      if (arg.find('/') == std::string::npos && arg.find(".cmake") == std::string::npos) return;
                      if (!path_exists(path) || is_dir(path) ||
                          (!info_.source_dir.empty() && path.rfind(info_.source_dir + "/", 0) != 0))
                        return;
                      visit(path, cur_dir, scope, parent, depth + 1);
                      scope.vars["CMAKE_CURRENT_LIST_DIR"] = file.substr(0, file.rfind('/'));
                    }
                  });
  }

 private:
  Model& info_;
  build::ProviderParse& parse_;
  std::set<std::string> read_;
  std::set<std::string> visited_;
  std::set<std::string> failed_;
};

}  // namespace

build::ListCommand list_command(const std::string& name, const std::string& library_helper) {
  using build::ListCommand;
  if (name == "set") return ListCommand::Set;
  if (name == "file") return ListCommand::Glob;
  if (name == "list") return ListCommand::ListEdit;
  if (!library_helper.empty() && name == library_helper) return ListCommand::BackendLibrary;
  if (creates_library(name, library_helper)) return ListCommand::AddLibrary;
  if (name == "target_sources") return ListCommand::TargetSources;
  return ListCommand::AddExecutable;  // add_executable, cuda_add_executable: creates_target's last kind
}

std::map<std::string, std::string> variables(const Model& build) {
  std::map<std::string, std::string> vars = build.cache;
  vars["CMAKE_SOURCE_DIR"] = build.source_dir;
  vars["PROJECT_SOURCE_DIR"] = build.source_dir;
  vars["CMAKE_BINARY_DIR"] = build.build_dir;
  vars["PROJECT_BINARY_DIR"] = build.build_dir;
  return vars;
}

namespace {

// The lists left naming no file in an if() branch the configure may have taken (branches.cpp).
void mark_emptied_lists(Model& info, const build::ProviderParse& parse) {
  const auto vars = variables(info);
  for (auto& l : info.lists) {
    auto it = parse.files.find(l.cmake_file);
    if (it == parse.files.end() || !names_no_file(l)) continue;
    std::vector<std::string> sources;
    for (const auto& t : info.targets)
      if (l.targets.count(t.name)) sources.insert(sources.end(), t.sources.begin(), t.sources.end());
    mark_emptied(l, it->second.commands, vars, {}, sources);
  }
}

// Asks CMake for its reply (file_api.h) and reads the new one; says so, or why it could not, in
// one note. Without a new reply, the one read before stands.
Reply ask_again(Model& info, const build::BuildOptions& options, const Reply& before) {
  const std::string call = "`" + cmake_program(info) + " " + info.build_dir + "`";
  if (auto failed = ask_cmake(info, options.ask_timeout_seconds)) {
    info.notes.push_back("could not ask CMake for its File API reply: " + failed->message + "; " +
                         (before.found ? "its older reply is read" : "the CMake files are read without it"));
    return before;
  }
  // The reply replaces what the older one said.
  info.targets.clear();
  info.compiled.clear();
  Reply reply = read_file_api(info);
  info.notes.push_back("asked CMake for its File API reply: " + call +
                       " configured the build tree again, which "
                       "leaves the cache and the built files as they are (--no-reconfigure reads the files alone)");
  return reply;
}

}  // namespace

}  // namespace mlc::build::cmake

namespace mlc::build {

// The one provider today: CMake.
Model read_build(const BuildOptions& options) {
  using namespace cmake;
  Model info;
  info.library_helper = options.library_helper;
  info.build_dir = options.build_dir.empty() ? "" : normalize_path(options.build_dir);
  info.may_run_build_system = options.ask_build_system;
  if (!info.build_dir.empty()) {
    std::optional<InputError> err;
    info.cache = read_cmake_cache(info.build_dir + "/CMakeCache.txt", err);
    if (err) info.errors.push_back(*err);
    if (auto it = info.cache.find("CMAKE_HOME_DIRECTORY"); it != info.cache.end()) info.source_dir = it->second;
    Reply reply = read_file_api(info);
    if (options.ask_build_system && !err && (!reply.found || !reply.has_inputs || reply_is_stale(reply)))
      reply = ask_again(info, options, reply);
    const MissingObjects missing = take_compile_database(info);
    drop_unbuilt(info, missing);
    if (reply.found) {
      // CMake's own answer: the lists are the commands its backtraces lead to, read as spans.
      info.from_build_system = true;
      auto parse = std::make_shared<ProviderParse>();
      info.lists = lists_from_reply(info, *parse, reply.inputs);
      if (!options.cmake_lists.empty()) {
        std::set<std::string> named;
        for (const auto& f : options.cmake_lists) named.insert(normalize_path(f));
        std::erase_if(info.lists, [&](const SourceList& l) { return !named.count(l.cmake_file); });
      }
      info.parse = std::move(parse);
      return info;
    }
    if (info.targets.empty()) {
      info.targets = targets_from_generator(info.build_dir, info.source_dir);
      drop_unbuilt(info, missing);
    }
  }
  auto parse = std::make_shared<ProviderParse>();
  std::set<std::string> failed;
  Scope scope{.vars = variables(info), .origins = {}, .library_helper = info.library_helper};
  std::string top = info.source_dir.empty() ? "" : normalize_path(info.source_dir) + "/CMakeLists.txt";
  if (options.cmake_lists.empty() && !top.empty() && path_exists(top)) {
    TreeWalker(info, *parse, files_the_build_read(info.build_dir))
        .visit(top, normalize_path(info.source_dir), scope, nullptr, 0);
    mark_emptied_lists(info, *parse);
    info.parse = std::move(parse);
    return info;
  }
  // Explicit files (or no top CMakeLists.txt): each read in turn in one scope.
  std::vector<std::string> files = options.cmake_lists;
  if (files.empty() && !info.source_dir.empty()) {
    walk_tree(info.source_dir, [&](const std::string& f, const struct stat&) {
      if (f.size() >= 14 && f.compare(f.size() - 14, 14, "CMakeLists.txt") == 0 &&
          (info.build_dir.empty() || f.rfind(info.build_dir + "/", 0) != 0)) {
        files.push_back(f);
      }
    });
  }
  for (const auto& f : files) {
    std::string path = normalize_path(f);
    const auto* parsed = parse_once(path, *parse, failed, info.errors);
    if (!parsed) continue;
    info.cmake_files.push_back(path);
    const std::string cur_dir = path.substr(0, path.rfind('/'));
    read_commands({.commands = parsed->commands, .cmake_file = path, .cur_dir = cur_dir}, scope, nullptr, info.lists,
                  [](const CMakeCommand&) {});
  }
  mark_emptied_lists(info, *parse);
  info.parse = std::move(parse);
  return info;
}

}  // namespace mlc::build
