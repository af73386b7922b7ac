// dpkg's path -> package index of shared objects, for ownership look-ups over many libraries at
// once (a --closure report names hundreds). Built by reading every info/*.list once, keeping only
// the shared-object lines; cached in the tool's cache directory, keyed by dpkg's database mtimes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cache_file.h"

namespace mlc::environment {

struct DpkgEntry {
  std::string_view package;  // as the .list file is named: "libc6" or "libc6:amd64"
  std::string_view version;  // from status ("" when status does not say)
};

// The index as the cache file holds it: one text of rows "path TAB package TAB version", sorted by path, each
// path once, looked up by binary search. Read from the cache, it is the file's text with one offset a row:
// nothing else is allocated (a --closure run reads it beside the loads, and 2,800 rows in a map were 6 ms of a
// second core).
class DpkgIndex {
 public:
  // path as dpkg recorded it -> its package; the views live as long as the index.
  std::optional<DpkgEntry> find(std::string_view path) const;
  // The version status gave `package` (a list's name: "libc6" or "libc6:amd64") where the index holds a file of
  // it; std::nullopt where it holds none.
  std::optional<std::string_view> version_of(std::string_view package) const;
  size_t size() const { return rows_.size(); }
  std::string_view path(size_t row) const;
  DpkgEntry entry(size_t row) const;
  bool from_cache = false;  // whether the cache answered (for tests and figures)

 private:
  friend struct DpkgIndexAccess;
  std::string_view text() const { return cached_.opened() ? cached_.text() : std::string_view(built_); }
  CacheText cached_;          // the cache file's text, when the cache answered
  std::string built_;         // the text made from dpkg's lists, when it did not
  std::vector<size_t> rows_;  // where each row starts in text()
};

// Whether the index holds every path of this shape dpkg knows: paths whose file name holds ".so"
// (libraries, Python extension modules). Others are looked up in the lists one by one.
bool dpkg_index_covers(const std::string& path);

// The index of `dpkg_dir` (info/*.list, status). With a cache directory it is read from
// <cache_dir>/dpkg-owners-<hash>.tsv when that was written for the same mtimes of info/ and
// status; otherwise it is built and the cache rewritten atomically. A corrupt or stale cache is
// ignored and rebuilt. std::nullopt when dpkg_dir has no info/ directory.
std::optional<DpkgIndex> load_dpkg_index(const std::string& dpkg_dir, const std::string& cache_dir);

}  // namespace mlc::environment
