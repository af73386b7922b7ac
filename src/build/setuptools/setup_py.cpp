// A Python tokenizer small enough for setup.py's calls: strings (prefixes, triple quotes), comments,
// names and brackets; then each Extension/CppExtension/CUDAExtension call's name and sources arguments.
#include "build/setuptools/setup_py.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include <fnmatch.h>
#include <sys/stat.h>

#include "common/file_io.h"
#include "common/paths.h"

namespace mlc::build::setuptools {
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

bool opens(const Token& t) { return is_punct(t, '(') || is_punct(t, '[') || is_punct(t, '{'); }
bool closes(const Token& t) { return is_punct(t, ')') || is_punct(t, ']') || is_punct(t, '}'); }

// The index of the bracket that closes toks[open] (toks.size() when none does, or toks[open] opens none).
size_t closing(const std::vector<Token>& toks, size_t open) {
  if (open >= toks.size() || !opens(toks[open])) return toks.size();
  int depth = 0;
  for (size_t i = open; i < toks.size(); ++i) {
    if (opens(toks[i])) ++depth;
    if (closes(toks[i]) && --depth == 0) return i;
  }
  return toks.size();
}

// The comma-separated elements of toks[first, last), each as a token range; a trailing comma makes none.
std::vector<std::pair<size_t, size_t>> elements(const std::vector<Token>& toks, size_t first, size_t last) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t start = first;
  int depth = 0;
  for (size_t i = first; i <= last; ++i) {
    if (i == last || (depth == 0 && is_punct(toks[i], ','))) {
      if (i > start) out.emplace_back(start, i);
      start = i + 1;
      continue;
    }
    if (opens(toks[i])) ++depth;
    if (closes(toks[i])) --depth;
  }
  return out;
}

bool is_literal(const std::vector<Token>& toks, std::pair<size_t, size_t> e) {
  return e.second - e.first == 1 && toks[e.first].kind == Tok::String && toks[e.first].plain;
}

std::string text_of(const std::vector<Token>& toks, const std::string& text, size_t first, size_t last) {
  return text.substr(toks[first].begin, toks[last - 1].end - toks[first].begin);
}

// glob.glob("pattern"[, recursive=True]) or glob(...), possibly inside sorted(...) or list(...).
std::optional<GlobCall> glob_call(const std::vector<Token>& toks, const std::string& text, size_t first, size_t last) {
  const std::string written = text_of(toks, text, first, last);
  while (last - first > 3 && toks[first].kind == Tok::Name &&
         (toks[first].text == "sorted" || toks[first].text == "list") && is_punct(toks[first + 1], '(') &&
         closing(toks, first + 1) == last - 1) {
    first += 2;
    --last;
  }
  size_t open = first + 1;
  if (last - first > 3 && toks[first].text == "glob" && is_punct(toks[first + 1], '.') &&
      toks[first + 2].text == "glob")
    open = first + 3;
  if (toks[first].kind != Tok::Name || toks[first].text != "glob" || open >= last || !is_punct(toks[open], '(') ||
      closing(toks, open) != last - 1)
    return std::nullopt;
  const auto args = elements(toks, open + 1, last - 1);
  if (args.empty() || !is_literal(toks, args[0])) return std::nullopt;
  GlobCall call{.text = written, .pattern = toks[args[0].first].text, .recursive = false};
  for (size_t k = 1; k < args.size(); ++k) {
    const auto [b, e] = args[k];
    if (e - b == 3 && toks[b].text == "recursive" && is_punct(toks[b + 1], '=') && toks[b + 2].text == "True")
      call.recursive = true;
    else return std::nullopt;  // root_dir=, a second pattern: not what the pattern alone says
  }
  return call;
}

// An element <name>.join(<dir>, "a", "b.cpp"): os.path.join, osp.join, path.join, join.
std::optional<JoinEntry> join_entry(const std::vector<Token>& toks, const std::string& text, size_t first,
                                    size_t last) {
  size_t open = first;
  while (open + 1 < last && toks[open].kind == Tok::Name && is_punct(toks[open + 1], '.')) open += 2;
  if (open + 1 >= last || toks[open].kind != Tok::Name || toks[open].text != "join" || !is_punct(toks[open + 1], '(') ||
      closing(toks, open + 1) != last - 1)
    return std::nullopt;
  JoinEntry join{.callee = text_of(toks, text, first, open + 1), .dir_args = "", .tail = {}, .quote = '"'};
  const auto args = elements(toks, open + 2, last - 1);
  size_t literal_from = args.size();
  while (literal_from > 0 && is_literal(toks, args[literal_from - 1])) --literal_from;
  if (literal_from == args.size()) return std::nullopt;  // no file name among its arguments
  if (literal_from > 0) join.dir_args = text_of(toks, text, args.front().first, args[literal_from - 1].second);
  for (size_t k = literal_from; k < args.size(); ++k) join.tail.push_back(toks[args[k].first].text);
  join.quote = toks[args.back().first].quote;
  return join;
}

// The sources in toks[first, last) (what=: "sources=" or the variable holding them) as a literal list
// or tuple of strings, or why they are not one and, where it tells the user what to write, what they are.
void read_sources(const std::vector<Token>& toks, size_t first, size_t last, const std::string& text,
                  const std::string& what, ExtensionDecl& ext) {
  const bool bracketed = last - first >= 2 && closing(toks, first) == last - 1;
  const bool list = bracketed && is_punct(toks[first], '[');
  const auto items = bracketed ? elements(toks, first + 1, last - 1) : decltype(elements(toks, 0, 0)){};
  // A parenthesised string is no tuple: a tuple has a comma, or nothing.
  bool tuple = bracketed && is_punct(toks[first], '(') && (items.empty() || items.size() > 1);
  if (!tuple && bracketed && is_punct(toks[first], '(') && items.size() == 1) tuple = is_punct(toks[last - 2], ',');
  if (!list && !tuple) {
    ext.glob = glob_call(toks, text, first, last);
    ext.not_literal = what + " is " + (ext.glob ? ext.glob->text : "an expression") + ", not a literal list";
    return;
  }
  for (const auto& e : items) {
    if (is_literal(toks, e)) continue;
    for (const auto& j : items)
      if (auto join = join_entry(toks, text, j.first, j.second)) ext.joins.push_back(std::move(*join));
    if (ext.joins.size() != items.size()) ext.joins.clear();  // not only os.path.join(...) calls
    ext.not_literal = what + " holds " + text_of(toks, text, e.first, e.second) + ", not only string literals";
    return;
  }
  for (const auto& e : items) {
    const Token& t = toks[e.first];
    ext.sources.push_back({.value = t.text, .line = line_at(text, t.begin), .begin = t.begin, .end = t.end});
  }
  ext.literal_sources = true;
  ext.list_begin = toks[first].begin;
  ext.list_end = toks[last - 1].end;
}

bool at_line_start(const std::string& text, size_t at) { return at == 0 || text[at - 1] == '\n'; }

// The end of the statement whose value starts at toks[from]: the first token at bracket depth 0 on a
// later line (a backslash continues a line), or a ';'.
size_t statement_end(const std::vector<Token>& toks, const std::string& text, size_t from) {
  int depth = 0;
  for (size_t i = from; i < toks.size(); ++i) {
    if (i > from && depth == 0) {
      if (is_punct(toks[i], ';')) return i;
      const std::string gap = text.substr(toks[i - 1].end, toks[i].begin - toks[i - 1].end);
      const size_t nl = gap.find('\n');
      if (nl != std::string::npos && gap.find('\\') > nl) return i;
    }
    if (opens(toks[i])) ++depth;
    if (closes(toks[i])) --depth;
  }
  return toks.size();
}

// sources=NAME: the value NAME is bound to, read as the sources, when it is bound once, by an assignment
// at module level (no indentation), and never changed in place; else why it is not edited there. An
// assignment in a block or a second one could make the list another at run time.
void read_variable(const std::vector<Token>& toks, const std::string& text, const std::string& name,
                   ExtensionDecl& ext) {
  static const std::set<std::string> mutators = {"append", "extend", "insert", "remove", "pop", "clear"};
  const std::string what = "sources= is the variable " + name;
  size_t bound_at = toks.size();
  int bindings = 0;
  std::string changed;
  int depth = 0;
  for (size_t j = 0; j < toks.size(); ++j) {
    const Token& t = toks[j];
    if (opens(t)) ++depth;
    if (closes(t)) --depth;
    if (t.kind != Tok::Name || t.text != name || (j > 0 && is_punct(toks[j - 1], '.'))) continue;
    const Token* next = j + 1 < toks.size() ? &toks[j + 1] : nullptr;
    const Token* after = j + 2 < toks.size() ? &toks[j + 2] : nullptr;
    const bool keyword_argument = depth > 0 && j > 0 && (is_punct(toks[j - 1], '(') || is_punct(toks[j - 1], ','));
    if (next && is_punct(*next, '=') && !(after && is_punct(*after, '=')) && !keyword_argument) {
      ++bindings;
      bound_at = at_line_start(text, t.begin) ? j : toks.size();
    } else if (next && after && next->kind == Tok::Punct && std::strchr("+-*|", next->text[0]) &&
               is_punct(*after, '=') && after->begin == next->end) {
      changed = name + " " + next->text + "=";
    } else if (next && after && is_punct(*next, '.') && mutators.count(after->text)) {
      changed = name + "." + after->text;
    } else if (j > 0 && (toks[j - 1].text == "for" || toks[j - 1].text == "as" || toks[j - 1].text == "global")) {
      ++bindings;
    }
  }
  if (bindings != 1) {
    ext.not_literal = what + ", assigned " + std::to_string(bindings) + " times, not a literal list";
    return;
  }
  if (!changed.empty()) {
    ext.not_literal = what + ", changed by " + changed + ", not a literal list";
    return;
  }
  if (bound_at == toks.size()) {
    ext.not_literal = what + ", assigned inside a block, not a literal list";
    return;
  }
  read_sources(toks, bound_at + 2, statement_end(toks, text, bound_at + 2), text, name, ext);
  if (ext.literal_sources) {
    ext.variable = name;
    ext.variable_line = line_at(text, toks[bound_at].begin);
  }
}

}  // namespace

Result<SetupPy> read_setup_py(const std::string& path) {
  auto text = read_text(path);
  if (!text) return InputError{path, std::string("cannot read: ") + std::strerror(errno)};
  return parse_setup_py(path, std::move(*text));
}

std::string_view to_string(ExtensionKind kind) {
  switch (kind) {
    case ExtensionKind::Extension: return "Extension";
    case ExtensionKind::CppExtension: return "CppExtension";
    case ExtensionKind::CUDAExtension: return "CUDAExtension";
  }
  return "Extension";
}

SetupPy parse_setup_py(const std::string& path, std::string text) {
  SetupPy setup{.path = path, .text = std::move(text), .extensions = {}};
  const std::vector<Token> toks = Lexer(setup.text).all();
  auto kind_of = [](const std::string& callee) -> std::optional<ExtensionKind> {
    for (auto k : {ExtensionKind::Extension, ExtensionKind::CppExtension, ExtensionKind::CUDAExtension})
      if (callee == to_string(k)) return k;
    return std::nullopt;
  };
  for (size_t i = 0; i + 1 < toks.size(); ++i) {
    const auto kind = toks[i].kind == Tok::Name ? kind_of(toks[i].text) : std::nullopt;
    if (!kind || !is_punct(toks[i + 1], '(')) continue;
    if (i > 0 && toks[i - 1].kind == Tok::Name && (toks[i - 1].text == "class" || toks[i - 1].text == "def")) continue;
    ExtensionDecl ext;
    ext.kind = *kind;
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
    if (!sources) ext.not_literal = "the call has no sources= argument";
    else if (sources->last - sources->first == 1 && toks[sources->first].kind == Tok::Name)
      read_variable(toks, setup.text, toks[sources->first].text, ext);
    else read_sources(toks, sources->first, sources->last, setup.text, "sources=", ext);
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
  const bool tuple = t[ext.list_begin] == '(';
  char quote = ext.sources.empty() ? '"' : t[ext.sources.back().end - 1];
  std::string literal = std::string(1, quote) + entry + std::string(1, quote);
  // ("x.c") is a string, not a tuple: a tuple's only element takes a comma.
  if (ext.sources.empty())
    return t.substr(0, ext.list_begin + 1) + literal + (tuple ? "," : "") + t.substr(ext.list_begin + 1);
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
  // A comment after the last entry stays on its line: the new entry goes on the next one. Anything
  // else there (the closing bracket) keeps the entry on the last entry's line's end.
  size_t rest = trailing_comma ? at + 1 : last.end;
  while (rest < t.size() && (t[rest] == ' ' || t[rest] == '\t')) ++rest;
  const bool line_ends = rest < t.size() && (t[rest] == '#' || t[rest] == '\n');
  const size_t line_end = line_ends ? t.find('\n', rest) : std::string::npos;
  if (trailing_comma) {
    if (line_end != std::string::npos)
      return t.substr(0, line_end) + "\n" + indent + literal + "," + t.substr(line_end);
    return t.substr(0, at + 1) + "\n" + indent + literal + "," + t.substr(at + 1);
  }
  if (line_end != std::string::npos)
    return t.substr(0, last.end) + "," + t.substr(last.end, line_end - last.end) + "\n" + indent + literal +
           t.substr(line_end);
  return t.substr(0, last.end) + ",\n" + indent + literal + t.substr(last.end);
}

HandEdit hand_edit(const SetupPy& setup, const ExtensionDecl& ext, const std::string& file) {
  const std::string dir = dir_name(setup.path);
  const std::string rel = entry_for(setup, file);
  if (ext.glob) {
    // glob.glob: '*' stops at '/', and matches no leading '.'; "**" crosses directories when recursive.
    std::string pattern = ext.glob->pattern;
    if (pattern.rfind("./", 0) == 0) pattern = pattern.substr(2);
    const bool crosses = ext.glob->recursive && pattern.find("**") != std::string::npos;
    const std::string& name = pattern.starts_with("/") ? file : rel;
    bool matches = fnmatch(pattern.c_str(), name.c_str(), (crosses ? 0 : FNM_PATHNAME) | FNM_PERIOD) == 0;
    // "**/" also matches no directory at all (csrc/**/*.cpp takes csrc/a.cpp).
    for (size_t at; crosses && !matches && (at = pattern.find("**/")) != std::string::npos;) {
      pattern.erase(at, 3);
      matches = fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0;
    }
    return {.kind = matches ? HandEdit::Kind::GlobCovers : HandEdit::Kind::GlobMisses,
            .glob = ext.glob->text,
            .expression = ""};
  }
  if (ext.joins.empty()) return {};
  const JoinEntry& first = ext.joins.front();
  bool split = false;
  for (const auto& j : ext.joins) {
    if (j.dir_args != first.dir_args) return {};  // no one directory expression to write
    split = split || j.tail.size() > 1;
  }
  // The directory the expression stands for: setup.py's (setuptools runs there) for literals alone,
  // else the nearest directory above the file under which every sibling's file exists.
  std::string base = first.dir_args.empty() ? dir : "";
  for (std::string a = dir_name(file); base.empty() && a.size() > 1; a = dir_name(a)) {
    bool all = true;
    for (const auto& j : ext.joins) {
      std::string path = a;
      for (const auto& part : j.tail) path += "/" + part;
      struct stat st;
      all = all && stat(path.c_str(), &st) == 0;
    }
    if (all) base = a;
  }
  if (base.empty() || !file.starts_with(base + "/")) return {};
  std::vector<std::string> parts;
  const std::string below = file.substr(base.size() + 1);
  if (!split) {
    parts.push_back(below);
  } else {
    for (size_t from = 0, slash = 0; slash != std::string::npos; from = slash + 1) {
      slash = below.find('/', from);
      parts.push_back(below.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
    }
  }
  std::string expression = first.callee + "(" + first.dir_args;
  for (size_t k = 0; k < parts.size(); ++k)
    expression += (k == 0 && first.dir_args.empty() ? "" : ", ") + std::string(1, first.quote) + parts[k] +
                  std::string(1, first.quote);
  return {.kind = HandEdit::Kind::JoinEntry, .glob = "", .expression = expression + ")"};
}

}  // namespace mlc::build::setuptools
