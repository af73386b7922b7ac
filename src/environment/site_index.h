// The owners of the shared objects of a Python site directory (its *.dist-info RECORDs) or a conda
// prefix (conda-meta/*.json), read once and cached between runs, as the dpkg index is: a pip torch
// venv's RECORDs hold tens of thousands of rows, and reading them all cost ~45% of a run there.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "report/report.h"

namespace mlc::environment {

enum class RecordSource { DistInfo, CondaMeta };

struct SiteIndex {
  // Path relative to the directory (as the record writes it) -> its package.
  std::unordered_map<std::string, PackageOwner> files;
  bool from_cache = false;  // whether the cache answered (for tests and figures)
};

// Whether the index holds every owned path of this shape: a shared object (a last component that
// ends with .so or holds .so.) or a package's top __init__.py (torch's owner is told by it). Other
// paths are looked up in the full records.
bool site_index_covers(const std::string& relative_path);

// Whether a path a record names (relative to the record's directory) stays inside that directory and
// can name a file there: not empty, not absolute, no empty, "." or ".." component, no NUL, tab, CR or
// newline. pip's RECORD also lists files it installed outside the site directory (a console script's
// ../../../bin/x); those, and a hostile wheel's ../../usr/lib/libc.so.6 or /usr/lib/libc.so.6, are
// never the package's files here.
bool inside_record_directory(std::string_view relative_path);

// The path of one RECORD row: its first CSV field as Python's csv module writes it (quoted when it
// holds a comma, a quote or a line break, a quote inside doubled), when inside_record_directory();
// nullopt for any other row (a malformed quote included), which owns nothing.
std::optional<std::string> record_path(std::string_view line);

// Calls row(path, owner) for each path the records of `dir` name (DistInfo: each *.dist-info/RECORD's
// record_path() rows; CondaMeta: each conda-meta/*.json's "files" inside_record_directory()), record
// files in sorted order: the one reader of both, for the index and for the full records.
void for_each_record_row(const std::string& dir, RecordSource source,
                         const std::function<void(std::string, const PackageOwner&)>& row);

// The index of `dir` (a site directory for DistInfo, a conda prefix for CondaMeta). With a cache
// directory it is read from <cache_dir>/{site,conda}-owners-<hash>.tsv when that was written for
// the same mtimes: of `dir` and of each dist-info directory and its RECORD (CondaMeta: of
// conda-meta/ and each *.json); any install, upgrade or removal changes one of them. A stale, cut
// short or garbled cache is ignored and rewritten; it is never an error.
SiteIndex load_site_index(const std::string& dir, RecordSource source, const std::string& cache_dir);

}  // namespace mlc::environment
