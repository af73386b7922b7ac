// A function declaration as written, for stubs that must repeat it: found by name and line, its return type,
// parameters and trailing qualifiers in canonical spacing, with storage classes, export macros and default
// arguments dropped.
#include <algorithm>

#include "source/scanner_internal.h"

namespace mlc::source {
using namespace detail;

namespace {

bool is_api_macro(std::string_view w, const std::vector<std::string>& api_macros) {
  if (w == "extern" || w == "static" || w == "inline" || w == "__inline__" || w == "__forceinline__" ||
      w == "virtual" || w == "explicit" || w == "friend" ||
      std::find(api_macros.begin(), api_macros.end(), w) != api_macros.end()) {
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

std::optional<RawDeclaration> raw_declaration(std::string_view text, uint32_t line, std::string_view name,
                                              const std::vector<std::string>& api_macros) {
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
    if (is_api_macro(t[k].text, api_macros)) continue;
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
    if (t[k].text == "const" || t[k].text == "noexcept" || t[k].text == "volatile" || t[k].text == "&" ||
        t[k].text == "&&")
      trailing.push_back(t[k]);
    ++k;
  }
  std::string tr = join_tokens(trailing, 0, trailing.size());
  d.trailing = tr.empty() ? "" : " " + tr;
  return d;
}

}  // namespace mlc::source
