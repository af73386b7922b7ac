// The if() branches of a CMake file: the branch a command sits in, its condition, the files the
// chain's other branches name, and whether the configure took it. A source list command left naming
// no file in a branch (its only entries went) is known by that evidence alone: a source taken out of
// `if(HAVE_LIBLZMA)` or `else()` of `if(WIN32)` goes back there, not into the unconditional list.
//
// Conditions are evaluated only as far as the configure's cache and the platform tell (a variable no
// cache holds may be a normal one set in the files): otherwise the answer is Unknown.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "build/cmake/build_info.h"
#include "common/text.h"

namespace mlc::build::cmake {
namespace {

bool regular_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// CMake's false constants (if(<constant>)): 0, OFF, NO, FALSE, N, IGNORE, NOTFOUND, "" and *-NOTFOUND.
bool false_constant(const std::string& v) {
  const std::string u = upper(v);
  return u.empty() || u == "0" || u == "OFF" || u == "NO" || u == "FALSE" || u == "N" || u == "IGNORE" ||
         u == "NOTFOUND" || (u.size() > 9 && u.ends_with("-NOTFOUND"));
}
bool true_constant(const std::string& v) {
  const std::string u = upper(v);
  if (u == "ON" || u == "YES" || u == "TRUE" || u == "Y") return true;
  if (u.empty() || !std::all_of(u.begin(), u.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; }))
    return false;
  return std::any_of(u.begin(), u.end(), [](char c) { return c >= '1' && c <= '9'; });  // a non-zero number
}

// The platform's own variables on the Linux host the tool runs on, when the cache does not say.
const std::map<std::string, std::string>& platform() {
  static const std::map<std::string, std::string> vars = {{"UNIX", "1"},
                                                          {"LINUX", "1"},
                                                          {"CMAKE_HOST_UNIX", "1"},
                                                          {"CMAKE_HOST_LINUX", "1"},
                                                          {"CMAKE_SYSTEM_NAME", "Linux"},
                                                          {"WIN32", ""},
                                                          {"MSVC", ""},
                                                          {"APPLE", ""},
                                                          {"MINGW", ""},
                                                          {"CYGWIN", ""},
                                                          {"MSYS", ""},
                                                          {"ANDROID", ""},
                                                          {"IOS", ""},
                                                          {"CMAKE_HOST_WIN32", ""},
                                                          {"CMAKE_HOST_APPLE", ""},
                                                          {"WINCE", ""},
                                                          {"WINDOWS_PHONE", ""},
                                                          {"WINDOWS_STORE", ""},
                                                          {"EMSCRIPTEN", ""},
                                                          {"XCODE", ""},
                                                          {"BORLAND", ""},
                                                          {"WATCOM", ""}};
  return vars;
}

class Evaluator {
 public:
  Evaluator(const std::vector<std::string>& args, const std::map<std::string, std::string>& vars)
      : args_(args), vars_(vars) {}

  Truth run() {
    Truth t = disjunction();
    return at_ == args_.size() ? t : Truth::Unknown;
  }

 private:
  static Truth both(Truth a, Truth b) {
    if (a == Truth::False || b == Truth::False) return Truth::False;
    return a == Truth::True && b == Truth::True ? Truth::True : Truth::Unknown;
  }
  static Truth either(Truth a, Truth b) {
    if (a == Truth::True || b == Truth::True) return Truth::True;
    return a == Truth::False && b == Truth::False ? Truth::False : Truth::Unknown;
  }
  bool next_is(const char* word) const { return at_ < args_.size() && args_[at_] == word; }

  Truth disjunction() {
    Truth t = conjunction();
    while (next_is("OR")) {
      ++at_;
      t = either(t, conjunction());
    }
    return t;
  }
  Truth conjunction() {
    Truth t = negation();
    while (next_is("AND")) {
      ++at_;
      t = both(t, negation());
    }
    return t;
  }
  Truth negation() {
    if (next_is("NOT")) {
      ++at_;
      Truth t = negation();
      return t == Truth::Unknown ? t : t == Truth::True ? Truth::False : Truth::True;
    }
    return primary();
  }

  // A word's value: a variable's (by name or ${NAME}), else the word itself; nullopt when unknown. A
  // quoted word is a string, its ${...} expanded.
  std::optional<std::string> value_of(const std::string& word, bool as_variable) const {
    std::string w = word;
    if (w.size() >= 2 && w.front() == '"' && w.back() == '"') {
      w = w.substr(1, w.size() - 2);
      if (w.find("${") == std::string::npos) return w;
      if (w.size() > 3 && w.starts_with("${") && w.back() == '}' && w.find("${", 2) == std::string::npos)
        return value_of(w, true);
      return std::nullopt;
    }
    if (w.size() > 3 && w.starts_with("${") && w.back() == '}' && w.find("${", 2) == std::string::npos) {
      w = w.substr(2, w.size() - 3);
      as_variable = true;
    } else if (w.find("${") != std::string::npos || w.find("$<") != std::string::npos) {
      return std::nullopt;
    }
    if (!as_variable) return w;
    if (auto it = vars_.find(w); it != vars_.end()) return it->second;
    if (auto it = platform().find(w); it != platform().end()) return it->second;
    return std::nullopt;
  }

  Truth primary() {
    if (at_ >= args_.size()) return Truth::Unknown;
    if (next_is("(")) {
      ++at_;
      Truth t = disjunction();
      if (next_is(")")) ++at_;
      else at_ = args_.size() + 1;  // unbalanced: Unknown
      return t;
    }
    static const std::set<std::string> unary = {"EXISTS",       "COMMAND",    "POLICY",      "TARGET", "TEST",
                                                "IS_DIRECTORY", "IS_SYMLINK", "IS_ABSOLUTE", "DEFINED"};
    if (unary.count(args_[at_])) {
      const std::string op = args_[at_++];
      if (at_ >= args_.size()) return Truth::Unknown;
      const std::string operand = args_[at_++];
      if (op == "DEFINED" && (vars_.count(operand) || platform().count(operand))) return Truth::True;
      return Truth::Unknown;  // a normal variable, a target, a file: only the configure knew
    }
    const std::string left = args_[at_++];
    static const std::set<std::string> binary = {"STREQUAL",
                                                 "EQUAL",
                                                 "LESS",
                                                 "GREATER",
                                                 "LESS_EQUAL",
                                                 "GREATER_EQUAL",
                                                 "STRLESS",
                                                 "STRGREATER",
                                                 "STRLESS_EQUAL",
                                                 "STRGREATER_EQUAL",
                                                 "MATCHES",
                                                 "VERSION_LESS",
                                                 "VERSION_GREATER",
                                                 "VERSION_EQUAL",
                                                 "VERSION_LESS_EQUAL",
                                                 "VERSION_GREATER_EQUAL",
                                                 "IN_LIST",
                                                 "PATH_EQUAL",
                                                 "IS_NEWER_THAN"};
    if (at_ < args_.size() && binary.count(args_[at_])) {
      const std::string op = args_[at_++];
      if (at_ >= args_.size()) return Truth::Unknown;
      const std::string right = args_[at_++];
      if (op != "STREQUAL" && op != "EQUAL" && op != "MATCHES") return Truth::Unknown;
      // Each side is a variable's value when one of that name is known, else the word itself; a word
      // that could name a variable nobody knows leaves it open.
      auto side = [&](const std::string& w) -> std::optional<std::string> {
        if (w.size() >= 2 && w.front() == '"' && w.back() == '"') return value_of(w, false);
        if (auto v = value_of(w, true)) return v;
        if (std::isalpha(static_cast<unsigned char>(w.empty() ? '0' : w[0])) && upper(w) == w) return std::nullopt;
        return value_of(w, false);
      };
      auto l = side(left), r = side(right);
      if (!l || !r) return Truth::Unknown;
      if (op == "STREQUAL") return *l == *r ? Truth::True : Truth::False;
      if (op == "MATCHES") {  // the right side is a regex as written: CMAKE_SYSTEM_NAME MATCHES "Android|Linux"
        try {
          return std::regex_search(*l, std::regex(*r, std::regex::extended)) ? Truth::True : Truth::False;
        } catch (const std::regex_error&) {
          return Truth::Unknown;
        }
      }
      try {
        return std::stod(*l) == std::stod(*r) ? Truth::True : Truth::False;
      } catch (...) {
        return Truth::False;
      }
    }
    if (left.size() >= 2 && left.front() == '"' && left.back() == '"') {  // if("...") : a constant, else false
      const auto v = value_of(left, false);
      return !v ? Truth::Unknown : true_constant(*v) ? Truth::True : Truth::False;
    }
    if (true_constant(left)) return Truth::True;
    if (false_constant(left)) return Truth::False;
    auto v = value_of(left, true);
    if (!v) return Truth::Unknown;
    return false_constant(*v) ? Truth::False : Truth::True;
  }

  const std::vector<std::string>& args_;
  const std::map<std::string, std::string>& vars_;
  size_t at_ = 0;
};

}  // namespace

Truth evaluate_condition(const std::vector<std::string>& args, const std::map<std::string, std::string>& vars) {
  if (args.empty()) return Truth::Unknown;
  return Evaluator(args, vars).run();
}

std::optional<Branch> branch_of(const std::vector<CMakeCommand>& commands, size_t close_paren) {
  // The chains open at the command: each if() pushes one; its elseif()/else() add branches.
  struct Chain {
    std::vector<std::vector<std::string>> conditions;  // per branch; else() is empty
    std::vector<std::vector<size_t>> members;          // per branch: the commands inside it (any depth)
  };
  std::vector<Chain> open;
  std::optional<Branch> found;
  std::vector<size_t> path;  // for the target command: the branch index in each open chain
  size_t target = commands.size();
  for (size_t k = 0; k < commands.size(); ++k)
    if (commands[k].close_paren == close_paren) target = k;
  if (target == commands.size()) return std::nullopt;
  auto args_of = [](const CMakeCommand& c) {
    std::vector<std::string> out;
    // A quoted argument keeps its quotes: if(X STREQUAL "OS390") compares with the string, never with
    // a variable of that name (policy CMP0054).
    for (const auto& a : c.args) out.push_back(a.kind == CMakeArg::Kind::Quoted ? "\"" + a.value + "\"" : a.value);
    return out;
  };
  size_t target_depth = 0;
  for (size_t k = 0; k < commands.size(); ++k) {
    const auto& c = commands[k];
    if (c.name == "if") {
      for (auto& ch : open) ch.members.back().push_back(k);
      open.push_back({{args_of(c)}, {{}}});
      continue;
    }
    if ((c.name == "elseif" || c.name == "else") && !open.empty()) {
      open.back().conditions.push_back(c.name == "else" ? std::vector<std::string>{} : args_of(c));
      open.back().members.emplace_back();
      continue;
    }
    if (c.name == "endif" && !open.empty()) {
      if (found && open.size() == target_depth) {
        // The chain holding the command closes: its other branches' commands are the siblings.
        const Chain& ch = open.back();
        const size_t own = path.back();
        found->condition = ch.conditions[own];
        for (size_t b = 0; b < own; ++b) found->earlier.push_back(ch.conditions[b]);
        for (size_t b = 0; b < ch.members.size(); ++b)
          if (b != own)
            for (size_t m : ch.members[b]) found->others.push_back(&commands[m]);
        return found;
      }
      open.pop_back();
      if (open.size() > 0)
        for (auto& ch : open) ch.members.back().push_back(k);
      continue;
    }
    for (auto& ch : open) ch.members.back().push_back(k);
    if (k == target) {
      if (open.empty()) return std::nullopt;
      found = Branch{};
      target_depth = open.size();
      for (const auto& ch : open) path.push_back(ch.conditions.size() - 1);
    }
  }
  return std::nullopt;  // an if() never closed: no chain to read
}

Truth branch_taken(const Branch& b, const std::map<std::string, std::string>& vars) {
  Truth t = b.condition.empty() ? Truth::True : evaluate_condition(b.condition, vars);
  for (const auto& earlier : b.earlier) {
    const Truth e = evaluate_condition(earlier, vars);
    if (e == Truth::True) return Truth::False;
    if (e == Truth::Unknown && t != Truth::False) t = Truth::Unknown;
  }
  return t;
}

// Whether two words name one thing: one holds the other, and both have four letters or more (lzma in
// liblzma; "win" in "twin" is no evidence).
bool overlaps(const std::string& a, const std::string& b) {
  return std::min(a.size(), b.size()) >= 4 && (a.find(b) != std::string::npos || b.find(a) != std::string::npos);
}

// The words a branch's condition asks for: "HAVE_LIBLZMA" -> liblzma; a word under NOT is what the
// branch does without, and the words every feature test carries say nothing.
std::set<std::string> condition_words(const std::string& condition) {
  static const std::set<std::string> generic = {"have",    "with",  "enable",  "enabled", "use",      "build", "option",
                                                "support", "found", "defined", "streq",   "strequal", "and",   "not"};
  static const std::set<std::string> comparisons = {"STREQUAL", "EQUAL",        "MATCHES",         "LESS",
                                                    "GREATER",  "VERSION_LESS", "VERSION_GREATER", "VERSION_EQUAL",
                                                    "STRLESS",  "STRGREATER"};
  std::vector<std::string> tokens;
  std::string token;
  for (char c : condition + " ") {
    if (c != ' ') token += c;
    else if (!token.empty()) tokens.push_back(std::move(token)), token.clear();
  }
  // NOT before a comparison negates the comparison (NOT ${PNG_INTEL_SSE} STREQUAL "off": the feature on),
  // not the variable's name.
  std::set<std::string> out;
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k] == "NOT" && !(k + 2 < tokens.size() && comparisons.count(tokens[k + 2]))) {
      ++k;
      continue;
    }
    for (const auto& w : name_words(tokens[k]))
      if (!generic.count(w)) out.insert(w);
  }
  return out;
}

// The names of platforms as words of file names and conditions (tif_unix.c, if(WIN32), "Android|Linux").
const std::set<std::string>& platform_names() {
  static const std::set<std::string> names = {
      "unix",       "posix", "linux",   "win",     "win32",  "win64", "windows", "apple",  "darwin",
      "macos",      "osx",   "mac",     "android", "ios",    "bsd",   "freebsd", "netbsd", "openbsd",
      "dragonfly",  "sunos", "solaris", "aix",     "cygwin", "mingw", "msvc",    "uwp",    "wasm",
      "emscripten", "haiku", "hurd",    "qnx",     "os390",  "os400", "zos",     "nix"};
  return names;
}

bool names_no_file(const SourceList& l) {
  if (l.conditions == 0 || l.removal || l.command == build::ListCommand::Glob || l.command == build::ListCommand::Call)
    return false;
  return std::all_of(l.entries.begin(), l.entries.end(), [&](const ListEntry& e) {
    return build::is_variable_list(l.command) && e.raw == "${" + l.variable + "}";
  });
}

bool mark_emptied(SourceList& l, const std::vector<CMakeCommand>& commands,
                  const std::map<std::string, std::string>& vars, const std::set<size_t>& ran,
                  const std::vector<std::string>& target_sources) {
  if (!names_no_file(l)) return false;
  auto branch = branch_of(commands, l.close_paren);
  if (!branch) return false;
  if (branch_taken(*branch, vars) == Truth::False) return false;
  // A command of another branch that the configure ran (CMake's own backtraces name it): not this one.
  if (std::any_of(branch->others.begin(), branch->others.end(),
                  [&](const CMakeCommand* c) { return ran.count(c->close_paren) > 0; }))
    return false;
  l.emptied = true;
  std::string condition;  // as written (empty for else())
  for (const auto& w : branch->condition) condition += (condition.empty() ? "" : " ") + w;
  l.branch_siblings.clear();
  std::map<std::string, size_t> counts;
  for (const auto& f : target_sources) {
    const std::string name = f.substr(f.rfind('/') + 1);
    for (const auto& w : name_words(name.substr(0, name.rfind('.')))) ++counts[w];
  }
  l.common_words.clear();
  for (const auto& [w, n] : counts)
    if (n >= 2 && 4 * n >= target_sources.size()) l.common_words.insert(w);
  // The words that speak for a file: the condition's, and an emptied set()'s own name
  // (set(libpng_intel_sources) for intel/intel_init.c; a list(APPEND libarchive_SOURCES) names the list
  // every branch shares, which says nothing). A project's prefix says nothing (archive_*.c under
  // if(ARCHIVE_ACL_LIBACL)), and a platform speaks only where the branch is that platform's alone:
  // linux-core.c belongs to if(... STREQUAL "Linux"), not to if(APPLE OR ... MATCHES "Android|Linux").
  auto asked = condition_words(condition);
  if (l.command == build::ListCommand::Set)
    for (const auto& w : name_words(l.variable))
      if (w != "sources" && w != "srcs" && w != "src" && w != "files" && w != "list" && w != "objects") asked.insert(w);
  const auto platform_words =
      std::count_if(asked.begin(), asked.end(), [](const std::string& w) { return platform_names().count(w) > 0; });
  l.evidence.clear();
  for (const auto& c : asked) {
    if (std::any_of(l.common_words.begin(), l.common_words.end(), [&](const std::string& w) { return overlaps(c, w); }))
      continue;
    if (platform_names().count(c) && platform_words > 1) continue;
    l.evidence.insert(c);
  }
  auto local = vars;
  local["CMAKE_CURRENT_SOURCE_DIR"] = l.current_dir;
  local["CMAKE_CURRENT_LIST_DIR"] = l.cmake_file.substr(0, l.cmake_file.rfind('/'));
  static const std::set<std::string> control = {"if",         "elseif", "else",     "endif",   "foreach",
                                                "endforeach", "while",  "endwhile", "message", "option"};
  for (const CMakeCommand* c : branch->others)
    for (const auto& a : c->args) {
      if (control.count(c->name)) break;
      if (a.value.empty() || is_keyword(a.value)) continue;
      std::string path = expand_variables(a.value, local);
      if (path.empty() || path.find("$<") != std::string::npos) continue;
      path = normalize_path(path[0] == '/' ? path : l.current_dir + "/" + path);
      if (regular_file(path) &&
          std::find(l.branch_siblings.begin(), l.branch_siblings.end(), path) == l.branch_siblings.end())
        l.branch_siblings.push_back(path);
    }
  return true;
}

}  // namespace mlc::build::cmake
