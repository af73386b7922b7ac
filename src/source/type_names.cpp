// Type spellings for comparison: normalize_type (typedefs of fixed-width integers resolved, cv-qualifiers
// after what they qualify, std's default template arguments dropped), operator names, and the entity
// helpers of scanner.h. Shared by sources and demangled names, so both sides spell a type alike.
#include <algorithm>
#include <unordered_map>

#include "source/scanner_internal.h"

namespace mlc::source {
using namespace detail;

namespace detail {

bool is_builtin_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {"void",     "bool",    "char",     "short",    "int",     "long",
                                                "float",    "double",  "unsigned", "signed",   "wchar_t", "char16_t",
                                                "char32_t", "char8_t", "auto",     "__int128", "__half",  "half"};
  for (auto k : kWords)
    if (w == k) return true;
  return false;
}

bool is_cv(std::string_view w) { return w == "const" || w == "volatile" || w == "__restrict__" || w == "__restrict"; }

}  // namespace detail

namespace {

const std::unordered_map<std::string_view, std::string_view>& fixed_width_typedefs() {
  static const std::unordered_map<std::string_view, std::string_view> m = {
      {"int64_t", "long"},
      {"uint64_t", "unsigned long"},
      {"int32_t", "int"},
      {"uint32_t", "unsigned int"},
      {"int16_t", "short"},
      {"uint16_t", "unsigned short"},
      {"int8_t", "signed char"},
      {"uint8_t", "unsigned char"},
      {"size_t", "unsigned long"},
      {"ssize_t", "long"},
      {"ptrdiff_t", "long"},
      {"intptr_t", "long"},
      {"uintptr_t", "unsigned long"},
      {"off_t", "long"},
      {"__int64", "long"},
  };
  return m;
}

// Words that are noise in a type: elaborated-type keywords and CUDA/visibility decorations.
bool is_type_noise(std::string_view w) {
  return w == "struct" || w == "class" || w == "union" || w == "enum" || w == "typename" || w == "__restrict__" ||
         w == "__restrict" || w == "restrict" || w == "register" || w == "mutable";
}

// Default template arguments the standard library adds ("vector<int,allocator<int>>") are dropped,
// then the std typedefs replace the specialisations they name, so "std::string const&" and
// "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&" agree.
void canonical_std_names(std::string& t) {
  static constexpr std::string_view kDefaults[] = {",allocator<",      ",char_traits<", ",less<",
                                                   ",default_delete<", ",hash<",        ",equal_to<"};
  for (auto d : kDefaults) {
    for (size_t p = t.find(d); p != std::string::npos; p = t.find(d, p)) {
      size_t k = p + d.size();
      int depth = 1;
      while (k < t.size() && depth > 0) {
        if (t[k] == '<') ++depth;
        if (t[k] == '>') --depth;
        ++k;
      }
      if (k < t.size() && (t[k] == '>' || t[k] == ',')) {
        t.erase(p, k - p);
      } else {
        p = k;
      }
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kTypedefs[] = {
      {"basic_string<char>", "string"},
      {"basic_string<wchar_t>", "wstring"},
      {"basic_string<char16_t>", "u16string"},
      {"basic_string<char32_t>", "u32string"},
      {"basic_string_view<char>", "string_view"},
      {"basic_ostream<char>", "ostream"},
      {"basic_istream<char>", "istream"},
      {"basic_iostream<char>", "iostream"},
      {"basic_stringstream<char>", "stringstream"},
      {"basic_ostringstream<char>", "ostringstream"},
      {"basic_istringstream<char>", "istringstream"},
      {"basic_ofstream<char>", "ofstream"},
      {"basic_ifstream<char>", "ifstream"},
      {"basic_fstream<char>", "fstream"},
      {"basic_streambuf<char>", "streambuf"},
      {"basic_ios<char>", "ios"},
      {"basic_ostream<wchar_t>", "wostream"},
      {"basic_istream<wchar_t>", "wistream"},
  };
  if (t.find("basic_") == std::string::npos) return;
  for (auto [from, to] : kTypedefs) {
    for (size_t p = t.find(from); p != std::string::npos; p = t.find(from, p)) {
      bool word_start = p == 0 || !ident_char(t[p - 1]);
      if (word_start) {
        t.replace(p, from.size(), to);
        if (p + to.size() < t.size() && ident_char(t[p + to.size()])) t.insert(p + to.size(), " ");  // "string const"
      }
      p += word_start ? to.size() : 1;
    }
  }
}

std::string compact_join(const std::vector<std::string>& toks) {
  std::string out;
  for (const auto& t : toks) {
    if (!out.empty() && ident_char(out.back()) && !t.empty() && ident_char(t[0])) out += ' ';
    out += t;
  }
  return out;
}

}  // namespace

const char* to_string(EntityKind kind) {
  switch (kind) {
    case EntityKind::FunctionDefinition: return "definition";
    case EntityKind::FunctionDeclaration: return "declaration";
    case EntityKind::ExplicitInstantiation: return "explicit-instantiation";
    case EntityKind::VariableDefinition: return "definition";
    case EntityKind::VariableDeclaration: return "declaration";
    case EntityKind::ClassDefinition: return "class";
    case EntityKind::ClassInstantiation: return "explicit-instantiation";
    case EntityKind::Alias: return "alias";
    case EntityKind::Macro: return "macro";
  }
  return "declaration";
}

std::string_view Entity::name() const {
  std::string_view q = qualified;
  // The last "::" outside brackets (operator names may contain ':' only as part of "::").
  int depth = 0;
  size_t cut = 0;
  for (size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i] == '<' || q[i] == '(') ++depth;
    if ((q[i] == '>' || q[i] == ')') && depth > 0) --depth;
    if (depth == 0 && q[i] == ':' && q[i + 1] == ':') cut = i + 2;
  }
  return q.substr(cut);
}

std::string canonical_operator_name(std::string_view name) {
  if (name.rfind("operator", 0) != 0 || (name.size() > 8 && ident_char(name[8]))) return std::string(name);
  std::string rest;
  for (char c : name.substr(8))
    if (c != ' ') rest += c;
  std::string_view r = name.substr(8);
  while (!r.empty() && r.front() == ' ') r.remove_prefix(1);
  if (r.empty() || !ident_start(r.front())) return "operator" + rest;  // "operator*=", "operator\"\"_km"
  for (std::string_view kw : {"new", "delete", "co_await"})
    if (r.rfind(kw, 0) == 0 && (r.size() == kw.size() || !ident_char(r[kw.size()]))) return "operator " + rest;
  return "operator " + normalize_type(r, false);  // conversion: "operator char const*"
}

std::vector<std::string> split_list(std::string_view joined) {
  std::vector<std::string> out;
  if (joined.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t sep = joined.find(kListSep, start);
    out.emplace_back(joined.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start));
    if (sep == std::string_view::npos) break;
    start = sep + 1;
  }
  return out;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += kListSep;
    out += items[i];
  }
  return out;
}

namespace {

// The type's tokens as words, a parameter's default argument cut off.
std::vector<std::string> type_words(std::string_view type, bool is_parameter) {
  auto toks = lex(type);
  std::vector<std::string> words;
  int depth = 0;
  for (const auto& t : toks) {
    if (t.kind == Tok::Punct && (t.text == "(" || t.text == "<" || t.text == "[")) ++depth;
    if (t.kind == Tok::Punct && (t.text == ")" || t.text == ">" || t.text == "]") && depth > 0) --depth;
    if (is_parameter && depth == 0 && t.kind == Tok::Punct && t.text == "=") break;  // default argument
    words.emplace_back(t.text);
  }
  return words;
}

// A parameter's type without its name: arrays decay to pointers, the name comes off.
void drop_parameter_name(std::vector<std::string>& words) {
  // Arrays decay to pointers in parameters (the name comes off first, then the '*' goes on).
  bool array_param = false;
  if (words.size() >= 2 && words.back() == "]") {
    while (!words.empty() && words.back() != "[") words.pop_back();
    if (!words.empty()) words.pop_back();
    array_param = true;
  }
  // Drop the parameter name: a trailing identifier after something that already names a type.
  if (words.size() >= 2) {
    const std::string& last = words.back();
    const std::string& prev = words[words.size() - 2];
    bool last_is_name = ident_start(last[0]) && !is_builtin_word(last) && !is_cv(last) && prev != "::" &&
                        !(prev == "unsigned" || prev == "signed" || prev == "struct" || prev == "class" ||
                          prev == "enum" || prev == "typename" || prev == "union");
    if (last_is_name) words.pop_back();
  }
  if (array_param) words.push_back("*");
  // A function pointer's name: "int (*fn)(int)" -> "int(*)(int)".
  for (size_t i = 0; i + 3 < words.size(); ++i)
    if (words[i] == "(" && (words[i + 1] == "*" || words[i + 1] == "&") && ident_start(words[i + 2][0]) &&
        words[i + 3] == ")")
      words.erase(words.begin() + static_cast<long>(i) + 2);
}

// The words without noise and qualification, fixed-width typedefs spelled as the builtin types they are.
std::vector<std::string> unqualified(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (is_type_noise(w)) continue;
    // Reduce qualified names to their last component: "at::Tensor" and "Tensor" compare equal. A
    // member of a template specialisation keeps its "::" ("is_same<T,char>::value").
    if (i + 1 < words.size() && words[i + 1] == "::") {
      if (w == ">") {
        out.push_back(">");
        out.push_back("::");
      }
      ++i;
      continue;
    }
    if (w == "::") continue;
    if (auto it = fixed_width_typedefs().find(w); it != fixed_width_typedefs().end()) {
      for (const auto& part : split_list(std::string(it->second) == "unsigned long" ? "unsigned\x1flong" : it->second))
        out.push_back(part);
      continue;
    }
    out.push_back(w);
  }
  return out;
}

// Integer spellings: "long int" -> "long", "unsigned" alone -> "unsigned int", "short int" -> "short".
void canonical_integers(std::vector<std::string>& out) {
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if ((out[i] == "long" || out[i] == "short") && out[i + 1] == "int") out.erase(out.begin() + i + 1);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    bool next_is_int_word = i + 1 < out.size() && (out[i + 1] == "int" || out[i + 1] == "long" ||
                                                   out[i + 1] == "short" || out[i + 1] == "char");
    if (out[i] == "unsigned" && !next_is_int_word) out.insert(out.begin() + i + 1, "int");
    if (out[i] == "signed" && i + 1 < out.size() && out[i + 1] == "int") out.erase(out.begin() + i);
  }
}

// Moves the cv-qualifiers leading at `from` past the first type unit (a run of builtin words such as
// "unsigned long", or a name with its template arguments).
void move_cv(std::vector<std::string>& out, size_t from) {
  size_t lead = from;
  while (lead < out.size() && is_cv(out[lead])) ++lead;
  if (lead == from || lead >= out.size()) return;
  std::vector<std::string> cvs(out.begin() + static_cast<long>(from), out.begin() + static_cast<long>(lead));
  out.erase(out.begin() + static_cast<long>(from), out.begin() + static_cast<long>(lead));
  size_t unit = from;
  if (is_builtin_word(out[from])) {
    while (unit < out.size() && is_builtin_word(out[unit])) ++unit;
  } else {
    unit = from + 1;
    if (unit < out.size() && out[unit] == "<") {
      int d = 0;
      for (; unit < out.size(); ++unit) {
        if (out[unit] == "<") ++d;
        if (out[unit] == ">" && --d == 0) {
          ++unit;
          break;
        }
      }
    }
  }
  out.insert(out.begin() + static_cast<long>(unit), cvs.begin(), cvs.end());
}

}  // namespace

// The passes: words, the parameter's name dropped, qualification and noise gone, integer spellings
// made canonical, cv-qualifiers after what they qualify, then the compact text.
std::string normalize_type(std::string_view type, bool is_parameter) {
  std::vector<std::string> words = type_words(type, is_parameter);
  if (is_parameter) drop_parameter_name(words);
  std::vector<std::string> out = unqualified(words);
  canonical_integers(out);
  // cv-qualifiers after what they qualify, at the start of the type and of every template argument
  // ("Vector<const char>" -> "Vector<char const>").
  move_cv(out, 0);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == "<" || out[i] == ",") move_cv(out, i + 1);
  // A top-level const on a by-value parameter is not part of the signature.
  if (is_parameter) {
    while (!out.empty() && is_cv(out.back())) out.pop_back();
  }
  std::string joined = compact_join(out);
  if (joined.find('<') != std::string::npos) canonical_std_names(joined);
  return joined;
}

}  // namespace mlc::source
