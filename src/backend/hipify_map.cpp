// A small tokenizer for the subset of Python the map is written in (strings, names, numbers,
// brackets, comments), then a recursive-descent reader for its literals. Anything else in the file
// (imports, the rocm_version probe) is skipped token by token.
#include "backend/hipify_map.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/file_io.h"

namespace mlc::backend {
namespace {

enum class Tok { Name, String, Number, Punct, End };

struct Token {
  Tok kind;
  std::string text;  // decoded for strings
  uint32_t line;
};

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

// Errors carry the line; the caller adds the file.
struct ParseError {
  uint32_t line;
  std::string what;
};

std::optional<ParseError> tokenize(std::string_view s, std::vector<Token>& out) {
  uint32_t line = 1;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\\' || c == '\f') {
      ++i;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (name_start(c)) {
      size_t b = i;
      while (i < s.size() && name_char(s[i])) ++i;
      // String prefixes (f"", r"", b""): the prefix belongs to the string that follows.
      bool prefix = i - b <= 2 && i < s.size() && (s[i] == '"' || s[i] == '\'') &&
                    std::all_of(s.begin() + b, s.begin() + i,
                                [](char p) { return std::string_view("rRbBfFuU").find(p) != std::string_view::npos; });
      if (!prefix) out.push_back({Tok::Name, std::string(s.substr(b, i - b)), line});
    } else if (c >= '0' && c <= '9') {
      size_t b = i;
      while (i < s.size() && (name_char(s[i]) || s[i] == '.')) ++i;
      out.push_back({Tok::Number, std::string(s.substr(b, i - b)), line});
    } else if (c == '"' || c == '\'') {
      uint32_t start_line = line;
      bool triple = s.substr(i, 3) == std::string(3, c);
      size_t q = triple ? 3 : 1;
      i += q;
      std::string text;
      for (;;) {
        if (i >= s.size()) return ParseError{start_line, "unterminated string"};
        if (s[i] == '\\' && i + 1 < s.size()) {
          char e = s[i + 1];
          text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
          if (e == '\n') ++line;
          i += 2;
          continue;
        }
        if (!triple && s[i] == '\n') return ParseError{start_line, "unterminated string"};
        if (s[i] == c && (!triple || s.substr(i, 3) == std::string(3, c))) {
          i += q;
          break;
        }
        if (s[i] == '\n') ++line;
        text += s[i++];
      }
      // Adjacent literals concatenate ("a" "b").
      if (!out.empty() && out.back().kind == Tok::String) {
        out.back().text += text;
      } else {
        out.push_back({Tok::String, std::move(text), start_line});
      }
    } else {
      out.push_back({Tok::Punct, std::string(1, c), line});
      ++i;
    }
  }
  out.push_back({Tok::End, "", line});
  return std::nullopt;
}

// A literal: a string, a name (CONV_MEM, HIP_UNSUPPORTED), a number, or a tuple/list of literals.
struct Value {
  enum Kind { Str, Name, Num, Seq } kind = Str;
  std::string text;
  std::vector<Value> items;
  uint32_t line = 0;
};

class Reader {
 public:
  explicit Reader(const std::vector<Token>& t) : t_(t) {}

  const Token& peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  bool at_punct(const char* p) const { return peek().kind == Tok::Punct && peek().text == p; }
  bool at_end() const { return peek().kind == Tok::End; }
  void next() {
    if (!at_end()) ++pos_;
  }
  size_t pos() const { return pos_; }
  void seek(size_t p) { pos_ = p; }

  std::optional<ParseError> expect(const char* p) {
    if (!at_punct(p)) return ParseError{peek().line, std::string("expected '") + p + "', found '" + peek().text + "'"};
    next();
    return std::nullopt;
  }

  // expr := primary [ 'if' ... 'else' expr ]
  std::optional<ParseError> expr(Value& v, int depth = 0) {
    if (depth > 64) return ParseError{peek().line, "literal nested too deeply"};
    if (auto e = primary(v, depth)) return e;
    if (peek().kind == Tok::Name && peek().text == "if") {
      // The condition is skipped (it reads the installed ROCm version); the else branch is taken.
      int nest = 0;
      while (!at_end()) {
        if (peek().kind == Tok::Punct && (peek().text == "(" || peek().text == "[")) ++nest;
        if (peek().kind == Tok::Punct && (peek().text == ")" || peek().text == "]")) --nest;
        if (nest == 0 && peek().kind == Tok::Name && peek().text == "else") break;
        if (nest < 0) return ParseError{peek().line, "conditional without else"};
        next();
      }
      if (at_end()) return ParseError{peek().line, "conditional without else"};
      next();
      v = Value{};
      return expr(v, depth + 1);
    }
    return std::nullopt;
  }

 private:
  std::optional<ParseError> primary(Value& v, int depth) {
    const Token& t = peek();
    v.line = t.line;
    if (t.kind == Tok::String || t.kind == Tok::Name || t.kind == Tok::Number) {
      v.kind = t.kind == Tok::String ? Value::Str : t.kind == Tok::Name ? Value::Name : Value::Num;
      v.text = t.text;
      next();
      return std::nullopt;
    }
    if (t.kind == Tok::Punct && (t.text == "(" || t.text == "[")) {
      const char* close = t.text == "(" ? ")" : "]";
      bool paren = t.text == "(";
      next();
      v.kind = Value::Seq;
      bool comma = false;
      while (!at_punct(close)) {
        if (at_end()) return ParseError{t.line, std::string("unclosed '") + (paren ? "(" : "[") + "'"};
        Value item;
        if (auto e = expr(item, depth + 1)) return e;
        v.items.push_back(std::move(item));
        if (at_punct(",")) {
          comma = true;
          next();
        } else if (!at_punct(close)) {
          return ParseError{peek().line, "expected ',' or '" + std::string(close) + "', found '" + peek().text + "'"};
        }
      }
      next();
      // ("x") is "x", not a tuple.
      if (paren && !comma && v.items.size() == 1) {
        Value inner = std::move(v.items.front());
        v = std::move(inner);
      }
      return std::nullopt;
    }
    return ParseError{t.line, "unexpected '" + t.text + "' in a literal"};
  }

  const std::vector<Token>& t_;
  size_t pos_ = 0;
};

std::string_view family_of(const std::vector<Value>& meta) {
  static const std::unordered_map<std::string_view, std::string_view> families = {
      {"API_RUNTIME", "runtime"}, {"API_DRIVER", "driver"}, {"API_BLAS", "blas"},     {"API_SPARSE", "sparse"},
      {"API_RAND", "rand"},       {"API_FFT", "fft"},       {"API_RTC", "rtc"},       {"API_ROCTX", "roctx"},
      {"API_PYTORCH", "pytorch"}, {"API_C10", "c10"},       {"API_CAFFE2", "caffe2"}, {"API_LAST", "other"},
  };
  for (const auto& m : meta)
    if (m.kind == Value::Name)
      if (auto it = families.find(m.text); it != families.end()) return it->second;
  return "";
}

bool has_name(const std::vector<Value>& meta, std::string_view n) {
  return std::any_of(meta.begin(), meta.end(), [&](const Value& m) { return m.kind == Value::Name && m.text == n; });
}

bool is_identifier(std::string_view s) {
  return !s.empty() && name_start(s[0]) && std::all_of(s.begin(), s.end(), name_char);
}

// A parse error of the map file, as an input error naming its line.
InputError at_line(const std::string& path, const ParseError& e) {
  return InputError{path, "line " + std::to_string(e.line) + ": " + e.what};
}

// NAME = collections.OrderedDict( [ (key, value), ... ] )  and  CUDA_TO_HIP_MAPPINGS = [ NAME, ... ]
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
};

struct Assignments {
  std::unordered_map<std::string, Dict> dicts;
  std::vector<std::string> order;
  bool have_order = false;
};

// The file's OrderedDict assignments and its CUDA_TO_HIP_MAPPINGS list; other statements are skipped.
std::optional<ParseError> read_assignments(const std::vector<Token>& tokens, Assignments& out) {
  Reader r(tokens);
  while (!r.at_end()) {
    if (r.peek().kind != Tok::Name || r.peek(1).kind != Tok::Punct || r.peek(1).text != "=") {
      r.next();
      continue;
    }
    std::string name = r.peek().text;
    size_t after = r.pos() + 2;
    r.seek(after);
    bool ordered_dict = r.peek().kind == Tok::Name && r.peek().text == "collections" &&
                        r.peek(2).text == "OrderedDict" && r.peek(3).text == "(";
    if (ordered_dict) {
      r.seek(after + 4);
      Value list;
      if (auto e = r.expr(list)) return e;
      if (auto e = r.expect(")")) return e;
      if (list.kind != Value::Seq) return ParseError{list.line, name + " is not a list of pairs"};
      Dict d;
      for (auto& item : list.items) {
        if (item.kind != Value::Seq || item.items.size() != 2 || item.items[0].kind != Value::Str)
          return ParseError{item.line, "an entry of " + name + " is not a (\"name\", value) pair"};
        d.entries.emplace_back(std::move(item.items[0]), std::move(item.items[1]));
      }
      out.dicts[name] = std::move(d);
    } else if (name == "CUDA_TO_HIP_MAPPINGS" && r.at_punct("[")) {
      Value list;
      if (auto e = r.expr(list)) return e;
      for (const auto& item : list.items) {
        if (item.kind != Value::Name)
          return ParseError{item.line, "CUDA_TO_HIP_MAPPINGS lists something other than a name"};
        out.order.push_back(item.text);
      }
      out.have_order = true;
    }
  }
  return std::nullopt;
}

// Each CUDA name: its target and metadata, applied in hipify_python.py's order and precedence.
struct Entry {
  std::string target;
  std::string_view family;
  bool unsupported = false;
  bool header = false;
  uint32_t line = 0;
};

// The dicts merged in CUDA_TO_HIP_MAPPINGS order: Caffe2's entries dropped, a sparse entry never
// overriding an earlier one, otherwise the later one winning. `first_seen` keeps the names' order.
std::optional<InputError> merge_entries(const Assignments& a, const std::string& path,
                                        std::unordered_map<std::string, Entry>& entries,
                                        std::vector<std::string>& first_seen) {
  for (const auto& dict_name : a.order) {
    auto it = a.dicts.find(dict_name);
    if (it == a.dicts.end())
      return InputError{path, "CUDA_TO_HIP_MAPPINGS names " + dict_name + ", which is not defined"};
    for (const auto& [key, value] : it->second.entries) {
      std::vector<Value> meta;
      std::string target;
      if (value.kind == Value::Str) {
        target = value.text;
      } else if (value.kind == Value::Seq && !value.items.empty() && value.items[0].kind == Value::Str) {
        target = value.items[0].text;
        meta.assign(value.items.begin() + 1, value.items.end());
      } else {
        return at_line(path, {value.line, "the value for \"" + key.text + "\" has no target name"});
      }
      if (has_name(meta, "API_CAFFE2")) continue;
      auto found = entries.find(key.text);
      if (found != entries.end() && has_name(meta, "API_SPARSE")) continue;
      bool header = has_name(meta, "CONV_INCLUDE") || has_name(meta, "CONV_INCLUDE_CUDA_MAIN_H");
      Entry e{target, family_of(meta), has_name(meta, "HIP_UNSUPPORTED"), header, key.line};
      if (found == entries.end()) first_seen.push_back(key.text);
      entries[key.text] = std::move(e);
    }
  }
  return std::nullopt;
}

// One CUDA name into the map: its info, then a header rename or (for an identifier) the name in both directions.
void add_entry(porting::PortingMap& map, const std::string& cuda, const Entry& e) {
  auto keep = [&](const std::string& s) -> std::string_view { return map.storage.emplace_back(s); };
  std::string_view k = keep(cuda);
  std::string_view v = keep(e.target);
  map.info[k] = porting::ApiInfo{.family = e.family, .unsupported = e.unsupported, .line = e.line};
  if (e.header) {
    map.headers[k] = v;
    return;
  }
  if (!is_identifier(cuda)) return;  // "cuda::CUDAGuard", "define MAX_NUM_BLOCKS 200": text rules
  map.to_musa[k] = v;
  // The inverse keeps a supported entry over an unsupported placeholder, then the runtime name
  // that mirrors the HIP one (hipLaunch: cudaLaunch, not cuLaunch), then the first one.
  auto mirrors = [&](std::string_view cuda_name) {
    return v.size() > 3 && v.substr(0, 3) == "hip" && cuda_name.size() > 4 && cuda_name.substr(0, 4) == "cuda" &&
           cuda_name.substr(4) == v.substr(3);
  };
  auto inv = map.to_cuda.find(v);
  if (inv == map.to_cuda.end()) {
    map.to_cuda[v] = k;
  } else {
    bool old_unsupported = map.info[inv->second].unsupported;
    if (old_unsupported != e.unsupported ? old_unsupported : (mirrors(k) && !mirrors(inv->second))) inv->second = k;
  }
}

}  // namespace

// The passes: tokens, the assignments, the entries merged in the mappings' order, the map.
Result<porting::PortingMap> parse_hipify_map(std::string text, const std::string& path) {
  std::vector<Token> tokens;
  if (auto e = tokenize(text, tokens)) return at_line(path, *e);
  Assignments assignments;
  if (auto e = read_assignments(tokens, assignments)) return at_line(path, *e);
  if (!assignments.have_order) return InputError{path, "no CUDA_TO_HIP_MAPPINGS list: not PyTorch's hipify map"};
  std::unordered_map<std::string, Entry> entries;
  std::vector<std::string> first_seen;
  if (auto e = merge_entries(assignments, path, entries, first_seen)) return *e;
  porting::PortingMap map;
  map.files.push_back(path);
  for (const auto& cuda : first_seen) add_entry(map, cuda, entries.at(cuda));
  return map;
}

Result<porting::PortingMap> load_hipify_map(const std::string& path) {
  auto text = read_text(path);
  if (!text) return InputError{path, "cannot read the hipify map"};
  return parse_hipify_map(std::move(*text), path);
}

Result<porting::PortingMap> load_any_map(const std::string& path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".py") == 0) return load_hipify_map(path);
  return porting::load_mapping(path);
}

}  // namespace mlc::backend
