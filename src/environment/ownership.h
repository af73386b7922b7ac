// Where every library comes from (issue 15 item 6): the package that installed a file, known
// offline from dpkg's database, a Python dist-info RECORD, conda-meta/*.json or an SDK's version
// file. Only the files asked about are looked up; each source is read once per call.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "report/report.h"

namespace mlc::environment {

struct OwnerSources {
  std::string dpkg_dir = "/var/lib/dpkg";  // info/*.list and status
  std::vector<std::string> sdk_homes;      // SDK roots whose version.txt / version.json name a version
  // Where dpkg's path -> package index of shared objects is cached between runs ("" for none). The
  // cache is keyed by the mtimes of info/ and status, so any install or removal rebuilds it.
  std::string cache_dir;
};

// The owners of `paths` (absolute) that can be known; paths without one are absent from the map.
std::map<std::string, PackageOwner> find_owners(const std::vector<std::string>& paths, const OwnerSources& sources);

}  // namespace mlc::environment
