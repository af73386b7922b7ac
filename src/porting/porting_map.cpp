// Loading uses nlohmann-json's SAX interface: the maps are flat objects, and skipping the DOM keeps
// general.json (23,519 entries) in the low milliseconds.
#include "porting/porting_map.h"

#include "common/paths.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace mlc::porting {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_identifier(std::string_view s) {
  if (s.empty() || is_digit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), is_ident_char);
}

// SAX handler for one flat {"string": "string", ...} object.
struct FlatObject : nlohmann::json_sax<nlohmann::json> {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string pending_key;
  std::string error;
  int depth = 0;

  bool fail(const std::string& what) {
    error = what;
    return false;
  }
  bool null() override { return fail("a value is null, not a string"); }
  bool boolean(bool) override { return fail("a value is a boolean, not a string"); }
  bool number_integer(number_integer_t) override { return fail("a value is a number, not a string"); }
  bool number_unsigned(number_unsigned_t) override { return fail("a value is a number, not a string"); }
  bool number_float(number_float_t, const string_t&) override { return fail("a value is a number, not a string"); }
  bool string(string_t& val) override {
    pairs.emplace_back(std::move(pending_key), std::move(val));
    return true;
  }
  bool binary(binary_t&) override { return fail("unexpected binary value"); }
  bool start_object(std::size_t) override { return ++depth == 1 || fail("nested objects are not a porting map"); }
  bool key(string_t& val) override {
    pending_key = std::move(val);
    return true;
  }
  bool end_object() override {
    --depth;
    return true;
  }
  bool start_array(std::size_t) override { return fail("arrays are not a porting map"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    // nlohmann's whole message, less its "[json.exception.parse_error.101] parse error " prefix:
    // "invalid JSON at line 2, column 1: syntax error while parsing value - unexpected end of input; ..."
    std::string what = ex.what();
    size_t at = what.find("parse error at ");
    error = at != std::string::npos ? "invalid JSON " + what.substr(at + 12)
                                    : "invalid JSON at byte " + std::to_string(position) + ": " + what;
    return false;
  }
};

// The fast path for the common case, a flat object of strings: one pass, no DOM, no callbacks.
// Anything it does not accept goes to nlohmann's parser, whose verdict (and message) stands.
class FlatReader {
 public:
  FlatReader(std::string_view s, std::deque<std::string>& decoded) : s_(s), decoded_(decoded) {}

  bool read(std::vector<std::pair<std::string_view, std::string_view>>& out) {
    ws();
    if (!eat('{')) return false;
    ws();
    if (eat('}')) return end();
    while (true) {
      std::string_view k, v;
      ws();
      if (!str(k)) return false;
      ws();
      if (!eat(':')) return false;
      ws();
      if (!str(v)) return false;
      out.emplace_back(std::move(k), std::move(v));
      ws();
      if (eat(',')) continue;
      if (eat('}')) return end();
      return false;
    }
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool end() {
    ws();
    return i_ == s_.size();
  }
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool u4(uint32_t& cp) {
    if (i_ + 4 > s_.size()) return false;
    cp = 0;
    for (int k = 0; k < 4; ++k) {
      int h = hex(s_[i_++]);
      if (h < 0) return false;
      cp = cp << 4 | static_cast<uint32_t>(h);
    }
    return true;
  }
  static void utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | cp >> 12);
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | cp >> 18);
      out += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool str(std::string_view& view) {
    if (!eat('"')) return false;
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\\' && static_cast<unsigned char>(s_[i_]) >= 0x20) ++i_;
    if (i_ < s_.size() && s_[i_] == '"') {  // no escapes: a view into the text
      view = s_.substr(start, i_ - start);
      ++i_;
      return true;
    }
    std::string out(s_.substr(start, i_ - start));
    if (!decode(out)) return false;
    decoded_.push_back(std::move(out));
    view = decoded_.back();
    return true;
  }
  bool decode(std::string& out) {
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!u4(cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00) {
            uint32_t lo;
            if (!eat('\\') || !eat('u') || !u4(lo) || lo < 0xdc00 || lo >= 0xe000) return false;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            return false;
          }
          utf8(cp, out);
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  std::string_view s_;
  std::deque<std::string>& decoded_;
  size_t i_ = 0;
};

std::optional<InputError> load_file(const std::string& file, bool header_map, PortingMap& map) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return InputError{file, "cannot open porting map"};
  std::string& text = map.storage.emplace_back(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
    return InputError{file, "cannot read porting map"};
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  pairs.reserve(text.size() / 48);
  if (!FlatReader(text, map.storage).read(pairs)) {
    FlatObject sax;
    bool ok = nlohmann::json::sax_parse(text, &sax);
    if (!ok || !sax.error.empty()) return InputError{file, sax.error.empty() ? "invalid JSON" : sax.error};
    pairs.clear();
    for (auto& [k, v] : sax.pairs) {
      map.storage.push_back(std::move(k));
      std::string_view kv = map.storage.back();
      map.storage.push_back(std::move(v));
      pairs.emplace_back(kv, map.storage.back());
    }
  }
  if (!header_map) {
    map.to_musa.reserve(map.to_musa.size() + pairs.size());
    map.to_cuda.reserve(map.to_cuda.size() + pairs.size());
  }
  for (const auto& [k, v] : pairs) {
    if (header_map) {
      map.headers.emplace(k, v);
    } else if (is_identifier(k) && is_identifier(v)) {
      map.to_cuda.emplace(v, k);
      map.to_musa.emplace(k, v);
    }
  }
  map.files.push_back(file);
  return std::nullopt;
}

bool is_header_map(const std::string& name) {
  return name.rfind("include", 0) == 0 || name.find("header") != std::string::npos;
}

}  // namespace

Result<PortingMap> load_mapping(const std::string& path) {
  PortingMap map;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return InputError{path, "cannot open porting map: no such file or directory"};
  if (!S_ISDIR(st.st_mode)) {
    std::string base = path.substr(path.rfind('/') + 1);
    if (auto err = load_file(path, is_header_map(base), map)) return *err;
    return map;
  }
  std::vector<std::string> names;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* de = readdir(d)) {
      std::string n = de->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) return InputError{path, "no *.json porting map in this directory"};
  for (const auto& n : names) {
    if (auto err = load_file(path + "/" + n, is_header_map(n), map)) return *err;
  }
  return map;
}

std::string map_identifiers(std::string_view text, const NameMap& map) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (is_ident_char(text[i]) && !is_digit(text[i])) {
      size_t start = i;
      while (i < text.size() && is_ident_char(text[i])) ++i;
      std::string_view word = text.substr(start, i - start);
      auto it = map.find(word);
      out += it == map.end() ? word : it->second;
    } else if (is_ident_char(text[i])) {  // a number: copy it whole
      while (i < text.size() && is_ident_char(text[i])) out += text[i++];
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string to_cuda_name(std::string_view ported_name, const PortingMap& map, const PortNaming& naming) {
  std::string out = map_identifiers(ported_name, map.to_cuda);
  // "namespace musa {" was "namespace cuda {": a scope component named like the backend goes back.
  const std::string& scope = naming.scope;
  if (scope.empty()) return out;
  std::string result;
  size_t i = 0;
  while (i < out.size()) {
    if (out.compare(i, scope.size(), scope) == 0 && (i == 0 || !is_ident_char(out[i - 1])) &&
        (i + scope.size() >= out.size() || !is_ident_char(out[i + scope.size()])) &&
        out.compare(i + scope.size(), 2, "::") == 0) {
      result += "cuda";
      i += scope.size();
    } else {
      result += out[i++];
    }
  }
  return result;
}

std::string ported_path(std::string_view original, const PortNaming& naming) {
  std::string dir, file;
  size_t slash = original.rfind('/');
  if (slash != std::string_view::npos) {
    dir = std::string(original.substr(0, slash + 1));
    file = std::string(original.substr(slash + 1));
  } else {
    file = std::string(original);
  }
  auto replace_all = [](std::string& s, std::string_view from, std::string_view to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
      s.replace(p, from.size(), to);
  };
  replace_all(dir, "cuda", naming.scope);
  for (const auto& [from, to] : naming.extensions) {
    if (file.size() > from.size() && file.compare(file.size() - from.size(), from.size(), from) == 0) {
      file.replace(file.size() - from.size(), from.size(), to);
      break;
    }
  }
  replace_all(file, "CUDA", naming.upper);
  replace_all(file, "cuda", naming.scope);
  return dir + file;
}

}  // namespace mlc::porting
