// Small path and identifier facts shared by every room: one definition each, so the rooms agree (on an
// identifier character above all).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mlc {

// The file name of a path: what follows its last '/' (the whole string when it has none).
inline std::string base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// What precedes a path's last '/': "" for "/x", the whole string when it has none (callers pass a path
// with a slash; dir_name below is dirname(1)).
inline std::string dir_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The directory part of a path, as dirname(1) gives it: "." for a bare name, "/" for the root's children.
// dir_view is the same as a view into the path (or a literal), for a look-up that keeps nothing.
inline std::string_view dir_view(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}
inline std::string dir_name(const std::string& path) { return std::string(dir_view(path)); }

// The directory above a path, for a walk toward the root: "/" for the root's children and for a path with
// no slash (where dir_name says "."), so a walk that stops at "/" always ends.
inline std::string parent_dir(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// dir + "/" + name, without doubling a trailing slash; an empty dir leaves the name as it is. join_path_into
// writes it into `out`, whose buffer a caller making thousands of paths reuses.
inline void join_path_into(std::string& out, std::string_view dir, std::string_view name) {
  out.assign(dir);
  if (!dir.empty() && dir.back() != '/') out += '/';
  out += name;
}
inline std::string join_path(const std::string& dir, const std::string& name) {
  std::string out;
  out.reserve(dir.size() + name.size() + 1);
  join_path_into(out, dir, name);
  return out;
}

// This process's working directory, "" when it cannot be had.
inline std::string current_dir() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}

// The path with every symlink, "." and ".." resolved (realpath(3)); the path as given when it cannot be.
inline std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// real_path for many files in few directories, with the same answers: realpath(3) reads every component of
// every path with readlink(2) (six calls for /usr/lib/x86_64-linux-gnu/libz.so.1: 1,700 for a closure of
// 285 libraries), while here each directory is resolved once and each file's own symlinks are followed
// from there (a link to a name in the same directory, as a soname's is); anything else (a link with a
// '/', a path with "." or "//", a failure) is real_path's. One per thread: the directories are memoised.
class RealPaths {
 public:
  std::string of(const std::string& path) {
    if (path.size() < 2 || path[0] != '/' || path.back() == '/' || path.find("/.") != std::string::npos ||
        path.find("//") != std::string::npos)
      return real_path(path);
    std::string current = path;
    for (int hops = 0; hops < 40; ++hops) {  // glibc's MAXSYMLINKS
      const size_t slash = current.rfind('/');
      auto [it, fresh] = dirs_.try_emplace(slash == 0 ? "/" : current.substr(0, slash));
      if (fresh) {
        char buf[PATH_MAX];
        it->second = realpath(it->first.c_str(), buf) ? std::string(buf) : std::string();
      }
      if (it->second.empty()) return real_path(path);
      const std::string resolved = join_path(it->second, current.substr(slash + 1));
      char target[PATH_MAX];
      const ssize_t n = readlink(resolved.c_str(), target, sizeof target);
      if (n < 0) return errno == EINVAL ? resolved : real_path(path);  // EINVAL: not a symlink
      const std::string_view link(target, static_cast<size_t>(n));
      if (static_cast<size_t>(n) == sizeof target || link.empty() || link == "." || link == ".." ||
          link.find('/') != std::string_view::npos)
        return real_path(path);
      current = join_path(it->second, std::string(link));
    }
    return real_path(path);
  }

 private:
  std::unordered_map<std::string, std::string> dirs_;  // a directory as asked -> its realpath ("" if none)
};

// Whether anything is at the path (following symlinks); false when stat(2) fails for any reason (a
// directory it may not search included: never throws, unlike std::filesystem::exists without an
// error_code).
inline bool path_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Whether the path is a directory (following symlinks).
inline bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A file's identity (stat_identity, below) as text of its own, made without allocating: seven numbers of at
// most 20 characters each and six separators.
struct IdentityText {
  char text[160];
  size_t size = 0;
  std::string_view view() const { return {text, size}; }
};
inline IdentityText identity_text(const struct stat& st) {
  IdentityText out;
  char* at = out.text;
  char* const end = out.text + sizeof out.text;
  const auto put = [&](auto value, char after) {
    at = std::to_chars(at, end, value).ptr;
    if (after) *at++ = after;
  };
  put(static_cast<uintmax_t>(st.st_dev), ':');
  put(static_cast<uintmax_t>(st.st_ino), ':');
  put(static_cast<intmax_t>(st.st_size), ':');
  put(static_cast<intmax_t>(st.st_mtim.tv_sec), '.');
  put(static_cast<intmax_t>(st.st_mtim.tv_nsec), ':');
  put(static_cast<intmax_t>(st.st_ctim.tv_sec), '.');
  put(static_cast<intmax_t>(st.st_ctim.tv_nsec), 0);
  out.size = static_cast<size_t>(at - out.text);
  return out;
}
// What a cache keyed by a file holds it to: device, inode, size, mtime and ctime (ns) as
// "dev:ino:size:mtime:ctime", following symlinks (lstat's when `follow` is false); "" when nothing is
// there. A file rewritten, replaced (a new inode) or touched, and a directory whose entries changed (its
// mtime), have another identity.
inline std::string stat_identity(const struct stat& st) { return std::string(identity_text(st).view()); }
inline std::string file_identity(const std::string& path, bool follow = true) {
  struct stat st;
  if ((follow ? stat(path.c_str(), &st) : lstat(path.c_str(), &st)) != 0) return "";
  return stat_identity(st);
}
// Whether the file at `path` (followed) has `identity` now: file_identity(path) == identity, with neither
// string allocated (a cache checks a thousand witnesses on its way in). As for stat(2), the path ends at a NUL,
// and one of PATH_MAX bytes or more names nothing (ENAMETOOLONG).
inline bool has_identity(std::string_view path, std::string_view identity) {
  char name[PATH_MAX];
  path = path.substr(0, path.find('\0'));
  if (path.size() >= sizeof name) return identity.empty();
  path.copy(name, path.size());
  name[path.size()] = '\0';
  struct stat st;
  if (stat(name, &st) != 0) return identity.empty();
  return identity_text(st).view() == identity;
}

// This program's own identity (file_identity of /proc/self/exe, read once): what a cache of answers another
// build of it may give otherwise is keyed by. "" when it cannot be read.
inline const std::string& program_identity() {
  static const std::string identity = file_identity("/proc/self/exe");
  return identity;
}

// The second before which a file's change is settled: a file system stamps times at a coarse granularity (a
// clock tick, a second, two on FAT), so a file changed at or after it may share its identity with its next
// version, and what was read of it is not kept.
inline time_t settled_since() { return time(nullptr) - 2; }
// When a file last changed, in seconds: the later of its mtime and ctime (what settled_since is held to).
inline int64_t changed_at(const struct stat& st) { return std::max<int64_t>(st.st_mtim.tv_sec, st.st_ctim.tv_sec); }

// Whether the path is a regular file (following symlinks).
inline bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Whether a file lies in the system's library directories (/lib, /usr/lib, /lib64, /usr/lib64, and
// below them): the distribution's world, found through ld.so.cache.
inline bool in_system_library_dir(std::string_view path) {
  for (std::string_view dir : {"/lib/", "/usr/lib/", "/lib64/", "/usr/lib64/"})
    if (path.substr(0, dir.size()) == dir) return true;
  return false;
}

// The length of the longest common prefix of a and b that ends at a '/': the directory they share.
inline size_t shared_dir_prefix(std::string_view a, std::string_view b) {
  size_t n = 0, last = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) {
    if (a[n] == '/') last = n;
    ++n;
  }
  return last;
}

// A C/C++ identifier's characters, in the C locale: [A-Za-z_] first, then [A-Za-z0-9_]. (GNU C's
// '$' in identifiers is the source scanner's own business.)
inline bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

}  // namespace mlc
