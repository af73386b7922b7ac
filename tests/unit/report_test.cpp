// The findings model's kinds as the JSON report spells them: each enum's names are exactly the
// enum of docs/report.schema.json (the contract's shape), they read back, and the report reader
// (report/render.h read_json_report) keeps every kind through a render_json round trip and refuses
// a name the contract does not have with one line naming the file; a variable's size goes along.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "classify.h"
#include "report/escape.h"
#include "report/render.h"
#include "report/said.h"
#include "report/said_plan.h"
#include "test_support.h"

namespace mlc {
namespace {

using nlohmann::json;

const json& schema() {
  static const json doc = json::parse(test::read_file(std::string(MLC_SOURCE_DIR) + "/docs/report.schema.json"));
  return doc;
}

std::set<std::string> schema_enum(const std::string& pointer) {
  std::set<std::string> names;
  for (const auto& n : schema().at(json::json_pointer(pointer))) names.insert(n.get<std::string>());
  return names;
}

// Every value of Kind, from the first to `last` (its enum's last value), prints a name of the schema,
// each once, and each name reads back to the value that prints it; together they are exactly the
// schema's names; a name outside the schema reads back to nothing.
template <typename Kind>
void expect_names_are(const std::set<std::string>& schema_names, Kind last) {
  ASSERT_FALSE(schema_names.empty());
  std::set<std::string> printed;
  for (int k = 0; k <= static_cast<int>(last); ++k) {
    auto kind = static_cast<Kind>(k);
    std::string name = to_string(kind);
    EXPECT_TRUE(schema_names.count(name)) << name << " is not in the schema";
    EXPECT_TRUE(printed.insert(name).second) << name << " is printed twice";
    EXPECT_EQ(from_string<Kind>(name), std::optional<Kind>(kind)) << name;
  }
  EXPECT_EQ(printed, schema_names);
  EXPECT_FALSE(from_string<Kind>("Definition").has_value());
  EXPECT_FALSE(from_string<Kind>("").has_value());
}

// musa-stubgen's sentences whose exact words no end-to-end test reaches: each as a user reads it.
// has_controls reads eight bytes at a time: it answers as the byte-at-a-time rule does (a C0 control
// or DEL anywhere), for every byte value at every position of a word and of its tail, on backgrounds that
// make the word arithmetic borrow or carry (0x20, 0x21, 0x7E, 0x80, 0xFF), and on random mixtures.
TEST(Escape, has_controls_answers_as_the_byte_at_a_time_rule) {
  auto rule = [](const std::string& s) {
    return std::any_of(s.begin(), s.end(), [](char ch) {
      const auto c = static_cast<unsigned char>(ch);
      return c < 0x20 || c == 0x7F;
    });
  };
  size_t yes = 0;
  for (unsigned char background : {'a', '\x20', '\x21', '\x7E', '\x80', '\xFF'})
    for (size_t length : {1, 7, 8, 9, 16, 19})
      for (size_t at = 0; at < length; ++at)
        for (int b = 0; b < 256; ++b) {
          std::string s(length, static_cast<char>(background));
          s[at] = static_cast<char>(b);
          ASSERT_EQ(has_controls(s), rule(s)) << "byte " << b << " at " << at << " of " << length;
          yes += rule(s);
        }
  const char pool[] = {'\x00', '\x1F', '\x20', '\x21', '\x7E', '\x7F', '\x80', '\xFF', 'a'};
  std::mt19937 random(49);
  for (int n = 0; n < 20000; ++n) {
    std::string s(random() % 40, 'a');
    for (auto& c : s) c = random() % 4 ? 'a' : pool[random() % sizeof(pool)];
    ASSERT_EQ(has_controls(s), rule(s)) << testing::PrintToString(s);
  }
  EXPECT_FALSE(has_controls(""));
  EXPECT_FALSE(has_controls("/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so \xC3\xA9"));
  EXPECT_GT(yes, 0u);
}

TEST(PlanWords, each_refusal_warning_and_note_of_musa_stubgen_reads_as_written) {
  using namespace said::plan;
  EXPECT_EQ((StubsUnlisted{.library = "lib/libk.so", .target = "", .out_cpp = "stubs.cpp", .symbols = 1}.words()),
            "no source list of lib/libk.so takes the stubs in stubs.cpp: add it to that target's sources, or the 1 "
            "symbol stubbed there stay unresolved");
  EXPECT_EQ((StubsUnlisted{.library = "lib/libk.so", .target = "k", .out_cpp = "stubs.cpp", .symbols = 2}.words()),
            "no source list of the target k takes the stubs in stubs.cpp: add it to that target's sources, or the 2 "
            "symbols stubbed there stay unresolved");
  EXPECT_EQ((NoTargetBuilds{.library = "libk.so", .detail = "link libm"}.words()),
            "no CMake target is known to build libk.so (configure with a CMake File API codemodel query); link libm");
  EXPECT_EQ((NoCMakeFileForTarget{.target = "k", .detail = "link libm"}.words()),
            "no CMake file found that defines the target k; link libm");
  EXPECT_EQ(
      (NotFixable{.classification = Classification::MissingSource, .reason = "", .detail = "", .stub_asked = false}
           .words()),
      "missing-source (no CMake source list for it was found)");
  EXPECT_EQ(
      (NotFixable{.classification = Classification::Unported, .reason = "r", .detail = "rename it", .stub_asked = false}
           .words()),
      "unported: r; rename it (a stub would hide the missed rename; --stub unported stubs it anyway)");
  EXPECT_EQ(
      (NotFixable{.classification = Classification::Unported, .reason = "r", .detail = "", .stub_asked = true}.words()),
      "unported: r - not something a stub or a CMake patch fixes");
  EXPECT_EQ((AwaitingRebuild{.symbols = 2, .first = "f()", .library = "libk.so"}.words()),
            "2 symbols (f() and more) defined in sources the build compiles since libk.so was built: rebuild it first "
            "(cmake --build), then run again");
  EXPECT_EQ((ThrowInstead{.stubs = 1, .first = "f()"}.words()),
            "--style return-error: 1 stub returns no error code (f()): they throw, as with --style throw (when the "
            "stub runtime only warns, they return a value-initialized result)");
  EXPECT_TRUE((ThrowInstead{.stubs = 3, .first = "f()"}.words())
                  .starts_with("--style return-error: 3 stubs return no error code (f() and 2 more): they throw,"));
  EXPECT_EQ((AlreadyInExtension{.entry = "k.cu",
                                .extension = ExtensionSources{.kind = "CUDAExtension", .name = "m"}.words(),
                                .file = "setup.py",
                                .line = 7}
                 .words()),
            "k.cu is already in the sources of CUDAExtension('m') (setup.py:7): not added again; rebuild the extension "
            "(python3 setup.py build_ext)");
  EXPECT_EQ(
      (ExtensionListNotLiteral{
          .extension = "the sources of X", .file = "setup.py", .not_literal = "a glob", .entry = "k.cu", .line = 3}
           .words()),
      "the sources of X at setup.py:3 is no list to edit (a glob): add k.cu by hand");
  EXPECT_EQ((AlreadyListed{.entry = "k.cu", .list = "SRCS", .file = "CMakeLists.txt", .predating_library = "libk.so"}
                 .words()),
            "k.cu is already in SRCS (CMakeLists.txt): not added again; libk.so predates that file: rebuild it");
  EXPECT_EQ((NoLinkPlace{.target = "k", .file = "CMakeLists.txt"}.words()),
            "no target_link_libraries() or add_library() for k in CMakeLists.txt");
  EXPECT_EQ(
      (AddDoesNotCompile{.entry = "k.cu", .list = "SRCS", .file = "CMakeLists.txt", .source = "/s/k.cu", .target = "k"}
           .words()),
      "adding k.cu to SRCS (CMakeLists.txt) does not make CMake compile /s/k.cu into k: that list does not reach "
      "the target in this configuration");
  EXPECT_EQ((RegionNeverClosed{.begin_marker = "// BEGIN"}.words()),
            "the generated region opened by \"// BEGIN\" is never closed");
  EXPECT_EQ((StubNeverClosed{.key = "_Z1fv"}.words()), "stub _Z1fv has no end marker");
  EXPECT_EQ((ThreadLocalUnstubbable{}.words()), "thread-local data cannot be stubbed safely");
  EXPECT_EQ((KernelReturnUnknown{}.words()),
            "its generated declaration (<Backend>NativeFunctions.h) was not found, so its return type is unknown: pass "
            "--build-dir of the build that generated it");
  EXPECT_EQ((NoExtensionBuilds{.file = "setup.py", .library = "m.so"}.words()), "no extension in setup.py builds m.so");
}

TEST(Kinds, every_enum_value_has_the_schemas_name_and_reads_back) {
  expect_names_are(schema_enum("/$defs/unresolved/properties/classification/enum"), Classification::Unknown);
  EXPECT_EQ(all_classifications().back(), Classification::Unknown);
  expect_names_are(schema_enum("/$defs/unresolved/properties/type/enum"), SymbolType::NoType);
  expect_names_are(schema_enum("/$defs/unresolved/properties/origin/properties/kind/enum"), OriginKind::Library);
  expect_names_are(schema_enum("/$defs/unresolved/properties/fix/properties/kind/enum"), FixKind::None);
}

// How a needed library was found: each loader::FoundHow the search gives a found entry (Direct to
// Sdk) prints one of the schema's names, each once; the places after Sdk name only other copies
// (causes' `others`, whose `how` the schema leaves open for a home's glob).
TEST(Kinds, every_search_how_has_the_schemas_name) {
  std::set<std::string> printed;
  for (int k = 0; k <= static_cast<int>(loader::FoundHow::Sdk); ++k)
    printed.insert(loader::to_string(static_cast<loader::FoundHow>(k)));
  EXPECT_EQ(printed, schema_enum("/$defs/needed/oneOf/0/properties/how/enum"));
}

Report one_of_each() {
  Report r;
  LibraryReport lib;
  lib.path = "/w/libk.so";
  lib.soname = "libk.so";
  UnresolvedSymbol a;
  a.symbol = "_Z1av";
  a.demangled = "a()";
  a.type = SymbolType::Tls;
  a.binding = ReferenceBinding::Global;
  test::classify(a, Classification::MissingInstantiation);
  a.origin = Origin{.file = "/w/a.cpp",
                    .line = 3,
                    .kind = OriginKind::ExplicitInstantiation,
                    .library = std::nullopt,
                    .ported_from = std::nullopt};
  a.fix = Fix{.kind = FixKind::AddInstantiation,
              .cmake_file = {},
              .list = {},
              .entry = {},
              .library = {},
              .why = saying(said::InstantiateOrInclude{.file = "/w/a.cpp"})};
  UnresolvedSymbol b;
  b.symbol = "b_data";
  b.demangled = "b_data";
  b.type = SymbolType::Object;
  b.size = 40;
  b.binding = ReferenceBinding::Weak;
  test::classify(b, Classification::UnlinkedLibrary);
  b.origin = Origin{.file = "/w/libb.so",
                    .line = std::nullopt,
                    .kind = OriginKind::Library,
                    .library = "/w/libb.so",
                    .ported_from = std::nullopt};
  b.fix = Fix{.kind = FixKind::LinkLibrary,
              .cmake_file = "/w/CMakeLists.txt",
              .list = {},
              .entry = "b",
              .library = "/w/libb.so",
              .why = saying(said::LinkIt{.soname = "libb.so", .line = {}})};
  lib.unresolved = {a, b};
  r.libraries.push_back(lib);
  report::write_sentences(r);  // the fixes' words, as the pipeline ends
  return r;
}

// reclaim_own_build and explain drop causes after others were issued: an id handed out once is never
// handed out again, so a finding's `cause` can never point at a newer, unrelated cause.
Cause cause_of(CauseKind kind, const std::string& library) {
  Cause c;
  c.kind = kind;
  c.library = library;
  return c;
}

// A GPU driver is one warning however its callers spell it: torch's stack dlopens libcuda.so.1, and
// libcuda.so where a caller falls back to the development name. Each library that looks it up is
// named once.
TEST(RuntimeText, a_driver_looked_up_under_two_names_is_one_warning) {
  Report r;
  auto lookup = [&](const std::string& library, const std::string& name) {
    RuntimeLookup l;
    l.library = library;
    l.name = name;
    l.driver = true;
    r.runtime_lookups.push_back(l);
  };
  lookup("/v/torch/lib/libtorch_cuda.so", "libcuda.so.1");
  lookup("/v/triton/backends/nvidia/lib/libtriton.so", "libcuda.so");
  lookup("/v/torch/lib/libtorch_cuda.so", "libcuda.so");
  lookup("/v/nvidia/cu13/lib/libnvrtc.so.13", "libcuda.so.1");
  const std::string text = render_text(r, TextStyle{.summary = false});
  EXPECT_EQ(text,
            "warning: runtime-lookup: the GPU driver libcuda.so.1 (also as libcuda.so) is not installed here: "
            "libtorch_cuda.so, libtriton.so, libnvrtc.so.13 load it at run time and fail when first used (install the "
            "driver, or check on a machine that has it)\n");
}

TEST(CauseIds, an_erased_cause_never_lends_its_id_to_the_next) {
  CauseList causes;
  causes.add(cause_of(CauseKind::Shadowed, "libc10.so"));
  causes.add(cause_of(CauseKind::Host, "python3"));
  EXPECT_EQ(causes.erase_if([](const Cause& c) { return c.kind == CauseKind::Host; }), 1u);
  const Cause& fresh = causes.add(cause_of(CauseKind::MissingLibrary, "libmusa.so.1"));
  EXPECT_EQ(fresh.id, "cause-3");
  std::vector<std::string> ids;
  for (const auto& c : causes) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"cause-1", "cause-3"}));
  // The old scheme (size + 1) would have given the new cause "cause-2" beside a finding still
  // naming the erased "cause-2"; erasing the first instead shows no id is reused either way.
  causes.erase_if([](const Cause& c) { return c.id == "cause-1"; });
  EXPECT_EQ(causes.add(cause_of(CauseKind::Shadowed, "libz.so.1")).id, "cause-4");
}

TEST(ReadJsonReport, kinds_survive_a_round_trip_through_render_json) {
  std::string path = test::scratch_dir("report-kinds") + "/report.json";
  test::write_file(path, render_json(one_of_each(), "0"));
  auto back = read_json_report(path);
  ASSERT_TRUE(back.ok()) << back.error().to_line();
  ASSERT_EQ(back->libraries.size(), 1u);
  const auto& u = back->libraries[0].unresolved;
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].type, SymbolType::Tls);
  EXPECT_EQ(u[0].classification, Classification::MissingInstantiation);
  EXPECT_EQ(u[0].origin->kind, OriginKind::ExplicitInstantiation);
  EXPECT_EQ(u[0].fix->kind, FixKind::AddInstantiation);
  EXPECT_EQ(u[0].size, std::nullopt);
  EXPECT_EQ(u[1].type, SymbolType::Object);
  EXPECT_EQ(u[1].size, std::optional<uint64_t>(40));  // what a data stub reserves
  EXPECT_EQ(u[1].origin->kind, OriginKind::Library);
  EXPECT_EQ(u[1].fix->kind, FixKind::LinkLibrary);
  EXPECT_EQ(u[1].fix->entry, std::optional<std::string>("b"));
}

// The libraries are dumped one by one (in parallel) and set into the document's text: the report is still
// exactly what dump(2) writes of the whole document (parsed and dumped again, byte for byte), with none,
// one and many libraries, a name that is not UTF-8 and an empty list among them.
TEST(RenderJson, the_report_is_the_whole_documents_dump_whatever_the_libraries) {
  Report r = one_of_each();
  for (size_t count : {size_t{0}, size_t{1}, size_t{40}}) {
    Report many = r;
    many.libraries.clear();
    for (size_t i = 0; i < count; ++i) {
      LibraryReport lib = r.libraries[0];
      lib.path = "/w/lib" + std::to_string(i) + (i % 7 == 3 ? "\xff\xfe.so" : ".so");
      if (i % 5 == 1) lib.unresolved.clear();
      many.libraries.push_back(lib);
    }
    const std::string text = render_json(many, "0");
    const json doc = json::parse(text);
    EXPECT_EQ(text, doc.dump(2) + "\n") << count << " libraries";
    EXPECT_EQ(doc["libraries"].size(), count);
    if (count > 3) {
      EXPECT_EQ(doc["libraries"][3]["path"], "/w/lib3\\xFF\\xFE.so");
    }
  }
}

TEST(ReadJsonReport, a_kind_the_contract_does_not_have_is_one_line_naming_the_file) {
  std::string dir = test::scratch_dir("report-bad-kind");
  json doc = json::parse(render_json(one_of_each(), "0"));
  doc["libraries"][0]["unresolved"][1]["fix"]["kind"] = "patch-it";
  test::write_file(dir + "/fix.json", doc.dump());
  auto r = read_json_report(dir + "/fix.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().to_line(), dir + "/fix.json: malformed report: unknown kind \"patch-it\"");

  doc = json::parse(render_json(one_of_each(), "0"));
  doc["libraries"][0]["unresolved"][0]["type"] = "function";
  test::write_file(dir + "/type.json", doc.dump());
  r = read_json_report(dir + "/type.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().to_line(), dir + "/type.json: malformed report: unknown type \"function\"");

  // An absent type is notype, as the reader always took it.
  doc = json::parse(render_json(one_of_each(), "0"));
  doc["libraries"][0]["unresolved"][0].erase("type");
  test::write_file(dir + "/none.json", doc.dump());
  r = read_json_report(dir + "/none.json");
  ASSERT_TRUE(r.ok()) << r.error().to_line();
  EXPECT_EQ(r->libraries[0].unresolved[0].type, SymbolType::NoType);
}

}  // namespace
}  // namespace mlc

// musa-stubgen's closure, its plan's proof and the link check compile the same files: a failed compile is
// told once per file, whatever its words (another command, another error), and a summary once per wording.
TEST(Warnings, a_compile_failure_is_told_once_per_file_and_a_summary_once_per_wording) {
  std::vector<mlc::Warning> w = {
      {mlc::WarningKind::CompileFailed, "/s/a.cu", "a.cu: error: x"},
      {mlc::WarningKind::ConfirmCost, "", "--confirm: 2 candidate files"},
      {mlc::WarningKind::CompileFailed, "/s/a.cu", "a.cu: error: y"},
      {mlc::WarningKind::CompileFailed, "/s/b.cu", "b.cu: error: x"},
      {mlc::WarningKind::ListedTwice, "/s/CMakeLists.txt:3: /s/b.cu", "b.cu is listed twice"},
      {mlc::WarningKind::ConfirmCost, "", "--confirm: 2 candidate files"},
      {mlc::WarningKind::ConfirmCost, "", "--confirm: 3 candidate files"}};
  mlc::drop_repeated(w);
  std::vector<std::string> told;
  for (const auto& x : w) told.push_back(x.text);
  EXPECT_EQ(told, (std::vector<std::string>{"a.cu: error: x", "--confirm: 2 candidate files", "b.cu: error: x",
                                            "b.cu is listed twice", "--confirm: 3 candidate files"}));
}
