// What was read from a file, kept for the rest of the run while the file stays the same: one parse of
// ld.so.cache or compile_commands.json per run, however many inputs and passes ask for it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/paths.h"

namespace mlc {

template <class T>
class KeptFile {
 public:
  // What `read()` made of `path`: kept while the file's identity (device, inode, size, mtime, ctime)
  // stays the same, read again once it changes. A file that cannot be stat'ed, or a null read, is not
  // kept. One read at a time: callers in parallel wait for the first instead of parsing beside it.
  template <class Read>
  std::shared_ptr<const T> get(const std::string& path, Read read) {
    const std::string identity = file_identity(path);
    std::lock_guard lock(mutex_);
    auto it = kept_.find(path);
    if (!identity.empty() && it != kept_.end() && it->second.identity == identity) return it->second.value;
    std::shared_ptr<const T> value = read();
    if (!identity.empty() && value) kept_[path] = Kept{identity, value};
    return value;
  }

 private:
  struct Kept {
    std::string identity;
    std::shared_ptr<const T> value;
  };
  std::mutex mutex_;
  std::map<std::string, Kept> kept_;  // by path
};

}  // namespace mlc
