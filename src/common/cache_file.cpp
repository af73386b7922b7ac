#include "common/cache_file.h"

#include <vector>

#include "common/file_io.h"

namespace mlc {

bool read_cache_file(const std::string& path, const CacheFormat& format, std::string_view key,
                     const std::function<bool(std::span<const std::string_view>)>& row) {
  std::string text;
  if (!read_text_into(path, text)) return false;
  return read_cache_text(text, format, key, row);
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
