// One directory walker for the whole core: sorted (deterministic), bounded in depth (a symlink loop
// ends the walk instead of hanging it).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mlc {

struct WalkOptions {
  bool skip_hidden = false;     // skip entries whose name starts with '.' (.git ...)
  bool follow_symlinks = true;  // false: symlinks (to files or directories) are not visited
  int max_depth = 64;           // 0: only the files directly in dir
  size_t max_files = 0;         // stop after visiting this many files (0: no limit)
  std::function<bool(const std::string&)> skip_dir = nullptr;  // a directory below dir not to enter
};

// Calls on_file(path, stat) for every regular file below dir, in sorted order. Returns false when
// max_files cut the walk short.
bool walk_tree(const std::string& dir, const std::function<void(const std::string&, const struct stat&)>& on_file,
               const WalkOptions& options = {});

// The regular files below dir that keep(path, stat) accepts, in walk_tree's order, the subdirectories
// walked in parallel (a venv's site directory is tens of thousands of entries): keep is called from
// several threads at once. max_files is not supported here (ignored).
std::vector<std::string> collect_tree(const std::string& dir,
                                      const std::function<bool(const std::string&, const struct stat&)>& keep,
                                      const WalkOptions& options = {});

// The names in dir but "." and "..", sorted (deterministic); none when it cannot be read.
std::vector<std::string> sorted_entries(const std::string& dir);

}  // namespace mlc
