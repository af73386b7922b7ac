// The findings of a Report flattened for the CI formats (SARIF, JUnit, GitHub annotations): one entry
// per unresolved symbol, missing library or missing version, carrying the text report's diagnosis so
// every format says the same thing as the build log. Internal to src/report/.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/render.h"
#include "report/report.h"

namespace mlc::ci {

// What a finding is an instance of (a SARIF rule, a JUnit failure type, a GitHub annotation's title):
// the classification of an undefined symbol (missing libraries and versions have theirs), a load that
// fails, or a name looked up at run time.
struct Rule {
  enum class Kind { Classified, LoadFailure, RuntimeLookup };
  Kind kind = Kind::Classified;
  Classification classification = Classification::Unknown;  // when Classified
  bool operator==(const Rule&) const = default;
};
inline constexpr Rule kLoadFailureRule{.kind = Rule::Kind::LoadFailure, .classification = Classification::Unknown};
inline constexpr Rule kRuntimeLookupRule{.kind = Rule::Kind::RuntimeLookup, .classification = Classification::Unknown};
inline constexpr Rule classified(Classification c) { return {.kind = Rule::Kind::Classified, .classification = c}; }
// The rule's id in the CI formats: the classification's name, "load-failure", "runtime-lookup".
std::string rule_id(const Rule& rule);

struct Finding {
  const LibraryReport* library = nullptr;
  const UnresolvedSymbol* symbol = nullptr;  // null for a missing library or version
  Rule rule;                                 // missing versions count as version-mismatch
  std::string name;                          // what is missing: symbol (demangled, @version), library, version
  std::string title;                         // the text report's error line without "error: "
  std::vector<std::string> details;          // its ">>>" lines without the ">>> "
  std::optional<std::string> file;           // where it is referenced from, when known
  std::optional<int> line;
  bool baselined = false;
  // Only programs told apart load the library (report.h: program_apart): a warning, unless --fail-on programs.
  bool warning = false;
};

// A finding's file and line are its first reference's whose file `source_exists` accepts (any, when null).
std::vector<Finding> findings(const Report& report, const SourceExists& source_exists = nullptr);

// A name looked up at run time (a dlopen/dlsym literal the environment does not satisfy), as the CI
// formats carry it: a warning unless the run makes it fatal (--fail-on runtime). Title and details
// are the text report's lines for it, without "warning: runtime-lookup: " and ">>> ".
struct LookupFinding {
  const RuntimeLookup* lookup = nullptr;
  std::string title;
  std::vector<std::string> details;
  bool fatal = false;
};
std::vector<LookupFinding> runtime_findings(const Report& report);

// utf8_escaped (report/escape.h): valid UTF-8 passes unchanged; every byte of an invalid sequence
// becomes the four characters "\xNN" (so a mangled name with stray bytes stays readable).
// With xml, C0 controls other than tab/newline/CR (not allowed in XML 1.0) are written the same way.
std::string printable_utf8(std::string_view text, bool xml = false);

// One-line description of each classification (SARIF rules, docs/classifications.md).
struct RuleText {
  Classification classification;
  const char* name;  // CamelCase, as SARIF's reportingDescriptor.name
  const char* short_description;
  const char* help;
};
const std::vector<RuleText>& rules();

}  // namespace mlc::ci
