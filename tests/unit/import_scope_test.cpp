// The loader's scopes and search order where users met a wrong green: an empty
// LD_LIBRARY_PATH entry in any position, torch/_C imported RTLD_LOCAL, --with LIB:local against
// RTLD_GLOBAL, and the import of torch that an extension's import does first. Every case is also
// loaded by the real loader (ctypes.CDLL(..., RTLD_NOW) or an import in a fresh /usr/bin/python3),
// which must fail exactly when musa-linkcheck exits 1; the tool's lines are asserted as well.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mlc {
namespace {

using nlohmann::json;
using test::quote;
using test::run;
namespace fs = std::filesystem;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kPython = "/usr/bin/python3";
const std::string kQuiet = " --cuda-home '' --no-cache";

// Compiles a C file into a shared object; `extra` holds the link line's tail (libraries, -Wl flags).
void build(const std::string& dir, const std::string& out, const std::string& code, const std::string& extra = "") {
  test::write_file(dir + "/src.c", code);
  auto r = run("gcc -shared -fPIC -o " + quote(out) + " " + quote(dir + "/src.c") + " " + extra);
  ASSERT_EQ(r.status, 0) << r.err;
}

// The real loader in a fresh process: the preloads with their mode, then `path` with RTLD_NOW.
test::CommandResult real_load(const std::string& cwd, const std::string& llp, const std::string& path,
                              const std::vector<std::pair<std::string, bool>>& preloads = {}) {
  std::string code = "import ctypes, os\n";
  for (const auto& [p, global] : preloads)
    code +=
        "ctypes.CDLL(" + json(p).dump() + ", os.RTLD_NOW | " + (global ? "os.RTLD_GLOBAL" : "os.RTLD_LOCAL") + ")\n";
  code += "ctypes.CDLL(" + json(path).dump() + ", os.RTLD_NOW)\n";
  return run("cd " + quote(cwd) + " && env LD_LIBRARY_PATH=" + quote(llp) + " " + kPython + " -c " + quote(code));
}

test::CommandResult tool(const std::string& cwd, const std::string& llp, const std::string& args) {
  return run("cd " + quote(cwd) + " && env LD_LIBRARY_PATH=" + quote(llp) + " " + kBin + kQuiet + " " + args);
}

// A user library that needs libx.so.1 and calls x_new(); a good libx defines it, a stale copy does not.
struct StaleWorld {
  std::string root, good, stale, user;
  StaleWorld() {
    root = test::scratch_dir("scope-stale");
    good = root + "/good";
    stale = root + "/stale";
    fs::create_directories(good);
    fs::create_directories(stale);
    build(root, good + "/libx.so.1", "int x_old(void) { return 1; }\nint x_new(void) { return 2; }\n",
          "-Wl,-soname,libx.so.1");
    build(root, stale + "/libx.so.1", "int x_old(void) { return 1; }\n", "-Wl,-soname,libx.so.1");
    user = root + "/libuser.so";
    build(root, user, "extern int x_new(void);\nint use(void) { return x_new(); }\n",
          "-Wl,--no-as-needed " + quote(good + "/libx.so.1"));
  }
};

// glibc's fillin_rpath: an empty element is "./", the current directory, wherever it stands. A
// leading one is what `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/lib` makes of an unset variable.
TEST(LibraryPathEntries, an_empty_entry_is_the_current_directory_in_every_position) {
  StaleWorld w;
  for (const std::string& llp : {":" + w.good, "/nonexistent::" + w.good, std::string("/nonexistent:")}) {
    SCOPED_TRACE("LD_LIBRARY_PATH=" + llp);
    auto real = real_load(w.stale, llp, w.user);
    ASSERT_NE(real.status, 0) << "the stale copy in the current directory is taken first";
    EXPECT_NE(real.err.find("undefined symbol: x_new"), std::string::npos) << real.err;
    auto r = tool(w.stale, llp, quote(w.user));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "error: loading libuser.so would fail: 1 cause") << r.out;
    auto doc = json::parse(tool(w.stale, llp, "--format json " + quote(w.user)).out);
    const auto& lib = doc["libraries"][0];
    // Found in the working directory; the report's paths are absolute (docs/contract.md).
    EXPECT_EQ(lib["needed"][0]["path"], w.stale + "/libx.so.1") << lib["needed"].dump();
    EXPECT_EQ(lib["needed"][0]["how"], "ld_library_path");
    ASSERT_EQ(lib["unresolved"].size(), 1u) << lib.dump();
    EXPECT_EQ(lib["unresolved"][0]["symbol"], "x_new");
  }
  // Where the good copy is on the path too, the stale one is named as the cause.
  auto shadowed = tool(w.stale, ":" + w.good, quote(w.user));
  EXPECT_NE(shadowed.out.find("error: libx.so.1 from " + w.stale + "/libx.so.1 (ld_library_path) lacks 1 symbol that " +
                              w.good + "/libx.so.1 (ld_library_path) has\n>>> shadowed: x_new\n"),
            std::string::npos)
      << shadowed.out;
  // Without the empty entry the good copy is found, by the loader and by us.
  EXPECT_EQ(real_load(w.stale, w.good, w.user).status, 0);
  auto clean = tool(w.stale, w.good, quote(w.user));
  EXPECT_EQ(clean.status, 0) << clean.out;
}

// dl-open.c: a library opened RTLD_LOCAL joins no global scope; a later load sees its symbols only
// through its own dependencies. RTLD_GLOBAL (the --with default) puts them in the global scope.
TEST(LoadScopes, with_local_is_not_in_the_global_scope_and_with_global_is) {
  std::string root = test::scratch_dir("scope-with");
  build(root, root + "/libprov.so", "int prov(void) { return 7; }\n", "-Wl,-soname,libprov.so");
  build(root, root + "/libuser.so", "extern int prov(void);\nint use(void) { return prov(); }\n");
  std::string prov = root + "/libprov.so", user = root + "/libuser.so";

  auto local_real = real_load(root, "", user, {{prov, false}});
  ASSERT_NE(local_real.status, 0);
  EXPECT_NE(local_real.err.find("undefined symbol: prov"), std::string::npos) << local_real.err;
  auto local = tool(root, "", "--with " + quote(prov + ":local") + " " + quote(user));
  EXPECT_EQ(local.status, 1) << local.out;
  EXPECT_NE(local.out.find(">>> unlinked-library: defined in " + prov + ", which " + prov +
                           " loaded with RTLD_LOCAL; this library does not link libprov.so, so that definition is "
                           "not in its scope\n"),
            std::string::npos)
      << local.out;
  EXPECT_NE(local.out.find(">>> fix: link libprov.so: target_link_libraries("), std::string::npos) << local.out;

  EXPECT_EQ(real_load(root, "", user, {{prov, true}}).status, 0);
  for (const std::string& with : {prov, prov + ":global"}) {
    auto global = tool(root, "", "--with " + quote(with) + " " + quote(user));
    EXPECT_EQ(global.status, 0) << with << "\n" << global.out;
  }
}

// Python imports torch/_C with RTLD_LOCAL: an extension that links only libc10 cannot reach
// at::globalContext() in libtorch_cpu, though torch loaded it (Debian's torch, a real import).
TEST(LoadScopes, an_extension_linking_only_libc10_does_not_see_the_libtorch_cpu_torch_imported) {
  const std::string c10 = "/usr/lib/x86_64-linux-gnu/libc10.so.1.13";
  if (!fs::exists(c10) || !fs::exists("/usr/lib/python3/dist-packages/torch/__init__.py"))
    MLC_SKIP() << "Debian's python3-torch is not installed";
  std::string root = test::scratch_dir("scope-torch");
  fs::create_directories(root + "/pkg");
  test::write_file(root + "/ext.cpp",
                   "namespace at { struct Context; Context& globalContext(); }\n"
                   "extern \"C\" void* PyInit__ext() { return &at::globalContext(); }\n");
  std::string module = root + "/pkg/_ext.cpython-311-x86_64-linux-gnu.so";
  auto cc =
      run("g++ -shared -fPIC -o " + quote(module) + " " + quote(root + "/ext.cpp") + " -Wl,--no-as-needed " + c10);
  ASSERT_EQ(cc.status, 0) << cc.err;
  test::write_file(root + "/pkg/__init__.py", "import torch\nfrom . import _ext\n");

  auto real = run("cd " + quote(root) + " && " + kPython + " -c 'import pkg'");
  ASSERT_NE(real.status, 0) << "the real import succeeds?";
  EXPECT_NE(real.err.find("undefined symbol: _ZN2at13globalContextEv"), std::string::npos) << real.err;

  auto r = run(kBin + kQuiet + " --python=" + kPython + " " + quote(module));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "error: importing _ext.cpython-311-x86_64-linux-gnu.so would fail: 1 cause");
  EXPECT_NE(r.out.find("error: undefined symbol: at::globalContext()\n"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find(">>> unlinked-library: defined in /lib/x86_64-linux-gnu/libtorch_cpu.so.1.13, which "
                 "/usr/lib/python3/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so loaded with RTLD_LOCAL"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(">>> fix: link libtorch_cpu.so.1.13: target_link_libraries("), std::string::npos) << r.out;
}

// The import of an extension whose package imports torch first includes that import: a torch whose
// libtorch_python needs a missing libc10.so.2.0 fails `import torch`, and that is the headline.
TEST(LoadScopes, the_import_of_torch_done_first_is_checked_and_its_failure_heads_the_report) {
  std::string root = test::scratch_dir("scope-torch-first");
  std::string site = root + "/site", lib = site + "/torch/lib";
  fs::create_directories(lib);
  fs::create_directories(site + "/ext");
  build(root, root + "/libc10.so.2.0", "int c10_thing(void) { return 1; }\n", "-Wl,-soname,libc10.so.2.0");
  build(root, lib + "/libtorch_python.so", "extern int c10_thing(void);\nint tp(void) { return c10_thing(); }\n",
        "-Wl,-soname,libtorch_python.so -Wl,--no-as-needed " + quote(root + "/libc10.so.2.0"));
  fs::remove(root + "/libc10.so.2.0");
  build(root, site + "/torch/_C.cpython-311-x86_64-linux-gnu.so",
        "extern int tp(void);\nvoid* PyInit__C(void) { tp(); return 0; }\n",
        "-Wl,-rpath,'$ORIGIN/lib' " + quote(lib + "/libtorch_python.so"));
  test::write_file(site + "/torch/__init__.py", "from torch._C import *\n");
  test::write_file(site + "/torch/version.py", "__version__ = '2.0.0'\n");
  std::string module = site + "/ext/m.cpython-311-x86_64-linux-gnu.so";
  build(root, module, "void* PyInit_m(void) { return 0; }\n");
  test::write_file(site + "/ext/__init__.py", "import torch\nfrom . import m\n");

  auto real = run("cd " + quote(site) + " && " + kPython + " -c 'import ext'");
  ASSERT_NE(real.status, 0);
  EXPECT_NE(real.err.find("libc10.so.2.0: cannot open shared object file"), std::string::npos) << real.err;

  auto r = run("env PYTHONPATH=" + quote(site) + " " + kBin + kQuiet + " --python=" + kPython + " " + quote(module));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(
      r.out.substr(0, r.out.find('\n')),
      "error: importing m.cpython-311-x86_64-linux-gnu.so would fail, in the import of torch it does first: 1 cause");
  EXPECT_NE(r.out.find("error: library not found: libc10.so.2.0 (needed by libtorch_python.so)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(">>> needed by " + lib +
                       "/libtorch_python.so (loaded by the import of torch that importing "
                       "m.cpython-311-x86_64-linux-gnu.so does first)\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace mlc
