#include "common/cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "common/file_io.h"

namespace mlc {

namespace {

constexpr off_t kMappedFrom = off_t{64} << 10;

}  // namespace

CacheText::CacheText(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  const bool sized = fstat(fd, &st) == 0;
  if (sized && S_ISREG(st.st_mode) && st.st_size >= kMappedFrom) {
    const auto size = static_cast<size_t>(st.st_size);
    void* text = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (text == MAP_FAILED) return;
    mapped_ = text;
    mapped_size_ = size;
    text_ = std::string_view(static_cast<const char*>(text), size);
    opened_ = true;
    return;
  }
  opened_ = read_fd_into(fd, read_, sized ? &st : nullptr);
  close(fd);
  text_ = read_;
}

CacheText::CacheText(CacheText&& other) noexcept { *this = std::move(other); }

CacheText& CacheText::operator=(CacheText&& other) noexcept {
  if (this == &other) return *this;
  release();
  opened_ = std::exchange(other.opened_, false);
  mapped_ = std::exchange(other.mapped_, nullptr);
  mapped_size_ = std::exchange(other.mapped_size_, 0);
  // A read text's views move with its buffer only when the string owns a heap buffer: one kept inline (a short
  // file) moves by copy, so the view is made again over this object's own string.
  read_ = std::move(other.read_);
  text_ = mapped_ ? std::exchange(other.text_, {}) : std::string_view(read_);
  other.text_ = {};
  other.read_.clear();
  return *this;
}

CacheText::~CacheText() { release(); }

void CacheText::release() {
  if (mapped_) munmap(mapped_, mapped_size_);
  mapped_ = nullptr;
  mapped_size_ = 0;
  read_.clear();
  text_ = {};
  opened_ = false;
}

bool read_cache_file(const std::string& path, const CacheFormat& format, std::string_view key,
                     const std::function<bool(std::span<const std::string_view>)>& row,
                     const std::function<bool()>& then) {
  const CacheText text(path);
  return text.opened() && read_cache_text(text.text(), format, key, row) && (!then || then());
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
