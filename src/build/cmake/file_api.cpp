// Reads CMake's File API reply (reply/index-*.json -> codemodel-v2 -> one file per target, and
// cmakeFiles-v1), and asks CMake for one: the stateless query files, then a configure of the existing
// build tree. Only CMake runs; nothing the build produced is executed.
#include "build/cmake/file_api.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/file_io.h"
#include "common/subprocess.h"

namespace mlc::build::cmake {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The newest index file of the reply directory (CMake names them index-<time>.json), empty when none.
std::string newest_index(const std::string& reply) {
  std::string index;
  if (DIR* d = opendir(reply.c_str())) {
    while (dirent* de = readdir(d)) {
      std::string n = de->d_name;
      if (n.rfind("index-", 0) == 0 && n > index) index = n;  // the newest sorts last
    }
    closedir(d);
  }
  return index;
}

// The stack of backtrace node `node`, innermost first (cmake-file-api(7): each node names its file,
// line, command and parent; the outermost node of a file has no command).
std::vector<build::Frame> stack_of(const json& graph, size_t node, const std::string& top) {
  std::vector<build::Frame> out;
  const auto& nodes = graph.value("nodes", json::array());
  const auto& files = graph.value("files", json::array());
  const auto& commands = graph.value("commands", json::array());
  for (int guard = 0; node < nodes.size() && guard < 256; ++guard) {
    const auto& n = nodes[node];
    size_t file = n.value("file", files.size());
    if (n.contains("command") && file < files.size() && files[file].is_string()) {
      size_t c = n["command"].is_number_unsigned() ? n["command"].get<size_t>() : commands.size();
      out.push_back(
          {.file = entry_in(top, files[file].get<std::string>()),
           .line = n.value("line", 0u),
           .command = c < commands.size() && commands[c].is_string() ? lower(commands[c].get<std::string>()) : ""});
    }
    if (!n.contains("parent") || !n["parent"].is_number_unsigned()) break;
    node = n["parent"].get<size_t>();
  }
  return out;
}

// One target's file: its name, type, artifacts, sources (with their stacks), dependencies, link
// fragments, and where it was created (the outermost call in a CMakeLists.txt: a person edits there).
Target read_target(const json& tj, Model& info, const std::string& top) {
  Target target;
  target.name = tj.value("name", "");
  if (tj.contains("paths") && tj["paths"].is_object())
    target.source_dir = normalize_path(entry_in(top, tj["paths"].value("source", ".")));
  target.type = build::target_type(tj.value("type", ""));
  for (const auto& a : tj.value("artifacts", json::array()))
    target.artifacts.push_back(entry_in(info.build_dir, a.value("path", "")));
  const json graph = tj.value("backtraceGraph", json::object());
  for (const auto& s : tj.value("sources", json::array())) {
    std::string p = entry_in(top, s.value("path", ""));
    target.sources.push_back(p);
    build::AddedSource added{.file = normalize_path(p), .compiled = s.contains("compileGroupIndex"), .stack = {}};
    if (added.compiled) {
      info.compiled.insert(p);
      target.compiles.insert(normalize_path(p));
    }
    if (s.contains("backtrace") && s["backtrace"].is_number_unsigned() && !s.value("isGenerated", false))
      added.stack = stack_of(graph, s["backtrace"].get<size_t>(), top);
    target.added.push_back(std::move(added));
  }
  for (const auto& d : tj.value("dependencies", json::array())) {
    std::string id = d.value("id", "");  // name::@hash
    target.dependencies.push_back(id.substr(0, id.find("::@")));
  }
  if (tj.contains("link"))
    for (const auto& f : tj["link"].value("commandFragments", json::array()))
      target.link_fragments.push_back(f.value("fragment", ""));
  if (tj.contains("backtrace") && tj["backtrace"].is_number_unsigned()) {
    // The command that created the target may sit inside a helper function (musa_add_library);
    // the place a person edits is the outermost call in a CMakeLists.txt.
    for (const auto& f : stack_of(graph, tj["backtrace"].get<size_t>(), top)) {
      bool lists_file = f.file.size() >= 14 && f.file.compare(f.file.size() - 14, 14, "CMakeLists.txt") == 0;
      if (target.cmake_file.empty() || lists_file) {
        target.cmake_file = f.file;
        target.line = f.line;
      }
      if (lists_file) break;
    }
  }
  return target;
}

}  // namespace

Reply read_file_api(Model& info) {
  Reply out;
  const std::string reply = info.build_dir + "/.cmake/api/v1/reply";
  const std::string index = newest_index(reply);
  if (index.empty()) return out;
  auto parse = [&](const std::string& file) -> json {
    auto text = read_text(reply + "/" + file);
    if (!text) return nullptr;
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded()) {
      info.errors.push_back({reply + "/" + file, "invalid JSON in the CMake File API reply"});
      return nullptr;
    }
    return j;
  };
  auto idx = parse(index);
  if (!idx.is_object()) return out;
  out.index = reply + "/" + index;
  std::string codemodel, cmake_files;
  for (const auto& obj : idx.value("objects", json::array())) {
    if (obj.value("kind", "") == "codemodel") codemodel = obj.value("jsonFile", "");
    if (obj.value("kind", "") == "cmakeFiles") cmake_files = obj.value("jsonFile", "");
  }
  if (codemodel.empty()) return out;
  auto cm = parse(codemodel);
  if (!cm.is_object() || !cm.contains("configurations") || !cm["configurations"].is_array() ||
      cm["configurations"].empty())
    return out;
  std::string top = cm.value("paths", json::object()).value("source", info.source_dir);
  if (info.source_dir.empty()) info.source_dir = top;
  out.found = true;
  for (const auto& t : cm["configurations"][0].value("targets", json::array())) {
    auto tj = parse(t.value("jsonFile", ""));
    if (tj.is_object()) info.targets.push_back(read_target(tj, info, top));
  }
  if (cmake_files.empty()) return out;
  auto cf = parse(cmake_files);
  if (!cf.is_object()) return out;
  out.has_inputs = true;
  // The project's own files: not generated (CMakeSystem.cmake), not CMake's modules, not outside the project.
  for (const auto& in : cf.value("inputs", json::array()))
    if (!in.value("isGenerated", false) && !in.value("isExternal", false) && !in.value("isCMake", false))
      out.inputs.push_back(entry_in(top, in.value("path", "")));
  return out;
}

bool reply_is_stale(const Reply& reply) {
  struct stat index_st;
  if (reply.index.empty() || stat(reply.index.c_str(), &index_st) != 0) return true;
  for (const auto& f : reply.inputs) {
    struct stat st;
    if (stat(f.c_str(), &st) != 0) continue;  // gone: the configure will say so if it matters
    if (std::tie(st.st_mtim.tv_sec, st.st_mtim.tv_nsec) > std::tie(index_st.st_mtim.tv_sec, index_st.st_mtim.tv_nsec))
      return true;
  }
  return false;
}

CMakeRun run_cmake(const std::vector<std::string>& argv, const std::string& dir, unsigned timeout_seconds) {
  CMakeRun r;
  ProgramResult ran = run_program({.argv = argv,
                                   .directory = dir,
                                   .deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds),
                                   .merge_output = true});
  if (!ran.started) return r;
  r.started = true;
  constexpr size_t kKeep = 64 * 1024;  // the tail is what names the error
  r.output = std::move(ran.out);
  if (r.output.size() > 2 * kKeep) r.output.erase(0, r.output.size() - kKeep);
  r.timed_out = ran.timed_out;
  const int status = ran.status;
  if (!r.timed_out)
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

std::string cmake_program(const Model& info) {
  if (auto it = info.cache.find("CMAKE_COMMAND"); it != info.cache.end() && !it->second.empty()) {
    struct stat st;
    if (stat(it->second.c_str(), &st) == 0 && (st.st_mode & S_IXUSR)) return it->second;
  }
  return "cmake";
}

std::string first_cmake_error(const std::string& output) {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.rfind("CMake Error", 0) == 0) {
      // "CMake Error at CMakeLists.txt:3 (add_library):" is followed by the message, indented, in
      // paragraphs ("Cannot find source file:", a blank line, the file): up to the second blank line.
      std::string message = line;
      int blanks = 0;
      for (std::string next; blanks < 2 && std::getline(in, next);) {
        size_t at = next.find_first_not_of(" \t");
        if (at == std::string::npos) {
          blanks += message.size() > line.size();
          continue;
        }
        message += " " + next.substr(at);
        if (message.size() > 400) break;
      }
      return message;
    }
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  }
  return last;
}

std::optional<InputError> ask_cmake(const Model& info, unsigned timeout_seconds) {
  const std::string query = info.build_dir + "/.cmake/api/v1/query";
  for (const char* kind : {"codemodel-v2", "cmakeFiles-v1"}) {
    const std::string file = query + "/" + kind;
    struct stat st;
    if (stat(file.c_str(), &st) == 0) continue;
    if (auto failed = write_atomic(file, "", Parents::Create))
      return InputError{info.build_dir, "cannot write the CMake File API query " + file + ": " + failed->message};
  }
  const std::string program = cmake_program(info);
  CMakeRun run = run_cmake({program, info.build_dir}, info.build_dir, timeout_seconds);
  if (!run.started) return InputError{info.build_dir, "cannot start " + program};
  if (run.timed_out)
    return InputError{info.build_dir, "`" + program + " " + info.build_dir + "` did not finish within " +
                                          std::to_string(timeout_seconds) + " s"};
  if (run.status == 127) return InputError{info.build_dir, program + " not found"};
  if (run.status != 0)
    return InputError{info.build_dir,
                      "`" + program + " " + info.build_dir + "` failed: " + first_cmake_error(run.output)};
  return std::nullopt;
}

}  // namespace mlc::build::cmake
