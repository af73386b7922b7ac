// FindCUDA's compiles, which compile_commands.json leaves out: cuda_add_library() and
// cuda_add_executable() compile each .cu file through a generated script (CMakeFiles/<t>.dir/.../
// <t>_generated_<f>.cu.o.cmake) that run_nvcc.cmake runs. With compile_commands.json's, they are the
// build's compile commands (build::read_build_commands), and the cache names its CUDA compiler.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "build/cmake/build_info.h"
#include "common/paths.h"

namespace mlc::build::cmake {
namespace {

// One set() of a FindCUDA script, as run_nvcc.cmake writes it on one line: `set(name value) # type`,
// the value a quoted string, a [==[bracket]==] list or unquoted list items. Lists are split on ';'.
std::vector<std::string> script_values(const std::string& raw) {
  std::string v = raw;
  std::vector<std::string> out;
  auto split_list = [&](const std::string& text) {
    std::string item;
    std::istringstream in(text);
    while (std::getline(in, item, ';'))
      if (!item.empty()) out.push_back(item);
  };
  if (v.starts_with("[==[") && v.size() >= 8 && v.compare(v.size() - 4, 4, "]==]") == 0) {
    split_list(v.substr(4, v.size() - 8));
  } else if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    out.push_back(v.substr(1, v.size() - 2));
  } else {
    std::istringstream in(v);
    for (std::string word; in >> word;) split_list(word);
  }
  return out;
}

// The nvcc command a FindCUDA script (cuda_add_library's CMakeFiles/<t>.dir/.../<t>_generated_<f>.cu.o.cmake)
// runs for its source, put together as its run_nvcc.cmake does: nvcc, the source, the format flag, -o,
// -ccbin, nvcc_flags, the compile definitions, the host flags of the configuration through -Xcompiler,
// CUDA_NVCC_FLAGS and those of the configuration, -DNVCC, the include directories.
std::optional<CompileCommand> findcuda_command(const std::string& script, const std::string& build_dir,
                                               const std::string& configuration) {
  std::ifstream in(script);
  if (!in) return std::nullopt;
  static const std::regex set_line(R"(^set\((\w+)\s*(.*?)\)\s*(#.*)?$)");
  std::map<std::string, std::vector<std::string>> vars;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, set_line) && !vars.count(m[1].str())) vars[m[1].str()] = script_values(m[2].str());
  }
  auto one = [&](const std::string& name) { return vars[name].empty() ? std::string() : vars[name].front(); };
  const std::string nvcc = one("CUDA_NVCC_EXECUTABLE"), source = one("source_file");
  if (nvcc.empty() || source.empty()) return std::nullopt;
  std::string config = configuration.empty() ? "DEBUG" : configuration;  // the script's default is Debug
  for (auto& c : config) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CompileCommand c{.directory = build_dir, .argv = {nvcc, source}, .file = build::normalize_path(source)};
  auto append = [&](const std::string& name) {
    for (const auto& v : vars[name]) c.argv.push_back(v);
  };
  append("cuda_language_flag");
  append("format_flag");
  c.argv.push_back("-o");
  c.argv.push_back(one("generated_file_internal"));
  if (!one("CUDA_HOST_COMPILER").empty()) c.argv.insert(c.argv.end(), {"-ccbin", one("CUDA_HOST_COMPILER")});
  append("nvcc_flags");
  for (const auto& d : vars["CUDA_NVCC_COMPILE_DEFINITIONS"]) c.argv.push_back("-D" + d);
  std::string host;
  for (const auto& name : {std::string("CMAKE_HOST_FLAGS"), "CMAKE_HOST_FLAGS_" + config})
    for (const auto& f : vars[name]) host += (host.empty() ? "" : ",") + f;
  if (!host.empty()) c.argv.push_back("-Xcompiler=" + host);
  append("CUDA_NVCC_FLAGS");
  append("CUDA_NVCC_FLAGS_" + config);
  c.argv.push_back("-DNVCC");
  std::set<std::string> seen;
  for (const auto& d : vars["CUDA_NVCC_INCLUDE_DIRS"])
    if (seen.insert(d).second) c.argv.push_back("-I" + d);
  return c;
}

}  // namespace

std::vector<CompileCommand> read_findcuda_commands(const std::string& build_dir, const std::string& configuration) {
  std::vector<CompileCommand> out;
  std::error_code ec;
  const std::string top = build_dir + "/CMakeFiles";
  if (build_dir.empty() || !std::filesystem::is_directory(top, ec)) return out;
  size_t seen = 0;
  std::filesystem::recursive_directory_iterator it(top, std::filesystem::directory_options::skip_permission_denied, ec),
      end;
  for (; it != end && !ec; it.increment(ec)) {
    if (++seen > 200000) break;  // bounded: a build tree is walked, never a disk
    if (it.depth() > 12) it.disable_recursion_pending();
    const std::string name = it->path().filename().string();
    if (name.find("_generated_") == std::string::npos || name.size() < 7 ||
        name.compare(name.size() - 6, 6, ".cmake") != 0 || !it->is_regular_file(ec))
      continue;
    if (auto c = findcuda_command(it->path().string(), build_dir, configuration)) out.push_back(std::move(*c));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return out;
}

}  // namespace mlc::build::cmake

namespace mlc::build {

BuildCommands read_build_commands(const std::string& build_dir) {
  BuildCommands out;
  out.db = read_compile_commands(build_dir);
  std::optional<InputError> no_cache;
  const auto cache_vars = cmake::read_cmake_cache(build_dir + "/CMakeCache.txt", no_cache);
  auto cache_value = [&](const std::string& var) {
    auto it = cache_vars.find(var);
    return it == cache_vars.end() || it->second.find("NOTFOUND") != std::string::npos ? std::string() : it->second;
  };
  // FindCUDA's .cu files are compiled by custom commands that compile_commands.json leaves out.
  if (!cache_value("CUDA_NVCC_EXECUTABLE").empty())
    for (auto& c : cmake::read_findcuda_commands(build_dir, cache_value("CMAKE_BUILD_TYPE")))
      out.db.push_back(std::move(c));
  // CMake's CUDA language names it CMAKE_CUDA_COMPILER, FindCUDA CUDA_NVCC_EXECUTABLE.
  out.cuda_compiler = cache_value("CMAKE_CUDA_COMPILER");
  if (out.cuda_compiler.empty()) out.cuda_compiler = cache_value("CUDA_NVCC_EXECUTABLE");
  return out;
}

}  // namespace mlc::build
