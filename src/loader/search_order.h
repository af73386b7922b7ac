// glibc's search order for a library name without '/' (dl-load.c, _dl_map_object), written once:
// the files to try, in order, with how each would be found. The mapping phase (loader.cpp) tries
// them until one is taken, the other candidates of a picked copy are the rest of the same list,
// and a run-time dlopen (src/literals/) walks it from its caller.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/paths.h"
#include "loader/ld_cache.h"
#include "loader/loader.h"

namespace mlc::loader {

// The platform facts the search expands and filters with: the system directories, $LIB and
// $PLATFORM (LoaderEnv's, else Debian's values for the machine) and the class and machine the
// ld.so.cache flags must match.
struct SearchPlatform {
  uint16_t machine = 62;
  bool is_64 = true;
  std::vector<std::string> default_dirs;
  std::string lib;
  std::string platform;
  // The subdirectories searched before each directory of a search path (hwcaps_subdirs), "" last.
  std::vector<std::string> subdirs;
};
SearchPlatform search_platform(const LoaderEnv& env, uint16_t machine, bool is_64);

// ld.so.cache's entries, or (a bare sysroot) what ldconfig would write from ld.so.conf.
// Not copied or moved once filled: the entries' strings are views into `bytes` or `names`.
struct SystemCache {
  std::shared_ptr<const std::string> bytes;  // ld.so.cache's bytes
  std::deque<std::string> names;             // the strings ld.so.conf's fallback made (a deque never moves them)
  std::vector<CacheEntry> entries;
  bool from_conf = false;
  // The entries' indexes sorted by soname, file order among equal ones (index_by_soname): a search asks for
  // one name, and a scan of every entry per search was 2% of a torch import's load (1,000-3,000 entries, 60
  // searches); a map of names to lists of indexes cost an allocation or two per entry on every run.
  std::vector<uint32_t> by_soname = {};
  // The indexes of the entries named `soname`, in file order.
  std::span<const uint32_t> named(std::string_view soname) const;
};
// Fills cache.by_soname from cache.entries.
void index_by_soname(SystemCache& cache);
// The cache the loader consults, read once per process: env's ld.so.cache, else (no cache) the
// libraries of ld.so.conf's directories and `default_dirs`, by soname, first wins. An ld.so.cache is
// parsed once per run, not once per input: what was read is kept while the file's device, inode, size,
// mtime and ctime stay the same (the fallback from ld.so.conf reads directories, and is not kept).
std::shared_ptr<const SystemCache> read_system_cache(const LoaderEnv& env,
                                                     const std::vector<std::string>& default_dirs);

// One step of the search. A step the loader passes over (no cache entry, NODEFLIB) has `passed_over`
// set: it is recorded (the report's "searched"), never tried.
struct SearchCandidate {
  std::string path;  // the file to try: a directory joined with the name, or the cache's entry
  FoundHow how;
  std::optional<SearchOutcome> passed_over = std::nullopt;
  int list = 0;         // which list it belongs to (dl-load.c open_path walks one list at a time)
  bool subdir = false;  // in a hwcaps subdirectory of a search path's directory
};

// Every step of the search for `name` requested by `requester` (an index into process.objects; -1
// for the host program the process started with, which has no search path of its own), in the
// loader's order, each directory preceded by its hwcaps subdirectories (SearchPlatform::subdirs):
//  1. DT_RPATH of the requester, then of the objects that loaded it (l_loader), then of the main
//     program (process.main) - only when the requester has no DT_RUNPATH;
//  2. LD_LIBRARY_PATH, element by element (an empty element is the current directory), its $ORIGIN
//     the main program's (the target's when the host is not known);
//  3. the requester's own DT_RUNPATH (never inherited);
//  4. ld.so.cache, its first matching entry only (one in a system directory passed over under
//     DF_1_NODEFLIB);
//  5. the system directories, unless the requester has DF_1_NODEFLIB.
// The list stops at NODEFLIB's passed-over step. DSTs are expanded and the sysroot applied to
// absolute elements that did not come from $ORIGIN. A directory named twice in one list is searched
// once (dl-load.c fillin_rpath).
std::vector<SearchCandidate> search_order(const std::string& name, const Process& process, int requester,
                                          const LoaderEnv& env, const SearchPlatform& platform,
                                          const SystemCache& cache);

// The same steps, unjoined: a list's directories, each to be tried with SearchPlatform::subdirs in turn
// (search_order's path: join_path(dir, subdir + name)), and the steps that are one path. A search stops at
// the first file taken, and most steps are never tried: their paths are made when they are.
using SearchDirs = std::shared_ptr<const std::vector<std::string>>;
struct SearchSteps {
  struct Item {
    SearchDirs dirs;  // a list of directories (`single` unset); shared with the other searches of the list
    FoundHow how = FoundHow::Default;
    int list = 0;
    std::optional<SearchCandidate> single;  // one path (the cache's entry, a passed-over step)
  };
  std::vector<Item> items;
};
// The directories of a DT_RPATH or DT_RUNPATH list, decomposed once (glibc's decompose_rpath keeps them with
// the object, l_rpath_dirs): by the list and its $ORIGIN, for one LoaderEnv and SearchPlatform. One load's
// searches go through the same few lists (torch's libraries name a dozen directories each) hundreds of times.
class SearchDirsMemo {
 public:
  SearchDirs tag_dirs(const std::string& list, const std::string& origin, const LoaderEnv& env,
                      const SearchPlatform& platform);

 private:
  std::unordered_map<std::string, SearchDirs> lists_;
};
SearchSteps search_steps(const std::string& name, const Process& process, int requester, const LoaderEnv& env,
                         const SearchPlatform& platform, const SystemCache& cache, SearchDirsMemo* memo = nullptr);

// Each step of `steps` in order, a list's directories joined with each of `subdirs` (SearchPlatform::subdirs)
// and `name` as it is reached: visit(path, how, list, subdir, passed_over) returns true to stop there. The
// walk of search_order, the loader's search and other_copies.
template <class Visit>
void each_step(const SearchSteps& steps, const std::string& name, const std::vector<std::string>& subdirs,
               Visit&& visit) {
  const std::optional<SearchOutcome> tried = std::nullopt;
  std::string path;
  for (const auto& item : steps.items) {
    if (const auto& step = item.single) {
      if (visit(step->path, step->how, step->list, step->subdir, step->passed_over)) return;
      continue;
    }
    if (!item.dirs) continue;
    for (const auto& dir : *item.dirs)
      for (const auto& sub : subdirs) {
        // join_path(dir, sub + name), in one reused buffer: a search of a long RPATH makes thousands.
        join_path_into(path, dir, sub);
        path += name;
        if (visit(path, item.how, item.list, !sub.empty(), tried)) return;
      }
  }
}

}  // namespace mlc::loader
