// Python's import as context and where each library comes from.
// Site-packages layouts are assembled in the scratch area from fixtures built at test time (and
// from Debian's python3-torch/python3-torchvision); /usr/bin/python3 with PYTHONPATH is the
// interpreter asked. The real loader (ctypes in a subprocess, loading torch's _C first as
// `import torch` does) is the oracle for every layout.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "environment/dpkg_index.h"
#include "environment/ownership.h"
#include "python/query.h"
#include "python/torch.h"
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
const std::string kFix = std::string(MLC_LOADER_FIXTURES) + "/pyimport";
const std::string kPython = "/usr/bin/python3";
const std::string kDist = "/usr/lib/python3/dist-packages";

void copy(const std::string& from, const std::string& to) {
  fs::create_directories(fs::path(to).parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// site/torch (version 9.9.1, with a dist-info RECORD), site/myext (imports torch; needs libc10.so by
// name only), and a system-like directory whose libc10.so lacks c10_new.
struct Site {
  std::string root, site, system, ext, torch_c;
};
Site make_site(const std::string& name) {
  Site s;
  s.root = test::scratch_dir(name);
  s.site = s.root + "/site";
  s.system = s.root + "/system";
  s.ext = s.site + "/myext/_C.so";
  s.torch_c = s.site + "/torch/_C.so";
  copy(kFix + "/torch/_C.so", s.torch_c);
  copy(kFix + "/torch/lib/libc10.so", s.site + "/torch/lib/libc10.so");
  copy(kFix + "/myext/_C.so", s.ext);
  copy(kFix + "/system/libc10.so", s.system + "/libc10.so");
  write_file(s.site + "/torch/__init__.py", "from torch._C import *\n");
  write_file(s.site + "/torch/version.py", "__version__ = '9.9.1'\ndebug = False\n");
  write_file(s.site + "/myext/__init__.py", "import torch\nfrom myext import _C\n");
  fs::create_directories(s.site + "/torch-9.9.1.dist-info");
  write_file(s.site + "/torch-9.9.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.1\n");
  write_file(s.site + "/torch-9.9.1.dist-info/RECORD",
             "torch/__init__.py,sha256=x,23\ntorch/_C.so,sha256=y,1\ntorch/lib/libc10.so,sha256=z,1\n"
             "torch-9.9.1.dist-info/RECORD,,\n");
  return s;
}

std::string tool(const Site& s, const std::string& args) {
  return "env -u LD_LIBRARY_PATH PYTHONPATH=" + quote(s.site) + " " + kBin + " " + args;
}

// The real loader: torch's _C first (when given), then the extension; "ok" or the loader's complaint.
std::string ctypes_loads(const std::string& first, const std::string& ext, const std::string& library_path) {
  std::string py = "import ctypes, os, sys\ntry:\n";
  if (!first.empty()) py += "    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\n";
  py += "    ctypes.CDLL(sys.argv[2], os.RTLD_NOW)\n    print('ok')\nexcept OSError as e:\n    print('fails')\n";
  auto r = run("env -u LD_LIBRARY_PATH " + (library_path.empty() ? "" : "LD_LIBRARY_PATH=" + quote(library_path)) +
               " python3 -c " + quote(py) + " " + quote(first.empty() ? "-" : first) + " " + quote(ext));
  return r.out;
}

class PythonImport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython)) MLC_SKIP() << kPython << " is absent";
  }
};

// The tests that compile extensions against Python.h: checked once for each, with the interpreter.
class PythonImportDev : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython) || !fs::exists("/usr/include/python3.11/Python.h"))
      MLC_SKIP() << kPython << " with Python.h (python3-dev) is not installed";
  }
};

// The tests on Debian's torchvision extension (and the libc10 of Debian's torch it needs): checked once
// for each, with the interpreter.
class PythonImportTorchvision : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython) || !fs::exists(kDist + "/torchvision/_C.cpython-311-x86_64-linux-gnu.so") ||
        !fs::exists("/usr/lib/x86_64-linux-gnu/libc10.so.1.13"))
      MLC_SKIP() << "python3-torchvision is not installed";
  }
};

TEST(AskedInterpreter, answer_and_version_text_are_parsed_without_running_anything) {
  auto env = python::parse_answer("py", R"({"executable": "/usr/bin/python3.11", "version": "3.11.2",
      "prefix": "/usr", "site": ["/usr/lib/python3/dist-packages"],
      "packages": {"torch": {"origin": "/x/torch/__init__.py", "locations": ["/x/torch"]}}})");
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(env->asked);
  EXPECT_EQ(env->named, "py");
  EXPECT_EQ(env->executable, "/usr/bin/python3.11");
  EXPECT_EQ(env->packages.at("torch").locations, std::vector<std::string>{"/x/torch"});
  auto bad = python::parse_answer("/opt/py", "Traceback (most recent call last):");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().path, "/opt/py");
  EXPECT_EQ(python::version_from_text("import os\n__version__ = '1.13.0a0'\n"), "1.13.0a0");
  EXPECT_EQ(python::version_from_text("__version__: str = \"2.1.0+cpu\"\n"), "2.1.0+cpu");
  EXPECT_EQ(python::version_from_text("version = '1'\n"), "");
}

TEST_F(PythonImport, import_torch_binds_torchs_libc10_not_the_system_copy) {
  Site s = make_site("pyimport-competing");
  // Loaded alone (a copy outside any package), libc10.so comes from the system-like directory, which
  // lacks c10_new.
  const std::string plain = s.root + "/plain/_C.so";
  copy(s.ext, plain);
  ASSERT_EQ(ctypes_loads("", plain, s.system), "fails\n");
  auto alone = run(tool(s, "--library-path " + quote(s.system) + " " + quote(plain)));
  EXPECT_EQ(alone.status, 1) << alone.out << alone.err;
  EXPECT_NE(alone.out.find("error: undefined symbol: c10_new\n"), std::string::npos) << alone.out;

  // `import torch` first (myext/__init__.py imports it): its _C loads torch/lib/libc10.so, which then
  // answers myext's DT_NEEDED. The natural call infers that context from the package, as --python does.
  ASSERT_EQ(ctypes_loads(s.torch_c, s.ext, s.system), "ok\n");
  auto natural = run(tool(s, "--library-path " + quote(s.system) + " " + quote(s.ext)));
  EXPECT_EQ(natural.status, 0) << natural.out << natural.err;
  EXPECT_NE(natural.out.find("note: checked as imported after torch 9.9.1 from " + s.site +
                             "/torch: myext/__init__.py imports it\n"),
            std::string::npos)
      << natural.out;
  auto r = run(tool(s, "--python=" + kPython + " --library-path " + quote(s.system) + " " + quote(s.ext)));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("note: import context: " + kPython + " (Python 3."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; torch 9.9.1 from " + s.site + "/torch (Python package torch 9.9.1)\n"), std::string::npos)
      << r.out;
  auto doc = json::parse(
      run(tool(s, "--format json --python=" + kPython + " --library-path " + quote(s.system) + " " + quote(s.ext)))
          .out);
  EXPECT_EQ(doc["python"]["torch"]["path"], s.site + "/torch");
  EXPECT_EQ(doc["python"]["torch"]["version"], "9.9.1");
  EXPECT_EQ(doc["python"]["torch"]["owner"], (json{{"kind", "python"}, {"name", "torch"}, {"version", "9.9.1"}}));
  const auto& needed = doc["libraries"][0]["needed"];
  ASSERT_EQ(needed.size(), 2u) << doc.dump(2);  // libc10.so, libc.so.6
  EXPECT_EQ(needed[0]["name"], "libc10.so");
  EXPECT_EQ(needed[0]["how"], "rpath");  // as torch/_C.so found it
  EXPECT_EQ(needed[0]["path"], s.site + "/torch/lib/libc10.so");
  // Ownership from the dist-info RECORD.
  EXPECT_EQ(needed[0]["owner"], (json{{"kind", "python"}, {"name", "torch"}, {"version", "9.9.1"}}));
}

// With --python the user says the file is loaded in that Python's process, after `import torch` when it needs
// torch's libraries: a kernel library in a build tree (no package, no site directory) that needs libc10.so gets
// the libc10.so torch loaded (glibc matches a DT_NEEDED against a loaded object's name, whatever scope it was
// loaded into), not the system's copy its own search would find.
// --python's answer is kept between runs (python/kept_answers.cpp) and given again only while
// nothing it depends on changed: a torch added to a sys.path directory is the next run's torch, and a
// shim (a script choosing its Python) is asked every time. "phase python.run" is the interpreter run.
TEST_F(PythonImport, an_interpreters_answer_is_kept_until_what_it_depends_on_changes) {
  Site s = make_site("pyimport-answer-cache");
  const std::string first = s.root + "/first", bin = s.root + "/bin/python", shim = s.root + "/bin/shim";
  fs::create_directories(first);
  fs::create_directories(s.root + "/bin");
  fs::create_symlink(kPython, bin);
  write_file(shim, "#!/bin/sh\nexec " + kPython + " \"$@\"\n");
  fs::permissions(shim, fs::perms::owner_all);
  auto check = [&](const std::string& python) {
    return run("cd " + quote(s.root) + " && env -u LD_LIBRARY_PATH MLC_PHASE_TIMES=1 PYTHONPATH=" +
               quote(first + ":" + s.site) + " " + kBin + " --cache-dir " + quote(s.root + "/cache") +
               " --python=" + quote(python) + " --library-path " + quote(s.system) + " " + quote(s.ext));
  };
  auto asked = [](const test::CommandResult& r) { return r.err.find("phase python.run ") != std::string::npos; };
  const std::string site_torch = "torch 9.9.1 from " + s.site + "/torch";
  auto r1 = check(bin);
  EXPECT_EQ(r1.status, 0) << r1.out << r1.err;
  EXPECT_TRUE(asked(r1)) << r1.err;
  EXPECT_NE(r1.out.find(site_torch), std::string::npos) << r1.out;
  auto r2 = check(bin);
  EXPECT_FALSE(asked(r2)) << r2.err;
  EXPECT_EQ(r2.out, r1.out);
  // Another torch, earlier on sys.path: its directory's entries changed, so the interpreter is asked again.
  fs::copy(s.site + "/torch", first + "/torch", fs::copy_options::recursive);
  write_file(first + "/torch/version.py", "__version__ = '9.9.2'\n");
  auto r3 = check(bin);
  EXPECT_TRUE(asked(r3)) << r3.err;
  EXPECT_NE(r3.out.find("torch 9.9.2 from " + first + "/torch"), std::string::npos) << r3.out;
  // Gone again: the next run's torch is the site's once more.
  fs::remove_all(first + "/torch");
  auto r4 = check(bin);
  EXPECT_TRUE(asked(r4)) << r4.err;
  EXPECT_NE(r4.out.find(site_torch), std::string::npos) << r4.out;
  for (int i = 0; i < 2; ++i) {
    auto r = check(shim);
    EXPECT_TRUE(asked(r)) << "run " << i << ": " << r.err;
    EXPECT_NE(r.out.find(site_torch), std::string::npos) << r.out;
  }
}

TEST_F(PythonImport, with_python_a_library_outside_any_package_binds_the_libc10_torch_loaded) {
  Site s = make_site("pyimport-build-tree");
  const std::string kernels = s.root + "/build/lib/libkernels.so";
  copy(s.ext, kernels);
  ASSERT_EQ(ctypes_loads("", kernels, s.system), "fails\n");
  ASSERT_EQ(ctypes_loads(s.torch_c, kernels, s.system), "ok\n");
  auto r =
      run(tool(s, "--format json --python=" + kPython + " --library-path " + quote(s.system) + " " + quote(kernels)));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  auto doc = json::parse(r.out);
  EXPECT_EQ(doc["libraries"][0]["unresolved"], json::array()) << doc["libraries"][0].dump();
  EXPECT_EQ(doc["libraries"][0]["needed"][0]["path"], s.site + "/torch/lib/libc10.so");
  EXPECT_EQ(doc["libraries"][0]["imported_after"]["reason"], "needs-torch-libraries");
}

TEST_F(PythonImport, a_torch_whose_libc10_lacks_a_symbol_is_the_one_blamed) {
  Site s = make_site("pyimport-broken");
  copy(kFix + "/system/libc10.so", s.site + "/torch/lib/libc10.so");  // torch's own copy now lacks c10_new
  ASSERT_EQ(ctypes_loads(s.torch_c, s.ext, ""), "fails\n");
  auto r = run(tool(s, "--format json --python=" + kPython + " " + quote(s.ext)));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["libraries"][0]["unresolved"].size(), 1u);
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["symbol"], "c10_new");
  EXPECT_EQ(doc["libraries"][0]["needed"][0]["path"], s.site + "/torch/lib/libc10.so");
}

// explain follows the reference in the process its findings come from, loaded once: with --python,
// myext's c10_new binds to torch's own libc10 (the one torch/_C loads through its RPATH), as the real
// import does (the oracle), and not to the system-like copy that --library-path gives a load of myext
// alone, which lacks it. Without --python that copy is the one loaded, and the finding says so.
TEST_F(PythonImport, explain_resolves_in_the_process_of_the_findings) {
  Site s = make_site("pyimport-explain");
  ASSERT_EQ(ctypes_loads(s.torch_c, s.ext, s.system), "ok\n");
  const std::string args = " --library-path " + quote(s.system) + " " + quote(s.ext);
  auto r = run(tool(s, "explain c10_new --python=" + kPython + args));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("c10_new\n>>> referenced by " + s.ext + "\n>>> resolved by libc10.so (" + s.site +
                            "/torch/lib/libc10.so), found through rpath\n",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.find("undefined symbol"), std::string::npos) << r.out;
  auto doc = json::parse(run(tool(s, "explain c10_new --format json --python=" + kPython + args)).out);
  ASSERT_EQ(doc["explain"].size(), 1u) << doc.dump(2);
  EXPECT_EQ(doc["explain"][0]["state"], "resolved");
  EXPECT_EQ(doc["explain"][0]["provider"], s.site + "/torch/lib/libc10.so");
  EXPECT_EQ(doc["explain"][0]["how"], "rpath");
  EXPECT_EQ(doc["libraries"].size(), 0u) << doc.dump(2);

  // Without --python the natural call infers the same import (myext/__init__.py imports torch): the same
  // binding. A copy outside any package is loaded alone: the system-like copy, which lacks it.
  auto natural = run(tool(s, "explain c10_new" + args));
  EXPECT_EQ(natural.status, 0) << natural.out << natural.err;
  EXPECT_NE(natural.out.find(">>> resolved by libc10.so (" + s.site + "/torch/lib/libc10.so), found through rpath\n"),
            std::string::npos)
      << natural.out;
  const std::string plain = s.root + "/plain/_C.so";
  copy(s.ext, plain);
  const std::string plain_args = " --library-path " + quote(s.system) + " " + quote(plain);
  ASSERT_EQ(ctypes_loads("", plain, s.system), "fails\n");
  auto alone = run(tool(s, "explain c10_new" + plain_args));
  EXPECT_EQ(alone.status, 1) << alone.out << alone.err;
  EXPECT_NE(alone.out.find("error: undefined symbol: c10_new\n"), std::string::npos) << alone.out;
  EXPECT_EQ(alone.out.find("resolved by"), std::string::npos) << alone.out;
  auto alone_doc = json::parse(run(tool(s, "explain c10_new --format json" + plain_args)).out);
  ASSERT_EQ(alone_doc["explain"].size(), 1u) << alone_doc.dump(2);
  EXPECT_EQ(alone_doc["explain"][0]["state"], "unresolved");
}

TEST_F(PythonImport, package_directory_and_wheel_are_checked_as_a_whole) {
  Site s = make_site("pyimport-wheel");
  // The package directory: myext/_C.so (torch first, because myext/__init__.py imports torch).
  auto dir =
      run(tool(s, "--python=" + kPython + " --library-path " + quote(s.system) + " " + quote(s.site + "/myext")));
  EXPECT_EQ(dir.status, 0) << dir.out << dir.err;
  EXPECT_NE(dir.out.find("in 1 library\n"), std::string::npos) << dir.out;

  // The same package as a wheel; paths inside it are spelled wheel!/member.
  std::string wheel = s.root + "/myext-1.0-py3-none-any.whl";
  auto zip = run("cd " + quote(s.site) + " && python3 -c " +
                 quote("import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
                       "    z.write('myext/__init__.py'); z.write('myext/_C.so')\n") +
                 " " + quote(wheel));
  ASSERT_EQ(zip.status, 0) << zip.err;
  std::string args = "--format json --cache-dir " + quote(s.root + "/cache") + " --python=" + kPython +
                     " --library-path " + quote(s.system) + " " + quote(wheel);
  auto r = run(tool(s, args));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["libraries"].size(), 1u);
  EXPECT_EQ(doc["libraries"][0]["path"], wheel + "!/myext/_C.so");
  EXPECT_EQ(doc["libraries"][0]["needed"][0]["path"], s.site + "/torch/lib/libc10.so");
  EXPECT_TRUE(fs::is_empty(s.root + "/cache/wheels")) << "the unpacked wheel is removed";
  // Without the import context the wheel's extension binds the system copy and fails, like the loader.
  auto without = run(
      tool(s, "--cache-dir " + quote(s.root + "/cache") + " --library-path " + quote(s.system) + " " + quote(wheel)));
  EXPECT_EQ(without.status, 1) << without.out;
  EXPECT_NE(without.out.find("error: undefined symbol: c10_new\n"), std::string::npos) << without.out;
  EXPECT_NE(without.out.find(">>>               " + wheel + "!/myext/_C.so\n"), std::string::npos) << without.out;
}

TEST_F(PythonImport, bad_wheel_and_bad_interpreters_are_one_line_errors_and_the_rest_is_kept) {
  Site s = make_site("pyimport-bad");
  std::string wheel = s.root + "/broken-1.0-py3-none-any.whl";
  write_file(wheel, "PK\x03\x04 this is not a zip archive");
  auto r = run(tool(s, "--cache-dir " + quote(s.root + "/cache") + " " + quote(wheel) + " " + quote(s.torch_c)));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("musa-linkcheck: error: " + wheel + ": not a readable wheel (zip archive)", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.out.find("in 1 library\n"), std::string::npos) << "the other input is still reported: " << r.out;

  std::string missing = s.root + "/no/such/python3";
  auto none = run(tool(s, "--python=" + missing + " " + quote(s.torch_c)));
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err,
            "musa-linkcheck: error: " + missing + ": the Python interpreter cannot run: No such file or directory\n");
  EXPECT_NE(none.out.find("in 1 library\n"), std::string::npos) << none.out;

  std::string crash = s.root + "/crashing-python";
  write_file(crash, "#!/bin/sh\nkill -SEGV $$\n");
  fs::permissions(crash, fs::perms::owner_all);
  auto crashed = run(tool(s, "--python=" + crash + " " + quote(s.torch_c)));
  EXPECT_EQ(crashed.status, 2);
  EXPECT_EQ(crashed.err.rfind("musa-linkcheck: error: " + crash + ": the Python interpreter crashed (", 0), 0u)
      << crashed.err;
  EXPECT_NE(crashed.out.find("in 1 library\n"), std::string::npos);

  // A torch whose _C is not an ELF file (an unreadable site-packages): named, the input still checked.
  write_file(s.torch_c, "not an ELF file");
  auto unreadable = run(tool(s, "--python=" + kPython + " " + quote(s.ext)));
  EXPECT_EQ(unreadable.status, 2) << unreadable.out;
  EXPECT_NE(unreadable.err.find("musa-linkcheck: error: " + s.torch_c + ": "), std::string::npos) << unreadable.err;
  EXPECT_NE(unreadable.out.find("in 1 library\n"), std::string::npos) << unreadable.out;
}

// Importing pkg.good runs pkg/__init__.py first, whose `from pkg import bad` fails: the import of good.so
// fails with bad.so's own words, the words the report writes once bad.so's findings are written. The
// oracle is the interpreter's ImportError.
TEST(PythonImportPackage, a_module_whose_package_imports_a_failing_module_fails_with_that_modules_words) {
  const std::string dir = test::scratch_dir("pkgimport");
  const std::string pkg = dir + "/site/pkg";
  fs::create_directories(pkg);
  write_file(dir + "/bad.c", "void missing_fn(void);\nvoid PyInit_bad(void) { missing_fn(); }\n");
  write_file(dir + "/good.c", "int PyInit_good(void) { return 0; }\n");
  write_file(pkg + "/__init__.py", "from pkg import bad\n");
  ASSERT_EQ(run("cd " + quote(dir) + " && gcc -shared -fPIC -o site/pkg/bad.so bad.c && gcc -shared -fPIC -o " +
                "site/pkg/good.so good.c")
                .status,
            0);
  auto real = run("PYTHONPATH=" + quote(dir + "/site") + " " + kPython + " -c 'import pkg.good'");
  const std::string said = "ImportError: " + pkg + "/bad.so: undefined symbol: missing_fn";
  ASSERT_NE(real.err.find(said), std::string::npos) << real.err;
  auto r = run("PYTHONPATH=" + quote(dir + "/site") + " " + kBin + " --format json " + quote(pkg));
  EXPECT_EQ(r.status, 1) << r.err;
  const json report = json::parse(r.out);
  json good;
  for (const auto& lib : report["libraries"])
    if (lib["path"] == pkg + "/good.so") good = lib;
  ASSERT_EQ(good["load_failures"].size(), 1u) << r.out;
  EXPECT_EQ(good["load_failures"][0]["kind"], "package-import");
  EXPECT_EQ(good["load_failures"][0]["file"], pkg + "/bad.so");
  EXPECT_EQ("ImportError: " + good["load_failures"][0]["message"].get<std::string>(), said);
  fs::remove_all(dir);
}

TEST_F(PythonImport, a_shim_script_is_resolved_by_running_it) {
  Site s = make_site("pyimport-shim");
  std::string shim = s.root + "/bin/python3";
  fs::create_directories(s.root + "/bin");
  write_file(shim, "#!/bin/sh\nexec " + kPython + " \"$@\"\n");
  fs::permissions(shim, fs::perms::owner_all);
  auto r = run("PATH=" + quote(s.root + "/bin") + ":/usr/bin:/bin " +
               tool(s, "--python --library-path " + quote(s.system) + " " + quote(s.ext)));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("note: import context: python3 (" + kPython + ") (Python 3."), std::string::npos) << r.out;
}

// Debian's python3-torchvision: a real out-of-tree extension, checked in place and in a copied
// layout broken on purpose.
TEST_F(PythonImportTorchvision, debian_torchvision_in_place_names_debian_torch) {
  std::string tv = kDist + "/torchvision/_C.cpython-311-x86_64-linux-gnu.so";
  auto version = run("dpkg-query -W -f '${Version}' python3-torch");
  ASSERT_EQ(version.status, 0);
  ASSERT_EQ(run("python3 -c 'import torchvision'").status == 0 || run(kPython + " -c 'import torchvision'").status == 0,
            true);
  auto r = run("env -u PYTHONPATH -u LD_LIBRARY_PATH " + kBin + " --python=" + kPython + " " + tv);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("; torch 1.13.0a0 from " + kDist + "/torch (Debian's python3-torch " + version.out + ")\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(version.out.find("1.13.1"), std::string::npos);
  auto dir =
      run("env -u PYTHONPATH -u LD_LIBRARY_PATH " + kBin + " --python=" + kPython + " " + kDist + "/torchvision");
  EXPECT_EQ(dir.status, 0) << dir.out << dir.err;
  EXPECT_NE(dir.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions in 3 libraries\n"),
            std::string::npos)
      << dir.out;
}

TEST_F(PythonImportTorchvision, debian_torchvision_against_a_copied_torch_with_a_broken_libc10) {
  std::string tv = kDist + "/torchvision/_C.cpython-311-x86_64-linux-gnu.so";
  std::string real_c10 = "/usr/lib/x86_64-linux-gnu/libc10.so.1.13";
  std::string root = test::scratch_dir("pyimport-real"), site = root + "/site";
  copy(kFix + "/real/torch/_C.so", site + "/torch/_C.so");
  copy(real_c10, site + "/torch/lib/libc10.so.1.13");
  write_file(site + "/torch/__init__.py", "from torch._C import *\n");
  write_file(site + "/torch/version.py", "__version__ = '1.13.1+copy'\n");
  copy(tv, site + "/torchvision/_C.so");
  write_file(site + "/torchvision/__init__.py", "import torch\n");
  std::string cmd = "env -u LD_LIBRARY_PATH PYTHONPATH=" + quote(site) + " " + kBin +
                    " --format json --python=" + kPython + " " + quote(site + "/torchvision/_C.so");
  ASSERT_EQ(ctypes_loads(site + "/torch/_C.so", site + "/torchvision/_C.so", ""), "ok\n");
  auto intact = run(cmd);
  EXPECT_EQ(intact.status, 0) << intact.out << intact.err;
  auto doc = json::parse(intact.out);
  EXPECT_EQ(doc["python"]["torch"]["path"], site + "/torch");
  EXPECT_EQ(doc["python"]["torch"]["version"], "1.13.1+copy");
  size_t c10_entries = 0;
  for (const auto& n : doc["libraries"][0]["needed"])
    if (n["name"] == "libc10.so.1.13") {
      EXPECT_EQ(n["path"], site + "/torch/lib/libc10.so.1.13");
      ++c10_entries;
    }
  EXPECT_EQ(c10_entries, 1u) << "the module needs libc10.so.1.13: " << doc["libraries"][0]["needed"].dump();

  copy(kFix + "/real/broken/libc10.so.1.13", site + "/torch/lib/libc10.so.1.13");  // lacks every c10 symbol
  ASSERT_EQ(ctypes_loads(site + "/torch/_C.so", site + "/torchvision/_C.so", ""), "fails\n");
  auto broken = run(cmd);
  EXPECT_EQ(broken.status, 1) << broken.out;
  auto bdoc = json::parse(broken.out);
  const auto& unresolved = bdoc["libraries"][0]["unresolved"];
  ASSERT_FALSE(unresolved.empty());
  // Each is one the real libc10 defines (nm is the oracle): the broken copy is the whole cause.
  std::string defined = run("nm -D --defined-only " + real_c10).out;
  for (const auto& u : unresolved)
    EXPECT_NE(defined.find(" " + u["symbol"].get<std::string>() + "\n"), std::string::npos) << u["symbol"];
}

// torch/__init__.py imports _C with Python's RTLD_LOCAL unless torch/_utils_internal.py
// sets USE_RTLD_GLOBAL_WITH_LIBTORCH = True; then _C and its libraries are in the global scope, and an
// extension that calls libtorch_cpu without linking it imports. A torch built both ways (its
// __init__.py does what torch's does), checked against a real import in a fresh /usr/bin/python3.
TEST_F(PythonImportDev, torch_imported_rtld_global_lends_its_libraries_to_later_extensions) {
  auto cc = [](const std::string& out, const std::string& source, const std::string& args) {
    fs::create_directories(fs::path(out).parent_path());
    write_file(out + ".c", source);
    auto r =
        run("cc -shared -fPIC -O1 -I/usr/include/python3.11 -o " + quote(out) + " " + quote(out + ".c") + " " + args);
    fs::remove(out + ".c");
    return r.status == 0;
  };
  // (flag in _utils_internal.py, TORCH_USE_RTLD_GLOBAL in the environment): either makes _C global.
  for (const auto& [flag, variable] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    const bool global = flag || variable;
    SCOPED_TRACE(std::string(flag ? "USE_RTLD_GLOBAL_WITH_LIBTORCH = True" : "USE_RTLD_GLOBAL_WITH_LIBTORCH = False") +
                 (variable ? ", TORCH_USE_RTLD_GLOBAL=1" : ""));
    const std::string env =
        std::string("env -u LD_LIBRARY_PATH ") + (variable ? "TORCH_USE_RTLD_GLOBAL=1 " : "-u TORCH_USE_RTLD_GLOBAL ");
    std::string site = test::scratch_dir(std::string("pyimport-rtld-") + (flag       ? "flag"
                                                                          : variable ? "variable"
                                                                                     : "local")) +
                       "/site";
    ASSERT_TRUE(cc(site + "/torch/lib/libtorch_cpu.so",
                   "void* gc(void) __asm__(\"_ZN2at13globalContextEv\");\nvoid* gc(void) { return 0; }\n",
                   "-Wl,-soname,libtorch_cpu.so"));
    ASSERT_TRUE(
        cc(site + "/torch/_C.so",
           "#include <Python.h>\nstatic struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"_C\", 0, -1, 0};\n"
           "PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&def); }\n",
           "-Wl,--no-as-needed,--enable-new-dtags,-rpath,'$ORIGIN/lib' " + quote(site + "/torch/lib/libtorch_cpu.so")));
    write_file(
        site + "/torch/_utils_internal.py",
        std::string("USE_GLOBAL_DEPS = True\nUSE_RTLD_GLOBAL_WITH_LIBTORCH = ") + (flag ? "True" : "False") + "\n");
    write_file(
        site + "/torch/__init__.py",
        "import os, sys\nfrom torch._utils_internal import USE_RTLD_GLOBAL_WITH_LIBTORCH\n"
        "if USE_RTLD_GLOBAL_WITH_LIBTORCH or os.getenv('TORCH_USE_RTLD_GLOBAL'):\n    old = sys.getdlopenflags()\n"
        "    sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_LAZY)\n    from torch._C import *\n"
        "    sys.setdlopenflags(old)\nelse:\n    from torch._C import *\n");
    // The extension links nothing of torch, yet calls at::globalContext().
    std::string ext = site + "/rtldext/_ext.so";
    ASSERT_TRUE(cc(ext,
                   "#include <Python.h>\nvoid* gc(void) __asm__(\"_ZN2at13globalContextEv\");\n"
                   "void* (*volatile keep)(void) = gc;\n"
                   "static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"_ext\", 0, -1, 0};\n"
                   "PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&def); }\n",
                   ""));
    write_file(site + "/rtldext/__init__.py", "import torch\nfrom rtldext import _ext\n");
    auto real = run(env + "PYTHONPATH=" + quote(site) + " " + kPython + " -c " + quote("import rtldext\nprint('ok')"));
    if (global) {
      EXPECT_EQ(real.out, "ok\n") << real.err;
    } else {
      EXPECT_NE(real.err.find("ImportError: " + ext + ": undefined symbol: _ZN2at13globalContextEv"), std::string::npos)
          << real.err;
    }
    auto r = run(env + "PYTHONPATH=" + quote(site) + " " + kBin + " -q --python=" + kPython + " " + quote(ext));
    EXPECT_EQ(r.status, global ? 0 : 1) << r.out << r.err;
    EXPECT_EQ(
        r.out,
        global ? "" : "error: importing _ext.so would fail: 1 cause\nerror: undefined symbol: at::globalContext()\n");
  }
}

// A shared library (or an extension module) from C source against Python 3.11's headers, the source written
// in `scratch`.
void shared_library(const std::string& scratch, const std::string& out, const std::string& source,
                    const std::string& args) {
  fs::create_directories(fs::path(out).parent_path());
  write_file(scratch + "/src.c", source);
  auto r =
      run("cc -shared -fPIC -I/usr/include/python3.11 -o " + quote(out) + " " + quote(scratch + "/src.c") + " " + args);
  EXPECT_EQ(r.status, 0) << r.err;
}

// An extension module NAME whose PyInit calls CALL (declared, defined elsewhere) and returns a module.
std::string module(const std::string& name, const std::string& call) {
  return "#include <Python.h>\nint " + call + "(void);\nstatic struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"" +
         name + "\", 0, -1, 0};\nPyMODINIT_FUNC PyInit_" + name + "(void) { " + call +
         "(); return PyModule_Create(&def); }\n";
}

// Two wheels vendor one soname: vext/__init__.py imports aaa first, whose extension module loads aaa's older
// libvend.so.1; vext's module needs libvend.so.1 too, and glibc gives it the copy already loaded (a DT_NEEDED
// matches a loaded object's name whatever scope it was loaded into), which lacks vend_new. The file's own
// RUNPATH cannot help: the fix names both packages. Checked against a real `import vext`, then with vext's
// imports reordered (its module first), which the tool then passes too.
TEST_F(PythonImportDev, another_packages_import_loads_its_vendored_copy_of_a_soname_first) {
  std::string root = test::scratch_dir("pyimport-vendored"), site = root + "/site";
  auto cc = [&](const std::string& out, const std::string& source, const std::string& args) {
    shared_library(root, out, source, args);
  };
  const std::string old_vend = site + "/aaa/aaa.libs/libvend.so.1", new_vend = site + "/vext/libvend.so.1";
  cc(old_vend, "int vend_old(void) { return 1; }\n", "-Wl,-soname,libvend.so.1");
  cc(new_vend, "int vend_old(void) { return 1; }\nint vend_new(void) { return 2; }\n", "-Wl,-soname,libvend.so.1");
  const std::string a = site + "/aaa/_a.cpython-311-x86_64-linux-gnu.so";
  const std::string v = site + "/vext/_v.cpython-311-x86_64-linux-gnu.so";
  cc(a, module("_a", "vend_old"), "-Wl,--enable-new-dtags,-rpath,'$ORIGIN/aaa.libs' " + quote(old_vend));
  cc(v, module("_v", "vend_new"), "-Wl,--enable-new-dtags,-rpath,'$ORIGIN' " + quote(new_vend));
  write_file(site + "/aaa/__init__.py", "from . import _a\n");
  write_file(site + "/vext/__init__.py", "import aaa\nfrom . import _v\n");
  fs::remove(root + "/src.c");
  ASSERT_FALSE(HasFailure());
  const std::string env = "env -u LD_LIBRARY_PATH -u LD_PRELOAD PYTHONPATH=" + quote(site) + " ";
  auto real = run(env + kPython + " -c 'import vext'");
  ASSERT_NE(real.err.find("ImportError: " + v + ": undefined symbol: vend_new"), std::string::npos) << real.err;
  ASSERT_EQ(run(env + kPython + " -c 'import aaa'").status, 0);

  auto r = run(env + kBin + " --no-cache --format json " + quote(site));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  auto doc = json::parse(r.out);
  json lib;
  for (const auto& l : doc["libraries"])
    if (l["path"] == v) lib = l;
  ASSERT_TRUE(lib.is_object()) << r.out;
  for (const auto& l : doc["libraries"])  // aaa's module and both copies load
    if (l["path"] != v) {
      EXPECT_EQ(l["unresolved"], json::array()) << l["path"];
    }
  ASSERT_EQ(lib["unresolved"].size(), 1u) << lib.dump();
  const auto& u = lib["unresolved"][0];
  EXPECT_EQ(u["symbol"], "vend_new");
  EXPECT_EQ(u["classification"], "shadowed");
  EXPECT_EQ(lib["needed"][0]["path"], old_vend);
  EXPECT_EQ(u["reason"], "the import of aaa (" + a + "), which runs first, loaded " + old_vend +
                             " for libvend.so.1, which lacks it; glibc gives every later DT_NEEDED of libvend.so.1 "
                             "that copy, so " +
                             new_vend + ", which defines it, is never loaded");
  EXPECT_EQ(u["fix"]["detail"],
            "vext and aaa vendor libvend.so.1 under one soname: give the vendored copies distinct sonames (auditwheel "
            "repair renames each to libvend-<hash>.so.1 and patches its DT_NEEDED), or import vext's module before "
            "aaa");

  // The fix where it is ours: vext imports its own module first. The real import then works, and so does
  // the tool's verdict.
  write_file(site + "/vext/__init__.py", "from . import _v\nimport aaa\n");
  ASSERT_EQ(run(env + kPython + " -c 'import vext'").status, 0);
  r = run(env + kBin + " --no-cache " + quote(site));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

// Python imports an extension module RTLD_LOCAL: what another package's module, imported first, defines
// binds nothing loaded after it. vext's module uses a function aaa's module defines without linking it;
// `import vext` imports aaa first and still fails on that symbol, and so does the tool's verdict.
TEST_F(PythonImportDev, a_module_another_package_imports_first_is_loaded_local_and_binds_nothing_later) {
  std::string root = test::scratch_dir("pyimport-local"), site = root + "/site";
  auto cc = [&](const std::string& out, const std::string& source) { shared_library(root, out, source, ""); };
  const std::string a = site + "/aaa/_a.cpython-311-x86_64-linux-gnu.so";
  const std::string v = site + "/vext/_v.cpython-311-x86_64-linux-gnu.so";
  cc(a, "int a_helper(void) { return 1; }\n" + module("_a", "a_helper"));
  cc(v, module("_v", "a_helper"));
  write_file(site + "/aaa/__init__.py", "from . import _a\n");
  write_file(site + "/vext/__init__.py", "import aaa\nfrom . import _v\n");
  fs::remove(root + "/src.c");
  ASSERT_FALSE(HasFailure());
  const std::string env = "env -u LD_LIBRARY_PATH -u LD_PRELOAD PYTHONPATH=" + quote(site) + " ";
  auto real = run(env + kPython + " -c 'import vext'");
  ASSERT_NE(real.err.find("ImportError: " + v + ": undefined symbol: a_helper"), std::string::npos) << real.err;

  auto r = run(env + kBin + " --no-cache --format json " + quote(site));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  auto doc = json::parse(r.out);
  json lib;
  for (const auto& l : doc["libraries"])
    if (l["path"] == v) lib = l;
  ASSERT_TRUE(lib.is_object()) << r.out;
  ASSERT_EQ(lib["unresolved"].size(), 1u) << lib.dump();
  EXPECT_EQ(lib["unresolved"][0]["symbol"], "a_helper");
}

// `import torch` loads lib/libtorch_global_deps.so (RTLD_GLOBAL) before _C; when
// that load fails (a library it needs is nowhere), `import torch` fails, and with it the import of
// every extension whose package imports torch. Checked against a real import in /usr/bin/python3.
TEST_F(PythonImportDev, a_failing_libtorch_global_deps_fails_the_import_of_torch_first) {
  std::string root = test::scratch_dir("pyimport-global-deps"), site = root + "/site";
  auto cc = [](const std::string& out, const std::string& source, const std::string& args) {
    fs::create_directories(fs::path(out).parent_path());
    write_file(out + ".c", source);
    auto r =
        run("cc -shared -fPIC -O1 -I/usr/include/python3.11 -o " + quote(out) + " " + quote(out + ".c") + " " + args);
    fs::remove(out + ".c");
    return r.status == 0;
  };
  const std::string module =
      "#include <Python.h>\nstatic struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"NAME\", 0, -1, 0};\n"
      "PyMODINIT_FUNC PyInit_NAME(void) { return PyModule_Create(&def); }\n";
  auto named = [&](const std::string& name) {
    std::string m = module;
    for (size_t at; (at = m.find("NAME")) != std::string::npos;) m.replace(at, 4, name);
    return m;
  };
  // libtorch_global_deps.so needs libgompx.so.1, which is then removed.
  ASSERT_TRUE(cc(root + "/gone/libgompx.so.1", "int gompx(void) { return 1; }\n", "-Wl,-soname,libgompx.so.1"));
  ASSERT_TRUE(cc(site + "/torch/lib/libtorch_global_deps.so", "int deps(void) { return 0; }\n",
                 "-Wl,--no-as-needed " + quote(root + "/gone/libgompx.so.1")));
  fs::remove(root + "/gone/libgompx.so.1");
  ASSERT_TRUE(cc(site + "/torch/_C.so", named("_C"), ""));
  write_file(site + "/torch/_utils_internal.py", "USE_GLOBAL_DEPS = True\nUSE_RTLD_GLOBAL_WITH_LIBTORCH = False\n");
  write_file(
      site + "/torch/__init__.py",
      "import ctypes, os\nfrom torch._utils_internal import USE_GLOBAL_DEPS\nif USE_GLOBAL_DEPS:\n"
      "    ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib', 'libtorch_global_deps.so'),\n"
      "                mode=ctypes.RTLD_GLOBAL)\nfrom torch._C import *\n");
  std::string ext = site + "/depsext/_ext.so";
  ASSERT_TRUE(cc(ext, named("_ext"), ""));
  write_file(site + "/depsext/__init__.py", "import torch\nfrom depsext import _ext\n");
  auto real =
      run("env -u LD_LIBRARY_PATH PYTHONPATH=" + quote(site) + " " + kPython + " -c " + quote("import depsext"));
  EXPECT_NE(real.err.find("OSError: libgompx.so.1: cannot open shared object file"), std::string::npos) << real.err;
  auto r =
      run("env -u LD_LIBRARY_PATH PYTHONPATH=" + quote(site) + " " + kBin + " --python=" + kPython + " " + quote(ext));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1),
            "error: importing _ext.so would fail, in the import of torch it does first: 1 cause\n")
      << r.out;
  EXPECT_NE(r.out.find("error: library not found: libgompx.so.1 (needed by libtorch_global_deps.so)"),
            std::string::npos)
      << r.out;
  // With USE_GLOBAL_DEPS = False torch never loads it: the import works, and the tool agrees.
  write_file(site + "/torch/_utils_internal.py", "USE_GLOBAL_DEPS = False\nUSE_RTLD_GLOBAL_WITH_LIBTORCH = False\n");
  EXPECT_EQ(run("env -u LD_LIBRARY_PATH PYTHONPATH=" + quote(site) + " " + kPython + " -c " +
                quote("import depsext\nprint('ok')"))
                .out,
            "ok\n");
  auto off = run("env -u LD_LIBRARY_PATH PYTHONPATH=" + quote(site) + " " + kBin + " -q --python=" + kPython + " " +
                 quote(ext));
  EXPECT_EQ(off.status, 0) << off.out << off.err;
}

// Item 6: dpkg's database, with dpkg-query as the oracle; conda-meta and an SDK's version file.
TEST(Ownership, debian_libtorch_cpu_is_owned_by_libtorch1_13) {
  std::string lib = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
  if (!fs::exists(lib)) MLC_SKIP() << "libtorch1.13 is not installed";
  auto search = run("dpkg-query -S " + lib);
  ASSERT_EQ(search.status, 0);
  std::string package = search.out.substr(0, search.out.find(':'));
  auto version = run("dpkg-query -W -f '${Version}' " + package);
  auto owners = environment::find_owners({lib, "/lib/x86_64-linux-gnu/libc.so.6"}, {});
  ASSERT_TRUE(owners.count(lib));
  EXPECT_EQ(owners[lib].kind, OwnerKind::Dpkg);
  EXPECT_EQ(owners[lib].name, "libtorch1.13");
  EXPECT_EQ(owners[lib].name, package);
  EXPECT_EQ(owners[lib].version, version.out);
  // Through the /usr merge: /lib/... is recorded as /usr/lib/... or the other way round.
  EXPECT_EQ(owners["/lib/x86_64-linux-gnu/libc.so.6"].name, "libc6");

  auto r = run(kBin + " " + lib);
  EXPECT_NE(r.out.find("note: " + lib + " from Debian's libtorch1.13 " + version.out + "\n"), std::string::npos)
      << r.out;
  auto doc = json::parse(run(kBin + " --format json " + lib).out);
  EXPECT_EQ(doc["libraries"][0]["owner"], (json{{"kind", "dpkg"}, {"name", "libtorch1.13"}, {"version", version.out}}));
}

TEST(Ownership, conda_meta_and_sdk_version_files_name_their_packages) {
  std::string root = test::scratch_dir("ownership");
  std::string lib = std::string(MLC_LOADER_FIXTURES) + "/pyimport/system/libc10.so";
  copy(lib, root + "/conda/lib/libstdc++.so.6");
  fs::create_directories(root + "/conda/conda-meta");
  write_file(root + "/conda/conda-meta/libstdcxx-ng-9.3.0-hd4cf53a_17.json",
             R"({"name": "libstdcxx-ng", "version": "9.3.0", "files": ["lib/libstdc++.so.6"]})");
  copy(lib, root + "/musa/lib/libmusart.so.4");
  write_file(root + "/musa/version.txt", "MUSA Toolkit 3.1.0\n");
  copy(lib, root + "/cuda/lib64/libcudart.so.12");
  write_file(root + "/cuda/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.2.0"}})");
  copy(lib, root + "/loose/libloose.so");
  auto owners = environment::find_owners(
      {root + "/conda/lib/libstdc++.so.6", root + "/musa/lib/libmusart.so.4", root + "/cuda/lib64/libcudart.so.12",
       root + "/loose/libloose.so"},
      {.dpkg_dir = "/var/lib/dpkg", .sdk_homes = {root + "/musa", root + "/cuda"}, .cache_dir = ""});
  EXPECT_EQ(owners[root + "/conda/lib/libstdc++.so.6"].kind, OwnerKind::Conda);
  EXPECT_EQ(owners[root + "/conda/lib/libstdc++.so.6"].name, "libstdcxx-ng");
  EXPECT_EQ(owners[root + "/conda/lib/libstdc++.so.6"].version, "9.3.0");
  EXPECT_EQ(owners[root + "/musa/lib/libmusart.so.4"].kind, OwnerKind::Sdk);
  EXPECT_EQ(owners[root + "/musa/lib/libmusart.so.4"].name, "musa");
  EXPECT_EQ(owners[root + "/musa/lib/libmusart.so.4"].version, "3.1.0");
  EXPECT_EQ(owners[root + "/cuda/lib64/libcudart.so.12"].version, "12.2.0");
  EXPECT_FALSE(owners.count(root + "/loose/libloose.so"));

  // In a report: the library checked and the version finding's provider name their owner.
  auto r = run(kBin + " --sdk-home " + quote(root + "/musa") + " " + quote(root + "/conda/lib/libstdc++.so.6"));
  EXPECT_NE(r.out.find("note: " + root + "/conda/lib/libstdc++.so.6 from conda's libstdcxx-ng 9.3.0\n"),
            std::string::npos)
      << r.out;

  // The CI formats say it too: a SARIF result's properties, a JUnit suite's property (an extension of a
  // conda package with a finding: it needs a libc10.so found nowhere).
  copy(kFix + "/myext/_C.so", root + "/conda/lib/_myext.so");
  write_file(root + "/conda/conda-meta/myext-1.0-0.json",
             R"({"name": "myext", "version": "1.0", "files": ["lib/_myext.so"]})");
  auto sarif = json::parse(
      run("env -u LD_LIBRARY_PATH " + kBin + " --format sarif " + quote(root + "/conda/lib/_myext.so")).out);
  const auto& results = sarif["runs"][0]["results"];
  ASSERT_FALSE(results.empty());
  for (const auto& res : results)
    EXPECT_EQ(res["properties"]["owner"], (json{{"kind", "conda"}, {"name", "myext"}, {"version", "1.0"}}))
        << res.dump();
  auto junit = run("env -u LD_LIBRARY_PATH " + kBin + " --format junit " + quote(root + "/conda/lib/_myext.so")).out;
  EXPECT_NE(junit.find(
                "\">\n    <properties>\n      <property name=\"owner\" value=\"conda myext 1.0\"/>\n    </properties>\n"
                "    <testcase "),
            std::string::npos)
      << junit;
  // xmllint (libxml2-utils, in the test packages) is the oracle for well-formed XML; never dropped.
  write_file(root + "/r.xml", junit);
  auto lint = run("xmllint --noout " + quote(root + "/r.xml"));
  EXPECT_EQ(lint.status, 0) << "xmllint: " << lint.err;
}

// A file dpkg's index does not cover (a Python package's __init__.py) is looked up in the lists one by one, the
// list of the package it is most likely in first; the hint names it (a library by its name, a module by its
// top-level package), and the answer is the list's and status's whichever list the hint names. The real
// database: Debian's torch/__init__.py is python3-torch's, at the version dpkg-query gives.
TEST(Ownership, a_python_package_file_is_looked_up_in_its_packages_list_first) {
  EXPECT_EQ(environment::package_hint("/usr/lib/python3/dist-packages/torch/__init__.py"), "torch");
  EXPECT_EQ(environment::package_hint("/usr/lib/python3/dist-packages/typing_extensions.py"), "typing-extensions");
  EXPECT_EQ(environment::package_hint("/usr/lib/python3/dist-packages/_cffi_backend.cpython-311-x86_64-linux-gnu.so"),
            "cffi-backend");
  EXPECT_EQ(environment::package_hint("/venv/lib/python3.12/site-packages/NumPy/core/x.py"), "numpy");
  EXPECT_EQ(environment::package_hint("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"), "torch");
  EXPECT_EQ(environment::package_hint("/usr/lib/x86_64-linux-gnu/libstdc++.so.6"), "stdc");
  EXPECT_EQ(environment::package_hint("/usr/lib/x86_64-linux-gnu/libOpenCL.so.1"), "opencl");
  EXPECT_EQ(environment::package_hint("/usr/bin/__"), "");

  std::string root = test::scratch_dir("dpkg-hint");
  auto put = [](const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    write_file(path, text);
  };
  const std::string db = root + "/dpkg", site = "/usr/lib/python3/dist-packages";
  const std::string init = site + "/fakemod/__init__.py", ext = site + "/fakemod/_core.cpython-311-x86_64-linux-gnu.so",
                    other = site + "/other_mod/__init__.py";
  put(db + "/info/a-early.list", "/usr/share/doc/a-early\n");
  put(db + "/info/python3-fakemod.list", "/.\n" + site + "/fakemod\n" + init + "\n" + ext + "\n");
  put(db + "/info/python3-othermod.list", site + "/other_mod\n" + other + "\n");
  put(db + "/status",
      "Package: python3-fakemod\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.1-1\n\n"
      "Package: python3-othermod\nStatus: install ok installed\nArchitecture: all\nVersion: 0.3-2\n");
  for (const std::string& cache : {std::string(), root + "/cache"}) {
    SCOPED_TRACE(cache.empty() ? "no cache: the lists alone" : "a cache: the index, then the lists");
    auto owners = environment::find_owners({init, ext, other}, {.dpkg_dir = db, .sdk_homes = {}, .cache_dir = cache});
    ASSERT_EQ(owners.count(init), 1u);
    EXPECT_EQ(owners[init].name, "python3-fakemod");
    EXPECT_EQ(owners[init].version, "2.1-1");
    EXPECT_EQ(owners[ext].name, "python3-fakemod");
    EXPECT_EQ(owners[ext].version, "2.1-1");
    // other_mod's hint (other-mod) names no list: it is found by reading them all.
    ASSERT_EQ(owners.count(other), 1u);
    EXPECT_EQ(owners[other].name, "python3-othermod");
    EXPECT_EQ(owners[other].version, "0.3-2");
  }

  const std::string torch = "/usr/lib/python3/dist-packages/torch/__init__.py";
  fs::remove_all(root);
  if (!fs::exists(torch)) MLC_SKIP() << torch << " is absent: install python3-torch (tools/dev.sh's test packages)";
  auto q = run("dpkg-query -W -f '${Version}' python3-torch");
  ASSERT_EQ(q.status, 0) << q.err;
  auto real = environment::find_owners({torch}, {.dpkg_dir = "/var/lib/dpkg", .sdk_homes = {}, .cache_dir = ""});
  ASSERT_EQ(real.count(torch), 1u);
  EXPECT_EQ(real[torch].name, "python3-torch");
  EXPECT_EQ(real[torch].version, q.out);
}

// A few system files' owners are kept between runs by each file's identity (dpkg writes a package's files anew on
// every unpack): the next run answers them without dpkg's database, a file no package owns included, and one of
// another identity is looked up again. Many files are the index's. The real database agrees with dpkg-query.
TEST(Ownership, a_few_files_dpkg_owners_are_kept_by_their_identity) {
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6", libm = "/usr/lib/x86_64-linux-gnu/libm.so.6";
  if (!fs::exists(libc) || !fs::exists(libm)) MLC_SKIP() << libc << " or " << libm << " is absent";
  std::string root = test::scratch_dir("dpkg-kept");
  auto put = [](const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    write_file(path, text);
  };
  const std::string db = root + "/dpkg", cache = root + "/cache";
  put(db + "/info/libfake1:amd64.list", "/usr/lib/x86_64-linux-gnu\n" + libc + "\n");
  put(db + "/status", "Package: libfake1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0-1\n");
  const environment::OwnerSources sources{.dpkg_dir = db, .sdk_homes = {}, .cache_dir = cache};
  auto owners = environment::find_owners({libc, libm}, sources);
  ASSERT_EQ(owners.count(libc), 1u);
  EXPECT_EQ(owners[libc].name, "libfake1");
  EXPECT_EQ(owners[libc].version, "1.0-1");
  EXPECT_FALSE(owners.count(libm));
  std::string kept;
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename().string().starts_with("dpkg-owner-of-")) kept = e.path().string();
  ASSERT_FALSE(kept.empty()) << "no kept owners in " << cache;
  const std::string text = read_file(kept);
  EXPECT_NE(text.find("\tlibfake1 1.0-1\t" + libc + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\t-\t" + libm + "\n"), std::string::npos) << text;

  // The database gone, the kept answers stand (the same files, the same identities).
  fs::remove_all(db);
  fs::create_directories(db + "/info");
  put(db + "/status", "");
  owners = environment::find_owners({libc, libm}, sources);
  ASSERT_EQ(owners.count(libc), 1u) << "the kept owner was not used";
  EXPECT_EQ(owners[libc].name, "libfake1");
  EXPECT_EQ(owners[libc].version, "1.0-1");
  EXPECT_FALSE(owners.count(libm));

  // A row kept for another identity (the file replaced since) answers nothing: the database is read again.
  std::string other = text;
  for (size_t at = 0; (at = other.find("\n", at)) != std::string::npos && at + 1 < other.size(); ++at)
    if (std::isdigit(static_cast<unsigned char>(other[at + 1]))) other.insert(at + 1, "9");
  put(kept, other);
  put(db + "/info/libfake2:amd64.list", libc + "\n" + libm + "\n");
  put(db + "/status", "Package: libfake2\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.0-1\n");
  owners = environment::find_owners({libc, libm}, sources);
  EXPECT_EQ(owners[libc].name, "libfake2");
  EXPECT_EQ(owners[libm].name, "libfake2");
  EXPECT_EQ(owners[libm].version, "2.0-1");

  // The real database, asked twice (the second answer kept), is dpkg-query's.
  fs::remove_all(cache);
  const environment::OwnerSources real{.dpkg_dir = "/var/lib/dpkg", .sdk_homes = {}, .cache_dir = cache};
  auto q = run("dpkg-query -S " + libc + " " + fs::canonical(libc).string() +
               " /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null");
  const std::string package = q.out.substr(0, q.out.find_first_of(":,"));
  if (package.empty()) {
    fs::remove_all(root);
    MLC_SKIP() << "dpkg-query -S named no package for " << libc;
  }
  for (int time = 0; time < 2; ++time) {
    SCOPED_TRACE(time == 0 ? "looked up" : "kept");
    auto got = environment::find_owners({libc}, real);
    ASSERT_EQ(got.count(libc), 1u);
    EXPECT_EQ(got[libc].name, package);
  }
  fs::remove_all(root);
}

// The dpkg index cached by the database's mtimes: a fake dpkg root (info/*.list, status) whose
// package is upgraded under the cache, then a corrupt cache; the real database against dpkg-query.
TEST(Ownership, cached_dpkg_index_is_rebuilt_when_the_database_changes) {
  std::string root = test::scratch_dir("dpkg-index");
  auto put = [](const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    write_file(path, text);
  };
  std::string db = root + "/dpkg", cache = root + "/cache";
  const std::string lib = "/usr/lib/x86_64-linux-gnu/libfakeowner.so.1", tool = "/usr/bin/fakeowner-tool";
  auto status = [](const std::string& package, const std::string& version) {
    return "Package: other\nStatus: install ok installed\nArchitecture: all\nVersion: 7\n\nPackage: " + package +
           "\nStatus: install ok installed\nArchitecture: amd64\nVersion: " + version + "\n";
  };
  put(db + "/info/libfakeowner1:amd64.list", "/.\n/usr\n/usr/lib/x86_64-linux-gnu\n" + lib + "\n" + tool + "\n");
  put(db + "/info/other.list", "/usr/share/doc/other\n/usr/lib/x86_64-linux-gnu/libother.so\n");
  put(db + "/status", status("libfakeowner1", "1.0-1"));
  environment::OwnerSources sources{.dpkg_dir = db, .sdk_homes = {}, .cache_dir = cache};

  auto first = environment::load_dpkg_index(db, cache);
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->from_cache);
  // Only shared objects are indexed; the version comes from the stanza of that architecture.
  EXPECT_EQ(first->size(), 2u);
  EXPECT_EQ(first->find(lib)->package, "libfakeowner1:amd64");
  EXPECT_EQ(first->find(lib)->version, "1.0-1");
  auto owners = environment::find_owners({lib, tool}, sources);
  EXPECT_EQ(owners[lib].name, "libfakeowner1");
  EXPECT_EQ(owners[lib].version, "1.0-1");
  EXPECT_EQ(owners[tool].name, "libfakeowner1");  // not covered by the index: read from the lists
  std::vector<std::string> files;                 // dpkg's index (beside it, which directories hold dist-info)
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename().string().starts_with("dpkg-owners-")) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(read_file(files[0]).find(lib + "\tlibfakeowner1:amd64\t1.0-1\n"), std::string::npos);

  // The cache answers while the database is as it was: a list edited behind dpkg's back, with info/'s
  // and status's mtimes put back, is not read again.
  struct stat info_st, status_st;
  ASSERT_EQ(stat((db + "/info").c_str(), &info_st), 0);
  ASSERT_EQ(stat((db + "/status").c_str(), &status_st), 0);
  put(db + "/info/other.list", "/usr/share/doc/other\n/usr/lib/x86_64-linux-gnu/libother.so\n" + lib + "\n");
  timespec info_times[2] = {info_st.st_atim, info_st.st_mtim}, status_times[2] = {status_st.st_atim, status_st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, (db + "/info").c_str(), info_times, 0), 0);
  ASSERT_EQ(utimensat(AT_FDCWD, (db + "/status").c_str(), status_times, 0), 0);
  auto second = environment::load_dpkg_index(db, cache);
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->find(lib)->package, "libfakeowner1:amd64");

  // An upgrade, as dpkg does it: the old list goes, the new package's list and status are written.
  fs::remove(db + "/info/libfakeowner1:amd64.list");
  put(db + "/info/other.list", "/usr/share/doc/other\n/usr/lib/x86_64-linux-gnu/libother.so\n");
  put(db + "/info/libfakeowner2:amd64.list", "/usr/lib/x86_64-linux-gnu\n" + lib + "\n");
  put(db + "/status", status("libfakeowner2", "2.0-3"));
  auto third = environment::load_dpkg_index(db, cache);
  ASSERT_TRUE(third);
  EXPECT_FALSE(third->from_cache);
  owners = environment::find_owners({lib, tool}, sources);
  EXPECT_EQ(owners[lib].name, "libfakeowner2");
  EXPECT_EQ(owners[lib].version, "2.0-3");
  EXPECT_FALSE(owners.count(tool));  // its package is gone
  EXPECT_TRUE(environment::load_dpkg_index(db, cache)->from_cache);

  // A corrupt cache (cut short, then garbage) is ignored, the answer rebuilt and the cache rewritten.
  std::string good = read_file(files[0]);
  put(files[0], good.substr(0, good.size() - 6));
  auto cut = environment::load_dpkg_index(db, cache);
  ASSERT_TRUE(cut);
  EXPECT_FALSE(cut->from_cache);
  EXPECT_EQ(cut->find(lib)->package, "libfakeowner2:amd64");
  EXPECT_EQ(read_file(files[0]), good);
  put(files[0], std::string("mlc-dpkg-owner-index 1\n\x01\x02 not a key\n"));
  owners = environment::find_owners({lib}, sources);
  EXPECT_EQ(owners[lib].name, "libfakeowner2");
  EXPECT_EQ(read_file(files[0]), good);
  // The rows are sorted by path, each path once (the index is searched by halves): two rows swapped are no
  // file this tool wrote, and the answer is rebuilt.
  const size_t row1 = good.find("\n/") + 1, row2 = good.find("\n/", row1) + 1, row3 = good.find('\n', row2) + 1;
  ASSERT_LT(row2, row3) << good;
  put(files[0],
      good.substr(0, row1) + good.substr(row2, row3 - row2) + good.substr(row1, row2 - row1) + good.substr(row3));
  auto swapped = environment::load_dpkg_index(db, cache);
  ASSERT_TRUE(swapped);
  EXPECT_FALSE(swapped->from_cache);
  EXPECT_EQ(swapped->find(lib)->package, "libfakeowner2:amd64");
  EXPECT_EQ(read_file(files[0]), good);
  EXPECT_EQ(environment::load_dpkg_index(db, cache)->find("/usr/lib/x86_64-linux-gnu/libother.so")->package, "other");

  // The real database through the index agrees with dpkg-query -S for every library of libtorch's load.
  std::string torch = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
  if (!fs::exists(torch)) MLC_SKIP() << torch << " is absent: install libtorch1.13 (tools/dev.sh's test packages)";
  auto ldd = run("ldd " + torch);
  std::vector<std::string> paths;
  for (size_t at = 0; (at = ldd.out.find("=> /", at)) != std::string::npos;) {
    at += 3;
    paths.push_back(ldd.out.substr(at, ldd.out.find(' ', at) - at));
  }
  ASSERT_GT(paths.size(), 10u);
  auto real = environment::find_owners(paths, {.dpkg_dir = "/var/lib/dpkg", .sdk_homes = {}, .cache_dir = cache});
  // One dpkg-query for every spelling (it does not follow the /usr merge itself): "pkg[:arch][, ...]: path".
  std::string args;
  for (const auto& p : paths)
    args += " " + p + " " + fs::canonical(p).string() + (p.starts_with("/lib") ? " /usr" + p : "");
  auto q = run("dpkg-query -S" + args + " 2>/dev/null");
  std::map<std::string, std::string> package_of;
  std::istringstream lines(q.out);
  for (std::string line; std::getline(lines, line);) {
    auto colon = line.find(": /");
    if (colon != std::string::npos) package_of[line.substr(colon + 2)] = line.substr(0, line.find_first_of(":,"));
  }
  // Neither loop below may pass on nothing: dpkg-query named packages, and the tool found owners.
  ASSERT_FALSE(package_of.empty()) << "dpkg-query -S named no package:" << args;
  ASSERT_FALSE(real.empty());
  for (const auto& p : paths) {
    std::string package;
    for (const auto& form : {p, fs::canonical(p).string(), "/usr" + p})
      if (package.empty() && package_of.count(form)) package = package_of[form];
    if (package.empty()) {
      EXPECT_FALSE(real.count(p)) << p;
      continue;
    }
    ASSERT_TRUE(real.count(p)) << p << " is " << package << "'s";
    EXPECT_EQ(real[p].name, package) << p;
    EXPECT_FALSE(real[p].version.empty()) << p;
  }
  // Versions: dpkg-query -W for the packages named, once.
  std::set<std::string> packages;
  for (const auto& [p, owner] : real) packages.insert(owner.name);
  std::string names;
  for (const auto& n : packages) names += " " + n;
  auto w = run("dpkg-query -W -f '${Package} ${Version}\\n'" + names);
  for (const auto& [p, owner] : real)
    EXPECT_NE(("\n" + w.out + "\n").find("\n" + owner.name + " " + owner.version + "\n"), std::string::npos) << p;
}

// Without --python, an extension module's undefined symbols that the host interpreter's own load
// defines (Debian's PIL _imagingmath calls pow/powf/fmod, linked without -lm: python3 links libm)
// are host-provided under the python3 host cause, not unknown. nm is the oracle for which symbols
// and which library; the real import (python3 -c "import PIL._imagingmath") for the verdict.
TEST(HostLoad, debian_pil_imagingmath_is_checked_as_its_interpreter_imports_it) {
  std::string module;
  if (fs::exists(kDist + "/PIL"))
    for (const auto& e : fs::directory_iterator(kDist + "/PIL"))
      if (e.path().filename().string().starts_with("_imagingmath.")) module = e.path().string();
  if (module.empty() || !fs::exists(kPython)) MLC_SKIP() << "python3-pil is not installed";
  // The libm python3 loads (ldd's answer), and the module's undefined names outside the Python C API.
  auto ldd = run("ldd " + kPython + " | awk '$1 == \"libm.so.6\" {print $3}'");
  while (!ldd.out.empty() && std::isspace(static_cast<unsigned char>(ldd.out.back()))) ldd.out.pop_back();
  ASSERT_FALSE(ldd.out.empty()) << "python3 does not link libm.so.6";
  auto defined = run("nm -D --defined-only " + ldd.out + " | awk '{print $3}' | sed 's/@.*//'");
  auto undefined = run("nm -D --undefined-only " + quote(module) + " | awk '{print $2}' | sed 's/@.*//'");
  std::set<std::string> libm_defines, from_libm;
  size_t api = 0;
  std::istringstream d(defined.out), u(undefined.out);
  for (std::string n; std::getline(d, n);) libm_defines.insert(n);
  for (std::string n; std::getline(u, n);) {
    if (n.starts_with("Py") || n.starts_with("_Py")) ++api;
    else if (libm_defines.count(n) && run("nm -D --defined-only /lib/x86_64-linux-gnu/libc.so.6 | awk '{print $3}' | "
                                          "sed 's/@.*//' | grep -qx " +
                                          n)
                                              .status != 0)
      from_libm.insert(n);
  }
  ASSERT_FALSE(from_libm.empty()) << undefined.out;
  EXPECT_EQ(run(kPython + " -c 'import PIL._imagingmath'").status, 0);  // the real import works

  // An extension module is checked as Python imports it, without --python too: the
  // first ELF python3 on PATH is the main program of its process (read, never run), so the Python C
  // API it exports and its own libm.so.6 bind the module's references, as in the real import above.
  auto hosted = run("PATH=/usr/bin:/bin " + kBin + " --format json " + quote(module));
  EXPECT_EQ(hosted.status, 0) << hosted.out.substr(0, 2000);
  auto doc = json::parse(hosted.out);
  EXPECT_EQ(doc["libraries"][0]["path"], module);
  EXPECT_EQ(doc["libraries"][0]["unresolved"].size(), 0u) << doc["libraries"][0]["unresolved"].dump();
  EXPECT_EQ(doc["causes"].size(), 0u) << doc["causes"].dump();
  auto text = run("PATH=/usr/bin:/bin " + kBin + " " + quote(module));
  EXPECT_NE(text.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n"),
            std::string::npos)
      << text.out;
  // Without a python3 to read, nothing says the host has libm: those stay unknown.
  doc = json::parse(run("PATH=/nonexistent " + kBin + " --format json " + quote(module)).out);
  size_t libm_unknown = 0;
  for (const auto& s : doc["libraries"][0]["unresolved"])
    if (from_libm.count(s["symbol"].get<std::string>())) {
      EXPECT_EQ(s["classification"], "unknown") << s["symbol"];
      ++libm_unknown;
    }
  EXPECT_EQ(libm_unknown, from_libm.size()) << "every libm symbol is still reported, as unknown";
  // As the interpreter loads it: nothing is undefined.
  auto r = run(kBin + " --python=" + kPython + " " + quote(module));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 undefined symbols"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mlc
