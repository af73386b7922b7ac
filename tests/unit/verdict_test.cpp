// The resolver (src/verdict): one declared precedence over the passes' claims, the table of
// docs/design.md ("Evidence order") in the code's order, and no other writer of a classification
// or a sentence than the resolver and the report (the compiler refuses the rest).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/render.h"
#include "report/said.h"
#include "test_support.h"
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
  const std::string doc = read_file(std::string(MLC_SOURCE_DIR) + "/docs/design.md");
  const size_t at = doc.find("## Evidence order");
  EXPECT_NE(at, std::string::npos) << "docs/design.md has no Evidence order section";
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

// The winning claim is taken whole: the compiler's pass (ranked below the host's) that ran after the host
// claimed leaves neither its sentence, nor its definition, nor its fix beside the host's classification;
// the tracer's definition, which the host's claim left standing, stands with it.
TEST(Verdict, a_lower_ranked_pass_that_ran_later_leaves_no_evidence_of_its_own) {
  UnresolvedSymbol u;
  verdict::claim(u, EvidencePass::Trace, Classification::MissingSource);
  say(u, said::DefinedInUnlinked{.library = "libtraced.so"});
  u.origin = Origin{.file = "traced.cu", .line = 3, .kind = OriginKind::Declaration, .library = {}, .ported_from = {}};
  verdict::claim(u, EvidencePass::HostApi, Classification::HostProvided);
  say(u, said::DefinedInUnlinked{.library = "libhost.so"});
  const SaidPtr host_why = u.why;
  verdict::claim(u, EvidencePass::Compiler, Classification::MissingSource);
  say(u, said::DefinedInUnlinked{.library = "libcompiled.so"});
  u.origin = Origin{.file = "placed.cu", .line = 9, .kind = OriginKind::Definition, .library = {}, .ported_from = {}};
  u.fix = Fix{.kind = FixKind::AddSource, .cmake_file = {}, .list = {}, .entry = "placed.cu", .library = {}};
  verdict::resolve(u);
  EXPECT_EQ(u.classification, Classification::HostProvided);
  EXPECT_EQ(u.why, host_why);
  ASSERT_TRUE(u.origin.has_value());
  EXPECT_EQ(u.origin->file, "traced.cu");
  EXPECT_FALSE(u.fix.has_value());
  // The winner is the last claim: what its pass said after it stands (a second resolve changes nothing).
  UnresolvedSymbol last;
  verdict::claim(last, EvidencePass::Trace, Classification::MissingSource);
  verdict::claim(last, EvidencePass::Compiler, Classification::MissingSource);
  say(last, said::DefinedInUnlinked{.library = "libcompiled.so"});
  const SaidPtr compiled = last.why;
  verdict::resolve(last);
  verdict::resolve(last);
  EXPECT_EQ(last.why, compiled);
}

TEST(Verdict, a_finding_read_from_a_saved_report_keeps_its_classification) {
  auto saved =
      parse_json_report(R"({"schema": "musa-linkcheck/1", "libraries": [{"path": "/w/libk.so", "unresolved": [)"
                        R"({"symbol": "k", "classification": "sdk-declared-only", "reason": "declared in k.h:1"}]}]})",
                        "saved.json");
  ASSERT_TRUE(saved) << saved.error().message;
  UnresolvedSymbol u = saved->libraries.at(0).unresolved.at(0);
  EXPECT_EQ(verdict::current(u), Classification::SdkDeclaredOnly);
  verdict::resolve(u);
  EXPECT_EQ(u.classification, Classification::SdkDeclaredOnly);
  verdict::claim(u, EvidencePass::Trace, Classification::MissingSource);  // traced again by stubgen
  verdict::resolve(u);
  EXPECT_EQ(u.classification, Classification::MissingSource);
}

// One statement of a snippet the compiler is asked about, and whether it must compile.
struct Statement {
  std::string code;
  bool compiles;
};

// The compiler's verdict on `statements`, each its own line of one translation unit that includes the
// report's model as src/ does: the lines (1-based) it gives an error on, and its whole output.
struct Compiled {
  std::set<int> error_lines;
  std::string output;
};
Compiled compile_statements(const std::vector<Statement>& statements) {
  const std::string dir = test::scratch_dir("sealed");
  std::string unit =
      "#include <string>\n#include <utility>\n#include \"report/report.h\"\n"
      "using namespace mlc;\n"
      "void pass(UnresolvedSymbol& u, UnresolvedSymbol& other, Fix& fix, Cause& c, LoadFailureFinding& f) {\n";
  const int first = 6;  // the line of statements[0]
  for (const auto& st : statements) unit += "  " + st.code + "\n";
  unit += "}\n";
  test::write_file(dir + "/pass.cpp", unit);
  const auto r =
      test::run(std::string(MLC_CXX) + " -std=c++20 -fsyntax-only -I" + MLC_SOURCE_DIR + "/src " + dir + "/pass.cpp");
  Compiled out;
  out.output = r.err;
  // An error at a statement's line, or one in a library template that statement instantiates (GCC: "required
  // from here"; Clang: "note: in instantiation of ... requested here").
  const std::regex at(
      R"(pass\.cpp:([0-9]+):[0-9]+:(?: error:|   required from here| note: in instantiation of .* requested here))");
  for (std::sregex_iterator m(r.err.begin(), r.err.end(), at), end; m != end; ++m) {
    const int line = std::stoi((*m)[1].str()) - first;
    out.error_lines.insert(line);
  }
  std::filesystem::remove_all(dir);
  return out;
}

// The resolver and the report are the only writers of a finding's classification, its sentences and a
// load failure's message (report/sealed.h): a pass that writes one, however it spells the write, does not
// compile, while every way a pass reads them does.
TEST(Verdict, a_pass_that_writes_a_classification_or_a_sentence_does_not_compile) {
  const std::vector<Statement> statements = {
      // Reading, comparing, copying a whole finding, clearing what a pass re-traces: all compile.
      {"bool a = u.classification == Classification::Hidden && to_string(u.classification) != std::string();", true},
      {"std::string b = *u.reason + (u.reason->empty() ? \"\" : \"; \") + fix.detail->c_str() + *c.headline;", true},
      {"const std::string& d = f.message; (void)a; (void)b; (void)d;", true},
      {"other = u; u.reason = {}; u.fix = Fix{.kind = FixKind::Stub, .cmake_file = {}, .list = {}, .entry = {}, "
       ".library = {}};",
       true},
      {"switch (u.classification) { default: break; }", true},
      // Every way to write one does not.
      {"u.classification = Classification::MissingSource;", false},
      {"std::exchange(u.classification, Classification::Hidden);", false},
      {"u.reason = \"declared in k.h\";", false},
      {"u.reason = std::string(\"declared in \") + \"k.h\";", false},
      {"u.reason += \"; and more\";", false},
      {"fix.detail = \"link it\";", false},
      {"u.fix = Fix{.kind = FixKind::Stub, .cmake_file = {}, .list = {}, .entry = {}, .library = {}, "
       ".detail = \"write a stub\"};",
       false},
      {"c.headline = \"a stale copy\";", false},
      {"c.fix = \"remove it\";", false},
      {"f.message = \"cannot open\";", false},
      {"f.fix = \"relink\";", false},
      {"f = LoadFailureFinding{.kind = {}, .file = \"x\", .message = \"cannot open\"};", false},
      {"u.reason.write(Pen{}, \"declared in k.h\");", false},  // no pass can make the key
      {"u.classification.write({}, Classification::Hidden);", false},
  };
  const Compiled compiled = compile_statements(statements);
  ASSERT_FALSE(compiled.output.find("No such file") != std::string::npos) << compiled.output;
  for (size_t i = 0; i < statements.size(); ++i)
    EXPECT_EQ(compiled.error_lines.count(static_cast<int>(i)) == 0, statements[i].compiles)
        << (statements[i].compiles ? "refused: " : "compiles: ") << statements[i].code << "\n"
        << compiled.output;
  for (int line : compiled.error_lines)
    EXPECT_TRUE(line >= 0 && line < static_cast<int>(statements.size()))
        << "an error off the statements: " << compiled.output;
}

}  // namespace
}  // namespace mlc
