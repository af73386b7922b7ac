// The porting-coverage report: every CUDA API a source tree references (or, in a ported tree, the
// backend's names for them), its counterpart from the porting map, and whether the backend's SDK
// declares it (header:line) and exports it (library). Answers "what will we have to stub?" before
// anything is built.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/result.h"
#include "porting/porting_map.h"
#include "sdk/sdk_index.h"

namespace mlc::coverage {

// What the SDK says about an API's counterpart (docs/user-guide.md, "Porting coverage").
enum class Status {
  Exported,      // an SDK library exports it: links
  HeaderOnly,    // declared as a type, constant, macro or inline function: nothing to link
  DeclaredOnly,  // a function the SDK declares but no SDK library exports: sdk-declared-only, a stub
  Missing,       // the SDK neither declares nor exports it: cuda-only, a stub or an SDK request
  Unmapped,      // the map has no counterpart for this CUDA name
  NoSdk,         // no SDK to check against (counterparts only)
};
const char* to_string(Status s);

struct FileUses {
  std::string file;    // absolute
  uint32_t count = 0;  // call sites (references) in this file
  uint32_t first_line = 0;
};

struct ApiUse {
  std::string cuda;                        // the CUDA name
  std::string family;                      // runtime, driver, blas, ...
  std::optional<std::string> counterpart;  // the backend's name, from the map (else the naming rule)
  bool marked_unsupported = false;         // the map marks it (hipify: HIP_UNSUPPORTED)
  std::optional<std::string> declared_file;
  uint32_t declared_line = 0;
  std::string declared_kind;               // function-declaration, alias, macro ...
  std::optional<std::string> exported_by;  // library path
  Status status = Status::NoSdk;
  uint32_t call_sites = 0;
  std::vector<FileUses> files;  // sorted by path
};

struct FamilyTotals {
  std::string family;
  uint32_t apis = 0;
  uint32_t call_sites = 0;
  std::map<Status, uint32_t> by_status;
};

struct CoverageReport {
  std::string backend;  // "hip", "musa"
  std::string sdk_home;
  std::string mapping;
  std::string naming_rule;  // "cudaX -> hipX" when counterparts come from the backend's rule (no map)
  std::vector<std::string> roots;
  size_t files_scanned = 0;
  std::vector<ApiUse> apis;            // sorted by family, then CUDA name
  std::vector<FamilyTotals> families;  // sorted by family
  std::map<Status, uint32_t> by_status;
  uint32_t call_sites = 0;
  std::vector<InputError> errors;
};

struct CoverageOptions {
  std::vector<std::string> roots;  // directories or files, absolute
  const porting::PortingMap* map = nullptr;
  // The backend's SDK, or null for counterparts only. Indexed lazily by the caller's loader.
  const sdk::SdkIndex* sdk = nullptr;
  // Names the report; without a map its naming rule gives the runtime API's counterparts.
  const backend::Backend* backend = &backend::musa();
  std::string sdk_home;
  std::string mapping;
};

// Scans every C/C++/CUDA/ported source below the roots (in parallel), comments and string
// literals excluded, and classifies what it finds. A root that does not exist is an error of the
// report; the others are still scanned.
CoverageReport run_coverage(const CoverageOptions& options);

// Identifiers outside comments and string/char literals, with their lines (exposed for tests).
void for_each_identifier(std::string_view text, const std::function<void(std::string_view, uint32_t)>& f);

// Renderers: pure functions returning the document.
std::string render_text(const CoverageReport& r);
std::string render_json(const CoverageReport& r, const std::string& tool_version);
std::string render_markdown(const CoverageReport& r);
// One self-contained page: inline CSS, JS and SVG, no external resource.
std::string render_html(const CoverageReport& r);

}  // namespace mlc::coverage
