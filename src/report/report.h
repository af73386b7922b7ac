// The findings model: what the pipeline concluded about each analysed library, independent of
// how it is rendered. Field names follow docs/contract.md's JSON report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace mlc {

enum class Classification {
  MissingSource,
  UnlinkedLibrary,
  SdkDeclaredOnly,
  CudaOnly,
  AbiMismatch,
  VersionMismatch,
  Hidden,
  Shadowed,
  MissingLibrary,
  StaticArchive,
  MissingInstantiation,  // other instantiations of the template exist, not this one
  Unknown,
};
const char* to_string(Classification c);

struct Reference {
  std::string library;
  std::optional<std::string> function;
  std::optional<std::string> file;
  std::optional<int> line;
};

struct Origin {
  std::string file;
  std::optional<int> line;
  std::string kind;  // definition | explicit-instantiation | declaration | library
  std::optional<std::string> library;
  std::optional<std::string> ported_from;
};

struct Counterpart {
  std::string name;
  std::optional<std::string> library;
};

struct Suggestion {
  std::string symbol;
  std::string demangled;
  std::string library;
  std::string reason;  // cxx11-abi | by-value | const | signature | instantiation | namespace | extern-c | spelling
};

struct Fix {
  std::string kind;  // add-source | link-library | stub | rebuild-abi | add-instantiation | export-symbol | use-library | none
  std::optional<std::string> cmake_file;
  std::optional<std::string> list;
  std::optional<std::string> entry;
  std::optional<std::string> library;
  std::string detail;
};

struct UnresolvedSymbol {
  std::string symbol;
  std::string demangled;
  std::optional<std::string> version;
  std::string type;     // func | object | tls | notype
  std::string binding;  // global | weak
  std::vector<Reference> referenced_by;
  Classification classification = Classification::Unknown;
  std::string reason;  // one sentence: what the loader saw
  std::optional<Origin> origin;
  std::optional<Counterpart> counterpart;
  std::vector<Suggestion> suggestions;
  std::optional<Fix> fix;
  bool baselined = false;  // listed in the --baseline file: reported, not failing
};

struct SearchStep {
  std::string path;
  std::string how;
  std::string outcome;
};

struct NeededLibrary {
  std::string name;
  std::optional<std::string> path;
  std::string how;
  std::vector<std::string> searched;   // directories (or cache files) considered, in order
  std::vector<SearchStep> search;      // the same, with each candidate path and its outcome
  bool baselined = false;
};

struct MissingVersionFinding {
  std::string version;
  std::string file;
  std::optional<std::string> provider;
  bool baselined = false;
};

struct LibraryReport {
  std::string path;
  std::string soname;
  std::vector<NeededLibrary> needed;
  std::vector<MissingVersionFinding> missing_versions;
  std::vector<UnresolvedSymbol> unresolved;
  size_t missing_libraries() const;
};

struct Report {
  std::vector<LibraryReport> libraries;
  std::vector<InputError> errors;  // unusable inputs; the other inputs are still reported
  std::vector<std::string> warnings;  // worth knowing, not failing (e.g. a source listed twice)
  size_t unresolved_count() const;
  size_t missing_library_count() const;
  size_t missing_version_count() const;
  std::map<std::string, size_t> by_classification() const;
};

}  // namespace mlc
