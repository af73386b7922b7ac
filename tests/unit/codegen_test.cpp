// Codegen-aware tracing on the real thing: Debian's torchgen (python3-torch) generates a PrivateUse1
// backend from a backend yaml, CMake builds it against libtorch-dev with one listed kernel left
// unimplemented, and the real loader (ctypes.CDLL, RTLD_NOW) is the oracle: it refuses the library,
// musa-linkcheck names the kernel's yaml entry (file:line), musa-stubgen stubs it, and the rebuilt
// library loads.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kLinkcheck = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kTorchgen = "/usr/lib/python3/dist-packages/torchgen";

// add.Scalar (line 6) is listed and implemented by no source; add.Tensor shares its C++ name `add`.
const char* kBackendYaml = R"(backend: PrivateUse1
cpp_namespace: demo_backend
supported:
- abs
- add.Tensor
- add.Scalar
- mul.Tensor
)";

const char* kKernels = R"(#include <PrivateUse1NativeFunctions.h>

namespace demo_backend {
at::Tensor PrivateUse1NativeFunctions::abs(const at::Tensor& self) { return self; }
at::Tensor PrivateUse1NativeFunctions::add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  (void)other;
  (void)alpha;
  return self;
}
at::Tensor PrivateUse1NativeFunctions::mul(const at::Tensor& self, const at::Tensor& other) {
  (void)other;
  return self;
}
}  // namespace demo_backend
)";

// gen_backend_stubs.py finds native_functions.yaml and its templates under the directory above its
// own (a PyTorch checkout); Debian ships them in torchgen/packaged, so the project's "checkout" is
// two symlinks to the packaged data.
const char* kCMakeLists = R"(cmake_minimum_required(VERSION 3.18)
project(demo_backend CXX)
set(CMAKE_CXX_STANDARD 17)
set(GEN ${CMAKE_CURRENT_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${GEN}/RegisterPrivateUse1.cpp ${GEN}/PrivateUse1NativeFunctions.h
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/pytorch/torchgen/gen_backend_stubs.py
          --source_yaml ${CMAKE_CURRENT_SOURCE_DIR}/backend.yaml --output_dir ${GEN}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/backend.yaml)
file(GLOB KERNELS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.cpp)
add_library(demo_backend SHARED ${GEN}/RegisterPrivateUse1.cpp ${KERNELS})
target_include_directories(demo_backend PRIVATE ${GEN})
target_link_libraries(demo_backend PRIVATE torch_cpu c10)
)";

std::string load_with_ctypes(const std::string& lib) {
  auto r = run("/usr/bin/python3 -c " +
               quote("import ctypes, os, sys\ntry:\n    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\n    print('loaded')\n"
                     "except OSError as e:\n    print(e)") +
               " " + quote(lib));
  return r.out;
}

TEST(Codegen, kernel_a_backend_yaml_lists_and_no_source_implements_is_traced_to_its_entry_stubbed_and_loads) {
  for (const char* need : {"/usr/bin/python3", "/usr/lib/python3/dist-packages/torchgen/gen_backend_stubs.py",
                           "/usr/lib/python3/dist-packages/torchgen/packaged/ATen/native/native_functions.yaml",
                           "/usr/include/torch/library.h", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"})
    if (!fs::exists(need)) MLC_SKIP() << need << " is missing (python3-torch and libtorch-dev provide it)";
  if (run("cmake --version").status != 0) MLC_SKIP() << "cmake is missing";
  const std::string dir = test::scratch_dir("codegen");
  const std::string src = dir + "/src", build = dir + "/build";
  fs::create_directories(src + "/kernels");
  fs::create_directories(src + "/pytorch/aten/src");
  fs::create_symlink(kTorchgen + "/packaged/ATen", src + "/pytorch/aten/src/ATen");
  fs::create_symlink(kTorchgen, src + "/pytorch/torchgen");
  test::write_file(src + "/backend.yaml", kBackendYaml);
  test::write_file(src + "/kernels/kernels.cpp", kKernels);
  test::write_file(src + "/CMakeLists.txt", kCMakeLists);
  auto configure = run("cmake -S " + quote(src) + " -B " + quote(build) + " -DCMAKE_BUILD_TYPE=Debug 2>&1");
  ASSERT_EQ(configure.status, 0) << configure.out;
  auto make = run("cmake --build " + quote(build) + " -j2 2>&1");
  ASSERT_EQ(make.status, 0) << make.out;
  const std::string lib = build + "/libdemo_backend.so";
  const std::string mangled = "_ZN12demo_backend26PrivateUse1NativeFunctions3addERKN2at6TensorERKN3c106ScalarES8_";

  // The oracle: the real loader refuses the library on exactly that kernel.
  EXPECT_NE(load_with_ctypes(lib).find("undefined symbol: " + mangled), std::string::npos) << load_with_ctypes(lib);

  // --build-dir alone: the custom command names the yaml, its output dir and the torchgen it runs.
  auto json = run(kLinkcheck + " --no-cache --build-dir " + quote(build) + " --format json " + quote(lib));
  EXPECT_EQ(json.status, 1) << json.err;
  auto text = run(kLinkcheck + " --no-cache --build-dir " + quote(build) + " " + quote(lib));
  const std::string yaml = fs::canonical(src + "/backend.yaml").string();
  const std::string header = build + "/generated/PrivateUse1NativeFunctions.h";
  EXPECT_NE(text.out.find("error: undefined symbol: demo_backend::PrivateUse1NativeFunctions::add(at::Tensor const&, "
                          "c10::Scalar const&, c10::Scalar const&)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(">>> unimplemented-kernel: add.Scalar is listed in " + yaml + ":6 for PrivateUse1, so the "
                          "generated registration code calls demo_backend::PrivateUse1NativeFunctions::add, declared in " +
                          header + ":"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("implement demo_backend::PrivateUse1NativeFunctions::add (add.Scalar), or remove the entry "
                          "add.Scalar at " + yaml + ":6"),
            std::string::npos)
      << text.out;
  EXPECT_NE(json.out.find("\"classification\": \"unimplemented-kernel\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"file\": \"" + yaml + "\",\n"), std::string::npos) << json.out;
  // Only the one kernel is missing: abs, add.Tensor and mul are implemented.
  EXPECT_NE(text.out.find("1 undefined symbol"), std::string::npos) << text.out;

  // --codegen-yaml without the build: the entry is still named (add.Tensor and add.Scalar share the
  // C++ name; without native_functions.yaml both are candidates).
  auto given = run(kLinkcheck + " --no-cache --codegen-yaml " + quote(src + "/backend.yaml") + " " + quote(lib));
  EXPECT_NE(given.out.find(">>> unimplemented-kernel: one of add.Tensor (" + yaml + ":5), add.Scalar (" + yaml + ":6)"),
            std::string::npos)
      << given.out;

  // musa-stubgen: a stub in the generated class that throws, beside the kernels (the glob takes it).
  auto stub = run(kStubgen + " --no-cache --no-confirm --build-dir " + quote(build) + " --out-cpp " +
                  quote(src + "/kernels/unimplemented_functions.cpp") + " --out-header " +
                  quote(src + "/kernels/unimplemented_functions.h") + " " + quote(lib));
  EXPECT_EQ(stub.status, 0) << stub.out << stub.err;
  std::string cpp = test::read_file(src + "/kernels/unimplemented_functions.cpp");
  EXPECT_NE(cpp.find("// unimplemented-kernel: add.Scalar, listed in " + yaml + ":6; declared in " + header + ":"),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("at::Tensor demo_backend::PrivateUse1NativeFunctions::add(const at::Tensor& self, const at::Scalar& "
                     "other,\n"),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("const at::Scalar& alpha) {\n"
                     "  throw std::runtime_error(\"add.Scalar is not implemented for PrivateUse1\");\n}\n"),
            std::string::npos)
      << cpp;

  // Rebuilt (the glob is read again at configure), the library loads with RTLD_NOW.
  auto reconfigure = run("cmake -S " + quote(src) + " -B " + quote(build) + " 2>&1 && cmake --build " + quote(build) +
                         " -j2 2>&1");
  ASSERT_EQ(reconfigure.status, 0) << reconfigure.out;
  EXPECT_EQ(load_with_ctypes(lib), "loaded\n");
  auto after = run(kLinkcheck + " --no-cache --build-dir " + quote(build) + " " + quote(lib));
  EXPECT_EQ(after.status, 0) << after.out;
  // A second run changes nothing.
  std::string before = cpp;
  run(kStubgen + " --no-cache --no-confirm --build-dir " + quote(build) + " --out-cpp " +
      quote(src + "/kernels/unimplemented_functions.cpp") + " --out-header " +
      quote(src + "/kernels/unimplemented_functions.h") + " " + quote(lib));
  EXPECT_EQ(test::read_file(src + "/kernels/unimplemented_functions.cpp"), before);
}

}  // namespace
}  // namespace mlc
