// Causes a new user found wrong or harmful: the libc10 torch itself
// loads called a stale copy to remove, a DT_RPATH fix speaking of RUNPATH, CUDA calls the port missed
// told "not found in CUDA", a HIP symbol both provider-mismatch and defined, Python C API symbols
// blamed on a missing libc10. Each world is built from source at test time; where a verdict is at
// stake the real loader (ctypes.CDLL(path, RTLD_NOW) in a fresh /usr/bin/python3) must fail exactly
// when musa-linkcheck exits 1, and the tool's classification and diagnostic lines are asserted.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
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

// Compiles one source into a shared object; `extra` is the link line's tail (libraries, -Wl flags).
void build(const std::string& compiler, const std::string& dir, const std::string& out, const std::string& code,
           const std::string& extra = "") {
  std::string src = dir + (compiler == "gcc" ? "/src.c" : "/src.cpp");
  test::write_file(src, code);
  auto r = run(compiler + " -shared -fPIC -o " + quote(out) + " " + quote(src) + " " + extra);
  ASSERT_EQ(r.status, 0) << r.err;
}

// The real loader in a fresh process: the preloads RTLD_LOCAL (as Python imports), then `path` RTLD_NOW.
test::CommandResult real_load(const std::string& llp, const std::string& path,
                              const std::vector<std::string>& preloads = {}) {
  std::string code = "import ctypes, os\n";
  for (const auto& p : preloads) code += "ctypes.CDLL(" + json(p).dump() + ", os.RTLD_NOW | os.RTLD_LOCAL)\n";
  code += "ctypes.CDLL(" + json(path).dump() + ", os.RTLD_NOW)\n";
  return run("env LD_LIBRARY_PATH=" + quote(llp) + " " + kPython + " -c " + quote(code));
}

std::string line_with(const std::string& text, const std::string& start) {
  size_t at = text.find("\n" + start);
  if (at == std::string::npos) return "";
  size_t end = text.find('\n', at + 1);
  return text.substr(at + 1, end - at - 1);
}

// A pip-like torch 2.0.0 in site/torch: _C finds lib/libc10.so by its DT_RPATH ($ORIGIN/lib). An
// extension was built against another libc10.so, which has c10::TensorImpl::FreeMemory(); that copy
// sits on LD_LIBRARY_PATH, which DT_RPATH comes before. The loader takes torch's copy, which lacks it.
struct TorchWorld {
  std::string root, site, torch_c10, newer, ext, ext_rpath;
  TorchWorld() {
    root = test::scratch_dir("cause-torch");
    site = root + "/site";
    fs::create_directories(site + "/torch/lib");
    fs::create_directories(site + "/ext");
    fs::create_directories(root + "/newer");
    torch_c10 = site + "/torch/lib/libc10.so";
    newer = root + "/newer/libc10.so";
    build("g++", root, torch_c10,
          "namespace c10 { struct TensorImpl { void HandleResize(); void release_resources(); };\n"
          "void TensorImpl::HandleResize() {} void TensorImpl::release_resources() {} }\n",
          "-Wl,-soname,libc10.so");
    build("g++", root, newer,
          "namespace c10 { struct TensorImpl { void HandleResize(); void release_resources(); void FreeMemory(); };\n"
          "void TensorImpl::HandleResize() {} void TensorImpl::release_resources() {} void TensorImpl::FreeMemory() {} "
          "}\n",
          "-Wl,-soname,libc10.so");
    build("g++", root, site + "/torch/_C.cpython-311-x86_64-linux-gnu.so",
          "extern \"C\" void* PyInit__C() { return 0; }\n",
          "-Wl,--no-as-needed " + quote(torch_c10) + " -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib'");
    test::write_file(site + "/torch/__init__.py", "from torch._C import *\n");
    test::write_file(site + "/torch/version.py", "__version__ = '2.0.0'\n");
    std::string code =
        "namespace c10 { struct TensorImpl { void FreeMemory(); }; }\n"
        "extern \"C\" void* PyInit__ext() { static_cast<c10::TensorImpl*>(nullptr)->FreeMemory(); return 0; }\n";
    // Imported after torch (its package's __init__ imports torch first), linking libc10 by name.
    ext = site + "/ext/_ext.cpython-311-x86_64-linux-gnu.so";
    build("g++", root, ext, code, "-Wl,--no-as-needed " + quote(newer));
    test::write_file(site + "/ext/__init__.py", "import torch\nfrom . import _ext\n");
    // Without --python: the extension finds torch beside it, by its own DT_RPATH.
    ext_rpath = site + "/ext/_ext2.cpython-311-x86_64-linux-gnu.so";
    build("g++", root, ext_rpath, code,
          "-Wl,--no-as-needed " + quote(newer) + " -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/../torch/lib'");
  }
};

// Item 4b: the libc10 torch loads is the one the extension must live with; it is not stale, and the
// fix never removes it.
TEST(TorchCopy, the_libc10_torch_loads_is_provider_mismatch_never_a_stale_copy_to_remove) {
  TorchWorld w;
  const std::string llp = w.root + "/newer";
  auto real = real_load(llp, w.ext, {w.site + "/torch/_C.cpython-311-x86_64-linux-gnu.so"});
  ASSERT_NE(real.status, 0) << "the real load succeeds?";
  EXPECT_NE(real.err.find("undefined symbol: _ZN3c1010TensorImpl10FreeMemoryEv"), std::string::npos) << real.err;
  auto r = run("env PYTHONPATH=" + quote(w.site) + " LD_LIBRARY_PATH=" + quote(llp) + " " + kBin + kQuiet +
               " --python=" + kPython + " " + quote(w.ext));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(line_with(r.out, "error: _ext"),
            "error: _ext.cpython-311-x86_64-linux-gnu.so was built against another version of libc10.so: the loaded " +
                w.torch_c10 + " (rpath), the copy torch 2.0.0 loads, lacks 1 symbol that " + w.newer +
                " (ld_library_path) has")
      << r.out;
  EXPECT_NE(r.out.find("\n>>> provider-mismatch: c10::TensorImpl::FreeMemory()\n"), std::string::npos) << r.out;
  EXPECT_EQ(
      line_with(r.out, ">>> fix:"),
      ">>> fix: install the version of torch that _ext.cpython-311-x86_64-linux-gnu.so was built against, or rebuild "
      "_ext.cpython-311-x86_64-linux-gnu.so against the loaded libc10.so (torch 2.0.0); do not remove " +
          w.torch_c10 + ": torch 2.0.0 loads it")
      << r.out;
  EXPECT_EQ(r.out.find("stale"), std::string::npos) << r.out;

  auto doc = json::parse(run("env PYTHONPATH=" + quote(w.site) + " LD_LIBRARY_PATH=" + quote(llp) + " " + kBin +
                             kQuiet + " --format json --python=" + kPython + " " + quote(w.ext))
                             .out);
  ASSERT_EQ(doc["causes"].size(), 1u) << doc.dump(1);
  EXPECT_EQ(doc["causes"][0]["kind"], "provider-mismatch");
  EXPECT_EQ(doc["causes"][0]["picked"]["path"], w.torch_c10);
  const auto& u = doc["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "provider-mismatch");
  EXPECT_EQ(u["fix"]["kind"], "rebuild-abi");
  EXPECT_EQ(u["cause"], doc["causes"][0]["id"]);

  // Torch found beside the target (its DT_RPATH into torch/lib), without --python: the same cause.
  auto real2 = real_load(llp, w.ext_rpath);
  ASSERT_NE(real2.status, 0);
  EXPECT_NE(real2.err.find("undefined symbol: _ZN3c1010TensorImpl10FreeMemoryEv"), std::string::npos) << real2.err;
  auto r2 = run("env LD_LIBRARY_PATH=" + quote(llp) + " " + kBin + kQuiet + " " + quote(w.ext_rpath));
  EXPECT_EQ(r2.status, 1) << r2.out;
  EXPECT_NE(r2.out.find("\n>>> provider-mismatch: c10::TensorImpl::FreeMemory()\n"), std::string::npos) << r2.out;
  EXPECT_NE(r2.out.find(">>> fix: install the version of torch that _ext2.cpython-311-x86_64-linux-gnu.so was built "
                        "against"),
            std::string::npos)
      << r2.out;
  EXPECT_EQ(r2.out.find("stale"), std::string::npos) << r2.out;
}

// Item 4c: a stale copy found through a DT_RPATH, the good one on LD_LIBRARY_PATH (and the reverse,
// with DT_RUNPATH): each fix names the tag the directory really came from, and which list comes first.
TEST(StaleCopy, the_fix_names_the_dynamic_tag_and_the_list_each_directory_came_from) {
  std::string root = test::scratch_dir("cause-rpath");
  fs::create_directories(root + "/good");
  fs::create_directories(root + "/stale");
  build("gcc", root, root + "/good/libx.so.1", "int x_old(void) { return 1; }\nint x_new(void) { return 2; }\n",
        "-Wl,-soname,libx.so.1");
  build("gcc", root, root + "/stale/libx.so.1", "int x_old(void) { return 1; }\n", "-Wl,-soname,libx.so.1");
  const std::string user = "extern int x_new(void);\nint use(void) { return x_new(); }\n";
  build(
      "gcc", root, root + "/librp.so", user,
      "-Wl,--no-as-needed " + quote(root + "/good/libx.so.1") + " -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/stale'");
  build("gcc", root, root + "/librun.so", user,
        "-Wl,--no-as-needed " + quote(root + "/good/libx.so.1") + " -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/good'");

  struct Case {
    std::string lib, llp, headline, fix;
  };
  const std::vector<Case> cases = {
      {"librp.so", root + "/good",
       "error: libx.so.1 from " + root + "/stale/libx.so.1 (rpath) lacks 1 symbol that " + root +
           "/good/libx.so.1 (ld_library_path) has",
       ">>> fix: remove the stale copy " + root + "/stale/libx.so.1, or take " + root +
           "/stale out of the DT_RPATH of librp.so, which the loader searches before LD_LIBRARY_PATH (or "
           "--library-path)"},
      {"librun.so", root + "/stale",
       "error: libx.so.1 from " + root + "/stale/libx.so.1 (ld_library_path) lacks 1 symbol that " + root +
           "/good/libx.so.1 (runpath) has",
       ">>> fix: remove the stale copy " + root + "/stale/libx.so.1, or take " + root +
           "/stale out of LD_LIBRARY_PATH (or --library-path), which the loader searches before the DT_RUNPATH of "
           "librun.so"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lib);
    auto real = real_load(c.llp, root + "/" + c.lib);
    ASSERT_NE(real.status, 0) << "the stale copy is taken first";
    EXPECT_NE(real.err.find("undefined symbol: x_new"), std::string::npos) << real.err;
    auto r = run("env LD_LIBRARY_PATH=" + quote(c.llp) + " " + kBin + kQuiet + " " + quote(root + "/" + c.lib));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(line_with(r.out, "error: libx"), c.headline) << r.out;
    EXPECT_NE(r.out.find("\n>>> shadowed: x_new\n"), std::string::npos) << r.out;
    EXPECT_EQ(line_with(r.out, ">>> fix:"), c.fix) << r.out;
  }
}

// Item 5b: a HIP library calling what Debian's libamdhip64.so.5 lacks. provider-mismatch says the
// loaded libamdhip64 does not define it; no "defined in" line may say it does.
TEST(HipLibrary, provider_mismatch_is_not_followed_by_a_defined_in_line_naming_the_library_that_lacks_it) {
  const std::string hip = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
  if (!fs::exists(hip)) MLC_SKIP() << "Debian's libamdhip64-dev is not installed";
  std::string root = test::scratch_dir("cause-hip");
  build("gcc", root, root + "/libhipuser.so",
        "int hipMalloc(void**, unsigned long);\nint hipMallocFromTheFuture(void**, unsigned long);\n"
        "int use(void) { void* p; hipMalloc(&p, 1); return hipMallocFromTheFuture(&p, 1); }\n",
        "-Wl,--no-as-needed " + quote(hip));
  auto real = real_load("", root + "/libhipuser.so");
  ASSERT_NE(real.status, 0);
  EXPECT_NE(real.err.find("undefined symbol: hipMallocFromTheFuture"), std::string::npos) << real.err;
  for (const std::string backend : {"", " --backend hip"}) {
    SCOPED_TRACE(backend);
    auto r = run(kBin + kQuiet + backend + " " + quote(root + "/libhipuser.so"));
    EXPECT_EQ(r.status, 1) << r.out;
    std::string cls = line_with(r.out, ">>> provider-mismatch:");
    EXPECT_EQ(cls.rfind(">>> provider-mismatch: built against another version of libamdhip64.so.5: the loaded ", 0), 0u)
        << r.out;
    EXPECT_NE(cls.find("libamdhip64.so.5 defines 396 symbols of hip* but not this one"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(">>> defined in:"), std::string::npos) << r.out;
    EXPECT_EQ(line_with(r.out, ">>> fix:"),
              ">>> fix: install the version of libamdhip64.so.5 that libhipuser.so was built "
              "against, or rebuild libhipuser.so against the loaded libamdhip64.so.5")
        << r.out;
    auto doc = json::parse(run(kBin + kQuiet + backend + " --format json " + quote(root + "/libhipuser.so")).out);
    ASSERT_EQ(doc["libraries"][0]["unresolved"].size(), 1u);
    EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["classification"], "provider-mismatch");
  }
}

// Item 5c: a library that calls the Python C API (not an extension module) and whose libc10.so.2.0 is
// missing. Its Py* symbols are the interpreter's: with libc10.so.2.0 back, the real loader in python3
// binds them all; only c10's symbol is the missing library's. With a python3 on PATH it is checked
// inside it (src/python/hosting.h) and the C API is not a finding; without one, it is
// host-provided.
TEST(MissingLibrary, python_c_api_symbols_belong_to_the_interpreter_not_to_the_missing_libc10) {
  std::string root = test::scratch_dir("cause-missing-c10");
  fs::create_directories(root + "/c10");
  build("g++", root, root + "/c10/libc10.so.2.0", "namespace c10 { void thing() {} }\n", "-Wl,-soname,libc10.so.2.0");
  std::string lib = root + "/libext_python.so";
  build("g++", root, lib,
        "namespace c10 { void thing(); }\n"
        "extern \"C\" { void* PyLong_FromLong(long); int PyArg_ParseTuple(void*, const char*, ...); }\n"
        "void* use() { c10::thing(); PyArg_ParseTuple(nullptr, \"\"); return PyLong_FromLong(1); }\n",
        "-Wl,--no-as-needed " + quote(root + "/c10/libc10.so.2.0"));
  // The oracle: with libc10.so.2.0 found, the load in python3 succeeds (it defines no Py* itself).
  ASSERT_EQ(real_load(root + "/c10", lib).status, 0);
  EXPECT_EQ(run("nm -D --defined-only " + quote(root + "/c10/libc10.so.2.0") + " | grep -c ' Py'").out, "0\n");
  fs::remove_all(root + "/c10");
  auto real = real_load("", lib);
  ASSERT_NE(real.status, 0);
  EXPECT_NE(real.err.find("libc10.so.2.0: cannot open shared object file"), std::string::npos) << real.err;

  auto hosted = run("PATH=/usr/bin:/bin " + kBin + kQuiet + " --format json " + quote(lib));
  EXPECT_EQ(hosted.status, 1) << hosted.out;
  auto hosted_doc = json::parse(hosted.out);
  ASSERT_EQ(hosted_doc["libraries"][0]["unresolved"].size(), 1u) << hosted.out;
  EXPECT_EQ(hosted_doc["libraries"][0]["unresolved"][0]["symbol"], "_ZN3c105thingEv");
  EXPECT_EQ(hosted_doc["libraries"][0]["unresolved"][0]["classification"], "missing-library");

  const std::string no_host = "PATH=/nonexistent ";
  auto r = run(no_host + kBin + kQuiet + " " + quote(lib));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "error: loading libext_python.so would fail: 2 causes") << r.out;
  EXPECT_NE(r.out.find("\n>>> missing-library: c10::thing()\n>>> fix: install libc10.so.2.0"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(">>> missing-library: Py"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("error: 2 symbols of the Python C API come from the Python interpreter that loads this extension "
                 "(python3), not from a library it links\n>>> host-provided: PyArg_ParseTuple\n"
                 ">>> host-provided: PyLong_FromLong\n"),
      std::string::npos)
      << r.out;
  auto doc = json::parse(run(no_host + kBin + kQuiet + " --format json " + quote(lib)).out);
  for (const auto& u : doc["libraries"][0]["unresolved"]) {
    bool py = u["symbol"].get<std::string>().rfind("Py", 0) == 0;
    EXPECT_EQ(u["classification"], py ? "host-provided" : "missing-library") << u["symbol"];
  }
}

// Item 5a: CUDA calls the port missed. A CUDA install (built here: libcudart.so.13 exporting
// cudaMallocAsync and a name no map knows) and a MUSA SDK whose libmusart.so.4 exports the counterpart
// torch_musa's map gives. The call is CUDA's, named with its library, and the counterpart is given.
TEST(CudaCall, a_cuda_call_the_port_missed_is_cudas_with_the_counterpart_of_the_porting_map) {
  std::string root = test::scratch_dir("cause-cuda");
  fs::create_directories(root + "/cuda/lib64");
  fs::create_directories(root + "/musa/lib");
  const std::string cudart = root + "/cuda/lib64/libcudart.so.13", musart = root + "/musa/lib/libmusart.so.4";
  build("gcc", root, cudart,
        "int cudaMallocAsync(void** p, unsigned long n, void* s) { return 0; }\n"
        "int cudaFancyNewThing(void) { return 0; }\n",
        "-Wl,-soname,libcudart.so.13");
  build("gcc", root, musart, "int musaMallocAsync(void** p, unsigned long n, void* s) { return 0; }\n",
        "-Wl,-soname,libmusart.so.4");
  std::string lib = root + "/libport.so";
  build("gcc", root, lib,
        "int cudaMallocAsync(void**, unsigned long, void*);\nint cudaFancyNewThing(void);\n"
        "int use(void) { void* p; cudaFancyNewThing(); return cudaMallocAsync(&p, 16, 0); }\n",
        "-Wl,--no-as-needed " + quote(musart));
  auto real = real_load(root + "/musa/lib", lib);
  ASSERT_NE(real.status, 0);
  EXPECT_NE(real.err.find("undefined symbol: cuda"), std::string::npos) << real.err;

  std::string args = " --no-cache --cuda-home " + quote(root + "/cuda") + " --sdk-home " + quote(root + "/musa") +
                     " --mapping " + quote(MLC_MAPPING_DIR) + " " + quote(lib);
  auto r = run("env LD_LIBRARY_PATH=" + quote(root + "/musa/lib") + " " + kBin + args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(
      r.out.find("error: undefined symbol: cudaMallocAsync\n>>> referenced by " + lib +
                 "\n>>> unported: a CUDA API the port still calls: CUDA's " + cudart +
                 " exports it; the porting map's MUSA counterpart is musaMallocAsync, which " + musart +
                 " exports\n>>> defined in: " + cudart + "\n>>> counterpart: musaMallocAsync in " + musart +
                 "\n>>> fix: call musaMallocAsync instead of cudaMallocAsync where the port calls it (the porting map "
                 "renames it; this call was missed), and rebuild\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(">>> cuda-only: a CUDA API the port still calls: CUDA's " + cudart +
                       " exports it; the porting map has no MUSA counterpart for it\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("not found in CUDA"), std::string::npos) << r.out;
  auto doc =
      json::parse(run("env LD_LIBRARY_PATH=" + quote(root + "/musa/lib") + " " + kBin + " --format json" + args).out);
  for (const auto& u : doc["libraries"][0]["unresolved"]) {
    if (u["symbol"] != "cudaMallocAsync") continue;
    EXPECT_EQ(u["classification"], "unported");
    EXPECT_EQ(u["counterpart"], (json{{"name", "musaMallocAsync"}, {"library", musart}}));
    EXPECT_EQ(u["origin"]["library"], cudart);
    EXPECT_EQ(u["fix"]["kind"], "none");
  }
  // musa-stubgen stubs no missed rename: it says what to call instead.
  std::string out = test::scratch_dir("cause-cuda-stubs");
  auto stub = run("env LD_LIBRARY_PATH=" + quote(root + "/musa/lib") + " " + std::string(MLC_STUBGEN_BIN) +
                  " --dry-run --out-cpp " + quote(out + "/u.cpp") + " --out-header " + quote(out + "/u.h") + args);
  EXPECT_EQ(stub.status, 1) << stub.out << stub.err;
  EXPECT_NE(stub.err.find("musa-stubgen: cannot fix cudaMallocAsync: unported: "), std::string::npos) << stub.err;
  EXPECT_NE(stub.err.find(
                "; call musaMallocAsync instead of cudaMallocAsync where the port calls it (the porting map renames "
                "it; this call was missed), and rebuild (a stub would hide the missed rename; --stub unported "
                "stubs it anyway)\n"),
            std::string::npos)
      << stub.err;
  // Without a map, nothing is guessed but a counterpart the SDK exports under the cudaX -> musaX rule.
  auto bare = run("env LD_LIBRARY_PATH=" + quote(root + "/musa/lib") + " " + kBin + " --no-cache --cuda-home " +
                  quote(root + "/cuda") + " --sdk-home " + quote(root + "/musa") + " " + quote(lib));
  EXPECT_NE(
      bare.out.find(">>> unported: a CUDA API the port still calls: CUDA's " + cudart +
                    " exports it; by the cudaX -> musaX naming rule, the MUSA counterpart is musaMallocAsync, which " +
                    musart + " exports\n"),
      std::string::npos)
      << bare.out;
  EXPECT_NE(bare.out.find(">>> unknown: a CUDA API the port still calls: CUDA's " + cudart +
                          " exports it; give the porting map (--mapping) to name its MUSA counterpart\n"),
            std::string::npos)
      << bare.out;
}

// The same with the real CUDA 13 at /usr/local/cuda, whose libcudart.so.13 exports cudaMallocAsync.
TEST(CudaCall, cuda_13_libcudart_exports_cuda_malloc_async_and_the_map_gives_musa_malloc_async) {
  if (!fs::exists("/usr/local/cuda/lib64/libcudart.so.13")) MLC_SKIP() << "CUDA 13 is not installed at /usr/local/cuda";
  ASSERT_NE(run("nm -D --defined-only /usr/local/cuda/lib64/libcudart.so.13")
                .out.find(" T cudaMallocAsync@@libcudart.so.13\n"),
            std::string::npos);
  std::string root = test::scratch_dir("cause-cuda13");
  std::string lib = root + "/libk.so";
  build("gcc", root, lib,
        "int cudaMallocAsync(void**, unsigned long, void*);\nint use(void) { void* p; return cudaMallocAsync(&p, 16, "
        "0); }\n");
  auto real = real_load("", lib);
  ASSERT_NE(real.status, 0);
  EXPECT_NE(real.err.find("undefined symbol: cudaMallocAsync"), std::string::npos) << real.err;
  auto r = run(kBin + " --no-cache --sdk-home '' --mapping " + quote(MLC_MAPPING_DIR) + " " + quote(lib));
  EXPECT_EQ(r.status, 1) << r.out;
  std::string cls = line_with(r.out, ">>> unported:");
  EXPECT_EQ(cls.rfind(">>> unported: a CUDA API the port still calls: CUDA's /usr/local/cuda/", 0), 0u) << r.out;
  EXPECT_NE(cls.find("/libcudart.so.13 exports it; the porting map's MUSA counterpart is musaMallocAsync"),
            std::string::npos)
      << r.out;
}

// The "defined nowhere" reason says CUDA was searched only for a name that looks like
// one of the CUDA APIs the backend ports (cudaX, cuX, cublasX...). The FAQ's forgotten kernel, a C++
// function of the project's own, has nothing to do with CUDA; nor has a C name that merely starts
// with "cu" (cutlass_gemm). The loader's verdict is the real one: all three are undefined.
// The CUDA header index (1.5 s to build from CUDA 13's headers) is built only for a name that can be
// CUDA's: a plain C name (nvshmem's pmix_value_load in a pip torch venv) never costs it; cudaX does, and
// is told where CUDA declares it. The index's cache file in --cache-dir shows whether it was built.
TEST(CudaIndex, is_built_only_for_a_name_that_can_be_cudas) {
  std::string dir = test::scratch_dir("cuda-index-gate"), cuda = dir + "/cuda", cache = dir + "/cache";
  fs::create_directories(cuda + "/include");
  fs::create_directories(cuda + "/lib64");
  test::write_file(cuda + "/include/cuda_runtime_api.h", "int cudaFooBar(void);\n");
  test::write_file(dir + "/plain.c", "extern int pmix_value_load(void);\nint f(void) { return pmix_value_load(); }\n");
  test::write_file(dir + "/user.c", "extern int cudaFooBar(void);\nint g(void) { return cudaFooBar(); }\n");
  for (std::string name : {"plain", "user"}) {
    auto cc = run("gcc -shared -fPIC -o " + quote(dir + "/lib" + name + ".so") + " " + quote(dir + "/" + name + ".c"));
    ASSERT_EQ(cc.status, 0) << cc.err;
  }
  auto cuda_index_files = [&] {
    int n = 0;
    if (fs::exists(cache))
      for (const auto& e : fs::directory_iterator(cache))
        n += e.path().filename().string().rfind("cuda-headers-", 0) == 0;
    return n;
  };
  std::string args = " --cuda-home " + quote(cuda) + " --sdk-home '' --cache-dir " + quote(cache) + " ";
  auto plain = run(quote(kBin) + args + quote(dir + "/libplain.so"));
  EXPECT_EQ(plain.status, 1) << plain.err;
  EXPECT_NE(plain.out.find("error: undefined symbol: pmix_value_load"), std::string::npos) << plain.out;
  EXPECT_EQ(cuda_index_files(), 0) << "a plain C name built the CUDA index";
  auto user = run(quote(kBin) + args + quote(dir + "/libuser.so"));
  EXPECT_EQ(user.status, 1) << user.err;
  EXPECT_NE(user.out.find("CUDA declares it in " + cuda + "/include/cuda_runtime_api.h"), std::string::npos)
      << user.out;
  EXPECT_EQ(cuda_index_files(), 1);
  fs::remove_all(dir);
}

TEST(UnknownReason, cuda_is_named_only_for_names_that_look_like_the_backends_apis) {
  std::string root = test::scratch_dir("cause-unknown-reason");
  fs::create_directories(root + "/cuda/lib64");
  fs::create_directories(root + "/musa/lib");
  std::string lib = root + "/libmyops.so";
  build("g++", root, lib,
        "namespace myops { float scale(float x, float by); }\n"
        "extern \"C\" int cudaFancyNewThing(void);\nextern \"C\" int cutlass_gemm(void);\n"
        "float twice(float v) { return myops::scale(v, 2.0f) + cudaFancyNewThing() + cutlass_gemm(); }\n");
  auto real = real_load("", lib);
  ASSERT_NE(real.status, 0);
  EXPECT_NE(real.err.find("undefined symbol"), std::string::npos) << real.err;
  auto r = run(kBin + " --no-cache --format json --cuda-home " + quote(root + "/cuda") + " --sdk-home " +
               quote(root + "/musa") + " " + quote(lib));
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  auto doc = json::parse(r.out);
  std::map<std::string, std::string> reasons;
  for (const auto& u : doc["libraries"][0]["unresolved"]) {
    EXPECT_EQ(u["classification"], "unknown") << u.dump();
    reasons[u["demangled"].get<std::string>()] = u["reason"].get<std::string>();
  }
  ASSERT_EQ(reasons.size(), 3u) << r.out;
  const std::string sdk_only = "no loaded object defines it, nor was it found in the SDK (" + root + "/musa)";
  EXPECT_EQ(reasons["myops::scale(float, float)"], sdk_only);
  EXPECT_EQ(reasons["cutlass_gemm"], sdk_only);
  EXPECT_EQ(reasons["cudaFancyNewThing"],
            "no loaded object defines it, nor was it found in the SDK (" + root + "/musa) or CUDA (" + root + "/cuda)");
  fs::remove_all(root);
}

}  // namespace
}  // namespace mlc
