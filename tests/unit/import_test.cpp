// Predicting the import: the default checks what loading a file binds, dependencies
// included; a missing library is one cause naming the other versions installed; a symbol a loaded
// library should own but lacks is a provider mismatch. The real loader is the oracle: each
// environment is also loaded with ctypes.CDLL(path, RTLD_NOW) in a python3 subprocess, which must
// fail exactly when musa-linkcheck reports an error for the load.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mlc {
namespace {

using nlohmann::json;
using test::quote;
using test::run;
namespace fs = std::filesystem;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kImport = kFix + "/import";
// No SDK or CUDA of the machine, no index cache: only what each test names.
const std::string kQuiet = " --cuda-home '' --no-cache";

// What the real loader says: ctypes.CDLL(path, RTLD_NOW) after the preloads (RTLD_GLOBAL, as Python
// has loaded torch before an extension), in a subprocess, with LD_LIBRARY_PATH when given.
test::CommandResult real_load(const std::string& path, const std::vector<std::string>& preload = {},
                              const std::string& ld_library_path = "", const std::string& python = "python3") {
  std::string code = "import ctypes, os\n";
  for (const auto& p : preload) code += "ctypes.CDLL(" + json(p).dump() + ", os.RTLD_NOW | os.RTLD_GLOBAL)\n";
  code += "ctypes.CDLL(" + json(path).dump() + ", os.RTLD_NOW)\n";
  std::string env =
      ld_library_path.empty() ? "env -u LD_LIBRARY_PATH " : "env LD_LIBRARY_PATH=" + quote(ld_library_path) + " ";
  return run(env + python + " -c " + quote(code));
}

bool has_python() { return run("python3 -c 'import ctypes'").status == 0; }

// The real loader answers through python3's ctypes in every Import test: checked once for each.
class Import : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_python()) MLC_SKIP() << "python3 (its ctypes is the real loader's oracle here) is not installed";
  }
};

// The first line of a text report.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

const json* library(const json& doc, const std::string& path) {
  for (const auto& l : doc["libraries"])
    if (l["path"] == path) return &l;
  return nullptr;
}

// The undefined symbols a library leaves for the loader, from the toolchain's nm (the compiler's own word).
std::string undefined_matching(const std::string& lib, const std::string& needle) {
  auto r = run("nm -D --undefined-only " + quote(lib) + " | awk '{print $2}' | grep -F " + quote(needle));
  return r.out.substr(0, r.out.find('\n'));
}

TEST_F(Import, default_checks_the_dependencies_the_load_binds_sdk_driver_mismatch) {
  std::string kernels = kImport + "/libmusa_kernels.so", musa = kImport + "/sdk/lib/libmusa.so.1";
  std::string args = kQuiet + " --sdk-home " + quote(kImport + "/sdk") + " ";
  auto text = run("env -u LD_LIBRARY_PATH " + kBin + args + quote(kernels));
  EXPECT_EQ(text.status, 1) << text.out << text.err;
  EXPECT_EQ(first_line(text.out), "error: loading libmusa_kernels.so would fail: 1 cause") << text.out;
  EXPECT_NE(text.out.find("error: undefined symbol: PVRSRVGetDevInfo\n>>> referenced by "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(">>> in the SDK's libmusa.so.1 (a dependency loaded for libmusa_kernels.so), not in "
                          "libmusa_kernels.so\n"),
            std::string::npos)
      << text.out;
  // The driver as the loader found it: through libmusa.so.1's RUNPATH ($ORIGIN/../../driver).
  std::string driver = kImport + "/sdk/lib/../../driver/libsrv_um.so.1";
  EXPECT_NE(
      text.out.find(">>> provider-mismatch: built against another version of libsrv_um.so.1: the loaded " + driver +
                    " defines 3 symbols of PVRSRV* but not this one; its other members include PVRSRVConnect, "
                    "PVRSRVDevMemAlloc, PVRSRVFinalise\n"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(">>> fix: install the version of libsrv_um.so.1 that libmusa.so.1 was built against, or "
                          "rebuild libmusa.so.1 against the loaded libsrv_um.so.1\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("1 undefined symbol, 0 missing libraries, 0 missing versions in "), std::string::npos);

  auto r = run("env -u LD_LIBRARY_PATH " + kBin + " --format json" + args + quote(kernels));
  auto doc = json::parse(r.out);
  const json* target = library(doc, kernels);
  const json* dep = library(doc, musa);
  ASSERT_TRUE(target && dep) << r.out;
  EXPECT_EQ((*target)["role"], "target");
  EXPECT_TRUE((*target)["loaded_by"].is_null());
  EXPECT_TRUE((*target)["unresolved"].empty());
  EXPECT_EQ((*dep)["role"], "dependency");
  EXPECT_EQ((*dep)["loaded_by"], kernels);
  ASSERT_EQ((*dep)["unresolved"].size(), 1u);
  const auto& u = (*dep)["unresolved"][0];
  EXPECT_EQ(u["symbol"], "PVRSRVGetDevInfo");
  EXPECT_EQ(u["classification"], "provider-mismatch");
  EXPECT_EQ(u["referenced_by"][0]["library"], musa);
  EXPECT_EQ(u["origin"]["library"], driver);

  // The named file alone (the old default) sees nothing: what the user was told.
  auto named = run("env -u LD_LIBRARY_PATH " + kBin + args + "--only-named " + quote(kernels));
  EXPECT_EQ(named.status, 0) << named.out;
  EXPECT_EQ(named.out, "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  // --closure keeps its meaning: everything, the same finding.
  auto closure = run("env -u LD_LIBRARY_PATH " + kBin + args + "--closure " + quote(kernels));
  EXPECT_EQ(closure.status, 1);
  EXPECT_NE(closure.out.find("undefined symbol: PVRSRVGetDevInfo"), std::string::npos);

  // The driver it was built against first on LD_LIBRARY_PATH: the load succeeds, and we agree.
  auto fixed = run("env -u LD_LIBRARY_PATH " + kBin + args + "--library-path " + quote(kImport + "/driver_build") +
                   " " + quote(kernels));
  EXPECT_EQ(fixed.status, 0) << fixed.out;

  auto load = real_load(kernels);
  EXPECT_NE(load.status, 0) << "the real loader must fail where we report an error";
  EXPECT_NE(load.err.find("libmusa.so.1"), std::string::npos) << load.err;
  EXPECT_NE(load.err.find("undefined symbol: PVRSRVGetDevInfo"), std::string::npos) << load.err;
  EXPECT_EQ(real_load(kernels, {}, kImport + "/driver_build").status, 0) << "clean for us, clean for ld.so";
}

TEST_F(Import, missing_library_is_one_cause_naming_the_other_versions_installed) {
  std::string user = kImport + "/libmccl_user.so";
  std::string args = kQuiet + " --sdk-home " + quote(kImport + "/sdk") + " ";
  std::string headline =
      "error: library not found: libmccl.so.2 (needed by libmccl_user.so); 2 other versions found: " + kImport +
      "/mccl/libmccl.so.1 [runpath] and " + kImport + "/sdk/lib/libmccl.so.3 [sdk]";
  auto q = run("env -u LD_LIBRARY_PATH " + kBin + args + "-q " + quote(user));
  EXPECT_EQ(q.status, 1);
  EXPECT_EQ(q.out, "error: loading libmccl_user.so would fail: 1 cause\n" + headline + "\n");

  auto text = run("env -u LD_LIBRARY_PATH " + kBin + args + quote(user));
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find(headline + "\n>>> needed by " + user + "\n"), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find(">>> other version: " + kImport + "/mccl/libmccl.so.1 [runpath]\n>>> other version: " + kImport +
                    "/sdk/lib/libmccl.so.3 [sdk]\n>>> missing-library: mcclAllReduce\n>>> missing-library: "
                    "mcclCommInitRank\n>>> fix: install libmccl.so.2 (the version libmccl_user.so was linked "
                    "against) where the loader searches, or rebuild libmccl_user.so against libmccl.so.1"),
      std::string::npos)
      << text.out;
  // One cause, not a second wrong one: the SDK's libmccl.so.3 defines both, yet neither is unlinked-library.
  EXPECT_EQ(text.out.find("unlinked-library"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("error: undefined symbol"), std::string::npos) << text.out;

  auto r = run("env -u LD_LIBRARY_PATH " + kBin + " --format json" + args + quote(user));
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["causes"].size(), 1u) << r.out;
  const auto& c = doc["causes"][0];
  EXPECT_EQ(c["kind"], "missing-library");
  EXPECT_EQ(c["library"], "libmccl.so.2");
  EXPECT_EQ(c["symbols"], 2);
  EXPECT_EQ(c["needed_by"], json::array({user}));
  EXPECT_EQ(c["others"], (json::array({{{"path", kImport + "/mccl/libmccl.so.1"}, {"how", "runpath"}},
                                       {{"path", kImport + "/sdk/lib/libmccl.so.3"}, {"how", "sdk"}}})));
  const json* lib = library(doc, user);
  ASSERT_TRUE(lib);
  EXPECT_EQ((*lib)["needed"][0]["cause"], c["id"]);
  ASSERT_FALSE((*lib)["unresolved"].empty()) << "the user's references to the missing library are listed";
  for (const auto& u : (*lib)["unresolved"]) {
    EXPECT_EQ(u["classification"], "missing-library") << u.dump();
    EXPECT_EQ(u["cause"], c["id"]);
  }

  auto load = real_load(user);
  EXPECT_NE(load.status, 0);
  EXPECT_NE(load.err.find("libmccl.so.2: cannot open shared object file"), std::string::npos) << load.err;
}

TEST_F(Import, torch_built_from_other_headers_is_a_provider_mismatch_naming_the_torch_loaded) {
  std::string torch = kImport + "/torch/lib/libtorch_cpu.so";
  std::string ext = kImport + "/ext_old/libmusa_ext.so", ext_ok = kImport + "/ext_new/libmusa_ext.so";
  std::string wanted = undefined_matching(ext, "_GeneratorRegister");
  ASSERT_FALSE(wanted.empty()) << "the extension references the constructor";
  std::string args = kQuiet + " --with " + quote(torch) + " ";
  auto text = run("env -u LD_LIBRARY_PATH " + kBin + args + quote(ext));
  EXPECT_EQ(text.status, 1) << text.out << text.err;
  EXPECT_EQ(first_line(text.out), "error: loading libmusa_ext.so would fail: 1 cause");
  EXPECT_NE(
      text.out.find(
          "error: undefined symbol: at::_GeneratorRegister::_GeneratorRegister(std::function<at::Generator ()>)\n"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(">>> provider-mismatch: built against another version of libtorch_cpu.so: the loaded " +
                          torch + ", torch 2.0.0 (" + kImport + "/torch/version.py) defines "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("symbols of class at::_GeneratorRegister but not this one; it has "
                          "at::_GeneratorRegister::_GeneratorRegister(std::function<at::Generator ()> const&)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(">>> fix: install the version of torch that libmusa_ext.so was built against, or rebuild "
                          "libmusa_ext.so against the loaded libtorch_cpu.so (torch 2.0.0)\n"),
            std::string::npos)
      << text.out;

  auto r = run("env -u LD_LIBRARY_PATH " + kBin + " --format json" + args + quote(ext));
  auto doc = json::parse(r.out);
  const json* lib = library(doc, ext);
  ASSERT_TRUE(lib) << r.out;
  ASSERT_EQ((*lib)["unresolved"].size(), 1u) << r.out;
  EXPECT_EQ((*lib)["unresolved"][0]["symbol"], wanted);
  EXPECT_EQ((*lib)["unresolved"][0]["classification"], "provider-mismatch");
  EXPECT_EQ((*lib)["unresolved"][0]["fix"]["library"], torch);
  // The preloaded torch is not checked again, nor reported.
  EXPECT_EQ(library(doc, torch), nullptr);

  // Built from the headers of the torch that is loaded: clean.
  auto ok = run("env -u LD_LIBRARY_PATH " + kBin + args + quote(ext_ok));
  EXPECT_EQ(ok.status, 0) << ok.out;

  auto load = real_load(ext, {torch});
  EXPECT_NE(load.status, 0);
  EXPECT_NE(load.err.find(wanted), std::string::npos) << load.err;
  EXPECT_EQ(real_load(ext_ok, {torch}).status, 0);
}

TEST_F(Import, symbols_missing_from_one_owner_are_one_provider_mismatch_cause) {
  std::string torch = kImport + "/torch/lib/libtorch_cpu.so", ext = kImport + "/ext_older/libmusa_ext.so";
  std::string args = kQuiet + " --with " + quote(torch) + " ";
  auto q = run("env -u LD_LIBRARY_PATH " + kBin + args + "-q " + quote(ext));
  EXPECT_EQ(q.status, 1);
  EXPECT_EQ(q.out,
            "error: loading libmusa_ext.so would fail: 1 cause\n"
            "error: libmusa_ext.so was built against another version of libtorch_cpu.so: the loaded libtorch_cpu.so (" +
                torch + ", torch 2.0.0) lacks 2 symbols it needs\n");
  auto text = run("env -u LD_LIBRARY_PATH " + kBin + args + quote(ext));
  // Symbols in mangled-name order (_ZN2at11manual_seed... before _ZN2at18_GeneratorRegister...).
  EXPECT_NE(
      text.out.find(">>> provider-mismatch: at::manual_seed(int)\n>>> provider-mismatch: "
                    "at::_GeneratorRegister::_GeneratorRegister(std::function<at::Generator ()>)\n>>> fix: install the "
                    "version of torch that "
                    "libmusa_ext.so was built against, or rebuild libmusa_ext.so against the loaded libtorch_cpu.so "
                    "(torch 2.0.0)\n"),
      std::string::npos)
      << text.out;
  auto doc = json::parse(run("env -u LD_LIBRARY_PATH " + kBin + " --format json" + args + quote(ext)).out);
  ASSERT_EQ(doc["causes"].size(), 1u);
  EXPECT_EQ(doc["causes"][0]["kind"], "provider-mismatch");
  EXPECT_EQ(doc["causes"][0]["symbols"], 2);
  ASSERT_EQ(doc["libraries"][0]["unresolved"].size(), 2u) << doc["libraries"][0].dump();
  for (const auto& u : doc["libraries"][0]["unresolved"]) {
    EXPECT_EQ(u["classification"], "provider-mismatch");
    EXPECT_EQ(u["cause"], doc["causes"][0]["id"]);
  }
  EXPECT_NE(real_load(ext, {torch}).status, 0);
}

// The object and symbol the real loader stopped at ("<path>: undefined symbol: <name>"): our JSON
// report must list that symbol under that object (by file name: both found it through ld.so.cache).
void expect_loader_failure_reported(const std::string& loader_err, const json& doc) {
  size_t at = loader_err.find(": undefined symbol: ");
  ASSERT_NE(at, std::string::npos) << loader_err;
  size_t start = loader_err.rfind(' ', at);
  std::string object = loader_err.substr(start + 1, at - start - 1);
  std::string symbol = loader_err.substr(at + 20);
  symbol = symbol.substr(0, symbol.find_first_of("\n\r"));
  bool found = false;
  for (const auto& l : doc["libraries"]) {
    if (fs::path(l["path"].get<std::string>()).filename() != fs::path(object).filename()) continue;
    for (const auto& u : l["unresolved"]) found |= u["symbol"] == symbol;
  }
  EXPECT_TRUE(found) << "ld.so stopped at " << symbol << " in " << object << "; the report does not list it";
}

// --- Debian's torch, the real thing -------------------------------------------------------------

const std::string kLibDir = "/usr/lib/x86_64-linux-gnu";
const std::string kDebianTorch = "/usr/lib/python3/dist-packages/torch";

// The version Debian's torch package says it is, read here by the test from its version.py.
std::string debian_torch_version() {
  std::ifstream in(kDebianTorch + "/version.py");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("__version__ = '", 0) == 0) return line.substr(15, line.find('\'', 15) - 15);
  return "";
}

TEST(ImportReal, drift_against_debians_libc10_names_libc10_and_the_torch_version) {
  std::string c10 = kLibDir + "/libc10.so.1.13";
  if (!fs::exists(c10) || debian_torch_version().empty())
    MLC_SKIP() << "Debian's libtorch1.13 / python3-torch not installed";
  std::string ext = kImport + "/c10_drift/libc10_drift.so";
  auto text = run("env -u LD_LIBRARY_PATH " + kBin + kQuiet + " --with " + quote(c10) + " " + quote(ext));
  EXPECT_EQ(text.status, 1) << text.out << text.err;
  EXPECT_EQ(first_line(text.out), "error: loading libc10_drift.so would fail: 1 cause");
  EXPECT_NE(text.out.find(">>> provider-mismatch: built against another version of libc10.so.1.13: the loaded " + c10 +
                          ", torch " + debian_torch_version() + " (" + kDebianTorch + "/version.py) defines "),
            std::string::npos)
      << text.out;
  EXPECT_NE(
      text.out.find(" symbols of class c10::TensorImpl but not this one; its other members include c10::TensorImpl::"),
      std::string::npos)
      << text.out;
  if (!has_python()) MLC_SKIP() << "python3 not available for the ctypes oracle";
  auto load = real_load(ext, {c10});
  EXPECT_NE(load.status, 0);
  EXPECT_NE(load.err.find("release_resources_v2"), std::string::npos) << load.err;
}

// torchvision's _C is a real out-of-tree PyTorch extension: in place, with the interpreter that
// imports it, it loads, and we say so; with a libc10.so.1.13 that lacks almost everything first on
// LD_LIBRARY_PATH, it does not, and we say why once.
TEST(ImportReal, torchvision_extension_in_place_and_broken_agree_with_the_loader) {
  std::string ext;
  if (fs::exists("/usr/lib/python3/dist-packages/torchvision"))
    for (const auto& e : fs::directory_iterator("/usr/lib/python3/dist-packages/torchvision"))
      if (e.path().filename().string().rfind("_C.", 0) == 0 && e.path().extension() == ".so") ext = e.path().string();
  if (ext.empty() || !fs::exists("/usr/bin/python3")) MLC_SKIP() << "python3-torchvision not installed";
  // Debian's interpreter, whose extensions these are (the oracle too).
  std::string python = fs::canonical("/usr/bin/python3").string();
  std::string module = fs::path(ext).filename().string();
  auto clean = run("env -u LD_LIBRARY_PATH " + kBin + kQuiet + " --python=" + quote(python) + " " + quote(ext));
  auto load = real_load(ext, {}, "", python);
  EXPECT_EQ(clean.status == 0, load.status == 0) << clean.out << load.err;
  EXPECT_EQ(clean.status, 0) << clean.out;
  EXPECT_NE(clean.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions in "), std::string::npos);

  std::string fake = kImport + "/fake_c10";
  auto broken = run("env -u LD_LIBRARY_PATH " + kBin + kQuiet + " --python=" + quote(python) + " --library-path " +
                    quote(fake) + " " + quote(ext));
  auto broken_load = real_load(ext, {}, fake, python);
  EXPECT_NE(broken_load.status, 0) << "the stand-in libc10 breaks the real import";
  EXPECT_EQ(broken.status, 1) << broken.out;
  // torchvision loads _C with torch.ops.load_library (it exports no PyInit__C): a load, not an import.
  EXPECT_EQ(first_line(broken.out),
            "error: loading " + module + " would fail, in the import of torch it does first: 1 cause")
      << broken.out.substr(0, 2000);
  // The real loader stops at the first of them, in a dependency: we name it among the cause's symbols.
  EXPECT_NE(broken_load.err.find("/libtorch_cpu.so.1.13: undefined symbol: "), std::string::npos) << broken_load.err;
  EXPECT_NE(broken.out.find("error: libc10.so.1.13 from " + fake + "/libc10.so.1.13 (ld_library_path) lacks "),
            std::string::npos)
      << broken.out.substr(0, 4000);
  // The oracle loads _C into a bare interpreter (no `import torch` first): the same process is the
  // interpreter loaded first (--with) and _C's whole load checked.
  auto broken_json = run("env -u LD_LIBRARY_PATH " + kBin + kQuiet + " --format json --with " + quote(python) +
                         " --library-path " + quote(fake) + " " + quote(ext));
  expect_loader_failure_reported(broken_load.err, json::parse(broken_json.out));
}

TEST(ImportReal, torch_C_extension_in_place_agrees_with_the_loader) {
  std::string ext;
  if (fs::exists(kDebianTorch))
    for (const auto& e : fs::directory_iterator(kDebianTorch))
      if (e.path().filename().string().rfind("_C.cpython", 0) == 0 && e.path().extension() == ".so")
        ext = e.path().string();
  if (ext.empty() || !fs::exists("/usr/bin/python3")) MLC_SKIP() << "python3-torch not installed";
  std::string python = fs::canonical("/usr/bin/python3").string();
  auto r = run("env -u LD_LIBRARY_PATH " + kBin + kQuiet + " --python=" + quote(python) + " " + quote(ext));
  auto load = real_load(ext, {}, "", python);
  EXPECT_EQ(load.status, 0) << load.err;
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 4000);
  EXPECT_NE(r.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions in "), std::string::npos);

  // Broken on purpose: a libc10.so.1.13 that defines almost nothing first on LD_LIBRARY_PATH. torch's
  // _C is a Python extension module (PyInit__C): its headline says "importing".
  std::string fake = kImport + "/fake_c10";
  std::string module = fs::path(ext).filename().string();
  auto broken = run("env -u LD_LIBRARY_PATH " + kBin + kQuiet + " --python=" + quote(python) + " --library-path " +
                    quote(fake) + " " + quote(ext));
  auto broken_load = real_load(ext, {}, fake, python);
  EXPECT_NE(broken_load.status, 0);
  EXPECT_EQ(broken.status, 1);
  EXPECT_EQ(first_line(broken.out), "error: importing " + module + " would fail: 1 cause")
      << broken.out.substr(0, 2000);
  // The oracle loads _C into a bare interpreter (no `import torch` first): the same process is the
  // interpreter loaded first (--with) and _C's whole load checked.
  auto broken_json = run("env -u LD_LIBRARY_PATH " + kBin + kQuiet + " --format json --with " + quote(python) +
                         " --library-path " + quote(fake) + " " + quote(ext));
  expect_loader_failure_reported(broken_load.err, json::parse(broken_json.out));
}

}  // namespace
}  // namespace mlc
