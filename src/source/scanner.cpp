// Lexer plus a statement-level parser. Function bodies, initialisers and enum bodies are skipped by
// brace matching, which is what makes a 134 MB source tree scan in about a second. Every loop
// consumes at least one token, so malformed code ends the scan instead of hanging it.
#include "source/scanner.h"
#include "source/preprocessor.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace mlc::source {
namespace {

enum class Tok : uint8_t { Ident, Punct, String, Number };

struct Token {
  Tok kind;
  std::string_view text;
  uint32_t line;
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// An object-like "#define NAME body" (body with comments and continuations as written), and the
// #if branch it sits in (preprocessor.h: "" when unconditional).
struct Define {
  std::string_view name;
  std::string body;
  std::string condition = {};
};

// Reads the directive starting at '#' (s[i]); follows #if/#ifdef/#else in `conditions` and records
// object-like #defines with the condition they are under.
void read_define(std::string_view s, size_t i, size_t end, std::vector<Define>* defines, ConditionStack* conditions) {
  if (!defines) return;
  ++i;
  while (i < end && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (conditions) {
    size_t k = i;
    while (k < end && ident_char(s[k])) ++k;
    std::string_view keyword = s.substr(i, k - i);
    if (keyword != "define") conditions->directive(keyword, s.substr(k, end - k));
  }
  if (s.compare(i, 6, "define") != 0) return;
  i += 6;
  while (i < end && (s[i] == ' ' || s[i] == '\t')) ++i;
  size_t start = i;
  while (i < end && ident_char(s[i])) ++i;
  if (i == start || (i < end && s[i] == '(')) return;  // function-like: not followed here
  Define d{s.substr(start, i - start), {}, conditions ? conditions->current() : std::string()};
  for (; i < end; ++i) {
    if (s[i] == '/' && i + 1 < end && (s[i + 1] == '/' || s[i + 1] == '*')) break;
    if (s[i] == '\\' || s[i] == '\n' || s[i] == '\r') {
      d.body += ' ';
      continue;
    }
    d.body += s[i];
  }
  defines->push_back(std::move(d));
}

std::vector<Token> lex(std::string_view s, std::vector<Define>* defines = nullptr) {
  std::vector<Token> out;
  // About one token per four bytes of code; short texts (a parameter type) still get room for a few.
  out.reserve(s.size() / 4 + 8);
  uint32_t line = 1;
  bool line_start = true;
  size_t i = 0, n = s.size();
  ConditionStack conditions;
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == '#' && line_start) {  // preprocessor directive, with continuations
      size_t hash = i;
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
          ++line;
          i += 2;
          continue;
        }
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') break;  // a comment starts; lex it normally
        ++i;
      }
      read_define(s, hash, i, defines, &conditions);
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      i += 2;
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
        if (s[i] == '\n') ++line;
        ++i;
      }
      i = std::min(n, i + 2);
      continue;
    }
    if (c == 'R' && i + 1 < n && s[i + 1] == '"') {  // raw string R"delim( ... )delim"
      size_t open = s.find('(', i + 2);
      if (open != std::string_view::npos && open - i < 20) {
        std::string close = ")" + std::string(s.substr(i + 2, open - i - 2)) + "\"";
        size_t end = s.find(close, open);
        end = end == std::string_view::npos ? n : end + close.size();
        for (size_t k = i; k < end; ++k) line += s[k] == '\n';
        out.push_back({Tok::String, s.substr(i, end - i), line});
        i = end;
        continue;
      }
    }
    if (ident_start(c)) {
      size_t start = i;
      while (i < n && ident_char(s[i])) ++i;
      // String literal prefixes (u8"", L"", u"") belong to the string.
      if (i < n && (s[i] == '"' || s[i] == '\'') && i - start <= 2) {
        std::string_view p = s.substr(start, i - start);
        if (p == "u8" || p == "u" || p == "U" || p == "L") continue;
      }
      out.push_back({Tok::Ident, s.substr(start, i - start), line});
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i;
      while (i < n && (ident_char(s[i]) || s[i] == '.' || s[i] == '\'' ||
                       ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E' || s[i - 1] == 'p')))) {
        ++i;
      }
      out.push_back({Tok::Number, s.substr(start, i - start), line});
      continue;
    }
    if (c == '"' || c == '\'') {
      size_t start = i++;
      while (i < n && s[i] != c && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
      i = std::min(n, i + 1);
      out.push_back({Tok::String, s.substr(start, i - start), line});
      continue;
    }
    static constexpr std::string_view kMulti[] = {"::", "->", "...", "&&"};
    bool multi = false;
    for (auto m : kMulti) {
      if (s.substr(i, m.size()) == m) {
        out.push_back({Tok::Punct, s.substr(i, m.size()), line});
        i += m.size();
        multi = true;
        break;
      }
    }
    if (!multi) out.push_back({Tok::Punct, s.substr(i++, 1), line});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Type normalisation

const std::unordered_map<std::string_view, std::string_view>& fixed_width_typedefs() {
  static const std::unordered_map<std::string_view, std::string_view> m = {
      {"int64_t", "long"},          {"uint64_t", "unsigned long"}, {"int32_t", "int"},
      {"uint32_t", "unsigned int"}, {"int16_t", "short"},          {"uint16_t", "unsigned short"},
      {"int8_t", "signed char"},    {"uint8_t", "unsigned char"},  {"size_t", "unsigned long"},
      {"ssize_t", "long"},          {"ptrdiff_t", "long"},         {"intptr_t", "long"},
      {"uintptr_t", "unsigned long"}, {"off_t", "long"},           {"__int64", "long"},
  };
  return m;
}

bool is_builtin_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {"void",  "bool",   "char",     "short",    "int",     "long",
                                                "float", "double", "unsigned", "signed",   "wchar_t", "char16_t",
                                                "char32_t", "char8_t", "auto", "__int128", "__half", "half"};
  for (auto k : kWords)
    if (w == k) return true;
  return false;
}

bool is_cv(std::string_view w) { return w == "const" || w == "volatile" || w == "__restrict__" || w == "__restrict"; }

// Words that are noise in a type: elaborated-type keywords and CUDA/visibility decorations.
bool is_type_noise(std::string_view w) {
  return w == "struct" || w == "class" || w == "union" || w == "enum" || w == "typename" || w == "__restrict__" ||
         w == "__restrict" || w == "restrict" || w == "register" || w == "mutable";
}

// Default template arguments the standard library adds ("vector<int,allocator<int>>") are dropped,
// then the std typedefs replace the specialisations they name, so "std::string const&" and
// "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&" agree.
void canonical_std_names(std::string& t) {
  static constexpr std::string_view kDefaults[] = {",allocator<", ",char_traits<", ",less<", ",default_delete<",
                                                   ",hash<", ",equal_to<"};
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

std::string normalize_type(std::string_view type, bool is_parameter) {
  auto toks = lex(type);
  std::vector<std::string> words;
  int depth = 0;
  for (const auto& t : toks) {
    if (t.kind == Tok::Punct && (t.text == "(" || t.text == "<" || t.text == "[")) ++depth;
    if (t.kind == Tok::Punct && (t.text == ")" || t.text == ">" || t.text == "]") && depth > 0) --depth;
    if (is_parameter && depth == 0 && t.kind == Tok::Punct && t.text == "=") break;  // default argument
    words.emplace_back(t.text);
  }
  // Arrays decay to pointers in parameters (the name comes off first, then the '*' goes on).
  bool array_param = false;
  if (is_parameter && words.size() >= 2 && words.back() == "]") {
    while (!words.empty() && words.back() != "[") words.pop_back();
    if (!words.empty()) words.pop_back();
    array_param = true;
  }
  // Drop the parameter name: a trailing identifier after something that already names a type.
  if (is_parameter && words.size() >= 2) {
    const std::string& last = words.back();
    const std::string& prev = words[words.size() - 2];
    bool last_is_name = ident_start(last[0]) && !is_builtin_word(last) && !is_cv(last) && prev != "::" &&
                        !(prev == "unsigned" || prev == "signed" || prev == "struct" || prev == "class" ||
                          prev == "enum" || prev == "typename" || prev == "union");
    if (last_is_name) words.pop_back();
  }
  if (array_param) words.push_back("*");
  // A function pointer's name: "int (*fn)(int)" -> "int(*)(int)".
  if (is_parameter)
    for (size_t i = 0; i + 3 < words.size(); ++i)
      if (words[i] == "(" && (words[i + 1] == "*" || words[i + 1] == "&") && ident_start(words[i + 2][0]) &&
          words[i + 3] == ")")
        words.erase(words.begin() + static_cast<long>(i) + 2);
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
  // Integer spellings: "long int" -> "long", "unsigned" alone -> "unsigned int", "short int" -> "short".
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if ((out[i] == "long" || out[i] == "short") && out[i + 1] == "int") out.erase(out.begin() + i + 1);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    bool next_is_int_word = i + 1 < out.size() && (out[i + 1] == "int" || out[i + 1] == "long" ||
                                                   out[i + 1] == "short" || out[i + 1] == "char");
    if (out[i] == "unsigned" && !next_is_int_word) out.insert(out.begin() + i + 1, "int");
    if (out[i] == "signed" && i + 1 < out.size() && out[i + 1] == "int") out.erase(out.begin() + i);
  }
  // cv-qualifiers after what they qualify: leading "const volatile" move past the first type unit
  // (a run of builtin words such as "unsigned long", or a name with its template arguments), at the
  // start of the type and of every template argument ("Vector<const char>" -> "Vector<char const>").
  auto move_cv = [&out](size_t from) {
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
  };
  move_cv(0);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == "<" || out[i] == ",") move_cv(i + 1);
  // A top-level const on a by-value parameter is not part of the signature.
  if (is_parameter) {
    while (!out.empty() && is_cv(out.back())) out.pop_back();
  }
  std::string joined = compact_join(out);
  if (joined.find('<') != std::string::npos) canonical_std_names(joined);
  return joined;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Parser

struct Scope {
  enum Kind { Namespace, Class, Linkage } kind;  // Linkage: extern "C" { } or extern "C++" { }
  std::string name;
  std::vector<std::string> template_params;
  size_t class_entity = SIZE_MAX;  // the ClassDefinition entity, for the key function
  bool key_found = false;
  bool c_linkage = false;
  bool from_macro = false;  // opened by a FOO_NAMESPACE_BEGIN-style macro
};

// A name that is probably a macro: upper case, digits and '_' only.
bool macro_like(std::string_view w) {
  bool upper = false;
  for (char c : w) {
    if (c >= 'a' && c <= 'z') return false;
    upper |= c >= 'A' && c <= 'Z';
  }
  return upper;
}

}  // namespace

std::optional<std::string> macro_scope_value(std::string_view body) {
  auto toks = lex(body);
  if (toks.empty()) return std::string();
  std::string out;
  // "a::b" or "a": a namespace name.
  bool plain = true;
  for (size_t k = 0; k < toks.size(); ++k)
    if (!(k % 2 == 0 ? toks[k].kind == Tok::Ident : toks[k].text == "::")) plain = false;
  if (plain && toks.size() % 2 == 1) {
    for (const auto& t : toks) out += t.text;
    return out;
  }
  // "namespace a { inline namespace b {": the namespaces it opens.
  for (size_t k = 0; k < toks.size();) {
    if (toks[k].text == "inline") ++k;
    if (k >= toks.size() || toks[k].text != "namespace") return std::nullopt;
    ++k;
    while (k < toks.size() && (toks[k].kind == Tok::Ident || toks[k].text == "::")) {
      out += toks[k].text;
      ++k;
    }
    if (k >= toks.size() || toks[k].text != "{") return std::nullopt;
    ++k;
    if (k < toks.size()) out += "::";
  }
  return out;
}

namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> toks, const std::vector<Define>& defines) : t_(std::move(toks)) {
    for (const auto& d : defines)
      if (macro_like(d.name))
        if (auto v = macro_scope_value(d.body)) {
          local_macros_[d.name] = *v;
          if (d.body.find("namespace") != std::string::npos) local_opens_[d.name] = true;
        }
  }

  std::vector<Entity> run() {
    while (i_ < t_.size()) {
      size_t before = i_;
      declaration();
      if (i_ == before) ++i_;  // never stall on a token nothing understood
    }
    return std::move(out_);
  }

 private:
  bool at(std::string_view text, size_t k = 0) const { return i_ + k < t_.size() && t_[i_ + k].text == text; }
  bool is(size_t k, std::string_view text) const { return k < t_.size() && t_[k].text == text; }
  bool ident(size_t k) const { return k < t_.size() && t_[k].kind == Tok::Ident; }

  // Index just past the bracket group starting at k (t_[k] is the opener).
  size_t skip_group(size_t k) const {
    std::string_view open = t_[k].text;
    std::string_view close = open == "(" ? ")" : open == "[" ? "]" : open == "{" ? "}" : ">";
    int depth = 0;
    for (; k < t_.size(); ++k) {
      if (t_[k].kind != Tok::Punct) continue;
      if (t_[k].text == open) ++depth;
      if (t_[k].text == close && --depth == 0) return k + 1;
      // A '<' group cannot contain these: it was a less-than after all.
      if (open == "<" && (t_[k].text == ";" || t_[k].text == "{" || t_[k].text == "}")) return k;
    }
    return t_.size();
  }

  std::string prefix() const {
    std::string p;
    for (const auto& s : scopes_)
      if (s.kind != Scope::Linkage) p += s.name + "::";
    return p;
  }
  bool in_extern_c() const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (it->kind == Scope::Linkage) return it->c_linkage;
    return false;
  }
  Scope* current_class() {
    return !scopes_.empty() && scopes_.back().kind == Scope::Class ? &scopes_.back() : nullptr;
  }
  std::vector<std::string> scope_template_params() const {
    std::vector<std::string> all;
    for (const auto& s : scopes_) all.insert(all.end(), s.template_params.begin(), s.template_params.end());
    return all;
  }

  std::string text(size_t from, size_t to) const {
    std::string out;
    for (size_t k = from; k < to && k < t_.size(); ++k) {
      if (!out.empty() && ident_char(out.back()) && ident_char(t_[k].text[0])) out += ' ';
      out += t_[k].text;
    }
    return out;
  }

  void skip_statement() {
    while (i_ < t_.size()) {
      const auto& tk = t_[i_];
      if (tk.kind == Tok::Punct && (tk.text == "(" || tk.text == "[" || tk.text == "{")) {
        bool brace = tk.text == "{";
        i_ = skip_group(i_);
        if (brace && !at(";") && !at(",") && !at("=")) return;  // a body ends the statement
        continue;
      }
      if (tk.text == ";" ) {
        ++i_;
        return;
      }
      if (tk.text == "}") return;  // leave the scope's closer to the caller
      ++i_;
    }
  }

  std::vector<std::string> template_parameter_names(size_t open, size_t close) const {
    std::vector<std::string> names;
    size_t start = open + 1;
    int depth = 0;
    for (size_t k = open + 1; k <= close && k < t_.size(); ++k) {
      const auto& tx = t_[k].text;
      if (tx == "<" || tx == "(") ++depth;
      if ((tx == ">" || tx == ")") && depth > 0 && k != close) --depth;
      if ((depth == 0 && tx == ",") || k == close) {
        size_t end = k;
        for (size_t m = start; m < k; ++m)
          if (t_[m].text == "=") {
            end = m;
            break;
          }
        for (size_t m = end; m-- > start;) {
          if (t_[m].kind == Tok::Ident && t_[m].text != "typename" && t_[m].text != "class") {
            names.emplace_back(t_[m].text);
            break;
          }
          if (t_[m].text != "...") break;
        }
        start = k + 1;
      }
    }
    return names;
  }

  void declaration() {
    const Token& tk = t_[i_];
    if (tk.text == ";") {
      ++i_;
      return;
    }
    if (tk.text == "}") {
      ++i_;
      if (!scopes_.empty()) scopes_.pop_back();
      return;
    }
    if (tk.kind == Tok::Ident) {
      if (tk.text == "namespace") return namespace_decl();
      if (tk.text == "inline" && at("namespace", 1)) {
        ++i_;
        return namespace_decl();
      }
      if (tk.text == "extern" && i_ + 1 < t_.size() && t_[i_ + 1].kind == Tok::String &&
          (t_[i_ + 1].text == "\"C\"" || t_[i_ + 1].text == "\"C++\"")) {
        bool c = t_[i_ + 1].text == "\"C\"";
        i_ += 2;
        if (at("{")) {
          ++i_;
          Scope linkage{Scope::Linkage, "", {}};
          linkage.c_linkage = c;
          scopes_.push_back(std::move(linkage));
          return;
        }
        pending_extern_c_ = c;
        return;
      }
      if ((tk.text == "public" || tk.text == "private" || tk.text == "protected") && at(":", 1)) {
        i_ += 2;
        return;
      }
      if (tk.text == "template") return template_decl();
      if (tk.text == "using") return using_decl();
      if (tk.text == "typedef") return typedef_decl();
      if (tk.text == "static_assert" || tk.text == "friend" || tk.text == "asm" || tk.text == "__asm__") {
        skip_statement();
        return;
      }
      if (tk.text == "enum") return enum_decl();
      if ((tk.text == "class" || tk.text == "struct" || tk.text == "union") && class_decl()) return;
      if (macro_like(tk.text) && symbol_macro()) return;
    }
    statement();
  }

  void namespace_decl() {
    ++i_;  // "namespace"
    std::vector<std::string> names;
    while (ident(i_)) {
      if (t_[i_].text == "inline") {
        ++i_;
        continue;
      }
      names.push_back(macro_like(t_[i_].text) ? macro_namespace(t_[i_].text) : std::string(t_[i_].text));
      ++i_;
      if (at("::")) ++i_;
    }
    while (i_ < t_.size() && t_[i_].text == "__attribute__") i_ = skip_group(i_ + 1);
    if (!at("{")) {  // namespace alias or garbage
      skip_statement();
      return;
    }
    ++i_;
    if (names.empty()) names.push_back("(anonymous namespace)");
    // "namespace a::b {" opens two scopes that one "}" closes: merge them into one scope name.
    std::string joined;
    for (size_t k = 0; k < names.size(); ++k) joined += (k ? "::" : "") + names[k];
    scopes_.push_back({Scope::Namespace, joined, {}});
  }

  void template_decl() {
    ++i_;  // "template"
    if (at("<")) {
      size_t close = skip_group(i_);
      pending_template_ = template_parameter_names(i_, close - 1);
      pending_is_template_ = !pending_template_.empty();
      pending_specialization_ = pending_template_.empty();
      i_ = close;
      // template <...> class X ...; or a function
      if (i_ < t_.size() && (t_[i_].text == "class" || t_[i_].text == "struct" || t_[i_].text == "union")) {
        if (class_decl()) return;
      }
      if (at("using")) return using_decl();  // an alias template: its parameters stay with it
      if (at("typedef")) {
        skip_statement();
        clear_pending();
        return;
      }
      statement();
      return;
    }
    // Explicit instantiation: "template void f<int>(...);", "template class X<float>;"
    if (i_ < t_.size() && (t_[i_].text == "class" || t_[i_].text == "struct")) {
      size_t start = i_ + 1;
      size_t k = start;
      while (k < t_.size() && t_[k].text != ";" && t_[k].text != "{") ++k;
      if (k < t_.size() && t_[k].text == ";") {
        Entity e;
        e.kind = EntityKind::ClassInstantiation;
        e.line = t_[i_].line;
        std::string name = text(start, k);
        auto lt = name.find('<');
        e.qualified = prefix() + name.substr(0, lt);
        if (lt != std::string::npos) e.template_args = normalize_args(name.substr(lt + 1, name.size() - lt - 2));
        out_.push_back(std::move(e));
        i_ = k + 1;
        return;
      }
    }
    pending_instantiation_ = true;
    statement();
  }

  std::string normalize_args(const std::string& inside) {
    std::vector<std::string> args;
    int depth = 0;
    size_t start = 0;
    for (size_t k = 0; k <= inside.size(); ++k) {
      char c = k < inside.size() ? inside[k] : ',';
      if (c == '<' || c == '(') ++depth;
      if ((c == '>' || c == ')') && depth > 0) --depth;
      if (depth == 0 && c == ',') {
        args.push_back(normalize_type(std::string_view(inside).substr(start, k - start), false));
        start = k + 1;
      }
    }
    return join_list(args);
  }

  void clear_pending() {
    pending_template_.clear();
    pending_is_template_ = false;
    pending_specialization_ = false;
    pending_instantiation_ = false;
    pending_extern_c_ = false;
  }

  void using_decl() {
    size_t start = i_;
    if (ident(i_ + 1) && at("=", 2)) {
      Entity e;
      e.kind = EntityKind::Alias;
      e.line = t_[i_].line;
      e.qualified = prefix() + std::string(t_[i_ + 1].text);
      size_t k = i_ + 3;
      size_t end = k;
      while (end < t_.size() && t_[end].text != ";") ++end;
      e.extra = normalize_type(text(k, end), false);
      // "template <typename Char> using buffer_context = basic_format_context<..., Char>;": the
      // parameters are substituted when a type names it with arguments.
      e.template_params = join_list(pending_template_);
      e.is_template = pending_is_template_;
      out_.push_back(std::move(e));
      i_ = std::min(t_.size(), end + 1);
      clear_pending();
      return;
    }
    i_ = start;
    skip_statement();
    clear_pending();
  }

  void typedef_decl() {
    size_t start = ++i_;
    size_t end = start;
    while (end < t_.size() && t_[end].text != ";") {
      // "typedef enum X { ... } name;" and "typedef struct { ... } name;": skip the body.
      end = t_[end].text == "{" ? skip_group(end) : end + 1;
    }
    if (end >= t_.size()) {
      i_ = t_.size();
      return;
    }
    Entity e;
    e.kind = EntityKind::Alias;
    e.line = t_[start].line;
    // "typedef void (*name)(void*);": the name is inside the first parentheses.
    for (size_t k = start; k + 2 < end; ++k) {
      if (t_[k].text == "(" && t_[k + 1].text == "*" && ident(k + 2)) {
        e.qualified = prefix() + std::string(t_[k + 2].text);
        e.extra = "(*)";
        break;
      }
    }
    if (e.qualified.empty() && end - start >= 2 && ident(end - 1)) {
      e.qualified = prefix() + std::string(t_[end - 1].text);
      size_t body = start;
      while (body < end - 1 && t_[body].text != "{") ++body;
      e.extra = body < end - 1 ? std::string(t_[start + 1].text) : normalize_type(text(start, end - 1), false);
    }
    if (!e.qualified.empty()) out_.push_back(std::move(e));
    i_ = end + 1;
  }

  // "enum [class] X [: T] { ... };": the type is known; its body is skipped.
  void enum_decl() {
    size_t k = i_ + 1;
    if (is(k, "class") || is(k, "struct")) ++k;
    if (ident(k)) {
      size_t after = k + 1;
      if (is(after, ":"))
        while (after < t_.size() && t_[after].text != "{" && t_[after].text != ";") ++after;
      if (is(after, "{")) {
        Entity e;
        e.kind = EntityKind::ClassDefinition;
        e.line = t_[k].line;
        e.qualified = prefix() + std::string(t_[k].text);
        out_.push_back(std::move(e));
      }
    }
    skip_statement();
  }

  // class/struct/union head. Returns false when it is not a definition or forward declaration
  // (e.g. "struct stat st;"), leaving the statement to the general path.
  bool class_decl() {
    size_t k = i_ + 1;
    while (k < t_.size() && (t_[k].text == "__attribute__" || t_[k].text == "alignas" || t_[k].text == "[")) {
      k = t_[k].text == "[" ? skip_group(k) : skip_group(k + 1);
    }
    // Export macros before the name: "class TORCH_API Foo".
    while (ident(k) && ident(k + 1) && t_[k + 1].text != "final") ++k;
    if (!ident(k)) {
      if (is(k, "{")) {  // anonymous struct/union: skip as a statement
        return false;
      }
      return false;
    }
    std::string name(t_[k].text);
    size_t after = k + 1;
    while (is(after, "::") && ident(after + 1)) {  // out-of-line nested class definition
      name += "::" + std::string(t_[after + 1].text);
      after += 2;
    }
    if (is(after, "<")) after = skip_group(after);  // specialisation arguments
    if (is(after, "final")) ++after;
    if (is(after, ";")) {  // forward declaration
      i_ = after + 1;
      clear_pending();
      return true;
    }
    if (is(after, ":")) {
      while (after < t_.size() && t_[after].text != "{" && t_[after].text != ";") {
        after = t_[after].text == "<" ? skip_group(after) : after + 1;
      }
    }
    if (!is(after, "{")) return false;
    Entity e;
    e.kind = EntityKind::ClassDefinition;
    e.line = t_[k].line;
    e.qualified = prefix() + name;
    e.is_template = pending_is_template_;
    e.template_params = join_list(pending_template_);
    out_.push_back(std::move(e));
    Scope s{Scope::Class, name, pending_template_};
    s.class_entity = out_.size() - 1;
    scopes_.push_back(std::move(s));
    i_ = after + 1;
    clear_pending();
    return true;
  }

  // The general statement: a function or variable declaration/definition, or something to skip.
  void statement() {
    size_t start = i_;
    bool extern_c = pending_extern_c_ || in_extern_c();
    std::vector<std::string> tparams = pending_template_;
    bool is_template = pending_is_template_ || current_template_scope();
    bool instantiation = pending_instantiation_;
    clear_pending();

    // Find the end: ';' or a body '{' at depth 0, and the first top-level '(' before any '='.
    size_t k = start, paren = SIZE_MAX, eq = SIZE_MAX;
    int angle = 0;
    while (k < t_.size()) {
      const auto& tx = t_[k].text;
      if (tx == "operator" && t_[k].kind == Tok::Ident && paren == SIZE_MAX && eq == SIZE_MAX && angle == 0) {
        // The operator's own tokens ("=", "==", "<=", "()", "new[]") are its name, not an initializer.
        size_t m = k + 1;
        if (is(m, "(") && is(m + 1, ")")) m += 2;
        while (m < t_.size() && t_[m].text != "(" && t_[m].text != ";" && t_[m].text != "{" && t_[m].text != "}") ++m;
        if (is(m, "(")) {
          paren = m;
          k = skip_group(m);
          continue;
        }
      }
      if (t_[k].kind == Tok::Punct) {
        if (tx == ";" || tx == "}") break;
        if (tx == "{") break;
        if (tx == "=" && eq == SIZE_MAX && paren == SIZE_MAX && angle == 0) eq = k;
        if (tx == "<" && paren == SIZE_MAX && eq == SIZE_MAX && k > start && ident(k - 1) &&
            t_[k - 1].text != "operator") {
          ++angle;
        } else if (tx == ">" && angle > 0 && paren == SIZE_MAX) {
          --angle;
        }
        if (tx == "(") {
          if (paren == SIZE_MAX && eq == SIZE_MAX && angle == 0) {
            // "operator()" names the function; its parameter list is the next group.
            if (k > start && t_[k - 1].text == "operator" && is(k + 1, ")")) {
              k += 2;
              continue;
            }
            paren = k;
          }
          k = skip_group(k);
          continue;
        }
        if (tx == "[") {
          k = skip_group(k);
          continue;
        }
      }
      ++k;
    }
    if (paren != SIZE_MAX) {
      if (size_t name_at = parenthesized_declarator(paren); name_at != SIZE_MAX) {
        // "void (*exitfunc)(int) = &exit;", "int (*table)[4];": a variable of pointer type.
        size_t eq_at = SIZE_MAX;
        for (size_t m = skip_group(paren); m < k;) {
          const auto& tx = t_[m].text;
          if (tx == "=") {
            eq_at = m;
            break;
          }
          m = (tx == "(" || tx == "[") ? skip_group(m) : m + 1;
        }
        variable_statement(start, k, eq_at, extern_c, name_at, paren);
        return;
      }
      function_statement(start, paren, extern_c, tparams, is_template, instantiation);
    } else {
      variable_statement(start, k, eq, extern_c);
    }
  }

  // "(*name)", "(&name)", "(A::*name)", "(* const name[3])" followed by a parameter list or array
  // extents: the declarator of a pointer variable, not a function's parameters. Returns the index of
  // the name (the last identifier before ')'), or SIZE_MAX.
  size_t parenthesized_declarator(size_t paren) const {
    size_t m = paren + 1;
    while (ident(m) && is(m + 1, "::")) m += 2;  // a pointer to member's class
    if (!(is(m, "*") || is(m, "&") || is(m, "&&"))) return SIZE_MAX;
    ++m;
    while (ident(m) && is_cv(t_[m].text)) ++m;
    if (!ident(m)) return SIZE_MAX;
    size_t name = m++;
    while (is(m, "::") && ident(m + 1)) {
      name = m + 1;
      m += 2;
    }
    while (is(m, "[")) m = skip_group(m);
    if (!is(m, ")")) return SIZE_MAX;
    return is(m + 1, "(") || is(m + 1, "[") ? name : SIZE_MAX;
  }

  bool current_template_scope() const {
    for (const auto& s : scopes_)
      if (!s.template_params.empty()) return true;
    return false;
  }

  static bool is_decl_keyword(std::string_view w) {
    return w == "static" || w == "inline" || w == "constexpr" || w == "virtual" || w == "explicit" ||
           w == "extern" || w == "__global__" || w == "__device__" || w == "__host__" ||
           w == "__forceinline__" || w == "__inline__" || w == "consteval" || w == "thread_local" ||
           w == "__noinline__";
  }

  void function_statement(size_t start, size_t paren, bool extern_c, std::vector<std::string> tparams,
                          bool is_template, bool instantiation) {
    // Declarator: walk back from '(' over "name", "operator ...", "~name", "<args>" and "A::".
    size_t d = paren;
    std::string name;
    std::string targs;
    size_t op = SIZE_MAX;
    for (size_t m = start; m < paren; ++m)
      if (t_[m].text == "operator") op = m;
    if (op != SIZE_MAX) {
      name = canonical_operator_name("operator " + text(op + 1, paren));
      d = op;
    } else {
      if (d > start && t_[d - 1].text == ">") {  // f<int>(...)
        int depth = 0;
        size_t m = d;
        while (m-- > start) {
          if (t_[m].text == ">") ++depth;
          if (t_[m].text == "<" && --depth == 0) break;
        }
        if (m > start && m < d && ident(m - 1)) {
          targs = normalize_args(text(m + 1, d - 1));
          d = m;
        }
      }
      if (d == start || !ident(d - 1)) {
        skip_rest(paren);
        return;
      }
      name = std::string(t_[d - 1].text);
      --d;
      if (d > start && t_[d - 1].text == "~") {
        name = "~" + name;
        --d;
      }
    }
    // Qualifiers "A::B<T>::"
    std::vector<std::string> quals;
    while (d >= start + 2 && t_[d - 1].text == "::") {
      size_t m = d - 1;
      if (m > start && t_[m - 1].text == ">") {
        int depth = 0;
        while (m-- > start) {
          if (t_[m].text == ">") ++depth;
          if (t_[m].text == "<" && --depth == 0) break;
        }
      }
      if (m == start || !ident(m - 1)) break;
      quals.insert(quals.begin(), std::string(t_[m - 1].text));
      d = m - 1;
    }
    if (d == start && quals.size() == 1 && start > 0 && t_[start - 1].text == "::") {
      // leading global "::name" - fine
    }
    // What precedes the declarator: return type and specifiers.
    bool has_type = false, is_inline = false, is_virtual = false, is_extern = false;
    for (size_t m = start; m < d; ++m) {
      std::string_view w = t_[m].text;
      if (w == "inline" || w == "constexpr" || w == "__forceinline__" || w == "__inline__") is_inline = true;
      else if (w == "virtual") is_virtual = true;
      else if (w == "extern") is_extern = true;
      if (!is_decl_keyword(w)) has_type = true;
    }
    Scope* cls = current_class();
    bool ctor_like = name[0] == '~' || name.rfind("operator", 0) == 0 ||
                     (cls && quals.empty() && name == cls->name) || (!quals.empty() && quals.back() == name);
    if (!has_type && !ctor_like) {  // a macro invocation such as REGISTER_DISPATCH(...)
      skip_rest(paren);
      return;
    }
    if (d > start && t_[d - 1].text == "(") {  // "void (*fp)(int)": a variable of function type
      skip_rest(paren);
      return;
    }
    (void)is_extern;
    size_t close = skip_group(paren);
    std::vector<std::string> params;
    {
      size_t ps = paren + 1;
      int depth = 0;
      for (size_t m = paren + 1; m < close; ++m) {
        const auto& tx = t_[m].text;
        if (tx == "(" || tx == "<" || tx == "[" || tx == "{") ++depth;
        if ((tx == ")" || tx == ">" || tx == "]" || tx == "}") && depth > 0 && m + 1 != close) --depth;
        if ((depth == 0 && tx == ",") || m + 1 == close) {
          size_t pe = m + 1 == close ? m : m;
          std::string p = normalize_type(text(ps, pe), true);
          if (!p.empty() && p != "void") params.push_back(p);
          ps = m + 1;
        }
      }
    }
    // After the parameters: qualifiers, "= 0", a body, a ctor initializer list.
    size_t k = close;
    bool const_method = false, pure = false, body = false, defaulted = false, deleted = false;
    while (k < t_.size()) {
      const auto& tx = t_[k].text;
      if (tx == ";") {
        ++k;
        break;
      }
      if (tx == "{") {
        body = true;
        k = skip_group(k);
        break;
      }
      if (tx == "}") break;
      if (tx == "const") const_method = true;
      if (tx == "=" && is(k + 1, "0")) pure = true;
      if (tx == "=" && is(k + 1, "default")) defaulted = true;
      if (tx == "=" && is(k + 1, "delete")) deleted = true;
      if (tx == "(" || tx == "[") {
        k = skip_group(k);
        continue;
      }
      if (tx == ":" && !body) {  // constructor initializer list
        ++k;
        while (k < t_.size()) {
          if (t_[k].text == "(" ) {
            k = skip_group(k);
            continue;
          }
          if (t_[k].text == "{") {
            bool brace_init = k > 0 && (ident(k - 1) || t_[k - 1].text == ">");
            if (brace_init) {
              k = skip_group(k);
              continue;
            }
            break;
          }
          if (t_[k].text == ";" || t_[k].text == "}") break;
          ++k;
        }
        continue;
      }
      ++k;
    }
    i_ = k;
    // "A::~A() = default;" outside the class defines it there; inside the class it defines nothing.
    if (deleted || (defaulted && quals.empty())) return;
    if (defaulted) body = true;

    Entity e;
    e.line = t_[paren].line;
    std::string qual;
    for (const auto& q : quals) qual += q + "::";
    e.qualified = prefix() + qual + name;
    e.params = join_list(params);
    e.const_method = const_method;
    e.extern_c = extern_c;
    std::vector<std::string> all_tparams = scope_template_params();
    all_tparams.insert(all_tparams.end(), tparams.begin(), tparams.end());
    e.template_params = join_list(all_tparams);
    e.is_template = is_template && !instantiation;
    e.template_args = targs;
    e.is_inline = is_inline || (body && cls != nullptr);
    if (instantiation) {
      e.kind = EntityKind::ExplicitInstantiation;
    } else if (body) {
      e.kind = EntityKind::FunctionDefinition;
    } else {
      e.kind = EntityKind::FunctionDeclaration;
    }
    // The key function (Itanium ABI): the first non-pure, non-inline virtual function declared,
    // not defined, in the class body. Its definition's file emits the vtable.
    if (cls && !cls->key_found && is_virtual && !pure && !body && !is_inline && cls->class_entity < out_.size()) {
      out_[cls->class_entity].extra = name + "(" + e.params + ")";
      cls->key_found = true;
    }
    out_.push_back(std::move(e));
  }

  void skip_rest(size_t from) {
    i_ = from;
    skip_statement();
  }

  // name_at/specifiers_end: a parenthesized declarator ("void (*name)(int)") names the variable at
  // name_at; the specifiers and type are the tokens before the '(' at specifiers_end.
  void variable_statement(size_t start, size_t end, size_t eq, bool extern_c, size_t name_at = SIZE_MAX,
                          size_t specifiers_end = SIZE_MAX) {
    // end: ';', '{' or '}' (t_[end]); eq: first top-level '='.
    size_t name_end = eq != SIZE_MAX ? eq : end;
    bool brace_init = end < t_.size() && t_[end].text == "{" && eq == SIZE_MAX;
    size_t last = name_at != SIZE_MAX ? name_at + 1 : name_end;
    while (name_at == SIZE_MAX && last > start && t_[last - 1].text == "]") {  // "T name[N][M]": step back over the extents
      size_t m = last - 1;
      int depth = 0;
      bool matched = false;
      while (m > start) {
        --m;
        if (t_[m].text == "]") {
          ++depth;
        } else if (t_[m].text == "[") {
          if (depth == 0) {
            matched = true;
            break;
          }
          --depth;
        }
      }
      if (!matched) {  // unbalanced: not a declaration we can read
        last = start;
        break;
      }
      last = m;
    }
    bool ok = last > start + 1 && ident(last - 1);
    std::string name = ok ? std::string(t_[last - 1].text) : "";
    std::vector<std::string> quals;
    size_t d = last - (ok ? 1 : 0);
    while (ok && d >= start + 2 && t_[d - 1].text == "::" && ident(d - 2)) {
      quals.insert(quals.begin(), std::string(t_[d - 2].text));
      d -= 2;
    }
    bool is_extern = false, is_static = false, has_type = false, is_inline = false;
    for (size_t m = start; m < (specifiers_end != SIZE_MAX ? specifiers_end : d); ++m) {
      auto w = t_[m].text;
      if (w == "extern") is_extern = true;
      if (w == "static") is_static = true;
      if (w == "inline" || w == "constexpr") is_inline = true;
      if (!is_decl_keyword(w) && w != "const" && w != "mutable") has_type = true;
    }
    // Skip to the end of the statement (initialisers may contain braces).
    i_ = end;
    if (i_ < t_.size() && t_[i_].text == "{") {
      i_ = skip_group(i_);
      // "struct { ... } table = {{1}, {0}};": the initializer's braces are groups, not scope closers.
      while (i_ < t_.size() && t_[i_].text != ";" && t_[i_].text != "}") {
        const auto& tx = t_[i_].text;
        i_ = (tx == "{" || tx == "(" || tx == "[") ? skip_group(i_) : i_ + 1;
      }
      if (at(";")) ++i_;
    } else if (at(";")) {
      ++i_;
    }
    if (!ok || !has_type || name == "operator") return;
    if (ident_start(name[0]) && std::isupper(static_cast<unsigned char>(name[0])) && d == start + 1 &&
        !brace_init && eq == SIZE_MAX) {
      // "FOO BAR;" is as likely a macro as a variable; keep it, it only costs an index entry.
    }
    Entity e;
    e.line = t_[last - 1].line;
    std::string qual;
    for (const auto& q : quals) qual += q + "::";
    e.qualified = prefix() + qual + name;
    e.extern_c = extern_c;
    e.is_inline = is_inline;
    Scope* cls = current_class();
    bool declaration = is_extern && eq == SIZE_MAX && !brace_init;
    if (cls && is_static && !is_inline) declaration = true;  // static data member declared in the class
    if (cls && !is_static) return;                          // non-static data members have no symbol
    e.kind = declaration ? EntityKind::VariableDeclaration : EntityKind::VariableDefinition;
    std::vector<std::string> tp = scope_template_params();
    e.template_params = join_list(tp);
    e.is_template = !tp.empty();
    out_.push_back(std::move(e));
  }

  // The namespace a macro name stands for: its value when this file defines it, else the name
  // marked with kMacroMark for the index to resolve against every #define it saw.
  std::string macro_namespace(std::string_view name) const {
    if (auto it = local_macros_.find(name); it != local_macros_.end()) return it->second;
    return std::string(1, kMacroMark) + std::string(name);
  }

  // Statement-level macros that open or close namespaces, or define symbols (PyTorch's DEFINE_DISPATCH,
  // C10_DEFINE_REGISTRY). Returns true when it consumed the statement.
  bool symbol_macro() {
    std::string_view w = t_[i_].text;
    auto ends = [&](std::string_view suf) { return w.size() > suf.size() && w.substr(w.size() - suf.size()) == suf; };
    if (!at("(", 1)) {
      auto local = local_macros_.find(w);
      bool opens = ends("_BEGIN") || ends("BEGIN_NAMESPACE") || ends("NAMESPACE_BEGIN") ||
                   ends("_NAMESPACE_START") || (local != local_macros_.end() && local_opens_.count(w));
      if (opens) {
        scopes_.push_back({Scope::Namespace, macro_namespace(w), {}});
        scopes_.back().from_macro = true;
        ++i_;
        return true;
      }
      bool closes = ends("_END") || ends("END_NAMESPACE") || ends("NAMESPACE_END");
      if (closes && !scopes_.empty() && scopes_.back().from_macro) {
        scopes_.pop_back();
        ++i_;
        return true;
      }
      return false;
    }
    if (dispatch_registration(w)) return true;
    bool variable = w == "DEFINE_DISPATCH";
    bool registry = w == "C10_DEFINE_REGISTRY" || w == "C10_DEFINE_SHARED_REGISTRY" ||
                    w == "C10_DEFINE_TYPED_REGISTRY" || w == "C10_DEFINE_SHARED_REGISTRY_WITHOUT_WARNING" ||
                    w == "C10_DEFINE_REGISTRY_WITHOUT_WARNING";
    if (!(variable || registry) || !ident(i_ + 2)) return false;
    Entity e;
    e.kind = variable ? EntityKind::VariableDefinition : EntityKind::FunctionDefinition;
    e.line = t_[i_].line;
    e.qualified = prefix() + std::string(t_[i_ + 2].text);
    out_.push_back(std::move(e));
    skip_statement();
    return true;
  }

  // PyTorch's CPU kernel registrations. REGISTER_ARCH_DISPATCH(name, arch, fn) expands to
  // "template <> name::FnPtr TORCH_API DispatchStub<name::FnPtr, struct name>::arch = fn;", defining
  // the static member at::native::DispatchStub<void (*)(...), at::native::name>::arch. The entity
  // is that member, with the stub as its template_args (the FnPtr is the stub's own typedef).
  // REGISTER_DISPATCH defines the arch the file is compiled for (CPU_CAPABILITY: each kernel file is
  // compiled once per capability); in a CUDA unit it registers a static object instead, so its
  // entities carry extra = "REGISTER_DISPATCH" for the index to drop them there.
  bool dispatch_registration(std::string_view w) {
    static constexpr std::string_view kAllArchs[] = {"DEFAULT", "AVX2", "AVX512", "VSX", "ZVECTOR"};
    std::vector<std::string_view> archs;
    if (w == "REGISTER_DISPATCH" || w == "REGISTER_ALL_CPU_DISPATCH" || w == "REGISTER_NO_CPU_DISPATCH") {
      archs.assign(std::begin(kAllArchs), std::end(kAllArchs));
    } else if (w == "REGISTER_ARCH_DISPATCH") {
      // the arch is its second argument, read below
    } else if (w == "REGISTER_AVX2_DISPATCH") {
      archs = {"AVX2"};
    } else if (w == "REGISTER_AVX512_DISPATCH" || w == "REGISTER_NO_AVX512_DISPATCH") {
      archs = {"AVX512"};
    } else if (w == "REGISTER_VSX_DISPATCH") {
      archs = {"VSX"};
    } else if (w == "REGISTER_ZVECTOR_DISPATCH") {
      archs = {"ZVECTOR"};
    } else {
      return false;
    }
    // The arguments at top level: the stub (possibly qualified: cpublas::gemm_stub), then the rest.
    size_t close = skip_group(i_ + 1);
    std::vector<std::pair<size_t, size_t>> args;
    size_t from = i_ + 2;
    int depth = 0;
    for (size_t k = i_ + 2; k < close; ++k) {
      const auto& tx = t_[k].text;
      if (tx == "(" || tx == "[" || tx == "{" || tx == "<") ++depth;
      if ((tx == ")" || tx == "]" || tx == "}" || tx == ">") && depth > 0 && k + 1 != close) --depth;
      if ((depth == 0 && tx == ",") || k + 1 == close) {
        args.emplace_back(from, k);
        from = k + 1;
      }
    }
    if (args.empty() || args[0].first == args[0].second) return false;
    if (w == "REGISTER_ARCH_DISPATCH") {
      if (args.size() < 2 || args[1].second != args[1].first + 1 || !ident(args[1].first)) return false;
      archs = {t_[args[1].first].text};
    }
    std::string stub = normalize_type(text(args[0].first, args[0].second), false);
    for (auto arch : archs) {
      Entity e;
      e.kind = EntityKind::VariableDefinition;
      e.line = t_[i_].line;
      e.qualified = "at::native::DispatchStub::" + std::string(arch);
      e.template_args = stub;
      if (w == "REGISTER_DISPATCH") e.extra = "REGISTER_DISPATCH";
      out_.push_back(std::move(e));
    }
    i_ = close;  // the ';' after it is optional (the macro may end in one)
    if (at(";")) ++i_;
    return true;
  }

  std::unordered_map<std::string_view, std::string> local_macros_;
  std::unordered_map<std::string_view, bool> local_opens_;
  std::vector<Token> t_;
  size_t i_ = 0;
  std::vector<Scope> scopes_;
  std::vector<Entity> out_;
  std::vector<std::string> pending_template_;
  bool pending_is_template_ = false;
  bool pending_specialization_ = false;
  bool pending_instantiation_ = false;
  bool pending_extern_c_ = false;
};

}  // namespace

std::vector<Entity> scan_source(std::string_view text, bool mark_macro_scopes) {
  std::vector<Define> defines;
  auto toks = lex(text, &defines);
  std::vector<Entity> out = Parser(std::move(toks), defines).run();
  if (!mark_macro_scopes)
    for (auto& e : out) std::erase(e.qualified, kMacroMark);
  // Object-like macros that name namespaces, for the index to resolve other files' scopes with.
  for (const auto& d : defines) {
    if (!macro_like(d.name)) continue;
    auto v = macro_scope_value(d.body);
    if (!v) continue;
    Entity e;
    e.kind = EntityKind::Macro;
    e.qualified = std::string(d.name);
    e.extra = *v;
    e.params = d.condition;  // which definition the build takes is decided with its -D flags
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

bool is_api_macro(std::string_view w) {
  if (w == "extern" || w == "static" || w == "inline" || w == "__inline__" || w == "__forceinline__" ||
      w == "__cudart_builtin__" || w == "CUDARTAPI_CDECL" || w == "MUSARTAPI_CDECL" || w == "virtual" ||
      w == "explicit" || w == "friend") {
    return true;
  }
  bool caps = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  auto ends = [&](std::string_view suffix) {
    return w.size() >= suffix.size() && w.compare(w.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return caps && (ends("API") || ends("_API") || ends("_EXPORT") || ends("_IMPORT") || ends("APIENTRY"));
}

// Canonical spacing for declaration text: "void** p", "const char* s", "std::vector<int> v".
std::string join_tokens(const std::vector<Token>& toks, size_t from, size_t to) {
  std::string out;
  for (size_t k = from; k < to; ++k) {
    std::string_view t = toks[k].text;
    std::string_view prev = k > from ? toks[k - 1].text : std::string_view();
    bool space = !out.empty();
    if (t == "," || t == ")" || t == "]" || t == "*" || t == "&" || t == "&&" || t == "::" || t == ">" || t == "<" ||
        t == "(" || t == "[") {
      space = false;
      if ((t == "*" || t == "&" || t == "&&") && prev == ",") space = true;
    }
    if (prev == "(" || prev == "[" || prev == "::" || prev == "<") space = false;
    if ((t == "(") && (prev == "*" || prev == ")")) space = false;
    if (t == "(" && !out.empty() && (ident_char(out.back()))) space = false;
    if (space) out += ' ';
    out += t;
  }
  return out;
}

}  // namespace

std::optional<RawDeclaration> raw_declaration(std::string_view text, uint32_t line, std::string_view name) {
  std::vector<Token> t = lex(text);
  size_t at = SIZE_MAX;
  for (size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k].kind == Tok::Ident && t[k].text == name && t[k + 1].text == "(" && t[k].line == line) {
      at = k;
      break;
    }
  }
  if (at == SIZE_MAX) return std::nullopt;
  size_t start = at;
  while (start > 0) {
    std::string_view p = t[start - 1].text;
    if (p == ";" || p == "{" || p == "}" || (p == ":" && start >= 2 && t[start - 2].kind == Tok::Ident)) break;
    --start;
  }
  RawDeclaration d;
  d.name = std::string(name);
  // extern "C" on the declaration itself or on an enclosing block.
  std::vector<Token> prefix;
  for (size_t k = start; k < at; ++k) {
    if (t[k].text == "extern" && k + 1 < at && t[k + 1].kind == Tok::String) {
      d.extern_c = t[k + 1].text == "\"C\"";
      ++k;
      continue;
    }
    if (t[k].text == "__attribute__" && k + 1 < at && t[k + 1].text == "(") {
      int depth = 0;
      size_t m = k + 1;
      for (; m < at; ++m) {
        if (t[m].text == "(") ++depth;
        if (t[m].text == ")" && --depth == 0) break;
      }
      k = m;
      continue;
    }
    if (is_api_macro(t[k].text)) continue;
    prefix.push_back(t[k]);
  }
  int braces = 0;
  for (size_t k = start; k-- > 0;) {  // an enclosing extern "C" { block
    if (t[k].text == "}") ++braces;
    if (t[k].text == "{") {
      if (braces == 0 && k >= 2 && t[k - 2].text == "extern" && t[k - 1].text == "\"C\"") d.extern_c = true;
      if (braces > 0) --braces;
    }
  }
  d.return_type = join_tokens(prefix, 0, prefix.size());
  // Parameters: split at top-level commas; drop default arguments and CUDA's __dv(x).
  size_t open = at + 1, close = open;
  int depth = 0;
  for (; close < t.size(); ++close) {
    if (t[close].text == "(" || t[close].text == "<" || t[close].text == "[") ++depth;
    if ((t[close].text == ")" || t[close].text == ">" || t[close].text == "]") && --depth == 0) break;
  }
  if (close >= t.size()) return std::nullopt;
  std::vector<Token> param;
  auto flush = [&] {
    size_t n = param.size();
    for (size_t k = 0; k < param.size(); ++k) {
      if (param[k].text == "=" || param[k].text == "__dv") {
        n = k;
        break;
      }
    }
    std::string p = join_tokens(param, 0, n);
    if (!p.empty() && p != "void") {
      d.params.push_back(p);
      bool named = n >= 2 && param[n - 1].kind == Tok::Ident && !is_builtin_word(param[n - 1].text) &&
                   !is_cv(param[n - 1].text) && param[n - 2].text != "::";
      d.param_names.push_back(named ? std::string(param[n - 1].text) : "");
    }
    param.clear();
  };
  depth = 0;
  for (size_t k = open + 1; k < close; ++k) {
    std::string_view x = t[k].text;
    if (x == "(" || x == "<" || x == "[") ++depth;
    if (x == ")" || x == ">" || x == "]") --depth;
    if (depth == 0 && x == ",") {
      flush();
      continue;
    }
    param.push_back(t[k]);
  }
  flush();
  size_t k = close + 1;
  std::vector<Token> trailing;
  while (k < t.size() && t[k].text != ";" && t[k].text != "{" && t[k].text != "=") {
    if (t[k].text == "const" || t[k].text == "noexcept" || t[k].text == "volatile" || t[k].text == "&" || t[k].text == "&&")
      trailing.push_back(t[k]);
    ++k;
  }
  std::string tr = join_tokens(trailing, 0, trailing.size());
  d.trailing = tr.empty() ? "" : " " + tr;
  return d;
}

}  // namespace mlc::source
