// End to end on a real SDK: a kernel library written as CUDA (fixtures/hip_kernels) is
// ported by PyTorch 1.13.1's own hipify, built by its CMake with find_package(hip) and Debian's
// hipcc, checked against ROCm HIP 5.2.3 as installed, stubbed by musa-stubgen --backend hip, and
// rebuilt until nothing is unresolved. Truth comes from ldd -r, objdump and grep on the real files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "pytorch_sources.h"
#include "test_support.h"

namespace mlc::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kLinkcheck = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kHipHeader = "/usr/include/hip/hip_runtime_api.h";

// The undefined symbols ldd -r reports (the oracle), sorted.
std::vector<std::string> ldd_undefined(const std::string& lib) {
  auto r = run("ldd -r " + quote(lib) + " 2>&1 | sed -n 's/^undefined symbol: \\([^\t ]*\\).*/\\1/p' | sort");
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// "file:line" of the first line of `file` matching the basic regex `pattern` (grep -n).
int grep_line(const std::string& file, const std::string& pattern) {
  auto r = run("grep -n " + quote(pattern) + " " + quote(file) + " | head -n 1 | cut -d: -f1");
  return r.out.empty() ? -1 : std::stoi(r.out);
}

const json* find_symbol(const json& report, const std::string& name) {
  for (const auto& u : report["libraries"][0]["unresolved"])
    if (u["symbol"] == name) return &u;
  return nullptr;
}

TEST(HipEndToEnd, ported_library_is_diagnosed_stubbed_and_rebuilt_until_nothing_is_unresolved) {
  for (const char* need : {"/usr/bin/hipcc", "/usr/include/hip/hip_runtime_api.h",
                           "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "/usr/lib/x86_64-linux-gnu/cmake/hip"})
    if (!fs::exists(need))
      MLC_SKIP() << need << " is missing: install hipcc libamdhip64-dev (bash tools/dev.sh test does)";
  std::string why;
  const std::string pytorch = pytorch_sources(why);
  if (pytorch.empty()) MLC_SKIP() << why;
  const std::string map = hipify_map_path(pytorch);

  // 1. Port: PyTorch's real hipify, run as a user runs it (a subprocess of the test, never of the tool).
  const std::string dir = scratch_dir("hip_e2e");
  // hipcc leaves its offload temporaries (norm-XXXXXX, src-XXXXXX, ...) in TMPDIR: it gets one inside
  // this scratch folder, removed with it (the suite's scratch check found them left in the shared root).
  std::filesystem::create_directories(dir + "/tmp");
  setenv("TMPDIR", (dir + "/tmp").c_str(), 1);
  const std::string cuda = dir + "/cuda", hip = dir + "/hip", build = hip + "/build";
  fs::copy(std::string(MLC_SOURCE_DIR) + "/fixtures/hip_kernels", cuda, fs::copy_options::recursive);
  auto port = run("python3 -c " +
                  quote("import sys; sys.path.insert(0, sys.argv[1]); from hipify import hipify_python as h; "
                        "h.hipify(project_directory=sys.argv[2], output_directory=sys.argv[3], includes=['*'], "
                        "header_include_dirs=['csrc'], is_pytorch_extension=True, show_progress=False)") +
                  " " + quote(pytorch + "/torch/utils") + " " + quote(cuda) + " " + quote(hip));
  ASSERT_EQ(port.status, 0) << port.err;
  ASSERT_TRUE(fs::exists(hip + "/csrc/hip/norm.hip"));
  EXPECT_NE(read_file(hip + "/csrc/hip/legacy.hip").find("hipLaunch(kernel)"), std::string::npos);

  // 2. Build with the real SDK: find_package(hip), hipcc --offload-arch=gfx906 (no GPU needed).
  auto configure = run("cmake -S " + quote(hip) + " -B " + quote(build) + " -DCMAKE_CXX_COMPILER=hipcc");
  ASSERT_EQ(configure.status, 0) << configure.out << configure.err;
  auto make = run("cmake --build " + quote(build));
  ASSERT_EQ(make.status, 0) << make.out << make.err;
  const std::string lib = build + "/libhip_kernels.so";
  // Oracle: what the real loader leaves unresolved; and the references carry HIP's version node.
  EXPECT_EQ(ldd_undefined(lib), (std::vector<std::string>{"hipLaunch", "hipLaunchHostFunc", "hk_norm"}));
  auto versions = run("objdump -T " + quote(lib) + " | grep -c '(hip_4.2) *hipGetLastError$'");
  EXPECT_EQ(versions.out, "1\n") << "hipGetLastError is referenced as hipGetLastError@hip_4.2";

  // 3. Diagnose: HIP's defaults find Debian's layout without --sdk-home.
  const std::string context = " --backend hip --mapping " + quote(map) + " --build-dir " + quote(build) +
                              " --porting-dir " + quote(hip) + " --cuda-home '' --cache-dir " + quote(dir + "/cache");
  auto check = run(kLinkcheck + " --format json" + context + " " + quote(lib));
  ASSERT_EQ(check.status, 1) << check.err;
  json report = json::parse(check.out);
  const json& l = report["libraries"][0];
  EXPECT_EQ(l["missing_versions"], json::array()) << "every hip_4.2 reference binds in libamdhip64.so.5";
  bool amdhip = false;
  for (const auto& n : l["needed"])
    if (n["name"] == "libamdhip64.so.5" && n["path"].is_string())  // /lib is /usr/lib on a merged-/usr system
      amdhip = fs::equivalent(n["path"].get<std::string>(), "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5");
  EXPECT_TRUE(amdhip) << l["needed"].dump();
  ASSERT_EQ(l["unresolved"].size(), 3u) << check.out;

  const json* host = find_symbol(report, "hipLaunchHostFunc");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ((*host)["classification"], "sdk-declared-only");
  EXPECT_EQ((*host)["origin"]["file"], kHipHeader);
  EXPECT_EQ((*host)["origin"]["line"], grep_line(kHipHeader, "^hipError_t hipLaunchHostFunc("));
  EXPECT_EQ((*host)["counterpart"]["name"], "cudaLaunchHostFunc");  // by the naming rule: the map has no entry
  EXPECT_EQ(grep_line(map, "\"cudaLaunchHostFunc\""), -1);

  const json* launch = find_symbol(report, "hipLaunch");
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ((*launch)["classification"], "cuda-only");
  EXPECT_EQ((*launch)["counterpart"]["name"], "cudaLaunch");
  int mark = grep_line(map, "(\"cudaLaunch\", (\"hipLaunch\", .*HIP_UNSUPPORTED)");
  ASSERT_GT(mark, 0);
  EXPECT_NE((*launch)["reason"].get<std::string>().find(map + ":" + std::to_string(mark) +
                                                        ") marks cudaLaunch HIP_UNSUPPORTED"),
            std::string::npos)
      << (*launch)["reason"];
  EXPECT_EQ((*launch)["origin"]["file"], hip + "/csrc/hip/legacy.hip");

  const json* norm = find_symbol(report, "hk_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ((*norm)["classification"], "missing-source");
  EXPECT_EQ((*norm)["origin"]["file"], hip + "/csrc/hip/norm.hip");
  EXPECT_EQ((*norm)["fix"]["list"], "HIP_SRCS");

  // 4. Fix: stubs hipcc compiles, the forgotten source added; one --apply, one rebuild.
  const std::string out = " --out-cpp " + quote(hip + "/csrc/hip/unimplemented_functions.cpp") + " --out-header " +
                          quote(hip + "/csrc/hip/unimplemented_functions.h");
  auto stub = run(kStubgen + context + out + " --apply " + quote(lib));
  ASSERT_EQ(stub.status, 0) << stub.out << stub.err;
  std::string stubs = read_file(hip + "/csrc/hip/unimplemented_functions.cpp");
  EXPECT_NE(stubs.find("hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* userData)"),
            std::string::npos)
      << stubs;
  EXPECT_NE(stubs.find("return hipErrorNotSupported;"), std::string::npos);
  // HIP's stubs name HIP's runtime, not MUSA's: hip_stub_enter() from hip_stubs.h, bundled by
  // HIP_STUBS_IMPLEMENTATION, written beside them (hipcc compiles it in the rebuild below).
  EXPECT_NE(stubs.find("#define HIP_STUBS_IMPLEMENTATION\n#include \"hip_stubs.h\"\n"), std::string::npos) << stubs;
  EXPECT_NE(stubs.find("hip_stub_enter(\"hipLaunchHostFunc\""), std::string::npos) << stubs;
  EXPECT_EQ(stubs.find("musa_stub"), std::string::npos) << stubs;
  std::string runtime = read_file(hip + "/csrc/hip/hip_stubs.h");
  EXPECT_NE(runtime.find("int hip_stub_enter(const char* demangled, const char* mangled);"), std::string::npos)
      << runtime;
  EXPECT_NE(runtime.find("getenv(\"HIP_STUBS\")"), std::string::npos);
  EXPECT_EQ(runtime.find("musa_stub"), std::string::npos);
  EXPECT_FALSE(fs::exists(hip + "/csrc/hip/musa_stubs.h"));
  EXPECT_NE(read_file(hip + "/CMakeLists.txt").find("${CMAKE_CURRENT_SOURCE_DIR}/csrc/hip/norm.hip"),
            std::string::npos);
  auto rebuild = run("cmake --build " + quote(build));
  ASSERT_EQ(rebuild.status, 0) << rebuild.out << rebuild.err;
  EXPECT_EQ(ldd_undefined(lib), std::vector<std::string>{});
  auto again = run(kLinkcheck + context + " " + quote(lib));
  EXPECT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library"),
            std::string::npos)
      << again.out;
  // Running it twice changes nothing (docs/contract.md): a second --apply leaves every byte as it was.
  std::map<std::string, std::string> before;
  for (const auto& e : fs::recursive_directory_iterator(hip))
    if (e.is_regular_file() && e.path().string().rfind(build + "/", 0) != 0)
      before[e.path().string()] = read_file(e.path().string());
  auto twice = run(kStubgen + context + out + " --apply " + quote(lib));
  EXPECT_EQ(twice.status, 0) << twice.out << twice.err;
  std::map<std::string, std::string> after;
  for (const auto& e : fs::recursive_directory_iterator(hip))
    if (e.is_regular_file() && e.path().string().rfind(build + "/", 0) != 0)
      after[e.path().string()] = read_file(e.path().string());
  EXPECT_EQ(after.size(), before.size());
  for (const auto& [path, bytes] : before) EXPECT_EQ(after[path], bytes) << path << " changed on the second --apply";
}

}  // namespace
}  // namespace mlc::test
