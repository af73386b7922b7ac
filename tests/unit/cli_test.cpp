// musa-linkcheck as a user runs it: exact diagnostic lines, JSON shape, exit statuses, and bad
// input that is named in one line while the other inputs are still reported.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;

std::string linkcheck(const std::string& args) { return kBin + " " + args; }

TEST(Cli, text_report_has_lld_style_lines_and_exit_1) {
  auto r = run(linkcheck("--color never " + quote(kFix + "/ver/libver_user.so")));
  EXPECT_EQ(r.status, 1);
  std::string path = kFix + "/ver/libver_user.so";
  const std::string fixture_c = std::string(MLC_SOURCE_DIR) + "/fixtures/loader/src/fixture.c:8";
  std::string want =
      "error: loading libver_user.so would fail: 2 causes\n"
      "error: undefined symbol: ver_hid\n"
      ">>> referenced by " +
      fixture_c +
      " (use_ver_hid)\n"
      ">>>               " +
      path +
      "\n"
      ">>> hidden: defined in " +
      kFix +
      "/ver/run/libver.so.1 only under a hidden (non-default) version, "
      "invisible to an unversioned reference\n"
      ">>> fix: make the version the default (@@) in the provider's version script\n"
      "error: undefined symbol: ver_moved@VER_2\n"
      ">>> referenced by " +
      fixture_c +
      " (use_ver_moved)\n"
      ">>>               " +
      path +
      "\n"
      ">>> version-mismatch: defined in " +
      kFix +
      "/ver/run/libver.so.1, but not with version VER_2\n"
      ">>> fix: rebuild against the library that is loaded at run time, or load the one it was linked against\n"
      "2 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n";
  EXPECT_EQ(r.out, want);
}

TEST(Cli, clean_library_exits_0) {
  auto r = run(linkcheck(quote(kFix + "/chain/rpath/libchain_a.so")));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
}

TEST(Cli, fail_on_none_reports_but_exits_0) {
  auto r = run(linkcheck("--fail-on none " + quote(kFix + "/weak/libweak_user.so")));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("error: undefined symbol: strong_missing\n"), std::string::npos);
}

TEST(Cli, missing_library_text_lists_the_search) {
  auto r = run(linkcheck("-q " + quote(kFix + "/miss/libmiss_user.so")));
  EXPECT_EQ(r.status, 1);
  // One cause: the symbol the missing library would have provided is told under it.
  EXPECT_EQ(
      r.out,
      "error: loading libmiss_user.so would fail: 1 cause\n"
      "error: library not found: libnothere.so.1 (needed by libmiss_user.so); no other version of it was found\n");
}

TEST(Cli, json_report_follows_the_contract) {
  auto r = run(linkcheck("--format json " + quote(kFix + "/ver/libver_user3.so")));
  EXPECT_EQ(r.status, 1);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema"], "musa-linkcheck/1");
  ASSERT_EQ(doc["libraries"].size(), 1u);
  const auto& lib = doc["libraries"][0];
  EXPECT_EQ(lib["path"], kFix + "/ver/libver_user3.so");
  EXPECT_TRUE(lib["soname"].is_null());
  EXPECT_EQ(lib["missing_versions"][0]["version"], "VER_2");
  EXPECT_EQ(lib["missing_versions"][0]["provider"], kFix + "/ver/run3/libver.so.1");
  const auto& u = lib["unresolved"][0];
  EXPECT_EQ(u["symbol"], "ver_new");
  EXPECT_EQ(u["version"], "VER_2");
  EXPECT_EQ(u["type"], "func");
  EXPECT_EQ(u["binding"], "global");
  EXPECT_EQ(u["classification"], "version-mismatch");
  EXPECT_EQ(u["referenced_by"][0]["library"], kFix + "/ver/libver_user3.so");
  for (const char* key : {"origin", "counterpart", "fix"}) EXPECT_TRUE(u.contains(key)) << key;
  EXPECT_TRUE(u["suggestions"].is_array());
  EXPECT_EQ(doc["summary"]["unresolved"], 1);
  EXPECT_EQ(doc["summary"]["by_classification"]["version-mismatch"], 1);
  bool found_runpath = false;
  for (const auto& n : lib["needed"]) found_runpath |= n["name"] == "libver.so.1" && n["how"] == "runpath";
  EXPECT_TRUE(found_runpath);
}

TEST(Cli, json_output_file_is_written_atomically) {
  std::string dir = test::scratch_dir("cli-out");
  auto r =
      run(linkcheck("--format json -o " + quote(dir + "/report.json") + " " + quote(kFix + "/weak/libweak_user.so")));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty());
  auto doc = nlohmann::json::parse(test::read_file(dir + "/report.json"));
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["symbol"], "strong_missing");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // no temp file left over
}

TEST(Cli, directory_means_every_elf_file_below_it) {
  auto r = run(linkcheck("-q " + quote(kFix + "/with")));
  EXPECT_EQ(r.status, 1);
  // A directory is an environment: -q gives one error line per named file whose load fails, naming
  // it and what fails it (libtorchlike.so loads cleanly: none for it).
  EXPECT_EQ(r.out, "error: loading libkernels.so would fail: 1 finding of its own: torchlike_op\n");
}

TEST(Cli, with_option_loads_libraries_first) {
  const std::string torchlike = kFix + "/with/libtorchlike.so";
  // Alone, nothing defines torchlike_op: libkernels.so does not need libtorchlike.so.
  auto alone = run(linkcheck("-q " + quote(kFix + "/with/libkernels.so")));
  EXPECT_EQ(alone.status, 1);
  EXPECT_EQ(alone.out, "error: loading libkernels.so would fail: 1 cause\nerror: undefined symbol: torchlike_op\n");
  // Loaded first with --with, libtorchlike.so defines it.
  auto r = run(linkcheck("--with " + quote(torchlike) + " " + quote(kFix + "/with/libkernels.so")));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  // A library that needs it by name (no search path would find it) is given the one --with loaded,
  // from that path, and told why: "with".
  auto j = run(
      linkcheck("--format json --with " + quote(torchlike) + " " + quote(kFix + "/with_needed/libkernels_needing.so")));
  EXPECT_EQ(j.status, 0) << j.out << j.err;
  auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["libraries"].size(), 1u);
  const nlohmann::json* needed = nullptr;
  for (const auto& n : doc["libraries"][0]["needed"])
    if (n["name"] == "libtorchlike.so") needed = &n;
  ASSERT_NE(needed, nullptr) << doc["libraries"][0]["needed"].dump();
  EXPECT_EQ((*needed)["path"], torchlike);
  EXPECT_EQ((*needed)["how"], "with");
  EXPECT_TRUE(doc["libraries"][0]["unresolved"].empty());
  // Without --with the same name is not found, and the report says where it looked.
  auto missing = run(linkcheck("-q " + quote(kFix + "/with_needed/libkernels_needing.so")));
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.out.rfind("error: loading libkernels_needing.so would fail: 1 cause\n"
                              "error: library not found: libtorchlike.so (needed by libkernels_needing.so); "
                              "no other version of it was found\n",
                              0),
            0u)
      << missing.out;
}

TEST(Cli, ld_library_path_from_the_environment_is_honoured) {
  const std::string dep = kFix + "/llp/elsewhere/libllp_dep.so";
  auto r = run("LD_LIBRARY_PATH=" + quote(kFix + "/llp/elsewhere") + " " +
               linkcheck("--format json " + quote(kFix + "/llp/libllp_user.so")));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["libraries"].size(), 1u);
  const nlohmann::json* needed = nullptr;
  for (const auto& n : doc["libraries"][0]["needed"])
    if (n["name"] == "libllp_dep.so") needed = &n;
  ASSERT_NE(needed, nullptr) << doc["libraries"][0]["needed"].dump();
  EXPECT_EQ((*needed)["path"], dep);               // found in the directory LD_LIBRARY_PATH names...
  EXPECT_EQ((*needed)["how"], "ld_library_path");  // ...because it names it
  EXPECT_TRUE(doc["libraries"][0]["unresolved"].empty());
  // Without it, nothing else leads there: the library is missing.
  auto without = run("env -u LD_LIBRARY_PATH " + linkcheck("--format json " + quote(kFix + "/llp/libllp_user.so")));
  EXPECT_EQ(without.status, 1) << without.err;
  auto missing = nlohmann::json::parse(without.out);
  bool not_found = false;
  for (const auto& n : missing["libraries"][0]["needed"])
    not_found |= n["name"] == "libllp_dep.so" && n["path"].is_null();
  EXPECT_TRUE(not_found) << without.out;
}

TEST(Cli, usage_error_exits_2) {
  auto r = run(linkcheck("--format nonsense x.so"));
  EXPECT_EQ(r.status, 2);
  auto none = run(linkcheck(""));
  EXPECT_EQ(none.status, 2);
}

TEST(Cli, version_and_help_follow_gnu_style) {
  auto v = run(linkcheck("--version"));
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("musa-linkcheck ", 0), 0u);
  auto h = run(linkcheck("--help"));
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("--closure"), std::string::npos);
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

TEST(Cli, bundled_example_reports_its_three_faults) {
  const std::string ex = MLC_EXAMPLE_DIR;
  auto r = test::run(kBin + " --format json --with " + test::quote(ex + "/libc10.so") + " " +
                     test::quote(ex + "/libmusa_kernels.so"));
  EXPECT_EQ(r.status, 1);
  auto doc = nlohmann::json::parse(r.out);
  std::vector<std::string> got;
  for (const auto& u : doc["libraries"][0]["unresolved"]) got.push_back(u["symbol"]);
  EXPECT_EQ(got, (std::vector<std::string>{"_ZN2at4musa3cub28exclusive_sum_in_common_typeIiiEEvPKT_PT0_l",
                                           "_ZN2at6native26launch_glu_backward_kernelERKNS_18TensorIteratorBaseEll",
                                           "musaMallocAsync"}));
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["demangled"],
            "void at::musa::cub::exclusive_sum_in_common_type<int, int>(int const*, int*, long)");
  bool runtime_by_runpath = false;
  for (const auto& n : doc["libraries"][0]["needed"])
    runtime_by_runpath |=
        n["name"] == "libmusart.so.4" && n["how"] == "runpath" && n["path"] == ex + "/sdk/lib/libmusart.so.4";
  EXPECT_TRUE(runtime_by_runpath) << doc["libraries"][0]["needed"].dump();
  // With the context the README's example job passes, every symbol is traced and has a fix.
  const std::string src = std::string(MLC_SOURCE_DIR) + "/fixtures/example";
  auto traced = test::run(kBin + " --format json --no-cache --build-dir " + test::quote(MLC_BINARY_DIR) +
                          " --porting-dir " + test::quote(src + "/generated_cuda_compatible") + " --cmake-lists " +
                          test::quote(src + "/csrc/CMakeLists.txt") + " --mapping " + test::quote(src + "/mapping") +
                          " --sdk-home " + test::quote(ex + "/sdk") + " --with " + test::quote(ex + "/libc10.so") +
                          " " + test::quote(ex + "/libmusa_kernels.so"));
  EXPECT_EQ(traced.status, 1) << traced.err;
  auto tdoc = nlohmann::json::parse(traced.out);
  const auto& us = tdoc["libraries"][0]["unresolved"];
  ASSERT_EQ(us.size(), 3u);
  const std::string ported = src + "/generated_cuda_compatible/aten/src/ATen";
  EXPECT_EQ(us[0]["classification"], "missing-source");
  EXPECT_EQ(us[0]["origin"]["file"], ported + "/musa/cub.mu");
  EXPECT_EQ(us[0]["origin"]["kind"], "explicit-instantiation");
  EXPECT_EQ(us[0]["fix"]["list"], "MU_SRCS");
  EXPECT_EQ(us[0]["fix"]["entry"], "${GENERATED_PORTING_DIR}/aten/src/ATen/musa/cub.mu");
  EXPECT_EQ(us[0]["referenced_by"][0]["file"], ported + "/native/musa/ScanKernels.mu");
  EXPECT_EQ(us[1]["classification"], "missing-source");
  EXPECT_EQ(us[1]["origin"]["file"], ported + "/native/musa/ActivationGluKernel.mu");
  EXPECT_EQ(us[1]["fix"]["entry"], "${GENERATED_PORTING_DIR}/aten/src/ATen/native/musa/ActivationGluKernel.mu");
  EXPECT_EQ(us[1]["fix"]["cmake_file"], src + "/csrc/CMakeLists.txt");
  EXPECT_EQ(us[2]["classification"], "sdk-declared-only");
  EXPECT_EQ(us[2]["fix"]["kind"], "stub");
  EXPECT_EQ(us[2]["counterpart"]["name"], "cudaMallocAsync");
  // Everything is settled by text and the SDK: the compiler has nothing to decide, and a newcomer's
  // first run carries no warning about it (an SDK declaration is not an open question for compiling).
  EXPECT_EQ(tdoc["warnings"], nlohmann::json::array()) << tdoc["warnings"].dump();
  // Without --with, c10::warn is missing too.
  auto alone = test::run(kBin + " -q " + test::quote(ex + "/libmusa_kernels.so"));
  EXPECT_NE(alone.out.find("error: undefined symbol: c10::warn(char const*)\n"), std::string::npos) << alone.out;
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

TEST(Cli, baseline_accepts_known_findings_and_fails_on_new_ones) {
  std::string dir = test::scratch_dir("baseline");
  std::string lib = test::quote(kFix + "/ver/libver_user.so");
  std::string base = dir + "/baseline.txt";
  auto wrote = test::run(kBin + " -q --cuda-home '' --update-baseline " + test::quote(base) + " " + lib);
  // What it wrote it accepts: `--update-baseline f lib.so && git add f` reaches git add.
  EXPECT_EQ(wrote.status, 0) << wrote.out << wrote.err;
  EXPECT_EQ(wrote.out, "baselined: undefined symbol: ver_hid\nbaselined: undefined symbol: ver_moved@VER_2\n");
  EXPECT_EQ(test::read_file(base),
            "# musa-linkcheck baseline: findings accepted for now (musa-linkcheck --update-baseline).\n"
            "libver_user.so undefined ver_hid\n"
            "libver_user.so undefined ver_moved@VER_2\n");
  auto known = test::run(kBin + " --color never --cuda-home '' --baseline " + test::quote(base) + " " + lib);
  EXPECT_EQ(known.status, 0) << known.out;
  EXPECT_NE(known.out.find("baselined: undefined symbol: ver_hid\n"), std::string::npos);
  EXPECT_NE(known.out.find("2 undefined symbols, 0 missing libraries, 0 missing versions in 1 library (2 baselined)\n"),
            std::string::npos)
      << known.out;
  // One finding leaves the baseline: it is new, and fails the run.
  test::write_file(base, "libver_user.so undefined ver_hid   # known, tracked elsewhere\n");
  auto fresh = test::run(kBin + " -q --cuda-home '' --fail-on new --baseline " + test::quote(base) + " " + lib);
  EXPECT_EQ(fresh.status, 1);
  // The headline counts what still fails: the baselined finding is not a cause.
  EXPECT_EQ(fresh.out,
            "error: loading libver_user.so would fail: 1 cause\n"
            "baselined: undefined symbol: ver_hid\nerror: undefined symbol: ver_moved@VER_2\n");
  auto json = test::run(kBin + " --format json --cuda-home '' --baseline " + test::quote(base) + " " + lib);
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["baselined"], true);
  EXPECT_EQ(doc["libraries"][0]["unresolved"][1]["baselined"], false);
  test::write_file(base, "libver_user.so nonsense ver_hid\n");
  auto bad = test::run(kBin + " -q --baseline " + test::quote(base) + " " + lib);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find(base + ": line 1: expected"), std::string::npos) << bad.err;
}

// A missing library the baseline accepts is no new finding: the run it was written from passes.
TEST(Cli, baselined_missing_library_is_not_a_new_finding) {
  std::string dir = test::scratch_dir("baseline-missing");
  std::string lib = test::quote(kFix + "/miss/libmiss_user.so");
  std::string base = dir + "/baseline.txt";
  auto wrote = test::run(kBin + " -q --cuda-home '' --update-baseline " + test::quote(base) + " " + lib);
  EXPECT_EQ(wrote.status, 0) << wrote.out << wrote.err;
  EXPECT_NE(test::read_file(base).find("\nlibmiss_user.so missing-library libnothere.so.1\n"), std::string::npos)
      << test::read_file(base);
  auto known = test::run(kBin + " -q --cuda-home '' --fail-on new --baseline " + test::quote(base) + " " + lib);
  EXPECT_EQ(known.status, 0) << known.out << known.err;
  EXPECT_EQ(known.out.find("error:"), std::string::npos) << known.out;
}

// --- what the text says of each load, and of the names in it ---

// Compiles each (file, source, extra gcc arguments) into `dir` as a shared object, in order.
void build_libraries(const std::string& dir, const std::vector<std::array<std::string, 3>>& libs) {
  for (const auto& [file, source, extra] : libs) {
    test::write_file(dir + "/src.c", source);
    auto cc = run("cd " + quote(dir) + " && gcc -shared -fPIC -o " + quote(file) + " src.c " + extra);
    ASSERT_EQ(cc.status, 0) << file << ": " << cc.err;
  }
}

// Three libraries beside the one a file links define its nine symbols, three each: "9 causes" counted
// symbols. A library left unlinked is one cause; the closing line counts the symbols.
TEST(Cli, a_load_headline_counts_causes_and_the_closing_line_symbols) {
  std::string dir = test::scratch_dir("cli-causes");
  std::string refs, calls;
  std::vector<std::array<std::string, 3>> libs = {{"libq.so", "int q(void) { return 0; }\n", ""}};
  for (int l = 1; l <= 3; ++l) {
    std::string defs;
    for (char c : std::string("abc")) {
      std::string f = std::string(1, c) + std::to_string(l);
      defs += "int " + f + "(void) { return " + std::to_string(l) + "; }\n";
      refs += "int " + f + "(void);\n";
      calls += " + " + f + "()";
    }
    libs.push_back({"libp" + std::to_string(l) + ".so", defs, ""});
  }
  libs.push_back({"libuser.so", refs + "int q(void);\nint use(void) { return q()" + calls + "; }\n",
                  "-L. -lq -Wl,--enable-new-dtags,-rpath,'$ORIGIN'"});
  build_libraries(dir, libs);
  auto r = run(linkcheck("--no-cache --sdk-home '' --cuda-home '' " + quote(dir + "/libuser.so")));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "error: loading libuser.so would fail: 3 causes") << r.out;
  EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1),
            "9 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 9 * 5 + 1) << r.out;  // each symbol still told in full
}

// A file named under a directory is named by its path there, not its base name alone.
TEST(Cli, a_directory_headline_names_the_file_by_its_path_in_the_directory) {
  std::string dir = test::scratch_dir("cli-dir-names");
  std::filesystem::create_directories(dir + "/tree/test");
  build_libraries(dir + "/tree/test", {{"libjit.so", "int gone(void);\nint use(void) { return gone(); }\n", ""}});
  auto r = run(linkcheck("-q --no-cache --sdk-home '' --cuda-home '' " + quote(dir + "/tree")));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "error: loading test/libjit.so would fail: 1 cause\nerror: undefined symbol: gone\n");
}

// A newline in a file name is written \x0A: it can break no line of the report.
TEST(Cli, a_control_character_in_a_file_name_is_escaped_in_text) {
  std::string dir = test::scratch_dir("cli-controls");
  build_libraries(dir, {{"lib\nx\x1b.so", "int gone(void);\nint use(void) { return gone(); }\n", ""}});
  auto r = run(linkcheck("--no-cache --sdk-home '' --cuda-home '' " + quote(dir + "/lib\nx\x1b.so")));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out,
            "error: loading lib\\x0Ax\\x1B.so would fail: 1 cause\n"
            "error: undefined symbol: gone\n"
            ">>> referenced by " +
                dir +
                "/lib\\x0Ax\\x1B.so\n"
                ">>> unknown: no loaded object defines it (no sources, SDK or CUDA were given to trace it further)\n"
                "1 undefined symbol, 0 missing libraries, 0 missing versions in 1 library\n");
}

// A name that is not valid UTF-8 is escaped in `path` and carried byte for byte in `path_bytes`
// (base64), which the schema in docs/ describes; a program opens the file by those bytes.
TEST(Cli, json_carries_the_bytes_of_a_path_that_is_not_utf8) {
  if (run("/usr/bin/python3 -c 'import jsonschema'").status != 0) MLC_SKIP() << "python3-jsonschema is not installed";
  std::string dir = test::scratch_dir("cli-path-bytes");
  const std::string name = "lib\xff\xfe.so";
  build_libraries(dir, {{name, "int gone(void);\nint use(void) { return gone(); }\n", ""},
                        {"libok.so", "int ok(void) { return 1; }\n", ""}});
  std::string file = dir + "/r.json";
  auto r = run(linkcheck("--no-cache --sdk-home '' --cuda-home '' --format json -o " + quote(file) + " " +
                         quote(dir + "/" + name) + " " + quote(dir + "/libok.so")));
  EXPECT_EQ(r.status, 1) << r.err;
  auto doc = nlohmann::json::parse(test::read_file(file));
  EXPECT_EQ(doc["libraries"][0]["path"], dir + "/lib\\xFF\\xFE.so");
  EXPECT_EQ(doc["libraries"][1]["path_bytes"], nullptr);
  // Python's own base64 and open(): the bytes name the file.
  auto opened = run("/usr/bin/python3 -c " +
                    quote("import base64, json, os, sys\n"
                          "lib = json.load(open(sys.argv[1]))['libraries'][0]\n"
                          "path = base64.b64decode(lib['path_bytes'])\n"
                          "print(os.path.getsize(path) == os.path.getsize(os.fsencode(sys.argv[2])))\n") +
                    " " + quote(file) + " " + quote(dir + "/" + name));
  EXPECT_EQ(opened.out, "True\n") << opened.err;
  const std::string schema = std::string(MLC_SOURCE_DIR) + "/docs/report.schema.json";
  auto v = run(
      "/usr/bin/python3 -c " +
      quote("import json, sys, jsonschema\n"
            "jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))\n") +
      " " + quote(schema) + " " + quote(file));
  EXPECT_EQ(v.status, 0) << v.err;
}

// The README says --confirm applies to both tools.
TEST(Cli, musa_stubgen_takes_confirm_as_the_readme_says) {
  std::string dir = test::scratch_dir("cli-stubgen-confirm");
  build_libraries(dir, {{"libok.so", "int ok(void) { return 1; }\n", ""}});
  auto r = run(std::string(MLC_STUBGEN_BIN) + " --confirm --no-cache --sdk-home '' --cuda-home '' --dry-run " +
               quote(dir + "/libok.so"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "musa-stubgen: 0 stubs, 0 build files to patch, 0 files would change, 0 symbols refused\n");
  auto both = run(std::string(MLC_STUBGEN_BIN) + " --confirm --no-confirm " + quote(dir + "/libok.so"));
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err.substr(0, both.err.find('\n')),
            "musa-stubgen: options '--no-confirm' and '--confirm' cannot be used together");
}

// Two sources define foo(int) by their text; one cannot compile here (windows.h). The one that does
// settles it: the other is counted as failed, its error shown only with --verbose. Without a candidate
// that settles it, each failed compile is shown: it is why the symbol stays open.
TEST(Cli, a_candidate_that_does_not_compile_is_counted_and_its_error_shown_only_when_it_matters) {
  if (run("command -v ninja").status != 0) MLC_SKIP() << "ninja (ninja-build) not installed";
  std::string dir = test::scratch_dir("cli-confirm-failures");
  std::filesystem::create_directories(dir + "/src");
  test::write_file(dir + "/src/ops.cpp", "int foo(int);\nextern \"C\" int run(int x) { return foo(x); }\n");
  test::write_file(dir + "/src/a.cpp", "#include <windows.h>\nint foo(int x) { return x; }\n");
  test::write_file(dir + "/src/b.cpp",
                   "#ifdef NEVER\nint foo(int x) { return x; }\n#endif\nint foo(int x) { return x + 1; }\n");
  test::write_file(dir + "/CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.16)\nproject(k CXX)\nadd_library(k SHARED src/ops.cpp)\n");
  ASSERT_EQ(run("cd " + quote(dir) +
                " && cmake -S . -B build -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > /dev/null && "
                "cmake --build build > /dev/null")
                .status,
            0);
  std::string check =
      "cd " + quote(dir) + " && " + kBin + " --no-cache --sdk-home '' --cuda-home '' --build-dir build ";
  const std::string failed = "warning: --confirm: compiling " + dir + "/src/a.cpp failed: " + dir +
                             "/src/a.cpp:1:10: fatal error: windows.h: No such file or directory\n";
  auto quiet = run(check + "build/libk.so");
  EXPECT_EQ(quiet.status, 1) << quiet.err;
  EXPECT_EQ(quiet.out.find(failed), std::string::npos) << quiet.out;
  EXPECT_NE(
      quiet.out.find("warning: --confirm: 2 candidate file(s): 2 compiled, 0 from cache, 1 failed (1 not the answer: "
                     "--verbose shows why), 0 skipped (budget or no command); "),
      std::string::npos)
      << quiet.out;
  EXPECT_NE(quiet.out.find(">>> missing-source: compiling " + dir + "/src/b.cpp defines it"), std::string::npos);
  auto verbose = run(check + "--verbose build/libk.so");
  EXPECT_NE(verbose.out.find(failed), std::string::npos) << verbose.out;
  // Without b.cpp's definition nothing settles foo(int): why a.cpp could not is said.
  test::write_file(dir + "/src/b.cpp", "#ifdef NEVER\nint foo(int x) { return x; }\n#endif\n");
  auto open = run(check + "build/libk.so");
  EXPECT_NE(open.out.find(failed), std::string::npos) << open.out;
}

}  // namespace
}  // namespace mlc
