// dpkg's path -> package index of shared objects, for ownership look-ups over many libraries at
// once (a --closure report names hundreds). Built by reading every info/*.list once, keeping only
// the shared-object lines; cached in the tool's cache directory, keyed by dpkg's database mtimes.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

namespace mlc::environment {

struct DpkgEntry {
  std::string package;  // as the .list file is named: "libc6" or "libc6:amd64"
  std::string version;  // from status ("" when status does not say)
};

struct DpkgIndex {
  std::unordered_map<std::string, DpkgEntry> files;  // path as dpkg recorded it -> its package
  bool from_cache = false;                           // whether the cache answered (for tests and figures)
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
