// Shared causes on fixture worlds built at test time: a stale copy of a soname picked first
// (shadowed), an old libstdc++.so.6 stand-in (version-mismatch naming the system's copy), a Python
// extension (the interpreter provides its C API), and the did-you-mean filter for std:: names.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "loader/loader.h"
#include "real_loader.h"
#include "test_support.h"
#include "trace/causes.h"

namespace mlc {
namespace {

using nlohmann::json;
using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;

// The path ld.so.cache gives for a soname (what the loader takes when nothing earlier has it), by
// `ldconfig -p`, not by the reader under test.
std::string cache_path(const std::string& soname) { return test::system_copy(soname); }

TEST(Shadow, loader_keeps_the_candidates_it_would_have_taken_next) {
  loader::LoaderEnv env;
  env.library_path = {kFix + "/shadow/stale"};
  auto p = loader::load_process(kFix + "/shadow/libshadow_user.so", env);
  ASSERT_TRUE(p.ok()) << p.error().to_line();
  const auto& target = p->objects[p->target];
  const loader::NeededEntry* entry = nullptr;
  for (const auto& n : target.needed)
    if (n.name == "libshadow.so.1") entry = &n;
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(p->objects[entry->object].path, kFix + "/shadow/stale/libshadow.so.1");
  EXPECT_EQ(entry->how, loader::FoundHow::LdLibraryPath);
  // RUNPATH ($ORIGIN/full) comes after LD_LIBRARY_PATH: that copy is the next candidate, not loaded.
  const std::vector<loader::SearchAttempt> candidates = loader::other_copies(*p, *entry);
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates[0].path, kFix + "/shadow/full/libshadow.so.1");
  EXPECT_EQ(candidates[0].how, loader::FoundHow::Runpath);
  for (const auto& o : p->objects) EXPECT_NE(o.path, kFix + "/shadow/full/libshadow.so.1");
}

TEST(Shadow, stale_copy_on_ld_library_path_is_one_shadowed_cause) {
  std::string stale = kFix + "/shadow/stale/libshadow.so.1", full = kFix + "/shadow/full/libshadow.so.1";
  std::string args =
      " --library-path " + quote(kFix + "/shadow/stale") + " " + quote(kFix + "/shadow/libshadow_user.so");
  auto text = run(kBin + args);
  EXPECT_EQ(text.status, 1) << text.err;
  EXPECT_NE(text.out.find("error: libshadow.so.1 from " + stale + " (ld_library_path) lacks 2 symbols that " + full +
                          " (runpath) has\n>>> shadowed: shadow_dropped_a\n>>> shadowed: shadow_dropped_b\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("undefined symbol:"), std::string::npos) << "findings with a cause are told once";
  EXPECT_NE(text.out.find("2 undefined symbols, 0 missing libraries, 0 missing versions in 1 library"),
            std::string::npos);

  auto r = run(kBin + " --format json" + args);
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["causes"].size(), 1u) << r.out;
  const auto& c = doc["causes"][0];
  EXPECT_EQ(c["kind"], "shadowed");
  EXPECT_EQ(c["library"], "libshadow.so.1");
  EXPECT_EQ(c["picked"], (json{{"path", stale}, {"how", "ld_library_path"}}));
  EXPECT_EQ(c["other"], (json{{"path", full}, {"how", "runpath"}}));
  EXPECT_EQ(c["symbols"], 2);
  EXPECT_EQ(c["missing_versions"], json::array());
  const auto& unresolved = doc["libraries"][0]["unresolved"];
  ASSERT_EQ(unresolved.size(), 2u);
  for (const auto& u : unresolved) {
    EXPECT_EQ(u["classification"], "shadowed");
    EXPECT_EQ(u["cause"], c["id"]);
    EXPECT_EQ(u["fix"]["kind"], "use-library");
    EXPECT_EQ(u["fix"]["library"], full);
  }
  // Without the stale copy first, nothing is missing.
  EXPECT_EQ(run(kBin + " " + quote(kFix + "/shadow/libshadow_user.so")).status, 0);
}

TEST(Shadow, old_libstdcxx_first_is_version_mismatch_naming_the_system_copy) {
  std::string system = cache_path("libstdc++.so.6");
  if (system.empty()) MLC_SKIP() << "libstdc++.so.6 has no ld.so.cache entry on this machine";
  std::string old = kFix + "/stdcxx/old/libstdc++.so.6";
  std::string args = " --library-path " + quote(kFix + "/stdcxx/old") + " " + quote(kFix + "/stdcxx/libstdcxx_user.so");
  auto r = run(kBin + " --format json" + args);
  EXPECT_EQ(r.status, 1) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["causes"].size(), 1u) << r.out;
  const auto& c = doc["causes"][0];
  EXPECT_EQ(c["kind"], "version-mismatch");
  EXPECT_EQ(c["picked"], (json{{"path", old}, {"how", "ld_library_path"}}));
  EXPECT_EQ(c["other"], (json{{"path", system}, {"how", "ld.so.cache"}}));
  auto versions = c["missing_versions"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(versions.begin(), versions.end(), "GLIBCXX_3.4.21"), versions.end());  // cxx11 std::string
  EXPECT_EQ(std::find(versions.begin(), versions.end(), "GLIBCXX_3.4"), versions.end());     // the stand-in has it
  const auto& lib = doc["libraries"][0];
  size_t mismatched = 0;
  for (const auto& u : lib["unresolved"]) {
    EXPECT_EQ(u["cause"], c["id"]) << u["symbol"];
    EXPECT_EQ(u["suggestions"], json::array()) << "a shadowing cause explains it: no did-you-mean";
    // Symbols under a node the stand-in lacks are version-mismatch; under GLIBCXX_3.4, shadowed.
    std::string v = u["version"].is_null() ? "" : u["version"].get<std::string>();
    bool node_missing = std::find(versions.begin(), versions.end(), v) != versions.end();
    EXPECT_EQ(u["classification"], node_missing ? "version-mismatch" : "shadowed") << u["symbol"];
    mismatched += node_missing;
  }
  EXPECT_GT(mismatched, 0u);
  EXPECT_EQ(c["symbols"], lib["unresolved"].size());
  for (const auto& mv : lib["missing_versions"]) EXPECT_EQ(mv["cause"], c["id"]) << mv["version"];
  EXPECT_EQ(lib["missing_versions"].size(), versions.size());

  auto text = run(kBin + args);
  std::string headline = "error: libstdc++.so.6 from " + old + " (ld_library_path) lacks " + versions.front() +
                         " ... " + versions.back() + " (" + std::to_string(versions.size()) + " version nodes) and " +
                         std::to_string(lib["unresolved"].size()) + " symbols that " + system + " (ld.so.cache) has\n";
  // The load's headline, then the cause's: one cause for everything the stale copy lacks.
  EXPECT_EQ(text.out.rfind("error: loading libstdcxx_user.so would fail: 1 cause\n" + headline, 0), 0u) << text.out;
  EXPECT_NE(text.out.find(">>> fix: remove the stale copy " + old + ", or take " + kFix +
                          "/stdcxx/old out of LD_LIBRARY_PATH (or --library-path)\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("did you mean"), std::string::npos);
}

TEST(Shadow, python_extension_symbols_come_from_the_interpreter) {
  std::string ext = quote(kFix + "/pyext/_pyext.so");
  // Without a python3 on PATH to host it (src/python/hosting.h), nothing defines the C API.
  const std::string no_host = "PATH=/nonexistent ";
  auto text = run(no_host + kBin + " " + ext);
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("error: 4 symbols of the Python C API come from the Python interpreter that loads this "
                          "extension (python3), not from a library it links\n>>> host-provided: PyArg_ParseTuple\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(
      text.out.find(">>> fix: check it as the interpreter loads it: --python (the first python3 on PATH that is "
                    "an ELF executable, past pyenv's and conda's shims), or --python=EXE for another interpreter\n"),
      std::string::npos);
  auto doc = json::parse(run(no_host + kBin + " --format json " + ext).out);
  ASSERT_EQ(doc["causes"].size(), 1u);
  EXPECT_EQ(doc["causes"][0]["kind"], "host");
  EXPECT_EQ(doc["causes"][0]["library"], "python3");
  EXPECT_EQ(doc["causes"][0]["symbols"], 4);
  for (const auto& u : doc["libraries"][0]["unresolved"]) EXPECT_EQ(u["cause"], doc["causes"][0]["id"]);

  // With the interpreter loaded first, the loader finds them all: Debian's python3 exports the C API
  // from the executable itself (it links no libpython); a libpython would come in as its dependency.
  std::string python = "/usr/bin/python3";
  if (!std::filesystem::exists(python)) MLC_SKIP() << python << " is absent";
  auto with = run(kBin + " --format json --python=" + python + " " + ext);
  EXPECT_EQ(with.status, 0) << with.out << with.err;
  EXPECT_EQ(json::parse(with.out)["summary"]["unresolved"], 0);
  // Bare --python finds an ELF python3 on PATH (skipping script shims) and leaves the input an input.
  auto bare = run("PATH=/usr/bin:/bin " + kBin + " --python " + ext);
  EXPECT_EQ(bare.status, 0) << bare.out << bare.err;
  // Without --python, the first python3 on PATH hosts it: it needs the C API and links no libpython.
  auto hosted = run("PATH=/usr/bin:/bin " + kBin + " --format json " + ext);
  EXPECT_EQ(hosted.status, 0) << hosted.out << hosted.err;
  EXPECT_EQ(json::parse(hosted.out)["libraries"][0]["host"], python);
}

TEST(Shadow, no_did_you_mean_from_another_namespace_for_a_std_name) {
  UnresolvedSymbol u;
  u.symbol = "_ZNKSt13runtime_error4whatEv";  // std::runtime_error::what() const
  u.suggestions = {{.symbol = "_ZNK4gloo14EnforceNotMet4whatEv",
                    .demangled = "gloo::EnforceNotMet::what() const",
                    .library = "/x/libgloo.so",
                    .reason = SuggestionReason::Namespace},
                   {.symbol = "_ZNKSt11logic_error4whatEv",
                    .demangled = "std::logic_error::what() const",
                    .library = "/x/libstdc++.so.6",
                    .reason = SuggestionReason::Namespace}};
  UnresolvedSymbol caused = u;
  caused.cause = "cause-1";
  UnresolvedSymbol other = u;
  other.symbol = "_ZNK2at6Tensor3dimEv";  // at::Tensor::dim() const: other namespaces stay plausible
  trace::filter_suggestions({&u, &caused, &other});
  ASSERT_EQ(u.suggestions.size(), 1u);
  EXPECT_EQ(u.suggestions[0].demangled, "std::logic_error::what() const");
  EXPECT_TRUE(caused.suggestions.empty());
  EXPECT_EQ(other.suggestions.size(), 2u);
}

}  // namespace
}  // namespace mlc
