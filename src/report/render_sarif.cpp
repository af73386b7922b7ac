// SARIF 2.1.0 (OASIS) for code-scanning services: one reportingDescriptor per classification with its
// help, one result per finding located at the referencing source line (else at the library), and
// `fixes` for findings whose fix is a text edit (a CMake source-list entry, a stub).
#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "report/ci_findings.h"
#include "report/render.h"

namespace mlc {
namespace {

using nlohmann::json;

// RFC 3986 path: unreserved characters and '/' stay, every other byte is percent-encoded.
std::string uri_path(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// RFC 8089 file URI of an absolute path.
std::string file_uri(const std::string& path) { return "file://" + uri_path(path); }

constexpr const char* kSrcRoot = "%SRCROOT%";

// An artifactLocation (SARIF 3.4): below the source root, a relative reference with uriBaseId
// %SRCROOT% (SARIF 3.4.4: a uriBaseId goes with a relative uri only); elsewhere an absolute file URI,
// which code scanning also takes (a path of the runner's own).
json artifact(const std::string& path, const std::string& root) {
  std::string rel = relative_to_root(path, root);
  if (rel == path) return {{"uri", file_uri(path)}};
  return {{"uri", uri_path(rel)}, {"uriBaseId", kSrcRoot}};
}

json text(const std::string& s) { return {{"text", ci::printable_utf8(s)}}; }

json rule_json(const std::string& id, const ci::RuleText* r, const std::string& help_uri) {
  json rule = {{"id", id},
               {"shortDescription", text(r ? r->short_description : "An undefined symbol of this classification.")},
               {"defaultConfiguration", {{"level", "error"}}}};
  if (r) {
    rule["name"] = r->name;
    rule["fullDescription"] = text(r->help);
    rule["help"] = text(r->help);
  }
  if (!help_uri.empty()) rule["helpUri"] = help_uri + "#" + id;
  return rule;
}

// One artifactChange per file, its replacements in file order, every deletedRegion in the original
// file's lines (an insertion is an empty region: start and end at column 1 of the same line).
json fix_json(const SymbolFix& fix, const std::string& root) {
  json changes = json::array();
  std::vector<std::string> files;
  for (const auto& e : fix.edits) {
    size_t i = 0;
    while (i < files.size() && files[i] != e.file) ++i;
    if (i == files.size()) {
      files.push_back(e.file);
      changes.push_back({{"artifactLocation", artifact(e.file, root)}, {"replacements", json::array()}});
    }
    json region = {{"startLine", e.start_line},
                   {"startColumn", 1},
                   {"endLine", std::max(e.end_line, e.start_line)},
                   {"endColumn", e.end_column}};
    changes[i]["replacements"].push_back({{"deletedRegion", region}, {"insertedContent", text(e.inserted)}});
  }
  return {{"description", text(fix.description)}, {"artifactChanges", changes}};
}

// The run's rules, indexed as results cite them. Every known classification is a rule, so rule indexes
// are stable across runs; a classification added later without a rule text still gets a rule of its own.
struct Rules {
  json list = json::array();
  std::vector<ci::Rule> ids;
  const std::string& help_uri;

  explicit Rules(const std::string& uri) : help_uri(uri) {
    for (const auto& r : ci::rules()) {
      ids.push_back(ci::classified(r.classification));
      list.push_back(rule_json(ci::rule_id(ids.back()), &r, help_uri));
    }
  }

  size_t index_of(const ci::Rule& id) {
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == id) return i;
    ids.push_back(id);
    list.push_back(rule_json(ci::rule_id(id), nullptr, help_uri));
    return ids.size() - 1;
  }
};

std::string message_of(const std::string& title, const std::vector<std::string>& details) {
  std::string message = title;
  for (const auto& d : details) message += "\n" + d;
  return message;
}

// A physicalLocation: the file, at `line`. Code scanning shows a result only with region.startLine
// (GitHub's documented subset of SARIF); a library without debug information has no line of its own,
// so its first line stands for the whole file.
json physical(const std::string& path, std::optional<int> line, const std::string& root) {
  return {{"artifactLocation", artifact(path, root)}, {"region", {{"startLine", line && *line > 0 ? *line : 1}}}};
}

// One result per finding: located at the referencing source line (else at the library), with the
// fixes whose edits apply to it.
json finding_result(const ci::Finding& f, size_t rule_index, const SarifOptions& options) {
  const std::vector<SymbolFix>& all_fixes = options.fixes;
  json location;
  location["physicalLocation"] = f.file ? physical(*f.file, f.line, options.source_root)
                                        : physical(f.library->path, std::nullopt, options.source_root);
  if (f.symbol) {
    location["logicalLocations"] =
        json::array({{{"fullyQualifiedName", ci::printable_utf8(f.symbol->demangled)},
                      {"decoratedName", ci::printable_utf8(f.symbol->symbol)},
                      {"kind", f.symbol->type == SymbolType::Object ? "variable" : "function"}}});
  }
  std::string library_name =
      f.library->soname.empty() ? f.library->path.substr(f.library->path.rfind('/') + 1) : f.library->soname;
  json result = {
      {"ruleId", ci::rule_id(f.rule)},
      {"ruleIndex", rule_index},
      {"level", f.baselined ? "note"
                : f.warning ? "warning"
                            : "error"},
      {"message", text(message_of(f.title, f.details))},
      {"locations", json::array({location})},
      // Stable across rebuilds and checkouts: the library's name and what is missing.
      {"partialFingerprints",
       {{"musaLinkcheckFinding/v1", ci::printable_utf8(library_name + ":" + (f.symbol ? f.symbol->symbol : f.name))}}},
      {"properties",
       {{"library", ci::printable_utf8(f.library->path)},
        {"classification", ci::rule_id(f.rule)},
        {"symbol", f.symbol ? json(ci::printable_utf8(f.symbol->symbol)) : json(nullptr)},
        // Who installed the library (dpkg, conda, a wheel, the SDK), as in the JSON report.
        {"owner", f.library->owner ? json{{"kind", to_string(f.library->owner->kind)},
                                          {"name", ci::printable_utf8(f.library->owner->name)},
                                          {"version", ci::printable_utf8(f.library->owner->version)}}
                                   : json(nullptr)}}}};
  if (f.baselined) result["baselineState"] = "unchanged";
  if (f.symbol) {
    json fixes = json::array();
    for (const auto& fix : all_fixes)
      if (fix.library == f.library->path && fix.symbol == f.symbol->symbol && !fix.edits.empty())
        fixes.push_back(fix_json(fix, options.source_root));
    if (!fixes.empty()) result["fixes"] = fixes;
  }
  return result;
}

// Run-time look-ups: a rule of their own (not a classification of an undefined symbol), added only
// when there are some, so the rule indexes of the classifications stay as they were.
void add_runtime_results(const Report& report, const std::string& root, Rules& rules, json& results) {
  const std::string id = ci::rule_id(ci::kRuntimeLookupRule);
  for (const auto& f : ci::runtime_findings(report)) {
    size_t before = rules.ids.size();
    size_t index = rules.index_of(ci::kRuntimeLookupRule);
    if (rules.ids.size() > before) {
      const char* help =
          "A string literal given to dlopen names a library the search from that object does not find, or one "
          "given to dlsym names an entry point the library found does not export. A warning unless --fail-on "
          "runtime: install the library (or the driver version) that provides it, or stop looking it up.";
      rules.list[index] = {{"id", id},
                           {"name", "RuntimeLookup"},
                           {"shortDescription", text("A name looked up at run time (dlopen/dlsym) is not satisfied.")},
                           {"fullDescription", text(help)},
                           {"help", text(help)},
                           {"defaultConfiguration", {{"level", "warning"}}}};
      if (!rules.help_uri.empty()) rules.list[index]["helpUri"] = rules.help_uri + "#" + id;
    }
    const auto& r = *f.lookup;
    results.push_back({{"ruleId", id},
                       {"ruleIndex", index},
                       {"level", f.fatal ? "error" : "warning"},
                       {"message", text(message_of(f.title, f.details))},
                       {"locations", json::array({{{"physicalLocation", physical(r.library, std::nullopt, root)}}})},
                       {"partialFingerprints",
                        {{"musaLinkcheckFinding/v1", ci::printable_utf8(r.library.substr(r.library.rfind('/') + 1) +
                                                                        ":" + to_string(r.kind) + ":" + r.name)}}},
                       {"properties",
                        {{"library", ci::printable_utf8(r.library)},
                         {"classification", id},
                         {"kind", to_string(r.kind)},
                         {"name", ci::printable_utf8(r.name)},
                         {"provider", r.provider ? json(ci::printable_utf8(*r.provider)) : json(nullptr)}}}});
  }
}

// The run's envelope: the tool and its rules, the invocation with one notification per bad input, the results.
std::string sarif_document(const Report& report, const SarifOptions& options, const json& rules, const json& results) {
  json notifications = json::array();
  for (const auto& e : report.errors) {
    notifications.push_back(
        {{"level", "error"},
         {"message", text(e.to_line())},
         {"locations",
          json::array({{{"physicalLocation", {{"artifactLocation", artifact(e.path, options.source_root)}}}}})}});
  }
  json driver = {{"name", "musa-linkcheck"},
                 {"version", options.tool_version},
                 {"semanticVersion", options.tool_version},
                 {"rules", rules}};
  if (!options.help_uri.empty()) driver["informationUri"] = options.help_uri;
  json run = {{"tool", {{"driver", driver}}}};
  // %SRCROOT%: the checkout (SARIF 3.14.14: an absolute URI ending in '/').
  if (!options.source_root.empty()) {
    std::string root = options.source_root.back() == '/' ? options.source_root : options.source_root + "/";
    run["originalUriBaseIds"] = {{kSrcRoot, {{"uri", file_uri(root)}}}};
  }
  run["invocations"] =
      json::array({{{"executionSuccessful", report.errors.empty()}, {"toolExecutionNotifications", notifications}}});
  run["columnKind"] = "unicodeCodePoints";  // fix regions end at a column only after a last line without a newline
  run["results"] = results;
  json doc = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", json::array({run})}};
  return doc.dump(2) + "\n";
}

}  // namespace

// The passes: the rules, one result per finding, then the run-time look-ups, in one document.
std::string render_sarif(const Report& report, const SarifOptions& given) {
  // The help URI is the install's (or the source tree's) path: its bytes, like a symbol's, may be any,
  // and dump() throws on invalid UTF-8 (found by fuzz_report).
  SarifOptions options = given;
  options.help_uri = ci::printable_utf8(options.help_uri);
  options.tool_version = ci::printable_utf8(options.tool_version);
  auto found = ci::findings(report, options.source_exists);
  Rules rules(options.help_uri);
  json results = json::array();
  for (const auto& f : found) results.push_back(finding_result(f, rules.index_of(f.rule), options));
  add_runtime_results(report, options.source_root, rules, results);
  return sarif_document(report, options, rules.list, results);
}

}  // namespace mlc
