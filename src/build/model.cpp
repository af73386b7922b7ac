// The build model's own queries, which need no provider: targets by artifact, what a target compiles,
// the target of a library, where the build's sources live, and path normalisation.
#include "build/model.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "common/paths.h"

namespace mlc::build {

std::string normalize_path(const std::string& path) {
  if (path.empty()) return path;
  bool absolute = path[0] == '/';
  std::vector<std::string> parts;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else if (!(part == ".." && absolute)) {
      parts.push_back(part);
    }
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out.empty() ? "." : out;
}

bool Model::is_compiled(const std::string& abs_path) const { return compiled.count(normalize_path(abs_path)) > 0; }

namespace {

// The file a path names once symlinks are followed (libz.so -> libz.so.1.3.1); the path itself when it
// does not exist.
std::string resolved(const std::string& path) {
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  return ec ? path : real.string();
}

constexpr std::pair<TargetType, std::string_view> kTargetTypes[] = {{TargetType::Executable, "EXECUTABLE"},
                                                                    {TargetType::StaticLibrary, "STATIC_LIBRARY"},
                                                                    {TargetType::SharedLibrary, "SHARED_LIBRARY"},
                                                                    {TargetType::ModuleLibrary, "MODULE_LIBRARY"},
                                                                    {TargetType::ObjectLibrary, "OBJECT_LIBRARY"},
                                                                    {TargetType::InterfaceLibrary, "INTERFACE_LIBRARY"},
                                                                    {TargetType::Utility, "UTILITY"}};
}  // namespace

std::string_view to_string(TargetType type) {
  for (const auto& [t, name] : kTargetTypes)
    if (t == type) return name;
  return "";
}

TargetType target_type(std::string_view cmake_name) {
  if (cmake_name.empty()) return TargetType::Unknown;
  for (const auto& [t, name] : kTargetTypes)
    if (name == cmake_name) return t;
  return TargetType::Other;
}

bool is_library(TargetType type) {
  return type == TargetType::SharedLibrary || type == TargetType::ModuleLibrary || type == TargetType::StaticLibrary;
}

const Target* Model::target_for_artifact(const std::string& path) const {
  // The exact artifact first, then the file a symlink names on either side (the File API lists
  // libz.so.1.3.1 and the user gives build/libz.so, or it lists the link name libabsl_strings.so and the
  // loader names the real file), and only then a file of the same name elsewhere.
  std::string real = resolved(path);
  for (const auto& t : targets)
    for (const auto& a : t.artifacts)
      if (a == path) return &t;
  for (const auto& t : targets)
    for (const auto& a : t.artifacts)
      if (resolved(a) == real) return &t;
  std::string base = path.substr(path.rfind('/') + 1);
  for (const auto& t : targets) {
    for (const auto& a : t.artifacts) {
      if (a.substr(a.rfind('/') + 1) == base) return &t;
    }
  }
  return nullptr;
}

namespace {

bool older(const std::string& a, const std::string& b) {  // a's last change before b's
  struct stat sa, sb;
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return std::tie(sa.st_mtim.tv_sec, sa.st_mtim.tv_nsec) < std::tie(sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
}

}  // namespace

bool Model::awaits_rebuild(const std::string& abs_path, const std::string& artifact) const {
  const std::string file = normalize_path(abs_path);
  const Target* t = target_for_artifact(artifact);
  bool configured = false;
  if (unbuilt.count(file)) {  // no object yet: compiled by the configure, in no library built so far
    const auto files = t ? source_files(*t) : std::vector<std::string>{};
    configured =
        !t || std::any_of(files.begin(), files.end(), [&](const std::string& s) { return normalize_path(s) == file; });
  } else {
    configured = t && compiled_by(*t, file);  // an object left by an earlier build
  }
  if (!configured) return false;
  // The library was linked before the file, or before the entry naming it was written: a library
  // built since then that still lacks its symbols is not waiting for anything.
  if (older(artifact, file)) return true;
  for (const auto& l : lists)
    for (const auto& e : l.entries)
      if (std::find(e.files.begin(), e.files.end(), file) != e.files.end() && older(artifact, l.cmake_file))
        return true;
  return false;
}

std::vector<const Target*> Model::with_objects(const Target& target) const {
  std::vector<const Target*> out;
  std::set<std::string> seen;
  std::vector<const Target*> todo{&target};
  while (!todo.empty()) {
    const Target* t = todo.back();
    todo.pop_back();
    if (!seen.insert(t->name).second) continue;
    out.push_back(t);
    for (const auto& dep : t->dependencies)
      for (const auto& d : targets)
        if (d.name == dep && d.type == TargetType::ObjectLibrary) todo.push_back(&d);
  }
  return out;
}

std::vector<std::string> Model::source_files(const Target& target) const {
  std::vector<std::string> out;
  for (const Target* t : with_objects(target))
    for (const auto& s : t->sources)
      if (!s.ends_with(".o") && !s.ends_with(".obj")) out.push_back(s);  // $<TARGET_OBJECTS:...>: its library's
  return out;
}

bool Model::compiled_by(const Target& target, const std::string& abs_path) const {
  std::string path = normalize_path(abs_path);
  for (const Target* t : with_objects(target))
    if (t->compiles.count(path)) return true;
  return false;
}

std::string target_of_library(const Model* build, const std::string& path) {
  if (build)
    if (const auto* t = build->target_for_artifact(path)) return t->name;
  std::string base = path.substr(path.rfind('/') + 1);
  if (base.rfind("lib", 0) == 0) base = base.substr(3);
  base = base.substr(0, base.find(".so"));
  if (build) {
    // A library is never built by an executable: with OUTPUT_NAME, add_executable(pcre2grep) and
    // add_library(pcre2-8 ... OUTPUT_NAME pcre2grep) may share the name. The target named like the file is
    // the library's only when it is not an executable (the File API's type, else add_executable in the lists).
    for (const auto& t : build->targets)
      if (t.name == base && t.type != TargetType::Unknown && !is_library(t.type)) return "";
    bool executable = false, library = false;
    for (const auto& l : build->lists) {
      if (l.variable != base) continue;
      if (l.command == ListCommand::AddExecutable) executable = true;
      if (creates_library(l.command)) library = true;
    }
    if (executable && !library) return "";
  }
  return base;
}

SearchRoots source_search_roots(const Model& build) {
  auto under = [](const std::string& path, const std::string& dir) {
    return !dir.empty() && (path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                                            (dir.back() == '/' || path[dir.size()] == '/')));
  };
  std::string build_dir = build.build_dir.empty() ? "" : normalize_path(build.build_dir);
  std::set<std::string> dirs;
  if (!build.source_dir.empty()) dirs.insert(normalize_path(build.source_dir));
  for (const auto& t : build.targets) {
    if (!t.source_dir.empty()) dirs.insert(t.source_dir);
    for (const auto& src : t.sources) dirs.insert(normalize_path(src.substr(0, src.rfind('/'))));
  }
  for (const auto& f : build.compiled) dirs.insert(normalize_path(f.substr(0, f.rfind('/'))));
  SearchRoots roots;
  std::string source_dir = build.source_dir.empty() ? "" : normalize_path(build.source_dir);
  for (const auto& d : dirs) {
    if (d.empty() || d == "/" || !is_dir(d)) continue;
    // Inside a build tree (not an in-source build): the generated sources of that directory only
    // (its CMakeFiles/ holds compiler probes with a main() each, its _deps/ other projects).
    if (build_dir != source_dir && under(d, build_dir)) {
      roots.flat.push_back(d);
    } else if (std::none_of(roots.trees.begin(), roots.trees.end(), [&](const auto& t) { return under(d, t); })) {
      roots.trees.push_back(d);  // sorted: a parent comes before what it holds
    }
  }
  return roots;
}

}  // namespace mlc::build
