// A Python tokenizer small enough for setup.py's calls: strings (prefixes, triple quotes), comments,
// names and brackets; then each Extension/CppExtension/CUDAExtension call's name and sources arguments.
#include "setuptools/setup_py.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include <sys/stat.h>

#include "common/file_io.h"
#include "common/paths.h"

namespace mlc::setuptools {
namespace {

enum class Tok { Name, String, Punct, End };

struct Token {
  Tok kind = Tok::End;
  size_t begin = 0, end = 0;
  std::string text;   // a name, a punctuation character, or a string's value
  bool plain = true;  // a string: no f prefix (its value is what it spells)
  char quote = '"';
};

class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}

  std::vector<Token> all() {
    std::vector<Token> out;
    for (;;) {
      Token t = next();
      if (t.kind == Tok::End) break;
      out.push_back(std::move(t));
    }
    return out;
  }

 private:
  Token next() {
    skip_space();
    Token t;
    t.begin = i_;
    if (i_ >= s_.size()) return t;
    size_t prefix = 0;
    while (prefix < 2 && i_ + prefix < s_.size() && std::strchr("rRbBuUfF", s_[i_ + prefix])) ++prefix;
    if (i_ + prefix < s_.size() && (s_[i_ + prefix] == '"' || s_[i_ + prefix] == '\'') &&
        (prefix == 0 || !is_ident_char(s_[i_ + prefix - 1]) || std::strchr("rRbBuUfF", s_[i_ + prefix - 1]))) {
      return string_token(prefix);
    }
    if (is_ident_start(s_[i_])) {
      while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
      t.kind = Tok::Name;
    } else {
      ++i_;
      t.kind = Tok::Punct;
    }
    t.end = i_;
    t.text = s_.substr(t.begin, t.end - t.begin);
    return t;
  }

  void skip_space() {
    while (i_ < s_.size()) {
      if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (std::isspace(static_cast<unsigned char>(s_[i_])) || s_[i_] == '\\') {
        ++i_;
      } else {
        break;
      }
    }
  }

  Token string_token(size_t prefix) {
    Token t;
    t.kind = Tok::String;
    t.begin = i_;
    std::string p = s_.substr(i_, prefix);
    bool raw = p.find_first_of("rR") != std::string::npos;
    t.plain = p.find_first_of("fF") == std::string::npos;
    i_ += prefix;
    char q = s_[i_];
    t.quote = q;
    bool triple = s_.compare(i_, 3, std::string(3, q)) == 0;
    i_ += triple ? 3 : 1;
    while (i_ < s_.size()) {
      if (triple ? s_.compare(i_, 3, std::string(3, q)) == 0 : s_[i_] == q) {
        i_ += triple ? 3 : 1;
        break;
      }
      if (!triple && s_[i_] == '\n') break;  // unterminated: the line ends it
      if (s_[i_] == '\\' && i_ + 1 < s_.size() && !raw) {
        char c = s_[i_ + 1];
        t.text += c == 'n' ? '\n' : c == 't' ? '\t' : c;
        i_ += 2;
        continue;
      }
      t.text += s_[i_++];
    }
    t.end = i_;
    return t;
  }

  const std::string& s_;
  size_t i_ = 0;
};

uint32_t line_at(const std::string& text, size_t offset) {
  uint32_t n = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) n += text[i] == '\n';
  return n;
}

bool is_punct(const Token& t, char c) { return t.kind == Tok::Punct && t.text.size() == 1 && t.text[0] == c; }

// One argument of a call: its keyword ("" for a positional one) and its tokens [first, last).
struct Argument {
  std::string keyword;
  size_t first = 0, last = 0;
};

// The arguments of the call whose '(' is toks[open]; `close` gets the index of its ')'.
std::vector<Argument> arguments(const std::vector<Token>& toks, size_t open, size_t& close) {
  std::vector<Argument> out;
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open + 1; i < toks.size(); ++i) {
    const Token& t = toks[i];
    if (is_punct(t, '(') || is_punct(t, '[') || is_punct(t, '{')) ++depth;
    bool closing = is_punct(t, ')') || is_punct(t, ']') || is_punct(t, '}');
    if ((closing && depth == 0) || (is_punct(t, ',') && depth == 0)) {
      if (i > start) {
        Argument a{.keyword = "", .first = start, .last = i};
        if (i - start >= 2 && toks[start].kind == Tok::Name && is_punct(toks[start + 1], '=') &&
            !(i - start > 2 && is_punct(toks[start + 2], '='))) {
          a.keyword = toks[start].text;
          a.first = start + 2;
        }
        out.push_back(a);
      }
      start = i + 1;
      if (closing) {
        close = i;
        return out;
      }
      continue;
    }
    if (closing) --depth;
  }
  close = toks.size();
  return out;
}

// The sources argument as a literal list of strings, or why it is not one.
void read_sources(const std::vector<Token>& toks, const Argument& a, const std::string& text, ExtensionDecl& ext) {
  if (a.last - a.first == 1 && toks[a.first].kind == Tok::Name) {
    ext.not_literal = "sources= is the variable " + toks[a.first].text + ", not a literal list";
    return;
  }
  if (!is_punct(toks[a.first], '[') || !is_punct(toks[a.last - 1], ']')) {
    ext.not_literal = "sources= is an expression, not a literal list";
    return;
  }
  for (size_t i = a.first + 1; i + 1 < a.last; ++i) {
    const Token& t = toks[i];
    if (is_punct(t, ',')) continue;
    const bool alone = i + 2 >= a.last || is_punct(toks[i + 1], ',');  // the element is this one token
    if (t.kind != Tok::String || !t.plain || !alone) {
      // The element, up to the list's next comma at its own depth.
      size_t end = i;
      for (int depth = 0; end + 1 < a.last; ++end) {
        if (depth == 0 && is_punct(toks[end], ',')) break;
        if (is_punct(toks[end], '(') || is_punct(toks[end], '[') || is_punct(toks[end], '{')) ++depth;
        if (is_punct(toks[end], ')') || is_punct(toks[end], ']') || is_punct(toks[end], '}')) --depth;
      }
      ext.sources.clear();
      ext.not_literal =
          "sources= holds " + text.substr(t.begin, toks[end - 1].end - t.begin) + ", not only string literals";
      return;
    }
    ext.sources.push_back({.value = t.text, .line = line_at(text, t.begin), .begin = t.begin, .end = t.end});
  }
  ext.literal_sources = true;
  ext.list_begin = toks[a.first].begin;
  ext.list_end = toks[a.last - 1].end;
}

}  // namespace

Result<SetupPy> read_setup_py(const std::string& path) {
  auto text = read_text(path);
  if (!text) return InputError{path, std::string("cannot read: ") + std::strerror(errno)};
  return parse_setup_py(path, std::move(*text));
}

SetupPy parse_setup_py(const std::string& path, std::string text) {
  SetupPy setup{.path = path, .text = std::move(text), .extensions = {}};
  const std::vector<Token> toks = Lexer(setup.text).all();
  static const std::set<std::string> kinds = {"Extension", "CppExtension", "CUDAExtension"};
  for (size_t i = 0; i + 1 < toks.size(); ++i) {
    if (toks[i].kind != Tok::Name || !kinds.count(toks[i].text) || !is_punct(toks[i + 1], '(')) continue;
    if (i > 0 && toks[i - 1].kind == Tok::Name && (toks[i - 1].text == "class" || toks[i - 1].text == "def")) continue;
    ExtensionDecl ext;
    ext.kind = toks[i].text;
    ext.line = line_at(setup.text, toks[i].begin);
    size_t close = 0;
    auto args = arguments(toks, i + 1, close);
    const Argument* name = nullptr;
    const Argument* sources = nullptr;
    size_t positional = 0;
    for (const auto& a : args) {
      if (a.keyword.empty()) {
        if (positional == 0) name = &a;
        if (positional == 1) sources = &a;
        ++positional;
      } else if (a.keyword == "name") {
        name = &a;
      } else if (a.keyword == "sources") {
        sources = &a;
      }
    }
    if (name && name->last - name->first == 1 && toks[name->first].kind == Tok::String && toks[name->first].plain)
      ext.name = toks[name->first].text;
    if (sources) read_sources(toks, *sources, setup.text, ext);
    else ext.not_literal = "the call has no sources= argument";
    setup.extensions.push_back(std::move(ext));
  }
  return setup;
}

const ExtensionDecl* extension_for(const SetupPy& setup, const std::string& module) {
  std::string leaf = base_name(module);
  leaf = leaf.substr(0, leaf.find('.'));
  const std::string stem = dir_name(module) + "/" + leaf;
  for (const auto& ext : setup.extensions) {
    if (ext.name.empty()) continue;
    std::string rel = ext.name;
    for (auto& c : rel) c = c == '.' ? '/' : c;
    if (stem == dir_name(setup.path) + "/" + rel || stem.ends_with("/" + rel)) return &ext;
  }
  return nullptr;
}

std::optional<ExtensionSite> find_extension(const std::string& module, const std::string& near) {
  for (const std::string& from : {dir_name(module), near.empty() ? std::string() : dir_name(near)}) {
    std::string dir = from;
    for (int up = 0; up <= 8 && !dir.empty(); ++up) {
      const std::string candidate = (dir == "/" ? "" : dir) + "/setup.py";
      struct stat st;
      if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        if (auto setup = read_setup_py(candidate)) {
          if (const ExtensionDecl* ext = extension_for(*setup, module)) {
            const size_t index = static_cast<size_t>(ext - setup->extensions.data());
            return ExtensionSite{std::move(*setup), index};
          }
        }
      }
      if (dir == "/") break;
      dir = dir_name(dir);
    }
  }
  return std::nullopt;
}

std::string entry_for(const SetupPy& setup, const std::string& file) {
  const std::string dir = dir_name(setup.path) + "/";
  return file.rfind(dir, 0) == 0 ? file.substr(dir.size()) : file;
}

std::optional<std::string> with_source_added(const SetupPy& setup, const ExtensionDecl& ext, const std::string& entry) {
  if (!ext.literal_sources) return std::nullopt;
  const std::string& t = setup.text;
  char quote = ext.sources.empty() ? '"' : t[ext.sources.back().end - 1];
  std::string literal = std::string(1, quote) + entry + std::string(1, quote);
  if (ext.sources.empty()) return t.substr(0, ext.list_begin + 1) + literal + t.substr(ext.list_begin + 1);
  const SourceEntry& last = ext.sources.back();
  // After the last entry: past its trailing comma, if it has one.
  size_t at = last.end;
  while (at < ext.list_end && (t[at] == ' ' || t[at] == '\t')) ++at;
  const bool trailing_comma = at < t.size() && t[at] == ',';
  const bool one_per_line = last.line > line_at(t, ext.list_begin);
  if (!one_per_line) return t.substr(0, last.end) + ", " + literal + t.substr(last.end);
  size_t line_start = t.rfind('\n', last.begin);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  size_t indent_end = line_start;
  while (indent_end < last.begin && (t[indent_end] == ' ' || t[indent_end] == '\t')) ++indent_end;
  const std::string indent = t.substr(line_start, indent_end - line_start);
  if (trailing_comma) return t.substr(0, at + 1) + "\n" + indent + literal + "," + t.substr(at + 1);
  return t.substr(0, last.end) + ",\n" + indent + literal + t.substr(last.end);
}

}  // namespace mlc::setuptools
