// compile_commands.json, as the build wrote it: each translation unit's working directory, argv and
// absolute file. The confirm pass compiles with these commands; the source index takes their -D/-U.
#include <fstream>

#include <nlohmann/json.hpp>

#include "cmake/build_info.h"
#include "cmake/command_line.h"

namespace mlc::cmake {
// compile_commands.json's "command" is a shell string; only quoting and backslashes matter here.
std::vector<std::string> split_command(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool any = false;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < s.size()) cur += s[++i];
      else cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      any = true;
    } else if (c == '\\' && i + 1 < s.size()) {
      cur += s[++i];
      any = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (any || !cur.empty()) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

std::string absolute_in(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return cmake::normalize_path(path);
  return cmake::normalize_path(dir + "/" + path);
}

std::vector<CompileCommand> read_compile_commands(const std::string& build_dir) {
  std::vector<CompileCommand> out;
  if (build_dir.empty()) return out;
  std::ifstream in(build_dir + "/compile_commands.json");
  if (!in) return out;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("file") || !e["file"].is_string()) continue;
    CompileCommand c;
    c.directory = e.value("directory", build_dir);
    c.file = absolute_in(c.directory, e["file"].get<std::string>());
    if (e.contains("arguments") && e["arguments"].is_array()) {
      for (const auto& a : e["arguments"])
        if (a.is_string()) c.argv.push_back(a.get<std::string>());
    } else if (e.contains("command") && e["command"].is_string()) {
      c.argv = split_command(e["command"].get<std::string>());
    }
    if (!c.argv.empty()) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace mlc::cmake
