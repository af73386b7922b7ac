// Atomic replacement: write a sibling temporary, fsync it, rename it over the target.
#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mlc {

bool read_text_into(const std::string& path, std::string& buf) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  buf.clear();
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return false;
    }
    if (n == 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

std::optional<std::string> read_text(const std::string& path) {
  std::string text;
  if (!read_text_into(path, text)) return std::nullopt;
  return text;
}

std::optional<InputError> write_atomic(const std::string& path, const std::string& text, Parents parents) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && parents == Parents::Create) std::filesystem::create_directories(parent, ec);
  struct stat dir;
  if (!parent.empty() && stat(parent.c_str(), &dir) != 0 && errno == ENOENT)
    return InputError{path, "cannot write: its directory " + parent.string() + " does not exist"};
  mode_t mode = 0644;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return InputError{path, std::string("cannot write: ") + std::strerror(errno)};
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return InputError{path, std::string("cannot write: ") + std::strerror(err)};
    }
    done += static_cast<size_t>(n);
  }
  fchmod(fd, mode);
  fsync(fd);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return InputError{path, std::string("cannot replace: ") + std::strerror(err)};
  }
  return std::nullopt;
}

}  // namespace mlc
