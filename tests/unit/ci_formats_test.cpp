// The CI formats as their consumers read them: SARIF validated against the official 2.1.0 schema,
// JUnit XML checked by xmllint and counted with XPath, GitHub workflow commands compared line by line
// (escaping included). Names with invalid UTF-8 must leave every format well-formed.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "report/render.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kExample = MLC_EXAMPLE_DIR;
const std::string kSchema = std::string(MLC_SOURCE_DIR) + "/../shared/data/schemas/sarif-schema-2.1.0.json";

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
  gone.search = {SearchStep{.path = "/w/lib/libgone.so.1", .how = "runpath", .outcome = "no such file"}};
  lib.needed.push_back(gone);
  UnresolvedSymbol odd;
  odd.symbol = odd.demangled = "bad\xff" "name";
  odd.type = "func";
  odd.binding = "global";
  odd.referenced_by = {Reference{.library = "/w/libodd.so", .function = "use_it", .file = "/w/src/a:b,c.cpp", .line = 7}};
  odd.classification = Classification::SdkDeclaredOnly;
  odd.reason = "declared in 100% of the SDK headers";
  odd.fix = Fix{.kind = "stub", .cmake_file = {}, .list = {}, .entry = {}, .library = {}, .detail = "write a stub"};
  lib.unresolved.push_back(odd);
  UnresolvedSymbol old;
  old.symbol = old.demangled = "old_one";
  old.type = "object";
  old.binding = "global";
  old.referenced_by = {Reference{.library = "/w/libodd.so", .function = {}, .file = {}, .line = {}}};
  old.classification = Classification::Unknown;
  old.reason = "nothing defines it";
  old.baselined = true;
  lib.unresolved.push_back(old);
  r.libraries.push_back(lib);
  r.errors.push_back({"/w/not-elf.txt", "not an ELF file"});
  return r;
}

void validate_sarif(const std::string& file) {
  if (!fs::exists(kSchema)) GTEST_SKIP() << "SARIF schema not found at " << kSchema;
  if (run("python3 -c 'import jsonschema'").status != 0) GTEST_SKIP() << "python3-jsonschema not installed";
  auto v = run("python3 -c 'import json,sys,jsonschema; jsonschema.Draft7Validator(json.load(open(sys.argv[2])))"
               ".validate(json.load(open(sys.argv[1])))' " + quote(file) + " " + quote(kSchema));
  EXPECT_EQ(v.status, 0) << v.err;
}

TEST(CiFormats, sarif_of_the_bundled_example_validates_and_has_one_result_per_symbol) {
  std::string dir = test::scratch_dir("ci-sarif");
  std::string args = " --with " + quote(kExample + "/libc10.so") + " " + quote(kExample + "/libmusa_kernels.so");
  auto s = run(kBin + " --format sarif -o " + quote(dir + "/r.sarif") + args);
  EXPECT_EQ(s.status, 1) << s.err;
  auto j = run(kBin + " --format json" + args);
  auto report = nlohmann::json::parse(j.out);
  auto sarif = nlohmann::json::parse(test::read_file(dir + "/r.sarif"));
  validate_sarif(dir + "/r.sarif");

  const auto& run0 = sarif["runs"][0];
  EXPECT_EQ(sarif["version"], "2.1.0");
  // One rule per classification, each linking to its own anchor of docs/classifications.md.
  std::string page = test::read_file(std::string(MLC_SOURCE_DIR) + "/docs/classifications.md");
  const auto& rules = run0["tool"]["driver"]["rules"];
  EXPECT_EQ(rules.size(), 11u);
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
    EXPECT_EQ(res["message"]["text"].get<std::string>().rfind("undefined symbol: " + u["demangled"].get<std::string>(), 0), 0u);
    const auto& loc = res["locations"][0]["physicalLocation"];
    const auto& ref = u["referenced_by"][0];
    if (ref["file"].is_string()) {
      EXPECT_EQ(loc["artifactLocation"]["uri"], "file://" + ref["file"].get<std::string>());
      EXPECT_EQ(loc["region"]["startLine"], ref["line"]);
    } else {
      EXPECT_EQ(loc["artifactLocation"]["uri"], "file://" + kExample + "/libmusa_kernels.so");
    }
  }
  fs::remove_all(dir);
}

TEST(CiFormats, sarif_with_invalid_utf8_fixes_and_bad_input_still_validates) {
  std::string dir = test::scratch_dir("ci-sarif-odd");
  SarifOptions o{.tool_version = "9.9.9", .help_uri = "file:///doc/classifications.md",
                 .fixes = {{.library = "/w/libodd.so", .symbol = "bad\xff" "name", .description = "add the stub",
                            .edits = {{.file = "/w/stubs/unimplemented_functions.cpp", .start_line = 3, .end_line = 3,
                                       .inserted = "void stub() {}\n"}}}}};
  std::string text = render_sarif(awkward_report(), o);
  test::write_file(dir + "/odd.sarif", text);
  validate_sarif(dir + "/odd.sarif");
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

// XPath through xmllint: the parser Jenkins and GitLab trust is the oracle, not our own reading.
std::string xpath(const std::string& file, const std::string& expr) {
  std::string out = run("xmllint --xpath " + quote(expr) + " " + quote(file)).out;
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(CiFormats, junit_has_a_suite_per_library_and_a_failing_case_per_symbol) {
  if (run("command -v xmllint").status != 0) GTEST_SKIP() << "xmllint (libxml2-utils) not installed";
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
            std::string::npos) << body;
  std::string clean = "/testsuites/testsuite[@name='" + kFix + "/chain/rpath/libchain_a.so']";
  EXPECT_EQ(xpath(file, "string(" + clean + "/@failures)"), "0");
  EXPECT_EQ(xpath(file, "count(" + clean + "/testcase[not(failure)])"), "1");
  fs::remove_all(dir);
}

TEST(CiFormats, junit_with_invalid_utf8_and_bad_input_is_well_formed) {
  if (run("command -v xmllint").status != 0) GTEST_SKIP() << "xmllint (libxml2-utils) not installed";
  std::string dir = test::scratch_dir("ci-junit-odd");
  std::string file = dir + "/odd.xml";
  test::write_file(file, render_junit(awkward_report()));
  auto lint = run("xmllint --noout " + quote(file));
  ASSERT_EQ(lint.status, 0) << lint.err;
  EXPECT_EQ(xpath(file, "string(//testcase[2]/@name)"), "bad\\xFFname");
  EXPECT_EQ(xpath(file, "count(//testcase/skipped)"), "1");
  EXPECT_EQ(xpath(file, "string(/testsuites/@errors)"), "1");
  EXPECT_EQ(xpath(file, "string(//testsuite[@name='inputs']/testcase/error/@message)"), "/w/not-elf.txt: not an ELF file");
  fs::remove_all(dir);
}

TEST(CiFormats, github_commands_escape_data_and_properties_as_the_runner_requires) {
  std::string want =
      "::error title=missing-library%3A library not found%3A libgone.so.1::library not found: libgone.so.1"
      "%0Aneeded by /w/libodd.so%0Asearched /w/lib/libgone.so.1 [runpath]: no such file\n"
      "::error file=/w/src/a%3Ab%2Cc.cpp,line=7,title=sdk-declared-only%3A undefined symbol%3A bad\\xFFname::"
      "undefined symbol: bad\\xFFname%0Areferenced by /w/src/a:b,c.cpp:7 (use_it) in /w/libodd.so"
      "%0Asdk-declared-only: declared in 100%25 of the SDK headers%0Afix: write a stub\n"
      "::notice title=unknown%3A undefined symbol%3A old_one::undefined symbol: old_one"
      "%0Areferenced by /w/libodd.so%0Aunknown: nothing defines it\n"
      "::error file=/w/not-elf.txt,title=unusable input::/w/not-elf.txt: not an ELF file\n";
  EXPECT_EQ(render_github(awkward_report()), want);
}

TEST(CiFormats, github_format_from_the_command_line_annotates_the_referencing_line) {
  auto r = run(kBin + " --format github " + quote(kFix + "/ver/libver_user.so"));
  EXPECT_EQ(r.status, 1);
  const std::string src = std::string(MLC_SOURCE_DIR) + "/fixtures/loader/src/fixture.c";
  std::string want =
      "::error file=" + src + ",line=8,title=hidden%3A undefined symbol%3A ver_hid::undefined symbol: ver_hid"
      "%0Areferenced by " + src + ":8 (use_ver_hid) in " + kFix + "/ver/libver_user.so"
      "%0Ahidden: defined in " + kFix + "/ver/run/libver.so.1 only under a hidden (non-default) version, "
      "invisible to an unversioned reference"
      "%0Afix: make the version the default (@@) in the provider's version script\n";
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), want);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
}

}  // namespace
}  // namespace mlc
