// The toolkit as a project uses it: installed into a prefix and found with find_package(), or added
// with add_subdirectory(); a separate example project (fixtures/cmake_example) gates its build with
// musa_linkcheck(), passes its first build with musa_stubgen() (one extra link, no extra compile) or
// with a baseline, and its test program's stub trace lists exactly the stubs it called. And the .deb that CPack builds
// installs with dpkg -i.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "build/cmake/build_info.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kSource = MLC_SOURCE_DIR;
const std::string kBinary = MLC_BINARY_DIR;

const std::string& prefix() {
  static const std::string p = [] {
    std::string dir = test::scratch_dir("prefix");
    auto r = run("cmake --install " + quote(kBinary) + " --prefix " + quote(dir));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    return dir;
  }();
  return p;
}

std::string copy_example(const std::string& name) {
  std::string dir = test::scratch_dir(name);
  fs::copy(kSource + "/fixtures/cmake_example", dir + "/src", fs::copy_options::recursive);
  return dir;
}

test::CommandResult configure(const std::string& dir, const std::string& args) {
  return run("cmake -S " + quote(dir + "/src") + " -B " + quote(dir + "/build") + " " + args + " 2>&1");
}
test::CommandResult build(const std::string& dir) {
  return run("cmake --build " + quote(dir + "/build") + " -j 2 2>&1");
}

// What a Makefile build log says it did: "compile <source file>" and "link <output>" lines, in order.
std::vector<std::string> build_steps(const std::string& log) {
  std::vector<std::string> steps;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string::npos) nl = log.size();
    std::string line = log.substr(pos, nl - pos);
    pos = nl + 1;
    size_t at = line.find("] Building ");
    if (at != std::string::npos && line.find(" object ") != std::string::npos) {
      std::string obj = line.substr(line.rfind('/') + 1);  // kernels.cpp.o
      steps.push_back("compile " + obj.substr(0, obj.size() - 2));
    } else if ((at = line.find("] Linking ")) != std::string::npos) {
      steps.push_back("link " + line.substr(line.rfind(' ') + 1));
    }
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// Without musa_stubgen() the gate fails the build with the diagnosis in the log.
void gate_fails(const std::string& dir, const std::string& how) {
  ASSERT_EQ(configure(dir, how).status, 0);
  auto first = build(dir);
  EXPECT_NE(first.status, 0) << first.out;
  EXPECT_NE(first.out.find("error: undefined symbol: musaMallocAsync\n"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("error: undefined symbol: musaMemPoolTrimTo\n"), std::string::npos);
  EXPECT_NE(first.out.find("2 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n"),
            std::string::npos);
}

// With musa_stubgen() the FIRST build of a fresh tree passes; the test program reaches exactly one
// of the two stubs; a rebuild changes nothing. Returns the first build's log.
std::string stubs_in_one_build(const std::string& dir, const std::string& how) {
  auto c = configure(dir, how + " -DEXAMPLE_USE_STUBGEN=ON");
  EXPECT_EQ(c.status, 0) << c.out;
  auto first = build(dir);
  EXPECT_EQ(first.status, 0) << first.out;
  EXPECT_NE(first.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n"),
            std::string::npos)
      << first.out;
  std::string cpp = test::read_file(dir + "/src/stubs/unimplemented_functions.cpp");
  EXPECT_NE(cpp.find("extern \"C\" musaError_t musaMemPoolTrimTo(musaMemPool_t memPool, size_t minBytesToKeep) {"),
            std::string::npos)
      << cpp;

  std::string trace = dir + "/stub-trace.txt";
  auto ran = run("MUSA_STUBS_TRACE=" + quote(trace) + " " + quote(dir + "/build/kernels_test"));
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "caught: musaMallocAsync is not supported now!\n");
  EXPECT_EQ(test::read_file(trace), "musaMallocAsync\tmusaMallocAsync\n");

  // Nothing changes on a rebuild: the stubs are stable, nothing compiles or links again.
  auto again = build(dir);
  EXPECT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(build_steps(again.out), std::vector<std::string>{}) << again.out;
  EXPECT_EQ(test::read_file(dir + "/src/stubs/unimplemented_functions.cpp"), cpp);
  return first.out;
}

TEST(Package, installed_package_gates_the_example_build_and_stubs_make_it_pass) {
  std::string dir = copy_example("example-installed");
  gate_fails(dir, "-DCMAKE_PREFIX_PATH=" + quote(prefix()));
  std::string stubbed = copy_example("example-installed-stubgen");
  std::string log = stubs_in_one_build(stubbed, "-DCMAKE_PREFIX_PATH=" + quote(prefix()));

  // The cost, read from the build logs against the same project built without stubs (baselined):
  // every source compiled once, the stub file compiled once, and one extra link (the probe).
  std::string plain = copy_example("example-installed-plain");
  ASSERT_EQ(configure(plain, "-DCMAKE_PREFIX_PATH=" + quote(prefix()) +
                                 " -DEXAMPLE_BASELINE=" + quote(plain + "/src/baseline.txt"))
                .status,
            0);
  auto plain_build = build(plain);
  ASSERT_EQ(plain_build.status, 0) << plain_build.out;
  std::vector<std::string> want = build_steps(plain_build.out);
  EXPECT_EQ(want, (std::vector<std::string>{"compile kernels.cpp", "compile musart.c", "compile test.cpp",
                                            "link kernels_test", "link libkernels.so", "link libmusart.so"}));
  want.push_back("compile unimplemented_functions.cpp");
  want.push_back("link musa-linkcheck/probe/libkernels.so");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(build_steps(log), want) << log;

  // A new call to an SDK function that does not exist is stubbed within the same incremental build:
  // kernels.cpp recompiles, the probe relinks, the stub file recompiles, the library relinks.
  std::string header = stubbed + "/src/sdk/include/musa_runtime_api.h";
  std::string h = test::read_file(header);
  h.insert(h.find("musaError_t musaMallocAsync"), "musaError_t musaFreeAsync(void* devPtr, musaStream_t hStream);\n");
  test::write_file(header, h);
  test::write_file(stubbed + "/src/kernels.cpp",
                   test::read_file(stubbed + "/src/kernels.cpp") +
                       "int kernels_free(void* p) { return musaFreeAsync(p, nullptr); }\n");
  auto grown = build(stubbed);
  EXPECT_EQ(grown.status, 0) << grown.out;
  EXPECT_NE(test::read_file(stubbed + "/src/stubs/unimplemented_functions.cpp")
                .find("extern \"C\" musaError_t musaFreeAsync(void* devPtr, musaStream_t hStream) {"),
            std::string::npos);
  auto steps = build_steps(grown.out);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), "compile unimplemented_functions.cpp"), 1) << grown.out;
  EXPECT_EQ(std::count(steps.begin(), steps.end(), "link musa-linkcheck/probe/libkernels.so"), 1) << grown.out;
  for (const char* f : {"/bin/musa-linkcheck", "/bin/musa-stubgen", "/include/musa_stubs.h", "/lib/libmusa_stubs.a",
                        "/lib/cmake/MusaLinkcheck/MusaLinkcheckConfig.cmake", "/share/man/man1/musa-linkcheck.1",
                        "/share/man/man1/musa-stubgen.1"}) {
    EXPECT_TRUE(fs::exists(prefix() + f)) << f;
  }
  for (const auto& d : {dir, stubbed, plain}) fs::remove_all(d);
}

TEST(Package, baseline_lets_the_example_build_pass_without_stubs) {
  std::string dir = copy_example("example-baseline");
  ASSERT_EQ(configure(dir, "-DCMAKE_PREFIX_PATH=" + quote(prefix()) +
                               " -DEXAMPLE_BASELINE=" + quote(dir + "/src/baseline.txt"))
                .status,
            0);
  auto b = build(dir);
  EXPECT_EQ(b.status, 0) << b.out;
  EXPECT_NE(b.out.find("baselined: undefined symbol: musaMallocAsync\n"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("(2 baselined)"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/src/stubs"));
}

// This tree's build type and the options that shape its compiles, as -D arguments: a project that adds the
// toolkit with them compiles what this tree compiled, and through ccache (MLC_OWN_CCACHE, the top
// CMakeLists.txt) takes this tree's objects instead of compiling the toolkit again (10 s instead of 100 s on
// 2 cores). Only for a Makefiles tree, as the example's: Make compiles in each target's directory, so a unit's
// path relative to it is the same in both trees; Ninja compiles from the top, where the toolkit's units sit one
// folder deeper, and the example then builds at its own default flags, cheaper than a missed RelWithDebInfo;
// so does a tree whose core compiled without ccache (MLC_OWN_LAUNCHER empty, CMake's own decision).
std::string this_trees_flags() {
  std::optional<InputError> error;
  auto cache = build::cmake::read_cmake_cache(kBinary + "/CMakeCache.txt", error);
  std::string args;
  if (error || cache["CMAKE_GENERATOR"] != "Unix Makefiles" || cache["MLC_OWN_LAUNCHER"].empty()) return args;
  for (const char* name : {"CMAKE_BUILD_TYPE", "MLC_WERROR", "MLC_FULL_DEBUG_INFO", "MLC_UNITY_BUILD", "MLC_OWN_CCACHE",
                           "MLC_CCACHE_DIR"}) {
    if (auto it = cache.find(name); it != cache.end()) args += " -D" + it->first + "=" + quote(it->second);
  }
  return args;
}

TEST(Package, add_subdirectory_from_the_source_tree_works_the_same) {
  std::string dir = copy_example("example-subdir");
  // The toolkit builds inside the example here, so one tree serves both (a fresh one would double a
  // long build): the gate fails, then the same tree with musa_stubgen() passes.
  std::string how = "-DMUSA_LINKCHECK_SOURCE_DIR=" + quote(kSource) + this_trees_flags();
  gate_fails(dir, how);
  stubs_in_one_build(dir, how);
  fs::remove_all(dir);
}

TEST(Package, deb_installs_with_dpkg_and_its_tools_run) {
  if (run("command -v dpkg && command -v cpack").status != 0) MLC_SKIP() << "dpkg or cpack missing";
  std::string dir = test::scratch_dir("deb");
  auto packed = run("cd " + quote(kBinary) + " && cpack -G DEB -B " + quote(dir));
  ASSERT_EQ(packed.status, 0) << packed.out << packed.err;
  std::string deb = dir + "/musa-linkcheck_0.1.0_amd64.deb";
  ASSERT_TRUE(fs::exists(deb));
  auto listing = run("dpkg-deb -c " + quote(deb));
  for (const char* f :
       {"./usr/bin/musa-linkcheck", "./usr/bin/musa-stubgen", "./usr/include/musa_stubs.h",
        "./usr/lib/cmake/MusaLinkcheck/MusaLinkcheckConfig.cmake", "./usr/share/man/man1/musa-linkcheck.1"}) {
    EXPECT_NE(listing.out.find(f), std::string::npos) << f;
  }
  // Against this system's package database: every dependency is satisfied (nothing is changed).
  auto dry = run("dpkg --dry-run -i " + quote(deb));
  EXPECT_EQ(dry.status, 0) << dry.out << dry.err;
  // A real dpkg -i into a private root, and the tools run from there.
  std::string root = dir + "/root";
  fs::create_directories(root + "/var/lib/dpkg/info");
  fs::create_directories(root + "/var/lib/dpkg/updates");
  test::write_file(root + "/var/lib/dpkg/status", "");
  auto installed = run("dpkg --root=" + quote(root) + " --force-depends -i " + quote(deb));
  ASSERT_EQ(installed.status, 0) << installed.out << installed.err;
  auto version = run(quote(root + "/usr/bin/musa-linkcheck") + " --version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.substr(0, version.out.find('\n')), "musa-linkcheck (MusaLinkcheck) 0.1.0");
  auto check = run(quote(root + "/usr/bin/musa-linkcheck") + " -q --cuda-home '' " +
                   quote(std::string(MLC_LOADER_FIXTURES) + "/weak/libweak_user.so"));
  EXPECT_EQ(check.status, 1);
  EXPECT_EQ(check.out, "error: loading libweak_user.so would fail: 1 cause\nerror: undefined symbol: strong_missing\n");
  auto help = run(quote(root + "/usr/bin/musa-stubgen") + " --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("Usage: musa-stubgen [OPTION]... FILE..."), std::string::npos);
}

}  // namespace
}  // namespace mlc
