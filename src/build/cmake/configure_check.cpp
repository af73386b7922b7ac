// The edited CMake files checked by CMake itself before they are written: a copy of the source tree
// (directories made, every file a hard link to the original, the edited files written out anew) is configured
// with a copy of the build's cache, and its File API reply says whether each added file is now
// compiled by its target. The user's sources and build tree are never touched.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "build/cmake/file_api.h"
#include "build/edit.h"
#include "common/file_io.h"
#include "common/paths.h"

namespace mlc::build {
namespace {

namespace fs = std::filesystem;

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// The source tree as hard links (a copy where the tree spans file systems), the build tree left out (it
// may sit inside it), hidden directories too. Not symbolic links: a project that asks CMake for a
// file's real path (nng's websocket sources) would be led back into the original tree.
bool link_tree(const std::string& from, const std::string& to, const std::string& skip, std::string& error) {
  std::error_code ec;
  fs::create_directories(to, ec);
  for (auto it = fs::recursive_directory_iterator(from, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string path = it->path().string();
    const std::string name = it->path().filename().string();
    const std::string copy = to + path.substr(from.size());
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      if (path == skip || (!name.empty() && name[0] == '.')) {
        it.disable_recursion_pending();
        continue;
      }
      fs::create_directories(copy, ec);
      if (ec) break;
    } else {
      fs::create_hard_link(it->path(), copy, ec);
      if (ec) {
        ec.clear();
        fs::copy(it->path(), copy, fs::copy_options::copy_symlinks, ec);
      }
      if (ec) break;
    }
  }
  if (ec) error = "cannot copy the source tree " + from + " for the check: " + ec.message();
  return !ec;
}

// The build's cache, read from its new place: CMake refuses a cache made for another tree.
std::string moved_cache(const std::string& text, const std::string& source, const std::string& build) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("CMAKE_HOME_DIRECTORY:", 0) == 0) line = line.substr(0, line.find('=') + 1) + source;
    if (line.rfind("CMAKE_CACHEFILE_DIR:", 0) == 0) line = line.substr(0, line.find('=') + 1) + build;
    out += line + "\n";
  }
  return out;
}

// The compiler descriptions of the build (CMakeFiles/<version>/*.cmake), so the copy does not probe
// the compilers again.
void copy_compiler_files(const std::string& from, const std::string& to) {
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(from + "/CMakeFiles", ec)) {
    if (!dir.is_directory(ec) || dir.path().filename().string().find('.') == std::string::npos) continue;
    const std::string dest = to + "/CMakeFiles/" + dir.path().filename().string();
    fs::create_directories(dest, ec);
    for (const auto& f : fs::directory_iterator(dir.path(), ec))
      if (f.is_regular_file(ec)) fs::copy_file(f.path(), dest + "/" + f.path().filename().string(), ec);
  }
}

}  // namespace

EditCheck check_edits(const Model& build, const std::vector<FileEdit>& edits,
                      const std::vector<std::pair<std::string, std::string>>& wanted, unsigned timeout_seconds) {
  EditCheck out;
  if (!build.may_run_build_system || build.build_dir.empty() || build.source_dir.empty() || edits.empty()) return out;
  const std::string source = normalize_path(build.source_dir);
  for (const auto& e : edits)
    if (!under(e.file, source)) return out;  // a file outside the tree: nothing to copy it into
  auto cache = read_text(build.build_dir + "/CMakeCache.txt");
  if (!cache) return out;
  const std::string scratch = build.build_dir + "/.musa-linkcheck-check-" + std::to_string(getpid());
  // The copy of the source tree sits beside it, at the same depth, so that what its CMake files name
  // above it (lz4's build/cmake reads ../../lib/lz4.h) is the same file from the copy; in the build
  // directory when the tree's parent takes no new directory.
  std::string copy = dir_name(source) + "/.musa-linkcheck-check-" + std::to_string(getpid());
  const std::string copy_build = scratch + "/build";
  std::error_code ec;
  fs::remove_all(scratch, ec);
  fs::remove_all(copy, ec);
  if (dir_name(source) == source || !fs::create_directory(copy, ec) || ec) copy = scratch + "/src";
  out.ran = true;
  auto clean = [&] {
    fs::remove_all(scratch, ec);
    fs::remove_all(copy, ec);
  };
  if (!link_tree(source, copy, build.build_dir, out.failure)) {
    clean();
    return out;
  }
  for (const auto& e : edits) {
    const std::string file = copy + e.file.substr(source.size());
    fs::remove(file, ec);
    (void)write_atomic(file, e.after, Parents::Create);
  }
  (void)write_atomic(copy_build + "/CMakeCache.txt", moved_cache(*cache, copy, copy_build), Parents::Create);
  (void)write_atomic(copy_build + "/.cmake/api/v1/query/codemodel-v2", "", Parents::Create);
  copy_compiler_files(build.build_dir, copy_build);
  auto run = cmake::run_cmake({cmake::cmake_program(build), "-S", copy, "-B", copy_build}, copy_build, timeout_seconds);
  if (!run.started || run.timed_out || run.status != 0) {
    out.failure = run.timed_out ? "the configure did not finish within " + std::to_string(timeout_seconds) + " s"
                                : cmake::first_cmake_error(run.output);
    if (out.failure.empty()) out.failure = "cmake failed";
    // The copy's paths read as the tree's own.
    for (size_t at = out.failure.find(copy); at != std::string::npos; at = out.failure.find(copy, at))
      out.failure.replace(at, copy.size(), source);
  } else {
    Model checked;
    checked.build_dir = copy_build;
    checked.source_dir = copy;
    cmake::read_file_api(checked);
    for (const auto& want : wanted) {
      const std::string& target = want.first;
      const std::string& file = want.second;
      // A file outside the sources (a generated porting tree in the build) keeps its path in the copy.
      const std::string in_copy = under(file, source) ? copy + file.substr(source.size()) : file;
      // Compiled by it, or among its sources (FindCUDA's .cu files are compiled by custom commands).
      const bool compiled = std::any_of(checked.targets.begin(), checked.targets.end(), [&](const Target& t) {
        return t.name == target && (checked.compiled_by(t, in_copy) ||
                                    std::find(t.sources.begin(), t.sources.end(), in_copy) != t.sources.end());
      });
      if (!compiled) out.not_compiled.emplace_back(target, file);
    }
  }
  clean();
  return out;
}

}  // namespace mlc::build
