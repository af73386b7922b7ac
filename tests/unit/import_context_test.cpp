// The natural call: a file checked with no flag is checked in the process its import really makes. The
// import of torch its package does first, torch's own scopes, the interpreter's site directories: all read
// from the files. The real loader is the oracle: ctypes doing what `import torch` does (the global deps
// with RTLD_GLOBAL, then _C with RTLD_LOCAL) before the file, and Debian's own python3 importing Debian's
// packages.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "python/import_plan.h"
#include "python/interpreter.h"
#include "python/package.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::quote;
using test::read_file;
using test::run;
using test::write_file;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kPython = "/usr/bin/python3";

void copy_tree(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// The real loader doing what `import torch` does before the file (torch/__init__.py: _load_global_deps with
// RTLD_GLOBAL, then `from torch._C import *`, RTLD_LOCAL), then loading `file` with RTLD_NOW; "ok", or the
// loader's complaint. Without a torch directory, the file alone in a bare interpreter.
std::string real_import(const std::string& torch_dir, const std::string& file) {
  std::string py = "import ctypes, os, sys\ntry:\n";
  if (!torch_dir.empty()) {
    py +=
        "    d = os.path.join(sys.argv[1], 'lib', 'libtorch_global_deps.so')\n"
        "    if os.path.exists(d): ctypes.CDLL(d, os.RTLD_NOW | os.RTLD_GLOBAL)\n"
        "    ctypes.CDLL(os.path.join(sys.argv[1], '_C.so'), os.RTLD_NOW)\n";
  }
  py += "    ctypes.CDLL(sys.argv[2], os.RTLD_NOW)\n    print('ok')\nexcept OSError as e:\n    print(e)\n";
  auto r = run("env -u LD_LIBRARY_PATH " + kPython + " -c " + quote(py) + " " +
               quote(torch_dir.empty() ? "-" : torch_dir) + " " + quote(file));
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The real loader loading `first`, then `file` (both RTLD_NOW, in a bare interpreter): "ok", or its complaint.
// A library whose soname `first` answers loads so, as under a program that dlopens `first` by its path.
std::string loaded_after(const std::string& first, const std::string& file) {
  auto r =
      run("env -u LD_LIBRARY_PATH " + kPython + " -c " +
          quote("import ctypes, os, sys\ntry:\n    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\n"
                "    ctypes.CDLL(sys.argv[2], os.RTLD_NOW)\n    print('ok')\nexcept OSError as e:\n    print(e)\n") +
          " " + quote(first) + " " + quote(file));
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string linkcheck(const std::string& args) { return "env -u LD_LIBRARY_PATH " + kBin + " --no-cache " + args; }

// site/torch with libc10.so (pyimport fixtures) and site/myext, whose _C.so needs libc10.so by name only
// and has no search path to it: it loads only because torch's import loaded libc10.so first.
std::string pyimport_site(const std::string& name, const std::string& myext_init) {
  std::string site = test::scratch_dir(name) + "/site";
  copy_tree(kFix + "/pyimport/torch", site + "/torch");
  copy_tree(kFix + "/pyimport/myext", site + "/myext");
  write_file(site + "/torch/__init__.py", "from torch._C import *\n");
  write_file(site + "/torch/version.py", "__version__ = '9.9.1'\n");
  write_file(site + "/myext/__init__.py", myext_init);
  return site;
}

TEST(ImportContext, an_extension_whose_package_imports_torch_is_checked_after_the_torch_beside_it) {
  std::string site = pyimport_site("beside", "import torch\nfrom myext import _C\n");
  const std::string ext = site + "/myext/_C.so";
  ASSERT_EQ(real_import(site + "/torch", ext), "ok");
  auto r = run(linkcheck(quote(ext)));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "note: checked as imported after torch 9.9.1 from " + site +
                       "/torch: myext/__init__.py imports it\n"
                       "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  auto j = json::parse(run(linkcheck("--format json " + quote(ext))).out);
  EXPECT_EQ(j["libraries"][0]["imported_after"], json({{"torch", site + "/torch"},
                                                       {"version", "9.9.1"},
                                                       {"reason", "package-imports-torch"},
                                                       {"evidence", "myext/__init__.py"}}));
}

// The package imports torch through a module of its own (`from .ops import *`, ops.py imports torch);
// an import inside a function or a docstring does not run on import.
TEST(ImportContext, the_chain_is_followed_through_the_packages_own_modules_at_module_level) {
  std::string site = pyimport_site("through-module", "\"\"\"Docs.\nimport torch\n\"\"\"\nfrom .ops import *\n");
  write_file(site + "/myext/ops.py",
             "def later():\n    import torch\ntry:\n    import os, torch\nexcept ImportError:\n    pass\n");
  auto chain = python::package_chain(site + "/myext/_C.so");
  ASSERT_EQ(chain.packages, std::vector<std::string>{site + "/myext"});
  EXPECT_EQ(python::module_importing(chain, "torch"), site + "/myext/ops.py");
  // The oracle: Python runs `import myext`, with torch and torchvision stood in by empty modules that
  // record their import (the fixture's torch has no PyInit), and says whether torch was imported.
  const auto python_imports_torch = [&] {
    const std::string py =
        "import sys, types, importlib.abc, importlib.machinery\n"
        "class Stand(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        return importlib.machinery.ModuleSpec(name, self) if name in ('torch', 'torchvision') else None\n"
        "    def create_module(self, spec): return types.ModuleType(spec.name)\n"
        "    def exec_module(self, module): pass\n"
        "sys.meta_path.insert(0, Stand())\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import myext\n"
        "print('torch' in sys.modules)\n";
    return run(kPython + " -c " + quote(py) + " " + quote(site)).out;
  };
  EXPECT_EQ(python_imports_torch(), "True\n");
  // A function's body does not run on import; a class body does (Python executes it to make the class),
  // a method's body inside it does not.
  write_file(site + "/myext/ops.py",
             "def later():\n    import torch\nimport torchvision\nclass A:\n  def m(self):\n    import torch\n");
  EXPECT_EQ(python_imports_torch(), "False\n");
  EXPECT_EQ(python::module_importing(chain, "torch"), std::nullopt);
  write_file(site + "/myext/ops.py", "def later():\n    import torch\nclass A:\n  import torch\n");
  EXPECT_EQ(python_imports_torch(), "True\n");
  EXPECT_EQ(python::module_importing(chain, "torch"), site + "/myext/ops.py");
  EXPECT_TRUE(python::line_imports("from torch.utils import cpp_extension", "torch"));
  EXPECT_TRUE(python::line_imports("import numpy as np, torch.nn as nn", "torch"));
  EXPECT_FALSE(python::line_imports("import torchvision", "torch"));
  EXPECT_FALSE(python::line_imports("from torchaudio import x", "torch"));
}

// Without an import of torch in its package, a file whose DT_NEEDED names torch's libraries is still
// loaded only after torch (nothing else provides libc10.so): that is the reason given.
TEST(ImportContext, a_file_needing_torchs_libraries_is_checked_after_torch_and_says_so) {
  std::string site = pyimport_site("needs", "from myext import _C\n");
  ASSERT_EQ(real_import(site + "/torch", site + "/myext/_C.so"), "ok");
  // Alone it does not load: no libc10.so is found, or the system's (Debian's libtorch) lacks c10_old.
  ASSERT_NE(real_import("", site + "/myext/_C.so"), "ok");
  auto r = run(linkcheck(quote(site + "/myext/_C.so")));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "note: checked as imported after torch 9.9.1 from " + site +
                                                   "/torch: it needs libc10.so, which the import of torch loads");
}

// torch 2.x's libtorch_nvshmem.so uses libc10_cuda.so without linking it: in its only real context, the
// closure of torch/_C (one RTLD_LOCAL scope), it loads. That is its verdict; loading it alone fails, which
// is a warning naming the library it does not link.
TEST(ImportContext, a_file_torchs_import_loads_takes_the_imports_verdict_and_a_warning_for_loading_it_alone) {
  std::string site = test::scratch_dir("scope") + "/site";
  copy_tree(kFix + "/pyscope/torch", site + "/torch");
  write_file(site + "/torch/__init__.py", "from torch._C import *\n");
  const std::string lib = site + "/torch/lib/libtorch_nvshmem.so";
  ASSERT_EQ(real_import(site + "/torch", lib), "ok");
  ASSERT_EQ(real_import("", lib), lib + ": undefined symbol: c10_cuda_f");
  auto r = run(linkcheck(quote(lib)));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "note: checked as imported after torch from " + site +
                       "/torch: it is part of torch, whose import runs first\n"
                       "warning: " +
                       lib +
                       ": loads as part of the import of torch, but loading it alone fails: it does not "
                       "link libc10_cuda.so, which that import loads first\n"
                       "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  // The whole environment: nothing fails; the warning stands.
  auto dir = run(linkcheck(quote(site)));
  EXPECT_EQ(dir.status, 0) << dir.out;
  EXPECT_NE(dir.out.find("0 of 5 files would fail to load\n"), std::string::npos) << dir.out;
}

// torch's global deps bring the system's libgomp with RTLD_GLOBAL: an extension of a package that imports
// torch takes omp_* from it without linking it, and its import works.
TEST(ImportContext, an_extension_takes_what_torchs_global_deps_load_globally) {
  std::string site = test::scratch_dir("gomp") + "/site";
  copy_tree(kFix + "/pyscope/torch", site + "/torch");
  copy_tree(kFix + "/pyscope/ompext", site + "/ompext");
  write_file(site + "/torch/__init__.py", "from torch._C import *\n");
  write_file(site + "/ompext/__init__.py", "import torch\nfrom . import _C\n");
  const std::string ext = site + "/ompext/_C.so";
  ASSERT_EQ(real_import(site + "/torch", ext), "ok");
  ASSERT_NE(real_import("", ext), "ok");
  auto r = run(linkcheck("-q " + quote(ext)));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "");
}

// The tests that run the interpreter itself (the oracle of what it puts on sys.path and imports): checked once
// for each.
class ImportContextPython : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython)) MLC_SKIP() << kPython << " is not installed (python3)";
  }
};

// The interpreter's site directories, read from its files, are the ones it puts on sys.path.
TEST_F(ImportContextPython, an_interpreters_site_directories_are_read_as_it_puts_them_on_sys_path) {
  auto site_dirs_of = [](const std::string& exe) {
    auto r = run(quote(exe) + " -c " +
                 quote("import sys\nfor p in sys.path:\n    if p.endswith(('site-packages', "
                       "'dist-packages')): print(p)"));
    std::vector<std::string> out;
    std::istringstream lines(r.out);
    for (std::string l; std::getline(lines, l);)
      if (fs::is_directory(l)) out.push_back(l);
    return out;
  };
  EXPECT_EQ(python::read_sites(kPython).site_dirs, site_dirs_of(kPython));
  EXPECT_EQ(python::read_sites(kPython).version, "3.11");
  EXPECT_FALSE(python::read_sites(kPython).asked);  // read from its files, never run
  EXPECT_EQ(python::read_sites(kPython).executable, kPython);
  std::string venv = test::scratch_dir("venv") + "/v";
  ASSERT_EQ(run(kPython + " -m venv --without-pip " + quote(venv)).status, 0);
  EXPECT_EQ(python::read_sites(venv + "/bin/python3").site_dirs, site_dirs_of(venv + "/bin/python3"));
  auto cfg = read_file(venv + "/pyvenv.cfg");
  cfg.replace(cfg.find("include-system-site-packages = false"), 36, "include-system-site-packages = true");
  write_file(venv + "/pyvenv.cfg", cfg);
  EXPECT_EQ(python::read_sites(venv + "/bin/python3").site_dirs, site_dirs_of(venv + "/bin/python3"));
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

// gcc, in the scratch area: the C source text, and the file it builds.
void cc(const std::string& dir, const std::string& source, const std::string& out, const std::string& flags) {
  write_file(dir + "/src.c", source);
  auto r = run("gcc -O1 -fPIC -o " + quote(out) + " " + quote(dir + "/src.c") + " " + flags);
  ASSERT_EQ(r.status, 0) << r.err;
}

// A library its author installed beside the one that needs it, with no search path to it: the load fails,
// and what fixes it is the search path ($ORIGIN), not an install.
TEST(ImportContext, a_library_found_beside_it_but_off_its_search_path_is_fixed_by_runpath_origin) {
  std::string dir = test::scratch_dir("beside");
  fs::create_directories(dir + "/opt/lib");
  cc(dir, "int beside_f(void) { return 1; }\n", dir + "/opt/lib/libbeside.so.1", "-shared -Wl,-soname,libbeside.so.1");
  cc(dir, "int beside_f(void);\nint user_f(void) { return beside_f(); }\n", dir + "/opt/lib/libuser.so",
     "-shared " + quote(dir + "/opt/lib/libbeside.so.1"));
  const std::string user = dir + "/opt/lib/libuser.so";
  ASSERT_EQ(real_import("", user), "libbeside.so.1: cannot open shared object file: No such file or directory");
  auto r = run(linkcheck("-q " + quote(user)));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "error: loading libuser.so would fail: 1 cause\n"
            "error: library not found: libbeside.so.1 (needed by libuser.so): found beside it (" +
                dir + "/opt/lib/libbeside.so.1), but not on its search path\n");
  auto full = run(linkcheck(quote(user)));
  EXPECT_NE(full.out.find(">>> fix: add RUNPATH $ORIGIN to libuser.so (link it with -Wl,-rpath,'$ORIGIN', or patchelf "
                          "--add-rpath '$ORIGIN' " +
                          user + ")\n"),
            std::string::npos)
      << full.out;
  // The fix, as the line says: linked with that RUNPATH, the library loads, and the tool agrees.
  cc(dir, "int beside_f(void);\nint user_f(void) { return beside_f(); }\n", user,
     "-shared -Wl,-rpath,'$ORIGIN' " + quote(dir + "/opt/lib/libbeside.so.1"));
  ASSERT_EQ(real_import("", user), "ok");
  EXPECT_EQ(run(linkcheck("-q " + quote(user))).status, 0);
}

// A tree whose libraries need one that sits in the tree, off their search path: a JDK's lib/libjava.so and
// lib/libzip.so need lib/server/libjvm.so, which only the java launcher loads (by its path) before them. The
// headline says the run checks that very library rather than "no other version"; the fix is RUNPATH
// $ORIGIN/server added to what they have, or the copy loaded first. The oracles: ctypes.CDLL fails as the
// headline says, loads once the copy is loaded first, and loads after the fix's own patchelf command.
TEST(ImportContext, a_needed_library_in_the_tree_checked_but_off_the_search_path_is_found_there) {
  if (run("command -v patchelf").status != 0) MLC_SKIP() << "patchelf is not installed (tools/dev.sh TEST_PACKAGES)";
  const std::string dir = test::scratch_dir("checked"), lib = dir + "/jdk/lib";
  fs::create_directories(lib + "/server");
  cc(dir, "int vm_f(void) { return 1; }\n", lib + "/server/libvm.so", "-shared -Wl,-soname,libvm.so");
  cc(dir, "int aux_f(void) { return 2; }\n", lib + "/libaux.so", "-shared -Wl,-soname,libaux.so");
  for (const char* user : {"libjava", "libzip"})
    cc(dir, "int vm_f(void);\nint aux_f(void);\nint " + std::string(user) + "_f(void) { return vm_f() + aux_f(); }\n",
       lib + "/" + user + ".so",
       "-shared -Wl,-rpath,'$ORIGIN' " + quote(lib + "/server/libvm.so") + " " + quote(lib + "/libaux.so"));
  // A needer one level down takes the path from its own directory.
  fs::create_directories(lib + "/sub");
  cc(dir, "int vm_f(void);\nint sub_f(void) { return vm_f(); }\n", lib + "/sub/libsub.so",
     "-shared " + quote(lib + "/server/libvm.so"));
  const std::string java = lib + "/libjava.so", copy = lib + "/server/libvm.so";
  ASSERT_EQ(real_import("", java), "libvm.so: cannot open shared object file: No such file or directory");
  ASSERT_EQ(loaded_after(copy, java), "ok");

  auto r = run(linkcheck("-q " + quote(lib)));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("error: library not found: libvm.so (needed by libjava.so, libzip.so and libsub.so): found "
                       "among the files checked (" +
                       copy + "), but not on their search path\n"),
            std::string::npos)
      << r.out;
  auto full = run(linkcheck(quote(lib)));
  EXPECT_NE(full.out.find(">>> fix: add RUNPATH $ORIGIN/server to libjava.so and libzip.so, and RUNPATH "
                          "$ORIGIN/../server to libsub.so (link each with its -Wl,-rpath, or patchelf --add-rpath with "
                          "its path), or load " +
                          copy + " before them: its soname libvm.so then answers the need\n"),
            std::string::npos)
      << full.out;
  auto j = json::parse(run(linkcheck("--format json " + quote(lib))).out);
  const auto fix_of = [&](const std::string& library) {  // the fix of its unresolved vm_f, "" when none
    for (const auto& l : j["libraries"])
      if (l["path"] == library)
        for (const auto& u : l["unresolved"])
          if (u["symbol"] == "vm_f") return u["fix"]["detail"].get<std::string>();
    return std::string();
  };
  for (const auto& c : j["causes"])
    if (c["kind"] == "missing-library") {
      ASSERT_EQ(c["others"].size(), 1u) << c.dump();
      EXPECT_EQ(c["others"][0]["path"], copy);
      EXPECT_EQ(c["others"][0]["how"], "checked");
    }
  const std::string command = "patchelf --add-rpath '$ORIGIN/server' " + java;
  EXPECT_EQ(fix_of(java), "add RUNPATH $ORIGIN/server to libjava.so (link it with -Wl,-rpath,'$ORIGIN/server', or " +
                              command + "), or load " + copy + " before it: its soname libvm.so then answers the need");
  // The fix, as the line says: patchelf adds the path and keeps $ORIGIN (libaux.so still loads from there).
  ASSERT_EQ(run(command).status, 0);
  ASSERT_EQ(real_import("", java), "ok");
  EXPECT_EQ(run(linkcheck("-q " + quote(java))).status, 0);
  // And one level down, the path its own fix gives.
  const std::string sub = lib + "/sub/libsub.so";
  const std::string sub_fix = fix_of(sub);
  EXPECT_NE(sub_fix.find("patchelf --add-rpath '$ORIGIN/../server' " + sub + ")"), std::string::npos) << sub_fix;
  ASSERT_EQ(run("patchelf --add-rpath '$ORIGIN/../server' " + sub).status, 0);
  ASSERT_EQ(real_import("", sub), "ok");
  // With libzip.so patched as the cause's fix says of it, the whole tree loads.
  ASSERT_EQ(run("patchelf --add-rpath '$ORIGIN/server' " + quote(lib + "/libzip.so")).status, 0);
  EXPECT_EQ(run(linkcheck("-q " + quote(lib))).status, 0);
}

// Real material: Debian's OpenJDK, as installed. Its lib/ holds 38 libraries and lib/server/libjvm.so, which 25
// of them need and none finds (their RPATH is $ORIGIN): the java launcher loads it first, by its path. The
// run over lib/ names that copy as checked there, not as "no other version"; ctypes is the oracle both ways.
TEST(ImportContext, debians_openjdk_lib_names_its_server_libjvm_as_checked_there) {
  std::string lib;
  std::error_code ec;
  for (const auto& jdk : fs::directory_iterator("/usr/lib/jvm", ec))  // Debian's java-17-openjdk-amd64
    if (jdk.path().filename().string().starts_with("java-") && !fs::is_symlink(jdk.path()) &&
        fs::exists(jdk.path() / "lib/server/libjvm.so") && fs::exists(jdk.path() / "lib/libjava.so"))
      lib = (jdk.path() / "lib").string();
  if (lib.empty()) MLC_SKIP() << "no OpenJDK under /usr/lib/jvm (Debian's openjdk-17-jre-headless is not installed)";
  const std::string java = lib + "/libjava.so", jvm = lib + "/server/libjvm.so";
  ASSERT_EQ(real_import("", java), "libjvm.so: cannot open shared object file: No such file or directory");
  ASSERT_EQ(loaded_after(jvm, java), "ok");
  auto r = run(linkcheck("--format json " + quote(lib)));
  EXPECT_EQ(r.status, 1) << r.err;
  auto j = json::parse(r.out);
  bool told = false;
  for (const auto& c : j["causes"])
    if (c["kind"] == "missing-library" && c["library"] == "libjvm.so") {
      told = true;
      ASSERT_FALSE(c["others"].empty()) << c.dump();
      EXPECT_EQ(c["others"][0]["path"], jvm);
      EXPECT_EQ(c["others"][0]["how"], "checked");
      EXPECT_NE(std::find(c["needed_by"].begin(), c["needed_by"].end(), java), c["needed_by"].end()) << c.dump();
    }
  EXPECT_TRUE(told) << r.out.substr(0, 2000);
  int targets = 0;
  for (const auto& l : j["libraries"])
    if (l["path"] == java && l["role"] == "target") {
      ++targets;
      EXPECT_EQ(l["loads"], false);
    }
  EXPECT_EQ(targets, 1);
}

// A plugin takes what its program exports (built with -rdynamic), as tc's plugins take get_u32 from tc: in
// the program that loads it, it loads; the program named like its directory is that host.
TEST(ImportContext, a_plugin_is_checked_as_loaded_into_the_program_that_exports_what_it_uses) {
  std::string dir = test::scratch_dir("plugin");
  fs::create_directories(dir + "/app/bin");
  fs::create_directories(dir + "/app/lib/plugtool");
  const std::string program = dir + "/app/bin/plugtool", plugin = dir + "/app/lib/plugtool/m_one.so";
  cc(dir, "int host_api_f(void);\nint plugin_f(void) { return host_api_f(); }\n", plugin, "-shared");
  cc(dir,
     "#include <dlfcn.h>\n#include <stdio.h>\nint host_api_f(void) { return 7; }\n"
     "int main(int argc, char** argv) { void* h = dlopen(argv[1], RTLD_NOW);\n"
     "  if (!h) { printf(\"%s\\n\", dlerror()); return 1; }\n  printf(\"ok\\n\"); return 0; }\n",
     program, "-rdynamic -ldl");
  EXPECT_EQ(run(quote(program) + " " + quote(plugin)).out, "ok\n");
  ASSERT_EQ(real_import("", plugin), plugin + ": undefined symbol: host_api_f");
  auto r = run(linkcheck(quote(plugin)));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "note: " + plugin + " is a plugin of " + program +
                       ", which exports what it uses: checked as loaded into it\n"
                       "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
}

// Debian's tc plugins take addattr_l, get_u32... from /usr/sbin/tc (its exports are the oracle): never a
// fix asking for another libc.
TEST(ImportContext, debians_tc_plugin_is_checked_in_tc_not_blamed_on_libc) {
  const std::string plugin = "/usr/lib/x86_64-linux-gnu/tc/m_xt.so";
  if (!fs::exists(plugin) || !fs::exists("/usr/sbin/tc")) MLC_SKIP() << "Debian's iproute2 is not installed";
  // The real loader: the plugin bound at once inside tc (preloaded into it, LD_BIND_NOW) loads, and tc
  // runs; loaded alone, it does not.
  auto inside = run("LD_BIND_NOW=1 LD_PRELOAD=" + quote(plugin) + " /usr/sbin/tc -V");
  ASSERT_EQ(inside.status, 0) << inside.err;
  ASSERT_NE(inside.out.find("tc utility"), std::string::npos) << inside.out;
  ASSERT_NE(real_import("", plugin).find(plugin + ": undefined symbol: "), std::string::npos);
  auto r = run(linkcheck(quote(plugin)));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: " + plugin +
                       " is a plugin of /usr/sbin/tc, which exports what it uses: checked as loaded into it\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("libc.so.6"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

// A --python that cannot answer (a typo, a program that fails, one that hangs) is one line naming it, and
// the files are checked as without it: the interpreter on PATH hosts the extension, nothing is lost.
TEST_F(ImportContextPython, a_python_that_fails_is_one_error_and_the_check_goes_on_without_it) {
  const std::string ext = kFix + "/pyext/_pyext.so";
  std::string dir = test::scratch_dir("badpython");
  write_file(dir + "/hang", "#!/bin/sh\nsleep 60\n");
  fs::permissions(dir + "/hang", fs::perms::owner_all);
  const std::string env = "PATH=/usr/bin:/bin MUSA_LINKCHECK_PYTHON_TIMEOUT=1 ";
  const std::string without = run(env + kBin + " --no-cache " + quote(ext)).out;
  ASSERT_EQ(real_import("", ext), "ok");  // the interpreter on PATH loads it: the verdict without --python
  ASSERT_NE(without.find("0 undefined symbols"), std::string::npos) << without;
  for (const auto& [python, why] : std::vector<std::pair<std::string, std::string>>{
           {"/nonexistent/python3", "the Python interpreter cannot run: No such file or directory"},
           {"/bin/false", "the Python interpreter exited with status 1"},
           {dir + "/hang", "the Python interpreter did not answer within 1 s (it and its children were killed)"}}) {
    auto r = run(env + kBin + " --no-cache --python=" + quote(python) + " " + quote(ext));
    EXPECT_EQ(r.status, 2) << python;
    EXPECT_EQ(r.err, "musa-linkcheck: error: " + python + ": " + why + "\n");
    EXPECT_EQ(r.out, without) << python;
  }
}

// An extension built for a newer Python references an API its interpreter lacks: said with both versions,
// never as a missing --python (the real import fails on it, which is the oracle).
TEST_F(ImportContextPython, an_api_the_interpreter_lacks_names_its_version_and_the_one_that_added_it) {
  std::string dir = test::scratch_dir("newapi");
  auto version = run(kPython + " -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'").out;
  version.pop_back();
  if (version != "3.11" && version != "3.12")
    MLC_SKIP() << kPython << " is Python " << version << ", which has PyLong_AsInt";
  const std::string module = dir + "/newapi.cpython-311-x86_64-linux-gnu.so";
  cc(dir,
     "long PyLong_AsInt(void*);\nvoid* PyLong_FromLong(long);\n"
     "void* PyInit_newapi(void) { PyLong_AsInt(0); return PyLong_FromLong(1); }\n",
     module, "-shared");
  auto real = run("cd " + quote(dir) + " && " + kPython + " -c 'import newapi'");
  ASSERT_NE(real.err.find("undefined symbol: PyLong_AsInt"), std::string::npos) << real.err;
  auto r = run("PATH=/usr/bin:/bin " + kBin + " --no-cache " + quote(module));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "error: importing newapi.cpython-311-x86_64-linux-gnu.so would fail: 1 cause\n"
            "error: 1 symbol of the Python C API is not in " +
                kPython + " (Python " + version +
                "), the interpreter "
                "that loads this extension: it was built for a newer Python (3.13 added PyLong_AsInt)\n"
                ">>> version-mismatch: PyLong_AsInt\n"
                ">>> fix: build it against Python " +
                version +
                "'s headers, or check it with --python=EXE for the "
                "Python it was built for (3.13 or later)\n"
                "1 undefined symbol, 0 missing libraries, 0 missing versions in 1 library\n");
  auto j = json::parse(run("PATH=/usr/bin:/bin " + kBin + " --no-cache --format json " + quote(module)).out);
  EXPECT_EQ(j["libraries"][0]["unresolved"][0]["reason"],
            "this interpreter is too old: Python 3.13 added it, and " + kPython + " is Python " + version);
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

// musa-stubgen checks in the context musa-linkcheck does (the import of torch its package does first):
// the symbols it stubs or refuses are those linkcheck reports, no more.
TEST(ImportContext, stubgen_takes_the_same_context_as_linkcheck) {
  std::string site = pyimport_site("stubgen-context", "import torch\nfrom myext import _C\n");
  fs::copy_file(kFix + "/pyimport/system/libc10.so", site + "/torch/lib/libc10.so",
                fs::copy_options::overwrite_existing);
  const std::string ext = site + "/myext/_C.so";
  ASSERT_EQ(real_import(site + "/torch", ext), ext + ": undefined symbol: c10_new");
  auto j = json::parse(run(linkcheck("--format json " + quote(ext))).out);
  ASSERT_EQ(j["libraries"][0]["unresolved"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["libraries"][0]["unresolved"][0]["symbol"], "c10_new");
  std::string out = test::scratch_root() / "stubgen-context";
  auto r = run("env -u LD_LIBRARY_PATH " + std::string(MLC_STUBGEN_BIN) + " --no-cache --dry-run --out-cpp " +
               quote(out + "/stubs.cpp") + " --out-header " + quote(out + "/stubs.h") + " " + quote(ext));
  // c10_new is defined nowhere (not something a stub fixes unless asked); c10_old, which torch's libc10
  // defines, is no finding: it was refused as missing-library when stubgen checked the file alone.
  EXPECT_NE(r.err.find("musa-stubgen: cannot fix c10_new: unknown: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("musa-stubgen: 0 stubs, 0 build files to patch, 0 files would change, 1 symbol refused\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("c10_old"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

// The real verdict on each ELF file of a site directory: a program by `ldd -r` (Debian's own, trusted);
// any other file by a fresh /usr/bin/python3 importing the innermost package holding it (its __init__
// runs as a real import would) and then loading it with ctypes.CDLL(RTLD_NOW), as the import does.
bool really_loads(const std::string& site, const std::string& file, bool program) {
  if (program) {
    auto r = run("ldd -r " + quote(file) + " 2>&1");
    return r.status == 0 && r.out.find("undefined symbol") == std::string::npos &&
           r.out.find("not found") == std::string::npos;
  }
  // The package as the import names it: the file's directory below the site directory, dotted (namespace
  // packages' portions included: torch.lib imports torch first).
  std::string package;
  for (const auto& part : fs::path(file).parent_path().lexically_relative(site)) {
    const std::string p = part.string();
    if (p == "." || p.empty()) continue;
    if (!std::all_of(p.begin(), p.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
      package.clear();
      break;
    }
    package += (package.empty() ? "" : ".") + p;
  }
  std::string py =
      "import ctypes, importlib, os, sys\ntry:\n    if sys.argv[1]: importlib.import_module(sys.argv[1])\n"
      "    ctypes.CDLL(sys.argv[2], os.RTLD_NOW)\n    print('ok')\nexcept Exception as e:\n    print(e)\n";
  auto r =
      run("cd / && env -u LD_LIBRARY_PATH " + kPython + " -c " + quote(py) + " " + quote(package) + " " + quote(file));
  return r.out == "ok\n";
}

// The tests that import Debian's torch in the interpreter (the real loader's scopes and verdicts): checked once
// for each.
class ImportContextTorch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/lib/python3/dist-packages/torch/__init__.py") || !fs::exists(kPython))
      MLC_SKIP() << "Debian's python3-torch is not installed";
  }
};

// Debian's dist-packages as one environment: the directory mode's verdict on each file (JSON `loads`), and
// its count, equal the real loader's. Its programs (torch/bin/test_jit) are counted apart, as no import runs
// them, and fail the run only with --fail-on ...,programs.
TEST_F(ImportContextTorch, debians_dist_packages_verdict_per_file_equals_the_real_import) {
  const std::string site = "/usr/lib/python3/dist-packages";
  auto jr = run("PATH=/usr/bin:/bin " + kBin + " --no-cache --format json " + quote(site));
  auto j = json::parse(jr.out);
  size_t files = 0, failing = 0, programs = 0, not_starting = 0;
  std::string disagreements;
  for (const auto& lib : j["libraries"]) {
    if (lib["role"] != "target") continue;
    const std::string path = lib["path"];
    const bool program = lib["program"];
    const bool real = really_loads(site, path, program);
    ++(program ? programs : files);
    (program ? not_starting : failing) += real ? 0 : 1;
    if (lib["loads"].get<bool>() != real)
      disagreements +=
          path + ": the tool says " + (real ? "fails" : "loads") + ", the loader " + (real ? "loads" : "fails") + "\n";
  }
  ASSERT_GT(files, 20u);
  EXPECT_EQ(disagreements, "");
  EXPECT_EQ(jr.status, failing > 0 ? 1 : 0) << jr.err;
  auto text = run("PATH=/usr/bin:/bin " + kBin + " --no-cache --fail-on any,programs " + quote(site));
  std::string counts = std::to_string(failing) + " of " + std::to_string(files) + " files would fail to load\n";
  if (programs > 0)
    counts += std::to_string(not_starting) + " of " + std::to_string(programs) + " program" +
              (programs == 1 ? "" : "s") + " would not start\n";
  EXPECT_NE(text.out.find(counts), std::string::npos) << text.out;
  EXPECT_EQ(text.status, failing + not_starting > 0 ? 1 : 0) << text.err;
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

// In a directory, a broken dependency is reported once, yet every file whose load brings it in fails with
// it, and a file that an earlier file loaded as a dependency still gets its own verdict.
TEST(ImportContext, a_broken_dependency_fails_every_file_of_a_directory_that_loads_it) {
  std::string dir = test::scratch_dir("shared-dep");
  cc(dir, "int nowhere_f(void);\nint broken_f(void) { return nowhere_f(); }\n", dir + "/libbroken.so",
     "-shared -Wl,-soname,libbroken.so");
  for (const char* user : {"liba.so", "libb.so"})
    cc(dir, "int broken_f(void);\nint user_f(void) { return broken_f(); }\n", dir + "/" + user,
       "-shared -Wl,--no-as-needed " + quote(dir + "/libbroken.so") + " -Wl,-rpath,'$ORIGIN'");
  auto j = json::parse(run(linkcheck("--format json " + quote(dir))).out);
  std::map<std::string, bool> verdict;
  for (const auto& lib : j["libraries"])
    if (lib["role"] == "target") verdict[fs::path(lib["path"].get<std::string>()).filename()] = lib["loads"];
  for (const char* f : {"liba.so", "libb.so", "libbroken.so"}) {
    EXPECT_NE(real_import("", dir + "/" + f), "ok") << f;
    ASSERT_TRUE(verdict.count(f)) << f << " has no verdict: " << j.dump(2);
    EXPECT_FALSE(verdict[f]) << f;
  }
  EXPECT_NE(run(linkcheck(quote(dir))).out.find("3 of 3 files would fail to load"), std::string::npos);
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

// torch's scopes as the real loader makes them (LD_DEBUG=scopes while Debian's python3 imports Debian's
// torch), against the plan the tool loads a file of torch's package with: libtorch_global_deps in the
// global scope, _C with RTLD_LOCAL (its closure, libc10 and libtorch_cpu, in its own scope only).
TEST_F(ImportContextTorch, torchs_scopes_are_the_real_loaders) {
  const std::string torch = "/usr/lib/python3/dist-packages/torch";
  auto r = run("cd / && env -u LD_LIBRARY_PATH LD_DEBUG=scopes " + kPython + " -c 'import torch'");
  ASSERT_EQ(r.status, 0) << r.err.substr(0, 2000);
  // "add <path> [0] to global scope" lines, and each object's "scope 0:" (the global scope it sees).
  std::set<std::string> added_globally;
  std::string c_global_scope;
  std::istringstream lines(r.err);
  std::string object;
  for (std::string line; std::getline(lines, line);) {
    if (auto at = line.find("add "); at != std::string::npos && line.find(" to global scope") != std::string::npos)
      added_globally.insert(line.substr(at + 4, line.find(" [") - at - 4));
    if (auto at = line.find("object="); at != std::string::npos) object = line.substr(at + 7, line.find(" [") - at - 7);
    if (auto at = line.find("scope 0:"); at != std::string::npos && object.find("/torch/_C.") != std::string::npos)
      c_global_scope = line.substr(at + 8) + " ";
  }
  ASSERT_FALSE(c_global_scope.empty()) << "no scope line for torch/_C";
  EXPECT_TRUE(added_globally.count(torch + "/lib/libtorch_global_deps.so"));
  EXPECT_NE(c_global_scope.find(torch + "/lib/libtorch_global_deps.so "), std::string::npos);
  EXPECT_EQ(c_global_scope.find("libtorch_cpu"), std::string::npos) << c_global_scope;
  EXPECT_EQ(c_global_scope.find("libc10"), std::string::npos) << c_global_scope;
  // The tool's plan for a file of torch's package (its _C_flatbuffer extension, which imports torch first).
  // The extension torch's import loads, by the interpreter itself (not by the code under test).
  auto c_file = run(kPython + " -c 'import torch._C as c; print(c.__file__)'");
  ASSERT_EQ(c_file.status, 0) << c_file.err;
  const std::string torch_c = c_file.out.substr(0, c_file.out.find('\n'));
  python::Interpreter host = python::read_sites(kPython);
  python::ImportQuestion q{.file = torch + "/_C_flatbuffer.cpython-311-x86_64-linux-gnu.so",
                           .needed = {},
                           .hosting = python::Hosting::ExtensionModule,
                           .program = false,
                           .python = nullptr,
                           .python_torch = nullptr,
                           .host = &host};
  auto plan = python::plan_import(q);
  ASSERT_EQ(plan.loads.size(), 3u);
  EXPECT_EQ(plan.loads[0].path, kPython);
  EXPECT_EQ(plan.loads[1].path, torch + "/lib/libtorch_global_deps.so");
  EXPECT_TRUE(plan.loads[1].global);
  EXPECT_EQ(plan.loads[2].path, torch_c);
  EXPECT_FALSE(plan.loads[2].global);
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

// A Perl XS module is a plugin of perl, which exports Perl's API (Debian builds libperl into it): checked as
// loaded into it, as `perl -MIO` loads it, never as 42 missing symbols.
TEST(ImportContext, a_perl_xs_module_is_checked_as_loaded_into_perl) {
  std::string module;
  for (const auto& dir : {"/usr/lib/x86_64-linux-gnu/perl", "/usr/lib/x86_64-linux-gnu/perl-base"})
    if (fs::exists(dir))
      for (const auto& e : fs::recursive_directory_iterator(dir))
        if (module.empty() && e.path().filename() == "IO.so") module = e.path().string();
  if (module.empty() || !fs::exists("/usr/bin/perl")) MLC_SKIP() << "Debian's perl (IO.so) is not installed";
  ASSERT_EQ(run("/usr/bin/perl -MIO::Handle -e 'print qq(ok)'").out, "ok");
  ASSERT_NE(run("nm -D --defined-only /usr/bin/perl").out.find(" PL_ppaddr\n"), std::string::npos);
  auto r = run(linkcheck(quote(module)));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: " + module +
                       " is a plugin of /usr/bin/perl, which exports what it uses: checked as loaded into it\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace mlc
