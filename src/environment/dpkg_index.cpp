// The dpkg index: one pass over info/*.list keeping shared-object lines, versions from one pass
// over status, and a cache file so the next run reads one small file instead of a thousand lists.
// Any install, upgrade or removal renames a .list into info/ and rewrites status, which changes
// their mtimes: that pair (with status's size) is the cache key.
#include "environment/dpkg_index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "common/file_io.h"

namespace mlc::environment {
namespace {

constexpr std::string_view kMagic = "mlc-dpkg-owner-index 1\n";

std::string mtime_of(const struct stat& st) {
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// The key a cache must carry to answer for `dpkg_dir` now; "" when the database cannot be read.
std::string database_key(const std::string& dpkg_dir) {
  struct stat info, status;
  if (stat((dpkg_dir + "/info").c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return "";
  std::string key = "key\t" + dpkg_dir + "\t" + mtime_of(info);
  if (stat((dpkg_dir + "/status").c_str(), &status) == 0) key += "\t" + mtime_of(status) + "\t" + std::to_string(status.st_size);
  else key += "\t-\t-";
  return key + "\n";
}

// FNV-1a: a stable file name per dpkg directory (fake roots in tests share the cache directory).
std::string name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char out[17];
  snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
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

DpkgIndex build(const std::string& dpkg_dir) {
  DpkgIndex index;
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
      else if (auto bare = versions.find(std::string_view(package).substr(0, package.find(':'))); bare != versions.end())
        version = bare->second;
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
          index.files.try_emplace(std::string(line), DpkgEntry{.package = package, .version = version});
        at = end + 1;
      }
    }
    closedir(d);
  }
  return index;
}

std::optional<DpkgIndex> read_cache(const std::string& path, const std::string& key) {
  std::string text;
  if (!read_text_into(path, text)) return std::nullopt;
  std::string_view all = text;
  if (!all.starts_with(kMagic)) return std::nullopt;
  all.remove_prefix(kMagic.size());
  if (!all.starts_with(key)) return std::nullopt;
  all.remove_prefix(key.size());
  DpkgIndex index;
  index.from_cache = true;
  while (!all.empty()) {
    size_t eol = all.find('\n');
    if (eol == std::string_view::npos) return std::nullopt;  // cut short
    std::string_view line = all.substr(0, eol);
    all.remove_prefix(eol + 1);
    if (line.starts_with("end\t")) {
      // The count closes the file: anything missing or added makes it corrupt.
      if (!all.empty() || line.substr(4) != std::to_string(index.files.size())) return std::nullopt;
      return index;
    }
    size_t t1 = line.find('\t');
    size_t t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string_view::npos || line.find('\t', t2 + 1) != std::string_view::npos || t1 == 0 || t2 == t1 + 1)
      return std::nullopt;
    index.files.try_emplace(std::string(line.substr(0, t1)),
                            DpkgEntry{.package = std::string(line.substr(t1 + 1, t2 - t1 - 1)),
                                      .version = std::string(line.substr(t2 + 1))});
  }
  return std::nullopt;  // no end line
}

void write_cache(const std::string& path, const std::string& key, const DpkgIndex& index) {
  std::string out(kMagic);
  out += key;
  for (const auto& [file, entry] : index.files) {
    if (entry.package.find_first_of("\t\n") != std::string::npos || entry.version.find_first_of("\t\n") != std::string::npos)
      continue;
    out += file + "\t" + entry.package + "\t" + entry.version + "\n";
  }
  // The count is of the lines written (an entry skipped above is not counted).
  size_t lines = 0;
  for (char c : out) lines += c == '\n';
  out += "end\t" + std::to_string(lines - 2) + "\n";
  (void)write_atomic(path, out, Parents::Create);  // a cache that cannot be written costs the next run time, nothing else
}

}  // namespace

bool dpkg_index_covers(const std::string& path) { return shared_object_line(path); }

std::optional<DpkgIndex> load_dpkg_index(const std::string& dpkg_dir, const std::string& cache_dir) {
  std::string key = database_key(dpkg_dir);
  if (key.empty()) return std::nullopt;
  std::string cache = cache_dir.empty() ? "" : cache_dir + "/dpkg-owners-" + name_hash(dpkg_dir) + ".tsv";
  if (!cache.empty())
    if (auto cached = read_cache(cache, key)) return cached;
  DpkgIndex index = build(dpkg_dir);
  // Written only when the database did not change while it was read (else the key would lie).
  if (!cache.empty() && database_key(dpkg_dir) == key) write_cache(cache, key, index);
  return index;
}

}  // namespace mlc::environment
