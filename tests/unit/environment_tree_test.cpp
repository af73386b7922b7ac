// A directory is an environment: one run over a site-packages-like tree
// holding Debian's own extension module (PyYAML's _yaml, with what it needs from the system), two
// gcc-built modules whose one library is missing, and a module that needs another package's library
// (found through its RUNPATH). The real loader is the oracle: ctypes.CDLL(path, RTLD_NOW) in a fresh
// /usr/bin/python3 (which provides the Python C API, as an import does), one file at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::quote;
using test::run;
using test::write_file;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kYamlDir = "/usr/lib/python3/dist-packages/yaml";

std::string debian_yaml_module() {
  if (!fs::is_directory(kYamlDir)) return "";
  for (const auto& e : fs::directory_iterator(kYamlDir))
    if (e.path().filename().string().rfind("_yaml.", 0) == 0 && e.path().extension() == ".so") return e.path().string();
  return "";
}

void gcc(const std::string& args) {
  auto r = run("gcc -shared -fPIC " + args);
  ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
}

// The environment: <root>/site/{yaml,cuten,pkga,pkgb}, each package with a dist-info RECORD.
struct Environment {
  std::string site;
  std::vector<std::string> modules;  // every ELF file of the tree
};

void dist_info(const std::string& site, const std::string& name, const std::vector<std::string>& files) {
  fs::create_directories(site + "/" + name + "-1.0.dist-info");
  std::string record;
  for (const auto& f : files) record += f + ",sha256=x,1\n";
  write_file(site + "/" + name + "-1.0.dist-info/RECORD", record + name + "-1.0.dist-info/RECORD,,\n");
  write_file(site + "/" + name + "-1.0.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n");
}

Environment make_environment(const std::string& yaml) {
  Environment env;
  std::string root = test::scratch_dir("environment");
  env.site = root + "/site";
  std::string src = root + "/src";
  fs::create_directories(src);
  for (const char* d : {"yaml", "cuten", "pkga/lib", "pkgb"}) fs::create_directories(env.site + "/" + d);
  // Debian's extension module, as it is (it needs libyaml-0.so.2 from the system).
  std::string yaml_copy = env.site + "/yaml/" + fs::path(yaml).filename().string();
  fs::copy_file(yaml, yaml_copy);
  // cuten: two modules needing libcuten.so.2, which is installed nowhere (built, linked, removed).
  write_file(src + "/cuten.c", "int cuten_version(void) { return 2; }\n");
  gcc("-Wl,-soname,libcuten.so.2 -o " + src + "/libcuten.so.2 " + src + "/cuten.c");
  fs::create_symlink("libcuten.so.2", src + "/libcuten.so");
  for (const char* m : {"_a", "_b"}) {
    std::string c = src + "/" + m + ".c";
    write_file(c, std::string("int cuten_version(void);\nvoid* PyInit_") + m +
                      "(void) { return (void*)(long)cuten_version(); }\n");
    gcc("-o " + env.site + "/cuten/" + m + ".so " + c + " -L" + src + " -lcuten");
  }
  fs::remove(src + "/libcuten.so");
  fs::remove(src + "/libcuten.so.2");
  // pkgb's module needs pkga's library, found through its RUNPATH: it loads.
  write_file(src + "/pkga.c", "int pkga_answer(void) { return 42; }\n");
  gcc("-Wl,-soname,libpkga.so -o " + env.site + "/pkga/lib/libpkga.so " + src + "/pkga.c");
  write_file(src + "/_c.c", "int pkga_answer(void);\nvoid* PyInit__c(void) { return (void*)(long)pkga_answer(); }\n");
  gcc("-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../pkga/lib' -o " + env.site + "/pkgb/_c.so " + src + "/_c.c -L" +
      env.site + "/pkga/lib -lpkga");
  dist_info(env.site, "PyYAML", {"yaml/" + fs::path(yaml).filename().string()});
  dist_info(env.site, "cuten", {"cuten/_a.so", "cuten/_b.so"});
  dist_info(env.site, "pkga", {"pkga/lib/libpkga.so"});
  dist_info(env.site, "pkgb", {"pkgb/_c.so"});
  env.modules = {yaml_copy, env.site + "/cuten/_a.so", env.site + "/cuten/_b.so", env.site + "/pkga/lib/libpkga.so",
                 env.site + "/pkgb/_c.so"};
  return env;
}

// The real loader's verdict on each file, loaded alone into /usr/bin/python3.
std::set<std::string> failing_by_ctypes(const std::vector<std::string>& files) {
  std::set<std::string> failing;
  for (const auto& f : files) {
    auto r = run("env -u LD_LIBRARY_PATH /usr/bin/python3 -c " +
                 quote("import ctypes, os, sys\ntry:\n    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\n    print('ok')\n"
                       "except OSError:\n    print('fails')\n") +
                 " " + quote(f));
    EXPECT_EQ(r.status, 0) << r.err;
    if (r.out == "fails\n") failing.insert(f);
  }
  return failing;
}

// What the tool says fails: the named files whose load meets a missing library or an unresolved symbol.
std::set<std::string> failing_by_tool(const json& report) {
  std::set<std::string> failing;
  for (const auto& lib : report["libraries"]) {
    bool fails = !lib["unresolved"].empty() || !lib["missing_versions"].empty();
    for (const auto& n : lib["needed"]) fails |= n["path"].is_null();
    if (!fails) continue;
    failing.insert(lib["role"] == "target" || lib["loaded_by"].is_null() ? lib["path"].get<std::string>()
                                                                         : lib["loaded_by"].get<std::string>());
  }
  return failing;
}

// The tests that build an environment around Debian's PyYAML extension: found once for each.
class EnvironmentTreeYaml : public ::testing::Test {
 protected:
  void SetUp() override {
    yaml = debian_yaml_module();
    if (yaml.empty()) MLC_SKIP() << "no PyYAML extension module in " << kYamlDir << " (python3-yaml)";
  }
  std::string yaml;
};

TEST_F(EnvironmentTreeYaml, one_missing_library_is_one_cause_naming_the_modules_it_breaks_grouped_by_package) {
  Environment env = make_environment(yaml);
  ASSERT_FALSE(HasFailure());

  std::set<std::string> truth = failing_by_ctypes(env.modules);
  ASSERT_EQ(truth, (std::set<std::string>{env.site + "/cuten/_a.so", env.site + "/cuten/_b.so"}))
      << "the oracle disagrees with the fixture's design";

  auto text = run("env -u LD_LIBRARY_PATH " + kBin + " --cuda-home '' --sdk-home '' --no-cache " + quote(env.site));
  EXPECT_EQ(text.status, 1) << text.out << text.err;
  // One headline for the one missing library, naming both modules it breaks, grouped by package.
  size_t headlines = 0;
  for (size_t at = text.out.find("error: library not found: libcuten.so.2"); at != std::string::npos;
       at = text.out.find("error: library not found: libcuten.so.2", at + 1))
    ++headlines;
  EXPECT_EQ(headlines, 1u) << text.out;
  EXPECT_NE(
      text.out.find("error: library not found: libcuten.so.2 (needed by _a.so and _b.so); no other version of it was "
                    "found\n>>> breaks 2 files, by package:\n>>>   cuten 1.0 (2): cuten/_a.so, cuten/_b.so\n"),
      std::string::npos)
      << text.out;
  // Nothing about the healthy files: Debian's module, the cross-package dependency.
  EXPECT_EQ(text.out.find("_yaml"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("_c.so"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("pkga"), std::string::npos) << text.out;
  // The summary line, at the end.
  EXPECT_NE(text.out.find("2 of 5 files would fail to load, in 1 package: cuten (2)\n"), std::string::npos) << text.out;
  EXPECT_LE(std::count(text.out.begin(), text.out.end(), '\n'), 40) << text.out;

  // JSON keeps every finding, and its verdict per file is the real loader's.
  auto j = run("env -u LD_LIBRARY_PATH " + kBin + " --cuda-home '' --sdk-home '' --no-cache --format json " +
               quote(env.site));
  EXPECT_EQ(j.status, 1) << j.err;
  json report = json::parse(j.out);
  EXPECT_EQ(failing_by_tool(report), truth) << j.out;
  size_t causes = 0;
  for (const auto& c : report["causes"])
    if (c["kind"] == "missing-library" && c["library"] == "libcuten.so.2") {
      ++causes;
      EXPECT_EQ(c["needed_by"], (json{env.site + "/cuten/_a.so", env.site + "/cuten/_b.so"}));
    }
  EXPECT_EQ(causes, 1u) << j.out;
}

TEST_F(EnvironmentTreeYaml, a_healthy_environment_exits_0_with_one_summary_line) {
  Environment env = make_environment(yaml);
  ASSERT_FALSE(HasFailure());
  fs::remove_all(env.site + "/cuten");  // what is left loads, per the real loader
  std::vector<std::string> left = {env.modules[0], env.modules[3], env.modules[4]};
  ASSERT_TRUE(failing_by_ctypes(left).empty());
  auto text = run("env -u LD_LIBRARY_PATH " + kBin + " --cuda-home '' --sdk-home '' --no-cache " + quote(env.site));
  EXPECT_EQ(text.status, 0) << text.out << text.err;
  EXPECT_EQ(text.out,
            "0 of 3 files would fail to load\n0 undefined symbols, 0 missing libraries, 0 missing versions in 3 "
            "libraries\n");
  // Not a terminal: no progress line on stderr.
  EXPECT_EQ(text.err, "");
}

// A program in a tree is no dlopen target: glibc refuses an executable ("cannot
// dynamically load position-independent executable"). It is checked as its start is, the file as the
// main map: `ldd -r` is the oracle for which programs fail and on what, and the report marks them.
// One cause, not one per file: a stale C++ runtime first on LD_LIBRARY_PATH lacks version nodes and symbols
// every C++ module of the tree needs (operator delete among them: the stale copy defines it at another node,
// which is still a miss of that copy). Every file it breaks is listed under it, none "on findings of its own"
// with a rebuild fix. The oracle: ctypes.CDLL(RTLD_NOW) in python3 under the same LD_LIBRARY_PATH, then
// without it, where every file loads and so does the tool's verdict.
TEST(EnvironmentTree, a_stale_cxx_runtime_on_ld_library_path_is_one_cause_for_every_file_it_breaks) {
  std::string root = test::scratch_dir("stale-runtime"), site = root + "/site", stale = root + "/stale";
  fs::create_directories(stale);
  write_file(root + "/v.map",
             "GLIBCXX_3.4 { global: _ZSt4cout; local: *; };\nGLIBCXX_3.4.20 { global: _ZdlPv; } GLIBCXX_3.4;\n");
  write_file(root + "/s.c", "int _ZSt4cout;\nvoid _ZdlPv(void* p) { (void)p; }\n");
  gcc("-Wl,-soname,libstdc++.so.6 -Wl,--version-script=" + quote(root + "/v.map") + " -o " +
      quote(stale + "/libstdc++.so.6") + " " + quote(root + "/s.c"));
  std::vector<std::string> modules;
  for (const char* name : {"pkga", "pkgb", "pkgc"}) {
    fs::create_directories(site + "/" + name);
    // ::operator delete(void*), unsized: _ZdlPv@GLIBCXX_3.4, a node the stale copy has, at which it does not
    // define it (it does at GLIBCXX_3.4.20).
    write_file(root + "/m.cpp", std::string("#include <new>\n#include <string>\nextern \"C\" void* PyInit__m() {\n") +
                                    "  std::string* s = new std::string(\"" + name +
                                    "\");\n  s->~basic_string();\n  ::operator delete(s);\n  return 0;\n}\n");
    auto r = run("g++ -shared -fPIC -o " + quote(site + "/" + name + "/_m.so") + " " + quote(root + "/m.cpp"));
    ASSERT_EQ(r.status, 0) << r.err;
    dist_info(site, name, {std::string(name) + "/_m.so"});
    modules.push_back(site + "/" + name + "/_m.so");
  }
  auto ctypes = [&](const std::string& env, const std::string& m) {
    return run(env + " python3 -c " +
               quote("import ctypes, os, sys\ntry:\n    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\n    print('ok')\n"
                     "except OSError as e:\n    print('fails')\n") +
               " " + quote(m))
        .out;
  };
  const std::string with_stale = "env LD_LIBRARY_PATH=" + quote(stale) + " PATH=/usr/bin:/bin";
  const std::string clean = "env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin";
  for (const auto& m : modules) {
    ASSERT_EQ(ctypes(with_stale, m), "fails\n") << m;
    ASSERT_EQ(ctypes(clean, m), "ok\n") << m;
  }
  auto r = run(with_stale + " " + kBin + " --no-cache " + quote(site));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  size_t errors = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) errors += line.rfind("error: ", 0) == 0;
  EXPECT_EQ(errors, 1u) << r.out;
  EXPECT_NE(r.out.find("error: libstdc++.so.6 from " + stale + "/libstdc++.so.6 (ld_library_path) lacks "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(">>> breaks 3 files, by package:\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("of their own"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("of its own"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 of 3 files would fail to load"), std::string::npos) << r.out;
  // The cause's fix, applied: without the stale directory every file loads, and the tool agrees.
  auto fixed = run(clean + " " + kBin + " --no-cache " + quote(site));
  EXPECT_EQ(fixed.status, 0) << fixed.out << fixed.err;
}

TEST(EnvironmentTree, a_program_in_a_tree_is_checked_as_its_start_as_ldd_r_does) {
  std::string root = test::scratch_dir("programs");
  std::string src = root + "/src", tree = root + "/tree";
  fs::create_directories(src);
  fs::create_directories(tree + "/lib");
  // libfoo as the programs were linked against it, with foo_new; then the installed copy, without it.
  write_file(src + "/foo2.c", "int foo_old(void) { return 1; }\nint foo_new(void) { return 2; }\n");
  write_file(src + "/foo1.c", "int foo_old(void) { return 1; }\n");
  gcc("-Wl,-soname,libfoo.so -o " + src + "/libfoo.so " + src + "/foo2.c");
  write_file(src + "/new.c", "int foo_new(void);\nint main(void) { return foo_new(); }\n");
  write_file(src + "/old.c", "int foo_old(void);\nint main(void) { return foo_old(); }\n");
  auto link = [&](const std::string& flags, const std::string& c, const std::string& out) {
    auto r = run("gcc " + flags + " -o " + tree + "/" + out + " " + src + "/" + c + " -L" + src +
                 " -lfoo -Wl,-rpath,'$ORIGIN/lib'");
    ASSERT_EQ(r.status, 0) << r.err;
  };
  link("-fPIE -pie", "new.c", "new_pie");
  link("-fno-PIE -no-pie", "new.c", "new_exec");
  link("-fPIE -pie", "old.c", "old_pie");
  gcc("-Wl,-soname,libfoo.so -o " + tree + "/lib/libfoo.so " + src + "/foo1.c");
  ASSERT_FALSE(HasFailure());
  const std::vector<std::string> programs = {tree + "/new_exec", tree + "/new_pie", tree + "/old_pie"};

  // The oracles: dlopen refuses a PIE; ldd -r (the program's start) fails the two that call foo_new.
  auto dl = run("env -u LD_LIBRARY_PATH /usr/bin/python3 -c " +
                quote("import ctypes, os, sys\ntry:\n    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)\nexcept OSError as e:\n"
                      "    print(e)\n") +
                " " + quote(tree + "/old_pie"));
  EXPECT_EQ(dl.out, tree + "/old_pie: cannot dynamically load position-independent executable\n");
  std::set<std::string> truth;
  for (const auto& p : programs) {
    auto ldd = run("env -u LD_LIBRARY_PATH ldd -r " + quote(p) + " 2>&1");
    if (ldd.out.find("undefined symbol: foo_new\t(" + p + ")") != std::string::npos) truth.insert(p);
    else EXPECT_EQ(ldd.out.find("undefined symbol"), std::string::npos) << ldd.out;
  }
  ASSERT_EQ(truth, (std::set<std::string>{tree + "/new_exec", tree + "/new_pie"}));

  // Programs found in a directory fail the run only with --fail-on ...,programs (the next test).
  auto j =
      run("env -u LD_LIBRARY_PATH " + kBin + " --cuda-home '' --sdk-home '' --no-cache --format json " + quote(tree));
  EXPECT_EQ(j.status, 0) << j.out << j.err;
  json report = json::parse(j.out);
  EXPECT_EQ(failing_by_tool(report), truth) << j.out;
  size_t targets = 0;
  for (const auto& lib : report["libraries"]) {
    if (lib["role"] != "target") continue;
    ++targets;
    const std::string path = lib["path"];
    EXPECT_EQ(lib["program"], path != tree + "/lib/libfoo.so") << path;
    EXPECT_EQ(lib["host"], nullptr) << path;
    if (truth.count(path)) {
      ASSERT_EQ(lib["unresolved"].size(), 1u) << path;
      EXPECT_EQ(lib["unresolved"][0]["symbol"], "foo_new") << path;
    }
  }
  EXPECT_EQ(targets, 4u) << j.out;
  // Text: the file alone names how it is loaded (started); the tree says which programs fail.
  auto one =
      run("env -u LD_LIBRARY_PATH " + kBin + " --cuda-home '' --sdk-home '' --no-cache " + quote(tree + "/new_pie"));
  EXPECT_EQ(one.status, 1);
  EXPECT_NE(one.out.find("error: starting new_pie would fail: 1 cause\n"), std::string::npos) << one.out;
  auto text = run("env -u LD_LIBRARY_PATH " + kBin + " --cuda-home '' --sdk-home '' --no-cache " + quote(tree));
  EXPECT_NE(text.out.find("0 of 1 files would fail to load\n2 of 3 programs would not start\n"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(">>> new_pie: starting would fail: 1 finding of its own: foo_new\n"), std::string::npos)
      << text.out;
}

// A program found in a directory is no module: no import runs it (Debian's dist-packages holds
// torch/bin/test_jit). Whether it starts is still said, as a program, counted apart from what the
// directory's imports load, and it fails the run only when named itself or with --fail-on ...,programs.
// The real loader is the oracle: the program, run, stops on the symbol its library lacks.
TEST(EnvironmentTree, a_program_found_in_a_directory_is_told_apart_and_fails_the_run_only_when_asked) {
  std::string root = test::scratch_dir("programs-apart");
  std::string src = root + "/src", tree = root + "/tree";
  fs::create_directories(src);
  fs::create_directories(tree);
  // libfoo as the program was linked against it, with foo_new; the copy in the tree, without it (and
  // itself a good library: nothing it needs is missing).
  write_file(src + "/foo2.c", "int foo_old(void) { return 1; }\nint foo_new(void) { return 2; }\n");
  write_file(src + "/foo1.c", "int foo_old(void) { return 1; }\n");
  gcc("-Wl,-soname,libfoo.so -o " + src + "/libfoo.so " + src + "/foo2.c");
  write_file(src + "/prog.c", "int foo_new(void);\nint main(void) { return foo_new() == 2 ? 0 : 3; }\n");
  auto linked = run("gcc -o " + tree + "/prog " + src + "/prog.c -L" + src + " -lfoo -Wl,-rpath,'$ORIGIN'");
  ASSERT_EQ(linked.status, 0) << linked.err;
  gcc("-Wl,-soname,libfoo.so -o " + tree + "/libfoo.so " + src + "/foo1.c");
  ASSERT_FALSE(HasFailure());

  auto started = run("env -u LD_LIBRARY_PATH " + quote(tree + "/prog"));
  EXPECT_EQ(started.status, 127) << started.err;
  EXPECT_NE(started.err.find("symbol lookup error"), std::string::npos) << started.err;
  EXPECT_NE(started.err.find("undefined symbol: foo_new"), std::string::npos) << started.err;

  const std::string tool = "env -u LD_LIBRARY_PATH " + kBin + " --cuda-home '' --sdk-home '' --no-cache ";
  // The directory: a warning naming the program and why, the counts apart, exit 0.
  auto dir = run(tool + quote(tree));
  EXPECT_EQ(dir.status, 0) << dir.out << dir.err;
  EXPECT_NE(dir.out.find("warning: 1 program found in the directory would not start: no import runs them, so they "
                         "fail the run only with --fail-on any,programs\n"
                         ">>> prog: starting would fail: 1 finding of its own: foo_new\n"),
            std::string::npos)
      << dir.out;
  EXPECT_NE(dir.out.find("0 of 1 files would fail to load\n1 of 1 program would not start\n"), std::string::npos)
      << dir.out;
  EXPECT_EQ(dir.out.find("error:"), std::string::npos) << dir.out;
  // JSON still marks the program and its load.
  auto j = run(tool + "--format json " + quote(tree));
  EXPECT_EQ(j.status, 0) << j.err;
  const json report = json::parse(j.out);
  size_t targets = 0;
  for (const auto& lib : report["libraries"]) {
    if (lib["role"] != "target") continue;
    ++targets;
    bool prog = lib["path"] == tree + "/prog";
    EXPECT_EQ(lib["program"], prog) << lib.dump();
    EXPECT_EQ(lib["loads"], !prog) << lib.dump();
  }
  EXPECT_EQ(targets, 2u) << j.out;
  // In CI, a warning annotation, not an error.
  auto gh = run(tool + "--format github " + quote(tree));
  EXPECT_EQ(gh.status, 0) << gh.err;
  EXPECT_EQ(gh.out.rfind("::warning file=", 0), 0u) << gh.out;
  EXPECT_EQ(gh.out.find("::error"), std::string::npos) << gh.out;

  // Asked for: --fail-on any,programs makes it an error and the run's failure.
  auto asked = run(tool + "--fail-on any,programs " + quote(tree));
  EXPECT_EQ(asked.status, 1) << asked.out << asked.err;
  EXPECT_NE(asked.out.find("error: 1 program found in the directory would not start\n"
                           ">>> prog: starting would fail: 1 finding of its own: foo_new\n"),
            std::string::npos)
      << asked.out;
  auto quiet = run(tool + "-q --fail-on programs " + quote(tree));
  EXPECT_EQ(quiet.status, 1);
  EXPECT_EQ(quiet.out, "error: starting prog would fail: 1 finding of its own: foo_new\n");
  // Named itself, it is what the run checks: an error, exit 1.
  auto named = run(tool + quote(tree + "/prog"));
  EXPECT_EQ(named.status, 1) << named.out << named.err;
  EXPECT_EQ(named.out.rfind("error: starting prog would fail: 1 cause\n", 0), 0u) << named.out;
}

}  // namespace
}  // namespace mlc
