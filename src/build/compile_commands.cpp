// compile_commands.json, as the build wrote it: each translation unit's working directory, argv and
// absolute file. The confirm pass compiles with these commands; the source index takes their -D/-U.
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "build/command_line.h"
#include "build/model.h"
#include "common/file_io.h"
#include "common/kept_file.h"
#include "common/paths.h"

namespace mlc::build {
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

bool is_nvcc(const std::string& compiler) { return base_name(compiler).starts_with("nvcc"); }

bool nvcc_takes_value(std::string_view a) {
  static const std::set<std::string_view> options = {"-Xcompiler", "--compiler-options",
                                                     "-Xlinker",   "--linker-options",
                                                     "-Xptxas",    "--ptxas-options",
                                                     "-Xnvlink",   "--nvlink-options",
                                                     "-Xarchive",  "--archive-options",
                                                     "-ccbin",     "--compiler-bindir",
                                                     "-x",         "--x",
                                                     "-arch",      "--gpu-architecture",
                                                     "-gencode",   "--generate-code",
                                                     "-code",      "--gpu-code",
                                                     "-I",         "-isystem",
                                                     "-D",         "-U",
                                                     "-include",   "--pre-include",
                                                     "-L",         "-l",
                                                     "-rdc",       "--relocatable-device-code"};
  return options.count(a) > 0;
}

void for_each_own_argument(const std::vector<std::string>& argv, const std::function<bool(size_t)>& f) {
  const bool nvcc = !argv.empty() && is_nvcc(argv[0]);
  for (size_t i = 1; i < argv.size(); ++i) {
    if (nvcc && nvcc_takes_value(argv[i])) {
      ++i;
      continue;
    }
    if (!f(i)) return;
  }
}

std::optional<OutputArgument> output_argument(const std::vector<std::string>& argv) {
  const bool nvcc = !argv.empty() && is_nvcc(argv[0]);
  std::optional<OutputArgument> out;
  for_each_own_argument(argv, [&](size_t i) {
    const std::string& a = argv[i];
    if ((a == "-o" || a == "--output-file") && i + 1 < argv.size()) out = OutputArgument{i + 1, 0};
    else if (nvcc && (a.starts_with("-o=") || a.starts_with("--output-file=")))
      out = OutputArgument{i, a.find('=') + 1};
    else if (!nvcc && a.size() > 2 && a.starts_with("-o")) out = OutputArgument{i, 2};
    return !out;
  });
  return out;
}

std::string absolute_in(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return normalize_path(path);
  return normalize_path(dir + "/" + path);
}

std::string entry_in(const std::string& dir, const std::string& path) {
  return path.empty() ? dir : absolute_in(dir, path);
}

namespace {

CompileDatabase parse_compile_database(const std::string& build_dir, const std::string& path) {
  CompileDatabase out;
  auto text = read_text(path);
  if (!text) return out;
  out.present = true;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) return out;
  out.valid = true;
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("file") || !e["file"].is_string()) continue;
    CompileCommand c;
    c.directory = e.contains("directory") && e["directory"].is_string() ? e["directory"].get<std::string>() : build_dir;
    out.files.emplace_back(c.directory, e["file"].get<std::string>());
    c.file = absolute_in(c.directory, out.files.back().second);
    if (e.contains("arguments") && e["arguments"].is_array()) {
      for (const auto& a : e["arguments"])
        if (a.is_string()) c.argv.push_back(a.get<std::string>());
    } else if (e.contains("command") && e["command"].is_string()) {
      c.argv = split_command(e["command"].get<std::string>());
    }
    if (!c.argv.empty()) out.commands.push_back(std::move(c));
  }
  return out;
}

KeptFile<CompileDatabase> kept_databases;  // the compile_commands.json files parsed in this process

}  // namespace

std::shared_ptr<const CompileDatabase> read_compile_database(const std::string& build_dir) {
  if (build_dir.empty()) return std::make_shared<const CompileDatabase>();
  const std::string path = build_dir + "/compile_commands.json";
  return kept_databases.get(
      path, [&] { return std::make_shared<const CompileDatabase>(parse_compile_database(build_dir, path)); });
}

std::vector<CompileCommand> read_compile_commands(const std::string& build_dir) {
  return read_compile_database(build_dir)->commands;
}

}  // namespace mlc::build
