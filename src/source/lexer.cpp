// The scanner's lexer: C/C++/CUDA text into identifier, punctuation, string and number tokens, comments
// and directives dropped, with the object-like #defines it passes and the #if branch each sits in
// (preprocessor.h). Every loop consumes at least one byte, so malformed text ends the scan.
#include "source/preprocessor.h"
#include "source/scanner_internal.h"

namespace mlc::source::detail {
namespace {

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

// The end of the directive at `i` (the '#'), past its continuations, counted in `line`; a block
// comment starting on the line ends it, to be lexed normally.
size_t directive_end(std::string_view s, size_t i, uint32_t& line) {
  const size_t n = s.size();
  while (i < n && s[i] != '\n') {
    if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
      ++line;
      i += 2;
      continue;
    }
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') break;
    ++i;
  }
  return i;
}

// The end of the block comment opening at `i`, its newlines counted in `line`.
size_t block_comment_end(std::string_view s, size_t i, uint32_t& line) {
  const size_t n = s.size();
  i += 2;
  while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
    if (s[i] == '\n') ++line;
    ++i;
  }
  return std::min(n, i + 2);
}

// The end of the raw string R"delim( ... )delim" at `i`, or npos when no delimiter opens one.
size_t raw_string_end(std::string_view s, size_t i) {
  size_t open = s.find('(', i + 2);
  if (open == std::string_view::npos || open - i >= 20) return std::string_view::npos;
  std::string close = ")" + std::string(s.substr(i + 2, open - i - 2)) + "\"";
  size_t end = s.find(close, open);
  return end == std::string_view::npos ? s.size() : end + close.size();
}

// The end of the number at `i`: digits, letters, '.', digit separators and an exponent's sign.
size_t number_end(std::string_view s, size_t i) {
  const size_t n = s.size();
  while (i < n && (ident_char(s[i]) || s[i] == '.' || s[i] == '\'' ||
                   ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E' || s[i - 1] == 'p')))) {
    ++i;
  }
  return i;
}

// The end of the string or character literal at `i`; an unclosed one ends at the line's end.
size_t quoted_end(std::string_view s, size_t i) {
  const size_t n = s.size();
  const char quote = s[i++];
  while (i < n && s[i] != quote && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
  return std::min(n, i + 1);
}

// The length of the punctuator at `i`: the multi-character ones the scanner reads, else one byte.
size_t punct_size(std::string_view s, size_t i) {
  static constexpr std::string_view kMulti[] = {"::", "->", "...", "&&"};
  for (auto m : kMulti)
    if (s.substr(i, m.size()) == m) return m.size();
  return 1;
}

}  // namespace

std::vector<Token> lex(std::string_view s, std::vector<Define>* defines) {
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
      i = directive_end(s, i, line);
      read_define(s, hash, i, defines, &conditions);
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      i = block_comment_end(s, i, line);
      continue;
    }
    if (c == 'R' && i + 1 < n && s[i + 1] == '"') {
      if (size_t end = raw_string_end(s, i); end != std::string_view::npos) {
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
    size_t start = i;
    Tok kind = Tok::Punct;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      i = number_end(s, i);
      kind = Tok::Number;
    } else if (c == '"' || c == '\'') {
      i = quoted_end(s, i);
      kind = Tok::String;
    } else {
      i += punct_size(s, i);
    }
    out.push_back({kind, s.substr(start, i - start), line});
  }
  return out;
}

}  // namespace mlc::source::detail
