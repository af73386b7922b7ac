// Libraries of Python modules (as a real pip venv has them: torch's libtorch_python, pyarrow's
// libarrow_python*, jaxlib's libjax_common): not extension modules, yet they call the Python C API and
// link no libpython, so only a Python process loads them. They are checked inside the interpreter, as
// extension modules are (src/host/python_host.h). The real loader is the oracle: ctypes.CDLL(path,
// RTLD_NOW) in /usr/bin/python3, and a libc-only host (test::real_load) for a process without Python.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mlc
