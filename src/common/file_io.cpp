// Atomic replacement: write a sibling temporary, fsync it (unless it is a cache: Flush, file_io.h), rename it
// over the target. Only a regular file (or none) is replaced that way; a device, a FIFO, a socket or a
// descriptor path is written in place.
#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mlc {

bool read_text_into(const std::string& path, std::string& buf) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool read = read_fd_into(fd, buf);
  close(fd);
  return read;
}

bool read_fd_into(int fd, std::string& buf, const struct stat* known) {
  buf.clear();
  // Read in place into a buffer the size fstat gives (one allocation, each page touched once: a cache of
  // 200 KB was three reallocations and copies), growing only if the file grew; a pipe or a /proc file,
  // whose size says nothing, is read 64 KB at a time.
  struct stat st;
  if (known) st = *known;
  const bool sized = known || fstat(fd, &st) == 0;
  size_t want = sized && S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : 65536;
  size_t done = 0;
  for (;;) {
    if (buf.size() < done + 1) buf.resize(std::max(done + want, buf.size() * 2));
    ssize_t n = read(fd, buf.data() + done, buf.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      buf.clear();
      return false;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
    want = 65536;
  }
  buf.resize(done);
  return true;
}

std::optional<std::string> read_text(const std::string& path) {
  std::string text;
  if (!read_text_into(path, text)) return std::nullopt;
  return text;
}

namespace {

std::optional<InputError> write_all(int fd, const std::string& path, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return InputError{path, std::string("cannot write: ") + std::strerror(errno)};
    done += static_cast<size_t>(n);
  }
  return std::nullopt;
}

// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name a descriptor this process already has:
// the text goes to that descriptor, so `-o /dev/stdout > f` appends to what the shell opened instead of
// truncating it (or, renamed over, replacing it with a file nobody reads). -1 for any other path.
int descriptor_named(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    std::string p(prefix);
    if (path.rfind(p, 0) != 0 || path.size() == p.size()) continue;
    std::string digits = path.substr(p.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(digits);
  }
  return -1;
}

// A node that is not a regular file (a character device such as /dev/null, a FIFO, a socket) is opened
// and written in place: rename(2) over it would replace the node itself, and as root /dev/null would
// become a regular file every later process appends to.
std::optional<InputError> write_in_place(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return InputError{path, std::string("cannot write: ") + std::strerror(errno)};
  auto err = write_all(fd, path, text);
  close(fd);
  return err;
}

}  // namespace

bool written_in_place(const std::string& path) {
  if (descriptor_named(path) >= 0) return true;
  struct stat st;
  return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

std::optional<InputError> write_atomic(const std::string& requested, const std::string& text, Parents parents,
                                       Flush flush) {
  if (int fd = descriptor_named(requested); fd >= 0) return write_all(fd, requested, text);
  // A symbolic link is written through: the file it names is replaced, the link a person made stays.
  std::error_code ec;
  std::string path = requested;
  struct stat link;
  if (lstat(requested.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    auto target = std::filesystem::weakly_canonical(requested, ec);
    if (!ec) path = target.string();
  }
  struct stat st;
  bool exists = stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return InputError{requested, "cannot write: it is a directory"};
    return write_in_place(path, text);
  }
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && parents == Parents::Create) std::filesystem::create_directories(parent, ec);
  struct stat dir;
  if (!parent.empty() && stat(parent.c_str(), &dir) != 0 && errno == ENOENT)
    return InputError{requested, "cannot write: its directory " + parent.string() + " does not exist"};
  mode_t mode = exists ? (st.st_mode & 07777) : 0644;
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return InputError{requested, std::string("cannot write: ") + std::strerror(errno)};
  if (auto err = write_all(fd, requested, text)) {
    close(fd);
    unlink(tmp.c_str());
    return err;
  }
  fchmod(fd, mode);
  if (flush == Flush::BeforeRename) fsync(fd);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return InputError{requested, std::string("cannot replace: ") + std::strerror(err)};
  }
  return std::nullopt;
}

}  // namespace mlc
