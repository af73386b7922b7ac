// The rules of glibc 2.36's loader beyond symbol look-up, one world each, built here with one gcc call
// per object: each is loaded by the real loader (the dlopen host of test_support.h with RTLD_NOW, or
// the program run with LD_BIND_NOW=1) and checked by musa-linkcheck, and the two must agree - on the
// verdict, on glibc's own words for the failure, and on which file is loaded. Where glibc's rule is
// cited, it is in src/loader.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "pipeline/linkcheck.h"
#include "real_loader.h"
#include "test_support.h"

namespace mlc {
namespace {

using nlohmann::json;
using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;

// One world in this process's scratch area.
struct World {
  std::string dir;
  explicit World(const std::string& name) : dir(test::scratch_dir("glibc-rules-" + name)) {}
  std::string at(const std::string& rel) const { return dir + "/" + rel; }

  // A shared library (or, with `program`, an executable) from C source, in one gcc call.
  void build(const std::string& rel, const std::string& source, const std::string& flags = "", bool program = false) {
    std::filesystem::create_directories(std::filesystem::path(at(rel)).parent_path());
    const std::string src = at(rel) + ".c";
    test::write_file(src, source);
    auto r = run("cd " + quote(dir) + " && gcc " + (program ? "-fno-pic -no-pie" : "-shared -fPIC") + " -o " +
                 quote(at(rel)) + " " + quote(src) + " " + flags);
    ASSERT_EQ(r.status, 0) << "gcc: " << r.err;
    std::filesystem::remove(src);
  }
};

// What the real loader says of a dlopen of `target` (after RTLD_GLOBAL preloads) in a process with
// this environment: "ok", dlerror()'s line, or how the process ended (an assertion, a signal).
struct Real {
  int status = 0;
  std::string first;  // "ok" or "error: ..."
  std::string err;
  std::string error() const { return first.rfind("error: ", 0) == 0 ? first.substr(7) : ""; }
};

Real real_dlopen(const std::string& target, const std::string& env = "", const std::vector<std::string>& preloads = {},
                 const std::string& cwd = "") {
  std::string cmd = (cwd.empty() ? std::string() : "cd " + quote(cwd) + " && ") +
                    "env -u LD_LIBRARY_PATH -u GLIBC_TUNABLES " + env + " " + quote(test::real_loader_host());
  for (const auto& p : preloads) cmd += " " + quote("g:" + p);
  auto r = run(cmd + " " + quote(target));
  Real out{.status = r.status, .first = r.out.substr(0, r.out.find('\n')), .err = r.err};
  return out;
}

// A program started with LD_BIND_NOW=1 (every relocation bound at start).
Real real_start(const std::string& program, const std::string& env = "") {
  auto r = run("env -u LD_LIBRARY_PATH -u GLIBC_TUNABLES LD_BIND_NOW=1 " + env + " " + quote(program));
  return {.status = r.status, .first = r.out.substr(0, r.out.find('\n')), .err = r.err};
}

struct Tool {
  int status = -1;
  json doc;
  std::string text;
  std::string err;
};

// musa-linkcheck on `target`, its JSON and its text report, in the same environment as the real load.
Tool tool(const std::string& target, const std::string& env = "", const std::string& options = "",
          const std::string& cwd = "") {
  const std::string prefix = (cwd.empty() ? std::string() : "cd " + quote(cwd) + " && ") +
                             "env -u LD_LIBRARY_PATH -u GLIBC_TUNABLES " + env + " " + quote(kBin) +
                             " --no-cache --cuda-home '' " + options + " ";
  Tool t;
  auto j = run(prefix + "--format json " + quote(target));
  t.status = j.status;
  t.err = j.err;
  t.doc = json::parse(j.out, nullptr, false);
  auto x = run(prefix + quote(target));
  EXPECT_EQ(x.status, j.status) << "text and JSON runs disagree";
  t.text = x.out;
  return t;
}

const json* library(const Tool& t, const std::string& path) {
  if (!t.doc.is_object()) return nullptr;
  for (const auto& l : t.doc["libraries"])
    if (l["path"] == path) return &l;
  return nullptr;
}

std::string needed_path(const Tool& t, const std::string& lib, const std::string& name) {
  if (const json* l = library(t, lib))
    for (const auto& n : (*l)["needed"])
      if (n["name"] == name) return n["path"].is_string() ? n["path"].get<std::string>() : "";
  return "(not listed)";
}

// The one load failure the tool reports, whichever library holds it.
json only_failure(const Tool& t) {
  json found = nullptr;
  size_t n = 0;
  for (const auto& l : t.doc["libraries"])
    for (const auto& f : l["load_failures"]) {
      found = f;
      ++n;
    }
  EXPECT_EQ(n, 1u) << t.doc.dump(1);
  return found;
}

size_t findings(const Tool& t) {
  size_t n = 0;
  for (const auto& l : t.doc["libraries"]) {
    n += l["unresolved"].size() + l["missing_versions"].size() + l["load_failures"].size();
    for (const auto& need : l["needed"]) n += need["path"].is_null() ? 1 : 0;
  }
  return n;
}

const char kF12[] = "int f1(void) { return 1; }\nint f2(void) { return 2; }\n";
const char kF1[] = "int f1(void) { return 1; }\n";
const char kUseF12[] = "extern int f1(void); extern int f2(void);\nint use(void) { return f1() + f2(); }\n";

// --- 1. glibc-hwcaps and legacy subdirectories ------------------------------------------------------

// dl-load.c open_path with dl-hwcaps.c's subdirectories: DIR/glibc-hwcaps/x86-64-vN/ (the levels the CPU
// supports, best first) and the legacy DIR/tls/, DIR/x86_64/... come before DIR itself, so a stale
// copy there shadows DIR/libf.so. The machine's levels come from `ld.so --help`.
TEST(GlibcRules, hwcaps_subdirectory_copy_shadows_the_directory_copy) {
  const auto levels = test::real_hwcaps_levels();
  std::vector<std::string> subdirs = {"tls", test::real_platform()};
  if (levels.empty()) MLC_SKIP() << "this CPU supports no x86-64-v2 (ld.so --help lists no glibc-hwcaps level)";
  subdirs.insert(subdirs.begin(), "glibc-hwcaps/" + levels.front());
  for (const auto& sub : subdirs) {
    World w("hwcaps-" + std::to_string(&sub - subdirs.data()));
    w.build("lib/libf.so", kF12, "-Wl,-soname,libf.so");
    w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' lib/libf.so");
    w.build("lib/" + sub + "/libf.so", kF1, "-Wl,-soname,libf.so");
    auto real = real_dlopen(w.at("libuser.so"));
    EXPECT_EQ(real.error(), w.at("libuser.so") + ": undefined symbol: f2") << sub;
    auto t = tool(w.at("libuser.so"));
    EXPECT_EQ(t.status, 1) << sub;
    EXPECT_EQ(needed_path(t, w.at("libuser.so"), "libf.so"), w.at("lib/" + sub + "/libf.so")) << sub;
  }
}

// The rules follow the glibc the process runs (LoaderEnv::glibc_minor, read from its libc.so.6): glibc 2.37
// removed the legacy subdirectories (tls/, the platform's, the hwcap names'), so from 2.37 on the stale copies
// in them are not searched and DIR/libf.so is loaded; before 2.33 there is no glibc-hwcaps/ either. This
// machine's loader (2.36 on Debian 12) is the oracle of the older rule above; the device's (2.39) of this one.
TEST(GlibcRules, legacy_subdirectories_are_searched_before_glibc_2_37_only) {
  World w("legacy-by-version");
  w.build("lib/libf.so", kF12, "-Wl,-soname,libf.so");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' lib/libf.so");
  w.build("lib/tls/libf.so", kF1, "-Wl,-soname,libf.so");
  w.build("lib/glibc-hwcaps/x86-64-v2/libf.so", kF1, "-Wl,-soname,libf.so");
  ASSERT_FALSE(HasFailure());
  auto picked = [&](int glibc_minor, int isa_level) {
    LinkcheckOptions o;
    o.env.glibc_minor = glibc_minor;
    o.env.x86_isa_level = isa_level;
    Report r = run_linkcheck({w.at("libuser.so")}, o);
    for (const auto& l : r.libraries)
      for (const auto& n : l.needed)
        if (n.name == "libf.so") return n.path.value_or("(none)");
    return std::string("(not listed)");
  };
  EXPECT_EQ(picked(36, 1), w.at("lib/tls/libf.so"));
  EXPECT_EQ(picked(37, 1), w.at("lib/libf.so"));
  EXPECT_EQ(picked(39, 1), w.at("lib/libf.so"));
  EXPECT_EQ(picked(39, 2), w.at("lib/glibc-hwcaps/x86-64-v2/libf.so"));
  EXPECT_EQ(picked(32, 2), w.at("lib/tls/libf.so"));  // no glibc-hwcaps before 2.33
  EXPECT_EQ(picked(0, 1), w.at("lib/tls/libf.so"));   // not known: Debian 12's rules
}

// dl-lookup.c check_match: a versioned reference (f2@V1, linked against a copy that versioned it) is satisfied
// by an unnamed definition (VER_NDX_GLOBAL: a symbol the version script of the copy loaded leaves out) as long
// as neither is hidden; it is a wrong version only when the definition is at another named node.
TEST(GlibcRules, an_unnamed_definition_satisfies_a_versioned_reference) {
  World w("base-version");
  test::write_file(w.at("v1.map"), "V1 { global: f1; f2; local: *; };\n");
  test::write_file(w.at("unnamed.map"), "V1 { global: f1; };\n");  // f2 left out: VER_NDX_GLOBAL
  test::write_file(w.at("v2.map"), "V1 { global: f1; local: *; };\nV2 { global: f2; } V1;\n");
  w.build("old/libv.so.1", kF12, "-Wl,-soname,libv.so.1 -Wl,--version-script=" + w.at("v1.map"));
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' old/libv.so.1");
  w.build("lib/libv.so.1", kF12, "-Wl,-soname,libv.so.1 -Wl,--version-script=" + w.at("unnamed.map"));
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(real_dlopen(w.at("libuser.so")).first, "ok");
  auto t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(findings(t), 0u) << t.text;
  // At another named node it is a miss of that version.
  w.build("lib/libv.so.1", kF12, "-Wl,-soname,libv.so.1 -Wl,--version-script=" + w.at("v2.map"));
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(real_dlopen(w.at("libuser.so")).error(), w.at("libuser.so") + ": undefined symbol: f2, version V1");
  t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 1) << t.text;
  const json* user = library(t, w.at("libuser.so"));
  ASSERT_NE(user, nullptr) << t.text;
  ASSERT_EQ((*user)["unresolved"].size(), 1u) << t.text;
  EXPECT_EQ((*user)["unresolved"][0]["symbol"], "f2");
  EXPECT_EQ((*user)["unresolved"][0]["version"], "V1");
}

// The level is the CPU's (cpuid, as ld.so computes it), GLIBC_TUNABLES' glibc.cpu.hwcaps applied: with
// a feature of the best level turned off the loader does not search that level's subdirectory, and
// neither does the tool; --cpu-level chooses another level outright.
TEST(GlibcRules, hwcaps_level_follows_the_cpu_and_glibc_tunables) {
  const auto levels = test::real_hwcaps_levels();
  if (levels.empty()) MLC_SKIP() << "this CPU supports no x86-64-v2 (ld.so --help lists no glibc-hwcaps level)";
  const std::string best = levels.front();
  // A feature each level needs that the one below does not (sysdeps/x86/get-isa-level.h).
  const std::map<std::string, std::string> feature = {
      {"x86-64-v4", "AVX512F"}, {"x86-64-v3", "AVX2"}, {"x86-64-v2", "SSE4_2"}};
  const std::string off = "glibc.cpu.hwcaps=-" + feature.at(best);
  const auto lowered = test::real_hwcaps_levels(off);
  ASSERT_TRUE(std::find(lowered.begin(), lowered.end(), best) == lowered.end())
      << "the tunable's effect, by ld.so --help";
  const std::string below = lowered.empty() ? "baseline" : lowered.front();
  World w("hwcaps-level");
  w.build("lib/libf.so", kF12, "-Wl,-soname,libf.so");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' lib/libf.so");
  w.build("lib/glibc-hwcaps/" + best + "/libf.so", kF1, "-Wl,-soname,libf.so");
  EXPECT_EQ(real_dlopen(w.at("libuser.so")).error(), w.at("libuser.so") + ": undefined symbol: f2");
  EXPECT_EQ(tool(w.at("libuser.so")).status, 1);
  EXPECT_EQ(real_dlopen(w.at("libuser.so"), "GLIBC_TUNABLES=" + off).first, "ok");
  auto t = tool(w.at("libuser.so"), "GLIBC_TUNABLES=" + off);
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("libuser.so"), "libf.so"), w.at("lib/libf.so"));
  EXPECT_EQ(tool(w.at("libuser.so"), "", "--cpu-level " + below).status, 0);
  EXPECT_EQ(tool(w.at("libuser.so"), "GLIBC_TUNABLES=" + off, "--cpu-level " + best).status, 1);
}

// --- 2. an unknown $NAME, and 11. ';', in DT_RUNPATH ---------------------------------------------------

// dl-load.c _dl_dst_substitute copies a '$' it knows no token for: "$ORIGIN/d$FOO" is a directory
// named "d$FOO". decompose_rpath splits at ':' only: "$ORIGIN/a;b" is a directory named "a;b".
TEST(GlibcRules, unknown_token_and_semicolon_are_part_of_a_directory_name) {
  for (const std::string sub : {"d$FOO", "a;b", "d${BAR}"}) {
    World w("literal-" + std::to_string(sub.size()));
    w.build(sub + "/libf.so", kF12, "-Wl,-soname,libf.so");
    w.build("libuser.so", kUseF12, "-Wl,-rpath," + quote("$ORIGIN/" + sub) + " " + quote(sub + "/libf.so"));
    EXPECT_EQ(real_dlopen(w.at("libuser.so")).first, "ok") << sub;
    auto t = tool(w.at("libuser.so"));
    EXPECT_EQ(t.status, 0) << sub << "\n" << t.text;
    EXPECT_EQ(needed_path(t, w.at("libuser.so"), "libf.so"), w.at(sub + "/libf.so")) << sub;
  }
}

// --- 3. dynamic string tokens in DT_NEEDED, and 8. $ORIGIN/ names from two directories ----------------

// dl-deps.c expands every DT_NEEDED: "libf-$PLATFORM.so" is libf-<platform>.so, searched as a name.
TEST(GlibcRules, platform_token_in_dt_needed_is_expanded_before_the_search) {
  World w("needed-platform");
  const std::string file = "libf-" + test::real_platform() + ".so";
  w.build("lib/" + file, kF12, "-Wl,-soname,'libf-$PLATFORM.so'");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' lib/" + file);
  EXPECT_EQ(real_dlopen(w.at("libuser.so")).first, "ok");
  auto t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("libuser.so"), "libf-$PLATFORM.so"), w.at("lib/" + file));
}

// A version required from such a library: dl-version.c looks the Verneed file up by its unexpanded
// name, finds no loaded object, and ld.so aborts (assertion `needed != NULL').
TEST(GlibcRules, version_required_from_a_library_named_with_a_token_aborts) {
  World w("needed-version");
  const std::string file = "libf-" + test::real_platform() + ".so";
  test::write_file(w.at("f.map"), "F_1 { global: f1; f2; local: *; };\n");
  w.build("lib/" + file, kF12, "-Wl,-soname,'libf-$PLATFORM.so' -Wl,--version-script=f.map");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' lib/" + file);
  auto real = real_dlopen(w.at("libuser.so"));
  EXPECT_EQ(real.status, 127);
  EXPECT_NE(real.err.find("_dl_check_map_versions: Assertion `needed != NULL' failed"), std::string::npos) << real.err;
  auto t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 1);
  auto f = only_failure(t);
  EXPECT_EQ(f["kind"], "version-file-unmatched");
  EXPECT_EQ(f["file"], w.at("lib/" + file));
  EXPECT_NE(t.text.find("error: " + w.at("lib/" + file) +
                        ": ld.so aborts: dl-version.c _dl_check_map_versions: "
                        "Assertion `needed != NULL' failed"),
            std::string::npos)
      << t.text;
  EXPECT_NE(t.text.find("patchelf --replace-needed 'libf-$PLATFORM.so' " + file), std::string::npos) << t.text;
}

// "$ORIGIN/libq.so" needed from a/ and from b/ names two files (the name is expanded before loaded
// objects are matched): both are loaded.
TEST(GlibcRules, origin_name_needed_from_two_directories_is_two_files) {
  World w("needed-origin");
  w.build("a/libq.so", kF1, "-Wl,-soname,'$ORIGIN/libq.so'");
  w.build("b/libq.so", kF12, "-Wl,-soname,'$ORIGIN/libq.so'");
  w.build("a/liba.so", "extern int f1(void); int a(void) { return f1(); }\n", "-Wl,-soname,liba.so a/libq.so");
  w.build("b/libb.so", "extern int f2(void); int b(void) { return f2(); }\n", "-Wl,-soname,libb.so b/libq.so");
  w.build("libuser.so", "int use(void) { return 0; }\n",
          "-Wl,-rpath,'$ORIGIN/a:$ORIGIN/b' -Wl,--no-as-needed a/liba.so b/libb.so");
  auto real = test::real_load(w.at("libuser.so"));
  ASSERT_TRUE(real.ok) << real.error;
  EXPECT_TRUE(real.maps(w.at("a/libq.so")));
  EXPECT_TRUE(real.maps(w.at("b/libq.so")));
  auto t = tool(w.at("libuser.so"), "", "--closure");
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("a/liba.so"), "$ORIGIN/libq.so"), w.at("a/libq.so"));
  EXPECT_EQ(needed_path(t, w.at("b/libb.so"), "$ORIGIN/libq.so"), w.at("b/libq.so"));
}

// --- 4. libc and ld.so are loaded already ---------------------------------------------------------------

// The host that dlopens a library has libc.so.6 loaded: a DT_NEEDED of that name is satisfied before
// any search, so -z nodefaultlib and a stray libc.so.6 beside the library change nothing.
TEST(GlibcRules, libc_is_loaded_before_a_nodeflib_library_searches) {
  World w("nodeflib-libc");
  w.build("libuser.so", "#include <string.h>\nsize_t use(const char* s) { return strlen(s); }\n",
          "-Wl,-z,nodefaultlib -Wl,-rpath,'$ORIGIN'");
  test::write_file(w.at("libc.so.6"), "not a library\n");
  EXPECT_EQ(real_dlopen(w.at("libuser.so")).first, "ok");
  auto t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(test::real_path_of(needed_path(t, w.at("libuser.so"), "libc.so.6")),
            test::real_path_of("/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_EQ(findings(t), 0u);
}

// --- 5. a file glibc refuses ends the search ---------------------------------------------------------

// dl-load.c open_verify skips a file of another ELF class or machine; anything else that is no
// loadable object of the process ends the search with an error, even with the right library further
// on. The tool's exit status is 1 (the load fails), never 2 (its own input is fine), and it names the
// file, glibc's words, and says to remove it.
struct Decoy {
  const char* name;
  std::function<void(World&, const std::string&)> make;
};

void patch(const std::string& path, size_t offset, std::initializer_list<uint8_t> bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  for (uint8_t b : bytes) f.put(static_cast<char>(b));
}

TEST(GlibcRules, file_the_loader_refuses_ends_the_search_and_fails_the_load) {
  auto copy_patched = [](size_t offset, std::initializer_list<uint8_t> bytes) {
    return [offset, bytes](World& w, const std::string& path) {
      std::filesystem::copy_file(w.at("second/libf.so"), path);
      patch(path, offset, bytes);
    };
  };
  auto compiled = [](const std::string& flags) {
    return [flags](World& w, const std::string& path) {
      auto r = run("cd " + quote(w.dir) + " && printf 'int main(void){return 0;}\\n' | gcc -x c - " + flags + " -o " +
                   quote(path));
      ASSERT_EQ(r.status, 0) << r.err;
    };
  };
  const std::vector<Decoy> decoys = {
      {"empty", [](World&, const std::string& p) { test::write_file(p, ""); }},
      {"git-lfs-pointer",
       [](World&, const std::string& p) {
         test::write_file(p, "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a21\nsize 1048576\n");
       }},
      {"directory", [](World&, const std::string& p) { std::filesystem::create_directories(p); }},
      {"relocatable", compiled("-c -fPIC")},
      {"pie", compiled("-fPIE -pie")},
      {"big-endian", copy_patched(5, {2})},
      {"os-abi", copy_patched(7, {9})},
      {"abi-version", copy_patched(8, {1})},
  };
  for (const auto& d : decoys) {
    World w(std::string("refused-") + d.name);
    w.build("second/libf.so", kF12, "-Wl,-soname,libf.so");
    w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/first:$ORIGIN/second' second/libf.so");
    std::filesystem::create_directories(w.at("first"));
    d.make(w, w.at("first/libf.so"));
    auto real = real_dlopen(w.at("libuser.so"));
    // dlerror: "NAME: WORDS" - the file tried (open_verify) or the name asked for (_dl_map_object_from_fd).
    const std::string error = real.error();
    ASSERT_FALSE(error.empty()) << d.name << " loads: " << real.first;
    const std::string words = error.substr(error.find(": ") + 2);
    auto t = tool(w.at("libuser.so"));
    EXPECT_EQ(t.status, 1) << d.name << "\n" << t.err;
    auto f = only_failure(t);
    EXPECT_EQ(f["kind"], "bad-candidate") << d.name;
    EXPECT_EQ(f["file"], w.at("first/libf.so")) << d.name;
    EXPECT_EQ(f["message"], words) << d.name;
    EXPECT_NE(t.text.find("error: " + w.at("first/libf.so") + ": " + words + "\n"), std::string::npos) << t.text;
    EXPECT_NE(t.text.find("fix: remove it"), std::string::npos) << t.text;
    EXPECT_EQ(needed_path(t, w.at("libuser.so"), "libf.so"), "") << d.name;
  }
}

// The other class is skipped, and the search goes on to the right library.
TEST(GlibcRules, file_of_another_class_is_skipped) {
  World w("other-class");
  w.build("second/libf.so", kF12, "-Wl,-soname,libf.so");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/first:$ORIGIN/second' second/libf.so");
  std::filesystem::create_directories(w.at("first"));
  std::filesystem::copy_file(w.at("second/libf.so"), w.at("first/libf.so"));
  patch(w.at("first/libf.so"), 4, {1});  // EI_CLASS: ELFCLASS32
  EXPECT_EQ(real_dlopen(w.at("libuser.so")).first, "ok");
  auto t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("libuser.so"), "libf.so"), w.at("second/libf.so"));
}

// --- 6. DF_1_NOOPEN ---------------------------------------------------------------------------------------

// _dl_map_object_from_fd refuses a -z nodlopen object that a dlopen maps (a dependency too); a program
// that links it starts.
TEST(GlibcRules, nodlopen_library_fails_a_dlopen_but_not_a_program) {
  World w("noopen");
  w.build("lib/libn.so", kF12, "-Wl,-soname,libn.so -Wl,-z,nodlopen");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' lib/libn.so");
  EXPECT_EQ(real_dlopen(w.at("libuser.so")).error(), "libn.so: shared object cannot be dlopen()ed");
  auto t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 1);
  auto f = only_failure(t);
  EXPECT_EQ(f["kind"], "noopen");
  EXPECT_EQ(f["file"], w.at("lib/libn.so"));
  EXPECT_EQ(f["message"], "shared object cannot be dlopen()ed");
  w.build("prog", "extern int f1(void);\nint main(void) { return f1() - 1; }\n", "-Wl,-rpath,'$ORIGIN/lib' lib/libn.so",
          true);
  EXPECT_EQ(real_start(w.at("prog")).status, 0);
  EXPECT_EQ(tool(w.at("prog")).status, 0);
}

// --- 7. static TLS -------------------------------------------------------------------------------------------

// dl-reloc.c _dl_allocate_static_tls: initial-exec TLS of a dlopen'ed object takes its place in the
// static TLS surplus (1664 bytes by default) or the load fails. The tunable the tool names lets it in.
TEST(GlibcRules, initial_exec_tls_past_the_static_surplus_fails_the_load) {
  World w("static-tls");
  auto ie = [](int size) {
    return "__thread char big[" + std::to_string(size) +
           "] __attribute__((tls_model(\"initial-exec\")));\n"
           "char* get(void) { return big; }\n";
  };
  w.build("libsmall.so", ie(1000));
  w.build("libbig.so", ie(4000));
  EXPECT_EQ(real_dlopen(w.at("libsmall.so")).first, "ok");
  EXPECT_EQ(tool(w.at("libsmall.so")).status, 0);
  EXPECT_EQ(real_dlopen(w.at("libbig.so")).error(), w.at("libbig.so") + ": cannot allocate memory in static TLS block");
  auto t = tool(w.at("libbig.so"));
  EXPECT_EQ(t.status, 1);
  auto f = only_failure(t);
  EXPECT_EQ(f["kind"], "static-tls");
  EXPECT_EQ(f["file"], w.at("libbig.so"));
  const std::string fix = f["fix"];
  auto at = fix.find("glibc.rtld.optional_static_tls=");
  ASSERT_NE(at, std::string::npos) << fix;
  const std::string tunable = fix.substr(at, fix.find_first_of(", ", at) - at);
  EXPECT_EQ(real_dlopen(w.at("libbig.so"), "GLIBC_TUNABLES=" + tunable).first, "ok") << tunable;
  EXPECT_EQ(tool(w.at("libbig.so"), "GLIBC_TUNABLES=" + tunable).status, 0) << tunable;
}

// --- 9. a versioned reference to a provider without .gnu.version ----------------------------------------

// dl-lookup.c check_match asserts that a versioned reference is never looked up in the file it is
// required from when that file has no symbol versions: ld.so aborts.
TEST(GlibcRules, version_required_from_a_provider_without_symbol_versions_aborts) {
  World w("no-versym");
  test::write_file(w.at("f.map"), "F_1 { global: f1; f2; local: *; };\n");
  w.build("link/libf.so", kF12, "-Wl,-soname,libf.so -Wl,--version-script=f.map");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/run' link/libf.so");
  w.build("run/libf.so", kF12, "-Wl,-soname,libf.so -nostdlib");
  auto real = real_dlopen(w.at("libuser.so"));
  EXPECT_EQ(real.status, 127);
  EXPECT_NE(real.err.find("check_match: Assertion `version->filename == NULL"), std::string::npos) << real.err;
  auto t = tool(w.at("libuser.so"));
  EXPECT_EQ(t.status, 1);
  auto f = only_failure(t);
  EXPECT_EQ(f["kind"], "version-without-versym");
  EXPECT_EQ(f["file"], w.at("run/libf.so"));
}

// --- 10. a loaded object answers to its path and soname, not its file name --------------------------------

// A preloaded pre/libf.so.1 whose soname is another name does not satisfy a later DT_NEEDED libf.so.1
// (dl-load.c _dl_map_object matches l_name, the names asked for, and the soname): that one is searched.
TEST(GlibcRules, preloaded_file_answers_to_its_path_and_soname_only) {
  World w("preload-name");
  w.build("pre/libf.so.1", kF1, "-Wl,-soname,libf-pre.so.1");
  w.build("lib/libf.so.1", kF12, "-Wl,-soname,libf.so.1");
  w.build("libuser.so", kUseF12, "-Wl,-rpath,'$ORIGIN/lib' lib/libf.so.1");
  auto real = test::real_load(w.at("libuser.so"), {}, {{w.at("pre/libf.so.1"), true}});
  ASSERT_TRUE(real.ok) << real.error;
  EXPECT_TRUE(real.maps(w.at("lib/libf.so.1")));
  auto t = tool(w.at("libuser.so"), "", "--with " + quote(w.at("pre/libf.so.1")));
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("libuser.so"), "libf.so.1"), w.at("lib/libf.so.1"));
}

// --- 12. a program's $ORIGIN is its real directory ---------------------------------------------------------

// dl-origin.c takes the main program's directory from /proc/self/exe, which the kernel resolves: a
// program run through a symlink (a venv's bin/python) finds $ORIGIN libraries beside its real file.
TEST(GlibcRules, program_origin_is_the_directory_of_its_real_file) {
  World w("program-origin");
  w.build("real/lib/libf.so", kF12, "-Wl,-soname,libf.so");
  w.build("real/prog", "extern int f2(void);\nint main(void) { return f2() - 2; }\n",
          "-Wl,-rpath,'$ORIGIN/lib' real/lib/libf.so", true);
  std::filesystem::create_directories(w.at("link"));
  std::filesystem::create_symlink("../real/prog", w.at("link/prog"));
  EXPECT_EQ(real_start(w.at("link/prog")).status, 0);
  auto t = tool(w.at("link/prog"));
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("link/prog"), "libf.so"), w.at("real/lib/libf.so"));
}

// --- 13. copy relocations --------------------------------------------------------------------------------------

// dl-lookup.c: a program's copy relocation is looked up outside the program; though the program's
// .dynsym defines the data, a library that lacks it fails the start. dl-protected.h: protected data
// of a library built with -mno-direct-extern-access cannot be copied.
TEST(GlibcRules, copy_relocation_needs_copyable_data_outside_the_program) {
  World w("copy-reloc");
  w.build("link/libd.so", "int data = 5;\nint other = 1;\n", "-Wl,-soname,libd.so");
  w.build("prog", "extern int data; extern int other;\nint main(void) { return data + other - 6; }\n",
          "-Wl,-rpath,'$ORIGIN/run' link/libd.so", true);
  w.build("run/libd.so", "int other = 1;\n", "-Wl,-soname,libd.so");
  auto real = real_start(w.at("prog"));
  EXPECT_NE(real.err.find("undefined symbol: data"), std::string::npos) << real.err;
  auto t = tool(w.at("prog"));
  EXPECT_EQ(t.status, 1);
  ASSERT_NE(library(t, w.at("prog")), nullptr);
  ASSERT_EQ((*library(t, w.at("prog")))["unresolved"].size(), 1u) << t.doc.dump(1);
  EXPECT_EQ((*library(t, w.at("prog")))["unresolved"][0]["symbol"], "data");
  w.build("run/libd.so", "__attribute__((visibility(\"protected\"))) int data = 5;\nint other = 1;\n",
          "-Wl,-soname,libd.so -mno-direct-extern-access");
  real = real_start(w.at("prog"));
  EXPECT_NE(
      real.err.find("data: " + w.at("run/libd.so") + ": error due to GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS"),
      std::string::npos)
      << real.err;
  t = tool(w.at("prog"));
  EXPECT_EQ(t.status, 1);
  auto f = only_failure(t);
  EXPECT_EQ(f["kind"], "protected-copy");
  EXPECT_EQ(f["symbol"], "data");
  EXPECT_EQ(f["file"], w.at("run/libd.so"));
}

// --- 14. an initial-exec TLS reference bound to ordinary data -----------------------------------------------

// dl-reloc.c _dl_try_allocate_static_tls divides by the alignment of the TLS block of the object the
// reference binds to: ordinary data in an object without PT_TLS kills ld.so (SIGFPE). The same data
// reached through the general-dynamic model loads.
TEST(GlibcRules, initial_exec_reference_to_ordinary_data_ends_the_process) {
  World w("tls-mismatch");
  w.build("link/libx.so", "__thread int x = 5;\n", "-Wl,-soname,libx.so");
  w.build("libie.so",
          "extern __thread int x __attribute__((tls_model(\"initial-exec\")));\nint get(void) { return x; }\n",
          "-Wl,-rpath,'$ORIGIN/run' link/libx.so");
  w.build("libgd.so", "extern __thread int x;\nint get(void) { return x; }\n", "-Wl,-rpath,'$ORIGIN/run' link/libx.so");
  w.build("run/libx.so", "int x = 5;\n", "-Wl,-soname,libx.so");
  EXPECT_EQ(real_dlopen(w.at("libie.so")).status, 128 + 8);  // SIGFPE
  auto t = tool(w.at("libie.so"));
  EXPECT_EQ(t.status, 1);
  auto f = only_failure(t);
  EXPECT_EQ(f["kind"], "tls-mismatch");
  EXPECT_EQ(f["file"], w.at("run/libx.so"));
  EXPECT_EQ(real_dlopen(w.at("libgd.so")).first, "ok");
  EXPECT_EQ(tool(w.at("libgd.so")).status, 0);
}

// --- the report's paths are absolute -------------------------------------------------------------------------

// A DT_NEEDED "./libf.so" is opened in the working directory; the report gives its absolute path
// (docs/contract.md: paths are absolute).
TEST(GlibcRules, library_found_through_the_working_directory_has_an_absolute_path) {
  World w("cwd-needed");
  w.build("libf.so", kF12, "-Wl,-soname,./libf.so");
  w.build("libuser.so", kUseF12, "./libf.so");
  EXPECT_EQ(real_dlopen(w.at("libuser.so"), "", {}, w.dir).first, "ok");
  auto t = tool(w.at("libuser.so"), "", "", w.dir);
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("libuser.so"), "./libf.so"), w.at("libf.so"));
  // LD_LIBRARY_PATH's empty element is the working directory too.
  w.build("lib/libg.so", kF12, "-Wl,-soname,libg.so");
  w.build("libuser2.so", kUseF12, "lib/libg.so");
  EXPECT_EQ(real_dlopen(w.at("libuser2.so"), "LD_LIBRARY_PATH=:", {}, w.at("lib")).first, "ok");
  t = tool(w.at("libuser2.so"), "LD_LIBRARY_PATH=:", "", w.at("lib"));
  EXPECT_EQ(t.status, 0) << t.text;
  EXPECT_EQ(needed_path(t, w.at("libuser2.so"), "libg.so"), w.at("lib/libg.so"));
}

}  // namespace
}  // namespace mlc
