// The command that compiles one candidate source into a scratch object: the build's own, else a
// sibling's with the file substituted, shaped so that it writes nothing into the build tree (no
// depfile, the object redirected to our scratch). CMake's CUDA-language commands are nvcc's: their
// response files are read inline, -Xcompiler's values belong to the host compiler, and a .cu file
// whose siblings are all host commands gets the build's own CUDA compiler.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

#include "cmake/command_line.h"
#include "common/paths.h"
#include "confirm/confirm.h"

namespace mlc::confirm {
namespace {

using cmake::absolute_in;
using cmake::is_nvcc;
using cmake::nvcc_takes_value;

std::string extension(const std::string& path) {
  auto slash = path.rfind('/');
  auto dot = path.rfind('.');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot);
}

std::string parent(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool starts(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Response files (gcc's @file, nvcc's --options-file / -optf FILE, as CMake writes includes_CUDA.rsp),
// read inline relative to the command's directory, so the flags inside are shaped like the rest. One
// that cannot be read stays as it was.
std::vector<std::string> expand_response_files(const CompileCommand& c) {
  std::vector<std::string> out;
  for (size_t i = 0; i < c.argv.size(); ++i) {
    const std::string& a = c.argv[i];
    std::vector<std::string> original{a};
    std::string file;
    if (i > 0 && a.size() > 1 && a[0] == '@') {
      file = a.substr(1);
    } else if ((a == "--options-file" || a == "-optf") && i + 1 < c.argv.size()) {
      file = c.argv[++i];
      original.push_back(file);
    } else if (starts(a, "--options-file=")) {
      file = a.substr(15);
    }
    std::ifstream in;
    if (!file.empty()) in.open(absolute_in(c.directory, file));
    if (file.empty() || !in) {
      out.insert(out.end(), original.begin(), original.end());
      continue;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    for (auto& t : cmake::split_command(ss.str())) out.push_back(std::move(t));
  }
  return out;
}

// Drops what would write beside the build's own files or instead of the object: depfiles (-MD -MT -MF,
// nvcc's --generate-dependencies-with-compile --dependency-output) and FindCUDA's -odir. A bare -M/-MM
// would only list dependencies and compile nothing.
void drop_side_outputs(std::vector<std::string>& argv) {
  static const std::set<std::string_view> alone = {"-MD", "-MMD", "-MP", "-M", "-MM", "-MG",
                                                   "--generate-dependencies-with-compile",
                                                   "--generate-nonsystem-dependencies-with-compile"};
  static const std::set<std::string_view> with_value = {"-MT", "-MF", "-MQ", "-MJ", "--dependency-output", "-odir",
                                                        "--output-directory"};
  std::vector<std::string> kept;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (i > 0 && alone.count(a)) continue;
    if (i > 0 && with_value.count(a)) {
      ++i;
      continue;
    }
    if (i > 0 && (starts(a, "--dependency-output=") || starts(a, "--output-directory=") || starts(a, "-Wp,-M") ||
                  ((starts(a, "-MF") || starts(a, "-MT") || starts(a, "-MQ")) && a.size() > 3)))
      continue;
    kept.push_back(a);
  }
  argv = std::move(kept);
}

// Output redirected to `object`: replaces the path of the command's output argument (see
// cmake::output_argument), else appends -c -o. nvcc's -odir, -optf... are no -o, and what follows
// -Xcompiler is the host's.
void redirect_output(std::vector<std::string>& argv, const std::string& object) {
  if (auto out = cmake::output_argument(argv)) {
    argv[out->index].replace(out->offset, std::string::npos, object);
    return;
  }
  const bool nvcc = is_nvcc(argv[0]);
  bool has_c = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (nvcc && nvcc_takes_value(a)) {
      ++i;
      continue;
    }
    if (a == "-c" || (nvcc && (a == "--compile" || a == "-dc" || a == "--device-c"))) has_c = true;
  }
  if (!has_c) argv.push_back("-c");
  argv.push_back("-o");
  argv.push_back(object);
}

// A host command made the build's nvcc command for a CUDA source, as CMake's CUDA rules write one: the
// preprocessor, standard, optimisation and debug flags are nvcc's too (-std=gnu++N is spelt c++N, the
// only form nvcc takes), every other host flag passes through -Xcompiler, and the source is `-x cu`.
std::vector<std::string> as_nvcc(const CompileCommand& host, const std::string& nvcc) {
  std::vector<std::string> out{nvcc};
  for (size_t i = 1; i < host.argv.size(); ++i) {
    const std::string& a = host.argv[i];
    if (a == "-x" && i + 1 < host.argv.size()) {  // the host's language: the source is CUDA now
      ++i;
    } else if ((a == "-I" || a == "-D" || a == "-U" || a == "-isystem" || a == "-include" || a == "-o" || a == "-MF" ||
         a == "-MT" || a == "-MQ") &&
        i + 1 < host.argv.size()) {
      out.push_back(a);
      out.push_back(host.argv[++i]);
    } else if (!a.empty() && a[0] != '-' && absolute_in(host.directory, a) == host.file) {
      out.insert(out.end(), {"-x", "cu", a});
    } else if (starts(a, "-std=gnu++")) {
      out.push_back("-std=c++" + a.substr(10));
    } else if (starts(a, "-I") || starts(a, "-D") || starts(a, "-U") || starts(a, "-std=") || starts(a, "-O") ||
               a == "-g" || a == "-c" || starts(a, "-M") || starts(a, "-o") || a.empty() || a[0] != '-') {
      out.push_back(a);
    } else {
      out.push_back("-Xcompiler=" + a);
    }
  }
  return out;
}

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
  if (starts(v, "[==[") && v.size() >= 8 && v.compare(v.size() - 4, 4, "]==]") == 0) {
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
  CompileCommand c{.directory = build_dir, .argv = {nvcc, source}, .file = cmake::normalize_path(source)};
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
  std::filesystem::recursive_directory_iterator it(top, std::filesystem::directory_options::skip_permission_denied, ec), end;
  for (; it != end && !ec; it.increment(ec)) {
    if (++seen > 200000) break;  // bounded: a build tree is walked, never a disk
    if (it.depth() > 12) it.disable_recursion_pending();
    const std::string name = it->path().filename().string();
    if (name.find("_generated_") == std::string::npos || name.size() < 7 || name.compare(name.size() - 6, 6, ".cmake") != 0 ||
        !it->is_regular_file(ec))
      continue;
    if (auto c = findcuda_command(it->path().string(), build_dir, configuration)) out.push_back(std::move(*c));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return out;
}

bool is_cuda_source(const std::string& file) { return extension(file) == ".cu"; }

bool command_for(const std::vector<CompileCommand>& db, const std::string& file, const std::string& object,
                 CompileCommand& out, std::string& from, const std::string& cuda_compiler) {
  const CompileCommand* best = nullptr;
  for (const auto& c : db)
    if (c.file == file) best = &c;
  if (!best) {
    // Nearest sibling: same directory and extension, then same extension, then the longest shared path.
    auto score = [&](const CompileCommand& c) {
      bool same_dir = parent(c.file) == parent(file), same_ext = extension(c.file) == extension(file);
      return std::make_tuple(same_dir && same_ext, same_ext, same_dir, shared_dir_prefix(c.file, file));
    };
    for (const auto& c : db)
      if (!best || score(c) > score(*best)) best = &c;
    if (!best) return false;
  }
  out = *best;
  out.argv = expand_response_files(*best);
  out.file = file;
  from = best->file;
  if (best->file != file) {
    bool replaced = false;
    for (size_t i = 1; i < out.argv.size(); ++i) {
      if (absolute_in(out.directory, out.argv[i]) == best->file && out.argv[i - 1] != "-o") {
        out.argv[i] = file;
        replaced = true;
      }
    }
    if (!replaced) out.argv.push_back(file);
  }
  // A host compiler given a .cu file links nothing and compiles nothing (gcc: "linker input file
  // unused"): a CUDA source takes the build's CUDA compiler, or no command at all.
  if (is_cuda_source(file) && !out.argv.empty() && !is_nvcc(out.argv[0])) {
    if (cuda_compiler.empty()) return false;
    out.argv = as_nvcc(out, cuda_compiler);
  }
  drop_side_outputs(out.argv);
  if (!out.argv.empty()) redirect_output(out.argv, object);
  return true;
}

}  // namespace mlc::confirm
