// The dpkg index: one pass over info/*.list keeping shared-object lines, versions from one pass
// over status, and a cache file so the next run reads one small file instead of a thousand lists.
// Any install, upgrade or removal renames a .list into info/ and rewrites status, which changes
// their mtimes: that pair (with status's size) is the cache key.
#include "environment/dpkg_index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "common/cache_file.h"
#include "common/file_io.h"
#include "common/hash.h"

namespace mlc::environment {
namespace {

constexpr CacheFormat kFormat{.magic = "mlc-dpkg-owner-index 2\n", .fields = 3};  // rows sorted by path

std::string mtime_of(const struct stat& st) {
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// The key a cache must carry to answer for `dpkg_dir` now; "" when the database cannot be read.
std::string database_key(const std::string& dpkg_dir) {
  struct stat info, status;
  if (stat((dpkg_dir + "/info").c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return "";
  std::string key = "key\t" + dpkg_dir + "\t" + mtime_of(info);
  if (stat((dpkg_dir + "/status").c_str(), &status) == 0)
    key += "\t" + mtime_of(status) + "\t" + std::to_string(status.st_size);
  else key += "\t-\t-";
  return key + "\n";
}

// package ("name" and "name:arch") -> Version, from one pass over status.
std::map<std::string, std::string, std::less<>> read_versions(const std::string& dpkg_dir) {
  std::map<std::string, std::string, std::less<>> out;
  std::string text;
  if (!read_text_into(dpkg_dir + "/status", text)) return out;
  std::string_view all = text;
  auto field = [](std::string_view stanza, std::string_view name) -> std::string_view {
    for (size_t at = 0; at < stanza.size();) {
      size_t eol = stanza.find('\n', at);
      std::string_view line = stanza.substr(at, eol == std::string_view::npos ? std::string_view::npos : eol - at);
      if (line.size() > name.size() + 1 && line.starts_with(name) && line[name.size()] == ':')
        return line.substr(name.size() + (line.size() > name.size() + 1 && line[name.size() + 1] == ' ' ? 2 : 1));
      if (eol == std::string_view::npos) break;
      at = eol + 1;
    }
    return {};
  };
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find("\n\n", at);
    std::string_view stanza = all.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    at = end == std::string_view::npos ? all.size() : end + 2;
    std::string name(field(stanza, "Package"));
    std::string version(field(stanza, "Version"));
    if (name.empty() || version.empty()) continue;
    std::string arch(field(stanza, "Architecture"));
    out.emplace(name, version);  // the first stanza of a name answers for the bare name
    if (!arch.empty()) out.emplace(name + ":" + arch, version);
  }
  return out;
}

// Whether line [begin, end) names a shared object: ".so" in its last component.
bool shared_object_line(std::string_view line) {
  size_t slash = line.rfind('/');
  return slash != std::string_view::npos && line.find(".so", slash) != std::string_view::npos;
}

// The rows, sorted by path: the index's text and the cache's body.
using Rows = std::map<std::string, std::pair<std::string, std::string>>;

Rows build(const std::string& dpkg_dir) {
  Rows rows;
  auto versions = read_versions(dpkg_dir);
  std::string text;
  if (DIR* d = opendir((dpkg_dir + "/info").c_str())) {
    while (dirent* e = readdir(d)) {
      std::string_view name = e->d_name;
      if (!name.ends_with(".list")) continue;
      if (!read_text_into(dpkg_dir + "/info/" + std::string(name), text)) continue;
      std::string package(name.substr(0, name.size() - 5));
      std::string version;
      if (auto it = versions.find(package); it != versions.end()) version = it->second;
      else if (auto bare = versions.find(std::string_view(package).substr(0, package.find(':')));
               bare != versions.end())
        version = bare->second;
      // A package or version with a tab or a newline cannot be a row: its files stay unowned.
      if (package.find_first_of("\t\n") != std::string::npos || version.find_first_of("\t\n") != std::string::npos)
        continue;
      // Only the lines holding ".so": memmem finds them, the line around each hit is then checked.
      const char* base = text.data();
      size_t size = text.size();
      for (size_t at = 0; at < size;) {
        const void* hit = memmem(base + at, size - at, ".so", 3);
        if (!hit) break;
        size_t pos = static_cast<size_t>(static_cast<const char*>(hit) - base);
        size_t begin = std::string_view(base, pos).rfind('\n');
        begin = begin == std::string_view::npos ? 0 : begin + 1;
        size_t end = std::string_view(base, size).find('\n', pos);
        if (end == std::string_view::npos) end = size;
        std::string_view line(base + begin, end - begin);
        // A path with a tab cannot be written to the cache's tab-separated lines: it stays unowned.
        if (shared_object_line(line) && line.find('\t') == std::string_view::npos)
          rows.try_emplace(std::string(line), package, version);
        at = end + 1;
      }
    }
    closedir(d);
  }
  return rows;
}

void write_cache(const std::string& path, const std::string& key, const Rows& rows) {
  CacheWriter out(kFormat, key);
  for (const auto& [file, entry] : rows)
    (void)out.add(std::array<std::string_view, 3>{file, entry.first, entry.second});
  out.write(path);
}

}  // namespace

struct DpkgIndexAccess {
  static DpkgIndex of(const Rows& rows) {
    DpkgIndex index;
    for (const auto& [file, entry] : rows) {
      index.rows_.push_back(index.built_.size());
      index.built_ += file;
      index.built_ += '\t';
      index.built_ += entry.first;
      index.built_ += '\t';
      index.built_ += entry.second;
      index.built_ += '\n';
    }
    return index;
  }

  // path TAB package TAB version, the path and the package never empty, the paths strictly increasing (sorted,
  // each once: a file we did not write otherwise).
  static std::optional<DpkgIndex> read(const std::string& path, const std::string& key) {
    DpkgIndex index;
    index.from_cache = true;
    index.cached_ = CacheText(path);
    if (!index.cached_.opened()) return std::nullopt;
    std::string_view previous;
    const char* base = index.cached_.text().data();
    bool read = read_cache_text(index.cached_.text(), kFormat, key, [&](std::span<const std::string_view> f) {
      if (f[0].empty() || f[1].empty() || (!previous.empty() && f[0] <= previous)) return false;
      previous = f[0];
      index.rows_.push_back(static_cast<size_t>(f[0].data() - base));
      return true;
    });
    if (!read) return std::nullopt;
    return index;
  }
};

std::string_view DpkgIndex::path(size_t row) const {
  std::string_view rest = text().substr(rows_[row]);
  return rest.substr(0, rest.find('\t'));
}

DpkgEntry DpkgIndex::entry(size_t row) const {
  std::string_view rest = text().substr(rows_[row]);
  rest.remove_prefix(rest.find('\t') + 1);
  const size_t tab = rest.find('\t');
  return {.package = rest.substr(0, tab), .version = rest.substr(tab + 1, rest.find('\n') - tab - 1)};
}

std::optional<DpkgEntry> DpkgIndex::find(std::string_view file) const {
  size_t low = 0, high = rows_.size();
  while (low < high) {
    const size_t mid = low + (high - low) / 2;
    if (path(mid) < file) low = mid + 1;
    else high = mid;
  }
  if (low < rows_.size() && path(low) == file) return entry(low);
  return std::nullopt;
}

std::optional<std::string_view> DpkgIndex::version_of(std::string_view package) const {
  for (size_t row = 0; row < rows_.size(); ++row)
    if (const DpkgEntry e = entry(row); e.package == package) return e.version;
  return std::nullopt;
}

bool dpkg_index_covers(const std::string& path) { return shared_object_line(path); }

std::optional<DpkgIndex> load_dpkg_index(const std::string& dpkg_dir, const std::string& cache_dir) {
  std::string key = database_key(dpkg_dir);
  if (key.empty()) return std::nullopt;
  std::string cache = cache_dir.empty() ? "" : cache_dir + "/dpkg-owners-" + fnv1a_hex(dpkg_dir) + ".tsv";
  if (!cache.empty())
    if (auto cached = DpkgIndexAccess::read(cache, key)) return cached;
  const Rows rows = build(dpkg_dir);
  // Written only when the database did not change while it was read (else the key would lie).
  if (!cache.empty() && database_key(dpkg_dir) == key) write_cache(cache, key, rows);
  return DpkgIndexAccess::of(rows);
}

}  // namespace mlc::environment
