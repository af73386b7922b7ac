// Reading and writing whole text files. Every file the tools write goes through write_atomic: a
// temporary file beside the target, then rename(2), so a reader (or a crash) never sees half a file.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

#include "common/result.h"

namespace mlc {

std::optional<std::string> read_text(const std::string& path);
// The same into a buffer the caller reuses (many small files, as dpkg's lists): false when it cannot be read.
bool read_text_into(const std::string& path, std::string& buf);
// The same from an open descriptor, read to its end (the caller closes it); `known`: its fstat, when the
// caller made it already.
bool read_fd_into(int fd, std::string& buf, const struct stat* known = nullptr);

// Whether a missing parent directory is created (a cache of ours) or is an error (a file the user
// named: a typo in -o must not make a directory tree).
enum class Parents { MustExist, Create };

// Whether the bytes reach the disk before the rename (fsync): yes for what a person keeps (a report, a patched
// file, a stub); not for a cache whose reader rejects a torn file by its own end line (common/cache_file.h),
// which would otherwise pay a flush per cache on every cold run (most of its cost: docs/benchmarks.md, fifth
// pass) to save one recomputation after a power loss.
enum class Flush { BeforeRename, Never };

// Keeps the permissions of a file it replaces, and a symbolic link (the file it names is replaced). A path
// that names no regular file (/dev/null, a FIFO, /dev/stdout, /proc/self/fd/N) is written in place, never
// renamed over.
std::optional<InputError> write_atomic(const std::string& path, const std::string& text,
                                       Parents parents = Parents::MustExist, Flush flush = Flush::BeforeRename);

// True for a path write_atomic writes in place: a descriptor path (/dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N) or an existing node that is neither a regular file nor a directory.
bool written_in_place(const std::string& path);

}  // namespace mlc
