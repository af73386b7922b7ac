// An interpreter's answer kept between runs (query.h: kept_answer): read back only while every
// file it depends on is as it was.
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/cache_file.h"
#include "common/hash.h"
#include "common/paths.h"
#include "python/query.h"

extern char** environ;

namespace mlc::python {
namespace {

constexpr CacheFormat kFormat{.magic = "mlc-python-answer 1\n", .fields = 3};

std::string cache_path(const std::string& cache_dir, const std::string& question) {
  return cache_dir + "/python-answer-" + fnv1a_hex(question) + ".tsv";
}

// The key line of the cache: the whole question, one line (the file name holds only its hash).
std::string key_line(const std::string& question) {
  std::string out;
  for (char c : question) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\0') out += "\\0";
    else out += c;
  }
  return out + '\n';
}

std::vector<std::string> strings(const nlohmann::json& doc, const char* key) {
  std::vector<std::string> out;
  if (doc.contains(key) && doc[key].is_array())
    for (const auto& s : doc[key])
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

// What an answer (`doc`, parsed) depends on: the interpreter and sys.executable (the link and its target),
// pyvenv.cfg beside either, every sys.path entry ("" is the working directory), the user site directory,
// the .pth files and customize modules, and each package's origin and directories. A directory stands for
// its entries: one added or removed changes its mtime. Each is (path, follow symlinks).
std::vector<std::pair<std::string, bool>> witnesses(const std::string& interpreter, const nlohmann::json& doc) {
  std::vector<std::pair<std::string, bool>> out;
  auto add = [&](const std::string& path) {
    if (!path.empty()) out.emplace_back(path, true);
  };
  auto text = [&](const char* key) {
    return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>() : std::string();
  };
  const std::string executable = text("executable"), cwd = current_dir();
  for (const auto& program : {interpreter, executable}) {
    if (program.empty()) continue;
    out.emplace_back(program, false);  // the link itself: a venv made again points it anew
    add(program);
    add(dir_name(program) + "/pyvenv.cfg");
    add(dir_name(dir_name(program)) + "/pyvenv.cfg");
  }
  if (!text("prefix").empty()) add(text("prefix") + "/pyvenv.cfg");
  for (const auto& entry : strings(doc, "path"))
    add(entry.empty() ? cwd : entry[0] == '/' ? entry : join_path(cwd, entry));
  add(text("user_site"));
  for (const char* key : {"pth", "customize"})
    for (const auto& f : strings(doc, key)) add(f);
  if (doc.contains("packages") && doc["packages"].is_object())
    for (const auto& [name, spec] : doc["packages"].items()) {
      if (!spec.is_object()) continue;
      if (spec.contains("origin") && spec["origin"].is_string()) add(spec["origin"].get<std::string>());
      for (const auto& l : strings(spec, "locations")) add(l);
    }
  return out;
}

}  // namespace

std::string answer_question(const std::string& interpreter, const std::string& program) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view v(*e);
    if (v.starts_with("PYTHON") || v.starts_with("PATH=") || v.starts_with("HOME=") ||
        v.starts_with("TORCH_USE_RTLD_GLOBAL="))
      env.emplace_back(v);
  }
  std::sort(env.begin(), env.end());
  std::string q = interpreter + '\0' + program + '\0' + current_dir();
  for (const auto& e : env) q += '\0' + e;
  return q;
}

std::optional<std::string> kept_answer(const std::string& cache_dir, const std::string& question) {
  if (cache_dir.empty()) return std::nullopt;
  std::optional<std::string> answer;
  size_t witnesses = 0;
  const bool read = read_cache_file(cache_path(cache_dir, question), kFormat, key_line(question),
                                    [&](std::span<const std::string_view> f) {
                                      if (f[0] == "A") {
                                        if (answer) return false;
                                        answer = std::string(f[1]);
                                        return true;
                                      }
                                      if (f[0] != "W" && f[0] != "L") return false;
                                      ++witnesses;
                                      return file_identity(std::string(f[1]), f[0] == "W") == f[2];
                                    });
  if (!read || !answer || witnesses == 0) return std::nullopt;
  return answer;
}

void keep_answer(const std::string& cache_dir, const std::string& question, const std::string& interpreter,
                 const std::string& answer) {
  if (cache_dir.empty()) return;
  auto doc = nlohmann::json::parse(answer, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("executable") || !doc["executable"].is_string()) return;
  // A shim (pyenv's) chooses its Python from files no answer names: only the program itself is kept.
  if (real_path(interpreter) != real_path(doc["executable"].get<std::string>())) return;
  std::string line = answer;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  // The cache directory is made first: made inside a witnessed directory (the working directory), it
  // would change that directory's identity after it was taken.
  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  CacheWriter out(kFormat, key_line(question));
  if (!out.add(std::array<std::string_view, 3>{"A", line, ""})) return;
  for (const auto& [path, follow] : witnesses(interpreter, doc)) {
    const std::string id = file_identity(path, follow);
    if (!out.add(std::array<std::string_view, 3>{follow ? "W" : "L", path, id})) return;
  }
  out.write(cache_path(cache_dir, question));
}

}  // namespace mlc::python
