// Oracles on real libraries nobody here wrote: glibc's `ldd -r` on Debian's libtorch_cpu.so.1.13
// (a trusted system library) for what is unresolved, c++filt for demangling, `ldconfig -p` for the
// ld.so.cache reader. Each test skips with a message when its data is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "demangle/demangle.h"
#include "elf/elf_object.h"
#include "loader/ld_cache.h"
#include "../unit/test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kTorch = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";

#define REQUIRE_LIBTORCH()                                                                              \
  if (!std::filesystem::exists(kTorch))                                                                 \
  GTEST_SKIP() << kTorch << " is absent: install Debian's libtorch1.13 (the README's test command does)"

using Pairs = std::set<std::pair<std::string, std::string>>;

// "undefined symbol: NAME[, version V]\t(PATH)" lines of ldd -r.
Pairs ldd_pairs(const std::string& text) {
  Pairs out;
  std::istringstream in(text);
  const std::string prefix = "undefined symbol: ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    auto tab = line.find('\t');
    std::string sym = line.substr(prefix.size(), tab - prefix.size());
    std::string path = line.substr(tab + 2, line.size() - tab - 3);
    out.insert({sym, path});
  }
  return out;
}

Pairs linkcheck_pairs(const std::string& json_text) {
  Pairs out;
  auto doc = nlohmann::json::parse(json_text);
  for (const auto& lib : doc["libraries"]) {
    for (const auto& u : lib["unresolved"]) {
      std::string sym = u["symbol"].get<std::string>();
      if (!u["version"].is_null()) sym += ", version " + u["version"].get<std::string>();
      out.insert({sym, lib["path"].get<std::string>()});
    }
  }
  return out;
}

TEST(Oracle, libtorch_closure_resolves_completely) {
  REQUIRE_LIBTORCH();
  auto r = run(kBin + " --closure " + kTorch);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 undefined symbols, 0 missing libraries, 0 missing versions"), std::string::npos) << r.out;
  // The oracle agrees that nothing is missing.
  auto ldd = run("ldd -r " + kTorch);
  EXPECT_TRUE(ldd_pairs(ldd.out + ldd.err).empty());
}

TEST(Oracle, libtorch_with_empty_sleef_matches_ldd_r_exactly) {
  REQUIRE_LIBTORCH();
  std::string env = "LD_LIBRARY_PATH=" + quote(kFix + "/oracle/empty") + " ";
  auto ldd = run(env + "ldd -r " + kTorch);
  Pairs want = ldd_pairs(ldd.out + ldd.err);
  ASSERT_FALSE(want.empty()) << "ldd -r found nothing missing; the empty libsleef.so.3 was not picked up";

  auto r = run(env + kBin + " --closure --format json " + kTorch);
  EXPECT_EQ(r.status, 1) << r.err;
  Pairs got = linkcheck_pairs(r.out);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.size(), want.size());
  // And the library really came from LD_LIBRARY_PATH.
  auto doc = nlohmann::json::parse(r.out);
  bool saw = false;
  for (const auto& lib : doc["libraries"])
    for (const auto& n : lib["needed"])
      if (n["name"] == "libsleef.so.3") saw |= n["path"] == kFix + "/oracle/empty/libsleef.so.3" && n["how"] == "ld_library_path";
  EXPECT_TRUE(saw);
}

// Every finding of a run with a stale copy first on the search path: linked to one cause that names
// the copy the loader would otherwise take.
void expect_all_caused(const nlohmann::json& doc, const std::string& picked, const std::string& other_soname,
                       const std::set<std::string>& classes) {
  ASSERT_EQ(doc["causes"].size(), 1u) << doc["causes"].dump(2);
  const auto& c = doc["causes"][0];
  EXPECT_EQ(c["picked"]["path"], picked);
  EXPECT_EQ(c["picked"]["how"], "ld_library_path");
  // The system's copy: what ld.so.cache gives for that soname.
  std::string system;
  auto cache = loader::read_ld_cache("/etc/ld.so.cache");
  ASSERT_TRUE(cache.ok()) << cache.error().to_line();
  for (const auto& e : cache.value())
    if (e.soname == other_soname && e.hwcap == 0 && system.empty()) system = e.path;
  EXPECT_EQ(c["other"]["path"], system);
  EXPECT_EQ(c["other"]["how"], "ld.so.cache");
  size_t n = 0;
  for (const auto& lib : doc["libraries"]) {
    for (const auto& u : lib["unresolved"]) {
      ++n;
      EXPECT_TRUE(classes.count(u["classification"].get<std::string>())) << u["symbol"] << " " << u["classification"];
      EXPECT_EQ(u["cause"], c["id"]) << u["symbol"];
      EXPECT_EQ(u["fix"]["library"], system) << u["symbol"];
    }
    for (const auto& mv : lib["missing_versions"]) EXPECT_EQ(mv["cause"], c["id"]) << mv["version"];
  }
  EXPECT_EQ(c["symbols"], n);
}

TEST(Oracle, libtorch_with_empty_sleef_every_finding_is_shadowed) {
  REQUIRE_LIBTORCH();
  std::string dir = kFix + "/oracle/empty";
  auto r = run(kBin + " --closure --format json --library-path " + quote(dir) + " " + kTorch);
  EXPECT_EQ(r.status, 1) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_GT(doc["summary"]["unresolved"].get<size_t>(), 0u);
  expect_all_caused(doc, dir + "/libsleef.so.3", "libsleef.so.3", {"shadowed"});
  EXPECT_EQ(doc["causes"][0]["kind"], "shadowed");
}

TEST(Oracle, libtorch_with_old_libstdcxx_first_matches_ldd_r_and_names_the_system_copy) {
  REQUIRE_LIBTORCH();
  // Our tool links libstdc++ itself, so the stand-in reaches it as --library-path; ldd (a shell
  // script and ld.so, no C++) takes it as LD_LIBRARY_PATH. Both mean the same search path.
  std::string dir = kFix + "/stdcxx/old";
  auto ldd = run("LD_LIBRARY_PATH=" + quote(dir) + " ldd -r " + kTorch);
  Pairs want = ldd_pairs(ldd.out + ldd.err);
  ASSERT_GT(want.size(), 1000u) << "ldd -r did not pick up the old libstdc++.so.6 stand-in";

  auto r = run(kBin + " --closure --format json --library-path " + quote(dir) + " " + kTorch);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(linkcheck_pairs(r.out), want);
  auto doc = nlohmann::json::parse(r.out);
  expect_all_caused(doc, dir + "/libstdc++.so.6", "libstdc++.so.6", {"shadowed", "version-mismatch"});
  EXPECT_EQ(doc["causes"][0]["kind"], "version-mismatch");
  // ldd's "version `X' not found" lines are the cause's missing version nodes.
  std::set<std::string> ldd_versions, ours;
  std::istringstream in(ldd.out + ldd.err);
  for (std::string line; std::getline(in, line);) {
    auto at = line.find("version `");
    if (at != std::string::npos) ldd_versions.insert(line.substr(at + 9, line.find('\'', at + 9) - at - 9));
  }
  for (const auto& v : doc["causes"][0]["missing_versions"]) ours.insert(v.get<std::string>());
  EXPECT_EQ(ours, ldd_versions);
}

TEST(Oracle, every_dynamic_symbol_of_libtorch_demangles_as_cxxfilt_does) {
  REQUIRE_LIBTORCH();
  auto obj = elf::read_object(kTorch, elf::ReadOptions{false, false});
  ASSERT_TRUE(obj.ok()) << obj.error().to_line();
  std::string names, ours;
  size_t count = 0;
  for (size_t i = 1; i < obj->dynamic_symbols.size(); ++i) {
    auto name = obj->dynamic_symbols[i].name;
    if (name.empty()) continue;
    names.append(name).push_back('\n');
    ours.append(demangle::demangle(name)).push_back('\n');
    ++count;
  }
  EXPECT_GT(count, 30000u);
  std::string dir = test::scratch_dir("cxxfilt");
  test::write_file(dir + "/names.txt", names);
  auto filt = run("c++filt < " + quote(dir + "/names.txt"));
  ASSERT_EQ(filt.status, 0) << "c++filt (binutils) is needed for this oracle";
  // Compare line by line so a failure names the symbol.
  std::istringstream a(ours), b(filt.out), n(names);
  std::string la, lb, ln;
  size_t mismatches = 0;
  while (std::getline(n, ln)) {
    std::getline(a, la);
    std::getline(b, lb);
    if (la != lb && ++mismatches <= 5) ADD_FAILURE() << ln << "\n ours:    " << la << "\n c++filt: " << lb;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(Oracle, ld_so_cache_reader_agrees_with_ldconfig_p) {
  if (!std::filesystem::exists("/etc/ld.so.cache")) GTEST_SKIP() << "/etc/ld.so.cache is absent";
  auto entries = loader::read_ld_cache("/etc/ld.so.cache");
  ASSERT_TRUE(entries.ok()) << entries.error().to_line();
  auto p = run("ldconfig -p");
  ASSERT_EQ(p.status, 0);
  std::multiset<std::pair<std::string, std::string>> want, got;
  std::istringstream in(p.out);
  for (std::string line; std::getline(in, line);) {
    auto arrow = line.find(" => ");
    if (arrow == std::string::npos || line[0] != '\t') continue;
    std::string soname = line.substr(1, line.find(' ', 1) - 1);
    want.insert({soname, line.substr(arrow + 4)});
  }
  for (const auto& e : entries.value()) got.insert({e.soname, e.path});
  EXPECT_EQ(got, want);
  EXPECT_GT(got.size(), 10u);
}

TEST(Oracle, sysroot_cache_written_by_ldconfig_is_read) {
  if (geteuid() != 0) GTEST_SKIP() << "ldconfig -r needs root (chroot)";
  // A private copy: the fixture sysroot itself stays without a cache for the ld.so.conf test.
  std::string root = test::scratch_dir("sysroot");
  std::filesystem::copy(kFix + "/sysroot", root, std::filesystem::copy_options::recursive);
  auto ldc = run("ldconfig -r " + quote(root));
  ASSERT_EQ(ldc.status, 0) << ldc.err;
  ASSERT_TRUE(std::filesystem::exists(root + "/etc/ld.so.cache"));
  auto r = run(kBin + " --format json --sysroot " + quote(root) + " " + quote(kFix + "/sysroot_user/libsysroot_user.so"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& n = doc["libraries"][0]["needed"][0];
  EXPECT_EQ(n["name"], "libvendor.so.2");
  EXPECT_EQ(n["path"], root + "/opt/vendor/lib/libvendor.so.2");
  EXPECT_EQ(n["how"], "ld.so.cache");
}

// test::run leaves its captures under the temp directory; take them away at the end.
class RemoveScratch : public ::testing::Environment {
 public:
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("mlc-test-" + std::to_string(getpid())));
  }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new RemoveScratch);

}  // namespace
}  // namespace mlc
