// --confirm (src/confirm): a CMake fixture, built at test time, where two uncompiled sources both
// define ns::f(int) under #ifdef and only the build's -D flag says which one really does. The
// real compiler settles it; the cache makes the second run compile nothing.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "build/cmake/build_info.h"
#include "classify.h"
#include "confirm/confirm.h"
#include "pipeline/linkcheck.h"
#include "test_support.h"

namespace fs = std::filesystem;
using mlc::test::quote;
using mlc::test::read_file;
using mlc::test::write_file;

namespace {

struct Fixture {
  std::string root, src, build, cache;
};

// Runs a shell command, stdout+stderr together, nothing written to /tmp.
int sh(const std::string& cmd, std::string* out = nullptr) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf;
  size_t n;
  std::string text;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
  int status = pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// Configures (with `configure_args`) and builds a fixture project: sh()'s status, its output in `log`.
int configure_and_build(const std::string& src, const std::string& build, std::string* log,
                        const std::string& configure_args = "") {
  return sh("cmake -S " + quote(src) + " -B " + quote(build) + configure_args + " >/dev/null && cmake --build " +
                quote(build),
            log);
}

class ConfirmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    f_.root = mlc::test::scratch_dir("confirm-fixture");  // the tests' scratch area (test_support.h)
    fs::remove_all(f_.root);
    f_.src = f_.root + "/src";
    f_.build = f_.root + "/build";
    f_.cache = f_.root + "/cache";
    fs::create_directories(f_.src);
    write_file(f_.src + "/CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.16)\nproject(confirm_fixture CXX)\n"
               "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)\n"
               "set(USER_SRCS user.cpp)\n"
               "add_library(user SHARED ${USER_SRCS})\n"
               "target_compile_definitions(user PRIVATE USE_Y)\n");
    write_file(f_.src + "/f.h", "#pragma once\nnamespace ns { int f(int x); }\n");
    write_file(f_.src + "/user.cpp", "#include \"f.h\"\nint use_it(int v) { return ns::f(v) + 1; }\n");
    // Text sees two definitions of ns::f(int); the build's -DUSE_Y keeps only y.cpp's.
    write_file(f_.src + "/x.cpp",
               "#include \"f.h\"\n#ifdef USE_X\nnamespace ns { int f(int x) { return x; } }\n#endif\n");
    write_file(f_.src + "/y.cpp",
               "#include \"f.h\"\n#ifdef USE_Y\nnamespace ns { int f(int x) { return 2 * x; } }\n#endif\n");
    std::string log;
    if (configure_and_build(f_.src, f_.build, &log) != 0) {
      FAIL() << "cannot build the fixture project: " << log;  // a broken fixture is a failure, never a skip
    }
  }
  void TearDown() override { fs::remove_all(f_.root); }

  mlc::LinkcheckOptions options(bool confirm) const {
    mlc::LinkcheckOptions o;
    o.trace.build_dir = f_.build;
    o.trace.source_roots = {f_.src};
    o.trace.cache_dir = f_.cache;
    o.trace.cuda_home = "";
    o.trace.confirm = confirm;
    o.trace.confirm_budget = 3600;  // compiles: every candidate of these verdicts
    return o;
  }
  const mlc::UnresolvedSymbol* find(const mlc::Report& r, const std::string& sym) const {
    for (const auto& l : r.libraries)
      for (const auto& u : l.unresolved)
        if (u.symbol == sym) return &u;
    return nullptr;
  }
  std::string confirm_line(const mlc::Report& r) const {
    for (const auto& w : r.warnings)
      if (w.text.rfind("--confirm: ", 0) == 0 && w.text.find("candidate file") != std::string::npos) return w.text;
    return "";
  }
  Fixture f_;
};

TEST_F(ConfirmTest, CompilerSettlesWhichSourceDefinesIt) {
  std::string lib = f_.build + "/libuser.so";
  mlc::Report r = mlc::run_linkcheck({lib}, options(true));
  const auto* u = find(r, "_ZN2ns1fEi");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->classification, mlc::Classification::MissingSource);
  ASSERT_TRUE(u->origin);
  EXPECT_EQ(u->origin->file, f_.src + "/y.cpp");
  EXPECT_EQ(u->origin->kind, mlc::OriginKind::Definition);
  // y.cpp is not compiled by the build: its sibling user.cpp lent its command (with -DUSE_Y).
  EXPECT_EQ(u->reason,
            "compiling " + f_.src + "/y.cpp defines it (with the build's command for " + f_.src + "/user.cpp)");
  ASSERT_TRUE(u->fix);
  EXPECT_EQ(u->fix->kind, mlc::FixKind::AddSource);
  EXPECT_EQ(u->fix->list.value_or(""), "USER_SRCS");
  // A run that compiled says what it cost, in all and per compiled file.
  EXPECT_TRUE(
      std::regex_match(confirm_line(r), std::regex(R"(--confirm: 2 candidate file\(s\): 2 compiled, 0 from cache, )"
                                                   R"(0 failed, 0 skipped \(budget or no command\); )"
                                                   R"([0-9]+ ms compiling, [0-9]+ ms per compiled file)")))
      << confirm_line(r);

  // Second run: everything from the cache, no compiler started.
  mlc::Report again = mlc::run_linkcheck({lib}, options(true));
  EXPECT_EQ(confirm_line(again),
            "--confirm: 2 candidate file(s): 0 compiled, 2 from cache, 0 failed, 0 skipped (budget or no command)");
  const auto* u2 = find(again, "_ZN2ns1fEi");
  ASSERT_NE(u2, nullptr);
  ASSERT_TRUE(u2->origin);
  EXPECT_EQ(u2->origin->file, f_.src + "/y.cpp");

  // Off unless asked (TraceOptions' default): no compile, no confirm line.
  mlc::LinkcheckOptions by_default = options(false);
  by_default.trace.confirm = mlc::LinkcheckOptions{}.trace.confirm;
  mlc::Report plain = mlc::run_linkcheck({lib}, by_default);
  EXPECT_EQ(confirm_line(plain), "");
  // Nothing of the scratch objects is left in the cache dir.
  for (const auto& e : fs::directory_iterator(f_.cache))
    EXPECT_EQ(e.path().filename().string().rfind("confirm-tmp-", 0), std::string::npos) << e.path();
}

// The budget counts compiles: when it is spent before a compile starts, that file is skipped (never
// half-read), the text candidates stand, and the confirm line counts it.
TEST_F(ConfirmTest, a_spent_budget_skips_the_compiles_and_keeps_the_text_verdict) {
  std::string lib = f_.build + "/libuser.so";
  auto o = options(true);
  o.trace.confirm_budget = 0;
  o.trace.cache_dir = f_.root + "/budget-cache";  // nothing from an earlier run's compiles
  mlc::Report r = mlc::run_linkcheck({lib}, o);
  EXPECT_EQ(confirm_line(r),
            "--confirm: 2 candidate file(s): 0 compiled, 0 from cache, 0 failed, 2 skipped (budget or no command)");
  const auto* u = find(r, "_ZN2ns1fEi");
  ASSERT_NE(u, nullptr);
  // Text alone cannot tell x.cpp from y.cpp (both spell ns::f, each under an #ifdef): no compiler verdict.
  EXPECT_EQ(u->reason->find("compiling "), std::string::npos) << *u->reason;
}

TEST_F(ConfirmTest, FailingCompileAndMissingCompilerAreWarnings) {
  write_file(f_.src + "/broken.cpp", "namespace ns { int f(int x) { return x }\n");
  mlc::confirm::ConfirmOptions o{.build_dir = f_.build, .cache_dir = f_.cache, .budget_compiles = 60, .jobs = 0};
  auto out = mlc::confirm::confirm_files({f_.src + "/broken.cpp"}, o);
  EXPECT_EQ(out.stats.failed, 1u);
  EXPECT_FALSE(out.files[f_.src + "/broken.cpp"].ok);
  EXPECT_TRUE(out.warnings.empty());  // a failure is evidence, said where it matters
  ASSERT_EQ(out.failures.size(), 1u);
  EXPECT_EQ(out.failures[0].file, f_.src + "/broken.cpp");
  EXPECT_EQ(out.failures[0].words().rfind("--confirm: compiling " + f_.src + "/broken.cpp failed: ", 0), 0u)
      << out.failures[0].words();
  EXPECT_NE(out.failures[0].error.find("error"), std::string::npos) << out.failures[0].error;

  std::string other = f_.root + "/nocc";
  fs::create_directories(other);
  write_file(other + "/compile_commands.json", "[{\"directory\": \"" + other + "\", \"file\": \"" + f_.src +
                                                   "/user.cpp\", \"command\": "
                                                   "\"/nonexistent/mcc -c " +
                                                   f_.src + "/user.cpp -o user.o\"}]");
  mlc::confirm::ConfirmOptions o2{.build_dir = other, .cache_dir = f_.cache, .budget_compiles = 60, .jobs = 0};
  auto out2 = mlc::confirm::confirm_files({f_.src + "/x.cpp"}, o2);
  EXPECT_EQ(out2.stats.failed, 1u);
  ASSERT_EQ(out2.failures.size(), 1u);
  EXPECT_EQ(out2.failures[0].words(),
            "--confirm: compiling " + f_.src + "/x.cpp failed: compiler /nonexistent/mcc not found");
}

// The confirm pass compiles the best-ranked candidates first and exactly as many as the budget says, a
// count of compiler runs: the target's own sources before its tests (and another platform's files),
// whatever their names sort as. impl_value() is written by a macro, so text matching cannot place it.
TEST(ConfirmOrder, the_budget_compiles_the_targets_own_source_before_tests_and_other_platforms) {
  const std::string root = mlc::test::scratch_dir("confirm-order");
  fs::remove_all(root);
  const std::string src = root + "/src", build = root + "/build";
  fs::create_directories(src);
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(order CXX)\n"
             "add_library(core SHARED core.cpp)\n");
  write_file(src + "/core.cpp", "int impl_value();\nint core_value() { return impl_value(); }\n");
  const std::string defining = "#define DEFINE_VALUE(name) int name() { return 1; }\nDEFINE_VALUE(impl_value)\n";
  write_file(src + "/value.cpp", defining);
  // Sorted by name these come first; each spells impl_value and one even defines it.
  write_file(src + "/a_value_test.cpp", "int impl_value();\nint main() { return impl_value(); }\n");
  write_file(src + "/b_value_test.cpp", defining);
  std::string log;
  ASSERT_EQ(configure_and_build(src, build, &log, " -DCMAKE_EXPORT_COMPILE_COMMANDS=ON"), 0) << log;
  std::string out;
  sh(std::string(MLC_LINKCHECK_BIN) + " --build-dir " + quote(build) +
         " --no-reconfigure --no-cache --cuda-home '' "
         "--confirm-budget 1 --format json -o " +
         quote(root + "/r.json") + " " + quote(build + "/libcore.so"),
     &out);
  auto report = nlohmann::json::parse(read_file(root + "/r.json"));
  const auto& u = report.at("libraries").at(0).at("unresolved").at(0);
  EXPECT_EQ(u.at("classification"), "missing-source") << u.dump(1);
  EXPECT_EQ(u.at("origin").at("file"), src + "/value.cpp") << u.dump(1);
  std::string line;
  for (const auto& w : report.at("warnings"))
    if (w.get<std::string>().find("candidate file(s)") != std::string::npos) line = w;
  // One compile, and it settled the symbol: the tests were never compiled.
  EXPECT_EQ(line.substr(0, line.find(';')),
            "--confirm: 1 candidate file(s): 1 compiled, 0 from cache, 0 failed, 0 skipped (budget or no command)")
      << out;
  fs::remove_all(root);
}

// Evidence order (abseil's strings_internal): a sibling library the same build makes defines other
// names of the namespace; the forgotten source of the library's own target defines this one. A
// neighbour in a namespace is no "other version" of a library the build itself makes: without the
// compiler the symbol stays unknown, with it it is missing-source in that source.
TEST(ConfirmOrder, a_sibling_librarys_namespace_never_outranks_the_targets_own_forgotten_source) {
  const std::string root = mlc::test::scratch_dir("confirm-sibling");
  fs::remove_all(root);
  const std::string src = root + "/src", build = root + "/build";
  fs::create_directories(src);
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(sibling CXX)\n"
             "add_library(outer_internal SHARED internal.cc)\n"
             "add_library(outer SHARED outer.cc)\n"
             "target_link_libraries(outer PRIVATE outer_internal)\n");
  // b() is declared and defined through macros: text matching finds neither (as abseil's inline
  // namespace macros hid its names), and only its namespace is there to go by.
  write_file(src + "/internal.h",
             "namespace ns { namespace internal {\nint a();\nint c();\nint d();\n"
             "#define DECLARE_INTERNAL(name) int name();\nDECLARE_INTERNAL(b)\n} }\n");
  write_file(src + "/internal.cc",
             "#include \"internal.h\"\nnamespace ns { namespace internal {\n"
             "int a() { return 1; }\nint c() { return 3; }\nint d() { return 4; }\n} }\n");
  write_file(src + "/outer.cc",
             "#include \"internal.h\"\nint outer() { return ns::internal::a() + ns::internal::b(); }\n");
  // The target's forgotten source, written by a macro that text matching cannot read.
  write_file(src + "/b_impl.cc",
             "#include \"internal.h\"\n#define DEFINE_INTERNAL(name, v) namespace ns { namespace internal "
             "{ int name() { return v; } } }\nDEFINE_INTERNAL(b, 2)\n");
  std::string log;
  ASSERT_EQ(configure_and_build(src, build, &log, " -DCMAKE_EXPORT_COMPILE_COMMANDS=ON"), 0) << log;
  auto classify = [&](const std::string& extra) {
    std::string out;
    sh(std::string(MLC_LINKCHECK_BIN) + " --build-dir " + quote(build) + " --no-cache --cuda-home '' --sdk-home '' " +
           extra + " --format json -o " + quote(root + "/r.json") + " " + quote(build + "/libouter.so"),
       &out);
    auto doc = nlohmann::json::parse(read_file(root + "/r.json"));
    const auto& u = doc.at("libraries").at(0).at("unresolved").at(0);
    return u.at("classification").get<std::string>() + " " +
           (u.at("origin").is_object() ? u.at("origin").value("file", "") : "");
  };
  EXPECT_EQ(classify("--no-confirm"), "unknown ");
  EXPECT_EQ(classify("--confirm-budget 8"), "missing-source " + src + "/b_impl.cc");
  fs::remove_all(root);
}

TEST(ConfirmCommand, SiblingCommandSubstitutesFileAndOutput) {
  std::vector<mlc::confirm::CompileCommand> db = {
      {.directory = "/b", .argv = {"/usr/bin/mcc", "-DA", "-o", "k.o", "-c", "/s/k/a.mu"}, .file = "/s/k/a.mu"},
      {.directory = "/b", .argv = {"/usr/bin/c++", "-DB", "-o", "c.o", "-c", "/s/k/c.cpp"}, .file = "/s/k/c.cpp"},
      {.directory = "/b", .argv = {"/usr/bin/mcc", "-DC", "-o", "o.o", "-c", "/s/o/d.mu"}, .file = "/s/o/d.mu"},
  };
  mlc::confirm::CompileCommand cmd;
  std::string from;
  ASSERT_TRUE(mlc::confirm::command_for(db, "/s/k/new.mu", "/c/0.o", cmd, from));
  EXPECT_EQ(from, "/s/k/a.mu");  // same directory and extension, and its compiler (mcc)
  EXPECT_EQ(cmd.argv, (std::vector<std::string>{"/usr/bin/mcc", "-DA", "-o", "/c/0.o", "-c", "/s/k/new.mu"}));
  ASSERT_TRUE(mlc::confirm::command_for(db, "/s/o/other.cpp", "/c/1.o", cmd, from));
  EXPECT_EQ(from, "/s/k/c.cpp");  // the extension decides the compiler before the directory
  ASSERT_TRUE(mlc::confirm::command_for(db, "/s/o/d.mu", "/c/2.o", cmd, from));
  EXPECT_EQ(from, "/s/o/d.mu");  // its own command when the build compiles it
  EXPECT_EQ(cmd.argv, (std::vector<std::string>{"/usr/bin/mcc", "-DC", "-o", "/c/2.o", "-c", "/s/o/d.mu"}));
}

TEST_F(ConfirmTest, StubgenProvesThePatch) {
  std::string out;
  int rc = sh(std::string(MLC_STUBGEN_BIN) + " --build-dir " + quote(f_.build) + " --source-root " + quote(f_.src) +
                  " --cache-dir " + quote(f_.cache) + " --cuda-home '' --apply --out-cpp " + quote(f_.root + "/u.cpp") +
                  " --out-header " + quote(f_.root + "/u.h") + " " + quote(f_.build + "/libuser.so"),
              &out);
  EXPECT_NE(out.find("musa-stubgen: after this patch: 0 of 1 still unresolved"), std::string::npos) << out;
  EXPECT_EQ(rc, 0) << out;
  // The proven patch adds y.cpp (not x.cpp) to the list.
  std::string cmake = read_file(f_.src + "/CMakeLists.txt");
  EXPECT_NE(cmake.find("y.cpp"), std::string::npos) << cmake;
  EXPECT_EQ(cmake.find("x.cpp"), std::string::npos) << cmake;
}

// A source the compiler proves defines the symbol, while a file(GLOB) of the list already matches it
// (added after the configure): no entry is the fix. The fix is the list chooser's note alone, never
// "add  to  in ", and musa-stubgen refuses it rather than taking it for a list addition.
TEST(ConfirmGlob, FileAGlobCoversGetsTheNoteNotAnEmptyEntry) {
  // In the scratch area, which goes with the test process whatever assertion fires.
  std::string root = mlc::test::scratch_dir("confirm_glob_fixture");
  std::string src = root + "/src", build = root + "/build", cache = root + "/cache";
  fs::create_directories(src);
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(confirm_glob CXX)\n"
             "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)\n"
             "file(GLOB USER_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)\n"
             "add_library(user SHARED ${USER_SRCS})\n"
             "target_compile_definitions(user PRIVATE USE_Y)\n");
  write_file(src + "/f.h", "#pragma once\nnamespace ns { int f(int x); }\n");
  write_file(src + "/user.cpp", "#include \"f.h\"\nint use_it(int v) { return ns::f(v) + 1; }\n");
  std::string log;
  // A fixture that does not build is a broken test, never a skip.
  ASSERT_EQ(configure_and_build(src, build, &log), 0) << "cannot build the fixture project: " << log;
  // Written after the configure: the glob matches them, the build does not compile them.
  write_file(src + "/x.cpp", "#include \"f.h\"\n#ifdef USE_X\nnamespace ns { int f(int x) { return x; } }\n#endif\n");
  write_file(src + "/y.cpp",
             "#include \"f.h\"\n#ifdef USE_Y\nnamespace ns { int f(int x) { return 2 * x; } }\n#endif\n");
  const std::string note =
      src + "/y.cpp matches the file(GLOB) pattern ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp of USER_SRCS (" + src +
      "/CMakeLists.txt:4), so it needs no entry: the fix lies elsewhere (re-run cmake if "
      "the file is newer than the configure; otherwise a wrong directory, #if guards or a missing port)";

  mlc::LinkcheckOptions o;
  o.trace.build_dir = build;
  o.trace.source_roots = {src};
  o.trace.cache_dir = cache;
  o.trace.cuda_home = "";
  o.trace.confirm = true;
  mlc::Report r = mlc::run_linkcheck({build + "/libuser.so"}, o);
  const mlc::UnresolvedSymbol* u = nullptr;
  for (const auto& l : r.libraries)
    for (const auto& x : l.unresolved)
      if (x.symbol == "_ZN2ns1fEi") u = &x;
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->classification, mlc::Classification::MissingSource);
  ASSERT_TRUE(u->origin);
  EXPECT_EQ(u->origin->file, src + "/y.cpp");
  ASSERT_TRUE(u->fix);
  EXPECT_EQ(u->fix->kind, mlc::FixKind::AddSource);
  EXPECT_EQ(u->fix->detail, note);
  EXPECT_FALSE(u->fix->cmake_file) << *u->fix->cmake_file;
  EXPECT_FALSE(u->fix->list);
  EXPECT_FALSE(u->fix->entry);

  // As a user sees it: the note is the fix line; stubgen names it and patches nothing. (With CMake
  // asked, its configure would glob y.cpp in, and the fix is a rebuild: cmake_patch_test says so.)
  std::string args = " --build-dir " + quote(build) + " --no-reconfigure --source-root " + quote(src) +
                     " --cache-dir " + quote(cache) + " --cuda-home '' ";
  std::string out;
  EXPECT_EQ(sh(std::string(MLC_LINKCHECK_BIN) + args + "--confirm --color never " + quote(build + "/libuser.so"), &out),
            1)
      << out;
  EXPECT_NE(out.find("\n>>> fix: " + note + "\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("add  to  in"), std::string::npos) << out;
  std::string cmake_before = read_file(src + "/CMakeLists.txt");
  EXPECT_EQ(sh(std::string(MLC_STUBGEN_BIN) + args + "--apply --out-cpp " + quote(root + "/u.cpp") + " --out-header " +
                   quote(root + "/u.h") + " " + quote(build + "/libuser.so"),
               &out),
            1)
      << out;
  EXPECT_NE(out.find("musa-stubgen: cannot fix ns::f(int): "), std::string::npos) << out;
  EXPECT_NE(out.find(note), std::string::npos) << out;
  EXPECT_EQ(read_file(src + "/CMakeLists.txt"), cmake_before);
  fs::remove_all(root);
}

// nvcc 13 compiles without a GPU; the CUDA tests below need only its compiler.
const std::string kNvcc = "/usr/local/cuda/bin/nvcc";

// The CUDA tests' one prerequisite, checked once for each of them.
class WithNvcc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kNvcc))
      MLC_SKIP() << "nvcc is not installed at " << kNvcc << " (NVIDIA's CUDA toolkit: no Debian package has it)";
  }
};
class ConfirmNvccCommand : public WithNvcc {};
class BuildDirAloneCuda : public WithNvcc {};

// How many times `needle` occurs in `text`.
size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The FAQ's torch op library in CUDA: ops.cpp, compiled by the host compiler, calls
// myops::scale_on_gpu, which kernels/scale_kernel.cu defines and its target's list forgets.
// `cuda_sibling`: the target also compiles kernels/add_kernel.cu (an nvcc command to borrow); without
// it, the only command beside the .cu is the host's. The include directory comes from
// target_include_directories, so CMake's Makefiles write it into includes_CUDA.rsp (--options-file).
void write_cuda_project(const std::string& src, bool cuda_sibling) {
  fs::create_directories(src + "/kernels");
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.18)\nproject(myops CXX CUDA)\n"
             "set(CMAKE_CUDA_ARCHITECTURES 75)\n"
             "add_library(myops SHARED ops.cpp" +
                 std::string(cuda_sibling ? " kernels/add_kernel.cu" : "") +
                 ")\n"
                 "target_include_directories(myops PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/kernels)\n");
  write_file(src + "/kernels/scale.h",
             "#pragma once\nnamespace myops {\nvoid scale_on_gpu(float* d, int n, float by);\nfloat add_on_gpu(float* "
             "d, int n);\n}\n");
  write_file(src + "/ops.cpp",
             std::string("#include \"scale.h\"\nfloat twice(float* d, int n) {\n  myops::scale_on_gpu(d, n, 2.0f);\n") +
                 (cuda_sibling ? "  return myops::add_on_gpu(d, n);\n" : "  return 0.0f;\n") + "}\n");
  write_file(src + "/kernels/add_kernel.cu",
             "#include \"scale.h\"\n__global__ void add_kernel(float* d, int n) { int i = blockIdx.x * blockDim.x + "
             "threadIdx.x; "
             "if (i < n) d[i] += 1.0f; }\n"
             "namespace myops { float add_on_gpu(float* d, int n) { add_kernel<<<(n + 255) / 256, 256>>>(d, n); return "
             "0.0f; } }\n");
  write_file(src + "/kernels/scale_kernel.cu",
             "#include \"scale.h\"\n__global__ void scale_kernel(float* d, int n, float by) {\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) d[i] *= by;\n}\n"
             "namespace myops {\nvoid scale_on_gpu(float* d, int n, float by) { scale_kernel<<<(n + 255) / 256, "
             "256>>>(d, n, by); }\n}\n");
}

// Every file of a build tree with its size and modification time: what a confirm must leave as it was.
std::map<std::string, std::pair<uintmax_t, fs::file_time_type>> tree_state(const std::string& dir) {
  std::map<std::string, std::pair<uintmax_t, fs::file_time_type>> state;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) state[e.path().string()] = {e.file_size(), e.last_write_time()};
  return state;
}

const std::string kScaleOnGpu = "_ZN5myops12scale_on_gpuEPfif";  // myops::scale_on_gpu(float*, int, float)

// CMake's CUDA language, as the Makefiles and Ninja generators write it: nvcc with
// -forward-unknown-to-host-compiler, --options-file includes_CUDA.rsp (Makefiles), -Xcompiler=-fPIC,
// -x cu, -c and -o into the build tree. The forgotten scale_kernel.cu borrows add_kernel.cu's command;
// nvcc compiles it (the include directory is read from the response file), the object is read from
// our scratch, and the build tree is left exactly as it was.
TEST_F(ConfirmNvccCommand, NvccCommandsOfCmakesCudaLanguageAreRedirected) {
  std::string root = mlc::test::scratch_dir("confirm_nvcc");
  std::string src = root + "/myops";
  write_cuda_project(src, true);
  for (const std::string generator : {"Unix Makefiles", "Ninja"}) {
    SCOPED_TRACE(generator);
    std::string build = root + "/build-" + generator.substr(0, generator.find(' '));
    std::string log;
    // The compiler is named: an nvcc earlier on PATH (a /usr/local/bin/nvcc link) would be the one CMake records.
    ASSERT_EQ(sh("cmake -G " + quote(generator) + " -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CUDA_COMPILER=" +
                     quote(kNvcc) + " -S " + quote(src) + " -B " + quote(build),
                 &log),
              0)
        << log;
    auto db = mlc::confirm::read_compile_commands(build);
    ASSERT_EQ(db.size(), 2u);
    const auto& nvcc_cmd = db[0].file == src + "/kernels/add_kernel.cu" ? db[0] : db[1];
    ASSERT_EQ(nvcc_cmd.argv[0], kNvcc);
    if (generator == "Unix Makefiles") {  // the include directory is only in the response file
      ASSERT_NE(std::find(nvcc_cmd.argv.begin(), nvcc_cmd.argv.end(), "--options-file"), nvcc_cmd.argv.end());
    }

    auto before = tree_state(build);
    mlc::confirm::ConfirmOptions o{
        .build_dir = build, .cache_dir = root + "/cache-" + generator.substr(0, 5), .budget_compiles = 3600, .jobs = 0};
    auto out = mlc::confirm::confirm_files({src + "/kernels/scale_kernel.cu"}, o);
    const auto& r = out.files[src + "/kernels/scale_kernel.cu"];
    EXPECT_TRUE(r.ok) << r.warning;
    EXPECT_EQ(r.command_from, src + "/kernels/add_kernel.cu");
    EXPECT_TRUE(std::binary_search(r.defined.begin(), r.defined.end(), kScaleOnGpu))
        << ::testing::PrintToString(r.defined);
    EXPECT_TRUE(out.warnings.empty());
    EXPECT_TRUE(out.failures.empty()) << out.failures.front().words();
    EXPECT_EQ(out.stats.compiled, 1u);
    EXPECT_EQ(tree_state(build), before) << "the confirm wrote into the build tree";
  }
  fs::remove_all(root);
}

// The forgotten .cu is the target's only CUDA source: the build's only neighbouring command is the
// host compiler's for ops.cpp, which given a .cu compiles nothing ("linker input file unused") and
// exits 0. The file gets the build's CMAKE_CUDA_COMPILER with ops.cpp's flags, and nvcc defines it.
TEST_F(ConfirmNvccCommand, CudaFileWithOnlyAHostSiblingGetsTheBuildsNvcc) {
  std::string root = mlc::test::scratch_dir("confirm_nvcc_host");
  std::string src = root + "/myops", build = root + "/build";
  write_cuda_project(src, false);
  std::string log;
  ASSERT_EQ(sh("cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -S " + quote(src) + " -B " + quote(build), &log), 0) << log;
  auto db = mlc::confirm::read_compile_commands(build);
  ASSERT_EQ(db.size(), 1u);
  ASSERT_EQ(db[0].argv[0].find("nvcc"), std::string::npos) << db[0].argv[0];

  mlc::confirm::ConfirmOptions o{.build_dir = build, .cache_dir = root + "/cache", .budget_compiles = 3600, .jobs = 0};
  auto out = mlc::confirm::confirm_files({src + "/kernels/scale_kernel.cu"}, o);
  const auto& r = out.files[src + "/kernels/scale_kernel.cu"];
  EXPECT_TRUE(r.ok) << r.warning;
  EXPECT_EQ(r.command_from, src + "/ops.cpp");
  EXPECT_TRUE(std::binary_search(r.defined.begin(), r.defined.end(), kScaleOnGpu))
      << ::testing::PrintToString(r.defined);
  EXPECT_TRUE(out.warnings.empty());
  EXPECT_TRUE(out.failures.empty()) << out.failures.front().words();

  // The command itself: nvcc, ops.cpp's defines and includes, its host-only flag through -Xcompiler.
  mlc::confirm::CompileCommand cmd;
  std::string from;
  ASSERT_TRUE(mlc::confirm::command_for(db, src + "/kernels/scale_kernel.cu", "/scratch/0.o", cmd, from, kNvcc));
  EXPECT_EQ(cmd.argv,
            (std::vector<std::string>{kNvcc, "-Dmyops_EXPORTS", "-I" + src + "/kernels", "-Xcompiler=-fPIC", "-o",
                                      "/scratch/0.o", "-c", "-x", "cu", src + "/kernels/scale_kernel.cu"}));
  // Without a CUDA compiler in the build there is no command for it, and the confirm says why.
  EXPECT_FALSE(mlc::confirm::command_for(db, src + "/kernels/scale_kernel.cu", "/scratch/0.o", cmd, from, ""));
  fs::remove_all(root);
}

// FindCUDA's cuda_add_library() compiles its .cu files by custom commands that run a generated
// CMakeFiles/myops.dir/kernels/myops_generated_add_kernel.cu.o.cmake script, so compile_commands.json
// holds only the host's ops.cpp. The script's nvcc command (its -Xcompiler host flags, nvcc_flags, the
// include directories) is read from it, and the forgotten .cu borrows it: compiled by nvcc, the build
// tree left as it was.
TEST_F(ConfirmNvccCommand, FindCudasGeneratedScriptsGiveTheNvccCommand) {
  std::string root = mlc::test::scratch_dir("confirm_findcuda");
  std::string src = root + "/myops", build = root + "/build";
  write_cuda_project(src, true);
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(myops CXX)\nfind_package(CUDA REQUIRED)\n"
             "set(CUDA_NVCC_FLAGS -arch=sm_75)\ninclude_directories(${CMAKE_CURRENT_SOURCE_DIR}/kernels)\n"
             "cuda_add_library(myops SHARED ops.cpp kernels/add_kernel.cu)\n");
  std::string log;
  ASSERT_EQ(sh("cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda -S " + quote(src) +
                   " -B " + quote(build),
               &log),
            0)
      << log;
  auto findcuda = mlc::build::cmake::read_findcuda_commands(build, "");
  ASSERT_EQ(findcuda.size(), 1u);
  EXPECT_EQ(findcuda[0].file, src + "/kernels/add_kernel.cu");
  EXPECT_EQ(findcuda[0].argv[0], kNvcc);
  EXPECT_NE(std::find(findcuda[0].argv.begin(), findcuda[0].argv.end(), "-I" + src + "/kernels"),
            findcuda[0].argv.end());
  EXPECT_NE(std::find(findcuda[0].argv.begin(), findcuda[0].argv.end(), "-Xcompiler=-fPIC,-g"), findcuda[0].argv.end())
      << ::testing::PrintToString(findcuda[0].argv);

  auto before = tree_state(build);
  mlc::confirm::ConfirmOptions o{.build_dir = build, .cache_dir = root + "/cache", .budget_compiles = 3600, .jobs = 0};
  auto out = mlc::confirm::confirm_files({src + "/kernels/scale_kernel.cu"}, o);
  const auto& r = out.files[src + "/kernels/scale_kernel.cu"];
  EXPECT_TRUE(r.ok) << r.warning;
  EXPECT_EQ(r.command_from, src + "/kernels/add_kernel.cu");
  EXPECT_TRUE(std::binary_search(r.defined.begin(), r.defined.end(), kScaleOnGpu))
      << ::testing::PrintToString(r.defined);
  EXPECT_TRUE(out.warnings.empty());
  EXPECT_TRUE(out.failures.empty()) << out.failures.front().words();
  EXPECT_EQ(tree_state(build), before) << "the confirm wrote into the build tree";
  fs::remove_all(root);
}

// What nvcc and gcc commands from other generators carry (bear, hand-written databases, FindCUDA):
// depfiles (-MD -MT -MF; nvcc's --generate-dependencies-with-compile --dependency-output), -odir, a
// response file (@file, --options-file) that holds the -o. All of it would write into the build tree:
// the response file is read inline, the depfile flags and -odir are dropped, the output is ours.
TEST(ConfirmCommand, DepfilesOdirAndResponseFilesWriteNothingIntoTheBuild) {
  std::string root = mlc::test::scratch_dir("confirm_shape");
  fs::create_directories(root + "/b/CMakeFiles/k.dir");
  write_file(root + "/b/CMakeFiles/k.dir/includes_CUDA.rsp", "-I/inc \"-I/with space\"\n-DFROM_RSP\n");
  write_file(root + "/b/k.rsp", "-DHOST_RSP -o CMakeFiles/h.dir/h.cpp.o\n");
  std::vector<mlc::confirm::CompileCommand> db = {
      {.directory = root + "/b",
       .argv = {kNvcc,
                "-forward-unknown-to-host-compiler",
                "--options-file",
                "CMakeFiles/k.dir/includes_CUDA.rsp",
                "-Xcompiler",
                "-fPIC",
                "-MD",
                "-MT",
                "CMakeFiles/k.dir/a.cu.o",
                "-MF",
                "CMakeFiles/k.dir/a.cu.o.d",
                "--generate-dependencies-with-compile",
                "--dependency-output",
                "a.cu.o.d",
                "-odir",
                "CMakeFiles/k.dir",
                "-x",
                "cu",
                "-c",
                "/s/a.cu",
                "-o",
                "CMakeFiles/k.dir/a.cu.o"},
       .file = "/s/a.cu"},
      {.directory = root + "/b",
       .argv = {"/usr/bin/c++", "@k.rsp", "-MD", "-MF", "h.d", "-c", "/s/h.cpp"},
       .file = "/s/h.cpp"},
  };
  mlc::confirm::CompileCommand cmd;
  std::string from;
  ASSERT_TRUE(mlc::confirm::command_for(db, "/s/b.cu", "/c/0.o", cmd, from, kNvcc));
  EXPECT_EQ(from, "/s/a.cu");
  EXPECT_EQ(cmd.argv, (std::vector<std::string>{kNvcc, "-forward-unknown-to-host-compiler", "-I/inc", "-I/with space",
                                                "-DFROM_RSP", "-Xcompiler", "-fPIC", "-x", "cu", "-c", "/s/b.cu", "-o",
                                                "/c/0.o"}));
  ASSERT_TRUE(mlc::confirm::command_for(db, "/s/h.cpp", "/c/1.o", cmd, from));
  EXPECT_EQ(cmd.argv, (std::vector<std::string>{"/usr/bin/c++", "-DHOST_RSP", "-o", "/c/1.o", "-c", "/s/h.cpp"}));
  fs::remove_all(root);
}

// musa-stubgen's "after this patch" counts as resolved only what compiled proof
// shows. The forgotten source defines the symbol in its text but cannot be compiled here (a header
// only the real build generates): it is expected by its text, said apart, never "1 of 1 still
// unresolved"; and its failed compile (met by the closure and by the proof alike) is said once, with
// the compiler's first error line.
TEST(AfterPatch, AnUncompilableAddedSourceIsExpectedByItsTextAndItsFailureSaidOnce) {
  std::string root = mlc::test::scratch_dir("after_patch_text");
  std::string src = root + "/myops", build = root + "/build";
  fs::create_directories(src + "/kernels");
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(myops CXX)\nadd_library(myops SHARED ops.cpp)\n");
  write_file(src + "/kernels/scale.h", "#pragma once\nnamespace myops { float scale(float x, float by); }\n");
  write_file(src + "/ops.cpp",
             "#include \"kernels/scale.h\"\nfloat twice(float v) { return myops::scale(v, 2.0f); }\n");
  write_file(src + "/kernels/scale_kernel.cpp",
             "#include \"scale.h\"\n#include \"generated_config.h\"\nnamespace myops {\n"
             "float scale(float x, float by) { return x * by; }\n}\n");
  std::string log;
  ASSERT_EQ(sh("cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -S " + quote(src) + " -B " + quote(build) +
                   " >/dev/null && cmake --build " + quote(build),
               &log),
            0)
      << log;
  std::string out;
  EXPECT_EQ(sh(std::string(MLC_STUBGEN_BIN) + " --build-dir " + quote(build) + " --cache-dir " +
                   quote(root + "/cache") + " --cuda-home '' --dry-run " + quote(build + "/libmyops.so"),
               &out),
            0)
      << out;
  EXPECT_NE(
      out.find("musa-stubgen: after this patch: 0 of 1 still unresolved (1 resolved by the sources' text alone, not "
               "compiled here: known only after the rebuild)\n"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("1 of 1 still unresolved"), std::string::npos) << out;
  const std::string failed =
      "musa-stubgen: warning: --confirm: compiling " + src + "/kernels/scale_kernel.cpp failed: " + src +
      "/kernels/scale_kernel.cpp:2:10: fatal error: generated_config.h: No such file or directory\n";
  EXPECT_EQ(count_of(out, failed), 1u) << out;
  EXPECT_EQ(count_of(out, "--confirm: compiling "), 1u) << out;
  // The patch is the one the text asks for: the forgotten file into myops's list.
  EXPECT_NE(out.find("\n+add_library(myops SHARED kernels/scale_kernel.cpp ops.cpp)\n"), std::string::npos) << out;
  fs::remove_all(root);
}

// A symbol whose entry does not reach the build (a second --apply's refusal) or that a stub defines is
// counted without compiling its source: only the sources the patch gives back are compiled.
TEST(AfterPatch, OnlyTheSourcesThePatchGivesBackAreCompiled) {
  mlc::Report report;
  mlc::LibraryReport lib;
  for (const char* name : {"_Z1av", "_Z1bv", "_Z1cv"}) {
    mlc::UnresolvedSymbol u;
    u.symbol = name;
    mlc::test::classify(u, mlc::Classification::MissingSource);
    u.origin.emplace();
    u.origin->file = std::string("/nonexistent/") + name + ".cpp";
    u.fix.emplace();
    u.fix->kind = mlc::FixKind::AddSource;
    lib.unresolved.push_back(u);
  }
  report.libraries.push_back(lib);
  std::vector<mlc::Warning> warnings;
  auto a = mlc::confirm::after_patch(report, {"_Z1cv"}, {"_Z1bv"}, mlc::confirm::ConfirmOptions{}, warnings);
  EXPECT_EQ(a.stats.files, 1u);  // a's source alone
  EXPECT_EQ(a.total, 3u);
  EXPECT_EQ(a.still, 1u);    // b: its entry does not reach the build
  EXPECT_EQ(a.by_text, 1u);  // a: not compiled here (no build), expected by its text
}

// torch_musa's FAQ 8.3 loop from the user's first command, `musa-linkcheck --build-dir build
// build/libmyops.so` and nothing else: a project configured as users configure it
// (no compile database, no File API query) whose scale_kernel.cpp is missing from its target's source
// list. The build's own sources are searched, the forgotten file is the origin and the target's
// add_library() the list; musa-stubgen --apply writes the entry, and the rebuilt library resolves.
TEST(BuildDirAlone, FaqCaseIsTracedToTheForgottenSourcePatchedAndRebuilt) {
  std::string root = mlc::test::scratch_dir("build_dir_alone");
  std::string src = root + "/myops", build = root + "/build";
  fs::create_directories(src + "/kernels");
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(myops CXX)\n"
             "add_library(other SHARED kernels/other.cpp)\n"
             "add_library(myops SHARED ops.cpp)\n");
  write_file(src + "/kernels/scale.h", "#pragma once\nnamespace myops { float scale(float x, float by); }\n");
  write_file(src + "/ops.cpp",
             "#include \"kernels/scale.h\"\nfloat twice(float v) { return myops::scale(v, 2.0f); }\n");
  write_file(src + "/kernels/scale_kernel.cpp",
             "#include \"scale.h\"\nnamespace myops {\nfloat scale(float x, float by) { return x * by; }\n}\n");
  write_file(src + "/kernels/other.cpp", "int other() { return 1; }\n");
  std::string log;
  ASSERT_EQ(configure_and_build(src, build, &log), 0) << "cannot build the fixture project: " << log;
  ASSERT_FALSE(fs::exists(build + "/compile_commands.json"));
  const std::string lib = build + "/libmyops.so";
  const std::string args =
      " --build-dir " + quote(build) + " --cache-dir " + quote(root + "/cache") + " --cuda-home '' ";

  std::string out;
  ASSERT_EQ(
      sh(std::string(MLC_LINKCHECK_BIN) + args + "--format json -o " + quote(root + "/report.json") + " " + quote(lib),
         &out),
      1)
      << out;
  auto doc = nlohmann::json::parse(read_file(root + "/report.json"));
  const auto& us = doc["libraries"][0]["unresolved"];
  ASSERT_EQ(us.size(), 1u) << us.dump();
  EXPECT_EQ(us[0]["demangled"], "myops::scale(float, float)");
  EXPECT_EQ(us[0]["classification"], "missing-source") << us[0].dump();
  EXPECT_EQ(us[0]["origin"]["file"], src + "/kernels/scale_kernel.cpp");
  EXPECT_EQ(us[0]["origin"]["line"], 3);
  EXPECT_EQ(us[0]["fix"]["cmake_file"], src + "/CMakeLists.txt") << us[0]["fix"].dump();

  // The fix, applied by musa-stubgen, lands in myops's add_library(), not other's; the build builds again.
  ASSERT_EQ(sh(std::string(MLC_STUBGEN_BIN) + args + "--apply --out-cpp " + quote(root + "/stubs.cpp") +
                   " --out-header " + quote(root + "/stubs.h") + " " + quote(lib),
               &out),
            0)
      << out;
  std::string lists = read_file(src + "/CMakeLists.txt");
  EXPECT_NE(lists.find("add_library(other SHARED kernels/other.cpp)\n"), std::string::npos) << lists;
  EXPECT_NE(lists.find("scale_kernel.cpp"), lists.find("add_library(myops")) << lists;
  EXPECT_GT(lists.find("scale_kernel.cpp"), lists.find("add_library(myops")) << lists;
  ASSERT_EQ(sh("cmake --build " + quote(build), &log), 0) << lists << log;
  EXPECT_EQ(sh(std::string(MLC_LINKCHECK_BIN) + args + "-q " + quote(lib), &out), 0) << out;
  EXPECT_EQ(out, "");
  fs::remove_all(root);
}

// Names no text spells, as pcre2 writes them: internal functions through
// PRIV(name) -> _tok_name_8, the public API renamed by `#define tok_api TOK_SUFFIX(tok_api_)`. The
// library's target is tok_shared, its file libtok.so by OUTPUT_NAME, and an executable is named tok.
// With `--build-dir` alone the target comes from the generator's files (no File API query), and the
// compiler tries the sources beside the target's that the build leaves out: the two forgotten files are
// missing-source, one --apply puts them into TOK_SOURCES and the rebuild resolves. A second --apply
// before the rebuild says the library predates the entries; one after a rebuild that still lacks the
// symbols (simulated: the library touched, not rebuilt) refuses, exits 1 and counts them as still
// unresolved instead of claiming success.
TEST(BuildDirAlone, PastedNamesAreCompiledForPatchedOnceAndASecondApplyTellsTheTruth) {
  std::string root = mlc::test::scratch_dir("build_dir_alone_pasted");
  std::string src = root + "/tok", build = root + "/build";
  fs::create_directories(src + "/src");
  write_file(src + "/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(tok C)\n"
             "set(TOK_SOURCES\n  src/use.c\n)\n"
             "add_library(tok_shared SHARED ${TOK_SOURCES})\n"
             "set_target_properties(tok_shared PROPERTIES OUTPUT_NAME tok)\n"
             "add_executable(tok src/main.c)\n");
  write_file(src + "/src/internal.h",
             "#define PRIV(name) _tok_##name##_8\nint PRIV(helper)(int);\n"
             "#define TOK_GLUE(a, b) a##b\n#define TOK_SUFFIX(a) TOK_GLUE(a, 8)\n#define tok_api TOK_SUFFIX(tok_api_)\n"
             "int tok_api(int);\n");
  write_file(src + "/src/use.c", "#include \"internal.h\"\nint use(int x) { return tok_api(x) + PRIV(helper)(x); }\n");
  write_file(src + "/src/helper.c", "#include \"internal.h\"\nint PRIV(helper)(int x) { return x + 1; }\n");
  write_file(src + "/src/api.c", "#include \"internal.h\"\n\nint tok_api(int x) { return 2 * x; }\n");
  write_file(src + "/src/printint.c", "#error This file must be included from use.c\n");  // as pcre2_printint.c
  write_file(src + "/src/main.c", "int main(void) { return 0; }\n");
  std::string log;
  ASSERT_EQ(sh("cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -S " + quote(src) + " -B " + quote(build) +
                   " >/dev/null && cmake --build " + quote(build),
               &log),
            0)
      << "cannot build the fixture project: " << log;
  ASSERT_FALSE(fs::exists(build + "/.cmake/api/v1/reply"));
  const std::string lib = build + "/libtok.so";
  const std::string args =
      " --build-dir " + quote(build) + " --cache-dir " + quote(root + "/cache") + " --cuda-home '' ";

  std::string out;
  ASSERT_EQ(
      sh(std::string(MLC_LINKCHECK_BIN) + args + "--format json -o " + quote(root + "/report.json") + " " + quote(lib),
         &out),
      1)
      << out;
  auto doc = nlohmann::json::parse(read_file(root + "/report.json"));
  std::map<std::string, nlohmann::json> by_symbol;
  for (const auto& u : doc["libraries"][0]["unresolved"]) by_symbol[u["symbol"]] = u;
  ASSERT_EQ(by_symbol.size(), 2u) << doc.dump(1);
  for (const auto& [symbol, file] :
       {std::pair{"_tok_helper_8", "/src/helper.c"}, std::pair{"tok_api_8", "/src/api.c"}}) {
    const auto& u = by_symbol[symbol];
    EXPECT_EQ(u["classification"], "missing-source") << u.dump(1);
    EXPECT_EQ(u["origin"]["file"], src + file) << u.dump(1);
    EXPECT_EQ(u["fix"]["cmake_file"], src + "/CMakeLists.txt") << u.dump(1);
    EXPECT_EQ(u["fix"]["list"], "TOK_SOURCES") << u.dump(1);
  }

  const std::string stub_args = args + "--apply --out-cpp " + quote(root + "/stubs.cpp") + " --out-header " +
                                quote(root + "/stubs.h") + " " + quote(lib);
  ASSERT_EQ(sh(std::string(MLC_STUBGEN_BIN) + stub_args, &out), 0) << out;
  EXPECT_NE(out.find("musa-stubgen: after this patch: 0 of 2 still unresolved\n"), std::string::npos) << out;
  const std::string patched = read_file(src + "/CMakeLists.txt");
  EXPECT_NE(patched.find("set(TOK_SOURCES\n  src/api.c\n  src/helper.c\n  src/use.c\n)\n"), std::string::npos)
      << patched;

  // A second --apply before the rebuild: nothing added, and the user is told to rebuild. The compiler
  // pass compiles the sources the configure now compiles and finds the pasted names there (issue 48).
  ASSERT_EQ(sh(std::string(MLC_STUBGEN_BIN) + stub_args, &out), 0) << out;
  EXPECT_NE(out.find("musa-stubgen: 2 symbols (_tok_helper_8 and more) defined in sources the build compiles since " +
                     lib + " was built: rebuild it first (cmake --build), then run again\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("0 files changed, 0 symbols refused"), std::string::npos) << out;
  EXPECT_EQ(read_file(src + "/CMakeLists.txt"), patched);

  // A library newer than the CMake file that still lacks the symbols: the entries do not reach it.
  const auto built_at = fs::last_write_time(lib);
  fs::last_write_time(lib, fs::last_write_time(src + "/CMakeLists.txt") + std::chrono::seconds(5));
  EXPECT_EQ(sh(std::string(MLC_STUBGEN_BIN) + stub_args, &out), 1) << out;
  EXPECT_NE(out.find("musa-stubgen: after this patch: 2 of 2 still unresolved\n"), std::string::npos) << out;
  EXPECT_NE(out.find("musa-stubgen: cannot fix tok_api_8: src/api.c is already in TOK_SOURCES (" + src +
                     "/CMakeLists.txt), yet " + lib + ", built after that file, does not compile it"),
            std::string::npos)
      << out;
  EXPECT_EQ(read_file(src + "/CMakeLists.txt"), patched);

  // The rebuild takes the entries in: nothing is left.
  fs::last_write_time(lib, built_at);
  ASSERT_EQ(sh("cmake --build " + quote(build), &log), 0) << log;
  EXPECT_EQ(sh(std::string(MLC_LINKCHECK_BIN) + args + "-q " + quote(lib), &out), 0) << out;
  EXPECT_EQ(out, "");
  fs::remove_all(root);
}

// The same loop in CUDA, as the issue met it (CMake's CXX and CUDA languages, nvcc 13): the target
// compiles ops.cpp and add_kernel.cu and forgets scale_kernel.cu. `musa-linkcheck --build-dir build`
// alone names the .cu; musa-stubgen proves its patch by compiling the .cu with the build's nvcc command
// (no confirm failure, no false "still unresolved"), --apply puts it back, and nvcc's rebuild links a
// library in which the symbol resolves. `generator` is CMake's; `findcuda` builds the target with
// FindCUDA's cuda_add_library() instead of the CUDA language.
void cuda_faq_loop(const std::string& name, const std::string& generator, bool findcuda) {
  std::string root = mlc::test::scratch_dir(name);
  std::string src = root + "/myops", build = root + "/build";
  write_cuda_project(src, true);
  std::string add = findcuda ? "cuda_add_library" : "add_library";
  if (findcuda)
    write_file(src + "/CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.16)\nproject(myops CXX)\nfind_package(CUDA REQUIRED)\n"
               "set(CUDA_NVCC_FLAGS -arch=sm_75)\ninclude_directories(${CMAKE_CURRENT_SOURCE_DIR}/kernels)\n"
               "cuda_add_library(myops SHARED ops.cpp kernels/add_kernel.cu)\n");
  std::string log;
  ASSERT_EQ(sh("cmake -G " + quote(generator) + " -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -S " + quote(src) + " -B " +
                   quote(build) + " >/dev/null && cmake --build " + quote(build),
               &log),
            0)
      << "cannot build the fixture project: " << log;
  const std::string lib = build + "/libmyops.so";
  const std::string args =
      " --build-dir " + quote(build) + " --cache-dir " + quote(root + "/cache") + " --cuda-home '' ";

  std::string out;
  ASSERT_EQ(
      sh(std::string(MLC_LINKCHECK_BIN) + args + "--format json -o " + quote(root + "/report.json") + " " + quote(lib),
         &out),
      1)
      << out;
  auto doc = nlohmann::json::parse(read_file(root + "/report.json"));
  const auto& us = doc["libraries"][0]["unresolved"];
  ASSERT_EQ(us.size(), 1u) << us.dump();
  EXPECT_EQ(us[0]["symbol"], kScaleOnGpu);
  EXPECT_EQ(us[0]["classification"], "missing-source") << us[0].dump();
  EXPECT_EQ(us[0]["origin"]["file"], src + "/kernels/scale_kernel.cu");
  EXPECT_EQ(us[0]["origin"]["line"], 7);
  EXPECT_EQ(us[0]["fix"]["cmake_file"], src + "/CMakeLists.txt") << us[0]["fix"].dump();

  ASSERT_EQ(sh(std::string(MLC_STUBGEN_BIN) + args + "--apply --out-cpp " + quote(root + "/stubs.cpp") +
                   " --out-header " + quote(root + "/stubs.h") + " " + quote(lib),
               &out),
            0)
      << out;
  EXPECT_NE(out.find("musa-stubgen: after this patch: 0 of 1 still unresolved\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("--confirm: compiling "), std::string::npos) << out;
  std::string lists = read_file(src + "/CMakeLists.txt");
  EXPECT_NE(lists.find(add + "(myops SHARED ops.cpp kernels/add_kernel.cu kernels/scale_kernel.cu)"), std::string::npos)
      << lists;
  ASSERT_EQ(sh("cmake --build " + quote(build), &log), 0) << lists << log;
  EXPECT_NE(log.find("scale_kernel.cu.o"), std::string::npos) << log;  // nvcc compiled it
  EXPECT_EQ(sh(std::string(MLC_LINKCHECK_BIN) + args + "-q " + quote(lib), &out), 0) << out;
  EXPECT_EQ(out, "");
  fs::remove_all(root);
}

TEST_F(BuildDirAloneCuda, CudaFaqCaseIsTracedCompiledByNvccPatchedAndRebuilt) {
  cuda_faq_loop("build_dir_alone_cuda", "Unix Makefiles", false);
}

// Ninja's CUDA rules (depfiles, no response file for the includes).
TEST_F(BuildDirAloneCuda, CudaFaqCaseUnderNinjaIsTracedCompiledByNvccPatchedAndRebuilt) {
  cuda_faq_loop("build_dir_alone_cuda_ninja", "Ninja", false);
}

// FindCUDA's cuda_add_library(): the patch goes into that call, the proof borrows its generated nvcc script.
TEST_F(BuildDirAloneCuda, CudaFaqCaseWithFindCudaIsTracedCompiledByNvccPatchedAndRebuilt) {
  cuda_faq_loop("build_dir_alone_findcuda", "Unix Makefiles", true);
}

}  // namespace

// compile_commands.json is parsed once per run and kept by the identity of its file: a build that
// configures again (another file at the same path) is read again by the next pass of the same process,
// and a garbled database is invalid, not a crash or a stale answer.
TEST(CompileDatabase, a_database_written_again_is_read_again) {
  std::string build = mlc::test::scratch_dir("compile_db_again");
  auto entry = [&](const std::string& file) {
    return R"({"directory": ")" + build + R"(", "command": "c++ -DX=1 -c )" + file + R"( -o x.o", "file": ")" + file +
           R"("})";
  };
  write_file(build + "/compile_commands.json", "[" + entry("a.cpp") + "]");
  auto first = mlc::confirm::read_compile_commands(build);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].file, build + "/a.cpp");
  EXPECT_EQ(first[0].argv, (std::vector<std::string>{"c++", "-DX=1", "-c", "a.cpp", "-o", "x.o"}));
  // Written as CMake writes it: a new file renamed over the old one.
  write_file(build + "/compile_commands.json.new", "[" + entry("a.cpp") + "," + entry("b.cpp") + "]");
  fs::rename(build + "/compile_commands.json.new", build + "/compile_commands.json");
  auto second = mlc::build::read_compile_database(build);
  ASSERT_EQ(second->commands.size(), 2u);
  EXPECT_EQ(second->commands[1].file, build + "/b.cpp");
  EXPECT_EQ(second->files.back(), std::make_pair(build, std::string("b.cpp")));
  write_file(build + "/compile_commands.json.new", "[{\"file\": ");
  fs::rename(build + "/compile_commands.json.new", build + "/compile_commands.json");
  auto garbled = mlc::build::read_compile_database(build);
  EXPECT_TRUE(garbled->present);
  EXPECT_FALSE(garbled->valid);
  EXPECT_TRUE(garbled->commands.empty());
  fs::remove_all(build);
}
