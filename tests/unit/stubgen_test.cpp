// musa-stubgen: end to end on a private copy of the torch_musa world (link check fails, stubs and
// CMake patches, rebuild, link check passes, a stub throws naming itself, a second run changes
// nothing), golden files compiled with -Wall -Wextra -Werror, signatures from the real CUDA toolkit
// through the real porting map, hand-edited stubs and oddly formatted CMake files.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "classify.h"
#include "common/file_io.h"
#include "pipeline/linkcheck.h"
#include "report/said.h"
#include "stubgen/diff.h"
#include "stubgen/stubgen.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kSource = MLC_SOURCE_DIR;
const std::string kWorld = MLC_WORLD_DIR;
const std::string kLinkcheck = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;

std::string world_args(const std::string& w) {
  std::string b = w + "/build", s = w + "/src";
  return " --build-dir " + quote(b) + " --source-root " + quote(s + "/pytorch") + " --sdk-home " +
         quote(b + "/musa_sdk") + " --cuda-home " + quote(b + "/cuda_home") + " --mapping " + quote(s + "/mapping") +
         " --with " + quote(b + "/libc10.so") + " --cache-dir " +
         quote((test::scratch_root() / "stubgen-cache").string()) +
         // The loader would take a stale libmusart first (the shadowed case): point it at the SDK.
         " --library-path " + quote(b + "/musa_sdk/lib");
}

TEST(Stubgen, end_to_end_the_library_links_after_one_run) {
  std::string w = test::scratch_dir("e2e-world");
  auto built = run("cmake -DSOURCE=" + quote(kSource + "/fixtures/torch_musa") + " -DDEST=" + quote(w) + " -P " +
                   quote(kSource + "/tests/build_world.cmake"));
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  // The world's sources are a checkout of their own, as torch_musa's are: a CMake patch is relative
  // to the repository that holds the file (the scratch area itself lies inside this project's tree).
  ASSERT_EQ(run("git init -q " + quote(w + "/src")).status, 0);
  std::string lib = w + "/build/torch_musa/csrc/libmusa_kernels.so";
  std::string ops = w + "/src/torch_musa/csrc/aten/ops/musa";
  std::string out = " --out-cpp " + quote(ops + "/unimplemented_functions.cpp") + " --out-header " +
                    quote(ops + "/unimplemented_functions.h");

  auto before = run(kLinkcheck + " -q" + world_args(w) + " " + quote(lib));
  EXPECT_EQ(before.status, 1);
  // The load's headline, then the eight undefined symbols.
  EXPECT_EQ(std::count(before.out.begin(), before.out.end(), '\n'), 9) << before.out;
  EXPECT_EQ(before.out.substr(0, before.out.find('\n')), "error: loading libmusa_kernels.so would fail: 8 causes");

  // The CMake patch alone, as a diff that git apply and patch -p1 accept.
  auto patch = run(kStubgen + world_args(w) + " --stub unknown --dry-run" + out + " " + quote(lib));
  EXPECT_EQ(patch.status, 0) << patch.err;
  std::string diff_file = w + "/cmake.diff";
  auto wrote =
      run(kStubgen + world_args(w) + " --stub unknown --no-runtime --cmake-patch " + quote(diff_file) + " --out-cpp " +
          quote(w + "/scratch.cpp") + " --out-header " + quote(w + "/scratch.h") + " " + quote(lib));
  EXPECT_EQ(wrote.status, 0) << wrote.err;
  std::string diff = test::read_file(diff_file);
  EXPECT_NE(diff.find("--- a/torch_musa/csrc/CMakeLists.txt\n+++ b/torch_musa/csrc/CMakeLists.txt\n"),
            std::string::npos)
      << diff;
  EXPECT_NE(diff.find("+  ${GENERATED_PORTING_DIR}/aten/src/ATen/musa/cub.mu\n"), std::string::npos);
  EXPECT_NE(diff.find("+target_link_libraries(musa_kernels PRIVATE musart mublas)\n"), std::string::npos);
  EXPECT_EQ(run("cd " + quote(w + "/src") + " && git apply --check " + quote(diff_file)).status, 0);
  EXPECT_EQ(run("cd " + quote(w + "/src") + " && patch -p1 --dry-run < " + quote(diff_file)).status, 0);

  auto applied = run(kStubgen + world_args(w) + " --stub unknown --apply" + out + " " + quote(lib));
  ASSERT_EQ(applied.status, 0) << applied.err;
  std::string cmake = test::read_file(w + "/src/torch_musa/csrc/CMakeLists.txt");
  std::string cpp = test::read_file(ops + "/unimplemented_functions.cpp");
  std::string hdr = test::read_file(ops + "/unimplemented_functions.h");
  EXPECT_NE(cpp.find("extern \"C\" musaError_t musaMallocAsync(void** devPtr, size_t size, musaStream_t hStream) {"),
            std::string::npos)
      << cpp;

  auto rebuilt = run("cmake --build " + quote(w + "/build") + " -j 2");
  ASSERT_EQ(rebuilt.status, 0) << rebuilt.out << rebuilt.err;
  auto after = run(kLinkcheck + world_args(w) + " " + quote(lib));
  EXPECT_EQ(after.status, 0) << after.out;
  EXPECT_EQ(after.out, "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");

  // A program calling into the library reaches the musaMallocAsync stub: it throws, naming it.
  std::string probe = w + "/probe.cpp";
  test::write_file(probe,
                   "#include <cstdio>\n#include <exception>\nstruct MUstream_st;\n"
                   "namespace at { namespace musa { int run_gemm(float* c, MUstream_st* stream); } }\n"
                   "int main() {\n  float c = 0;\n  try { at::musa::run_gemm(&c, nullptr); }\n"
                   "  catch (const std::exception& e) { std::printf(\"caught: %s\\n\", e.what()); return 0; }\n"
                   "  return 1;\n}\n");
  std::string b = w + "/build";
  auto compiled =
      run("c++ -o " + quote(w + "/probe") + " " + quote(probe) + " -L" + quote(b + "/torch_musa/csrc") +
          " -lmusa_kernels -L" + quote(b) + " -lc10 -L" + quote(b + "/musa_sdk/lib") + " -lmusart -lmublas");
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  std::string env = "LD_LIBRARY_PATH=" + quote(b + "/musa_sdk/lib:" + b + ":" + b + "/torch_musa/csrc") + " ";
  std::string trace = w + "/stub-trace.txt";
  auto called = run(env + "MUSA_STUBS_TRACE=" + quote(trace) + " " + quote(w + "/probe"));
  EXPECT_EQ(called.status, 0) << called.err;
  EXPECT_EQ(called.out, "caught: musaMallocAsync is not supported now!\n");
  EXPECT_EQ(test::read_file(trace), "musaMallocAsync\tmusaMallocAsync\n");
  auto aborted = run(env + "MUSA_STUBS=abort " + quote(w + "/probe"));
  EXPECT_EQ(aborted.status, 128 + 6);  // SIGABRT
  EXPECT_EQ(aborted.err.rfind("musa-stubs: aborting: musaMallocAsync is not supported now!\n", 0), 0u) << aborted.err;

  // A second run changes nothing.
  auto again = run(kStubgen + world_args(w) + " --stub unknown --apply" + out + " " + quote(lib));
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find("0 files changed"), std::string::npos) << again.err;
  EXPECT_EQ(test::read_file(w + "/src/torch_musa/csrc/CMakeLists.txt"), cmake);
  EXPECT_EQ(test::read_file(ops + "/unimplemented_functions.cpp"), cpp);
  EXPECT_EQ(test::read_file(ops + "/unimplemented_functions.h"), hdr);
}

// The standard world's report, planned into a scratch directory.
stubgen::Plan plan_world(const std::string& dir, stubgen::Style style, Report* report_out = nullptr,
                         bool prune = false) {
  LinkcheckOptions o;
  o.env.with = {kWorld + "/build/libc10.so"};
  o.env.library_path = {kWorld + "/build/musa_sdk/lib"};
  o.trace.build_dir = kWorld + "/build";
  o.trace.source_roots = {kWorld + "/src/pytorch"};
  o.trace.sdk_home = kWorld + "/build/musa_sdk";
  o.trace.cuda_home = kWorld + "/build/cuda_home";
  o.trace.mapping = kWorld + "/src/mapping";
  Report report;
  TraceResources resources(o.trace, report);
  run_linkcheck({kWorld + "/build/torch_musa/csrc/libmusa_kernels.so"}, o, resources, report);
  stubgen::StubOptions so;
  so.style = style;
  so.out_cpp = dir + "/unimplemented_functions.cpp";
  so.out_header = dir + "/unimplemented_functions.h";
  so.runtime_header = kSource + "/stubs/musa_stubs.h";
  so.classes.insert(Classification::Unknown);
  so.prune = prune;
  if (report_out) *report_out = report;
  return stubgen::plan(report, resources.context(nullptr), so);
}

const stubgen::FileEdit* edit_for(const stubgen::Plan& p, const std::string& suffix) {
  for (const auto& f : p.stub_files)
    if (f.path.size() >= suffix.size() && f.path.compare(f.path.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &f;
  return nullptr;
}

TEST(Stubgen, generated_files_match_golden_files_and_compile_with_werror) {
  for (auto style : {stubgen::Style::Throw, stubgen::Style::Abort, stubgen::Style::ReturnError}) {
    std::string dir = test::scratch_dir("golden");
    auto p = plan_world(dir, style);
    ASSERT_TRUE(p.errors.empty());
    EXPECT_TRUE(p.refused.empty()) << p.refused[0].symbol << ": " << p.refused[0].reason;
    for (const auto& f : p.stub_files) ASSERT_FALSE(write_atomic(f.path, f.after).has_value());
    if (style == stubgen::Style::Throw) {
      EXPECT_EQ(test::read_file(dir + "/unimplemented_functions.cpp"),
                test::read_file(kSource + "/tests/golden/unimplemented_functions.cpp"));
      EXPECT_EQ(test::read_file(dir + "/unimplemented_functions.h"),
                test::read_file(kSource + "/tests/golden/unimplemented_functions.h"));
    }
    auto cc = run("c++ -std=c++17 -Wall -Wextra -Werror -c -o " + quote(dir + "/stubs.o") + " -I" +
                  quote(kWorld + "/build/musa_sdk/include") + " -I" + quote(dir) + " " +
                  quote(dir + "/unimplemented_functions.cpp"));
    EXPECT_EQ(cc.status, 0) << cc.err;
    auto nm = run("nm --defined-only " + quote(dir + "/stubs.o"));
    for (const char* sym :
         {" T PVRSRVGetDevInfo\n", " T musaLaunchHostFunc\n", " T musaMallocAsync\n", " B musaDeviceTable\n"}) {
      EXPECT_NE(nm.out.find(sym), std::string::npos) << sym << nm.out;
    }
  }
}

TEST(Stubgen, hand_edited_and_hand_written_stubs_survive_every_run) {
  std::string dir = test::scratch_dir("hand-edits");
  auto first = plan_world(dir, stubgen::Style::Throw);
  for (const auto& f : first.stub_files) ASSERT_FALSE(write_atomic(f.path, f.after).has_value());
  std::string path = dir + "/unimplemented_functions.cpp";
  std::string text = test::read_file(path);
  // Edit a generated stub's body, and write a function of our own outside the markers.
  std::string from = "throw std::runtime_error(\"musaMallocAsync is not supported now!\");";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "return musaErrorNotSupported;  // we handle this one");
  text += "\nint my_own_helper() { return 42; }\n";
  test::write_file(path, text);
  // With and without --prune: every generated stub is still needed, so pruning removes nothing either.
  for (bool prune : {false, true}) {
    SCOPED_TRACE(prune ? "--prune" : "no --prune");
    auto p = plan_world(dir, stubgen::Style::Throw, nullptr, prune);
    const auto* cpp = edit_for(p, "unimplemented_functions.cpp");
    ASSERT_NE(cpp, nullptr);
    EXPECT_EQ(cpp->after, text) << "the edited stub and the hand-written code must stay byte for byte";
    bool warned = false;
    for (const auto& w : p.warnings) warned |= w.find("kept the hand-edited stub musaMallocAsync") != std::string::npos;
    EXPECT_TRUE(warned);
  }
  // --prune drops generated stubs no longer needed, never edited ones.
  Report none;
  none.libraries.push_back({});
  stubgen::StubOptions so;
  so.out_cpp = path;
  so.out_header = dir + "/unimplemented_functions.h";
  so.prune = true;
  trace::TraceContext empty;
  auto pruned = stubgen::plan(none, empty, so);
  const auto* cpp = edit_for(pruned, "unimplemented_functions.cpp");
  ASSERT_NE(cpp, nullptr);
  EXPECT_EQ(cpp->after.find("musaLaunchHostFunc"), std::string::npos);
  EXPECT_NE(cpp->after.find("we handle this one"), std::string::npos);
  EXPECT_NE(cpp->after.find("int my_own_helper() { return 42; }"), std::string::npos);
}

TEST(Stubgen, oddly_formatted_cmake_file_is_patched_without_changing_any_other_byte) {
  std::string dir = test::scratch_dir("odd-cmake");
  fs::create_directories(dir + "/gen/aten/musa");
  for (const char* f : {"/gen/aten/musa/A.mu", "/gen/aten/musa/Z.mu", "/gen/aten/musa/cub.mu"})
    test::write_file(dir + f, "");
  std::string original =
      "cmake_minimum_required(VERSION 3.22)   # odd spacing follows\n"
      "set(  NOTE [==[ a bracket argument with ) and # inside ]==]  )\n"
      "#[[ a bracket\n   comment ]]\n"
      "file(GLOB_RECURSE    MU_SRCS\n"
      "\t${GENERATED_PORTING_DIR}/aten/musa/A.mu   # first\n"
      "\t${GENERATED_PORTING_DIR}/aten/musa/Z.mu\n"
      "      )\n"
      "add_library(k SHARED ${MU_SRCS})\n";
  std::string cmake = dir + "/CMakeLists.txt";
  test::write_file(cmake, original);
  Report report;
  LibraryReport lib;
  lib.path = dir + "/libk.so";
  UnresolvedSymbol u;
  u.symbol = "_Z1fv";
  test::classify(u, Classification::MissingSource);
  u.fix = Fix{FixKind::AddSource, cmake, "MU_SRCS", "${GENERATED_PORTING_DIR}/aten/musa/cub.mu", std::nullopt};
  lib.unresolved.push_back(u);
  report.libraries.push_back(lib);
  build::Model info;
  info.cache["GENERATED_PORTING_DIR"] = dir + "/gen";
  trace::TraceContext ctx;
  ctx.build = &info;
  stubgen::StubOptions so;
  so.out_cpp = dir + "/none.cpp";
  so.out_header = dir + "/none.h";
  auto p = stubgen::plan(report, ctx, so);
  ASSERT_EQ(p.cmake_files.size(), 1u);
  std::string want = original;
  std::string after_a = "${GENERATED_PORTING_DIR}/aten/musa/A.mu   # first\n";
  want.insert(want.find(after_a) + after_a.size(), "\t${GENERATED_PORTING_DIR}/aten/musa/cub.mu\n");
  EXPECT_EQ(p.cmake_files[0].after, want);
  EXPECT_EQ(stubgen::unified_diff("CMakeLists.txt", p.cmake_files[0].before, p.cmake_files[0].after),
            "--- a/CMakeLists.txt\n+++ b/CMakeLists.txt\n@@ -4,6 +4,7 @@\n"
            "    comment ]]\n"
            " file(GLOB_RECURSE    MU_SRCS\n"
            " \t${GENERATED_PORTING_DIR}/aten/musa/A.mu   # first\n"
            "+\t${GENERATED_PORTING_DIR}/aten/musa/cub.mu\n"
            " \t${GENERATED_PORTING_DIR}/aten/musa/Z.mu\n"
            "       )\n"
            " add_library(k SHARED ${MU_SRCS})\n");
  // Never twice: once the entry is there, nothing more is planned.
  test::write_file(cmake, want);
  auto again = stubgen::plan(report, ctx, so);
  EXPECT_TRUE(again.cmake_files.empty());
  // Nor when the list already names the same file in another spelling.
  std::string other = original;
  other.insert(other.find(after_a) + after_a.size(), "\t" + dir + "/gen/aten/musa/cub.mu\n");
  test::write_file(cmake, other);
  auto spelled = stubgen::plan(report, ctx, so);
  EXPECT_TRUE(spelled.cmake_files.empty());
  ASSERT_EQ(spelled.warnings.size(), 1u);
  EXPECT_EQ(spelled.warnings[0],
            "${GENERATED_PORTING_DIR}/aten/musa/cub.mu is already in MU_SRCS (" + cmake + "): not added again");
  // A broken CMake file is an error naming it, and nothing is written.
  test::write_file(cmake, "file(GLOB_RECURSE MU_SRCS \"unterminated\n");
  auto broken = stubgen::plan(report, ctx, so);
  ASSERT_EQ(broken.errors.size(), 1u);
  EXPECT_EQ(broken.errors[0].path, cmake);
}

TEST(Stubgen, real_cuda_declarations_through_the_real_map_read_like_hand_written_stubs) {
  std::string maps = MLC_MAPPING_DIR;
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime_api.h")) MLC_SKIP() << "no CUDA toolkit at /usr/local/cuda";
  if (!fs::exists(maps + "/general.json")) MLC_SKIP() << maps << " is absent";
  // A MUSA SDK whose header has the runtime's types but none of these functions.
  std::string sdk = test::scratch_dir("types-only-sdk");
  fs::create_directories(sdk + "/include");
  test::write_file(
      sdk + "/include/musa_runtime_api.h",
      "#pragma once\n#include <stddef.h>\ntypedef enum musaError { musaSuccess = 0, musaErrorNotSupported = 801 }"
      " musaError_t;\ntypedef struct MUstream_st* musaStream_t;\n");
  TraceOptions t;
  t.sdk_home = sdk;
  t.cuda_home = "/usr/local/cuda";
  t.mapping = maps;
  t.cache_dir = test::scratch_dir("cuda-cache");
  Report scratch;
  TraceResources resources(t, scratch);
  Report report;
  LibraryReport lib;
  lib.path = "/x/libmusa_kernels.so";
  for (const char* name : {"musaMallocAsync", "musaMemsetAsync", "musaStreamSynchronize"}) {
    UnresolvedSymbol u;
    u.symbol = u.demangled = name;
    u.type = SymbolType::Func;
    test::classify(u, Classification::CudaOnly);
    lib.unresolved.push_back(u);
  }
  report.libraries.push_back(lib);
  stubgen::StubOptions so;
  std::string dir = test::scratch_dir("cuda-stubs");
  so.out_cpp = dir + "/unimplemented_functions.cpp";
  so.out_header = dir + "/unimplemented_functions.h";
  so.runtime_header = kSource + "/stubs/musa_stubs.h";
  auto p = stubgen::plan(report, resources.context(nullptr), so);
  ASSERT_EQ(p.stubs.size(), 3u);
  std::map<std::string, std::string> decl;
  for (const auto& s : p.stubs) {
    EXPECT_EQ(s.signature_source, stubgen::SignatureSource::CudaHeader) << s.mangled;
    decl[s.mangled] = s.declaration;
  }
  EXPECT_EQ(decl["musaMallocAsync"],
            "__host__ musaError_t musaMallocAsync(void** devPtr, size_t size, musaStream_t hStream)");
  EXPECT_EQ(decl["musaMemsetAsync"],
            "__host__ musaError_t musaMemsetAsync(void* devPtr, int value, size_t count, musaStream_t stream)");
  EXPECT_EQ(decl["musaStreamSynchronize"], "__host__ musaError_t musaStreamSynchronize(musaStream_t stream)");
  for (const auto& f : p.stub_files) ASSERT_FALSE(write_atomic(f.path, f.after).has_value());
  auto cc = run("c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I" + quote(sdk + "/include") + " -I" + quote(dir) +
                " " + quote(dir + "/unimplemented_functions.cpp"));
  EXPECT_EQ(cc.status, 0) << cc.err;
}

// A saved report from before findings carried `size` still gets its data stub: musa-stubgen --report
// reads the size from the referencing library's DWARF, as the link check's DWARF pass does.
TEST(Stubgen, a_saved_report_without_sizes_gets_them_from_the_librarys_dwarf) {
  std::string dir = test::scratch_dir("old-report");
  std::string lib = kWorld + "/build/torch_musa/csrc/libmusa_kernels.so";
  auto checked = run(kLinkcheck + " --format json --no-cache" + world_args(kWorld) + " " + quote(lib));
  ASSERT_EQ(checked.status, 1) << checked.err;
  auto doc = nlohmann::json::parse(checked.out);
  int sized = 0;
  for (auto& l : doc["libraries"])
    for (auto& u : l["unresolved"])
      if (u.contains("size") && !u["size"].is_null()) {
        EXPECT_EQ(u["symbol"], "musaDeviceTable");
        EXPECT_EQ(u["size"], 64);
        u.erase("size");
        ++sized;
      }
  ASSERT_EQ(sized, 1) << checked.out;
  test::write_file(dir + "/old.json", doc.dump());
  auto gen = run(kStubgen + world_args(kWorld) + " --no-cache --no-runtime --report " + quote(dir + "/old.json") +
                 " --cmake-patch " + quote(dir + "/p.diff") + " --out-cpp " + quote(dir + "/u.cpp") + " --out-header " +
                 quote(dir + "/u.h"));
  EXPECT_EQ(gen.err.find("musaDeviceTable:"), std::string::npos) << gen.err;  // not refused
  EXPECT_NE(test::read_file(dir + "/u.cpp")
                .find("// sdk-declared-only: musaDeviceTable, 64 bytes as libmusa_kernels.so's "
                      "DWARF declares it (zero-filled; a data stub cannot report its use)\n"
                      "alignas(16) unsigned char musa_stub_data_"),
            std::string::npos);
}

// A data object is stubbed from the size its finding carries (the pipeline read it from the library's
// DWARF): stubgen opens no library, so the library need not even be there.
TEST(Stubgen, a_data_object_is_stubbed_from_the_size_its_finding_carries) {
  std::string dir = test::scratch_dir("data-size");
  Report report;
  LibraryReport lib;
  lib.path = dir + "/gone/libk.so";
  UnresolvedSymbol data;
  data.symbol = data.demangled = "musaGlobalTable";
  data.type = SymbolType::NoType;  // .dynsym's; the size alone says it is data
  data.size = 48;
  test::classify(data, Classification::SdkDeclaredOnly);
  lib.unresolved = {data};
  report.libraries.push_back(lib);
  stubgen::StubOptions so;
  so.out_cpp = dir + "/u.cpp";
  so.out_header = dir + "/u.h";
  so.version_guard = 40100;
  trace::TraceContext ctx;
  auto p = stubgen::plan(report, ctx, so);
  EXPECT_TRUE(p.refused.empty());
  ASSERT_EQ(p.stubs.size(), 1u);
  EXPECT_EQ(p.stubs[0].signature_source, stubgen::SignatureSource::DwarfSize);
  ASSERT_FALSE(p.stub_files.empty());
  const std::string& cpp = p.stub_files[0].after;
  EXPECT_NE(
      cpp.find("#if defined(REAL_MUSA_VERSION) && (REAL_MUSA_VERSION < 40100)\n"
               "// sdk-declared-only: musaGlobalTable, 48 bytes as libk.so's DWARF declares it (zero-filled; a data "
               "stub cannot report its use)\nalignas(16) unsigned char musa_stub_data_"),
      std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("[48] __asm__(\"musaGlobalTable\") = {};\n#endif\n"), std::string::npos) << cpp;
}

TEST(Stubgen, symbols_neither_stubbed_nor_patched_are_named_with_the_reason) {
  std::string dir = test::scratch_dir("refused");
  Report report;
  LibraryReport lib;
  lib.path = dir + "/libk.so";
  UnresolvedSymbol hidden;
  hidden.symbol = "_ZN2at3fooEv";
  hidden.demangled = "at::foo()";
  test::classify(hidden, Classification::Hidden);
  say(hidden, said::HiddenVisibility{.library = "/x/libtorch.so"});
  report::write_sentences(hidden);
  UnresolvedSymbol data;
  data.symbol = data.demangled = "musaGlobalTable";
  data.type = SymbolType::Object;
  test::classify(data, Classification::SdkDeclaredOnly);
  lib.unresolved = {hidden, data};
  report.libraries.push_back(lib);
  stubgen::StubOptions so;
  so.out_cpp = dir + "/u.cpp";
  so.out_header = dir + "/u.h";
  trace::TraceContext ctx;
  auto p = stubgen::plan(report, ctx, so);
  ASSERT_EQ(p.refused.size(), 2u);
  EXPECT_EQ(p.refused[0].symbol, "at::foo()");
  EXPECT_EQ(
      p.refused[0].reason,
      "hidden: defined in /x/libtorch.so with hidden or internal visibility - not something a stub or a CMake patch "
      "fixes (pass --stub hidden to stub it anyway)");
  EXPECT_EQ(p.refused[1].symbol, "musaGlobalTable");
  EXPECT_NE(p.refused[1].reason.find("a data object of unknown size"), std::string::npos);
  EXPECT_TRUE(p.stub_files.empty());  // nothing to write: no file is created
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

TEST(Stubgen, version_guard_wraps_each_stub_and_declaration) {
  std::string dir = test::scratch_dir("guard");
  Report report;
  LibraryReport lib;
  lib.path = dir + "/libk.so";
  UnresolvedSymbol u;
  u.symbol = u.demangled = "musaMallocAsync";
  u.type = SymbolType::Func;
  test::classify(u, Classification::SdkDeclaredOnly);
  lib.unresolved.push_back(u);
  report.libraries.push_back(lib);
  TraceOptions t;
  t.sdk_home = kWorld + "/build/musa_sdk";
  Report scratch;
  TraceResources resources(t, scratch);
  stubgen::StubOptions so;
  so.out_cpp = dir + "/u.cpp";
  so.out_header = dir + "/u.h";
  so.version_guard = 4020;
  so.style = stubgen::Style::ReturnError;
  auto p = stubgen::plan(report, resources.context(nullptr), so);
  const auto* cpp = edit_for(p, "u.cpp");
  ASSERT_NE(cpp, nullptr);
  std::string want_block =
      "#if defined(REAL_MUSA_VERSION) && (REAL_MUSA_VERSION < 4020)\n"
      "// sdk-declared-only: declared in musa_runtime_api.h:15\n"
      "extern \"C\" musaError_t musaMallocAsync(void** devPtr, size_t size, musaStream_t hStream) {\n"
      "  (void)devPtr;\n  (void)size;\n  (void)hStream;\n"
      "  musa_stub_enter(\"musaMallocAsync\", \"musaMallocAsync\");\n"
      "  return musaErrorNotSupported;\n"
      "}\n#endif\n";
  EXPECT_NE(cpp->after.find(want_block), std::string::npos) << cpp->after;
}

TEST(Stubgen, unlinked_library_uses_the_sdk_packages_imported_target) {
  std::string dir = test::scratch_dir("imported");
  std::string sdk = dir + "/sdk";
  fs::create_directories(sdk + "/lib/cmake/MUSA");
  test::write_file(
      sdk + "/lib/cmake/MUSA/MUSATargets.cmake",
      "add_library(MUSA::musart SHARED IMPORTED)\nadd_library(MUSA::mublas SHARED IMPORTED)\n"
      "set_target_properties(MUSA::mublas PROPERTIES IMPORTED_LOCATION \"${_IMPORT_PREFIX}/lib/libmublas.so.1\")\n");
  std::string cmake = dir + "/CMakeLists.txt";
  test::write_file(cmake, "add_library(k SHARED k.cpp)\n\ninstall(TARGETS k)\n");
  Report report;
  LibraryReport lib;
  lib.path = dir + "/libk.so";
  UnresolvedSymbol u;
  u.symbol = u.demangled = "mublasSgemm_v2";
  test::classify(u, Classification::UnlinkedLibrary);
  u.fix = Fix{FixKind::LinkLibrary, cmake, std::nullopt, "mublas", sdk + "/lib/libmublas.so.1"};
  lib.unresolved.push_back(u);
  report.libraries.push_back(lib);
  TraceOptions t;
  t.sdk_home = sdk;
  Report scratch;
  TraceResources resources(t, scratch);
  stubgen::StubOptions so;
  so.out_cpp = dir + "/u.cpp";
  so.out_header = dir + "/u.h";
  auto p = stubgen::plan(report, resources.context(nullptr), so);
  ASSERT_EQ(p.cmake_files.size(), 1u);
  EXPECT_EQ(p.cmake_files[0].after,
            "add_library(k SHARED k.cpp)\ntarget_link_libraries(k PRIVATE MUSA::mublas)\n\ninstall(TARGETS k)\n");
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

TEST(Stubgen, namespace_option_encloses_stubs_whose_own_scope_cannot_be_used) {
  std::string dir = test::scratch_dir("namespace");
  Report report;
  LibraryReport lib;
  lib.path = dir + "/libk.so";
  UnresolvedSymbol u;
  u.symbol = "_ZNK2at6Tensor4sizeEl";  // a const method: its class cannot be reopened here
  u.demangled = "at::Tensor::size(long) const";
  u.type = SymbolType::Func;
  test::classify(u, Classification::Unknown);
  lib.unresolved.push_back(u);
  report.libraries.push_back(lib);
  stubgen::StubOptions so;
  so.out_cpp = dir + "/u.cpp";
  so.out_header = dir + "/u.h";
  so.classes.insert(Classification::Unknown);
  so.ns = "c10::musa";
  trace::TraceContext ctx;
  auto p = stubgen::plan(report, ctx, so);
  ASSERT_EQ(p.stubs.size(), 1u);
  EXPECT_EQ(p.stubs[0].signature_source, stubgen::SignatureSource::AsmLabel);
  const auto* cpp = edit_for(p, "u.cpp");
  ASSERT_NE(cpp, nullptr);
  EXPECT_NE(cpp->after.find("// at::Tensor::size(long) const\nnamespace c10::musa {\n"
                            "extern \"C\" void musa_stub_"),
            std::string::npos)
      << cpp->after;
  EXPECT_NE(cpp->after.find("}\n}  // namespace c10::musa\n"), std::string::npos);
}

// A small CMake project as a port leaves it: src/ops.cpp calls helper(), defined in src/helper.cpp that
// the source list leaves out, and two functions the SDK's header declares and no SDK library defines
// (musaMallocAsync, musaFreeAsync), beside one it does (musaMalloc). `error_type` is the SDK's
// declaration of musaError_t. Configured and built with Ninja; returns the project directory.
std::string port_project(const std::string& dir, const std::string& error_type) {
  fs::create_directories(dir + "/sdk/include");
  fs::create_directories(dir + "/sdk/lib");
  fs::create_directories(dir + "/src/musa");
  test::write_file(dir + "/sdk/include/musa_runtime_api.h",
                   "#pragma once\n#include <stddef.h>\n" + error_type +
                       "\ntypedef struct MUstream_st* musaStream_t;\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
                       "musaError_t musaMalloc(void** p, size_t n);\nmusaError_t musaMallocAsync(void** p, size_t n, "
                       "musaStream_t s);\n"
                       "musaError_t musaFreeAsync(void* p, musaStream_t s);\n#ifdef __cplusplus\n}\n#endif\n");
  test::write_file(dir + "/sdk/rt.c",
                   "#include <musa_runtime_api.h>\n#include <stdlib.h>\n"
                   "musaError_t musaMalloc(void** p, size_t n) { *p = malloc(n); return 0; }\n");
  test::write_file(dir + "/src/ops.cpp",
                   "#include <musa_runtime_api.h>\nint helper(int x);\n"
                   "extern \"C\" int kern_run(int x) {\n  void* p = nullptr;\n  musaMalloc(&p, 4);\n"
                   "  musaMallocAsync(&p, 4, nullptr);\n  musaFreeAsync(p, nullptr);\n  return helper(x);\n}\n");
  test::write_file(dir + "/src/helper.cpp", "int helper(int x) { return x + 1; }\n");
  test::write_file(
      dir + "/CMakeLists.txt",
      "cmake_minimum_required(VERSION 3.16)\nproject(kern CXX)\nset(KERN_SRCS\n  src/ops.cpp\n)\n"
      "add_library(kern SHARED ${KERN_SRCS})\ntarget_include_directories(kern PRIVATE ${MUSA_HOME}/include)\n"
      "target_link_libraries(kern PRIVATE ${MUSA_HOME}/lib/libmusart.so)\n");
  auto built =
      run("cd " + quote(dir) +
          " && gcc -shared -fPIC -Isdk/include -Wl,-soname,libmusart.so -o sdk/lib/libmusart.so "
          "sdk/rt.c && cmake -S . -B build -G Ninja -DMUSA_HOME=" +
          quote(dir + "/sdk") + " -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > /dev/null && cmake --build build > /dev/null");
  EXPECT_EQ(built.status, 0) << built.out << built.err;
  return dir;
}

// What the real loader says of a library: a fresh /usr/bin/python3 loads it with ctypes, RTLD_NOW.
test::CommandResult ctypes_load(const std::string& lib) {
  return run("/usr/bin/python3 -c 'import ctypes, os, sys; ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)' " + quote(lib));
}

// The tests that build a ported project with Ninja: checked once for each.
class StubgenNinja : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run("command -v ninja").status != 0) MLC_SKIP() << "ninja is not installed (ninja-build)";
  }
};

// `--apply` put the missing sources into the build but not its own stub file, so the rebuild still
// failed on musaFreeAsync though it said "0 of 4 still unresolved": the stub file goes into the
// target's source list like a missing source, and one --apply and one rebuild make a library that loads.
TEST_F(StubgenNinja, one_apply_and_one_rebuild_make_a_library_that_loads) {
  std::string p = port_project(test::scratch_dir("apply-stub-into-build"),
                               "typedef enum musaError { musaSuccess = 0, musaErrorNotSupported = 801 } musaError_t;");
  std::string lib = p + "/build/libkern.so";
  auto before = ctypes_load(lib);
  ASSERT_NE(before.status, 0) << "the real loader loads it before any fix?";
  std::string args =
      " --build-dir build --sdk-home sdk --cuda-home '' --no-cache --out-cpp src/musa/unimplemented_functions.cpp"
      " --out-header src/musa/unimplemented_functions.h build/libkern.so";
  auto applied = run("cd " + quote(p) + " && " + kStubgen + " --apply" + args);
  EXPECT_EQ(applied.status, 0) << applied.err;
  EXPECT_NE(applied.err.find("musa-stubgen: after this patch: 0 of 3 still unresolved\n"), std::string::npos)
      << applied.err;
  EXPECT_EQ(test::read_file(p + "/CMakeLists.txt"),
            "cmake_minimum_required(VERSION 3.16)\nproject(kern CXX)\nset(KERN_SRCS\n  src/helper.cpp\n"
            "  src/musa/unimplemented_functions.cpp\n  src/ops.cpp\n)\nadd_library(kern SHARED ${KERN_SRCS})\n"
            "target_include_directories(kern PRIVATE ${MUSA_HOME}/include)\n"
            "target_link_libraries(kern PRIVATE ${MUSA_HOME}/lib/libmusart.so)\n");
  auto rebuilt = run("cmake --build " + quote(p + "/build"));
  ASSERT_EQ(rebuilt.status, 0) << rebuilt.out << rebuilt.err;
  auto after = ctypes_load(lib);
  EXPECT_EQ(after.status, 0) << after.err;
  // Nothing is left to do: a second run changes no file.
  auto again = run("cd " + quote(p) + " && " + kStubgen + " --apply" + args);
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find(", 0 files changed, "), std::string::npos) << again.err;
}

// With an error type that is a plain int there is no "not supported" code to return: --style
// return-error refuses the SDK functions, naming why, instead of stubs that return 0 (success).
TEST_F(StubgenNinja, return_error_style_refuses_an_error_type_with_no_not_supported_code) {
  std::string p = port_project(test::scratch_dir("return-error-int"), "typedef int musaError_t;");
  auto r = run("cd " + quote(p) + " && " + kStubgen +
               " --style return-error --no-confirm --build-dir build --sdk-home sdk "
               "--cuda-home '' --no-cache --dry-run build/libkern.so");
  EXPECT_EQ(r.status, 1) << r.err;
  for (const char* f : {"musaFreeAsync", "musaMallocAsync"})
    EXPECT_NE(r.err.find(std::string("musa-stubgen: cannot fix ") + f +
                         ": --style return-error: the SDK's headers define "
                         "no musaErrorNotSupported for its musaError_t (not an enum of error codes), so the stub could "
                         "only return 0, which is success: stub it with --style throw or abort\n"),
              std::string::npos)
        << r.err;
  EXPECT_EQ(r.out.find("return {}"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mlc
