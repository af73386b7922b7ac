// One directory walker for the whole core: sorted (deterministic), bounded in depth (a symlink loop
// ends the walk instead of hanging it).
#pragma once

#include <sys/stat.h>

#include <functional>
#include <string>

namespace mlc {

struct WalkOptions {
  bool skip_hidden = false;      // skip entries whose name starts with '.' (.git ...)
  bool follow_symlinks = true;   // false: symlinks (to files or directories) are not visited
};

// Calls on_file(path, stat) for every regular file below dir, in sorted order.
void walk_tree(const std::string& dir, const std::function<void(const std::string&, const struct stat&)>& on_file,
               const WalkOptions& options = {});

}  // namespace mlc
