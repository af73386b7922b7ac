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

#include "build/command_line.h"
#include "common/paths.h"
#include "confirm/confirm.h"

namespace mlc::confirm {
namespace {

using build::absolute_in;
using build::is_nvcc;

std::string extension(const std::string& path) {
  auto slash = path.rfind('/');
  auto dot = path.rfind('.');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot);
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
    for (auto& t : build::split_command(ss.str())) out.push_back(std::move(t));
  }
  return out;
}

// Drops what would write beside the build's own files or instead of the object: depfiles (-MD -MT -MF,
// nvcc's --generate-dependencies-with-compile --dependency-output) and FindCUDA's -odir. A bare -M/-MM
// would only list dependencies and compile nothing.
void drop_side_outputs(std::vector<std::string>& argv) {
  static const std::set<std::string_view> alone = {"-MD",
                                                   "-MMD",
                                                   "-MP",
                                                   "-M",
                                                   "-MM",
                                                   "-MG",
                                                   "--generate-dependencies-with-compile",
                                                   "--generate-nonsystem-dependencies-with-compile"};
  static const std::set<std::string_view> with_value = {
      "-MT", "-MF", "-MQ", "-MJ", "--dependency-output", "-odir", "--output-directory"};
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
// build::output_argument), else appends -c -o. nvcc's -odir, -optf... are no -o, and what follows
// -Xcompiler is the host's.
void redirect_output(std::vector<std::string>& argv, const std::string& object) {
  if (auto out = build::output_argument(argv)) {
    argv[out->index].replace(out->offset, std::string::npos, object);
    return;
  }
  const bool nvcc = is_nvcc(argv[0]);
  bool has_c = false;
  build::for_each_own_argument(argv, [&](size_t i) {
    const std::string& a = argv[i];
    has_c = a == "-c" || (nvcc && (a == "--compile" || a == "-dc" || a == "--device-c"));
    return !has_c;
  });
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

}  // namespace

bool is_cuda_source(const std::string& file) { return extension(file) == ".cu"; }

bool command_for(const std::vector<CompileCommand>& db, const std::string& file, const std::string& object,
                 CompileCommand& out, std::string& from, const std::string& cuda_compiler) {
  const CompileCommand* best = nullptr;
  for (const auto& c : db)
    if (c.file == file) best = &c;
  if (!best) {
    // Nearest sibling: same directory and extension, then same extension, then the longest shared path.
    auto score = [&](const CompileCommand& c) {
      bool same_dir = dir_of(c.file) == dir_of(file), same_ext = extension(c.file) == extension(file);
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
