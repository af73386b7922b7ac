// Where every library comes from: the package that installed a file, known
// offline from dpkg's database, a Python dist-info RECORD, conda-meta/*.json or an SDK's version
// file. Only the files asked about are looked up; each source is read once per call.
#pragma once

#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "environment/dpkg_index.h"
#include "environment/site_index.h"
#include "report/report.h"

namespace mlc::environment {

struct OwnerSources {
  std::string dpkg_dir = "/var/lib/dpkg";  // info/*.list and status
  std::vector<std::string> sdk_homes;      // SDK roots whose version.txt / version.json name a version
  // Where dpkg's path -> package index of shared objects is cached between runs ("" for none). The
  // cache is keyed by the mtimes of info/ and status, so any install or removal rebuilds it.
  std::string cache_dir;
};

// The indexes find_owners reads, built on other threads from the start of a run: a first run
// (no cache yet) would otherwise spend ~1.5 s building them after everything else. With many inputs
// (a tree): dpkg's index and the dist-info index of each site directory above an input. What
// find_owners does not take is finished and dropped on destruction.
class OwnerPrefetch {
 public:
  OwnerPrefetch(const OwnerSources& sources, const std::vector<std::string>& inputs);
  OwnerPrefetch(const OwnerPrefetch&) = delete;
  OwnerPrefetch& operator=(const OwnerPrefetch&) = delete;
  ~OwnerPrefetch();
  // The prefetched index, once: a later call, or one for what was not prefetched, gives nullopt.
  std::optional<std::optional<DpkgIndex>> take_dpkg();
  std::optional<SiteIndex> take_site(const std::string& dir);

 private:
  std::future<std::optional<DpkgIndex>> dpkg_;
  std::future<std::map<std::string, SiteIndex>> sites_;
  std::optional<std::map<std::string, SiteIndex>> sites_ready_;
};

// The owners of `paths` (absolute) that can be known; paths without one are absent from the map.
// `prefetched` (optional) gives indexes already built or being built.
std::map<std::string, PackageOwner> find_owners(const std::vector<std::string>& paths, const OwnerSources& sources,
                                                OwnerPrefetch* prefetched = nullptr);

// The name the package of a file dpkg's index does not cover is most likely named after, for the lists read
// first when dpkg's lists are searched one by one: a library's name ("torch" for libtorch_cpu.so.1.13, "c10"
// for libc10.so, "stdc" for libstdc++.so.6), a Python module's top-level package ("torch" for
// .../dist-packages/torch/__init__.py, "typing-extensions" for .../typing_extensions.py); "" when none.
std::string package_hint(const std::string& path);

}  // namespace mlc::environment
