// The first hour's leftovers, as a new user meets them: --help as GNU tools write
// it, usage errors in GNU's words before any report, coverage's own options, explain's near misses, a
// hanging --python, and the smaller slips - each as the exact lines printed and the exit status.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "build/model.h"
#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kLib = kFix + "/chain/rpath/libchain_a.so";
const std::string kTryHelp = "Try 'musa-linkcheck --help' for more information.\n";

std::string linkcheck(const std::string& args) { return kBin + " " + args; }

// --help has no CLI11 markup: no TEXT, REQUIRED, Excludes, {a,b} choices or "[default]" brackets;
// --python's optional value is written --python[=EXE], placeholders are words, choices are in the text.
TEST(Leftovers, help_is_written_as_gnu_tools_write_it) {
  for (const std::string& cmd :
       {kBin + " --help", kBin + " explain --help", kBin + " coverage --help", kStubgen + " --help"}) {
    auto h = run(cmd);
    EXPECT_EQ(h.status, 0) << cmd;
    EXPECT_EQ(h.out.rfind("Usage: ", 0), 0u) << h.out;
    for (const char* markup :
         {"Excludes", "REQUIRED", " TEXT", ":{", "{python3}", "Positionals:", "Subcommands:", " ..."})
      EXPECT_EQ(h.out.find(markup), std::string::npos) << cmd << " shows " << markup << "\n" << h.out;
    for (size_t at = 0, nl; (nl = h.out.find('\n', at)) != std::string::npos; at = nl + 1)
      EXPECT_LE(nl - at, 79u) << cmd << ": " << h.out.substr(at, nl - at);
  }
  auto h = run(kBin + " --help");
  EXPECT_NE(h.out.find("\n      --python[=EXE]          check as the Python interpreter loads it"), std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("\n      --format FORMAT         output format: text, json, or for CI sarif (code\n"),
            std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("\n      --color WHEN            colour the text report: auto (on a terminal,\n"
                       "                              unless NO_COLOR is set), always or never\n"),
            std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("\n  -o, --output FILE           write the report to FILE"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\n  -h, --help                  display this help and exit\n"), std::string::npos) << h.out;
  auto s = run(kStubgen + " --help");
  EXPECT_NE(s.out.find("\n      --out-cpp PATH          the stub source (default:\n"
                       "                              unimplemented_functions.cpp)\n"),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("\n      --style STYLE           stub bodies: throw (default), abort or\n"
                       "                              return-error\n"),
            std::string::npos)
      << s.out;
}

// coverage --help: its own usage line, one Output group (its --format's choices), the context options
// it reads, and none of the loader, CI or confirm options it would ignore.
TEST(Leftovers, coverage_help_is_its_own) {
  auto h = run(kBin + " coverage --help");
  EXPECT_EQ(h.status, 0);
  EXPECT_EQ(h.out.rfind("Usage: musa-linkcheck coverage [OPTION]... SOURCE_DIR...\n", 0), 0u) << h.out;
  size_t output = h.out.find("\nOutput:\n");
  EXPECT_NE(output, std::string::npos) << h.out;
  EXPECT_EQ(h.out.find("\nOutput:\n", output + 1), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("      --format FORMAT         text, json, markdown or html"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("--mapping PATH"), std::string::npos) << h.out;
  for (const char* ignored :
       {"--closure", "--with", "--python", "--baseline", "--fail-on", "--confirm", "--json-report", "--quiet", "sarif"})
    EXPECT_EQ(h.out.find(ignored), std::string::npos) << ignored << "\n" << h.out;
}

// coverage refuses what it would ignore, as a usage error before reading anything.
TEST(Leftovers, coverage_refuses_the_options_it_would_ignore) {
  std::string dir = test::scratch_dir("cov-src");
  for (const std::string opt : {"--closure", "--baseline b.txt", "--with x.so", "--fail-on none", "--quiet"}) {
    auto r = run(linkcheck("coverage " + opt + " " + quote(dir)));
    EXPECT_EQ(r.status, 2) << opt;
    EXPECT_EQ(r.out, "") << opt;
    std::string name = opt.substr(0, opt.find(' '));
    EXPECT_EQ(r.err, "musa-linkcheck: option '" + name + "' does not apply to 'coverage'\n" + kTryHelp) << opt;
  }
}

// Usage errors in GNU's words, each one line and the hint, exit 2, nothing on standard output.
TEST(Leftovers, usage_errors_are_gnu_style_and_never_silent) {
  struct Case {
    std::string args, line;
  };
  for (const Case& c : {
           Case{"--confirm-budget abc", "invalid --confirm-budget 'abc': not a number"},
           Case{"--confirm-budget -5", "invalid --confirm-budget '-5': less than 0"},
           Case{"--confirm-budget=-5", "invalid --confirm-budget '-5': less than 0"},
           Case{"--build-dir /a --build-dir /b", "option '--build-dir' given more than once"},
           Case{"--no-confirm --confirm", "options '--no-confirm' and '--confirm' cannot be used together"},
           Case{"--closure --only-named", "options '--closure' and '--only-named' cannot be used together"},
       }) {
    auto r = run(linkcheck(c.args + " " + quote(kLib)));
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
    EXPECT_EQ(r.err, "musa-linkcheck: " + c.line + "\n" + kTryHelp) << c.args;
  }
  auto g = run(kStubgen + " --version-guard 1.5 " + quote(kLib));
  EXPECT_EQ(g.status, 2);
  EXPECT_EQ(g.err,
            "musa-stubgen: invalid --version-guard '1.5': not a whole number\n"
            "Try 'musa-stubgen --help' for more information.\n");
}

// Bad context files fail before any report, each said once with the system's reason.
TEST(Leftovers, bad_baseline_and_mapping_fail_before_the_report_said_once) {
  const std::string missing = test::scratch_dir("absent") + "/nonexistent";
  auto b = run(linkcheck("--baseline " + quote(missing) + " " + quote(kLib)));
  EXPECT_EQ(b.status, 2);
  EXPECT_EQ(b.out, "");
  EXPECT_EQ(b.err, "musa-linkcheck: error: " + missing + ": cannot open the baseline: No such file or directory\n");
  auto m = run(linkcheck("--mapping " + quote(missing) + " " + quote(kLib)));
  EXPECT_EQ(m.status, 2);
  EXPECT_EQ(m.out, "");
  EXPECT_EQ(m.err, "musa-linkcheck: error: --mapping " + missing + ": No such file or directory\n");
  // A map that is not JSON: nlohmann's whole message, not cut mid-word.
  std::string dir = test::scratch_dir("badmap");
  test::write_file(dir + "/x.json", "{\"cudaFree\": \n");
  const std::string ex = MLC_EXAMPLE_DIR;
  auto j = run(linkcheck("-q --mapping " + quote(dir) + " --with " + quote(ex + "/libc10.so") + " " +
                         quote(ex + "/libmusa_kernels.so")));
  EXPECT_EQ(j.status, 2);
  EXPECT_EQ(j.err, "musa-linkcheck: error: " + dir +
                       "/x.json: invalid JSON at line 2, column 1: syntax error while "
                       "parsing value - unexpected end of input; expected '[', '{', or a literal\n");
  // A cache directory that is a file: warned about, and the run goes on.
  test::write_file(dir + "/cache", "not a directory\n");
  auto c = run(linkcheck("-q --cache-dir " + quote(dir + "/cache") + " " + quote(kLib)));
  EXPECT_EQ(c.status, 0);
  EXPECT_EQ(c.err, "musa-linkcheck: warning: --cache-dir " + dir + "/cache: not a directory; nothing is cached\n");
}

// coverage with a --source-root or a map it cannot read: exit 2 and no report that names them as used (a
// SOURCE_DIR operand that cannot be read stays one error line beside the others' report: coverage_test).
TEST(Leftovers, coverage_fails_before_the_report_on_unreadable_input) {
  const std::string dir = test::scratch_dir("cov-bad");
  const std::string missing = dir + "/nonexistent";
  auto m = run(linkcheck("coverage --mapping " + quote(missing) + " " + quote(dir)));
  EXPECT_EQ(m.status, 2);
  EXPECT_EQ(m.out, "");
  EXPECT_EQ(m.err, "musa-linkcheck: error: --mapping " + missing + ": No such file or directory\n");
  auto s = run(linkcheck("coverage --source-root " + quote(missing) + " " + quote(dir)));
  EXPECT_EQ(s.status, 2);
  EXPECT_EQ(s.out, "");
  EXPECT_EQ(s.err, "musa-linkcheck: error: --source-root " + missing + ": No such file or directory\n");
  test::write_file(dir + "/map.json", "[1, 2]\n");
  auto j = run(linkcheck("coverage --mapping " + quote(dir + "/map.json") + " " + quote(dir)));
  EXPECT_EQ(j.status, 2);
  EXPECT_EQ(j.out, "");
  EXPECT_EQ(j.err, "musa-linkcheck: error: " + dir + "/map.json: arrays are not a porting map\n");
}

// explain with another spelling than c++filt's (the oracle: nm -D and c++filt on the fixture) says what
// the library does reference; JSON keeps the binding the text gives, with the provider's real path.
TEST(Leftovers, explain_offers_the_spelling_the_library_references) {
  const std::string ex = MLC_EXAMPLE_DIR;
  const std::string lib = ex + "/libmusa_kernels.so", c10 = ex + "/libc10.so";
  auto filt = run("nm -D --undefined-only " + quote(lib) + " | awk '$2 == \"_ZN3c104warnEPKc\" {print $2}' | c++filt");
  ASSERT_EQ(filt.out, "c10::warn(char const*)\n");
  for (const std::string typed : {"c10::warn(const char*)", "c10::warn", "warn"}) {
    auto r = run(linkcheck("explain " + quote(typed) + " --with " + quote(c10) + " " + quote(lib)));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, typed + "\n>>> no exact match in " + lib + "; did you mean 'c10::warn(char const*)'?\n");
  }
  auto none = run(linkcheck("explain c10::warnx --with " + quote(c10) + " " + quote(lib)));
  EXPECT_EQ(none.out, "c10::warnx\n>>> not referenced by " + lib + ": nothing there needs it\n");
  auto text = run(linkcheck("explain 'c10::warn(char const*)' --with " + quote(c10) + " " + quote(lib)));
  EXPECT_EQ(text.out, "c10::warn(char const*)\n>>> referenced by " + lib + "\n>>> resolved by libc10.so (" + c10 +
                          "), it was loaded first (--with)\n");
  auto json = run(linkcheck("explain 'c10::warn(char const*)' --format json --with " + quote(c10) + " " + quote(lib)));
  EXPECT_EQ(json.status, 0) << json.err;
  auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["explain"].size(), 1u) << json.out;
  EXPECT_EQ(doc["explain"][0]["library"], lib);
  EXPECT_EQ(doc["explain"][0]["symbol"], "_ZN3c104warnEPKc");
  EXPECT_EQ(doc["explain"][0]["state"], "resolved");
  EXPECT_EQ(doc["explain"][0]["provider"], c10);
  EXPECT_EQ(doc["explain"][0]["provider_soname"], "libc10.so");
  EXPECT_EQ(doc["explain"][0]["how"], "with");
  auto near = run(linkcheck("explain warn --format json --with " + quote(c10) + " " + quote(lib)));
  auto near_doc = nlohmann::json::parse(near.out);
  EXPECT_EQ(near_doc["explain"][0]["state"], "unreferenced");
  EXPECT_EQ(near_doc["explain"][0]["near"], nlohmann::json::array({"c10::warn(char const*)"}));
}

// Whether `pid` still runs (a zombie waiting for its reaper does not), given up to two seconds to end.
bool still_running(const std::string& pid) {
  for (int i = 0; i < 20; ++i) {
    std::string stat = test::read_file("/proc/" + pid + "/stat");
    size_t close = stat.rfind(')');
    if (stat.empty() || (close != std::string::npos && stat.compare(close + 2, 1, "Z") == 0)) return false;
    usleep(100000);
  }
  return true;
}

// An interpreter that never answers (a script that sleeps, with a child of its own) costs the time
// limit, is one error line, and leaves no process behind: the whole process group is killed.
TEST(Leftovers, a_hanging_python_is_bounded_and_leaves_no_child) {
  const std::string dir = test::scratch_dir("hang");
  test::write_file(dir + "/python3",
                   "#!/bin/sh\nsleep 300 &\necho $! > " + dir + "/child\necho $$ > " + dir + "/self\nsleep 300\n");
  ASSERT_EQ(chmod((dir + "/python3").c_str(), 0755), 0);
  // No clock here: an unbounded wait would be the script's 300 s, past the test's own time limit.
  auto r =
      run("MUSA_LINKCHECK_PYTHON_TIMEOUT=2 " + linkcheck("-q --python=" + quote(dir + "/python3") + " " + quote(kLib)));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + dir +
                       "/python3: the Python interpreter did not answer within 2 s (it "
                       "and its children were killed)\n");
  const std::string child = test::read_file(dir + "/child"), self = test::read_file(dir + "/self");
  ASSERT_FALSE(child.empty());
  ASSERT_FALSE(self.empty());
  EXPECT_FALSE(still_running(child.substr(0, child.find('\n')))) << "the script's child was left running";
  EXPECT_FALSE(still_running(self.substr(0, self.find('\n')))) << "the script was left running";
}

// The docs say what the tool does: --version does not claim that nothing runs (--python runs an
// interpreter, the confirm pass the build's compiler), --python's default is what is run (PATH's
// python3, a shim included), and README and --help agree on when --confirm is on.
TEST(Leftovers, docs_say_what_runs) {
  auto v = run(kBin + " --version");
  EXPECT_EQ(v.out.substr(v.out.find('\n') + 1),
            "Copyright (C) 2026 the MusaLinkcheck developers.\n"
            "Nothing it analyses is executed, loaded or dlopened: ELF files are read. It runs only what you\n"
            "name: the interpreter of --python (asked where packages live) and, with --build-dir, the build's\n"
            "compile commands (the confirm pass).\n");
  auto h = run(kBin + " --help");
  EXPECT_NE(h.out.find("check as the Python interpreter loads it: EXE, or\n                              python3 as "
                       "PATH finds it (a pyenv or conda shim\n                              included), is run"),
            std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("(the\n                              default whenever --build-dir is given)"), std::string::npos)
      << h.out;
  std::string readme = test::read_file(std::string(MLC_SOURCE_DIR) + "/README.md");
  EXPECT_NE(readme.find("on whenever `--build-dir` is given (both tools), off with `--no-confirm`"), std::string::npos);
  EXPECT_EQ(readme.find("the first ELF `python3` on PATH"), std::string::npos);
}

// musa-stubgen --dry-run outside a git repository: a file under the current directory is named
// relative to it (a/ b/, patch -p1), one outside by its own absolute path (patch -p0), never "b/tmp/...";
// the oracle is patch(1) applying each diff where it says.
TEST(Leftovers, dry_run_diff_paths_are_the_files_own) {
  const std::string ex = MLC_EXAMPLE_DIR;
  const std::string work = test::scratch_dir("dry-run"), outside = test::scratch_dir("dry-run-outside");
  auto dry = [&](const std::string& out_dir) {
    // Without context the DWARF still finds the example's sources (two missing sources, a provider
    // mismatch): each is stubbed here, for the diff's paths alone.
    return run("cd " + quote(work) + " && " + kStubgen +
               " --dry-run --stub unknown --stub missing-source --stub "
               "provider-mismatch --no-runtime --out-cpp " +
               quote(out_dir + "/unimplemented_functions.cpp") + " --out-header " +
               quote(out_dir + "/unimplemented_functions.h") + " --with " + quote(ex + "/libc10.so") + " " +
               quote(ex + "/libmusa_kernels.so") + " 2>/dev/null");
  };
  auto inside = dry(work + "/stubs");
  EXPECT_NE(inside.out.find("--- /dev/null\n+++ b/stubs/unimplemented_functions.cpp\n"), std::string::npos)
      << inside.out;
  auto far = dry(outside);
  EXPECT_NE(far.out.find("--- /dev/null\n+++ " + outside + "/unimplemented_functions.cpp\n"), std::string::npos)
      << far.out;
  EXPECT_EQ(far.out.find("b/"), std::string::npos) << far.out;
  if (run("command -v patch").status != 0) MLC_SKIP() << "patch is not installed";
  test::write_file(work + "/in.diff", inside.out);
  std::filesystem::create_directories(work + "/stubs");
  auto p1 = run("cd " + quote(work) + " && patch -s -p1 < in.diff");
  EXPECT_EQ(p1.status, 0) << p1.out << p1.err;
  EXPECT_TRUE(std::filesystem::exists(work + "/stubs/unimplemented_functions.cpp"));
  test::write_file(work + "/far.diff", far.out);
  auto p0 = run("cd / && patch -s -p0 < " + quote(work + "/far.diff"));
  EXPECT_EQ(p0.status, 0) << p0.out << p0.err;
  EXPECT_TRUE(std::filesystem::exists(outside + "/unimplemented_functions.cpp"));
}

// coverage cites where a name is declared: not an #if that tests it, nor a #define of another name
// that uses it, but its own #define (line 4).
TEST(Leftovers, coverage_cites_no_if_or_other_define_as_the_declaration) {
  const std::string dir = test::scratch_dir("cov-define");
  std::filesystem::create_directories(dir + "/sdk/include");
  std::filesystem::create_directories(dir + "/sdk/lib");
  std::filesystem::create_directories(dir + "/src");
  test::write_file(dir + "/sdk/include/musa_runtime_api.h",
                   "#if musaFoo\n#define musaFooAlias musaFoo\n#endif\n#define musaFoo 3\n");
  test::write_file(dir + "/map.json", "{\"cudaFoo\": \"musaFoo\"}\n");
  test::write_file(dir + "/src/a.cu", "int f() { return cudaFoo; }\n");
  auto r = run(linkcheck("coverage --no-cache --sdk-home " + quote(dir + "/sdk") + " --mapping " +
                         quote(dir + "/map.json") + " " + quote(dir + "/src")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cudaFoo -> musaFoo [runtime] header-only: 1 call site in 1 file; declared " + dir +
                       "/sdk/include/musa_runtime_api.h:4\n"),
            std::string::npos)
      << r.out;
}

// An empty entry of a source list ("" twice) is no source, so never " is listed
// twice"; a real duplicate still is.
TEST(Leftovers, an_empty_list_entry_is_never_listed_twice) {
  const std::string dir = test::scratch_dir("empty-entry");
  test::write_file(dir + "/CMakeLists.txt", "set(SRCS a.cpp \"\" b.cpp \"\" a.cpp)\n");
  build::Model build = build::read_build({"", {dir + "/CMakeLists.txt"}, {}});
  ASSERT_EQ(build.lists.size(), 1u);
  EXPECT_EQ(build.lists[0].duplicates, std::vector<std::string>{"a.cpp"});
}

// The link fix for a library without a DT_SONAME names its file ("link : target_link_libraries" before).
TEST(Leftovers, link_fix_names_a_library_without_a_soname) {
  const std::string dir = test::scratch_dir("no-soname");
  std::filesystem::create_directories(dir + "/lib");
  test::write_file(dir + "/p.c", "int prov(void) { return 7; }\n");
  test::write_file(dir + "/u.c", "extern int prov(void);\nint use(void) { return prov(); }\n");
  auto cc =
      run("cd " + quote(dir) + " && cc -shared -fPIC -o lib/libprov.so p.c && cc -shared -fPIC -o libuser.so u.c");
  ASSERT_EQ(cc.status, 0) << cc.err;
  ASSERT_EQ(run("readelf -d " + quote(dir + "/lib/libprov.so") + " | grep -c SONAME").out, "0\n");
  auto r = run(linkcheck("--sdk-home " + quote(dir) + " --cuda-home '' --no-cache " + quote(dir + "/libuser.so")));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(
      r.out.find(">>> fix: link libprov.so: target_link_libraries(<target> PRIVATE prov), <target> being the CMake "
                 "target that builds libuser.so (not known without --build-dir)\n"),
      std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace mlc
