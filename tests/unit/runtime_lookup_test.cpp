// Run-time look-ups: a driver API library dlopens "libmusa_drv.so.4" and dlsyms
// "muInit" and "muMissingEntry" by string literal. Three environments: the driver absent, present
// without muMissingEntry, complete. The real loader (ctypes in a subprocess of this test) is the
// oracle for each; the tool itself only reads the files.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <tuple>

#include "common/paths.h"
#include "elf/elf_object.h"
#include "literals/lookups.h"
#include "pipeline/linkcheck.h"
#include "test_support.h"

namespace mlc {
namespace {

using nlohmann::json;
using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kDir = std::string(MLC_LOADER_FIXTURES) + "/runtime";
const std::string kApi = kDir + "/libdriver_api.so";

// What the real loader says, in a subprocess: "absent", or for each entry point 1 (found) or 0.
std::string loader_oracle(const std::string& library_path) {
  std::string py =
      "import ctypes, os\n"
      "try:\n"
      "    lib = ctypes.CDLL('libmusa_drv.so.4', os.RTLD_NOW)\n"
      "except OSError:\n"
      "    print('absent'); raise SystemExit\n"
      "print(int(hasattr(lib, 'muInit')), int(hasattr(lib, 'muMissingEntry')))\n";
  auto r = run("env -u LD_LIBRARY_PATH " + (library_path.empty() ? "" : "LD_LIBRARY_PATH=" + quote(library_path)) +
               " python3 -c " + quote(py));
  return r.out;
}

TEST(RuntimeLookup, soname_and_entry_point_literals_are_told_apart) {
  EXPECT_TRUE(literals::is_soname_literal("libmusa_drv.so.4"));
  EXPECT_TRUE(literals::is_soname_literal("libnvrtc.so"));
  EXPECT_TRUE(literals::is_soname_literal("libfoo.so.1.2.3"));
  EXPECT_FALSE(literals::is_soname_literal("libfoo.so.%d"));
  EXPECT_FALSE(literals::is_soname_literal("/usr/lib/libfoo.so"));
  EXPECT_FALSE(literals::is_soname_literal("cannot load libfoo.so"));
  EXPECT_EQ(literals::api_prefix("muInit"), "mu");
  EXPECT_EQ(literals::api_prefix("cuCtxCreate"), "cu");
  EXPECT_EQ(literals::api_prefix("mutex"), "");
  EXPECT_EQ(literals::api_prefix("MUSA_HOME"), "");
  EXPECT_EQ(literals::api_prefix("cannot load %s"), "");
}

TEST(RuntimeLookup, string_literals_of_rodata_include_the_dlopen_and_dlsym_names) {
  auto literals = elf::read_string_literals(kApi);
  ASSERT_TRUE(literals.ok()) << literals.error().to_line();
  for (const char* want : {"libmusa_drv.so.4", "muInit", "muMissingEntry", "cuCtxCreate"})
    EXPECT_NE(std::find(literals->begin(), literals->end(), want), literals->end()) << want;
  EXPECT_FALSE(elf::read_string_literals(kDir + "/no-such-file.so").ok());
}

// A .rodata of 3 MiB is scanned for ".so" in 1 MiB ranges in parallel: literals that straddle a range
// boundary (begun in one range, ".so" or the NUL in the next, two ".so" on either side) are each
// found once, and the parallel answer is exactly the sequential scan of every literal, filtered.
TEST(RuntimeLookup, large_rodata_is_scanned_in_ranges_with_every_literal_found_once) {
  std::string dir = test::scratch_dir("rodata-ranges");
  // Offsets are from the start of .rodata (the assembler puts `big` first in it).
  std::string s =
      "  .section .rodata\n  .globl big\nbig:\n"
      "  .asciz \"libfirst.so.1\"\n"                              // range 0
      "  .fill 1048570 - 14, 1, 0\n  .asciz \"libcross.so.2\"\n"  // begins at 1048570, \".so\" at 1048578: range 1
      "  .fill 1048576 * 2 - 1048584 - 9, 1, 0x41\n"  // printable filler; libtwo begins 8 bytes before range 2
      "  .byte 0\n  .ascii \"libtwo.so\"\n  .asciz \".so.3\"\n"  // a \".so\" on either side of 2 MiB
      "  .fill 300000, 1, 0\n  .asciz \"libthird.so\"\n  .asciz \"not.so here\"\n  .asciz \"x.so\"\n"
      "  .fill 1048576, 1, 0\n";
  test::write_file(dir + "/big.s", s);
  auto cc = run("cc -shared -nostdlib -o " + quote(dir + "/libbig.so") + " " + quote(dir + "/big.s") + " 2>&1");
  ASSERT_EQ(cc.status, 0) << cc.out;
  auto has_so = [](std::string_view l) { return l.find(".so") != std::string_view::npos; };
  auto ranged = elf::read_string_literals(dir + "/libbig.so", 4, nullptr, ".so");
  auto sequential = elf::read_string_literals(dir + "/libbig.so", 4, has_so);
  ASSERT_TRUE(ranged.ok()) << ranged.error().to_line();
  ASSERT_TRUE(sequential.ok()) << sequential.error().to_line();
  EXPECT_EQ(ranged.value(), sequential.value());
  EXPECT_EQ(ranged.value(), (std::vector<std::string>{"libfirst.so.1", "libcross.so.2", "libtwo.so.so.3", "libthird.so",
                                                      "not.so here", "x.so"}));
}

// Literals live in .rodata: the soname-shaped strings x86-64's large-model sections (.lrodata, .ldata),
// a .nv_fatbin (device code, hundreds of MB in CUDA's libraries), writable data and code hold are
// never read, from the file or from the object the loader already has open (the same answer).
TEST(RuntimeLookup, literals_are_read_from_rodata_only) {
  std::string dir = test::scratch_dir("rodata-only");
  test::write_file(dir + "/sections.s",
                   "  .section .rodata,\"a\"\n  .asciz \"libinrodata.so.1\"\n"
                   "  .section .rodata.str1.1,\"aMS\",@progbits,1\n  .asciz \"libinrodatastr.so.2\"\n"
                   "  .section .lrodata,\"al\"\n  .asciz \"libinlrodata.so.1\"\n"
                   "  .section .ldata,\"awl\"\n  .asciz \"libinldata.so.1\"\n"
                   "  .section .nv_fatbin,\"a\"\n  .asciz \"libinfatbin.so.1\"\n"
                   "  .data\n  .asciz \"libindata.so.1\"\n"
                   "  .text\n  .asciz \"libintext.so.1\"\n");
  auto cc =
      run("cc -shared -nostdlib -o " + quote(dir + "/libsections.so") + " " + quote(dir + "/sections.s") + " 2>&1");
  ASSERT_EQ(cc.status, 0) << cc.out;
  // The oracle for where each string landed: readelf's own section dump.
  auto dump = run("readelf -p .lrodata -p .ldata -p .nv_fatbin " + quote(dir + "/libsections.so"));
  for (const char* where : {"libinlrodata.so.1", "libinldata.so.1", "libinfatbin.so.1"})
    ASSERT_NE(dump.out.find(where), std::string::npos) << dump.out;
  const std::vector<std::string> want = {"libinrodata.so.1", "libinrodatastr.so.2"};
  auto from_file = elf::read_string_literals(dir + "/libsections.so");
  ASSERT_TRUE(from_file.ok()) << from_file.error().to_line();
  EXPECT_EQ(from_file.value(), want);
  auto object = elf::read_object(dir + "/libsections.so", {.relocations = false, .lookup_only = true});
  ASSERT_TRUE(object.ok()) << object.error().to_line();
  auto from_object =
      elf::read_string_literals(object.value(), {.min_length = 4, .keep = {}, .containing = ".so", .starting = {}});
  ASSERT_TRUE(from_object.ok()) << from_object.error().to_line();
  EXPECT_EQ(from_object.value(), want);
}

// The dlsym pass reads only the literals that begin with an API prefix: the same literals, in the same
// order, as every literal of .rodata filtered by that prefix, across 1 MiB ranges; an occurrence inside
// a longer string ("xcuFoo", "call cuInit") is no literal's start, one without its NUL is no literal,
// and a prefix that another begins ("cu", "cuda") tells each literal once.
TEST(RuntimeLookup, literals_starting_with_a_prefix_are_every_such_literal_once) {
  std::string dir = test::scratch_dir("rodata-prefix");
  std::string s =
      "  .section .rodata\n  .asciz \"cuInit\"\n  .asciz \"xcuFoo\"\n  .asciz \"call cuInit\"\n"
      "  .byte 7\n  .asciz \"cudaMalloc\"\n  .asciz \"nvrtcCompile\"\n"
      "  .fill 1048574 - 51, 1, 0\n  .asciz \"nvrtcCross\"\n"  // begins 2 bytes before 1 MiB
      "  .fill 100, 1, 0x41\n  .byte 0\n  .asciz \"cuLast\"\n  .ascii \"cuUnterminated\"\n";
  test::write_file(dir + "/prefix.s", s);
  auto cc = run("cc -shared -nostdlib -o " + quote(dir + "/libprefix.so") + " " + quote(dir + "/prefix.s") + " 2>&1");
  ASSERT_EQ(cc.status, 0) << cc.out;
  auto object = elf::read_object(dir + "/libprefix.so", {.relocations = false, .lookup_only = true});
  ASSERT_TRUE(object.ok()) << object.error().to_line();
  std::vector<std::string> prefixes = {"cuda", "cu", "nvrtc"};
  auto every = elf::read_string_literals(dir + "/libprefix.so");
  ASSERT_TRUE(every.ok());
  std::vector<std::string> filtered;
  for (const auto& l : every.value())
    if (l.rfind("cu", 0) == 0 || l.rfind("nvrtc", 0) == 0) filtered.push_back(l);
  auto starting =
      elf::read_string_literals(object.value(), {.min_length = 4, .keep = {}, .containing = {}, .starting = prefixes});
  ASSERT_TRUE(starting.ok()) << starting.error().to_line();
  EXPECT_EQ(starting.value(), filtered);
  EXPECT_EQ(starting.value(),
            (std::vector<std::string>{"cuInit", "cudaMalloc", "nvrtcCompile", "nvrtcCross", "cuLast"}));
}

// Only an object that imports dlopen is searched for dlopen literals: the same soname literal in a
// library that never calls dlopen is data, not a look-up (the tool's JSON, with and without the import).
TEST(RuntimeLookup, only_objects_importing_dlopen_are_searched) {
  std::string dir = test::scratch_dir("imports-dlopen");
  test::write_file(dir + "/plain.c", "const char* name(void) { return \"libnowhere_mlc.so.7\"; }\n");
  test::write_file(dir + "/caller.c",
                   "#include <dlfcn.h>\nvoid* load(void) { return dlopen(\"libnowhere_mlc.so.7\", RTLD_NOW); }\n");
  for (const char* lib : {"plain", "caller"}) {
    auto cc = run(std::string("cc -shared -fPIC -o ") + quote(dir + "/lib" + lib + ".so") + " " +
                  quote(dir + "/" + lib + ".c") + " 2>&1");
    ASSERT_EQ(cc.status, 0) << cc.out;
  }
  auto lookups = [&](const char* lib) {
    auto r = run("env -u LD_LIBRARY_PATH " + kBin + " --no-cache --format json " + quote(dir + "/lib" + lib + ".so"));
    return json::parse(r.out)["runtime_lookups"];
  };
  EXPECT_EQ(lookups("plain").size(), 0u);
  auto found = lookups("caller");
  ASSERT_EQ(found.size(), 1u) << found.dump();
  EXPECT_EQ(found[0]["name"], "libnowhere_mlc.so.7");
  EXPECT_EQ(found[0]["kind"], "dlopen");
}

// A warm run takes a file's literals from the cache directory instead of its .rodata: the cache
// answers (a literal planted in it is reported) while the file is unchanged, a rewritten file is read
// again, and a garbled cache is ignored and rewritten.
TEST(RuntimeLookup, literals_are_cached_by_the_file_identity) {
  std::string dir = test::scratch_dir("literal-cache");
  std::string cache = dir + "/cache", lib = dir + "/libcaller.so";
  auto build = [&](const char* soname) {
    test::write_file(dir + "/caller.c", std::string("#include <dlfcn.h>\nvoid* load(void) { return dlopen(\"") +
                                            soname + "\", RTLD_NOW); }\n");
    auto cc = run("cc -shared -fPIC -o " + quote(lib) + " " + quote(dir + "/caller.c") + " 2>&1");
    ASSERT_EQ(cc.status, 0) << cc.out;
  };
  auto names = [&](const std::string& cache_args) {
    auto r = run("env -u LD_LIBRARY_PATH " + kBin + " " + cache_args + " --format json " + quote(lib));
    std::vector<std::string> out;
    const json doc = json::parse(r.out);
    for (const auto& l : doc["runtime_lookups"]) out.push_back(l["name"]);
    return out;
  };
  build("libfirst_mlc.so.1");
  EXPECT_EQ(names("--cache-dir " + quote(cache)), std::vector<std::string>{"libfirst_mlc.so.1"});
  auto text = test::read_file(cache + "/runtime-literals.tsv");
  ASSERT_NE(text.find("\nL\tlibfirst_mlc.so.1\n"), std::string::npos) << text;
  // The cache answers for the unchanged file: a literal planted in it is what the run reports (the whole
  // answer kept for the process removed, which would answer first).
  std::filesystem::remove_all(cache + "/runtime-lookups");
  std::string planted = text;
  planted.replace(planted.find("libfirst_mlc.so.1"), 17, "libplant_mlc.so.9");
  test::write_file(cache + "/runtime-literals.tsv", planted);
  EXPECT_EQ(names("--cache-dir " + quote(cache)), std::vector<std::string>{"libplant_mlc.so.9"});
  EXPECT_EQ(names("--no-cache"), std::vector<std::string>{"libfirst_mlc.so.1"});
  // The file rebuilt (another size, mtime, inode): read again, the cache rewritten.
  build("libsecond_mlc.so.22");
  EXPECT_EQ(names("--cache-dir " + quote(cache)), std::vector<std::string>{"libsecond_mlc.so.22"});
  text = test::read_file(cache + "/runtime-literals.tsv");
  EXPECT_EQ(text.find("libplant_mlc"), std::string::npos) << "the stale entry is dropped\n" << text;
  // Garbled: ignored, and rewritten whole (the process's whole answer removed, which would answer first).
  std::filesystem::remove_all(cache + "/runtime-lookups");
  test::write_file(cache + "/runtime-literals.tsv", "mlc-runtime-literals 1\nK\tgarbage\n\x01\x02 not a line\n");
  EXPECT_EQ(names("--cache-dir " + quote(cache)), std::vector<std::string>{"libsecond_mlc.so.22"});
  text = test::read_file(cache + "/runtime-literals.tsv");
  EXPECT_EQ(text.rfind("mlc-runtime-literals 1\nK\t", 0), 0u) << text;
  EXPECT_NE(text.find("\nL\tlibsecond_mlc.so.22\n"), std::string::npos) << text;
}

// The API prefixes a library exports are kept in the same cache by its identity (a warm run reads no
// .dynsym for them): the planted answer that the provider exports no "mlcfoo" name is believed while
// the file is unchanged, so the entry point it lacks is no longer checked against it.
TEST(RuntimeLookup, exported_prefixes_are_cached_by_the_file_identity) {
  std::string dir = test::scratch_dir("prefix-cache");
  std::string cache = dir + "/cache", provider = dir + "/libmlcprov.so", caller = dir + "/libcaller.so";
  test::write_file(dir + "/provider.c", "void mlcfooInit(void) {}\n");
  test::write_file(dir + "/caller.c",
                   "#include <dlfcn.h>\nvoid* load(void) {\n  void* h = dlopen(\"libmlcprov.so\", RTLD_NOW);\n"
                   "  return h && dlsym(h, \"mlcfooInit\") ? dlsym(h, \"mlcfooMissing\") : 0;\n}\n");
  for (const auto& [out, src] : {std::pair{provider, "provider.c"}, std::pair{caller, "caller.c"}}) {
    auto cc = run("cc -shared -fPIC -Wl,-rpath,'$ORIGIN' -o " + quote(out) + " " + quote(dir + "/" + src) + " 2>&1");
    ASSERT_EQ(cc.status, 0) << cc.out;
  }
  auto names = [&](const std::string& cache_args) {
    auto r = run("env -u LD_LIBRARY_PATH " + kBin + " " + cache_args + " --format json " + quote(caller));
    std::vector<std::string> out;
    const json doc = json::parse(r.out);
    for (const auto& l : doc["runtime_lookups"])
      out.push_back(l["kind"].get<std::string>() + " " + l["name"].get<std::string>());
    return out;
  };
  const std::vector<std::string> missing{"dlsym mlcfooMissing"};
  EXPECT_EQ(names("--cache-dir " + quote(cache)), missing);
  std::string text = test::read_file(cache + "/runtime-literals.tsv");
  const std::string entry = "\texported-prefixes\t" + provider + "\nL\tmlcfoo\n";
  size_t at = text.find(entry);
  ASSERT_NE(at, std::string::npos) << text;
  test::write_file(cache + "/runtime-literals.tsv", text.erase(at + entry.size() - 9, 9));
  std::filesystem::remove_all(cache + "/runtime-lookups");
  EXPECT_EQ(names("--cache-dir " + quote(cache)), std::vector<std::string>{}) << "the cache answers";
  EXPECT_EQ(names("--no-cache"), missing);
  // The provider rebuilt: its symbols are read again.
  test::write_file(dir + "/provider.c", "void mlcfooInit(void) {}\nvoid mlcfooOther(void) {}\n");
  auto cc = run("cc -shared -fPIC -o " + quote(provider) + " " + quote(dir + "/provider.c") + " 2>&1");
  ASSERT_EQ(cc.status, 0) << cc.out;
  EXPECT_EQ(names("--cache-dir " + quote(cache)), missing);
}

// A process checked before is answered whole from the cache while what its searches asked about stands:
// a planted answer is believed; a library created where a search found none, a found library rewritten in
// place, another LD_LIBRARY_PATH or a garbled entry is looked up again, as --no-cache finds.
TEST(RuntimeLookup, a_process_checked_before_is_answered_until_a_searched_path_changes) {
  // The cache beside the libraries' directory, not in it: a run's own writes change no directory it searched.
  const std::string top = test::scratch_dir("lookups-kept"), dir = top + "/lib", cache = top + "/cache";
  const std::string caller = dir + "/libcaller.so", provider = dir + "/libmlcopt.so";
  std::filesystem::create_directories(dir);
  auto list_dir = [](const std::string& d) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(d)) out.push_back(e.path().filename().string());
    return out;
  };
  test::write_file(dir + "/caller.c",
                   "#include <dlfcn.h>\nvoid* load(void) {\n  void* h = dlopen(\"libmlcopt.so\", RTLD_NOW);\n"
                   "  return h && dlsym(h, \"mlcoptInit\") ? dlsym(h, \"mlcoptOther\") : 0;\n}\n");
  test::write_file(dir + "/one.c", "void mlcoptInit(void) {}\n");
  test::write_file(dir + "/both.c", "void mlcoptInit(void) {}\nvoid mlcoptOther(void) {}\n");
  auto cc = [&](const std::string& out, const std::string& src, const std::string& flags = "") {
    auto r = run("cc -shared -fPIC " + flags + " -o " + quote(out) + " " + quote(dir + "/" + src) + " 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
  };
  cc(caller, "caller.c", "-Wl,-rpath,'$ORIGIN'");
  cc(dir + "/both.so", "both.c");
  cc(dir + "/one.so", "one.c");
  auto found = [&](const std::string& args, const std::string& env = "env -u LD_LIBRARY_PATH ") {
    auto r = run(env + kBin + " " + args + " --format json " + quote(caller));
    std::vector<std::string> out;
    const json doc = json::parse(r.out);
    for (const auto& l : doc["runtime_lookups"])
      out.push_back(l["kind"].get<std::string>() + " " + l["name"].get<std::string>());
    return out;
  };
  // An answer is kept only once what it depends on has not changed for two seconds (file systems stamp
  // times coarsely): the first run's is, the later ones' are not.
  auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(3100)); };
  settle();
  const std::string kept = "--cache-dir " + quote(cache);
  const std::vector<std::string> absent{"dlopen libmlcopt.so"}, lacks{"dlsym mlcoptOther"}, none{};
  EXPECT_EQ(found(kept), absent);
  auto files = list_dir(cache + "/runtime-lookups");
  ASSERT_EQ(files.size(), 1u);
  const std::string entry = cache + "/runtime-lookups/" + files[0];
  std::string text = test::read_file(entry);
  EXPECT_NE(text.find("\nW\t" + file_identity(dir) + "\t" + dir + "\n"), std::string::npos)
      << "the directory searched, where the library was missing, is a witness\n"
      << text;
  // Planted: believed while nothing the searches asked about changed.
  test::write_file(entry, std::string(text).replace(text.find("\tlibmlcopt.so\t"), 14, "\tlibmlcplant.so\t"));
  EXPECT_EQ(found(kept), std::vector<std::string>{"dlopen libmlcplant.so"});
  // The library created beside the caller: its directory changed, so the search runs again.
  ASSERT_EQ(run("cp " + quote(dir + "/both.so") + " " + quote(provider)).status, 0);
  EXPECT_EQ(found(kept), none);
  EXPECT_EQ(found("--no-cache"), none);
  // The library rewritten in place (same inode, same directory): its identity is the witness.
  ASSERT_EQ(run("cat " + quote(dir + "/one.so") + " > " + quote(provider)).status, 0);
  EXPECT_EQ(found(kept), lacks);
  EXPECT_EQ(found("--no-cache"), lacks);
  // Another LD_LIBRARY_PATH is another process's key (the one.so copy is first there, lacking the name).
  const std::string other = top + "/other";
  ASSERT_EQ(run("mkdir -p " + quote(other) + " && cp " + quote(dir + "/both.so") + " " + quote(provider) + " && cp " +
                quote(dir + "/one.so") + " " + quote(other + "/libmlcopt.so"))
                .status,
            0);
  EXPECT_EQ(found(kept), none);
  EXPECT_EQ(found(kept, "env LD_LIBRARY_PATH=" + quote(other) + " "), lacks);
  EXPECT_EQ(found(kept), none);
  // Garbled (its format and key lines kept, a row of no kind after them): looked up again and rewritten.
  settle();
  for (const auto& f : list_dir(cache + "/runtime-lookups")) {
    const std::string path = cache + "/runtime-lookups/" + f, was = test::read_file(path);
    const size_t rows = was.find('\n', was.find('\n') + 1) + 1;
    test::write_file(path, was.substr(0, rows) + "\x01 not a line\nend\t1\n");
  }
  EXPECT_EQ(found(kept), none);
  for (const auto& f : list_dir(cache + "/runtime-lookups"))
    EXPECT_EQ(test::read_file(cache + "/runtime-lookups/" + f).find("not a line"), std::string::npos) << f;
}

TEST(RuntimeLookup, dlopen_of_an_absent_driver_is_a_warning_and_fatal_on_request) {
  ASSERT_EQ(loader_oracle(""), "absent\n") << "the real loader must not find the driver either";
  // By default a library that is not a GPU driver (libmusa_drv is the fixture's stand-in) is counted
  // on one note line; --runtime lists it with its search.
  auto quiet = run("env -u LD_LIBRARY_PATH " + kBin + " " + quote(kApi));
  EXPECT_EQ(quiet.status, 0) << quiet.out << quiet.err;
  EXPECT_EQ(quiet.out,
            "note: 1 name is looked up at run time (dlopen/dlsym) not found here, optional: 1 library not "
            "installed, 0 entry points (--runtime lists them)\n"
            "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  auto r = run("env -u LD_LIBRARY_PATH " + kBin + " --runtime " + quote(kApi));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("warning: runtime-lookup: dlopen(\"libmusa_drv.so.4\") in " + kApi +
                       ": library not found\n"
                       ">>> searched /lib/x86_64-linux-gnu/libmusa_drv.so.4\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("dlsym(\""), std::string::npos) << "no entry point is checked without the library";
  EXPECT_NE(r.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n"),
            std::string::npos);

  auto fatal = run("env -u LD_LIBRARY_PATH " + kBin + " --fail-on runtime " + quote(kApi));
  EXPECT_EQ(fatal.status, 1) << fatal.out;
  EXPECT_NE(fatal.out.find("error: runtime-lookup: dlopen(\"libmusa_drv.so.4\") in " + kApi + ": library not found\n"),
            std::string::npos)
      << fatal.out;
  // Combined with new/none: the baseline policy for the rest is kept.
  EXPECT_EQ(run("env -u LD_LIBRARY_PATH " + kBin + " --fail-on none,runtime " + quote(kApi)).status, 1);
  EXPECT_EQ(run("env -u LD_LIBRARY_PATH " + kBin + " --fail-on none " + quote(kApi)).status, 0);
  EXPECT_EQ(run(kBin + " --fail-on sometimes " + quote(kApi)).status, 2);

  auto j = run("env -u LD_LIBRARY_PATH " + kBin + " --format json " + quote(kApi));
  auto doc = json::parse(j.out);
  ASSERT_EQ(doc["runtime_lookups"].size(), 1u) << j.out;
  EXPECT_EQ(doc["runtime_lookups"][0]["kind"], "dlopen");
  EXPECT_EQ(doc["runtime_lookups"][0]["name"], "libmusa_drv.so.4");
  EXPECT_EQ(doc["runtime_lookups"][0]["library"], kApi);
  EXPECT_EQ(doc["runtime_lookups"][0]["classification"], "runtime-lookup");
  EXPECT_EQ(doc["runtime_lookups"][0]["severity"], "warning");
}

// One system cache for the loader and dlopen at run time: without an ld.so.cache the loader
// reads ld.so.conf's directories as ldconfig would, and a run-time dlopen by name finds what the
// loader's own search would (the cache file alone would find nothing).
TEST(RuntimeLookup, dlopen_without_an_ld_so_cache_searches_ld_so_conf_as_the_loader_does) {
  const std::string dir = test::scratch_dir("runtime-conf");
  test::write_file(dir + "/ld.so.conf", kDir + "/full\n");
  LinkcheckOptions o;
  o.env.ld_so_cache = dir + "/no-ld.so.cache";
  o.env.ld_so_conf = dir + "/ld.so.conf";
  Report found = run_linkcheck({kApi}, o);
  EXPECT_TRUE(found.runtime_lookups.empty()) << found.runtime_lookups.front().name;
  o.env.ld_so_conf = dir + "/no-ld.so.conf";
  Report absent = run_linkcheck({kApi}, o);
  ASSERT_EQ(absent.runtime_lookups.size(), 1u);
  EXPECT_EQ(absent.runtime_lookups[0].name, "libmusa_drv.so.4");
  std::filesystem::remove_all(dir);
}

// The system cache is parsed once per run and kept by the identity of its file: a cache that ldconfig
// writes again (the same path, another file) is read again by the next run of the same process, which
// then finds what the new cache lists and the old one did not.
TEST(RuntimeLookup, an_ld_so_cache_written_again_is_read_again) {
  if (run("command -v ldconfig >/dev/null || test -x /sbin/ldconfig").status != 0)
    MLC_SKIP() << "ldconfig (libc-bin) is not installed";
  const std::string dir = test::scratch_dir("runtime-cache-again");
  const std::string ldconfig = "PATH=$PATH:/sbin:/usr/sbin ldconfig -X -C " + quote(dir + "/ld.so.cache") + " -f ";
  test::write_file(dir + "/without.conf", "");
  test::write_file(dir + "/with.conf", kDir + "/full\n");
  LinkcheckOptions o;
  o.env.ld_so_cache = dir + "/ld.so.cache";
  o.env.ld_so_conf = dir + "/no-ld.so.conf";
  ASSERT_EQ(run(ldconfig + quote(dir + "/without.conf")).status, 0);
  Report before = run_linkcheck({kApi}, o);
  ASSERT_EQ(before.runtime_lookups.size(), 1u);
  EXPECT_EQ(before.runtime_lookups[0].name, "libmusa_drv.so.4");
  ASSERT_EQ(run(ldconfig + quote(dir + "/with.conf")).status, 0);
  Report after = run_linkcheck({kApi}, o);
  EXPECT_TRUE(after.runtime_lookups.empty()) << after.runtime_lookups.front().name;
  std::filesystem::remove_all(dir);
}

// The loader's empty-entry rule for dlopen at run time: LD_LIBRARY_PATH's entries are searched as given, so a
// leading empty entry is the current directory there too (joining the entries and splitting them again
// would lose it). Run from a driver's directory, the real loader finds it there.
TEST(RuntimeLookup, dlopen_reads_an_empty_ld_library_path_entry_as_the_current_directory) {
  const std::string nowhere = kDir + "/nowhere";
  for (const auto& [cwd, oracle, fatal] :
       {std::tuple<std::string, std::string, std::string>{kDir + "/full", "1 1\n", ""},
        std::tuple<std::string, std::string, std::string>{kDir + "/partial", "1 0\n",
                                                          "error: runtime-lookup: dlsym(\"muMissingEntry\") in " +
                                                              kApi + ": libmusa_drv.so.4 (" + kDir +
                                                              "/partial/libmusa_drv.so.4) does not export it\n"}}) {
    for (const std::string& llp : {":" + nowhere, nowhere + "::" + nowhere, nowhere + ":", std::string(":")}) {
      SCOPED_TRACE(cwd + " with LD_LIBRARY_PATH=" + llp);
      EXPECT_EQ(run("cd " + quote(cwd) + " && " + "env LD_LIBRARY_PATH=" + quote(llp) + " python3 -c " +
                    quote("import ctypes, os\nlib = ctypes.CDLL('libmusa_drv.so.4', os.RTLD_NOW)\n"
                          "print(int(hasattr(lib, 'muInit')), int(hasattr(lib, 'muMissingEntry')))\n"))
                    .out,
                oracle);
      auto r = run("cd " + quote(cwd) + " && env LD_LIBRARY_PATH=" + quote(llp) + " " + kBin +
                   " -q --fail-on runtime " + quote(kApi));
      EXPECT_EQ(r.status, fatal.empty() ? 0 : 1) << r.out << r.err;
      EXPECT_EQ(r.out, fatal);
    }
  }
}

// The CI formats carry run-time look-ups as the text report words them: a GitHub warning annotation,
// a JUnit case (a failure only when fatal), a SARIF result under a rule of its own, level warning
// (error with --fail-on runtime).
TEST(RuntimeLookup, ci_formats_carry_the_lookup_as_a_warning_and_fatal_on_request) {
  // Run in a checkout of its own: the library lies outside it, so annotations name it by its absolute path.
  const std::string checkout = test::scratch_dir("runtime-ci-checkout");
  ASSERT_EQ(run("git init -q " + quote(checkout)).status, 0);
  const std::string base = "cd " + quote(checkout) + " && env -u LD_LIBRARY_PATH " + kBin;
  const std::string title = "dlopen(\"libmusa_drv.so.4\") in " + kApi + ": library not found";
  auto gh_escaped = [](std::string s) {
    std::string out;
    for (char c : s) out += c == ':' ? std::string("%3A") : c == ',' ? std::string("%2C") : std::string(1, c);
    return out;
  };
  for (bool fatal : {false, true}) {
    std::string opts = fatal ? " --fail-on runtime" : "";
    auto gh = run(base + " --format github" + opts + " " + quote(kApi));
    EXPECT_EQ(gh.status, fatal ? 1 : 0) << gh.out;
    EXPECT_EQ(gh.out.rfind(std::string("::") + (fatal ? "error" : "warning") + " file=" + gh_escaped(kApi) +
                               ",title=runtime-lookup%3A " + gh_escaped(title) + "::" + title +
                               "%0Asearched /lib/x86_64-linux-gnu/libmusa_drv.so.4%0A",
                           0),
              0u)
        << gh.out;

    auto junit = run(base + " --format junit" + opts + " " + quote(kApi)).out;
    EXPECT_NE(
        junit.find("<testsuite name=\"runtime-lookups\" tests=\"1\" failures=\"" + std::string(fatal ? "1" : "0") +
                   "\" errors=\"0\" skipped=\"0\">\n    <testcase classname=\"libdriver_api.so\" "
                   "name=\"dlopen(&quot;libmusa_drv.so.4&quot;)\">\n"),
        std::string::npos)
        << junit;
    EXPECT_EQ(junit.find("type=\"runtime-lookup\"") != std::string::npos, fatal) << junit;
    {  // xmllint (libxml2-utils, a test package) is the oracle for well-formed XML; never dropped
      std::string dir = test::scratch_dir("runtime-junit");
      test::write_file(dir + "/r.xml", junit);
      auto lint = run("xmllint --noout " + quote(dir + "/r.xml"));
      EXPECT_EQ(lint.status, 0) << "xmllint: " << lint.err;
    }

    auto sarif_text = run(base + " --format sarif" + opts + " " + quote(kApi)).out;
    // Valid SARIF 2.1.0, by the schema carried in tests/schemas and python3-jsonschema (a test package).
    {
      std::string dir = test::scratch_dir("runtime-sarif");
      test::write_file(dir + "/r.sarif", sarif_text);
      std::string schema = std::string(MLC_SOURCE_DIR) + "/tests/schemas/sarif-schema-2.1.0.json";
      auto v = run("/usr/bin/python3 -c " +
                   quote("import json, sys, jsonschema\njsonschema.validate(json.load(open(sys.argv[1])), "
                         "json.load(open(sys.argv[2])))") +
                   " " + quote(dir + "/r.sarif") + " " + quote(schema) + " 2>&1");
      EXPECT_EQ(v.status, 0) << v.out;
    }
    auto sarif = json::parse(sarif_text);
    const auto& run0 = sarif["runs"][0];
    json result;
    for (const auto& r : run0["results"])
      if (r["ruleId"] == "runtime-lookup") result = r;
    ASSERT_FALSE(result.is_null()) << run0["results"].dump();
    EXPECT_EQ(result["level"], fatal ? "error" : "warning");
    EXPECT_EQ(result["message"]["text"].get<std::string>().substr(0, title.size() + 1), title + "\n");
    EXPECT_EQ(result["properties"]["kind"], "dlopen");
    EXPECT_EQ(result["properties"]["name"], "libmusa_drv.so.4");
    const auto& rule = run0["tool"]["driver"]["rules"][result["ruleIndex"].get<size_t>()];
    EXPECT_EQ(rule["id"], "runtime-lookup");
    EXPECT_EQ(rule["name"], "RuntimeLookup");
    EXPECT_EQ(rule["defaultConfiguration"]["level"], "warning");
  }
}

TEST(RuntimeLookup, entry_point_the_found_driver_lacks_is_named_with_the_driver) {
  std::string partial = kDir + "/partial";
  ASSERT_EQ(loader_oracle(partial), "1 0\n") << "the real loader finds muInit, not muMissingEntry";
  std::string args = " --runtime --library-path " + quote(partial) + " " + quote(kApi);
  auto r = run("env -u LD_LIBRARY_PATH " + kBin + args);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("warning: runtime-lookup: dlsym(\"muMissingEntry\") in " + kApi + ": libmusa_drv.so.4 (" +
                       partial + "/libmusa_drv.so.4) does not export it\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\"muInit\""), std::string::npos) << "an exported entry point is not a finding";
  EXPECT_EQ(r.out.find("cuCtxCreate"), std::string::npos) << "another API's literal is not checked against this driver";
  EXPECT_EQ(r.out.find("dlopen("), std::string::npos) << r.out;
  // Enum and error-code names of the library's error-string table are literals, not dlsym calls.
  auto literals = elf::read_string_literals(kApi);
  ASSERT_TRUE(literals.ok());
  ASSERT_NE(std::find(literals->begin(), literals->end(), "muErrorInvalidValue"), literals->end());
  for (const char* name : {"muSuccess", "muErrorInvalidValue", "muErrorUnknown"})
    EXPECT_EQ(r.out.find(name), std::string::npos) << name << " is an enum name\n" << r.out;

  auto fatal = run("env -u LD_LIBRARY_PATH " + kBin + " --fail-on new,runtime" + args);
  EXPECT_EQ(fatal.status, 1);
  EXPECT_NE(fatal.out.find("error: runtime-lookup: dlsym(\"muMissingEntry\")"), std::string::npos) << fatal.out;

  auto doc = json::parse(run("env -u LD_LIBRARY_PATH " + kBin + " --format json" + args).out);
  ASSERT_EQ(doc["runtime_lookups"].size(), 1u);
  EXPECT_EQ(doc["runtime_lookups"][0]["kind"], "dlsym");
  EXPECT_EQ(doc["runtime_lookups"][0]["provider"], partial + "/libmusa_drv.so.4");
  EXPECT_EQ(doc["runtime_lookups"][0]["provider_name"], "libmusa_drv.so.4");
}

// CUDA 13's libcublas, as installed on every machine here: its load and libcublasLt's dlopen
// libcuda.so.1, the driver, which a machine without a GPU lacks (the real loader's answer is asked).
// That is one warning, naming both; the optional rest is one note, never a page of lines.
TEST(RuntimeLookup, cuda_libcublas_without_the_driver_is_one_warning) {
  const std::string lib = "/usr/local/cuda/lib/libcublas.so.13";
  if (!std::filesystem::exists(lib)) MLC_SKIP() << lib << " is absent (CUDA 13 at /usr/local/cuda)";
  auto driver = run("/usr/bin/python3 -c 'import ctypes; ctypes.CDLL(\"libcuda.so.1\")'");
  if (driver.status == 0) MLC_SKIP() << "this machine has libcuda.so.1: nothing to warn about";
  auto r = run("env -u LD_LIBRARY_PATH " + kBin + " --no-cache " + quote(lib));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  std::vector<std::string> warnings;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("warning: ", 0) == 0) warnings.push_back(line);
  EXPECT_EQ(warnings,
            (std::vector<std::string>{
                "warning: runtime-lookup: the GPU driver libcuda.so.1 is not installed here: libcublas.so.13, "
                "libcublasLt.so.13 load it at run time and fail when first used (install the driver, or check "
                "on a machine that has it)"}))
      << r.out;
  // JSON keeps every look-up, the driver's marked as such and the rest optional.
  auto doc =
      nlohmann::json::parse(run("env -u LD_LIBRARY_PATH " + kBin + " --no-cache --format json " + quote(lib)).out);
  size_t drivers = 0;
  for (const auto& l : doc["runtime_lookups"]) {
    EXPECT_EQ(l["optional"], !l["driver"].get<bool>()) << l.dump();
    drivers += l["driver"].get<bool>();
  }
  EXPECT_EQ(drivers, 2u) << doc["runtime_lookups"].dump();
}

// A library that probes every vendor's driver (triton's profiler dlopens libcuda.so.1 and libamdhip64)
// is checked in a run that loads CUDA's stack (CUDA 13's libcublas): CUDA's driver is the run's, the
// other vendor's is a probe, optional as any other look-up. Checked alone, with no stack, both stay drivers.
TEST(RuntimeLookup, another_vendors_driver_is_optional_where_the_run_loads_a_stack) {
  const std::string cublas = "/usr/local/cuda/lib/libcublas.so.13";
  if (!std::filesystem::exists(cublas)) MLC_SKIP() << cublas << " is absent (CUDA 13 at /usr/local/cuda)";
  auto driver = run("/usr/bin/python3 -c 'import ctypes; ctypes.CDLL(\"libcuda.so.1\")'");
  if (driver.status == 0) MLC_SKIP() << "this machine has libcuda.so.1: nothing to warn about";
  std::string dir = test::scratch_dir("driver-probe");
  const std::string probe = dir + "/libprobe_mlc.so";
  test::write_file(dir + "/probe.c",
                   "#include <dlfcn.h>\n"
                   "void* cuda(void) { return dlopen(\"libcuda.so.1\", RTLD_NOW); }\n"
                   "void* amd(void) { return dlopen(\"libamdhip64.so.99\", RTLD_NOW); }\n");
  auto cc = run("cc -shared -fPIC -o " + quote(probe) + " " + quote(dir + "/probe.c") + " 2>&1");
  ASSERT_EQ(cc.status, 0) << cc.out;
  auto drivers = [&](const std::string& files) {
    auto doc = json::parse(run("env -u LD_LIBRARY_PATH " + kBin + " --no-cache --format json " + files).out);
    std::map<std::string, bool> out;  // the probe's look-ups: name -> driver
    for (const auto& l : doc["runtime_lookups"])
      if (l["library"] == probe) out[l["name"]] = l["driver"].get<bool>();
    return out;
  };
  EXPECT_EQ(drivers(quote(probe)), (std::map<std::string, bool>{{"libamdhip64.so.99", true}, {"libcuda.so.1", true}}));
  EXPECT_EQ(drivers(quote(probe) + " " + quote(cublas)),
            (std::map<std::string, bool>{{"libamdhip64.so.99", false}, {"libcuda.so.1", true}}));
  // The text names the run's driver alone; the probe of the other is counted with the optional rest.
  auto text = run("env -u LD_LIBRARY_PATH " + kBin + " --no-cache " + quote(probe) + " " + quote(cublas));
  EXPECT_EQ(text.out.find("libamdhip64.so.99 is not installed"), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find("warning: runtime-lookup: the GPU driver libcuda.so.1 is not installed here: libprobe_mlc.so"),
      std::string::npos)
      << text.out;
}

TEST(RuntimeLookup, complete_driver_is_clean) {
  std::string full = kDir + "/full";
  ASSERT_EQ(loader_oracle(full), "1 1\n");
  auto r =
      run("env -u LD_LIBRARY_PATH " + kBin + " --fail-on runtime --library-path " + quote(full) + " " + quote(kApi));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("runtime-lookup"), std::string::npos) << r.out;
}

// dlopen from a library searches what the loader would search from it (loader/search_order.h): the
// main object's DT_RPATH even when the caller's loader chain does not reach it (a preloaded
// library), and, from a caller marked DF_1_NODEFLIB (-z nodefaultlib), neither ld.so.cache's entry in
// a system directory nor the system directories. The real loader (the program itself, the caller
// preloaded) is the oracle: the plugin found through app's RPATH, libz.so.1 not found from the
// NODEFLIB library although ld.so.cache lists it.
TEST(RuntimeLookup, dlopen_by_name_honours_the_main_rpath_and_nodeflib) {
  if (run("/sbin/ldconfig -p | grep -q 'libz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/'").status != 0)
    MLC_SKIP() << "ld.so.cache lists no /lib/x86_64-linux-gnu/libz.so.1";
  std::string dir = test::scratch_dir("dlopen-search-order");
  test::write_file(dir + "/plugin.c", "int plugin_mlc(void) { return 1; }\n");
  test::write_file(
      dir + "/preloaded.c",
      "#include <dlfcn.h>\nint load_plugin(void) { return dlopen(\"libplugin_mlc.so.1\", RTLD_NOW) != 0; }\n");
  test::write_file(dir + "/nodeflib.c",
                   "#include <dlfcn.h>\nint load_z(void) { return dlopen(\"libz.so.1\", RTLD_NOW) != 0; }\n");
  test::write_file(
      dir + "/app.c",
      "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <stdio.h>\nint load_z(void);\n"
      "int main(void) {\n  int (*load_plugin)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, \"load_plugin\");\n"
      "  printf(\"plugin %s\\n\", load_plugin && load_plugin() ? \"found\" : \"absent\");\n"
      "  printf(\"z %s\\n\", load_z() ? \"found\" : \"absent\");\n  return 0;\n}\n");
  for (const char* cc :
       {"mkdir -p plugins && cc -shared -fPIC -Wl,-soname,libplugin_mlc.so.1 -o plugins/libplugin_mlc.so.1 plugin.c",
        "cc -shared -fPIC -Wl,-soname,libpreloaded_mlc.so -o libpreloaded_mlc.so preloaded.c -ldl",
        "cc -shared -fPIC -Wl,-soname,libnodeflib_mlc.so -Wl,-z,nodefaultlib -o libnodeflib_mlc.so nodeflib.c -ldl",
        "cc -o app app.c -L. -lnodeflib_mlc -ldl -Wl,--disable-new-dtags,-rpath,'$ORIGIN:$ORIGIN/plugins'"}) {
    auto r = run("cd " + quote(dir) + " && " + cc + " 2>&1");
    ASSERT_EQ(r.status, 0) << cc << "\n" << r.out;
  }
  ASSERT_NE(run("readelf -d " + quote(dir + "/libnodeflib_mlc.so")).out.find("NODEFLIB"), std::string::npos);
  ASSERT_EQ(
      run("env -u LD_LIBRARY_PATH LD_PRELOAD=" + quote(dir + "/libpreloaded_mlc.so") + " " + quote(dir + "/app")).out,
      "plugin found\nz absent\n");

  auto r = run("env -u LD_LIBRARY_PATH " + kBin + " --no-cache --format json --closure --with " +
               quote(dir + "/libpreloaded_mlc.so") + " " + quote(dir + "/app"));
  auto lookups = json::parse(r.out)["runtime_lookups"];
  ASSERT_EQ(lookups.size(), 1u) << lookups.dump(2);
  EXPECT_EQ(lookups[0]["library"], dir + "/libnodeflib_mlc.so");
  EXPECT_EQ(lookups[0]["kind"], "dlopen");
  EXPECT_EQ(lookups[0]["name"], "libz.so.1");
  // app's RPATH (the caller's loader) only: the cache's /lib/x86_64-linux-gnu/libz.so.1 and the
  // system directories are passed over.
  EXPECT_EQ(lookups[0]["searched"], (json{dir + "/libz.so.1", dir + "/plugins/libz.so.1"})) << lookups.dump(2);
}

}  // namespace
}  // namespace mlc
