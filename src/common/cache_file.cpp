#include "common/cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "common/file_io.h"

namespace mlc {

namespace {

// From this size on, a cache is read where the page cache holds it: mapped with its pages at once
// (MAP_POPULATE), not copied into memory of the process's own. On a virtual machine the first touch of a
// page is what a read costs: the 175 KB of a venv's kept run-time look-ups took 0.7 ms read into a new
// buffer and 0.05 ms mapped (a fresh process, 2 cores). Our caches are replaced by a rename, never
// rewritten in place, so a mapping reads one version of a file.
constexpr off_t kMappedFrom = off_t{64} << 10;

}  // namespace

bool read_cache_file(const std::string& path, const CacheFormat& format, std::string_view key,
                     const std::function<bool(std::span<const std::string_view>)>& row,
                     const std::function<bool()>& then) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  const bool sized = fstat(fd, &st) == 0;
  if (sized && S_ISREG(st.st_mode) && st.st_size >= kMappedFrom) {
    const auto size = static_cast<size_t>(st.st_size);
    void* text = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (text == MAP_FAILED) return false;
    const bool read =
        read_cache_text(std::string_view(static_cast<const char*>(text), size), format, key, row) && (!then || then());
    munmap(text, size);
    return read;
  }
  std::string text;
  const bool opened = read_fd_into(fd, text, sized ? &st : nullptr);
  close(fd);
  return opened && read_cache_text(text, format, key, row) && (!then || then());
}

bool read_cache_text(std::string_view all, const CacheFormat& format, std::string_view key,
                     const std::function<bool(std::span<const std::string_view>)>& row) {
  if (!all.starts_with(format.magic)) return false;
  all.remove_prefix(format.magic.size());
  if (!all.starts_with(key)) return false;
  all.remove_prefix(key.size());
  std::vector<std::string_view> fields(format.fields);
  size_t rows = 0;
  while (!all.empty()) {
    size_t eol = all.find('\n');
    if (eol == std::string_view::npos) return false;  // cut short
    std::string_view line = all.substr(0, eol);
    all.remove_prefix(eol + 1);
    // The count closes the file: anything missing or added makes it corrupt.
    if (line.starts_with("end\t")) return all.empty() && line.substr(4) == std::to_string(rows);
    if (format.fields == 0) {
      fields.clear();
      for (size_t tab; (tab = line.find('\t')) != std::string_view::npos; line.remove_prefix(tab + 1))
        fields.push_back(line.substr(0, tab));
      fields.push_back(line);
    } else {
      for (size_t i = 0; i + 1 < format.fields; ++i) {
        size_t tab = line.find('\t');
        if (tab == std::string_view::npos) return false;
        fields[i] = line.substr(0, tab);
        line.remove_prefix(tab + 1);
      }
      if (line.find('\t') != std::string_view::npos) return false;
      fields.back() = line;
    }
    if (!row(fields)) return false;
    ++rows;
  }
  return false;  // no end line
}

CacheWriter::CacheWriter(const CacheFormat& format, std::string_view key) : text_(format.magic) { text_ += key; }

bool CacheWriter::add(std::span<const std::string_view> fields) {
  for (std::string_view f : fields)
    if (f.find_first_of("\t\n") != std::string_view::npos) return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    text_ += fields[i];
    text_ += i + 1 == fields.size() ? '\n' : '\t';
  }
  ++rows_;
  return true;
}

void CacheWriter::write(const std::string& path) {
  // A cache that cannot be written costs the next run time, nothing else; nor does one a crash tore, which
  // its end line rejects: so no flush.
  (void)write_atomic(path, text_ + "end\t" + std::to_string(rows_) + "\n", Parents::Create, Flush::Never);
}

}  // namespace mlc
