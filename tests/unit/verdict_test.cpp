// The resolver (src/verdict): one declared precedence over the passes' claims, the table of
// docs/architecture.md ("Evidence order") in the code's order, and no other writer of a classification.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "verdict/verdict.h"

namespace mlc {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The pass column of the "Evidence order" table, each pass once, in the table's row order.
std::vector<std::string> table_passes() {
  const std::string doc = read_file(std::string(MLC_SOURCE_DIR) + "/docs/architecture.md");
  const size_t at = doc.find("## Evidence order");
  EXPECT_NE(at, std::string::npos) << "docs/architecture.md has no Evidence order section";
  std::istringstream lines(doc.substr(at));
  std::vector<std::string> passes;
  std::string line;
  bool in_table = false;
  const std::regex row(R"(^\| [0-9.]+ \| [^|]+ \| [^|]+ \| `([a-z-]+)` \|)");
  while (std::getline(lines, line)) {
    if (line.rfind("| order |", 0) == 0) in_table = true;
    else if (in_table && line.rfind("|", 0) != 0) break;
    std::smatch m;
    if (in_table && std::regex_search(line, m, row) && (passes.empty() || passes.back() != m[1].str()))
      passes.push_back(m[1].str());
  }
  return passes;
}

TEST(Verdict, the_documented_table_lists_every_pass_in_rank_order) {
  std::vector<std::string> code;
  for (EvidencePass p : verdict::precedence()) code.push_back(to_string(p));
  // Written out: the precedence the docs promise, lowest rank first.
  const std::vector<std::string> promised = {"loader",    "unexported", "shadow",   "missing-library",
                                             "trace",     "compiler",   "host-api", "host",
                                             "host-load", "near-miss",  "provider"};
  EXPECT_EQ(code, promised);
  EXPECT_EQ(table_passes(), promised);
}

// The passes in the table's order, as values: the expected ranks come from the documentation, not
// from verdict::precedence(), the code under test.
std::vector<EvidencePass> documented_order() {
  std::vector<EvidencePass> out;
  for (const auto& name : table_passes()) {
    bool found = false;
    for (int k = 0; k <= static_cast<int>(EvidencePass::Provider); ++k)
      if (to_string(static_cast<EvidencePass>(k)) == name) out.push_back(static_cast<EvidencePass>(k)), found = true;
    EXPECT_TRUE(found) << "the table names a pass the code lacks: " << name;
  }
  return out;
}

TEST(Verdict, a_higher_ranked_pass_wins_whichever_ran_first) {
  const auto passes = documented_order();
  ASSERT_EQ(passes.size(), 11u);
  // Each pair in both orders, and with the two classes both ways round: the higher pass's class
  // stands whether it is the lower or the higher class (a resolver that took the lowest class, or the
  // last claim, fails one of the four).
  const std::pair<Classification, Classification> classes[] = {
      {Classification::MissingLibrary, Classification::MissingSource},
      {Classification::MissingSource, Classification::MissingLibrary}};
  for (size_t low = 0; low < passes.size(); ++low) {
    for (size_t high = low + 1; high < passes.size(); ++high) {
      for (const auto& [low_is, high_is] : classes) {
        UnresolvedSymbol in_order, reversed;
        verdict::claim(in_order, passes[low], low_is);
        verdict::claim(in_order, passes[high], high_is);
        verdict::claim(reversed, passes[high], high_is);
        verdict::claim(reversed, passes[low], low_is);
        verdict::resolve(in_order);
        verdict::resolve(reversed);
        EXPECT_EQ(in_order.classification, high_is)
            << to_string(passes[high]) << " over " << to_string(passes[low]) << ", claimed in rank order";
        EXPECT_EQ(reversed.classification, high_is)
            << to_string(passes[high]) << " over " << to_string(passes[low]) << ", claimed in reverse";
      }
    }
  }
}

TEST(Verdict, a_pass_may_take_back_what_a_lower_one_claimed) {
  // The loader's "a needed library is missing" for a miss no object defines; the tracer finds the
  // template that no unit instantiates and says so, still unknown: its unknown stands.
  UnresolvedSymbol u;
  verdict::claim(u, EvidencePass::Loader, Classification::MissingLibrary);
  verdict::claim(u, EvidencePass::Trace, Classification::Unknown);
  EXPECT_EQ(verdict::current(u), Classification::Unknown);
  // Within one pass the last claim stands (the tracer's cuda-only, then the map's counterpart).
  verdict::claim(u, EvidencePass::Trace, Classification::CudaOnly);
  verdict::claim(u, EvidencePass::Trace, Classification::Unported);
  verdict::resolve(u);
  EXPECT_EQ(u.classification, Classification::Unported);
}

TEST(Verdict, a_finding_read_from_a_saved_report_keeps_its_classification) {
  UnresolvedSymbol u;
  u.classification = Classification::SdkDeclaredOnly;  // as read_json reads it
  EXPECT_EQ(verdict::current(u), Classification::SdkDeclaredOnly);
  verdict::resolve(u);
  EXPECT_EQ(u.classification, Classification::SdkDeclaredOnly);
  verdict::claim(u, EvidencePass::Trace, Classification::MissingSource);  // traced again by stubgen
  verdict::resolve(u);
  EXPECT_EQ(u.classification, Classification::MissingSource);
}

// The lines of src/'s C++ files that match `pattern` ("file:line"), but in the files `exempt` names;
// `files` counts every file read or exempted (src/ was found).
struct Lines {
  std::vector<std::string> found;
  size_t files = 0;
};
template <class Exempt>
Lines lines_of_src(const std::regex& pattern, Exempt exempt) {
  Lines out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(MLC_SOURCE_DIR) + "/src")) {
    const std::string path = e.path().string();
    if (!e.is_regular_file() || !(path.ends_with(".cpp") || path.ends_with(".h"))) continue;
    ++out.files;
    if (exempt(path)) continue;
    std::istringstream lines(read_file(path));
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n)
      if (std::regex_search(line, pattern)) out.found.push_back(path + ":" + std::to_string(n));
  }
  return out;
}

// The resolver is the one writer: no file of src/ but src/verdict (and the JSON reader, which reads a
// decided report back) assigns a finding's classification.
TEST(Verdict, no_pass_writes_a_classification) {
  // `x.classification = ...` or `p->classification = ...`; not a designated initializer `{.classification = c}`
  // of another struct (ci::Rule), nor a comparison.
  const std::regex write(R"([\w\)\]](\.|->)classification\s*=[^=])");
  ASSERT_TRUE(std::regex_search("    u_.classification = Classification::Unknown;", write));
  ASSERT_TRUE(std::regex_search("  again->classification = c;", write));
  ASSERT_FALSE(std::regex_search("  return {.kind = Rule::Kind::Classified, .classification = c};", write));
  const Lines writers = lines_of_src(write, [](const std::string& path) {
    return path.find("/src/verdict/") != std::string::npos || path.ends_with("/src/report/read_json.cpp");
  });
  ASSERT_GT(writers.files, 100u) << "src/ was not found under " << MLC_SOURCE_DIR;
  EXPECT_TRUE(writers.found.empty()) << "writes a classification outside src/verdict: "
                                     << ::testing::PrintToString(writers.found);
}

TEST(Verdict, no_pass_writes_a_sentence) {
  // A finding's reason, a fix's or cause's words, a headline: `x.reason = ...`, `p->headline += ...`,
  // `c.fix = "..."`. Not a designated initializer (`{.detail = ""}`), a comparison, `.clear()` or a kind.
  const std::regex write(
      R"([\w\)\]](\.|->)(reason|headline|detail)\s*\+?=(?!=)\s*(?![A-Z]\w*::)\S|[\w\)\]](\.|->)fix\s*\+?=\s*[\"\w(]*\")");
  ASSERT_TRUE(std::regex_search("    u_.reason = \"declared in \" + file;", write));
  ASSERT_TRUE(std::regex_search("  u->reason += \"; \" + w.other;", write));
  ASSERT_TRUE(std::regex_search("    c->headline = with_commas(n);", write));
  ASSERT_TRUE(std::regex_search("    fix.detail = choice->note;", write));
  ASSERT_TRUE(std::regex_search("  c.fix = \"install the version of torch that \" + holder;", write));
  ASSERT_FALSE(std::regex_search("              .detail = \"\",", write));
  ASSERT_FALSE(std::regex_search("    if (u.reason == other.reason) continue;", write));
  ASSERT_FALSE(std::regex_search("    out.reason = TorchReason::PackageImportsTorch;", write));  // a kind, not words
  ASSERT_FALSE(std::regex_search(
      "    u_.fix = Fix{FixKind::Stub, {}, {}, {}, {}, \"\", saying(said::StubOrFindSource{})};", write));
  const Lines writers =
      lines_of_src(write, [](const std::string& path) { return path.find("/src/report/") != std::string::npos; });
  ASSERT_GT(writers.files, 100u) << "src/ was not found under " << MLC_SOURCE_DIR;
  EXPECT_TRUE(writers.found.empty()) << "writes a sentence outside src/report: "
                                     << ::testing::PrintToString(writers.found);
}

}  // namespace
}  // namespace mlc
