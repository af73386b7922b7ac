// The targets of a CMake build without a File API reply, from the files its generator wrote (the same
// facts the codemodel gives, as far as finding and patching a missing source needs them):
// - what each target compiles: compile_commands.json puts every object in <dir>/CMakeFiles/<target>.dir/;
// - what it produces and links: Makefiles write CMakeFiles/<target>.dir/link.txt, Ninja writes one link
//   edge per target in build.ninja (its OBJECT_DIR and TARGET_FILE variables);
// - the OBJECT libraries it takes: objects of another target's directory on its link line.
// A target without a link step whose objects another target links is an OBJECT library.
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "build/cmake/build_info.h"
#include "build/cmake/generator_targets.h"
#include "build/command_line.h"
#include "common/file_io.h"

namespace mlc::build::cmake {

using build::output_argument;
using build::split_command;
namespace {

// "<bindir>/CMakeFiles/<target>.dir/..." (absolute) -> {bindir, target}; empty target when the path is
// no object of a target directory.
struct ObjectDir {
  std::string binary_dir, target;
};
ObjectDir object_dir_of(const std::string& path) {
  const auto at = path.rfind("/CMakeFiles/");
  if (at == std::string::npos) return {};
  const size_t start = at + 12;
  auto dir_end = path.find(".dir/", start);
  if (dir_end == std::string::npos) return {};
  std::string target = path.substr(start, dir_end - start);
  if (target.empty() || target.find('/') != std::string::npos) return {};
  return {path.substr(0, at), target};
}

// The path a command's output argument names ("" when it names none).
std::string output_of(const std::vector<std::string>& argv) {
  auto out = output_argument(argv);
  return out ? argv[out->index].substr(out->offset) : "";
}

struct LinkStep {
  std::string artifact;                                 // absolute
  build::TargetType type = build::TargetType::Unknown;  // a library or an executable
  std::vector<std::string> inputs;                      // absolute
};

// Makefiles: the link command of CMakeFiles/<target>.dir/link.txt, run in <bindir>.
std::optional<LinkStep> read_link_txt(const std::string& bindir, const std::string& target) {
  auto text = read_text(bindir + "/CMakeFiles/" + target + ".dir/link.txt");
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string line;
  std::getline(in, line);
  auto argv = split_command(line);
  if (argv.empty()) return std::nullopt;
  LinkStep step;
  const std::string tool = argv[0].substr(argv[0].rfind('/') + 1);
  if ((tool == "ar" || tool.ends_with("-ar")) && argv.size() > 2) {
    step.type = build::TargetType::StaticLibrary;
    step.artifact = absolute_in(bindir, argv[2]);
    for (size_t i = 3; i < argv.size(); ++i) step.inputs.push_back(absolute_in(bindir, argv[i]));
    return step;
  }
  step.type = build::TargetType::Executable;
  for (const auto& a : argv)
    if (a == "-shared") step.type = build::TargetType::SharedLibrary;
  step.artifact = output_of(argv);
  if (step.artifact.empty()) return std::nullopt;
  step.artifact = absolute_in(bindir, step.artifact);
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a.ends_with(".o") && a[0] != '-') step.inputs.push_back(absolute_in(bindir, a));
  }
  return step;
}

// Ninja's escapes: "$ " a space, "$:" a colon, "$$" a dollar.
std::string ninja_unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size()) out += s[++i];
    else out += s[i];
  }
  return out;
}
std::vector<std::string> ninja_words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size()) {
      cur += s[i];
      cur += s[++i];
    } else if (s[i] == ' ') {
      if (!cur.empty()) out.push_back(ninja_unescape(cur));
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  if (!cur.empty()) out.push_back(ninja_unescape(cur));
  return out;
}

// Ninja: each link edge of build.ninja, keyed by its target (OBJECT_DIR's CMakeFiles/<target>.dir).
std::map<std::string, LinkStep> read_build_ninja(const std::string& build_dir) {
  std::map<std::string, LinkStep> out;
  std::ifstream in(build_dir + "/build.ninja");
  if (!in) return out;
  std::string line;
  std::optional<LinkStep> edge;
  std::string object_dir;
  auto finish = [&] {
    if (edge && !object_dir.empty()) {
      auto od = object_dir_of(absolute_in(build_dir, object_dir) + "/");
      if (!od.target.empty() && !edge->artifact.empty()) out[od.binary_dir + "\n" + od.target] = *edge;
    }
    edge.reset();
    object_dir.clear();
  };
  while (std::getline(in, line)) {
    if (line.rfind("build ", 0) == 0) {
      finish();
      if (line.find("_LINKER__") == std::string::npos) continue;  // a compile or custom edge
      auto colon = line.find(": ");
      while (colon != std::string::npos && colon > 0 && line[colon - 1] == '$') colon = line.find(": ", colon + 1);
      if (colon == std::string::npos) continue;
      auto words = ninja_words(line.substr(colon + 2));
      if (words.empty() || words[0].find("_LINKER__") == std::string::npos) continue;
      LinkStep step;
      const std::string& rule = words[0];
      step.type = build::TargetType::Executable;
      for (auto library :
           {build::TargetType::SharedLibrary, build::TargetType::ModuleLibrary, build::TargetType::StaticLibrary})
        if (rule.find(build::to_string(library)) != std::string::npos) {
          step.type = library;
          break;
        }
      for (size_t i = 1; i < words.size() && words[i] != "|" && words[i] != "||"; ++i)
        step.inputs.push_back(absolute_in(build_dir, words[i]));
      edge = std::move(step);
    } else if (edge && line.rfind("  ", 0) == 0) {
      auto eq = line.find(" = ");
      if (eq == std::string::npos) continue;
      std::string key = line.substr(2, eq - 2), value = ninja_unescape(line.substr(eq + 3));
      if (key == "OBJECT_DIR") object_dir = value;
      else if (key == "TARGET_FILE") edge->artifact = absolute_in(build_dir, value);
    } else if (!line.empty() && line[0] != ' ') {
      finish();
    }
  }
  finish();
  return out;
}

}  // namespace

std::vector<Target> targets_from_generator(const std::string& build_dir, const std::string& source_dir) {
  std::vector<Target> out;
  if (build_dir.empty()) return out;
  // Objects of compile_commands.json, by target directory.
  std::map<std::string, Target> by_key;                     // bindir + "\n" + target
  std::map<std::string, std::vector<std::string>> objects;  // by the same key
  const auto database = build::read_compile_database(build_dir);
  for (const auto& c : database->commands) {
    const std::string relative = output_of(c.argv);
    if (relative.empty()) continue;
    const std::string object = absolute_in(c.directory, relative);
    auto od = object_dir_of(object);
    if (od.target.empty()) continue;
    const std::string key = od.binary_dir + "\n" + od.target;
    Target& t = by_key[key];
    t.name = od.target;
    objects[key].push_back(object);
    const std::string file = normalize_path(c.file);
    if (t.compiles.insert(file).second) t.sources.push_back(file);
    if (t.source_dir.empty() && !source_dir.empty() && od.binary_dir.rfind(build_dir, 0) == 0)
      t.source_dir = normalize_path(source_dir + od.binary_dir.substr(build_dir.size()));
  }
  if (by_key.empty()) return out;
  auto ninja = read_build_ninja(build_dir);
  std::set<std::string> linked;  // keys of the targets whose objects another target links
  for (auto& [key, t] : by_key) {
    const std::string bindir = key.substr(0, key.find('\n'));
    std::optional<LinkStep> step;
    if (auto it = ninja.find(key); it != ninja.end()) step = it->second;
    else step = read_link_txt(bindir, t.name);
    if (!step) continue;
    t.type = step->type;
    // As the codemodel names it: a versioned library (libx.so.1.2.3) by its link name, libx.so.
    std::string artifact = step->artifact;
    if (auto so = artifact.rfind(".so."); t.type == build::TargetType::SharedLibrary && so != std::string::npos &&
                                          artifact.find('/', so) == std::string::npos)
      artifact.resize(so + 3);
    t.artifacts.push_back(artifact);
    std::set<std::string> deps;
    for (const auto& input : step->inputs) {
      auto od = object_dir_of(input);
      if (od.target.empty() || od.target == t.name) continue;
      if (deps.insert(od.target).second) t.dependencies.push_back(od.target);
      linked.insert(od.binary_dir + "\n" + od.target);
    }
  }
  for (auto& [key, t] : by_key) {
    if (t.type == build::TargetType::Unknown && linked.count(key)) {
      t.type = build::TargetType::ObjectLibrary;  // its artifacts are its objects, as the codemodel lists them
      t.artifacts = objects[key];
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace mlc::build::cmake
