// The site index: one pass over every RECORD (or conda-meta/*.json) keeping the shared-object rows,
// and a cache file keyed by the mtimes that any install, upgrade or removal changes: pip renames a
// dist-info directory into the site directory (its mtime), writes RECORD into the dist-info directory
// (that directory's mtime, RECORD's own mtime and size); conda writes conda-meta/<pkg>.json.
#include "environment/site_index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "common/cache_file.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/walk.h"

namespace mlc::environment {
namespace {

constexpr CacheFormat kSiteFormat{.magic = "mlc-site-owner-index 1\n", .fields = 4};

// "mtime size" of a path, "-" when it cannot be stat'ed (a missing RECORD is part of the key too).
std::string stamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "-";
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
         std::to_string(st.st_size);
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

bool shared_object_name(std::string_view path) {
  std::string_view base = path.substr(path.rfind('/') + 1);
  return base.ends_with(".so") || base.find(".so.") != std::string_view::npos;
}

std::optional<SiteIndex> read_site_cache(const std::string& path, const std::string& key) {
  // path TAB kind TAB name TAB version, none empty but the version.
  SiteIndex index;
  index.from_cache = true;
  bool read = read_cache_file(path, kSiteFormat, key, [&](std::span<const std::string_view> f) {
    auto kind = from_string<OwnerKind>(f[1]);
    if (f[0].empty() || f[2].empty() || (kind != OwnerKind::Python && kind != OwnerKind::Conda)) return false;
    // Only what load_site_index keeps was written: a path outside the directory is not a file we wrote.
    if (!inside_record_directory(f[0]) || !site_index_covers(std::string(f[0]))) return false;
    return index.files
        .try_emplace(std::string(f[0]),
                     PackageOwner{.kind = *kind, .name = std::string(f[2]), .version = std::string(f[3])})
        .second;  // a path twice: not a file we wrote
  });
  if (!read) return std::nullopt;
  return index;
}

void write_cache(const std::string& path, const std::string& key, const SiteIndex& index) {
  CacheWriter out(kSiteFormat, key);
  for (const auto& [file, owner] : index.files)
    if (!owner.name.empty())
      (void)out.add(std::array<std::string_view, 4>{file, to_string(owner.kind), owner.name, owner.version});
  out.write(path);
}

}  // namespace

bool inside_record_directory(std::string_view path) {
  if (path.empty() || path.front() == '/' ||
      path.find_first_of(std::string_view("\0\t\r\n", 4)) != std::string_view::npos)
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

void for_each_record_row(const std::string& dir, RecordSource source,
                         const std::function<void(std::string, const PackageOwner&)>& row) {
  if (source == RecordSource::CondaMeta) {
    for (const auto& name : sorted_entries(dir + "/conda-meta")) {
      if (!name.ends_with(".json")) continue;
      auto text = read_text(dir + "/conda-meta/" + name);
      if (!text) continue;
      auto doc = nlohmann::json::parse(*text, nullptr, false);
      if (doc.is_discarded() || !doc.is_object() || !doc.contains("files") || !doc["files"].is_array()) continue;
      PackageOwner owner{.kind = OwnerKind::Conda,
                         .name = doc.value("name", std::string()),
                         .version = doc.value("version", std::string())};
      if (owner.name.empty()) continue;
      for (const auto& f : doc["files"])
        if (f.is_string() && inside_record_directory(f.get<std::string>())) row(f.get<std::string>(), owner);
    }
    return;
  }
  for (const auto& name : sorted_entries(dir)) {
    if (!name.ends_with(".dist-info")) continue;
    // name-version.dist-info (the wheel spec escapes '-' inside either part as '_').
    std::string stem = name.substr(0, name.size() - 10);
    auto dash = stem.find('-');
    PackageOwner owner{.kind = OwnerKind::Python,
                       .name = stem.substr(0, dash),
                       .version = dash == std::string::npos ? "" : stem.substr(dash + 1)};
    std::string record;
    if (!read_text_into(dir + "/" + name + "/RECORD", record)) continue;
    std::string_view all = record;
    while (!all.empty()) {
      size_t nl = all.find('\n');
      std::string_view line = all.substr(0, nl);
      all.remove_prefix(nl == std::string_view::npos ? all.size() : nl + 1);
      if (auto path = record_path(line)) row(std::move(*path), owner);
    }
  }
}

bool site_index_covers(const std::string& relative_path) {
  if (shared_object_name(relative_path)) return true;
  auto slash = relative_path.find('/');
  return slash != std::string::npos && slash > 0 && relative_path.substr(slash) == "/__init__.py";
}

SiteIndex load_site_index(const std::string& dir, RecordSource source, const std::string& cache_dir) {
  std::string key = records_key(dir, source);
  std::string cache = cache_dir.empty()
                          ? ""
                          : cache_dir + (source == RecordSource::DistInfo ? "/site-owners-" : "/conda-owners-") +
                                fnv1a_hex(dir) + ".tsv";
  if (!cache.empty())
    if (auto cached = read_site_cache(cache, key)) return std::move(*cached);
  SiteIndex index;
  for_each_record_row(dir, source, [&](std::string path, const PackageOwner& owner) {
    // The rows are inside the directory, so with no tab or newline the cache's lines cannot hold.
    if (site_index_covers(path)) index.files.try_emplace(std::move(path), owner);
  });
  // Written only when nothing changed while the records were read (else the key would lie).
  if (!cache.empty() && records_key(dir, source) == key) write_cache(cache, key, index);
  return index;
}

}  // namespace mlc::environment
