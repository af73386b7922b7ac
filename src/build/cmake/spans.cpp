// The source lists of a build whose targets CMake itself reported (File API): each target's source
// carries the call stack that added it; the innermost call whose text spells the source - in its own
// arguments, or in a set()/list()/file(GLOB)/foreach() of a variable that call references - is where
// its siblings are written, and so where a missing sibling goes. The CMake files are only read as
// byte ranges of commands and arguments: no if(), loop, function or variable is evaluated, beyond
// the directories a path is written relative to (CMAKE_CURRENT_SOURCE_DIR, PROJECT_SOURCE_DIR, the
// cache's variables).
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "build/cmake/build_info.h"
#include "common/file_io.h"
#include "common/paths.h"

namespace mlc::build::cmake {

// A header by its extension (CMake completes a name without one with the source extensions first).
bool is_header(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  static const std::set<std::string> headers = {"h", "hh", "hpp", "hxx", "h++", "inl", "inc", "cuh", "muh", "tcc"};
  return headers.count(name.substr(dot + 1)) > 0;
}

namespace {

using build::AddedSource;
using build::ListCommand;
using build::ProviderParse;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':';
  });
}

// An upper-case word (SRCS, SOURCES, PRIVATE, NAME): a keyword of the command, heading a section.
bool is_section_word(const std::string& s) {
  return s.size() >= 2 && std::isupper(static_cast<unsigned char>(s[0])) && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                  c == '_';
         });
}

// A command that writes a variable, and where its value's arguments start.
struct Writer {
  const std::string* file;
  const CMakeCommand* cmd;
  std::string variable;
  size_t first = 0;  // the first argument of the value
  bool glob = false, recurse = false, removal = false, filter = false;
};

// What the command at hand writes, if it writes a variable whose name is spelled out.
std::optional<Writer> writer_of(const std::string& file, const CMakeCommand& c) {
  const auto& a = c.args;
  Writer w{.file = &file, .cmd = &c, .variable = "", .first = 0};
  if (c.name == "set" && !a.empty()) {
    w.variable = a[0].value, w.first = 1;
  } else if (c.name == "list" && a.size() >= 2 &&
             (a[0].value == "APPEND" || a[0].value == "PREPEND" || a[0].value == "INSERT" ||
              a[0].value == "REMOVE_ITEM")) {
    w.variable = a[1].value, w.first = a[0].value == "INSERT" ? 3 : 2;
    w.removal = a[0].value == "REMOVE_ITEM";
  } else if (c.name == "list" && a.size() == 5 && a[0].value == "FILTER" && a[2].value == "EXCLUDE" &&
             a[3].value == "REGEX") {
    w.variable = a[1].value, w.first = 4, w.removal = true, w.filter = true;
  } else if (c.name == "file" && a.size() >= 2 && (a[0].value == "GLOB" || a[0].value == "GLOB_RECURSE")) {
    w.variable = a[1].value, w.first = 2, w.glob = true, w.recurse = a[0].value == "GLOB_RECURSE";
  } else if (c.name == "foreach" && !a.empty()) {
    w.variable = a[0].value, w.first = 1;  // the loop variable takes each item in turn
  } else {
    return std::nullopt;
  }
  if (w.variable.find("${") != std::string::npos || w.variable.empty()) return std::nullopt;
  return w;
}

// The variables whose value a command's arguments from `first` on draw on.
std::vector<std::string> drawn_on(const CMakeCommand& c, size_t first) {
  std::vector<std::string> out;
  bool lists = false;  // foreach(x IN LISTS A B ITEMS ...)
  for (size_t k = first; k < c.args.size(); ++k) {
    const std::string& v = c.args[k].value;
    if (c.name == "foreach" && (v == "LISTS" || v == "ITEMS" || v == "IN")) {
      lists = v == "LISTS" ? true : v == "ITEMS" ? false : lists;
      continue;
    }
    if (lists && is_identifier(v)) out.push_back(v);  // foreach(x IN LISTS A B) names A and B bare
    for (auto& name : referenced_variables(v)) out.push_back(std::move(name));
  }
  return out;
}

// One section of a command's arguments: the arguments between two keywords (SRCS a.cc b.cc, PRIVATE
// x.c), the keyword naming it ("" before the first).
struct Section {
  std::string keyword;
  std::vector<size_t> args;
};

class SpanReader {
 public:
  SpanReader(Model& info, ProviderParse& parse) : info_(info), parse_(parse) {}

  // Parses the files (those named by the stacks must parse; `inputs` are read when they do) and
  // indexes the commands writing each variable.
  void read(const std::vector<std::string>& inputs) {
    std::set<std::string> stack_files;
    for (const auto& t : info_.targets)
      for (const auto& s : t.added)
        for (const auto& f : s.stack) stack_files.insert(f.file);
    for (const auto& f : stack_files) parse_file(f, true);
    for (const auto& f : inputs)
      if (ends_with(f, "CMakeLists.txt") || ends_with(f, ".cmake")) parse_file(f, false);
    for (auto& [file, parsed] : parse_.files)
      for (const auto& c : parsed.commands)
        if (auto w = writer_of(file, c)) writers_[w->variable].push_back(*w);
  }

  std::vector<SourceList> lists() {
    for (const auto& t : info_.targets) {
      own_.clear();
      for (const auto& s : t.added) own_.insert(s.file);
      sections_.clear();  // its sections depend on the target's files
      for (const auto& s : t.added) place(t, s);
      add_creator(t);
    }
    for (const auto& t : info_.targets) add_emptied(t);
    std::vector<SourceList> out;
    for (auto& [key, list] : lists_) out.push_back(std::move(list));
    // A regex names what it takes out of the globs of its variable.
    for (auto& f : out) {
      if (!f.filter || f.entries.empty()) continue;
      for (const auto& g : out)
        if (g.command == ListCommand::Glob && g.variable == f.variable)
          for (const auto& e : g.entries)
            for (auto& m : regex_matches(f.entries[0].raw, e.files)) f.entries[0].files.push_back(std::move(m));
    }
    // In file order, then command order: as a person reads them.
    std::stable_sort(out.begin(), out.end(), [](const SourceList& a, const SourceList& b) {
      return std::tie(a.cmake_file, a.close_paren, a.line) < std::tie(b.cmake_file, b.close_paren, b.line);
    });
    return out;
  }

 private:
  void parse_file(const std::string& file, bool must) {
    if (parse_.files.count(file) || failed_.count(file)) return;
    auto text = read_text(file);
    if (!text) {
      failed_.insert(file);
      if (must) info_.errors.push_back({file, "cannot open"});
      return;
    }
    auto commands = parse_cmake(*text, file);
    if (!commands) {
      failed_.insert(file);
      if (must) info_.errors.push_back(commands.error());
      return;
    }
    parse_.files.emplace(file, ProviderParse::File{std::move(*text), std::move(commands).value()});
    info_.cmake_files.push_back(file);
  }

  // The if() blocks around `c` in its file, read from the if()/endif() spans (no condition is evaluated).
  uint32_t conditions_of(const std::string& file, const CMakeCommand& c) {
    auto& depths = depths_[file];
    if (depths.empty()) {
      uint32_t depth = 0;
      for (const auto& d : parse_.files.at(file).commands) {
        if (d.name == "endif" && depth > 0) --depth;
        depths[d.close_paren] = depth;
        if (d.name == "if") ++depth;
      }
    }
    auto it = depths.find(c.close_paren);
    return it == depths.end() ? 0 : it->second;
  }

  const CMakeCommand* command_at(const build::Frame& f) const {
    auto it = parse_.files.find(f.file);
    if (it == parse_.files.end()) return nullptr;
    for (const auto& c : it->second.commands)
      if (c.line == f.line && (f.command.empty() || c.name == f.command)) return &c;
    return nullptr;
  }

  // The variables a path may be written with: the cache's, and the directories known without evaluating.
  const std::map<std::string, std::string>& vars_for(const std::string& file) {
    auto it = vars_.find(file);
    if (it != vars_.end()) return it->second;
    auto vars = variables(info_);
    // PROJECT_SOURCE_DIR is the nearest project()'s, which only evaluation knows: its entries go by their tail.
    vars.erase("PROJECT_SOURCE_DIR");
    vars.erase("PROJECT_BINARY_DIR");
    vars["CMAKE_CURRENT_SOURCE_DIR"] = dir_of(file);
    vars["CMAKE_CURRENT_LIST_DIR"] = dir_of(file);
    return vars_[file] = std::move(vars);
  }

  // For a file(GLOB) pattern, besides: a name the file sets once, to words alone (set(src-pattern
  // "src/*.cpp")), has that value wherever it is read (yaml-cpp's file(GLOB yaml-cpp-sources
  // ${src-pattern})). A name set twice, or from other names, would need evaluation: it stays unknown.
  // (Only for patterns: add_executable(t ${TEST_SRCS}) spells no file, its set() does.)
  const std::map<std::string, std::string>& glob_vars_for(const std::string& file) {
    auto it = glob_vars_.find(file);
    if (it != glob_vars_.end()) return it->second;
    auto vars = vars_for(file);
    if (auto parsed = parse_.files.find(file); parsed != parse_.files.end()) {
      std::map<std::string, std::pair<int, std::string>> sets;
      for (const auto& c : parsed->second.commands) {
        if (c.name != "set" || c.args.size() < 2) continue;
        auto& [count, value] = sets[c.args[0].value];
        ++count;
        value.clear();
        for (size_t k = 1; k < c.args.size(); ++k) {
          const std::string& v = c.args[k].value;
          if (v.find("${") != std::string::npos || v.find("$<") != std::string::npos || v == "CACHE" ||
              v == "PARENT_SCOPE") {
            count = 2;  // not words alone
            break;
          }
          value += (value.empty() ? "" : ";") + v;
        }
      }
      for (const auto& [name, set] : sets)
        if (set.first == 1 && !vars.count(name)) vars[name] = set.second;
    }
    return glob_vars_[file] = std::move(vars);
  }

  // Whether argument `raw` of a command in `file` names `source` (absolute): its path with the known
  // directories expanded, relative to the file's directory or the target's; else, when it is written
  // below a variable this reader does not evaluate (${LZ4_LIB_SOURCE_DIR}/lz4.c), by its tail.
  bool spells(const std::string& raw, const std::string& file, const Target& t, const std::string& source,
              const Writer* glob) {
    if (raw.empty() || raw.find("$<") != std::string::npos) return false;
    const auto& vars = glob ? glob_vars_for(file) : vars_for(file);
    std::string expanded = raw;
    bool complete = true;
    for (const auto& v : referenced_variables(raw)) {
      auto it = vars.find(v);
      if (it == vars.end()) {
        complete = false;
        continue;
      }
      for (size_t at = expanded.find("${" + v + "}"); at != std::string::npos; at = expanded.find("${" + v + "}"))
        expanded.replace(at, v.size() + 3, it->second);
    }
    if (glob && expanded.find_first_of("*?[") != std::string::npos) {  // (the pattern may be a variable's value)
      if (!complete) return false;
      std::string pattern =
          expanded[0] == '/' ? normalize_path(expanded) : normalize_path(dir_of(file) + "/" + expanded);
      if (!glob->recurse) return fnmatch(pattern.c_str(), source.c_str(), FNM_PATHNAME) == 0;
      size_t wild = pattern.find_first_of("*?[");
      size_t slash = pattern.rfind('/', wild);
      if (slash == std::string::npos || source.compare(0, slash + 1, pattern, 0, slash + 1) != 0) return false;
      std::string rest = pattern.substr(slash + 1), name = source.substr(source.rfind('/') + 1);
      return fnmatch(rest.c_str(), source.c_str() + slash + 1, 0) == 0 || fnmatch(rest.c_str(), name.c_str(), 0) == 0;
    }
    // CMake tries the source extensions on a name without one ("drivers/pn532_uart" is pn532_uart.c); a
    // header is not taken so (a function's NAME fn is no fn.h).
    std::string named = source;
    const std::string last = raw.substr(raw.rfind('/') == std::string::npos ? 0 : raw.rfind('/') + 1);
    if (last.find('.') == std::string::npos && last.find('$') == std::string::npos && !is_header(source)) {
      size_t dot = source.rfind('.');
      if (dot != std::string::npos && dot > source.rfind('/')) named = source.substr(0, dot);
    }
    if (complete && expanded.find("${") == std::string::npos) {
      for (const std::string& base : {dir_of(file), t.source_dir})
        if ((expanded[0] == '/' ? normalize_path(expanded) : normalize_path(base + "/" + expanded)) == named)
          return true;
    }
    // The tail below the last variable: "${X}/src/a.c" -> "src/a.c"; a plain "core/a.c" is its own tail.
    std::string tail = raw;
    if (size_t close = raw.rfind('}'); close != std::string::npos) {
      if (raw.find("${") == std::string::npos || close + 1 >= raw.size() || raw[close + 1] != '/') return false;
      tail = raw.substr(close + 2);
    }
    while (tail.rfind("./", 0) == 0) tail = tail.substr(2);
    if (tail.empty() || tail.find("..") != std::string::npos || tail[0] == '/') return false;
    return ends_with(named, "/" + tail);
  }

  // The sections of a command's arguments: a set()/list()/file() value is one section; add_library(T
  // SHARED ...), target_sources(T PRIVATE ... PUBLIC ...) and a project's own function split at keywords.
  const std::vector<Section>& sections(const CMakeCommand& c, size_t first, const std::string& file, const Target& t) {
    if (auto it = sections_.find(&c); it != sections_.end()) return it->second;
    std::vector<Section>& out = sections_[&c];
    out.resize(1);
    const bool variable = c.name == "set" || c.name == "list" || c.name == "file" || c.name == "foreach";
    for (size_t k = first; k < c.args.size(); ++k) {
      const std::string& v = c.args[k].value;
      if (variable) {
        if (c.name == "set" && (v == "CACHE" || v == "PARENT_SCOPE")) break;
        if (c.name == "foreach" && (v == "IN" || v == "LISTS" || v == "ITEMS")) continue;
        if (v == "RELATIVE" || v == "LIST_DIRECTORIES") {
          ++k;
          continue;
        }
        if (is_keyword(v)) continue;
        out.back().args.push_back(k);
        continue;
      }
      // A keyword that is no file of the target (a file may well be called README).
      if ((is_section_word(v) || is_keyword(v)) &&
          std::none_of(t.added.begin(), t.added.end(),
                       [&](const AddedSource& s) { return spells(v, file, t, s.file, nullptr); })) {
        out.push_back({v, {}});
        continue;
      }
      out.back().args.push_back(k);
    }
    return out;
  }

  // The commands writing the variables `c` draws on, and theirs in turn (each once).
  std::vector<const Writer*> reachable(const CMakeCommand& c, size_t first) {
    if (auto it = reach_.find(&c); it != reach_.end()) return it->second;
    std::vector<const Writer*> out;
    std::set<std::string> seen;
    std::deque<std::string> todo;
    for (auto& v : drawn_on(c, first)) todo.push_back(v);
    while (!todo.empty()) {
      std::string v = todo.front();
      todo.pop_front();
      if (!seen.insert(v).second) continue;
      auto it = writers_.find(v);
      if (it == writers_.end()) continue;
      for (const auto& w : it->second) {
        out.push_back(&w);
        for (auto& next : drawn_on(*w.cmd, w.first)) todo.push_back(next);
      }
    }
    return reach_[&c] = out;
  }

  // Where `s` was written: the innermost call of its stack that spells it, itself or through the
  // variables it draws on. Every command found there feeds `t`.
  void place(const Target& t, const AddedSource& s) {
    for (const auto& frame : s.stack) {
      const CMakeCommand* c = command_at(frame);
      if (!c) continue;
      const std::string& file = frame.file;
      size_t first = c->name == "add_library" || c->name == "add_executable" || c->name == "target_sources" ||
                             c->name == "cuda_add_library" || c->name == "cuda_add_executable" ||
                             (!info_.library_helper.empty() && c->name == info_.library_helper)
                         ? 1
                         : 0;
      bool found = false;
      for (const auto& sec : sections(*c, first, file, t))
        for (size_t k : sec.args)
          if (spells(c->args[k].value, file, t, s.file, nullptr)) {
            record(t, file, *c, first, sec, nullptr);
            found = true;
          }
      for (const Writer* w : reachable(*c, first)) {
        if (w->removal) continue;
        for (const auto& sec : sections(*w->cmd, w->first, *w->file, t))
          for (size_t k : sec.args)
            if (spells(w->cmd->args[k].value, *w->file, t, s.file, w->glob ? w : nullptr)) {
              record(t, *w->file, *w->cmd, w->first, sec, w);
              found = true;
            }
      }
      if (!found) continue;
      // What takes files out of those variables again (list(REMOVE_ITEM), list(FILTER)) feeds it too.
      for (const Writer* w : reachable(*c, first))
        if (w->removal) record(t, *w->file, *w->cmd, w->first, sections(*w->cmd, w->first, *w->file, t)[0], w);
      return;
    }
  }

  // The list of one section of one command, tied to `t`; its entries name what they spell of t's
  // sources, else the file they name with the known directories expanded.
  void record(const Target& t, const std::string& file, const CMakeCommand& c, size_t first, const Section& sec,
              const Writer* w) {
    auto key = std::make_tuple(file, c.close_paren, sec.keyword, sec.args.empty() ? 0 : sec.args.front());
    auto [it, fresh] = lists_.try_emplace(key);
    SourceList& l = it->second;
    l.targets.insert(t.name);
    if (!fresh) return;
    l.cmake_file = file;
    l.current_dir = dir_of(file);
    l.line = c.line;
    l.close_paren = c.close_paren;
    l.conditions = conditions_of(file, c);
    l.command = w ? (w->glob            ? ListCommand::Glob
                     : c.name == "list" ? ListCommand::ListEdit
                                        : ListCommand::Set)
                  : list_command(c.name, info_.library_helper);
    if (!w && c.name != "add_library" && c.name != "add_executable" && c.name != "target_sources" &&
        c.name != "cuda_add_library" && c.name != "cuda_add_executable" && c.name != info_.library_helper)
      l.command = ListCommand::Call;
    l.variable = w ? w->variable : list_name(c, first, sec);
    l.removal = w && w->removal;
    l.filter = w && w->filter;
    const auto& vars = w && w->glob ? glob_vars_for(file) : vars_for(file);
    std::set<std::string> seen;
    for (size_t k : sec.args) {
      ListEntry e = make_entry(c.args[k], vars, l.current_dir, w && w->glob, w && w->recurse);
      if (!e.is_glob && !build::is_indirect_entry(e.raw)) {
        // What it spells of the target's sources is what it names; else the path, when it exists.
        std::vector<std::string> named;
        for (const auto& s : t.added)
          if (spells(e.raw, file, t, s.file, nullptr)) named.push_back(s.file);
        if (named.empty())
          for (const auto& f : e.files)
            if (is_file(f)) named.push_back(f);
        if (!named.empty()) e.files = named;
        for (const auto& f : e.files)
          if (!own_.count(f) && is_file(f)) ++l.foreign;
      }
      if (!e.raw.empty() && !seen.insert(e.raw).second) l.duplicates.push_back(e.raw);
      l.entries.push_back(std::move(e));
    }
    if (l.filter && !l.entries.empty()) l.entries[0].files.clear();  // a regex names files only against a glob
  }

  // The command creating `t` (add_library(t SHARED ${GEN}/x.cpp ${KERNELS})), when no source of t's
  // stacks led to it (its only files are generated, or a glob's): an entry can still go there, where a
  // reviewer adds one rather than into a file(GLOB).
  void add_creator(const Target& t) {
    auto parsed = parse_.files.find(t.cmake_file);
    if (t.cmake_file.empty() || parsed == parse_.files.end()) return;
    for (const auto& c : parsed->second.commands) {
      if (c.line != t.line || c.args.empty() || c.args[0].value != t.name ||
          !creates_library(c.name, info_.library_helper))
        continue;
      for (const auto& [key, l] : lists_)
        if (std::get<0>(key) == t.cmake_file && std::get<1>(key) == c.close_paren) return;
      record(t, t.cmake_file, c, 1, sections(c, 1, t.cmake_file, t).back(), nullptr);
      return;
    }
  }

  // The commands in an if() branch the configure took that feed `t` and name no file any more
  // (target_sources(t PRIVATE), list(APPEND V) of a variable whose other commands feed it): no
  // backtrace leads to them, yet a source taken out of them belongs there (branches.cpp).
  void add_emptied(const Target& t) {
    std::set<std::string> variables;
    std::map<std::string, std::set<size_t>> ran;  // per file: the commands CMake's backtraces led to
    for (const auto& [key, l] : lists_) {
      if (l.emptied) continue;  // another target's emptied command: no backtrace led to it
      ran[std::get<0>(key)].insert(std::get<1>(key));
      if (!l.targets.count(t.name)) continue;
      if (build::is_variable_list(l.command)) variables.insert(l.variable);
      // A variable it draws on (set(libpng_sources ... ${libpng_intel_sources})) feeds t, whose only
      // set() may be emptied: no backtrace leads to it.
      for (const auto& e : l.entries)
        if (e.raw.size() > 3 && e.raw.starts_with("${") && e.raw.back() == '}' && e.raw.find('}') == e.raw.size() - 1)
          variables.insert(e.raw.substr(2, e.raw.size() - 3));
    }
    const auto& vars = variables_of_cache();
    for (const auto& [file, parsed] : parse_.files)
      for (const auto& c : parsed.commands) {
        if (ran[file].count(c.close_paren) || conditions_of(file, c) == 0) continue;
        SourceList l;
        size_t first = 0;
        if (c.name == "target_sources" && !c.args.empty() && c.args[0].value == t.name) {
          l.command = ListCommand::TargetSources;
          l.variable = t.name;
          first = 1;
        } else if (auto w = writer_of(file, c);
                   w && !w->removal && !w->glob && c.name != "foreach" && variables.count(w->variable)) {
          l.command = c.name == "list" ? ListCommand::ListEdit : ListCommand::Set;
          l.variable = w->variable;
          first = w->first;
        } else {
          continue;
        }
        for (size_t k = first; k < c.args.size(); ++k) {
          const std::string& v = c.args[k].value;
          if (l.command == ListCommand::Set && (v == "CACHE" || v == "PARENT_SCOPE")) break;
          if (is_keyword(v)) continue;
          ListEntry e;
          e.raw = v, e.line = c.args[k].line, e.begin = c.args[k].begin, e.end = c.args[k].end;
          l.entries.push_back(std::move(e));
        }
        note_untaken(t, file, c, parsed.commands, l.entries, vars);
        l.cmake_file = file;
        l.current_dir = dir_of(file);
        l.line = c.line;
        l.close_paren = c.close_paren;
        l.conditions = conditions_of(file, c);
        l.targets.insert(t.name);
        if (!mark_emptied(l, parsed.commands, vars, ran[file], t.sources)) continue;
        lists_.try_emplace(std::make_tuple(file, c.close_paren, std::string(), size_t{0}), std::move(l));
      }
  }

  // The files a command feeding `t` names in an if() branch the cache says the configure did not take.
  void note_untaken(const Target& t, const std::string& file, const CMakeCommand& c,
                    const std::vector<CMakeCommand>& commands, const std::vector<ListEntry>& entries,
                    const std::map<std::string, std::string>& vars) {
    if (entries.empty()) return;
    auto branch = branch_of(commands, c.close_paren);
    if (!branch || branch_taken(*branch, vars) != Truth::False) return;
    const auto& local = vars_for(file);
    for (const auto& e : entries) {
      std::string path = expand_variables(e.raw, local);
      if (path.empty() || path.find("$<") != std::string::npos || path.find("${") != std::string::npos) continue;
      path = normalize_path(path[0] == '/' ? path : dir_of(file) + "/" + path);
      if (!is_file(path) || std::find(t.sources.begin(), t.sources.end(), path) != t.sources.end()) continue;
      info_.untaken.emplace(path, file + ":" + std::to_string(c.line));
    }
  }

  const std::map<std::string, std::string>& variables_of_cache() {
    if (cache_vars_.empty()) cache_vars_ = variables(info_);
    return cache_vars_;
  }

  // How a person calls the list: the variable, the target of add_library()/target_sources(), or the
  // call and its section ("absl_cc_library(strings) SRCS").
  static std::string list_name(const CMakeCommand& c, size_t first, const Section& sec) {
    if (first == 1 && !c.args.empty()) return c.args[0].value;
    std::string name = c.name;
    for (const auto& a : c.args) {
      if (is_section_word(a.value)) continue;
      if (is_identifier(a.value)) name += "(" + a.value + ")";
      break;
    }
    return sec.keyword.empty() ? name : name + " " + sec.keyword;
  }

  Model& info_;
  ProviderParse& parse_;
  std::set<std::string> failed_;
  std::map<std::string, std::vector<Writer>> writers_;
  std::map<const CMakeCommand*, std::vector<const Writer*>> reach_;
  std::map<const CMakeCommand*, std::vector<Section>> sections_;
  std::map<std::string, std::map<std::string, std::string>> vars_, glob_vars_;
  std::map<std::string, std::map<size_t, uint32_t>> depths_;
  std::set<std::string> own_;  // the sources of the target being placed
  std::map<std::string, std::string> cache_vars_;
  std::map<std::tuple<std::string, size_t, std::string, size_t>, SourceList> lists_;
};

}  // namespace

std::vector<SourceList> lists_from_reply(Model& info, build::ProviderParse& parse,
                                         const std::vector<std::string>& inputs) {
  SpanReader reader(info, parse);
  reader.read(inputs);
  return reader.lists();
}

}  // namespace mlc::build::cmake
