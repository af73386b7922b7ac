// A vendor SDK (or the reference CUDA toolkit) as the tracer needs it: which of its shared
// libraries export which symbols (lib/, lib64/), and what its headers declare (include/).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "source/source_index.h"

namespace mlc::sdk {

struct SdkLibrary {
  std::string path;  // the regular file (symlinks to it are not listed twice)
  std::string soname;
  std::string link_name;  // "mublas" for libmublas.so.1: what -l takes
};

struct Export {
  uint32_t library;     // index into SdkIndex::libraries
  std::string version;  // default version name, empty when unversioned
};

// A definition in a member of a static archive (libfoo_static.a): linkable only into the library itself.
struct ArchiveDefinition {
  std::string archive;
  std::string member;
};

struct SdkIndex {
  std::string home;
  std::vector<SdkLibrary> libraries;
  std::unordered_map<std::string, std::vector<Export>> exports;
  std::unordered_map<std::string, ArchiveDefinition> archive_definitions;  // first archive wins
  source::SourceIndex headers;
  source::IndexStats header_stats;  // what building `headers` read: scanned in this run or reused from the cache
  std::vector<InputError> errors;

  const SdkLibrary* first_exporter(const std::string& name) const;
};

struct SdkOptions {
  std::string home;
  std::string header_cache;  // cache file for the header index ("" for none)
  // The layout below home (backend::Backend states it): the defaults are MUSA's and CUDA's.
  std::vector<std::string> include_dirs = {"include"};
  std::vector<std::string> library_dirs = {"lib", "lib64"};
  std::vector<std::string> library_prefixes = {};  // only libraries whose file name starts so; {} = all
  bool index_archives = true;
  source::FileKinds header_kinds = {};  // which files under include_dirs are read
};

// An SDK home that does not exist gives an empty index (no error): the SDK is optional context.
SdkIndex index_sdk(const SdkOptions& options);

// Exported (dynamic, defined, global/weak, default/protected) symbols of every shared object in
// `dirs`, for shadowing and unlinked-library checks outside the SDK.
SdkIndex index_libraries(const std::vector<std::string>& dirs);

}  // namespace mlc::sdk
