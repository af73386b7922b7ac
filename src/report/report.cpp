// Counting helpers over the findings model.
#include "report/report.h"

namespace mlc {

const char* to_string(Classification c) {
  switch (c) {
    case Classification::MissingSource: return "missing-source";
    case Classification::UnlinkedLibrary: return "unlinked-library";
    case Classification::SdkDeclaredOnly: return "sdk-declared-only";
    case Classification::CudaOnly: return "cuda-only";
    case Classification::AbiMismatch: return "abi-mismatch";
    case Classification::VersionMismatch: return "version-mismatch";
    case Classification::Hidden: return "hidden";
    case Classification::Shadowed: return "shadowed";
    case Classification::MissingLibrary: return "missing-library";
    case Classification::StaticArchive: return "static-archive";
    case Classification::MissingInstantiation: return "missing-instantiation";
    case Classification::ProviderMismatch: return "provider-mismatch";
    case Classification::HostProvided: return "host-provided";
    case Classification::Unknown: return "unknown";
  }
  return "unknown";
}

size_t LibraryReport::missing_libraries() const {
  size_t n = 0;
  for (const auto& need : needed) n += need.path ? 0 : 1;
  return n;
}

size_t Report::unresolved_count() const {
  size_t n = 0;
  for (const auto& lib : libraries) n += lib.unresolved.size();
  return n;
}

size_t Report::missing_library_count() const {
  size_t n = 0;
  for (const auto& lib : libraries) n += lib.missing_libraries();
  return n;
}

size_t Report::missing_version_count() const {
  size_t n = 0;
  for (const auto& lib : libraries) n += lib.missing_versions.size();
  return n;
}

std::map<std::string, size_t> Report::by_classification() const {
  std::map<std::string, size_t> counts;
  for (const auto& lib : libraries)
    for (const auto& u : lib.unresolved) ++counts[to_string(u.classification)];
  return counts;
}

}  // namespace mlc
