// Codegen-aware tracing on the real thing: Debian's torchgen (python3-torch) generates a PrivateUse1
// backend from a backend yaml, CMake builds it against libtorch-dev with one listed kernel left
// unimplemented, and the real loader (ctypes.CDLL, RTLD_NOW) is the oracle: it refuses the library,
// musa-linkcheck names the kernel's yaml entry (file:line), musa-stubgen stubs it, and the rebuilt
// library loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "codegen/backend_yaml.h"
#include "demangle/symbol_name.h"
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

// What the generated backend needs here; the reason to skip when one is missing.
std::string missing_torch() {
  for (const char* need : {"/usr/bin/python3", "/usr/lib/python3/dist-packages/torchgen/gen_backend_stubs.py",
                           "/usr/lib/python3/dist-packages/torchgen/packaged/ATen/native/native_functions.yaml",
                           "/usr/include/torch/library.h", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"})
    if (!fs::exists(need)) return std::string(need) + " is missing (python3-torch and libtorch-dev provide it)";
  return "";
}

// The backend project in dir/src (torchgen's "checkout" two symlinks to Debian's packaged data), configured
// and built in dir/build with add.Scalar unimplemented: the library's path.
std::string build_backend(const std::string& dir, std::string& failure) {
  const std::string src = dir + "/src", build = dir + "/build";
  fs::create_directories(src + "/kernels");
  fs::create_directories(src + "/pytorch/aten/src");
  fs::create_symlink(kTorchgen + "/packaged/ATen", src + "/pytorch/aten/src/ATen");
  fs::create_symlink(kTorchgen, src + "/pytorch/torchgen");
  test::write_file(src + "/backend.yaml", kBackendYaml);
  test::write_file(src + "/kernels/kernels.cpp", kKernels);
  test::write_file(src + "/CMakeLists.txt", kCMakeLists);
  auto made = run("cmake -S " + quote(src) + " -B " + quote(build) + " -DCMAKE_BUILD_TYPE=Debug && cmake --build " +
                  quote(build) + " -j2");
  if (made.status != 0) failure = made.out + made.err;
  return build + "/libdemo_backend.so";
}

TEST(Codegen, kernel_a_backend_yaml_lists_and_no_source_implements_is_traced_to_its_entry_stubbed_and_loads) {
  if (const auto why = missing_torch(); !why.empty()) MLC_SKIP() << why;
  const std::string dir = test::scratch_dir("codegen");
  const std::string src = dir + "/src", build = dir + "/build";
  std::string failure;
  const std::string lib = build_backend(dir, failure);
  ASSERT_EQ(failure, "");
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
  EXPECT_NE(
      text.out.find(">>> unimplemented-kernel: add.Scalar is listed in " + yaml +
                    ":6 for PrivateUse1, so the "
                    "generated registration code calls demo_backend::PrivateUse1NativeFunctions::add, declared in " +
                    header + ":"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(">>> listed in: " + yaml + ":6\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("implement demo_backend::PrivateUse1NativeFunctions::add (add.Scalar), or remove the entry "
                          "add.Scalar at " +
                          yaml + ":6"),
            std::string::npos)
      << text.out;
  EXPECT_NE(json.out.find("\"classification\": \"unimplemented-kernel\""), std::string::npos) << json.out;
  // The report keeps the contract's schema (docs/report.schema.json) with the new class in it.
  test::write_file(dir + "/report.json", json.out);
  auto valid = run(
      "/usr/bin/python3 -c " +
      quote("import json, sys, jsonschema\n"
            "jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))\n") +
      " " + quote(std::string(MLC_SOURCE_DIR) + "/docs/report.schema.json") + " " + quote(dir + "/report.json"));
  EXPECT_EQ(valid.status, 0) << valid.err;
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
  EXPECT_NE(
      cpp.find("at::Tensor demo_backend::PrivateUse1NativeFunctions::add(const at::Tensor& self, const at::Scalar& "
               "other,\n"),
      std::string::npos)
      << cpp;
  // The generated directory is on the target's include path (flags.make): included relative to it.
  EXPECT_NE(
      test::read_file(src + "/kernels/unimplemented_functions.h").find("#include <PrivateUse1NativeFunctions.h>\n"),
      std::string::npos);
  EXPECT_NE(cpp.find("const at::Scalar& alpha) {\n"
                     "  throw std::runtime_error(\"add.Scalar is not implemented for PrivateUse1\");\n}\n"),
            std::string::npos)
      << cpp;

  // Rebuilt (the glob is read again at configure), the library loads with RTLD_NOW.
  auto reconfigure =
      run("cmake -S " + quote(src) + " -B " + quote(build) + " && cmake --build " + quote(build) + " -j2");
  ASSERT_EQ(reconfigure.status, 0) << reconfigure.out << reconfigure.err;
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

TEST(Codegen, one_natural_apply_stubs_the_kernel_beside_the_sources_and_python_sees_the_stubs_throw) {
  // Issue 48, case 4: from the project's root, `musa-stubgen --build-dir build --apply LIB` and nothing else.
  // The stub goes beside the target's sources and into its add_library() (not into the file(GLOB) of the
  // kernels, whose pattern does not take it); the rebuilt library is loaded
  // by torch, and the PrivateUse1 kernel of add.Scalar, called through the dispatcher, is the stub: its
  // RuntimeError reaches Python, while mul.Tensor, implemented, returns.
  if (const auto why = missing_torch(); !why.empty()) MLC_SKIP() << why;
  const std::string dir = test::scratch_dir("codegen-natural");
  const std::string src = dir + "/src", build = dir + "/build";
  std::string failure;
  const std::string lib = build_backend(dir, failure);
  ASSERT_EQ(failure, "");
  auto stub = run("cd " + quote(src) + " && " + kStubgen + " --no-cache --build-dir " + quote(build) + " --apply " +
                  quote(lib));
  ASSERT_EQ(stub.status, 0) << stub.out << stub.err;
  EXPECT_TRUE(fs::exists(src + "/unimplemented_functions.cpp")) << stub.err;
  EXPECT_NE(test::read_file(src + "/CMakeLists.txt")
                .find("add_library(demo_backend SHARED ${GEN}/RegisterPrivateUse1.cpp unimplemented_functions.cpp "
                      "${KERNELS})"),
            std::string::npos)
      << test::read_file(src + "/CMakeLists.txt") << stub.err;
  auto rebuilt = run("cmake --build " + quote(build) + " -j2");
  ASSERT_EQ(rebuilt.status, 0) << rebuilt.out << rebuilt.err;
  auto called = run("/usr/bin/python3 -c " +
                    quote("import sys, torch\n"
                          "torch.ops.load_library(sys.argv[1])\n"
                          "key = torch._C.DispatchKey.PrivateUse1\n"
                          "torch.ops.aten.mul.Tensor._op_dk(key, torch.ones(2), torch.ones(2))\n"
                          "print('mul returned')\n"
                          "try:\n"
                          "    torch.ops.aten.add.Scalar._op_dk(key, torch.ones(2), 1.0)\n"
                          "    print('add returned')\n"
                          "except RuntimeError as e:\n"
                          "    print(str(e).splitlines()[0])\n") +
                    " " + quote(lib));
  EXPECT_EQ(called.out, "mul returned\nadd.Scalar is not implemented for PrivateUse1\n") << called.err;
}

// The tests that run torchgen's gen_backend_stubs.py (the oracle of the declarations): checked once for each.
class CodegenTorchgen : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kTorchgen + "/gen_backend_stubs.py") || !fs::exists("/usr/bin/python3"))
      MLC_SKIP() << kTorchgen << "/gen_backend_stubs.py is missing (python3-torch provides it)";
  }
};

// torchgen is the oracle of its own naming: every declaration of the header it generates for a yaml
// of overloads (out=, in-place, optional, list, string, generator and factory parameters) maps back to
// exactly one entry, and every entry is reached.
TEST_F(CodegenTorchgen, every_generated_declaration_maps_back_to_exactly_its_yaml_entry) {
  const std::string dir = test::scratch_dir("codegen-names");
  fs::create_directories(dir + "/pytorch/aten/src");
  fs::create_symlink(kTorchgen + "/packaged/ATen", dir + "/pytorch/aten/src/ATen");
  fs::create_symlink(kTorchgen, dir + "/pytorch/torchgen");
  const std::vector<std::string> ops = {"add.Tensor",
                                        "add.Scalar",
                                        "add.out",
                                        "add_.Tensor",
                                        "abs",
                                        "abs.out",
                                        "index.Tensor",
                                        "sum.dim_IntList",
                                        "empty.memory_format",
                                        "div.Tensor_mode",
                                        "clamp",
                                        "clamp.Tensor",
                                        "cat",
                                        "topk",
                                        "arange.start_out",
                                        "bernoulli_.float",
                                        "random_.from",
                                        "addmm.out",
                                        "native_batch_norm",
                                        "max_pool2d_with_indices",
                                        "convolution_overrideable",
                                        "_to_copy",
                                        "masked_fill_.Scalar",
                                        "masked_fill_.Tensor",
                                        "sort.stable"};
  std::string yaml = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n";
  for (const auto& op : ops) yaml += "  - " + op + "\n";
  test::write_file(dir + "/xla.yaml", yaml);
  auto gen = run("/usr/bin/python3 " + quote(dir + "/pytorch/torchgen/gen_backend_stubs.py") + " --source_yaml " +
                 quote(dir + "/xla.yaml") + " --output_dir " + quote(dir + "/gen") + "");
  ASSERT_EQ(gen.status, 0) << gen.out << gen.err;

  auto y = codegen::read_backend_yaml(dir + "/xla.yaml");
  ASSERT_TRUE(y) << y.error().message;
  EXPECT_EQ(y->backend, "XLA");
  EXPECT_EQ(y->class_name, "XLANativeFunctions");
  ASSERT_EQ(y->entries.size(), ops.size());
  EXPECT_EQ(y->entries[2].op, "add.out");
  EXPECT_EQ(y->entries[2].line, 6u);
  y->native_yaml = kTorchgen + "/packaged/ATen/native/native_functions.yaml";
  y->output_dir = dir + "/gen";
  codegen::read_schemas(*y);
  std::vector<codegen::BackendYaml> yamls{*y};

  std::map<std::string, int> reached;
  std::ifstream header(dir + "/gen/XLANativeFunctions.h");
  const std::regex decl(R"(^static .*? (\w+)\((.*)\);$)");
  int declarations = 0;
  for (std::string line; std::getline(header, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, decl)) continue;
    ++declarations;
    // The declaration as c++filt would print its symbol: parameter names dropped.
    std::string params;
    std::string list = m[2];
    for (size_t start = 0, depth = 0, k = 0; k <= list.size(); ++k) {
      char c = k < list.size() ? list[k] : ',';
      if (c == '<' || c == '(') ++depth;
      if (c == '>' || c == ')') --depth;
      if (c != ',' || depth) continue;
      std::string p = list.substr(start, k - start);
      p = p.substr(0, p.find_last_of(' '));
      params += (params.empty() ? "" : ", ") + p;
      start = k + 1;
    }
    auto sym = demangle::parse_demangled("torch_xla::XLANativeFunctions::" + std::string(m[1]) + "(" + params + ")");
    auto match = codegen::match_kernel(yamls, sym);
    ASSERT_EQ(match.entries.size(), 1u) << line;
    ++reached[match.entries.front()->op];
    ASSERT_TRUE(match.declaration) << line;
    EXPECT_EQ(match.declaration->text, line.substr(0, line.size() - 1));
  }
  EXPECT_EQ(declarations, static_cast<int>(ops.size()));
  for (const auto& op : ops) EXPECT_EQ(reached[op], 1) << op;
  // Not a kernel of the yaml: another class, another op.
  EXPECT_TRUE(
      codegen::match_kernel(yamls, demangle::parse_demangled("torch_xla::XLANativeFunctions::sub(at::Tensor const&)"))
          .entries.empty());
  EXPECT_TRUE(codegen::match_kernel(yamls, demangle::parse_demangled("torch_xla::Other::abs(at::Tensor const&)"))
                  .entries.empty());
}

// torch_musa's musa_functions.yaml: a `- func:` list; an entry whose dispatch names a PrivateUse1
// kernel is called by that name (in at::musa unless qualified); the others are PyTorch's structured
// kernels, ported, and are no codegen kernels.
TEST(Codegen, musa_functions_yaml_entries_with_a_privateuse1_kernel_are_called_by_that_name) {
  const std::string dir = test::scratch_dir("codegen-musa");
  test::write_file(dir + "/musa_functions.yaml",
                   "# torch_musa codegen functions\n"
                   "\n"
                   "- func: add.Tensor\n"
                   "- func: add.out\n"
                   "\n"
                   "- func: abs\n"
                   "  dispatch:\n"
                   "    PrivateUse1: Abs\n"
                   "- func: bitwise_right_shift.Tensor_out\n"
                   "  dispatch:\n"
                   "    PrivateUse1: musa_bitwise_right_shift_impl\n"
                   "- func: eq.Scalar_out\n"
                   "  structured: false\n"
                   "  dispatch:\n"
                   "    PrivateUse1: at::native::EqScalarOut\n");
  auto y = codegen::read_backend_yaml(dir + "/musa_functions.yaml");
  ASSERT_TRUE(y) << y.error().message;
  EXPECT_EQ(y->backend, "PrivateUse1");
  ASSERT_EQ(y->entries.size(), 3u);
  std::vector<codegen::BackendYaml> yamls{*y};
  auto abs = codegen::match_kernel(yamls, demangle::parse_demangled("at::musa::Abs(at::Tensor const&)"));
  ASSERT_EQ(abs.entries.size(), 1u);
  EXPECT_EQ(abs.entries[0]->op, "abs");
  EXPECT_EQ(abs.entries[0]->line, 6u);
  auto eq = codegen::match_kernel(
      yamls, demangle::parse_demangled("at::native::EqScalarOut(at::Tensor const&, c10::Scalar const&, at::Tensor&)"));
  ASSERT_EQ(eq.entries.size(), 1u);
  EXPECT_EQ(eq.entries[0]->op, "eq.Scalar_out");
  EXPECT_EQ(eq.entries[0]->line, 12u);
  // A structured kernel's dispatch name is the class whose impl() the generated code calls.
  auto shift = codegen::match_kernel(
      yamls, demangle::parse_demangled("at::musa::structured_musa_bitwise_right_shift_impl::impl(at::Tensor const&, "
                                       "at::Tensor const&, at::Tensor const&)"));
  ASSERT_EQ(shift.entries.size(), 1u);
  EXPECT_EQ(shift.entries[0]->op, "bitwise_right_shift.Tensor_out");
  EXPECT_EQ(shift.entries[0]->line, 9u);
  EXPECT_TRUE(
      codegen::match_kernel(yamls, demangle::parse_demangled("at::musa::add(at::Tensor const&)")).entries.empty());
}

// Ninja's custom command gives the yaml, the output directory and, from the script's path, the schema
// torchgen reads; a build that runs no generator falls back to a *native_functions*.yaml of its
// source tree (torch_npu's npu_native_functions.yaml), never PyTorch's own native_functions.yaml.
TEST(Codegen, the_yaml_comes_from_the_build_ninja_command_else_from_the_source_tree) {
  const std::string dir = test::scratch_dir("codegen-find");
  fs::create_directories(dir + "/build");
  fs::create_directories(dir + "/pt/torchgen");
  fs::create_directories(dir + "/pt/aten/src/ATen/native");
  test::write_file(dir + "/pt/aten/src/ATen/native/native_functions.yaml", "- func: abs(Tensor self) -> Tensor\n");
  test::write_file(dir + "/build/build.ninja",
                   "build generated/RegisterPrivateUse1.cpp: CUSTOM_COMMAND ../backend.yaml\n"
                   "  COMMAND = cd " +
                       dir + "/build && /usr/bin/python3 " + dir +
                       "/pt/torchgen/gen_backend_stubs.py -s ../backend.yaml --output_dir=generated\n");
  build::Model build;
  build.build_dir = dir + "/build";
  build.source_dir = dir;
  auto found = codegen::find_backend_yamls(build);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].yaml, dir + "/backend.yaml");
  EXPECT_EQ(found[0].output_dir, dir + "/build/generated");
  EXPECT_EQ(found[0].native_yaml, dir + "/pt/aten/src/ATen/native/native_functions.yaml");

  fs::remove(dir + "/build/build.ninja");
  fs::create_directories(dir + "/src/npu");
  test::write_file(dir + "/src/npu/npu_native_functions.yaml", "backend: NPU\ncpp_namespace: at_npu::native\n");
  found = codegen::find_backend_yamls(build);
  ASSERT_EQ(found.size(), 1u);  // pt/aten/.../native_functions.yaml is PyTorch's schema, not a backend yaml
  EXPECT_EQ(found[0].yaml, dir + "/src/npu/npu_native_functions.yaml");
}

// torch_musa's form through the tool: the generated code calls at::musa::Abs(at::Tensor const&), the
// library defines Abs with other parameters; the finding names the entry and that definition.
TEST(Codegen, a_musa_kernel_defined_with_other_parameters_is_named_beside_its_yaml_entry) {
  const std::string dir = test::scratch_dir("codegen-musa-lib");
  test::write_file(dir + "/musa_functions.yaml", "- func: abs\n  dispatch:\n    PrivateUse1: Abs\n");
  test::write_file(dir + "/ops.cpp", R"(namespace at { struct Tensor { int v; };
namespace musa {
Tensor Abs(const Tensor& self);                             // what the generated registration calls
Tensor Abs(const Tensor& self, int alpha) { return {self.v + alpha}; }  // what was written
Tensor (*registered)(const Tensor&) = &Abs;
}  // namespace musa
}  // namespace at
)");
  auto cc = run("c++ -shared -fPIC -o " + quote(dir + "/libops.so") + " " + quote(dir + "/ops.cpp"));
  ASSERT_EQ(cc.status, 0) << cc.err;
  auto r = run(kLinkcheck + " --no-cache --codegen-yaml " + quote(dir + "/musa_functions.yaml") + " " +
               quote(dir + "/libops.so"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find(">>> unimplemented-kernel: abs is listed in " + dir +
                       "/musa_functions.yaml:1 for PrivateUse1, "
                       "so the generated registration code calls at::musa::Abs, but the library defines it only with "
                       "other parameters: at::musa::Abs(at::Tensor const&, int)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(">>> fix: give the definition the generated declaration's parameters, or implement at::musa::Abs "
                 "(abs), or remove the entry abs at " +
                 dir + "/musa_functions.yaml:1;"),
      std::string::npos)
      << r.out;
}

// A file that is no backend yaml is one error naming it.
TEST(Codegen, a_yaml_without_backend_and_cpp_namespace_is_refused_naming_the_file) {
  const std::string dir = test::scratch_dir("codegen-bad");
  test::write_file(dir + "/x.yaml", "supported:\n- abs\n");
  auto y = codegen::read_backend_yaml(dir + "/x.yaml");
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error().message, "not a torchgen backend yaml: it needs `backend:` and `cpp_namespace:`");
  auto r = run(kLinkcheck + " --no-cache --codegen-yaml " + quote(dir + "/x.yaml") + " /bin/true");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + dir +
                       "/x.yaml: not a torchgen backend yaml: it needs `backend:` and "
                       "`cpp_namespace:`\n");
}

// torch_npu's shape: the backend's generator runs outside the build (setup.py) and writes
// PrivateUse1NativeFunctions.h into the source tree, beside the yaml (npu_native_functions.yaml); the
// CMake build has no custom command that names it. torchgen writes the header (the oracle of its
// declarations); --build-dir alone finds it in the source tree, and musa-stubgen writes the kernel's
// stub from it instead of refusing.
TEST_F(CodegenTorchgen, the_generated_header_in_the_source_tree_is_found_without_a_custom_command) {
  const std::string dir = test::scratch_dir("codegen-source-tree");
  const std::string src = dir + "/src", build = dir + "/build", gen = src + "/csrc/aten";
  fs::create_directories(src + "/pytorch/aten/src");
  fs::create_symlink(kTorchgen + "/packaged/ATen", src + "/pytorch/aten/src/ATen");
  fs::create_symlink(kTorchgen, src + "/pytorch/torchgen");
  test::write_file(src + "/npu_native_functions.yaml", kBackendYaml);
  auto generated = run("/usr/bin/python3 " + quote(src + "/pytorch/torchgen/gen_backend_stubs.py") + " --source_yaml " +
                       quote(src + "/npu_native_functions.yaml") + " --output_dir " + quote(gen));
  ASSERT_EQ(generated.status, 0) << generated.out << generated.err;
  ASSERT_TRUE(fs::exists(gen + "/PrivateUse1NativeFunctions.h"));
  // The library refers to add.Scalar's kernel (its address: no libtorch needed to build it).
  test::write_file(
      src + "/uses.cpp",
      "namespace c10 { class Scalar; }\nnamespace at { class Tensor; using c10::Scalar; }\n"
      "namespace demo_backend { struct PrivateUse1NativeFunctions {\n"
      "  static at::Tensor add(const at::Tensor&, const at::Scalar&, const at::Scalar&);\n};\n}\n"
      "void* kernel() { return reinterpret_cast<void*>(&demo_backend::PrivateUse1NativeFunctions::add); }\n");
  test::write_file(src + "/CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.18)\nproject(npu_like CXX)\n"
                   "add_library(npu_like SHARED uses.cpp)\n");
  auto configured = run("cmake -S " + quote(src) + " -B " + quote(build) + " && cmake --build " + quote(build));
  ASSERT_EQ(configured.status, 0) << configured.out << configured.err;
  const std::string lib = build + "/libnpu_like.so";
  const std::string yaml = fs::canonical(src + "/npu_native_functions.yaml").string();
  auto stub = run(kStubgen + " --no-cache --no-confirm --build-dir " + quote(build) + " --out-cpp " +
                  quote(src + "/unimplemented_functions.cpp") + " --out-header " +
                  quote(src + "/unimplemented_functions.h") + " " + quote(lib));
  EXPECT_EQ(stub.status, 0) << stub.out << stub.err;
  const std::string cpp = test::read_file(src + "/unimplemented_functions.cpp");
  // (Without the generator's native_functions.yaml the two add overloads share one C++ name: the
  // declaration, found by the symbol's parameters, is add.Scalar's either way.)
  EXPECT_NE(cpp.find(", listed in " + yaml + ":"), std::string::npos) << cpp << stub.err;
  EXPECT_NE(cpp.find("; declared in " + gen + "/PrivateUse1NativeFunctions.h:"), std::string::npos) << cpp << stub.err;
  EXPECT_NE(
      cpp.find("at::Tensor demo_backend::PrivateUse1NativeFunctions::add(const at::Tensor& self, const at::Scalar& "
               "other,\n"),
      std::string::npos)
      << cpp;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mlc
