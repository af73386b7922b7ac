// The import context is evidence: a symbol an extension's load leaves undefined is
// looked up in torch's own libraries (torch/lib of the torch --python finds, or of one installed
// beside the target) and in the target's package, for definitions and for ABI near misses, even when
// --as-needed dropped the library. Real material: Debian's python3-torch (libtorch1.13), extensions
// built here with g++; each verdict is checked against the real loader in a fresh /usr/bin/python3.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kPython = "/usr/bin/python3";
const std::string kQuiet = " --cuda-home '' --no-cache";
const std::string kC10 = "/usr/lib/x86_64-linux-gnu/libc10.so.1.13";
const std::string kTorchLib = "/usr/lib/python3/dist-packages/torch/lib";

bool debian_torch() { return fs::exists(kC10) && fs::exists(kTorchLib + "/libc10.so"); }

// A top-level extension module (no package, so nothing imports torch for it) that calls libc10:
// c10::Device::Device(std::string const&), or (`check`) c10::detail::torchCheckFail(..., std::string
// const&), which TORCH_CHECK's message path calls.
std::string build_module(const std::string& root, const std::string& name, const std::string& flags,
                         bool check = false) {
  std::string body =
      check ? "static int x; if (x) c10::detail::torchCheckFail(\"f\", \"file\", 1, std::string(\"m\")); return &x;"
            : "static c10::Device d(std::string(\"cpu\")); return &d;";
  test::write_file(root + "/" + name + ".cpp",
                   "#include <string>\n"
                   "namespace c10 { struct Device { explicit Device(const std::string& s); signed char t, i; };\n"
                   "namespace detail { [[noreturn]] void torchCheckFail(const char*, const char*, unsigned, const "
                   "std::string&); } }\n"
                   "extern \"C\" void* PyInit_" +
                       name + "() { " + body + " }\n");
  std::string module = root + "/" + name + ".cpython-311-x86_64-linux-gnu.so";
  auto cc = run("g++ -shared -fPIC -o " + quote(module) + " " + quote(root + "/" + name + ".cpp") + " " + flags);
  EXPECT_EQ(cc.status, 0) << cc.err;
  return module;
}

// The real loader in the process of `import torch` (its libraries loaded RTLD_LOCAL, as Python
// imports _C): the module dlopen'ed with RTLD_NOW, as its import would (the import then calls
// PyInit, which these fixtures do not make a real module's).
test::CommandResult real_import(const std::string& dir, const std::string& name) {
  return run(
      "cd " + quote(dir) + " && " + kPython + " -c " +
      quote("import torch, ctypes, os\nctypes.CDLL('./" + name + ".cpython-311-x86_64-linux-gnu.so', os.RTLD_NOW)\n"));
}

bool needs_c10(const std::string& module) {
  return run("readelf -d " + quote(module)).out.find("[libc10.so") != std::string::npos;
}

// The tests whose oracle imports Debian's torch: checked once for each.
class ImportEvidenceTorch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!debian_torch()) MLC_SKIP() << "Debian's python3-torch is not installed";
  }
};

TEST_F(ImportEvidenceTorch, an_extension_using_libc10_without_linking_it_is_unlinked_library_naming_torch_lib_libc10) {
  std::string root = test::scratch_dir("evidence-unlinked");
  std::string module = build_module(root, "_ext", "");
  ASSERT_FALSE(needs_c10(module));
  auto real = real_import(root, "_ext");
  ASSERT_NE(real.status, 0) << "the real import succeeds?";
  EXPECT_NE(real.err.find("undefined symbol: _ZN3c106DeviceC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"),
            std::string::npos)
      << real.err;

  auto r = run(kBin + kQuiet + " --python=" + kPython + " " + quote(module));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(">>> unlinked-library: defined in torch/lib/libc10.so (torch 1.13.0a0), which this module does "
                       "not link\n"),
            std::string::npos)
      << r.out;
  // No build tree: the fix says whose target it is, never the file name as one.
  EXPECT_NE(
      r.out.find(">>> fix: link libc10.so.1.13: target_link_libraries(<target> PRIVATE c10), <target> being the "
                 "CMake target that builds _ext.cpython-311-x86_64-linux-gnu.so (not known without --build-dir)\n"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("unknown"), std::string::npos) << r.out;

  // Linked, the import works and the tool says so: the verdict's fix is the real one.
  std::string linked = build_module(root, "_ext", "-Wl,--no-as-needed " + kC10);
  ASSERT_TRUE(needs_c10(linked));
  EXPECT_EQ(real_import(root, "_ext").status, 0);
  auto fixed = run(kBin + kQuiet + " --python=" + kPython + " " + quote(linked));
  EXPECT_EQ(fixed.status, 0) << fixed.out;
}

TEST_F(ImportEvidenceTorch, the_old_string_abi_with_as_needed_is_abi_mismatch_naming_libc10) {
  std::string root = test::scratch_dir("evidence-abi");
  // libc10 is on the link line, but it defines only the [abi:cxx11] constructor: --as-needed drops it.
  std::string module = build_module(root, "_old", "-D_GLIBCXX_USE_CXX11_ABI=0 -Wl,--as-needed " + kC10, true);
  ASSERT_FALSE(needs_c10(module)) << "--as-needed kept libc10";
  auto real = real_import(root, "_old");
  ASSERT_NE(real.status, 0) << "the real import succeeds?";
  EXPECT_NE(real.err.find("undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs"), std::string::npos)
      << real.err;

  auto r = run(kBin + kQuiet + " --python=" + kPython + " " + quote(module));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(
                ">>> abi-mismatch: " + kTorchLib +
                "/libc10.so defines c10::detail::torchCheckFail(char const*, char "
                "const*, unsigned int, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
                "const&) (cxx11-abi): the caller was built with -D_GLIBCXX_USE_CXX11_ABI=0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; this module does not link torch/lib/libc10.so (torch 1.13.0a0) (--as-needed drops a library "
                       "none of whose definitions the link used)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(">>> fix: rebuild the caller with -D_GLIBCXX_USE_CXX11_ABI=1"), std::string::npos) << r.out;

  // A constructor of c10's first-level class: its near miss is found too ("6Device" follows "3c10"
  // in the mangled name), and told once though the complete and base constructors both define it.
  std::string ctor = build_module(root, "_oldctor", "-D_GLIBCXX_USE_CXX11_ABI=0 -Wl,--as-needed " + kC10);
  ASSERT_FALSE(needs_c10(ctor));
  auto real_ctor = real_import(root, "_oldctor");
  ASSERT_NE(real_ctor.status, 0);
  EXPECT_NE(real_ctor.err.find("undefined symbol: _ZN3c106DeviceC1ERKSs"), std::string::npos) << real_ctor.err;
  auto rc = run(kBin + kQuiet + " --python=" + kPython + " " + quote(ctor));
  EXPECT_EQ(rc.status, 1) << rc.out;
  EXPECT_NE(
      rc.out.find(">>> abi-mismatch: " + kTorchLib +
                  "/libc10.so defines c10::Device::Device(std::__cxx11::basic_string<"
                  "char, std::char_traits<char>, std::allocator<char> > const&) (cxx11-abi): the caller was built with "
                  "-D_GLIBCXX_USE_CXX11_ABI=0"),
      std::string::npos)
      << rc.out;
  const std::string hint = ">>> did you mean: c10::Device::Device(";
  ASSERT_NE(rc.out.find(hint), std::string::npos) << rc.out;
  EXPECT_EQ(rc.out.find(hint, rc.out.find(hint) + 1), std::string::npos) << rc.out;

  // The fix the verdict names, applied: rebuilt with torch's ABI and linked, the import works.
  std::string rebuilt = build_module(root, "_old", "-D_GLIBCXX_USE_CXX11_ABI=1 -Wl,--as-needed " + kC10, true);
  ASSERT_TRUE(needs_c10(rebuilt));
  EXPECT_EQ(real_import(root, "_old").status, 0);
}

// Without --python: a torch installed beside the target (site/torch, built here) and the target's
// own package are the context; the real loader, with torch's library loaded RTLD_LOCAL first, agrees.
TEST(ImportEvidence, a_torch_beside_the_target_and_the_targets_package_are_evidence_without_python) {
  std::string root = test::scratch_dir("evidence-beside"), site = root + "/site";
  fs::create_directories(site + "/torch/lib");
  fs::create_directories(site + "/pkg/sub");
  auto cc = [&](const std::string& out, const std::string& code, const std::string& extra) {
    test::write_file(root + "/src.c", code);
    auto r = run("gcc -shared -fPIC -o " + quote(out) + " " + quote(root + "/src.c") + " " + extra);
    ASSERT_EQ(r.status, 0) << r.err;
  };
  cc(site + "/torch/lib/libtorch_cpu.so", "int aoti_torch_get_data_ptr(void) { return 1; }\n",
     "-Wl,-soname,libtorch_cpu.so");
  cc(site + "/torch/_C.cpython-311-x86_64-linux-gnu.so", "void* PyInit__C(void) { return 0; }\n", "");
  test::write_file(site + "/torch/__init__.py", "");
  test::write_file(site + "/torch/version.py", "__version__ = '2.11.0'\n");
  cc(site + "/pkg/_helpers.so", "int pkg_helper(void) { return 2; }\n", "-Wl,-soname,_helpers.so");
  test::write_file(site + "/pkg/__init__.py", "");
  test::write_file(site + "/pkg/sub/__init__.py", "");
  std::string module = site + "/pkg/sub/_ops.cpython-311-x86_64-linux-gnu.so";
  cc(module,
     "extern int aoti_torch_get_data_ptr(void);\nextern int pkg_helper(void);\n"
     "void* PyInit__ops(void) { return (void*)(long)(aoti_torch_get_data_ptr() + pkg_helper()); }\n",
     "");

  std::string code =
      "import ctypes, os\n"
      "ctypes.CDLL('" +
      site +
      "/torch/lib/libtorch_cpu.so', os.RTLD_NOW | os.RTLD_LOCAL)\n"
      "ctypes.CDLL('" +
      site +
      "/pkg/_helpers.so', os.RTLD_NOW | os.RTLD_LOCAL)\n"
      "ctypes.CDLL('" +
      module + "', os.RTLD_NOW)\n";
  auto real = run(kPython + " -c " + quote(code));
  ASSERT_NE(real.status, 0);
  EXPECT_NE(real.err.find("undefined symbol: "), std::string::npos) << real.err;

  auto r = run(kBin + kQuiet + " " + quote(module));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("error: undefined symbol: aoti_torch_get_data_ptr\n"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find(">>> unlinked-library: defined in torch/lib/libtorch_cpu.so (torch 2.11.0), which this module does "
                 "not link\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(">>> unlinked-library: defined in pkg/_helpers.so (in this module's package), which this module "
                       "does not link\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("unknown"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mlc
