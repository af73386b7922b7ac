#include "common/walk.h"

#include <dirent.h>

#include <algorithm>
#include <vector>

namespace mlc {
namespace {

void walk(const std::string& dir, const std::function<void(const std::string&, const struct stat&)>& on_file,
          const WalkOptions& o, int depth) {
  if (depth > 64 || dir.find('\0') != std::string::npos) return;  // a NUL would cut the path short
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n == "." || n == "..") continue;
    if (o.skip_hidden && n[0] == '.') continue;
    names.push_back(std::move(n));
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string p = dir + (dir.back() == '/' ? "" : "/") + n;
    struct stat st;
    if ((o.follow_symlinks ? stat(p.c_str(), &st) : lstat(p.c_str(), &st)) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      walk(p, on_file, o, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
      on_file(p, st);
    }
  }
}

}  // namespace

void walk_tree(const std::string& dir, const std::function<void(const std::string&, const struct stat&)>& on_file,
               const WalkOptions& options) {
  walk(dir, on_file, options, 0);
}

}  // namespace mlc
