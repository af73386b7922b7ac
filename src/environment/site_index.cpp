// The site index: one pass over every RECORD (or conda-meta/*.json) keeping the shared-object rows,
// and a cache file keyed by the mtimes that any install, upgrade or removal changes: pip renames a
// dist-info directory into the site directory (its mtime), writes RECORD into the dist-info directory
// (that directory's mtime, RECORD's own mtime and size); conda writes conda-meta/<pkg>.json.
#include "environment/site_index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "common/file_io.h"

namespace mlc::environment {
namespace {

constexpr std::string_view kMagic = "mlc-site-owner-index 1\n";

std::vector<std::string> sorted_entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "mtime size" of a path, "-" when it cannot be stat'ed (a missing RECORD is part of the key too).
std::string stamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "-";
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_size);
}

// The key a cache must carry to answer for `dir` now: one line for the directory, one per record.
std::string records_key(const std::string& dir, RecordSource source) {
  std::string key = "key\t" + dir + "\t";
  if (source == RecordSource::DistInfo) {
    key += stamp(dir) + "\n";
    for (const auto& name : sorted_entries(dir))
      if (name.ends_with(".dist-info"))
        key += "dist\t" + name + "\t" + stamp(dir + "/" + name) + "\t" + stamp(dir + "/" + name + "/RECORD") + "\n";
  } else {
    std::string meta = dir + "/conda-meta";
    key += stamp(meta) + "\n";
    for (const auto& name : sorted_entries(meta))
      if (name.ends_with(".json")) key += "meta\t" + name + "\t" + stamp(meta + "/" + name) + "\n";
  }
  return key + "endkey\n";
}

// FNV-1a: a stable cache file name per directory (as the dpkg index names its cache).
std::string name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char out[17];
  snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

bool shared_object_name(std::string_view path) {
  std::string_view base = path.substr(path.rfind('/') + 1);
  return base.ends_with(".so") || base.find(".so.") != std::string_view::npos;
}

void add(SiteIndex& index, std::string_view path, const PackageOwner& owner) {
  // Outside the directory, or with a tab or newline the cache's lines cannot hold: it stays unowned.
  if (!inside_record_directory(path) || !site_index_covers(std::string(path))) return;
  index.files.try_emplace(std::string(path), owner);
}

void read_dist_infos(const std::string& site, SiteIndex& index) {
  for (const auto& name : sorted_entries(site)) {
    if (!name.ends_with(".dist-info")) continue;
    // name-version.dist-info (the wheel spec escapes '-' inside either part as '_').
    std::string stem = name.substr(0, name.size() - 10);
    auto dash = stem.find('-');
    PackageOwner owner{.kind = OwnerKind::Python, .name = stem.substr(0, dash),
                       .version = dash == std::string::npos ? "" : stem.substr(dash + 1)};
    auto record = read_text(site + "/" + name + "/RECORD");
    if (!record) continue;
    std::string_view all = *record;
    while (!all.empty()) {
      size_t nl = all.find('\n');
      std::string_view line = all.substr(0, nl);
      all.remove_prefix(nl == std::string_view::npos ? all.size() : nl + 1);
      if (auto path = record_path(line)) add(index, *path, owner);
    }
  }
}

void read_conda_meta(const std::string& prefix, SiteIndex& index) {
  for (const auto& name : sorted_entries(prefix + "/conda-meta")) {
    if (!name.ends_with(".json")) continue;
    auto text = read_text(prefix + "/conda-meta/" + name);
    if (!text) continue;
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("files") || !doc["files"].is_array()) continue;
    PackageOwner owner{.kind = OwnerKind::Conda, .name = doc.value("name", std::string()), .version = doc.value("version", std::string())};
    if (owner.name.empty()) continue;
    for (const auto& f : doc["files"])
      if (f.is_string()) add(index, f.get<std::string>(), owner);
  }
}

std::optional<SiteIndex> read_cache(const std::string& path, const std::string& key) {
  auto text = read_text(path);
  if (!text) return std::nullopt;
  std::string_view all = *text;
  if (!all.starts_with(kMagic)) return std::nullopt;
  all.remove_prefix(kMagic.size());
  if (!all.starts_with(key)) return std::nullopt;
  all.remove_prefix(key.size());
  SiteIndex index;
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
    // path TAB kind TAB name TAB version, none empty but the version.
    std::string_view field[4];
    for (int i = 0; i < 3; ++i) {
      size_t tab = line.find('\t');
      if (tab == std::string_view::npos || tab == 0) return std::nullopt;
      field[i] = line.substr(0, tab);
      line.remove_prefix(tab + 1);
    }
    field[3] = line;
    auto kind = from_string<OwnerKind>(field[1]);
    if (line.find('\t') != std::string_view::npos || (kind != OwnerKind::Python && kind != OwnerKind::Conda)) return std::nullopt;
    // Only what add() lets in was written: a path outside the directory is not a file we wrote.
    if (!inside_record_directory(field[0]) || !site_index_covers(std::string(field[0]))) return std::nullopt;
    if (!index.files
             .try_emplace(std::string(field[0]), PackageOwner{.kind = *kind, .name = std::string(field[2]),
                                                             .version = std::string(field[3])})
             .second)
      return std::nullopt;  // a path twice: not a file we wrote
  }
  return std::nullopt;  // no end line
}

void write_cache(const std::string& path, const std::string& key, const SiteIndex& index) {
  std::string out(kMagic);
  out += key;
  size_t lines = 0;
  for (const auto& [file, owner] : index.files) {
    if ((owner.name + owner.version).find_first_of("\t\n") != std::string::npos || owner.name.empty()) continue;
    out += file + "\t" + to_string(owner.kind) + "\t" + owner.name + "\t" + owner.version + "\n";
    ++lines;
  }
  out += "end\t" + std::to_string(lines) + "\n";
  (void)write_atomic(path, out, Parents::Create);  // a cache that cannot be written costs the next run time, nothing else
}

}  // namespace

bool inside_record_directory(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find_first_of(std::string_view("\0\t\r\n", 4)) != std::string_view::npos)
    return false;
  while (true) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    path.remove_prefix(slash + 1);
  }
}

std::optional<std::string> record_path(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);  // csv.writer's "\r\n" line ends
  std::string path;
  if (!line.empty() && line.front() == '"') {
    size_t i = 1;
    for (;; ++i) {
      if (i >= line.size()) return std::nullopt;  // no closing quote
      if (line[i] != '"') {
        path += line[i];
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        path += '"';
        ++i;
      } else {
        break;
      }
    }
    if (i + 1 < line.size() && line[i + 1] != ',') return std::nullopt;  // text after the closing quote
  } else {
    path = line.substr(0, line.find(','));
  }
  if (!inside_record_directory(path)) return std::nullopt;
  return path;
}

bool site_index_covers(const std::string& relative_path) {
  if (shared_object_name(relative_path)) return true;
  auto slash = relative_path.find('/');
  return slash != std::string::npos && slash > 0 && relative_path.substr(slash) == "/__init__.py";
}

SiteIndex load_site_index(const std::string& dir, RecordSource source, const std::string& cache_dir) {
  std::string key = records_key(dir, source);
  std::string cache = cache_dir.empty() ? ""
                                        : cache_dir + (source == RecordSource::DistInfo ? "/site-owners-" : "/conda-owners-") +
                                              name_hash(dir) + ".tsv";
  if (!cache.empty())
    if (auto cached = read_cache(cache, key)) return std::move(*cached);
  SiteIndex index;
  if (source == RecordSource::DistInfo) read_dist_infos(dir, index);
  else read_conda_meta(dir, index);
  // Written only when nothing changed while the records were read (else the key would lie).
  if (!cache.empty() && records_key(dir, source) == key) write_cache(cache, key, index);
  return index;
}

}  // namespace mlc::environment
