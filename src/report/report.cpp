// The kinds' names in the JSON report, and counting helpers over the findings model.
#include "report/report.h"

#include <algorithm>

namespace mlc {
namespace {

// The kind whose to_string is `name`: every value from the first to `Last` is tried, so the switch in
// to_string stays the only table of the names.
template <typename Kind, Kind Last>
std::optional<Kind> search(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(Last); ++k)
    if (name == to_string(static_cast<Kind>(k))) return static_cast<Kind>(k);
  return std::nullopt;
}

}  // namespace

std::vector<Classification> all_classifications() {
  std::vector<Classification> all;
  for (int i = 0; i <= static_cast<int>(Classification::Unknown); ++i) all.push_back(static_cast<Classification>(i));
  return all;
}

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
    case Classification::Unported: return "unported";
    case Classification::UnimplementedKernel: return "unimplemented-kernel";
    case Classification::Unknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(EvidencePass p) {
  switch (p) {
    case EvidencePass::Loader: return "loader";
    case EvidencePass::Unexported: return "unexported";
    case EvidencePass::Shadow: return "shadow";
    case EvidencePass::MissingLibrary: return "missing-library";
    case EvidencePass::Trace: return "trace";
    case EvidencePass::Compiler: return "compiler";
    case EvidencePass::HostApi: return "host-api";
    case EvidencePass::Host: return "host";
    case EvidencePass::HostLoad: return "host-load";
    case EvidencePass::NearMiss: return "near-miss";
    case EvidencePass::Provider: return "provider";
  }
  return "loader";
}

const char* to_string(SymbolType t) {
  switch (t) {
    case SymbolType::Func: return "func";
    case SymbolType::Object: return "object";
    case SymbolType::Tls: return "tls";
    case SymbolType::NoType: return "notype";
  }
  return "notype";
}

const char* to_string(OriginKind k) {
  switch (k) {
    case OriginKind::Definition: return "definition";
    case OriginKind::ExplicitInstantiation: return "explicit-instantiation";
    case OriginKind::Declaration: return "declaration";
    case OriginKind::Library: return "library";
  }
  return "declaration";
}

const char* to_string(FixKind k) {
  switch (k) {
    case FixKind::AddSource: return "add-source";
    case FixKind::LinkLibrary: return "link-library";
    case FixKind::Stub: return "stub";
    case FixKind::RebuildAbi: return "rebuild-abi";
    case FixKind::AddInstantiation: return "add-instantiation";
    case FixKind::ExportSymbol: return "export-symbol";
    case FixKind::UseLibrary: return "use-library";
    case FixKind::None: return "none";
  }
  return "none";
}

const char* to_string(CauseKind k) {
  switch (k) {
    case CauseKind::Shadowed: return "shadowed";
    case CauseKind::VersionMismatch: return "version-mismatch";
    case CauseKind::ProviderMismatch: return "provider-mismatch";
    case CauseKind::Host: return "host";
    case CauseKind::MissingLibrary: return "missing-library";
  }
  return "shadowed";
}

const char* to_string(ReferenceBinding b) {
  switch (b) {
    case ReferenceBinding::Global: return "global";
    case ReferenceBinding::Weak: return "weak";
  }
  return "global";
}

const char* to_string(OwnerKind k) {
  switch (k) {
    case OwnerKind::Dpkg: return "dpkg";
    case OwnerKind::Python: return "python";
    case OwnerKind::Conda: return "conda";
    case OwnerKind::Sdk: return "sdk";
  }
  return "dpkg";
}

const char* to_string(LookupKind k) {
  switch (k) {
    case LookupKind::Dlopen: return "dlopen";
    case LookupKind::Dlsym: return "dlsym";
  }
  return "dlopen";
}

const char* to_string(SuggestionReason r) {
  switch (r) {
    case SuggestionReason::Cxx11Abi: return "cxx11-abi";
    case SuggestionReason::ByValue: return "by-value";
    case SuggestionReason::Const: return "const";
    case SuggestionReason::Signature: return "signature";
    case SuggestionReason::Instantiation: return "instantiation";
    case SuggestionReason::Namespace: return "namespace";
    case SuggestionReason::ExternC: return "extern-c";
    case SuggestionReason::SourceSignature: return "source-signature";
  }
  return "signature";
}

const char* to_string(TorchImportReason r) {
  switch (r) {
    case TorchImportReason::PackageImportsTorch: return "package-imports-torch";
    case TorchImportReason::NeedsTorchLibraries: return "needs-torch-libraries";
    case TorchImportReason::PartOfTorch: return "part-of-torch";
  }
  return "package-imports-torch";
}

const char* to_string(LibraryRole r) {
  switch (r) {
    case LibraryRole::Target: return "target";
    case LibraryRole::Dependency: return "dependency";
    case LibraryRole::Preloaded: return "preloaded";
  }
  return "target";
}

template <>
std::optional<Classification> from_string(std::string_view name) {
  return search<Classification, Classification::Unknown>(name);
}
template <>
std::optional<SymbolType> from_string(std::string_view name) {
  return search<SymbolType, SymbolType::NoType>(name);
}
template <>
std::optional<OriginKind> from_string(std::string_view name) {
  return search<OriginKind, OriginKind::Library>(name);
}
template <>
std::optional<FixKind> from_string(std::string_view name) {
  return search<FixKind, FixKind::None>(name);
}
template <>
std::optional<ReferenceBinding> from_string(std::string_view name) {
  return search<ReferenceBinding, ReferenceBinding::Weak>(name);
}
template <>
std::optional<OwnerKind> from_string(std::string_view name) {
  return search<OwnerKind, OwnerKind::Sdk>(name);
}
template <>
std::optional<LibraryRole> from_string(std::string_view name) {
  return search<LibraryRole, LibraryRole::Preloaded>(name);
}

std::string shown_how(const LibraryCopy& copy) {
  return copy.how == loader::FoundHow::Home ? copy.home : loader::to_string(copy.how);
}

std::string with_commas(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

size_t LibraryReport::missing_libraries() const {
  size_t n = 0;
  for (const auto& need : needed) n += need.path || need.refused ? 0 : 1;
  return n;
}

Cause& CauseList::add(Cause cause) {
  cause.id = "cause-" + std::to_string(++issued_);
  causes_.push_back(std::move(cause));
  return causes_.back();
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

size_t Report::load_failure_count() const {
  size_t n = 0;
  for (const auto& lib : libraries) n += lib.load_failures.size();
  return n;
}

std::map<std::string, size_t> Report::by_classification() const {
  std::map<std::string, size_t> counts;
  for (const auto& lib : libraries)
    for (const auto& u : lib.unresolved) ++counts[to_string(u.classification)];
  return counts;
}

bool part_of_load(const LibraryReport& target, const LibraryReport& lib) {
  if (&lib == &target) return true;
  if ((lib.role == LibraryRole::Dependency || lib.role == LibraryRole::Preloaded) && lib.loaded_by == target.path)
    return true;
  return std::find(target.load_objects.begin(), target.load_objects.end(), lib.path) != target.load_objects.end();
}

bool program_apart(const LibraryReport& target) {
  return target.role == LibraryRole::Target && target.program && target.found_in_directory;
}

bool load_fails(const Report& report, const LibraryReport& target) {
  for (const auto& lib : report.libraries) {
    if (!part_of_load(target, lib)) continue;  // (a library listed twice says the same either way)
    for (const auto& n : lib.needed)
      if (!n.path && !n.baselined) return true;
    for (const auto& mv : lib.missing_versions)
      if (!mv.baselined) return true;
    for (const auto& u : lib.unresolved)
      if (!u.baselined) return true;
    for (const auto& f : lib.load_failures)
      if (!f.baselined) return true;
  }
  return false;
}

void drop_repeated(std::vector<Warning>& warnings) {
  std::vector<Warning> told;
  for (auto& w : warnings)
    if (std::none_of(told.begin(), told.end(), [&](const Warning& t) { return t.same_as(w); }))
      told.push_back(std::move(w));
  warnings = std::move(told);
}

}  // namespace mlc
