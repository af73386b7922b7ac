// The CI formats as their consumers read them: SARIF validated against the official 2.1.0 schema,
// JUnit XML checked by xmllint and counted with XPath, GitHub workflow commands compared line by line
// (escaping included). Names with invalid UTF-8 must leave every format well-formed.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "classify.h"
#include "report/render.h"
#include "report/said.h"
#include "stubgen/stubgen.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kSource = MLC_SOURCE_DIR;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kExample = MLC_EXAMPLE_DIR;
const std::string kSchema = std::string(MLC_SOURCE_DIR) + "/tests/schemas/sarif-schema-2.1.0.json";

// A report no fixture produces: a symbol with a stray byte, a reference file whose path has ':' and
// ',', a diagnosis with '%', a baselined finding and an unusable input.
Report awkward_report() {
  Report r;
  LibraryReport lib;
  lib.path = "/w/libodd.so";
  lib.soname = "libodd.so";
  NeededLibrary gone;
  gone.name = "libgone.so.1";
  gone.searched = {"/w/lib"};
  gone.search = {SearchStep{.path = "/w/lib/libgone.so.1",
                            .how = loader::FoundHow::Runpath,
                            .outcome = {.kind = loader::SearchOutcome::Kind::Refused, .detail = "no such file"}}};
  lib.needed.push_back(gone);
  UnresolvedSymbol odd;
  odd.symbol = odd.demangled =
      "bad\xff"
      "name";
  odd.type = SymbolType::Func;
  odd.binding = ReferenceBinding::Global;
  odd.referenced_by = {
      Reference{.library = "/w/libodd.so", .function = "use_it", .file = "/w/src/a:b,c.cpp", .line = 7}};
  test::classify(odd, Classification::SdkDeclaredOnly);
  say(odd, said::DeclaredNotDefined{.file = "/w/include/100%.h", .line = 3});
  odd.fix = Fix{.kind = FixKind::Stub,
                .cmake_file = {},
                .list = {},
                .entry = {},
                .library = {},
                .why = saying(said::StubOrFindSource{})};
  lib.unresolved.push_back(odd);
  UnresolvedSymbol old;
  old.symbol = old.demangled = "old_one";
  old.type = SymbolType::Object;
  old.binding = ReferenceBinding::Global;
  old.referenced_by = {Reference{.library = "/w/libodd.so", .function = {}, .file = {}, .line = {}}};
  test::classify(old, Classification::Unknown);
  say(old, said::NoneInScope{.loaded = 3});
  old.baselined = true;
  lib.unresolved.push_back(old);
  r.libraries.push_back(lib);
  r.errors.push_back({"/w/not-elf.txt", "not an ELF file"});
  report::write_sentences(r);
  return r;
}

// The interpreter the test command installs python3-jsonschema for (Debian's /usr/bin/python3, from
// CMake), not whichever python3 comes first on PATH.
const std::string kPython = MLC_TEST_PYTHON;

// Why SARIF cannot be validated here ("" when it can). Tests skip on it at their start, never midway.
std::string sarif_validator_missing() {
  if (!fs::exists(kSchema)) return "SARIF schema not found at " + kSchema;
  if (run(quote(kPython) + " -c 'import jsonschema'").status != 0)
    return kPython + " cannot import jsonschema: install Debian's python3-jsonschema (the README's test command does)";
  return "";
}
#define REQUIRE_SARIF_VALIDATOR() \
  if (auto why = sarif_validator_missing(); !why.empty()) MLC_SKIP() << why

// The SARIF 2.1.0 schema's verdict on a file, through jsonschema (the oracle, not our own reading).
::testing::AssertionResult sarif_is_valid(const std::string& file) {
  auto v = run(quote(kPython) +
               " -c 'import json,sys,jsonschema; jsonschema.Draft7Validator(json.load(open(sys.argv[2])))"
               ".validate(json.load(open(sys.argv[1])))' " +
               quote(file) + " " + quote(kSchema));
  if (v.status == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << file << " does not validate against " << kSchema << ":\n" << v.err;
}

// What GitHub code scanning documents it takes of SARIF 2.1.0 beyond the schema (docs.github.com, "SARIF
// support for code scanning", and its upload limits; the GH rules of Microsoft's SARIF multitool state
// the same), one line per breach: 2.1.0 with at most 20 runs; a driver name; per rule an id and
// non-empty shortDescription, fullDescription and help texts; at most 25,000 results a run; per result
// a ruleId, a message text and 1 to 1,000 locations, each a physicalLocation whose artifactLocation
// uri is a file path (relative, with a uriBaseId the run maps to an absolute URI ending in '/', or a
// file: URI) and whose region has a startLine of 1 or more; partialFingerprints of strings.
std::vector<std::string> github_subset_breaches(const nlohmann::json& sarif) {
  std::vector<std::string> out;
  auto text_of = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].contains("text") && j[key]["text"].is_string() ? j[key]["text"].get<std::string>()
                                                                                    : std::string();
  };
  if (sarif.value("version", "") != "2.1.0") out.push_back("version is not 2.1.0");
  if (!sarif.contains("runs") || sarif["runs"].size() > 20) out.push_back("no runs, or more than 20");
  for (const auto& run : sarif.value("runs", nlohmann::json::array())) {
    const auto bases = run.value("originalUriBaseIds", nlohmann::json::object());
    for (const auto& [id, base] : bases.items()) {
      std::string uri = base.value("uri", "");
      if (uri.rfind("file:///", 0) != 0 || uri.back() != '/')
        out.push_back("base " + id + " is no absolute URI ending in '/'");
    }
    if (run["tool"]["driver"].value("name", "").empty()) out.push_back("driver without a name");
    for (const auto& rule : run["tool"]["driver"].value("rules", nlohmann::json::array())) {
      if (rule.value("id", "").empty()) out.push_back("rule without an id");
      for (const char* key : {"shortDescription", "fullDescription", "help"})
        if (text_of(rule, key).empty()) out.push_back("rule " + rule.value("id", "") + " without " + key);
    }
    const auto& results = run.value("results", nlohmann::json::array());
    if (results.size() > 25000) out.push_back("more than 25,000 results");
    for (const auto& r : results) {
      std::string id = r.value("ruleId", "");
      if (id.empty()) out.push_back("result without a ruleId");
      if (text_of(r, "message").empty()) out.push_back(id + ": result without a message text");
      const auto& locations = r.value("locations", nlohmann::json::array());
      if (locations.empty() || locations.size() > 1000) out.push_back(id + ": no location, or more than 1,000");
      for (const auto& l : locations) {
        const auto& physical = l.value("physicalLocation", nlohmann::json::object());
        const auto& artifact = physical.value("artifactLocation", nlohmann::json::object());
        std::string uri = artifact.value("uri", "");
        if (uri.empty()) out.push_back(id + ": location without an artifact uri");
        if (artifact.contains("uriBaseId")) {
          if (uri.find(':') != std::string::npos)
            out.push_back(id + ": " + uri + " has a uriBaseId but is not relative");
          if (!bases.contains(artifact["uriBaseId"].get<std::string>())) out.push_back(id + ": unmapped uriBaseId");
        } else if (uri.rfind("file:///", 0) != 0) {
          out.push_back(id + ": " + uri + " is neither relative to a base nor a file URI");
        }
        if (physical.value("region", nlohmann::json::object()).value("startLine", 0) < 1)
          out.push_back(id + ": location without region.startLine");
      }
      const auto fingerprints = r.value("partialFingerprints", nlohmann::json::object());
      for (const auto& [k, v] : fingerprints.items())
        if (!v.is_string()) out.push_back(id + ": fingerprint " + k + " is not a string");
    }
  }
  return out;
}

std::string percent_decoded(const std::string& uri, size_t from) {
  std::string out;
  for (size_t i = from; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size()) {
      out += static_cast<char>(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += uri[i];
    }
  }
  return out;
}

// The file an artifactLocation names, as a SARIF consumer resolves it (SARIF 3.4.4): a relative uri
// against its uriBaseId's absolute URI in the run's originalUriBaseIds, else an absolute file URI.
std::string path_of(const nlohmann::json& sarif, const nlohmann::json& location) {
  std::string uri = location["uri"];
  if (location.contains("uriBaseId")) {
    EXPECT_EQ(uri.find(':'), std::string::npos) << "a uri with a uriBaseId must be relative: " << uri;
    std::string base = sarif["runs"][0]["originalUriBaseIds"][location["uriBaseId"].get<std::string>()]["uri"];
    EXPECT_EQ(base.back(), '/') << base;
    uri = base + uri;
  }
  EXPECT_EQ(uri.rfind("file://", 0), 0u) << uri;
  return percent_decoded(uri, 7);
}

TEST(CiFormats, the_github_subset_check_names_each_breach) {
  auto sarif = nlohmann::json::parse(R"({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x", "rules": [
      {"id": "r", "shortDescription": {"text": "s"}, "fullDescription": {"text": "f"}}]}},
      "originalUriBaseIds": {"%SRCROOT%": {"uri": "file:///w"}},
      "results": [{"ruleId": "r", "message": {"text": "m"}, "locations": [
        {"physicalLocation": {"artifactLocation": {"uri": "file:///w/a.c", "uriBaseId": "%SRCROOT%"}}},
        {"physicalLocation": {"artifactLocation": {"uri": "https://x/a.c"}, "region": {"startLine": 3}}}]}]}]})");
  EXPECT_EQ(github_subset_breaches(sarif),
            (std::vector<std::string>{"base %SRCROOT% is no absolute URI ending in '/'", "rule r without help",
                                      "r: file:///w/a.c has a uriBaseId but is not relative",
                                      "r: location without region.startLine",
                                      "r: https://x/a.c is neither relative to a base nor a file URI"}));
}

TEST(CiFormats, sarif_validator_rejects_what_the_schema_forbids) {
  REQUIRE_SARIF_VALIDATOR();
  std::string dir = test::scratch_dir("ci-sarif-invalid");
  test::write_file(dir + "/bad.sarif",
                   R"({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})");  // driver has no name
  EXPECT_FALSE(sarif_is_valid(dir + "/bad.sarif"));
  test::write_file(dir + "/good.sarif", R"({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}}]})");
  EXPECT_TRUE(sarif_is_valid(dir + "/good.sarif"));
}

TEST(CiFormats, sarif_of_the_bundled_example_validates_and_has_one_result_per_symbol) {
  REQUIRE_SARIF_VALIDATOR();
  std::string dir = test::scratch_dir("ci-sarif");
  std::string args = " --with " + quote(kExample + "/libc10.so") + " " + quote(kExample + "/libmusa_kernels.so");
  // Run in the source tree: %SRCROOT% is its checkout (the tree itself when it is no git work tree).
  auto s = run("cd " + quote(kSource) + " && " + kBin + " --format sarif -o " + quote(dir + "/r.sarif") + args);
  EXPECT_EQ(s.status, 1) << s.err;
  auto j = run(kBin + " --format json" + args);
  auto report = nlohmann::json::parse(j.out);
  auto sarif = nlohmann::json::parse(test::read_file(dir + "/r.sarif"));
  EXPECT_TRUE(sarif_is_valid(dir + "/r.sarif"));
  EXPECT_EQ(github_subset_breaches(sarif), std::vector<std::string>{});
  EXPECT_EQ(sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file://" + kSource + "/");

  const auto& run0 = sarif["runs"][0];
  EXPECT_EQ(sarif["version"], "2.1.0");
  // One rule per classification, each linking to its own anchor of docs/classifications.md.
  std::string page = test::read_file(std::string(MLC_SOURCE_DIR) + "/docs/classifications.md");
  const auto& rules = run0["tool"]["driver"]["rules"];
  // The rules are the Classification enum itself, in its order: each value, nothing else.
  auto all = all_classifications();
  ASSERT_EQ(rules.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(rules[i]["id"], to_string(all[i]));
  for (const auto& rule : rules) {
    std::string id = rule["id"];
    EXPECT_EQ(rule["helpUri"], "file://" + std::string(MLC_SOURCE_DIR) + "/docs/classifications.md#" + id);
    EXPECT_NE(page.find("\n## " + id + "\n"), std::string::npos) << id;
    EXPECT_FALSE(rule["help"]["text"].get<std::string>().empty());
  }
  const auto& unresolved = report["libraries"][0]["unresolved"];
  const auto& results = run0["results"];
  ASSERT_EQ(results.size(), unresolved.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& u = unresolved[i];
    const auto& res = results[i];
    EXPECT_EQ(res["ruleId"], u["classification"]);
    EXPECT_EQ(rules[res["ruleIndex"].get<size_t>()]["id"], u["classification"]);
    EXPECT_EQ(res["properties"]["symbol"], u["symbol"]);
    EXPECT_EQ(
        res["message"]["text"].get<std::string>().rfind("undefined symbol: " + u["demangled"].get<std::string>(), 0),
        0u);
    const auto& loc = res["locations"][0]["physicalLocation"];
    const auto& ref = u["referenced_by"][0];
    // A file of the checkout is named relative to %SRCROOT%, the way code scanning maps it to the repository.
    std::string where = ref["file"].is_string() ? ref["file"].get<std::string>() : kExample + "/libmusa_kernels.so";
    EXPECT_EQ(path_of(sarif, loc["artifactLocation"]), where);
    if (where.rfind(kSource + "/", 0) == 0) {
      EXPECT_EQ(loc["artifactLocation"],
                nlohmann::json({{"uri", where.substr(kSource.size() + 1)}, {"uriBaseId", "%SRCROOT%"}}));
    }
    EXPECT_EQ(loc["region"]["startLine"], ref["file"].is_string() ? ref["line"] : nlohmann::json(1));
  }
  fs::remove_all(dir);
}

TEST(CiFormats, sarif_with_invalid_utf8_fixes_and_bad_input_still_validates) {
  REQUIRE_SARIF_VALIDATOR();
  std::string dir = test::scratch_dir("ci-sarif-odd");
  SarifOptions o{.tool_version = "9.9.9",
                 .help_uri = "file:///doc/classifications.md",
                 .fixes = {{.library = "/w/libodd.so",
                            .symbol = "bad\xff"
                                      "name",
                            .description = "add the stub",
                            .edits = {{.file = "/w/stubs/unimplemented_functions.cpp",
                                       .start_line = 3,
                                       .end_line = 3,
                                       .inserted = "void stub() {}\n"}}}}};
  std::string text = render_sarif(awkward_report(), o);
  test::write_file(dir + "/odd.sarif", text);
  EXPECT_TRUE(sarif_is_valid(dir + "/odd.sarif"));
  auto doc = nlohmann::json::parse(text);  // throws on invalid UTF-8
  const auto& results = doc["runs"][0]["results"];
  ASSERT_EQ(results.size(), 3u);  // the missing library, then the two symbols
  EXPECT_EQ(results[0]["ruleId"], "missing-library");
  EXPECT_EQ(results[1]["properties"]["symbol"], "bad\\xFFname");
  EXPECT_EQ(results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "file:///w/src/a%3Ab%2Cc.cpp");
  const auto& edit = results[1]["fixes"][0]["artifactChanges"][0];
  EXPECT_EQ(edit["artifactLocation"]["uri"], "file:///w/stubs/unimplemented_functions.cpp");
  EXPECT_EQ(edit["replacements"][0]["deletedRegion"]["startLine"], 3);
  EXPECT_EQ(edit["replacements"][0]["insertedContent"]["text"], "void stub() {}\n");
  EXPECT_EQ(results[2]["level"], "note");
  EXPECT_EQ(results[2]["baselineState"], "unchanged");
  EXPECT_FALSE(results[2].contains("fixes"));
  EXPECT_EQ(doc["runs"][0]["invocations"][0]["executionSuccessful"], false);
  fs::remove_all(dir);
}

// --- SARIF fixes, applied as a SARIF consumer would ---

// The byte offset of (line, column) in `text`, columns in Unicode code points (the run's columnKind);
// npos when the position is not in the text.
size_t offset_of(const std::string& text, int line, int column) {
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return pos;
    ++pos;
  }
  for (int c = 1; c < column; ++c) {
    if (pos >= text.size() || text[pos] == '\n') return std::string::npos;
    ++pos;
    while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
  }
  return pos;
}

// One artifactChange's replacements, every region in the original text: applied from the last.
std::string apply_replacements(std::string text, const nlohmann::json& replacements) {
  struct Cut {
    size_t start, end;
    std::string inserted;
  };
  std::vector<Cut> cuts;
  for (const auto& r : replacements) {
    const auto& region = r["deletedRegion"];
    int line = region["startLine"];
    size_t start = offset_of(text, line, region.value("startColumn", 1));
    size_t end = offset_of(text, region.value("endLine", line), region.value("endColumn", 1));
    EXPECT_NE(start, std::string::npos) << region;
    EXPECT_NE(end, std::string::npos) << region;
    if (start == std::string::npos || end == std::string::npos || end < start) return text;
    if (!cuts.empty()) {
      EXPECT_LE(cuts.back().end, start) << "replacements out of order or overlapping";
    }
    cuts.push_back({start, end, r.contains("insertedContent") ? r["insertedContent"]["text"].get<std::string>() : ""});
  }
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) text.replace(it->start, it->end - it->start, it->inserted);
  return text;
}

// Every distinct fix of the run (results share one edit when it fixes several symbols; only the
// description differs), each applied once to the files as `original` gives them (absent: a file the
// fix creates). Returns the new contents by path; a file touched by two different edits is a
// failure (they would conflict).
std::map<std::string, std::string> apply_fixes(
    const nlohmann::json& sarif, const std::function<std::optional<std::string>(const std::string&)>& original) {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> change_of_file;  // path -> its replacements, applied once
  for (const auto& result : sarif["runs"][0]["results"]) {
    if (!result.contains("fixes")) continue;
    for (const auto& fix : result["fixes"]) {
      for (const auto& change : fix["artifactChanges"]) {
        std::string path = path_of(sarif, change["artifactLocation"]);
        std::string key = change["replacements"].dump();
        auto [it, fresh] = change_of_file.emplace(path, key);
        EXPECT_TRUE(fresh || it->second == key) << path << " is changed by two different edits";
        if (!fresh) continue;
        if (!files.count(path)) files[path] = original(path).value_or("");
        files[path] = apply_replacements(files[path], change["replacements"]);
      }
    }
  }
  return files;
}

// Pairs of texts whose fixes need every kind of region: a created file, insertions before the first
// line and at the end, replaced lines, deletions, and a last line without a newline (ended by column).
TEST(CiFormats, sarif_fix_replacements_rebuild_the_planned_files_byte_for_byte) {
  REQUIRE_SARIF_VALIDATOR();
  std::string dir = test::scratch_dir("ci-sarif-regions");
  struct Case {
    std::string before, after;
    bool created;
  };
  std::vector<Case> cases = {
      {"", "#pragma once\nint f();\n", true},
      {"a\nb\nc\n", "x\na\nb\nc\ny\n", false},
      {"a\nb\nc\nd\ne\n", "a\nB\nc\ne\n", false},
      {"set(SRCS\n  a.cpp\n  b.cpp)\ntarget_link_libraries(t PRIVATE m)",
       "set(SRCS\n  a.cpp\n  a2.cpp\n  b.cpp)\n"
       "target_link_libraries(t PRIVATE m n)",
       false},
      {"x\n\xC3\xA9t\xC3\xA9", "x\n\xC3\xA9t\xC3\xA9\nnew\n", false},  // columns count code points, not bytes
      {"keep\nlast", "keep\n", false},
  };
  stubgen::Plan plan;
  Report report;
  report.libraries.push_back({});
  report.libraries[0].path = dir + "/libt.so";
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string sym = "sym" + std::to_string(i);
    plan.cmake_files.push_back({dir + "/f" + std::to_string(i) + ".txt",
                                cases[i].before,
                                cases[i].after,
                                cases[i].created,
                                {{"add s" + std::to_string(i) + " to SRCS", {sym}}}});
    UnresolvedSymbol u;
    u.symbol = u.demangled = sym;
    u.type = SymbolType::Func;
    test::classify(u, Classification::MissingSource);
    report.libraries[0].unresolved.push_back(u);
  }
  auto fixes = stubgen::sarif_fixes(plan, report);
  ASSERT_EQ(fixes.size(), cases.size());
  std::string text = render_sarif(report, {.tool_version = "1", .help_uri = "", .fixes = fixes});
  test::write_file(dir + "/fixes.sarif", text);
  EXPECT_TRUE(sarif_is_valid(dir + "/fixes.sarif"));
  auto sarif = nlohmann::json::parse(text);
  EXPECT_EQ(sarif["runs"][0]["columnKind"], "unicodeCodePoints");
  auto files = apply_fixes(sarif, [&](const std::string& path) -> std::optional<std::string> {
    for (const auto& f : plan.cmake_files)
      if (f.path == path) return f.created ? std::nullopt : std::optional<std::string>(f.before);
    return std::nullopt;
  });
  ASSERT_EQ(files.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(files[plan.cmake_files[i].path], cases[i].after) << i;
  // A created file is one insertion at the start of the empty artifact, and says it is created.
  const auto& created = sarif["runs"][0]["results"][0]["fixes"][0];
  EXPECT_NE(created["description"]["text"].get<std::string>().find("create " + dir + "/f0.txt"), std::string::npos);
  const auto& region = created["artifactChanges"][0]["replacements"][0]["deletedRegion"];
  EXPECT_EQ(region, nlohmann::json({{"startLine", 1}, {"startColumn", 1}, {"endLine", 1}, {"endColumn", 1}}));
  // The unterminated last line "\xC3\xA9t\xC3\xA9" is three code points: its region ends at column 4.
  const auto& accent = sarif["runs"][0]["results"][4]["fixes"][0]["artifactChanges"][0]["replacements"][0];
  EXPECT_EQ(accent["deletedRegion"]["endLine"], 2);
  EXPECT_EQ(accent["deletedRegion"]["endColumn"], 4);
  fs::remove_all(dir);
}

// One edit fixing several symbols is repeated in each of their results, unless the copies would pass
// the budget (hundreds of stubs): then only the first result carries it, and says so.
TEST(CiFormats, a_shared_fix_is_repeated_per_result_within_the_budget_only) {
  stubgen::Plan plan;
  plan.cmake_files.push_back({"/w/CMakeLists.txt",
                              "set(S\n  a.cpp)\n",
                              "set(S\n  a.cpp\n  b.cpp)\n",
                              false,
                              {{"add b.cpp to S", {"f1", "f2", "f3"}}}});
  Report report;
  report.libraries.push_back({});
  report.libraries[0].path = "/w/libt.so";
  for (const char* sym : {"f1", "f2", "f3", "other"}) {
    UnresolvedSymbol u;
    u.symbol = u.demangled = sym;
    report.libraries[0].unresolved.push_back(u);
  }
  auto all = stubgen::sarif_fixes(plan, report);
  ASSERT_EQ(all.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(all[i].symbol, "f" + std::to_string(i + 1));
    EXPECT_EQ(all[i].edits.size(), 1u);
    EXPECT_EQ(all[i].description, "Add b.cpp to S (edit /w/CMakeLists.txt), as musa-stubgen --apply does");
  }
  auto once = stubgen::sarif_fixes(plan, report, 100);
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(once[0].symbol, "f1");
  EXPECT_EQ(once[0].edits[0].inserted, "  a.cpp\n  b.cpp)\n");  // line 2 replaced
  EXPECT_EQ(once[0].description,
            "Add b.cpp to S (edit /w/CMakeLists.txt), as musa-stubgen --apply does; given "
            "here once for all 3 results it fixes, to keep the report small");
}

// On the torch_musa world: musa-linkcheck's SARIF fixes, applied to the original files, give byte for
// byte what `musa-stubgen --apply` writes (same directory, same defaults: the stubs beside the sources
// of the library's target), and the output validates.
TEST(CiFormats, sarif_fixes_of_the_world_are_what_musa_stubgen_apply_writes) {
  REQUIRE_SARIF_VALIDATOR();
  std::string w = test::scratch_dir("ci-sarif-world");
  auto built = run("cmake -DSOURCE=" + quote(kSource + "/fixtures/torch_musa") + " -DDEST=" + quote(w) + " -P " +
                   quote(kSource + "/tests/build_world.cmake"));
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  std::string b = w + "/build", src = w + "/src";
  // The world's sources are a checkout of their own: %SRCROOT% is its top.
  ASSERT_EQ(run("git init -q " + quote(src)).status, 0);
  std::string args = " --build-dir " + quote(b) + " --source-root " + quote(src + "/pytorch") + " --sdk-home " +
                     quote(b + "/musa_sdk") + " --cuda-home " + quote(b + "/cuda_home") + " --mapping " +
                     quote(src + "/mapping") + " --with " + quote(b + "/libc10.so") + " --library-path " +
                     quote(b + "/musa_sdk/lib") + " " + quote(b + "/torch_musa/csrc/libmusa_kernels.so");
  std::string cmake = src + "/torch_musa/csrc/CMakeLists.txt";
  // A last line without a newline, where the link fix lands: its region must end by column.
  std::string cmake_text = test::read_file(cmake);
  ASSERT_EQ(cmake_text.back(), '\n');
  cmake_text.pop_back();
  test::write_file(cmake, cmake_text);
  // A stub file musa-stubgen could not merge into costs the stub fixes only: a warning naming it,
  // the same exit status, and the CMake fixes still there.
  const std::string csrc = src + "/torch_musa/csrc";  // musa_kernels' source directory: where the stubs go
  std::string broken = w + "/broken";
  fs::create_directories(broken);
  test::write_file(csrc + "/unimplemented_functions.cpp", "// musa-stubgen: begin generated stubs\n");
  auto b_run = run("cd " + quote(broken) + " && " + kBin + " --format sarif -o " + quote(broken + "/r.sarif") + args);
  fs::remove(csrc + "/unimplemented_functions.cpp");
  EXPECT_EQ(b_run.status, 1) << b_run.err;
  EXPECT_NE(b_run.err.find("musa-linkcheck: warning: no fixes from " + csrc + "/unimplemented_functions.cpp: "),
            std::string::npos)
      << b_run.err;
  EXPECT_TRUE(sarif_is_valid(broken + "/r.sarif"));
  auto b_sarif = nlohmann::json::parse(test::read_file(broken + "/r.sarif"));
  size_t with_fixes = 0;
  for (const auto& r : b_sarif["runs"][0]["results"]) {
    if (!r.contains("fixes")) continue;
    ++with_fixes;
    EXPECT_EQ(path_of(b_sarif, r["fixes"][0]["artifactChanges"][0]["artifactLocation"]), cmake) << r["ruleId"];
  }
  EXPECT_EQ(with_fixes, 4u);  // three missing sources and the unlinked mublas

  // The stubs go where musa-stubgen puts them by default: beside the target's sources, wherever it runs.
  std::string ops = src + "/torch_musa/csrc/aten/ops/musa";
  std::string in_ops = "cd " + quote(ops) + " && ";
  auto s = run(in_ops + kBin + " --format sarif -o " + quote(w + "/r.sarif") + args);
  EXPECT_EQ(s.status, 1) << s.err;
  EXPECT_TRUE(sarif_is_valid(w + "/r.sarif"));
  auto sarif = nlohmann::json::parse(test::read_file(w + "/r.sarif"));
  EXPECT_EQ(github_subset_breaches(sarif), std::vector<std::string>{});
  // From a real build: the checkout is %SRCROOT%, and what lies in it is named relative to it.
  EXPECT_EQ(sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file://" + src + "/");
  size_t relative = 0;
  for (const auto& r : sarif["runs"][0]["results"]) {
    const auto& a = r["locations"][0]["physicalLocation"]["artifactLocation"];
    bool inside = path_of(sarif, a).rfind(src + "/", 0) == 0;
    EXPECT_EQ(a.contains("uriBaseId"), inside) << a;
    relative += inside;
    for (const auto& f : r.value("fixes", nlohmann::json::array()))
      for (const auto& c : f["artifactChanges"]) EXPECT_EQ(c["artifactLocation"]["uriBaseId"], "%SRCROOT%") << c;
  }
  EXPECT_GT(relative, 0u);

  // Every stubbed or patched symbol's result has its fix; nothing else has one.
  std::map<std::string, std::string> fixed;  // symbol -> its fix's first file
  for (const auto& r : sarif["runs"][0]["results"]) {
    std::string rule = r["ruleId"];
    bool fixable =
        rule == "missing-source" || rule == "sdk-declared-only" || rule == "cuda-only" || rule == "unlinked-library";
    EXPECT_EQ(r.contains("fixes"), fixable) << r["properties"]["symbol"] << " " << rule;
    if (!r.contains("fixes")) continue;
    EXPECT_EQ(r["fixes"].size(), 1u);
    fixed[r["properties"]["symbol"]] = path_of(sarif, r["fixes"][0]["artifactChanges"][0]["artifactLocation"]);
  }
  // Each result's fix says first what in the shared edit fixes its own symbol.
  std::map<std::string, std::string> described;  // symbol -> its fix's description
  for (const auto& r : sarif["runs"][0]["results"])
    if (r.contains("fixes")) described[r["properties"]["symbol"]] = r["fixes"][0]["description"]["text"];
  const std::string gen = "${GENERATED_PORTING_DIR}/aten/src/ATen/";
  auto starts = [&](const std::string& symbol, const std::string& prefix) {
    EXPECT_EQ(described[symbol].rfind(prefix, 0), 0u) << symbol << ": " << described[symbol];
  };
  EXPECT_EQ(fixed["musaMallocAsync"], csrc + "/unimplemented_functions.cpp");  // sdk-declared-only: a stub
  starts("musaMallocAsync", "Add a stub for musaMallocAsync (create " + csrc + "/unimplemented_functions.cpp, create " +
                                csrc + "/unimplemented_functions.h, create " + csrc +
                                "/musa_stubs.h; the same edit also "
                                "does: add a stub for ");
  EXPECT_EQ(fixed["musaLaunchHostFunc"], csrc + "/unimplemented_functions.cpp");  // cuda-only: a stub too
  EXPECT_EQ(fixed["_ZN2at6native19resize_output_checkEl"], cmake);                // missing-source: the source list
  starts("_ZN2at6native19resize_output_checkEl",
         "Add " + gen + "native/musa/Resize.cpp to PORTING_CPP_CSRCS (edit " + cmake + "; the same edit also does: ");
  starts("_ZN2at4musa3cub28exclusive_sum_in_common_typeIiiEEvPKT_PT0_l",
         "Add " + gen + "musa/cub.mu to MU_SRCS (edit ");
  EXPECT_EQ(fixed["mublasSgemm_v2"], cmake);  // unlinked-library: the link line
  starts("mublasSgemm_v2", "Link musa_kernels with mublas (edit " + cmake + "; ");
  EXPECT_EQ(fixed.count("PVRSRVGetDevInfo"), 0u);  // unknown: neither stub nor patch fixes it

  // The fixes applied to the originals, before musa-stubgen writes over them.
  auto fixed_files = apply_fixes(sarif, [&](const std::string& path) -> std::optional<std::string> {
    if (!fs::exists(path)) return std::nullopt;
    return test::read_file(path);
  });
  ASSERT_GE(fixed_files.size(), 4u);  // the CMake file, the stub source, its header, the stub runtime header
  // The stub source goes into the build with the rest, as --apply puts it there.
  EXPECT_NE(fixed_files[cmake].find("unimplemented_functions.cpp"), std::string::npos) << fixed_files[cmake];
  auto applied = run(in_ops + kStubgen + " --apply --no-confirm" + args);
  EXPECT_NE(applied.err.find(std::to_string(fixed_files.size()) + " files changed"), std::string::npos) << applied.err;
  for (const auto& [path, text] : fixed_files) EXPECT_EQ(test::read_file(path), text) << path;

  // Fixes are planned against the files as they are: once applied (the library not yet rebuilt, so
  // the findings remain), nothing is left to change and no result carries a fix.
  auto again = run(in_ops + kBin + " --format sarif -o " + quote(w + "/again.sarif") + args);
  EXPECT_EQ(again.status, 1) << again.err;
  auto again_sarif = nlohmann::json::parse(test::read_file(w + "/again.sarif"));
  EXPECT_EQ(again_sarif["runs"][0]["results"].size(), sarif["runs"][0]["results"].size());
  for (const auto& r : again_sarif["runs"][0]["results"]) EXPECT_FALSE(r.contains("fixes")) << r["fixes"];
  fs::remove_all(w);
}

// XPath through xmllint: the parser Jenkins and GitLab trust is the oracle, not our own reading.
std::string xpath(const std::string& file, const std::string& expr) {
  std::string out = run("xmllint --xpath " + quote(expr) + " " + quote(file)).out;
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The JUnit tests check their XML with xmllint: checked once for each.
class CiFormatsJUnit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run("command -v xmllint").status != 0) MLC_SKIP() << "xmllint is not installed (libxml2-utils)";
  }
};

TEST_F(CiFormatsJUnit, junit_has_a_suite_per_library_and_a_failing_case_per_symbol) {
  std::string dir = test::scratch_dir("ci-junit");
  std::string file = dir + "/r.xml";
  auto r = run(kBin + " --format junit -o " + quote(file) + " " + quote(kFix + "/ver/libver_user.so") + " " +
               quote(kFix + "/chain/rpath/libchain_a.so"));
  EXPECT_EQ(r.status, 1) << r.err;
  auto lint = run("xmllint --noout " + quote(file));
  ASSERT_EQ(lint.status, 0) << lint.err;
  EXPECT_EQ(xpath(file, "count(/testsuites/testsuite)"), "2");
  EXPECT_EQ(xpath(file, "string(/testsuites/@tests)"), "3");
  EXPECT_EQ(xpath(file, "string(/testsuites/@failures)"), "2");
  std::string user = "/testsuites/testsuite[@name='" + kFix + "/ver/libver_user.so']";
  EXPECT_EQ(xpath(file, "string(" + user + "/@failures)"), "2");
  EXPECT_EQ(xpath(file, "string(" + user + "/testcase[1]/@name)"), "ver_hid");
  EXPECT_EQ(xpath(file, "string(" + user + "/testcase[2]/@name)"), "ver_moved@VER_2");
  EXPECT_EQ(xpath(file, "string(" + user + "/testcase[1]/failure/@type)"), "hidden");
  EXPECT_EQ(xpath(file, "string(" + user + "/testcase[1]/failure/@message)"), "undefined symbol: ver_hid");
  std::string body = xpath(file, "string(" + user + "/testcase[2]/failure)");
  EXPECT_NE(body.find("version-mismatch: defined in " + kFix + "/ver/run/libver.so.1, but not with version VER_2"),
            std::string::npos)
      << body;
  std::string clean = "/testsuites/testsuite[@name='" + kFix + "/chain/rpath/libchain_a.so']";
  EXPECT_EQ(xpath(file, "string(" + clean + "/@failures)"), "0");
  EXPECT_EQ(xpath(file, "count(" + clean + "/testcase[not(failure)])"), "1");
  fs::remove_all(dir);
}

TEST_F(CiFormatsJUnit, junit_with_invalid_utf8_and_bad_input_is_well_formed) {
  std::string dir = test::scratch_dir("ci-junit-odd");
  std::string file = dir + "/odd.xml";
  test::write_file(file, render_junit(awkward_report()));
  auto lint = run("xmllint --noout " + quote(file));
  ASSERT_EQ(lint.status, 0) << lint.err;
  EXPECT_EQ(xpath(file, "string(//testcase[2]/@name)"), "bad\\xFFname");
  EXPECT_EQ(xpath(file, "count(//testcase/skipped)"), "1");
  EXPECT_EQ(xpath(file, "string(/testsuites/@errors)"), "1");
  EXPECT_EQ(xpath(file, "string(//testsuite[@name='inputs']/testcase/error/@message)"),
            "/w/not-elf.txt: not an ELF file");
  fs::remove_all(dir);
}

TEST(CiFormats, github_commands_escape_data_and_properties_as_the_runner_requires) {
  // Paths relative to the checkout the runner resolves them in; a finding without a source line is
  // on its library, with no line.
  std::string want =
      "::error file=libodd.so,title=missing-library%3A library not found%3A libgone.so.1::library not found: "
      "libgone.so.1"
      "%0Aneeded by /w/libodd.so%0Asearched /w/lib/libgone.so.1 [runpath]: no such file\n"
      "::error file=src/a%3Ab%2Cc.cpp,line=7,title=sdk-declared-only%3A undefined symbol%3A bad\\xFFname::"
      "undefined symbol: bad\\xFFname%0Areferenced by /w/src/a:b,c.cpp:7 (use_it) in /w/libodd.so"
      "%0Asdk-declared-only: declared in /w/include/100%25.h:3 but defined in no source, SDK library or CUDA "
      "library that was searched%0Afix: write a stub for it (musa-stubgen), or find the source that should define "
      "it\n"
      "::notice file=libodd.so,title=unknown%3A undefined symbol%3A old_one::undefined symbol: old_one"
      "%0Areferenced by /w/libodd.so%0Aunknown: no object in the global scope (3 loaded) defines it\n"
      "::error file=not-elf.txt,title=unusable input::/w/not-elf.txt: not an ELF file\n";
  EXPECT_EQ(render_github(awkward_report(), "/w"), want);
}

// Two inputs need one missing library: each input's annotations and JUnit cases name that input in
// their fix (libb.so's said "add the directory ... to liba.so's RUNPATH").
TEST_F(CiFormatsJUnit, each_inputs_records_name_that_input_when_inputs_share_a_cause) {
  std::string dir = test::scratch_dir("ci-shared-cause");
  test::write_file(dir + "/m.c", "int miss_fn(void) { return 1; }\n");
  test::write_file(dir + "/u.c", "int miss_fn(void);\nint use(void) { return miss_fn(); }\n");
  ASSERT_EQ(run("cd " + quote(dir) +
                " && git init -q . && gcc -shared -fPIC -Wl,-soname,libmiss.so.1 -o libmiss.so.1 m.c && "
                "gcc -shared -fPIC -o liba.so u.c libmiss.so.1 && gcc -shared -fPIC -o libb.so u.c libmiss.so.1 && "
                "rm libmiss.so.1")
                .status,
            0);
  auto gh = run("cd " + quote(dir) + " && " + kBin +
                " --no-cache --sdk-home '' --cuda-home '' --format github liba.so libb.so");
  EXPECT_EQ(gh.status, 1) << gh.err;
  for (const std::string lib : {"liba.so", "libb.so"}) {
    std::string line, prefix = "::error file=" + lib + ",title=missing-library%3A undefined symbol";
    for (size_t at = 0, end; (end = gh.out.find('\n', at)) != std::string::npos; at = end + 1)
      if (gh.out.compare(at, prefix.size(), prefix) == 0) line = gh.out.substr(at, end - at);
    EXPECT_NE(line.find("%0Afix: install libmiss.so.1, or add the directory that holds it to " + lib +
                        "'s RUNPATH or LD_LIBRARY_PATH"),
              std::string::npos)
        << lib << ":\n"
        << gh.out;
  }
  std::string file = dir + "/r.xml";
  auto ju = run("cd " + quote(dir) + " && " + kBin +
                " --no-cache --sdk-home '' --cuda-home '' --format junit -o r.xml liba.so libb.so");
  EXPECT_EQ(ju.status, 1) << ju.err;
  std::string body = xpath(file, "string(//testsuite[@name='" + dir + "/libb.so']/testcase[@name='miss_fn']/failure)");
  EXPECT_NE(body.find("fix: install libmiss.so.1, or add the directory that holds it to libb.so's RUNPATH or "
                      "LD_LIBRARY_PATH"),
            std::string::npos)
      << body;
  EXPECT_EQ(body.find("liba.so"), std::string::npos) << body;
}

// A library built without -g: the annotation is on the library, relative to the checkout, with no line.
TEST(CiFormats, github_annotation_of_a_library_without_debug_information_is_on_the_library_without_a_line) {
  std::string dir = test::scratch_dir("ci-github-nodebug");
  test::write_file(dir + "/n.c", "int gone(void);\nint use(void) { return gone(); }\n");
  ASSERT_EQ(run("cd " + quote(dir) + " && git init -q . && mkdir lib && gcc -shared -fPIC -g0 -o lib/libnodebug.so n.c")
                .status,
            0);
  auto r = run("cd " + quote(dir) + " && " + kBin + " --no-cache --format github lib/libnodebug.so");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("::", 2) + 2),
            "::error file=lib/libnodebug.so,title=unknown%3A undefined symbol%3A gone::")
      << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(CiFormats, github_format_from_the_command_line_annotates_the_referencing_line) {
  auto r = run("cd " + quote(kSource) + " && " + kBin + " --format github " + quote(kFix + "/ver/libver_user.so"));
  EXPECT_EQ(r.status, 1);
  const std::string src = std::string(MLC_SOURCE_DIR) + "/fixtures/loader/src/fixture.c";
  std::string want =
      "::error file=fixtures/loader/src/fixture.c,line=8,title=hidden%3A undefined symbol%3A ver_hid::undefined "
      "symbol: ver_hid"
      "%0Areferenced by " +
      src + ":8 (use_ver_hid) in " + kFix +
      "/ver/libver_user.so"
      "%0Ahidden: defined in " +
      kFix +
      "/ver/run/libver.so.1 only under a hidden (non-default) version, "
      "invisible to an unversioned reference"
      "%0Afix: make the version the default (@@) in the provider's version script\n";
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), want);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
}

// A library built in a container names sources there (/project/..., /opt/_internal/...): a CI
// annotation at such a path points at nothing anyone can open. A reference's file is used only when it
// exists here (the next reference's otherwise), else the finding goes on the library, in GitHub's
// commands and in SARIF alike.
TEST(CiFormats, an_annotation_is_on_a_source_only_when_that_file_exists_here_else_on_the_library) {
  std::string dir = test::scratch_dir("ci-gone-source");
  ASSERT_FALSE(fs::exists("/project/gone/gone.c"));
  test::write_file(dir + "/gone.c",
                   "int gone_here(void);\nint both_here(void);\nint use_gone(void) { return gone_here() + both_here(); "
                   "}\n");
  test::write_file(dir + "/kept.c",
                   "int kept_here(void);\nint both_here(void);\nint use_kept(void) {\n  return kept_here() + "
                   "both_here();\n}\n");
  ASSERT_EQ(
      run("cd " + quote(dir) + " && git init -q . && mkdir lib && gcc -g -fPIC -c -fdebug-prefix-map=" + quote(dir) +
          "=/project/gone gone.c && gcc -g -fPIC -c kept.c && gcc -shared -o lib/libci.so gone.o "
          "kept.o")
          .status,
      0);
  // The DWARF says what the test means: gone.c's references under /project/gone, kept.c's here.
  auto j =
      run("cd " + quote(dir) + " && " + kBin + " --no-cache --sdk-home '' --cuda-home '' --format json lib/libci.so");
  ASSERT_EQ(j.status, 1) << j.err;
  std::map<std::string, std::vector<std::string>> refs;
  const auto report = nlohmann::json::parse(j.out);
  for (const auto& u : report["libraries"][0]["unresolved"])
    for (const auto& r : u["referenced_by"])
      refs[u["symbol"].get<std::string>()].push_back(r["file"].is_string() ? r["file"].get<std::string>() : "");
  EXPECT_EQ(refs["gone_here"], std::vector<std::string>{"/project/gone/gone.c"}) << j.out;
  EXPECT_EQ(refs["both_here"], (std::vector<std::string>{"/project/gone/gone.c", dir + "/kept.c"})) << j.out;

  auto gh =
      run("cd " + quote(dir) + " && " + kBin + " --no-cache --sdk-home '' --cuda-home '' --format github lib/libci.so");
  EXPECT_EQ(gh.status, 1) << gh.err;
  std::map<std::string, std::string> where;  // symbol -> the annotation's properties before the title
  for (size_t at = 0, end; (end = gh.out.find('\n', at)) != std::string::npos; at = end + 1) {
    const std::string line = gh.out.substr(at, end - at), title = ",title=unknown%3A undefined symbol%3A ";
    size_t t = line.find(title);
    if (t == std::string::npos) continue;
    size_t name = t + title.size();
    where[line.substr(name, line.find("::", name) - name)] = line.substr(0, t);
  }
  EXPECT_EQ(where, (std::map<std::string, std::string>{{"both_here", "::error file=kept.c,line=4"},
                                                       {"gone_here", "::error file=lib/libci.so"},
                                                       {"kept_here", "::error file=kept.c,line=4"}}))
      << gh.out;

  auto s = run("cd " + quote(dir) + " && " + kBin +
               " --no-cache --sdk-home '' --cuda-home '' --format sarif -o r.sarif lib/libci.so");
  EXPECT_EQ(s.status, 1) << s.err;
  auto sarif = nlohmann::json::parse(test::read_file(dir + "/r.sarif"));
  std::map<std::string, std::string> placed;  // symbol -> uri:startLine
  for (const auto& r : sarif["runs"][0]["results"]) {
    const auto& loc = r["locations"][0];
    const auto& phys = loc["physicalLocation"];
    placed[loc["logicalLocations"][0]["decoratedName"].get<std::string>()] =
        phys["artifactLocation"].value("uriBaseId", "") + "/" + phys["artifactLocation"]["uri"].get<std::string>() +
        ":" + std::to_string(phys["region"]["startLine"].get<int>());
  }
  EXPECT_EQ(placed, (std::map<std::string, std::string>{{"both_here", "%SRCROOT%/kept.c:4"},
                                                        {"gone_here", "%SRCROOT%/lib/libci.so:1"},
                                                        {"kept_here", "%SRCROOT%/kept.c:4"}}))
      << sarif.dump(1);
}

}  // namespace
}  // namespace mlc
