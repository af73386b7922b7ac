// Libraries of Python modules (as a real pip venv has them: torch's libtorch_python, pyarrow's
// libarrow_python*, jaxlib's libjax_common): not extension modules, yet they call the Python C API and
// link no libpython, so only a Python process loads them. They are checked inside the interpreter, as
// extension modules are (src/python/hosting.h). The real loader is the oracle: ctypes.CDLL(path,
// RTLD_NOW) in /usr/bin/python3, and a libc-only host (test::real_load) for a process without Python.
#include <gtest/gtest.h>

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::quote;
using test::run;
using test::write_file;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kPython = "/usr/bin/python3";
const std::string kDist = "/usr/lib/python3/dist-packages";
// The tool finds its host as the first ELF python3 on PATH: this PATH makes it kPython.
const std::string kHostPath = "env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin ";

// ctypes.CDLL(path, RTLD_NOW) in a fresh /usr/bin/python3: "ok", or "fails: " and the loader's message.
std::string ctypes_load(const std::string& path) {
  auto r = run("env -u LD_LIBRARY_PATH " + kPython + " -c " +
               quote("import ctypes, os, sys\ntry:\n    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\n    print('ok')\n"
                     "except OSError as e:\n    print('fails: ' + str(e))\n") +
               " " + quote(path));
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

void gcc(const std::string& args) {
  auto r = run("gcc -shared -fPIC " + args);
  ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
}

// A library calling PyLong_FromLong without linking libpython, and its twin that also calls a function
// nothing defines: the first loads in Python, the second fails on that function alone.
struct Fixture {
  std::string uses_api, also_misses;
};

Fixture build_fixture(const std::string& dir) {
  write_file(dir + "/uses_api.c", "void* PyLong_FromLong(long);\nvoid* answer(void) { return PyLong_FromLong(42); }\n");
  write_file(dir + "/also_misses.c",
             "void* PyLong_FromLong(long);\nint mlc_defined_nowhere(void);\n"
             "void* answer(void) { return PyLong_FromLong(mlc_defined_nowhere()); }\n");
  Fixture f{dir + "/libuses_api.so", dir + "/libalso_misses.so"};
  gcc("-Wl,-soname,libuses_api.so -o " + f.uses_api + " " + dir + "/uses_api.c");
  gcc("-Wl,-soname,libalso_misses.so -o " + f.also_misses + " " + dir + "/also_misses.c");
  return f;
}

TEST(HostedLibrary, a_library_needing_the_python_c_api_without_libpython_is_checked_inside_the_interpreter) {
  if (!fs::exists(kPython)) MLC_SKIP() << kPython << " is not installed";
  std::string dir = test::scratch_dir("hosted");
  Fixture f = build_fixture(dir);
  ASSERT_FALSE(HasFailure());
  // The real loader: in Python both bind PyLong_FromLong; the second fails on its other name alone.
  ASSERT_EQ(ctypes_load(f.uses_api), "ok\n");
  ASSERT_EQ(ctypes_load(f.also_misses), "fails: " + f.also_misses + ": undefined symbol: mlc_defined_nowhere\n");
  // Outside Python (a libc-only program) the C API is what fails.
  auto alone = test::real_load(f.uses_api);
  ASSERT_FALSE(alone.ok);
  ASSERT_NE(alone.error.find("undefined symbol: PyLong_FromLong"), std::string::npos) << alone.error;

  auto ok = run(kHostPath + kBin + " --no-cache " + quote(f.uses_api));
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out, "note: " + f.uses_api + " uses the Python C API and links no libpython: checked as loaded into " +
                        kPython +
                        ", which provides it\n0 undefined symbols, 0 missing libraries, 0 missing versions in "
                        "1 library\n");
  auto doc = json::parse(run(kHostPath + kBin + " --no-cache --format json " + quote(f.uses_api)).out);
  EXPECT_EQ(doc["libraries"][0]["host"], kPython);
  EXPECT_EQ(doc["libraries"][0]["python_extension"], false);
  EXPECT_EQ(doc["libraries"][0]["unresolved"], json::array());

  // Its other undefined names are checked exactly as before: the one nothing defines, and only it.
  auto j = run(kHostPath + kBin + " --no-cache --format json " + quote(f.also_misses));
  EXPECT_EQ(j.status, 1) << j.out << j.err;
  doc = json::parse(j.out);
  ASSERT_EQ(doc["libraries"][0]["unresolved"].size(), 1u) << doc["libraries"][0]["unresolved"].dump();
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["symbol"], "mlc_defined_nowhere");
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["classification"], "unknown");
  EXPECT_EQ(doc["libraries"][0]["host"], kPython);
  EXPECT_EQ(doc["causes"], json::array());
  auto text = run(kHostPath + kBin + " --no-cache " + quote(f.also_misses));
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("error: undefined symbol: mlc_defined_nowhere\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("PyLong_FromLong"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("note: " + f.also_misses +
                          " uses the Python C API and links no libpython: checked as loaded "
                          "into " +
                          kPython + ", which provides it\n"),
            std::string::npos)
      << text.out;

  // Without a python3 to host it, nothing defines the C API: host-provided, and the load would fail.
  doc = json::parse(
      run("env -u LD_LIBRARY_PATH PATH=/nonexistent " + kBin + " --no-cache --format json " + quote(f.uses_api)).out);
  EXPECT_EQ(doc["libraries"][0]["host"], nullptr);
  ASSERT_EQ(doc["libraries"][0]["unresolved"].size(), 1u);
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["classification"], "host-provided");
}

// The rule's edges: a weak reference to the C API fails no load (it binds to 0), and a library that
// links libpython gets the API from it; neither needs a host, and the real loader agrees without one.
TEST(HostedLibrary, a_weak_reference_or_a_linked_libpython_needs_no_host) {
  std::string dir = test::scratch_dir("unhosted");
  write_file(dir + "/weak.c",
             "#pragma weak PyLong_FromLong\nvoid* PyLong_FromLong(long);\n"
             "void* answer(void) { return PyLong_FromLong ? PyLong_FromLong(42) : 0; }\n");
  gcc("-Wl,-soname,libweak.so -o " + dir + "/libweak.so " + dir + "/weak.c");
  std::vector<std::string> libs = {dir + "/libweak.so"};
  auto ldflags = run("python3-config --embed --ldflags 2>/dev/null");
  if (ldflags.status != 0 || ldflags.out.find("-lpython") == std::string::npos)
    MLC_SKIP() << "python3-config (python3-dev) gives no -lpython to link a library against";
  write_file(dir + "/linked.c", "void* PyLong_FromLong(long);\nvoid* answer(void) { return PyLong_FromLong(42); }\n");
  ldflags.out.pop_back();
  gcc("-Wl,-soname,liblinked.so -o " + dir + "/liblinked.so " + dir + "/linked.c " + ldflags.out);
  libs.push_back(dir + "/liblinked.so");
  ASSERT_FALSE(HasFailure());
  for (const auto& lib : libs) {
    auto real = test::real_load(lib);
    EXPECT_TRUE(real.ok) << lib << ": " << real.error;
    auto r = run(kHostPath + kBin + " --no-cache --format json " + quote(lib));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["libraries"][0]["host"], nullptr) << lib;
    EXPECT_EQ(doc["libraries"][0]["unresolved"], json::array()) << lib;
  }
}

// Real material: Debian's libtorch_python (python3-torch) calls 251 names of the C API and links no
// libpython. ctypes.CDLL loads it in Python; the tool says so, and names the host it used.
TEST(HostedLibrary, debian_libtorch_python_loads_as_ctypes_loads_it) {
  const std::string lib = kDist + "/torch/lib/libtorch_python.so";
  if (!fs::exists(lib) || !fs::exists(kPython)) MLC_SKIP() << "python3-torch is not installed";
  std::string truth = ctypes_load(lib);
  auto r = run(kHostPath + kBin + " --no-cache --format json " + quote(lib));
  EXPECT_EQ(r.status, truth == "ok\n" ? 0 : 1) << truth << r.out.substr(0, 2000) << r.err;
  auto doc = json::parse(r.out);
  EXPECT_EQ(doc["libraries"][0]["path"], lib);
  EXPECT_EQ(doc["libraries"][0]["host"], kPython);
  EXPECT_EQ(doc["libraries"][0]["python_extension"], false);
  auto text = run(kHostPath + kBin + " --no-cache " + quote(lib));
  EXPECT_NE(text.out.find("note: " + lib + " uses the Python C API and links no libpython: checked as loaded into " +
                          kPython + ", which provides it\n"),
            std::string::npos)
      << text.out;
}

// The interpreters pyenv has built (PYENV_ROOT, else ~/.pyenv of the user in the password database: the suite
// runs with HOME in its scratch root), by major.minor: "3.12" -> .../versions/3.12.1/bin/python3.12.
std::string pyenv_python(const std::string& version) {
  std::string root;
  if (const char* r = std::getenv("PYENV_ROOT"); r && *r) root = r;
  else if (const passwd* pw = getpwuid(getuid())) root = std::string(pw->pw_dir) + "/.pyenv";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root + "/versions", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(version + ".", 0) == 0 && fs::exists(e.path() / "bin" / ("python" + version)))
      return (e.path() / "bin" / ("python" + version)).string();
  }
  return "";
}

// A venv made by that interpreter (no pip: nothing is fetched), and its site-packages.
struct Venv {
  std::string dir, python, site;
};
Venv make_venv(const std::string& base, const std::string& version, const std::string& dir) {
  auto r = run(quote(base) + " -m venv --without-pip " + quote(dir));
  EXPECT_EQ(r.status, 0) << r.err;
  return {dir, dir + "/bin/python", dir + "/lib/python" + version + "/site-packages"};
}

// `VENV/bin/python -c 'import NAME'` in a fresh process, with the site-packages the venv gives it: "ok", or
// the exception's type and words.
std::string real_import(const Venv& venv, const std::string& name) {
  auto r = run("env -u LD_LIBRARY_PATH -u PYTHONPATH -u PYTHONHOME " + quote(venv.python) + " -c " +
               quote("import importlib, sys\ntry:\n    importlib.import_module(sys.argv[1])\n    print('ok')\n"
                     "except BaseException as e:\n    print(type(e).__name__ + ': ' + str(e))\n") +
               " " + name);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

// An extension module that calls _PyUnicode_Ready (Python 3.11 exports it; 3.12 removed it) and Py_NewRef
// (exported from 3.10 on): Debian's python3.11 defines both, a 3.12 venv lacks the first, a 3.9 venv the second.
void build_legacy_module(const std::string& source_dir, const std::string& out) {
  write_file(source_dir + "/legacy.c",
             "int _PyUnicode_Ready(void*);\nvoid* Py_NewRef(void*);\nvolatile int mlc_never;\n"
             "void* PyInit_" +
                 fs::path(out).filename().string().substr(0, fs::path(out).filename().string().find('.')) +
                 "(void) {\n  if (mlc_never) { _PyUnicode_Ready(0); return Py_NewRef(0); }\n  return 0;\n}\n");
  gcc("-o " + quote(out) + " " + quote(source_dir + "/legacy.c"));
}

// A file installed in a venv is imported by the venv's interpreter (pyvenv.cfg's), not by the python3 PATH
// finds: checked with Debian's python3.11 first on PATH, a module a 3.12 venv (and a 3.9 one) fails to import
// is a failure, not a false all-clear. The oracle: the venv's own python importing it.
TEST(HostedLibrary, a_file_in_a_venv_is_imported_by_that_venvs_interpreter_not_the_one_on_path) {
  if (!fs::exists(kPython)) MLC_SKIP() << kPython << " is not installed";
  const std::string py312 = pyenv_python("3.12"), py39 = pyenv_python("3.9");
  if (py312.empty() || py39.empty()) MLC_SKIP() << "pyenv's Python 3.12 and 3.9 are not installed (~/.pyenv)";
  std::string dir = test::scratch_dir("venv-host");
  for (const auto& [base, version] : {std::pair{py312, std::string("3.12")}, std::pair{py39, std::string("3.9")}}) {
    SCOPED_TRACE(version);
    Venv venv = make_venv(base, version, dir + "/venv" + version);
    ASSERT_FALSE(HasFailure());
    const std::string module = venv.site + "/legacy.so";
    build_legacy_module(dir, module);
    ASSERT_FALSE(HasFailure());
    const std::string lacking = version == "3.12" ? "_PyUnicode_Ready" : "Py_NewRef";
    // The real process: the venv's python fails on the name its libpython lacks; Debian's 3.11 has both.
    ASSERT_EQ(real_import(venv, "legacy"), "ImportError: " + module + ": undefined symbol: " + lacking + "\n");
    ASSERT_EQ(ctypes_load(module), "ok\n");
    for (const std::string& input : {venv.dir, venv.site, module}) {
      SCOPED_TRACE(input);
      auto r = run(kHostPath + kBin + " --no-cache --format json " + quote(input));
      EXPECT_EQ(r.status, 1) << r.out << r.err;
      auto doc = json::parse(r.out);
      json lib;
      for (const auto& l : doc["libraries"])
        if (l["path"] == module) lib = l;
      ASSERT_TRUE(lib.is_object()) << r.out;
      EXPECT_EQ(lib["host"], venv.dir + "/bin/python3");
      ASSERT_EQ(lib["unresolved"].size(), 1u) << lib["unresolved"].dump();
      EXPECT_EQ(lib["unresolved"][0]["symbol"], lacking);
      EXPECT_EQ(lib["load_failures"], json::array());  // untagged: every Python imports legacy.so
    }
  }
  // --python=EXE, an interpreter named by its path, overrides the venv's: Debian's 3.11 defines both names. The
  // verdict is for that process, and a warning says the file's own venv imports it.
  const std::string venv312 = dir + "/venv3.12", module312 = venv312 + "/lib/python3.12/site-packages/legacy.so";
  auto r = run(kHostPath + kBin + " --no-cache --format json --python=" + kPython + " " + quote(module312));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["warnings"],
            json::array({"files installed in " + venv312 + " are checked as " + kPython +
                         " imports them, as --python asked, though " + venv312 +
                         "/bin/python3 is the interpreter that imports them (a verdict for " + kPython +
                         "'s process only)"}));
  // Bare --python means "as Python imports it": python3 on PATH is Debian's 3.11, but the file is installed in
  // the 3.12 venv, whose import fails, so that is the verdict (it was an all-clear for the wrong process).
  r = run(kHostPath + kBin + " --no-cache --format json --python " + quote(module312));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["libraries"].size(), 1u) << r.out;
  EXPECT_EQ(doc["libraries"][0]["host"], venv312 + "/bin/python3");
  ASSERT_EQ(doc["libraries"][0]["unresolved"].size(), 1u) << r.out;
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["symbol"], "_PyUnicode_Ready");
  const json bare_warning =
      json::array({"files installed in " + venv312 + " are checked as its interpreter " + venv312 +
                   "/bin/python3 imports them, not as " + kPython + " (python3 on PATH) would"});
  EXPECT_EQ(doc["warnings"], bare_warning);
  // The whole venv (its two modules): the warning is said once, for the environment.
  build_legacy_module(dir, venv312 + "/lib/python3.12/site-packages/legacy2.so");
  r = run(kHostPath + kBin + " --no-cache --format json --python " + quote(venv312));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  doc = json::parse(r.out);
  EXPECT_EQ(doc["libraries"].size(), 2u) << r.out;
  EXPECT_EQ(doc["warnings"], bare_warning);
  // With the venv's python3 first on PATH (an activated venv), bare --python is that interpreter: no warning.
  r = run("env -u LD_LIBRARY_PATH PATH=" + venv312 + "/bin:/usr/bin:/bin " + kBin +
          " --no-cache --format json --python " + quote(module312));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["warnings"], json::array()) << r.out;
}

// An extension module's name says which Python it is for (cpython-311): a 3.9 venv's import never opens it
// (ModuleNotFoundError), which is said as such, with a reinstall for that interpreter; what it lacks in 3.9's
// C API is an ABI mismatch named by the tag, not a guess at which Python added which name.
TEST(HostedLibrary, an_extension_tagged_for_another_python_is_named_by_its_tag) {
  const std::string py39 = pyenv_python("3.9");
  if (py39.empty()) MLC_SKIP() << "pyenv's Python 3.9 is not installed (~/.pyenv)";
  std::string dir = test::scratch_dir("venv-tag");
  Venv venv = make_venv(py39, "3.9", dir + "/venv");
  ASSERT_FALSE(HasFailure());
  const std::string module = venv.site + "/tagged.cpython-311-x86_64-linux-gnu.so";
  build_legacy_module(dir, module);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(real_import(venv, "tagged"), "ModuleNotFoundError: No module named 'tagged'\n");

  auto r = run(kHostPath + kBin + " --no-cache --format json " + quote(venv.site));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["libraries"].size(), 1u) << r.out;
  const auto& lib = doc["libraries"][0];
  ASSERT_EQ(lib["load_failures"].size(), 1u) << lib.dump();
  EXPECT_EQ(lib["load_failures"][0]["kind"], "extension-tag");
  EXPECT_EQ(lib["load_failures"][0]["message"], "No module named 'tagged'");
  EXPECT_EQ(lib["load_failures"][0]["fix"],
            "it is built for Python 3.11 (its name's tag cpython-311), and " + venv.dir +
                "/bin/python3 is Python 3.9, whose import looks only for its own tag, .abi3.so and .so: rebuild or "
                "reinstall it for Python 3.9, or import it with a Python 3.11 interpreter");
  ASSERT_EQ(lib["unresolved"].size(), 1u) << lib["unresolved"].dump();
  EXPECT_EQ(lib["unresolved"][0]["symbol"], "Py_NewRef");
  EXPECT_EQ(lib["unresolved"][0]["classification"], "abi-mismatch");
  ASSERT_EQ(doc["causes"].size(), 1u) << doc["causes"].dump();
  EXPECT_NE(
      doc["causes"][0]["headline"].get<std::string>().find("it was built for Python 3.11 (its name's tag cpython-311)"),
      std::string::npos)
      << doc["causes"][0].dump();

  // A pip install: its dist-info RECORD names the file, and the fix reinstalls that distribution.
  fs::create_directories(venv.site + "/tagged-1.0.dist-info");
  write_file(venv.site + "/tagged-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tagged\nVersion: 1.0\n");
  write_file(venv.site + "/tagged-1.0.dist-info/RECORD",
             "tagged.cpython-311-x86_64-linux-gnu.so,,\ntagged-1.0.dist-info/METADATA,,\n"
             "tagged-1.0.dist-info/RECORD,,\n");
  doc = json::parse(run(kHostPath + kBin + " --no-cache --format json " + quote(module)).out);
  EXPECT_EQ(doc["libraries"][0]["load_failures"][0]["fix"],
            "it is built for Python 3.11 (its name's tag cpython-311), and " + venv.dir +
                "/bin/python3 is Python 3.9, whose import looks only for its own tag, .abi3.so and .so: reinstall "
                "tagged for this interpreter (" +
                venv.dir + "/bin/python3 -m pip install --force-reinstall tagged)");
}

// LD_PRELOAD is part of the process: glibc loads its objects right after the main program, before anything
// the file needs, so a stale copy preloaded under a soname is the copy every later DT_NEEDED of that name
// gets. The oracle: ctypes.CDLL(RTLD_NOW) in python3 started with the same LD_PRELOAD.
TEST(HostedLibrary, a_stale_copy_in_ld_preload_is_the_copy_the_module_binds_to) {
  if (!fs::exists(kPython)) MLC_SKIP() << kPython << " is not installed";
  std::string dir = test::scratch_dir("preload");
  fs::create_directories(dir + "/stale");
  fs::create_directories(dir + "/pkg");
  write_file(dir + "/old.c", "int vend_old(void) { return 1; }\n");
  write_file(dir + "/new.c", "int vend_old(void) { return 1; }\nint vend_new(void) { return 2; }\n");
  write_file(dir + "/ext.c", "int vend_new(void);\nvoid* PyInit__ext(void) { return vend_new() ? 0 : 0; }\n");
  gcc("-Wl,-soname,libvend.so.1 -o " + dir + "/stale/libvend.so.1 " + dir + "/old.c");
  gcc("-Wl,-soname,libvend.so.1 -o " + dir + "/pkg/libvend.so.1 " + dir + "/new.c");
  gcc("-Wl,--enable-new-dtags,-rpath,'$ORIGIN' -o " + dir + "/pkg/_ext.so " + dir + "/ext.c " + dir +
      "/pkg/libvend.so.1");
  ASSERT_FALSE(HasFailure());
  const std::string ext = dir + "/pkg/_ext.so", stale = dir + "/stale/libvend.so.1";
  for (const std::string& preload : {stale, std::string("libvend.so.1")}) {
    SCOPED_TRACE(preload);
    // A bare name is searched as the main program's DT_NEEDED would be: here through LD_LIBRARY_PATH.
    const std::string env =
        "env " +
        (preload == stale ? std::string("-u LD_LIBRARY_PATH ") : "LD_LIBRARY_PATH=" + quote(dir + "/stale") + " ") +
        "LD_PRELOAD=" + quote(preload) + " ";
    auto real = run(env + kPython + " -c " +
                    quote("import ctypes, os, sys\ntry:\n    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\n    print('ok')\n"
                          "except OSError as e:\n    print('fails: ' + str(e))\n") +
                    " " + quote(ext));
    ASSERT_EQ(real.out, "fails: " + ext + ": undefined symbol: vend_new\n") << real.err;
    // The tool runs under the same LD_PRELOAD; an ASan build of it would refuse to start with its runtime
    // not first in the list (the sanitizer's own check, not the tool's), so that check is turned off.
    auto r = run(env + "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 PATH=/usr/bin:/bin " +
                 kBin + " --no-cache --format json " + quote(ext));
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    auto doc = json::parse(r.out);
    ASSERT_EQ(doc["libraries"][0]["path"], ext);
    ASSERT_EQ(doc["libraries"][0]["unresolved"].size(), 1u) << doc["libraries"][0].dump();
    EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["symbol"], "vend_new");
    // Its libvend.so.1 is the preloaded object, not the copy its RUNPATH would have found.
    ASSERT_EQ(doc["libraries"][0]["needed"].size(), 1u);
    EXPECT_EQ(doc["libraries"][0]["needed"][0]["path"], stale);
    EXPECT_EQ(doc["libraries"][0]["needed"][0]["how"], "ld_preload");
    // The fix takes it out of LD_PRELOAD: no search path order gets past a preloaded copy.
    EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["classification"], "shadowed");
    EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["fix"]["detail"],
              "take " + stale +
                  " out of LD_PRELOAD (or /etc/ld.so.preload): it is loaded before anything searches, "
                  "so " +
                  dir + "/pkg/libvend.so.1 is never loaded for its soname");
  }
  // Without the preload the RUNPATH's copy is loaded, and the real loader agrees.
  ASSERT_EQ(ctypes_load(ext), "ok\n");
  auto r = run("env -u LD_PRELOAD -u LD_LIBRARY_PATH PATH=/usr/bin:/bin " + kBin + " --no-cache " + quote(ext));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

}  // namespace
}  // namespace mlc
