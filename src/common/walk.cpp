#include "common/walk.h"

#include <dirent.h>

#include <algorithm>
#include <vector>

#include <tbb/parallel_for.h>

namespace mlc {
namespace {

// Whether a walk can read `dir` at all (a NUL would cut the path short; a symlink loop ends at 64 levels).
bool walkable(const std::string& dir, int depth) { return depth <= 64 && dir.find('\0') == std::string::npos; }

// One entry of dir as both walks see it: its path and stat, and whether it is a directory to enter, a
// regular file, or neither (hidden and skipped, unreadable, too deep, not a file).
enum class Entry { Skip, Dir, File };
Entry look_at(const std::string& dir, const std::string& name, const WalkOptions& o, int depth, std::string& path,
              struct stat& st) {
  if (o.skip_hidden && name[0] == '.') return Entry::Skip;
  path = dir + (dir.back() == '/' ? "" : "/") + name;
  if ((o.follow_symlinks ? stat(path.c_str(), &st) : lstat(path.c_str(), &st)) != 0) return Entry::Skip;
  if (S_ISDIR(st.st_mode)) return depth >= o.max_depth || (o.skip_dir && o.skip_dir(path)) ? Entry::Skip : Entry::Dir;
  return S_ISREG(st.st_mode) ? Entry::File : Entry::Skip;
}

// False once the file limit is reached (the walk stops).
bool walk(const std::string& dir, const std::function<void(const std::string&, const struct stat&)>& on_file,
          const WalkOptions& o, int depth, size_t& files) {
  if (!walkable(dir, depth)) return true;
  for (const auto& n : sorted_entries(dir)) {
    std::string p;
    struct stat st;
    const Entry e = look_at(dir, n, o, depth, p, st);
    if (e == Entry::Dir && !walk(p, on_file, o, depth + 1, files)) return false;
    if (e == Entry::File) {
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
  if (!walkable(dir, depth)) return {};
  const std::vector<std::string> names = sorted_entries(dir);
  std::vector<std::vector<std::string>> parts(names.size());
  tbb::parallel_for(size_t{0}, names.size(), [&](size_t i) {
    std::string p;
    struct stat st;
    const Entry e = look_at(dir, names[i], o, depth, p, st);
    if (e == Entry::Dir) parts[i] = collect(p, keep, o, depth + 1);
    else if (e == Entry::File && keep(p, st)) parts[i].push_back(std::move(p));
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
