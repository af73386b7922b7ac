#include "common/walk.h"

#include <dirent.h>

#include <algorithm>
#include <vector>

#include <tbb/parallel_for.h>

namespace mlc {
namespace {

// False once the file limit is reached (the walk stops).
bool walk(const std::string& dir, const std::function<void(const std::string&, const struct stat&)>& on_file,
          const WalkOptions& o, int depth, size_t& files) {
  if (depth > 64 || dir.find('\0') != std::string::npos) return true;  // a NUL would cut the path short
  for (const auto& n : sorted_entries(dir)) {
    if (o.skip_hidden && n[0] == '.') continue;
    std::string p = dir + (dir.back() == '/' ? "" : "/") + n;
    struct stat st;
    if ((o.follow_symlinks ? stat(p.c_str(), &st) : lstat(p.c_str(), &st)) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth >= o.max_depth || (o.skip_dir && o.skip_dir(p))) continue;
      if (!walk(p, on_file, o, depth + 1, files)) return false;
    } else if (S_ISREG(st.st_mode)) {
      if (o.max_files && files >= o.max_files) return false;
      ++files;
      on_file(p, st);
    }
  }
  return true;
}

std::vector<std::string> collect(const std::string& dir,
                                 const std::function<bool(const std::string&, const struct stat&)>& keep,
                                 const WalkOptions& o, int depth) {
  if (depth > 64 || dir.find('\0') != std::string::npos) return {};
  const std::vector<std::string> names = sorted_entries(dir);
  std::vector<std::vector<std::string>> parts(names.size());
  tbb::parallel_for(size_t{0}, names.size(), [&](size_t i) {
    const std::string& n = names[i];
    if (o.skip_hidden && n[0] == '.') return;
    std::string p = dir + (dir.back() == '/' ? "" : "/") + n;
    struct stat st;
    if ((o.follow_symlinks ? stat(p.c_str(), &st) : lstat(p.c_str(), &st)) != 0) return;
    if (S_ISDIR(st.st_mode)) {
      if (depth >= o.max_depth || (o.skip_dir && o.skip_dir(p))) return;
      parts[i] = collect(p, keep, o, depth + 1);
    } else if (S_ISREG(st.st_mode) && keep(p, st)) {
      parts[i].push_back(std::move(p));
    }
  });
  std::vector<std::string> out;
  for (auto& part : parts)
    for (auto& p : part) out.push_back(std::move(p));
  return out;
}

}  // namespace

std::vector<std::string> collect_tree(const std::string& dir,
                                      const std::function<bool(const std::string&, const struct stat&)>& keep,
                                      const WalkOptions& options) {
  return collect(dir, keep, options, 0);
}

std::vector<std::string> sorted_entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* de = readdir(d)) {
      std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool walk_tree(const std::string& dir, const std::function<void(const std::string&, const struct stat&)>& on_file,
               const WalkOptions& options) {
  size_t files = 0;
  return walk(dir, on_file, options, 0, files);
}

}  // namespace mlc
