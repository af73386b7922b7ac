// The backend is the only room that knows vendor facts: a third backend is one
// aggregate, defined here and known nowhere else, and the stubs, coverage's counterparts and the
// tracer's sentences follow it. The built-in HIP backend's stubs name HIP, not MUSA.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "classify.h"
#include "common/file_io.h"
#include "coverage/coverage.h"
#include "report/report.h"
#include "report/said.h"
#include "sdk/sdk_index.h"
#include "stubgen/stubgen.h"
#include "test_support.h"
#include "trace/trace.h"
#include "verdict/verdict.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

// A vendor nobody here ships: every field the passes read, nothing more.
const backend::Backend& toy() {
  static const backend::Backend b{
      .name = "toy",
      .display = "TOY",
      .about = "a backend the tests define",
      .home_env = "TOY_HOME",
      .default_home = "/opt/toy",
      .versioned_homes = false,
      .include_dirs = {"include"},
      .library_dirs = {"lib"},
      .library_prefixes = {},
      .index_archives = true,
      .source_extensions = {".toy"},
      .api_prefix = "toy",
      .counterpart_by_prefix = true,
      .port_naming = {.scope = "toy", .upper = "TOY", .extensions = {{".cu", ".toy"}}},
      .stub_prefix = "toy_stub_",
      .stubs_macro = "TOY_STUBS_IMPLEMENTATION",
      .stubs_header = "toy_stubs.h",
      .version_macro = "TOY_VERSION",
      .cmake_add_library = "toy_add_library",
      .python_package = "torch_toy",
  };
  return b;
}

const std::string kRuntime = std::string(MLC_SOURCE_DIR) + "/stubs/musa_stubs.h";

// A report with one C function the SDK declares and no library defines, and one data object.
Report declared_only_report(const std::string& dir) {
  Report report;
  LibraryReport lib;
  lib.path = dir + "/libk.so";
  UnresolvedSymbol fn;
  fn.symbol = fn.demangled = "toyLaunchHostFunc";
  test::classify(fn, Classification::SdkDeclaredOnly);
  UnresolvedSymbol data;
  data.symbol = data.demangled = "toyGlobalTable";
  data.size = 16;
  test::classify(data, Classification::SdkDeclaredOnly);
  lib.unresolved = {fn, data};
  report.libraries.push_back(lib);
  return report;
}

stubgen::Plan plan_for(const backend::Backend& b, const std::string& dir) {
  stubgen::StubOptions so;
  so.out_cpp = dir + "/unimplemented_functions.cpp";
  so.out_header = dir + "/unimplemented_functions.h";
  so.runtime_header = kRuntime;
  so.version_guard = 5;
  so.c10 = false;
  trace::TraceContext ctx;
  ctx.backend = &b;
  return stubgen::plan(declared_only_report(dir), ctx, so);
}

const stubgen::FileEdit* edit_named(const stubgen::Plan& p, const std::string& name) {
  for (const auto& f : p.stub_files)
    if (fs::path(f.path).filename() == name) return &f;
  return nullptr;
}

TEST(Backend, a_third_backend_is_one_aggregate_its_stubs_call_its_own_runtime) {
  std::string dir = test::scratch_dir("toy-stubs");
  auto p = plan_for(toy(), dir);
  ASSERT_TRUE(p.errors.empty());
  ASSERT_EQ(p.stubs.size(), 2u);
  const auto* cpp = edit_named(p, "unimplemented_functions.cpp");
  ASSERT_NE(cpp, nullptr);
  const std::string& text = cpp->after;
  EXPECT_NE(text.find("#define TOY_STUBS_IMPLEMENTATION\n#include \"toy_stubs.h\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("if (toy_stub_enter(\"toyLaunchHostFunc\", \"toyLaunchHostFunc\") == TOY_STUB_THROW) {"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("#if defined(TOY_VERSION) && (TOY_VERSION < 5)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("unsigned char toy_stub_data_"), std::string::npos) << text;
  for (const char* musa : {"musa_stub", "MUSA_STUB", "REAL_MUSA_VERSION"})
    EXPECT_EQ(text.find(musa), std::string::npos) << musa;

  // The runtime is written beside the stubs under the toy's names, and is still a valid C runtime:
  // the compiler, not a search, says the renamed header declares and defines what the stubs call.
  const auto* runtime = edit_named(p, "toy_stubs.h");
  ASSERT_NE(runtime, nullptr);
  EXPECT_EQ(edit_named(p, "musa_stubs.h"), nullptr);
  auto count = [](const std::string& in, const std::string& word) {
    size_t n = 0;
    for (size_t at = in.find(word); at != std::string::npos; at = in.find(word, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(runtime->after, "musa"), count(runtime->after, "musa-stubgen")) << "only the tool's own name is left";
  EXPECT_EQ(runtime->after.find("MUSA"), std::string::npos);
  test::write_file(dir + "/toy_stubs.h", runtime->after);
  test::write_file(dir + "/use.c",
                   "#define TOY_STUBS_IMPLEMENTATION\n#include \"toy_stubs.h\"\n"
                   "int use(void) { return toy_stub_enter(\"f\", \"_Z1fv\") == TOY_STUB_THROW; }\n");
  auto cc = run("cc -std=gnu11 -Wall -Wextra -Werror -c -o " + quote(dir + "/use.o") + " " + quote(dir + "/use.c"));
  EXPECT_EQ(cc.status, 0) << cc.err;
  auto nm = run("nm " + quote(dir + "/use.o"));
  EXPECT_NE(nm.out.find(" t toy_stub_enter\n"), std::string::npos) << nm.out;  // bundled: private to the object
}

TEST(Backend, hip_stubs_name_hip_and_musa_stubs_stay_as_they_were) {
  std::string dir = test::scratch_dir("hip-stubs");
  auto hip = plan_for(backend::hip(), dir);
  const auto* cpp = edit_named(hip, "unimplemented_functions.cpp");
  ASSERT_NE(cpp, nullptr);
  EXPECT_NE(cpp->after.find("#define HIP_STUBS_IMPLEMENTATION\n#include \"hip_stubs.h\"\n"), std::string::npos);
  EXPECT_NE(cpp->after.find("hip_stub_enter(\"toyLaunchHostFunc\""), std::string::npos) << cpp->after;
  EXPECT_NE(cpp->after.find("#if defined(HIP_VERSION) && (HIP_VERSION < 5)\n"), std::string::npos);
  EXPECT_EQ(cpp->after.find("musa_stub"), std::string::npos);
  const auto* runtime = edit_named(hip, "hip_stubs.h");
  ASSERT_NE(runtime, nullptr);
  EXPECT_NE(runtime->after.find("getenv(\"HIP_STUBS_TRACE\")"), std::string::npos);
  EXPECT_NE(runtime->after.find("\"hip-stubs: \""), std::string::npos);

  // MUSA's runtime is the file the project ships, byte for byte.
  auto musa = plan_for(backend::musa(), test::scratch_dir("musa-stubs"));
  const auto* shipped = edit_named(musa, "musa_stubs.h");
  ASSERT_NE(shipped, nullptr);
  EXPECT_EQ(shipped->after, *read_text(kRuntime));
}

TEST(Backend, coverage_without_a_map_takes_the_backends_naming_rule_and_says_so) {
  std::string dir = test::scratch_dir("toy-coverage");
  fs::create_directories(dir + "/cuda");
  fs::create_directories(dir + "/toy");
  test::write_file(dir + "/cuda/k.cu", "void f(void* p) {\n  cudaMalloc(&p, 4);\n  cudaMalloc_count = 1;\n}\n");
  test::write_file(dir + "/toy/k.cpp", "void g(void* p) {\n  toyFree(p);\n}\n");
  coverage::CoverageOptions o;
  o.roots = {dir};
  o.backend = &toy();
  auto r = coverage::run_coverage(o);
  EXPECT_EQ(r.naming_rule, "cudaX -> toyX");
  ASSERT_EQ(r.apis.size(), 2u);           // cudaMalloc_count is PyTorch's, not CUDA's
  EXPECT_EQ(r.apis[0].cuda, "cudaFree");  // counted under CUDA's name from the ported tree
  EXPECT_EQ(r.apis[0].counterpart, "toyFree");
  EXPECT_EQ(r.apis[1].cuda, "cudaMalloc");
  EXPECT_EQ(r.apis[1].counterpart, "toyMalloc");
  EXPECT_EQ(r.apis[1].status, coverage::Status::NoSdk);
  std::string text = coverage::render_text(r);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "Porting coverage: 2 CUDA APIs, 2 call sites in 2 of 2 files scanned (backend toy, SDK none, map none: "
            "counterparts by the naming rule cudaX -> toyX)");
  EXPECT_EQ(nlohmann::json::parse(coverage::render_json(r, "t"))["naming_rule"], "cudaX -> toyX");

  // A map, when given, is the only source of counterparts: no rule is claimed.
  porting::PortingMap map;
  auto with_map = [&] {
    coverage::CoverageOptions m = o;
    m.map = &map;
    return coverage::run_coverage(m);
  }();
  EXPECT_EQ(with_map.naming_rule, "");
  EXPECT_EQ(nlohmann::json::parse(coverage::render_json(with_map, "t"))["naming_rule"], nullptr);
}

TEST(Backend, the_tracers_sentences_name_the_backend_and_its_naming_rule) {
  std::string dir = test::scratch_dir("toy-trace");
  fs::create_directories(dir + "/sdk/include");
  fs::create_directories(dir + "/cuda/include");
  test::write_file(dir + "/sdk/include/toy_runtime.h", "int toyLaunchHostFunc(void* stream);\n");
  test::write_file(dir + "/cuda/include/cuda_runtime_api.h", "int cudaStreamQuery(void* stream);\n");
  sdk::SdkIndex sdk = sdk::index_sdk({.home = dir + "/sdk",
                                      .header_cache = "",
                                      .include_dirs = toy().include_dirs,
                                      .library_dirs = toy().library_dirs,
                                      .library_prefixes = {},
                                      .index_archives = true});
  sdk::SdkIndex cuda = sdk::index_sdk({.home = dir + "/cuda",
                                       .header_cache = "",
                                       .include_dirs = {"include"},
                                       .library_dirs = {"lib64"},
                                       .library_prefixes = {},
                                       .index_archives = true});
  trace::TraceContext ctx;
  ctx.backend = &toy();
  ctx.load_sdk = [&] { return &sdk; };
  ctx.load_cuda = [&] { return &cuda; };

  // Declared by the toy SDK, defined by none: its CUDA counterpart by the toyX -> cudaX rule.
  UnresolvedSymbol declared;
  declared.symbol = declared.demangled = "toyLaunchHostFunc";
  trace::trace_symbol(nullptr, 0, ctx, declared);
  verdict::resolve(declared);         // the pipeline decides; the tracer only claims
  report::write_sentences(declared);  // the tracer gives evidence, the report its words
  EXPECT_EQ(declared.classification, Classification::SdkDeclaredOnly);
  EXPECT_NE(declared.reason->find("; CUDA counterpart cudaLaunchHostFunc by the toyX -> cudaX naming rule (the porting "
                                  "map has no entry)"),
            std::string::npos)
      << *declared.reason;

  // A CUDA API still called, with no map: unknown, and the sentence names the toy's counterpart.
  UnresolvedSymbol still_cuda;
  still_cuda.symbol = still_cuda.demangled = "cudaStreamQuery";
  trace::trace_symbol(nullptr, 0, ctx, still_cuda);
  verdict::resolve(still_cuda);         // the pipeline decides; the tracer only claims
  report::write_sentences(still_cuda);  // the tracer gives evidence, the report its words
  EXPECT_EQ(still_cuda.classification, Classification::Unknown);
  EXPECT_EQ(still_cuda.reason, "a CUDA API the port still calls: CUDA declares it in " + dir +
                                   "/cuda/include/cuda_runtime_api.h; give the porting map (--mapping) to name its TOY "
                                   "counterpart");
}

TEST(Backend, the_choices_are_every_backend_and_names_are_unique) {
  std::vector<std::string> seen;
  for (const backend::Backend* b : backend::all()) {
    EXPECT_EQ(backend::find(b->name), b);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), b->name), 0);
    seen.push_back(b->name);
  }
  EXPECT_EQ(backend::all().front(), &backend::musa());
  EXPECT_EQ(backend::names(), "musa|hip");
  EXPECT_EQ(backend::find("toy"), nullptr);  // the toy is the test's alone
}

}  // namespace
}  // namespace mlc
