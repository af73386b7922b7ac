// Loading uses nlohmann-json's SAX interface: the maps are flat objects, and skipping the DOM keeps
// general.json (23,519 entries) in the low milliseconds.
#include "porting/porting_map.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace mlc::porting {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), ident_char);
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
    error = "invalid JSON at byte " + std::to_string(position) + ": " + std::string(ex.what()).substr(0, 120);
    return false;
  }
};

std::optional<InputError> load_file(const std::string& file, bool header_map, PortingMap& map) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return InputError{file, "cannot open porting map"};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  FlatObject sax;
  bool ok = nlohmann::json::sax_parse(text, &sax);
  if (!ok || !sax.error.empty()) return InputError{file, sax.error.empty() ? "invalid JSON" : sax.error};
  for (auto& [k, v] : sax.pairs) {
    if (header_map) {
      map.headers.emplace(std::move(k), std::move(v));
    } else if (is_identifier(k) && is_identifier(v)) {
      map.to_cuda.emplace(v, k);
      map.to_musa.emplace(std::move(k), std::move(v));
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

std::string map_identifiers(std::string_view text, const std::unordered_map<std::string, std::string>& map) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (ident_char(text[i]) && !std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t start = i;
      while (i < text.size() && ident_char(text[i])) ++i;
      std::string word(text.substr(start, i - start));
      auto it = map.find(word);
      out += it == map.end() ? word : it->second;
    } else if (ident_char(text[i])) {  // a number: copy it whole
      while (i < text.size() && ident_char(text[i])) out += text[i++];
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string to_cuda_name(std::string_view musa_name, const PortingMap& map) {
  std::string out = map_identifiers(musa_name, map.to_cuda);
  // "namespace musa {" was "namespace cuda {": a scope component named musa goes back.
  std::string result;
  size_t i = 0;
  while (i < out.size()) {
    if (out.compare(i, 4, "musa") == 0 && (i == 0 || !ident_char(out[i - 1])) &&
        (i + 4 >= out.size() || !ident_char(out[i + 4])) && out.compare(i + 4, 2, "::") == 0) {
      result += "cuda";
      i += 4;
    } else {
      result += out[i++];
    }
  }
  return result;
}

std::string ported_path(std::string_view original) {
  std::string dir, file;
  size_t slash = original.rfind('/');
  if (slash != std::string_view::npos) {
    dir = std::string(original.substr(0, slash + 1));
    file = std::string(original.substr(slash + 1));
  } else {
    file = std::string(original);
  }
  auto replace_all = [](std::string& s, std::string_view from, std::string_view to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  };
  replace_all(dir, "cuda", "musa");
  if (file.size() > 3 && file.compare(file.size() - 3, 3, ".cu") == 0) file.replace(file.size() - 3, 3, ".mu");
  else if (file.size() > 4 && file.compare(file.size() - 4, 4, ".cuh") == 0) file.replace(file.size() - 4, 4, ".muh");
  replace_all(file, "CUDA", "MUSA");
  replace_all(file, "cuda", "musa");
  return dir + file;
}

bool is_port_of(std::string_view ported, std::string_view original) { return ported_path(original) == ported; }

}  // namespace mlc::porting
