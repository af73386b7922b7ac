// One test per loader rule, each on a fixture world of its own built from fixtures/loader: which
// symbols are unresolved, why, and where each needed library was found (or every path that was
// considered). Every world the running system can load is also loaded by the real loader: a libc-only
// host that dlopens it with RTLD_NOW (test::real_load) must fail exactly when the model finds a
// cause, and dlerror()'s cause must be one of the model's; ld.so's trace mode (test::real_trace, what
// ldd -r asks) names every cause, and the model must name exactly those; the copy of each needed
// library the model picks must be the one the real loader maps (/proc/self/maps when it loads, the
// trace's list when it does not). Search orders and dynamic string tokens are checked against the
// files the real loader tries (LD_DEBUG=libs, test::real_search).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "common/paths.h"
#include "elf/kept_relocations.h"
#include "loader/kept_bindings.h"
#include "loader/search_order.h"
#include "pipeline/linkcheck.h"
#include "real_loader.h"
#include "test_support.h"

namespace mlc {
namespace {

const std::string kFix = MLC_LOADER_FIXTURES;

// The model's causes in real_trace's words.
std::set<std::string> model_causes(const Report& r) {
  std::set<std::string> causes;
  for (const auto& l : r.libraries) {
    const std::string where = test::real_path_of(l.path);
    for (const auto& u : l.unresolved)
      causes.insert("undefined " + u.symbol + (u.version ? "@" + *u.version : "") + " in " + where);
    for (const auto& n : l.needed)
      if (!n.path && !n.refused) causes.insert("missing " + n.name);
    for (const auto& v : l.missing_versions) causes.insert("version " + v.version + " required by " + where);
  }
  return causes;
}

// dlerror()'s one cause in the same words ("" when it is none of the three kinds).
std::string dlerror_cause(const std::string& error) {
  std::smatch m;
  static const std::regex undefined(R"(^(.*): undefined symbol: ([^,\s]+)(?:, version (\S+))?$)");
  static const std::regex missing(R"(^(.*): cannot open shared object file(: .*)?$)");
  static const std::regex version(R"(^(.*): version `([^']+)' not found \(required by (.*)\)$)");
  if (std::regex_match(error, m, undefined))
    return "undefined " + m[2].str() + (m[3].matched ? "@" + m[3].str() : "") + " in " + test::real_path_of(m[1]);
  if (std::regex_match(error, m, missing)) return "missing " + m[1].str();
  if (std::regex_match(error, m, version)) return "version " + m[2].str() + " required by " + test::real_path_of(m[3]);
  return "";
}

// The model's verdict on one world against the real loader's (see the file's head).
void expect_real_loader_agrees(const std::string& target, const LinkcheckOptions& options, const Report& r) {
  std::vector<std::pair<std::string, bool>> preloads;
  std::vector<std::string> global;
  bool any_local = false;
  for (const auto& w : options.env.with) {
    const bool is_global =
        std::find(options.env.with_local.begin(), options.env.with_local.end(), w) == options.env.with_local.end();
    preloads.emplace_back(w, is_global);
    any_local |= !is_global;
    if (is_global) global.push_back(w);
  }
  auto real = test::real_load(target, options.env.library_path, preloads);
  ASSERT_TRUE(real.ok || !real.error.empty()) << "the real loader did not run";
  const std::set<std::string> causes = model_causes(r);
  EXPECT_EQ(real.ok, causes.empty()) << target << ": the real loader says " << (real.ok ? "ok" : real.error);
  if (!real.ok) {
    EXPECT_TRUE(causes.count(dlerror_cause(real.error)))
        << "dlerror() names a cause the model does not: " << real.error;
  }
  // An RTLD_LOCAL preload has no trace-mode counterpart (LD_PRELOAD is global).
  if (!any_local) {
    auto trace = test::real_trace(target, options.env.library_path, global);
    EXPECT_EQ(causes, trace.causes) << "the real loader's trace:\n" << trace.raw;
    size_t compared = 0;
    for (const auto& l : r.libraries)
      for (const auto& n : l.needed)
        if (n.path && trace.mapped.count(n.name)) {
          EXPECT_EQ(test::real_path_of(*n.path), trace.mapped.at(n.name)) << n.name << " needed by " << l.path;
          ++compared;
        }
    (void)compared;
  }
  if (!real.ok) return;
  size_t compared = 0;
  for (const auto& l : r.libraries)
    for (const auto& n : l.needed) {
      if (!n.path) continue;
      EXPECT_TRUE(real.maps(*n.path)) << *n.path << " is not the copy the real loader mapped";
      ++compared;
    }
  EXPECT_GT(compared, 0u) << target << ": no needed library to compare";
}

// The x86-64 level this machine's loader searches glibc-hwcaps subdirectories for (ld.so --help).
int machine_level() {
  auto levels = test::real_hwcaps_levels();
  return levels.empty() ? 1 : levels.front().back() - '0';
}

Report check(const std::string& rel, LinkcheckOptions options = {}) {
  options.env.x86_isa_level = machine_level();
  options.env.hwcap_avx512_1 = test::real_hwcap_avx512_1();
  const std::string real_platform = test::real_platform();
  if (options.env.platform_token.empty()) options.env.platform_token = real_platform;
  Report r = run_linkcheck({kFix + "/" + rel}, options);
  // A sysroot, or a platform other than this CPU's ("haswell" here, "x86_64" given), is not what this
  // machine's loader reads.
  if (options.env.sysroot.empty() && options.env.platform_token == real_platform) {
    LinkcheckOptions all = options;
    all.closure = true;  // the real load fails on any object's cause, not only the target's
    expect_real_loader_agrees(kFix + "/" + rel, all,
                              all.closure == options.closure ? r : run_linkcheck({kFix + "/" + rel}, all));
  }
  return r;
}

LinkcheckOptions closure() {
  LinkcheckOptions o;
  o.closure = true;
  return o;
}

const LibraryReport& lib(const Report& r, const std::string& rel) {
  for (const auto& l : r.libraries)
    if (l.path == kFix + "/" + rel) return l;
  ADD_FAILURE() << "no report for " << rel;
  static LibraryReport none;
  return none;
}

const NeededLibrary& needed(const LibraryReport& l, const std::string& name) {
  for (const auto& n : l.needed)
    if (n.name == name) return n;
  ADD_FAILURE() << l.path << " does not need " << name;
  static NeededLibrary none;
  return none;
}

std::vector<std::string> names(const LibraryReport& l) {
  std::vector<std::string> out;
  for (const auto& u : l.unresolved) out.push_back(u.symbol + (u.version ? "@" + *u.version : ""));
  return out;
}

using Names = std::vector<std::string>;

TEST(LoaderRules, rpath_is_searched_up_the_loader_chain) {
  Report r = check("chain/rpath/libchain_a.so", closure());
  EXPECT_TRUE(r.errors.empty());
  // glibc keeps the path as the search path spelled it ("../" included); so do we.
  const auto& b = lib(r, "chain/rpath/../b/libchain_b.so");
  // libchain_b.so has no search path of its own: libchain_a.so's DT_RPATH finds its dependency.
  EXPECT_EQ(needed(b, "libchain_c.so").path, kFix + "/chain/rpath/../c/libchain_c.so");
  EXPECT_EQ(needed(b, "libchain_c.so").how, loader::FoundHow::Rpath);
  EXPECT_EQ(r.unresolved_count(), 0u);
}

TEST(LoaderRules, runpath_is_not_inherited_by_dependencies) {
  Report r = check("chain/runpath/libchain_a.so", closure());
  const auto& a = lib(r, "chain/runpath/libchain_a.so");
  EXPECT_EQ(needed(a, "libchain_b.so").how, loader::FoundHow::Runpath);
  const auto& b = lib(r, "chain/runpath/../b/libchain_b.so");
  const auto& c = needed(b, "libchain_c.so");
  EXPECT_FALSE(c.path.has_value());
  ASSERT_FALSE(c.searched.empty());
  for (const auto& dir : c.searched) EXPECT_EQ(dir.find("/chain/c"), std::string::npos) << dir;
  ASSERT_EQ(names(b), Names{"chain_c"});
  EXPECT_EQ(b.unresolved[0].classification, Classification::MissingLibrary);
}

// dl-load.c _dl_map_object: "When the object has the RUNPATH information we don't use any RPATHs" - not
// even the DT_RPATH of the object that loaded it, which would find the library here.
TEST(LoaderRules, runpath_of_the_requester_hides_the_rpath_of_its_loaders) {
  Report r = check("chain/mix/libmix_a.so", closure());
  EXPECT_EQ(needed(lib(r, "chain/mix/libmix_a.so"), "libmix_b.so").how, loader::FoundHow::Rpath);
  const auto& b = lib(r, "chain/mix/b/libmix_b.so");
  const auto& c = needed(b, "libchain_c.so");
  EXPECT_FALSE(c.path.has_value());
  for (const auto& dir : c.searched) EXPECT_EQ(dir.find("/chain/c"), std::string::npos) << dir;
  ASSERT_EQ(names(b), Names{"chain_c"});
  EXPECT_EQ(b.unresolved[0].classification, Classification::MissingLibrary);
}

TEST(LoaderRules, rpath_comes_before_ld_library_path) {
  LinkcheckOptions o;
  o.env.library_path = {kFix + "/prec/llp"};
  Report r = check("prec/libprec_user_rpath.so", o);
  const auto& u = lib(r, "prec/libprec_user_rpath.so");
  EXPECT_EQ(needed(u, "libprec.so").path, kFix + "/prec/rp/libprec.so");
  EXPECT_EQ(needed(u, "libprec.so").how, loader::FoundHow::Rpath);
  EXPECT_TRUE(u.unresolved.empty());
}

TEST(LoaderRules, ld_library_path_comes_before_runpath) {
  LinkcheckOptions o;
  o.env.library_path = {kFix + "/prec/llp"};
  Report r = check("prec/libprec_user_runpath.so", o);
  const auto& u = lib(r, "prec/libprec_user_runpath.so");
  EXPECT_EQ(needed(u, "libprec.so").path, kFix + "/prec/llp/libprec.so");
  EXPECT_EQ(needed(u, "libprec.so").how, loader::FoundHow::LdLibraryPath);
  // The copy found first lacks the symbol the user was linked against.
  EXPECT_EQ(names(u), Names{"prec_from_rpath_dir"});
  // Without LD_LIBRARY_PATH the RUNPATH copy is used and everything resolves.
  Report plain = check("prec/libprec_user_runpath.so");
  EXPECT_EQ(needed(lib(plain, "prec/libprec_user_runpath.so"), "libprec.so").how, loader::FoundHow::Runpath);
  EXPECT_EQ(plain.unresolved_count(), 0u);
}

TEST(LoaderRules, origin_is_relative_to_symlink_location_not_realpath) {
  Report via_link = check("origin/linked/liborigin_user.so");
  const auto& l = lib(via_link, "origin/linked/liborigin_user.so");
  EXPECT_EQ(needed(l, "liborigin_dep.so").path, kFix + "/origin/linked/deps/liborigin_dep.so");
  EXPECT_EQ(via_link.unresolved_count(), 0u);

  Report via_real = check("origin/real/liborigin_user.so");
  const auto& r = lib(via_real, "origin/real/liborigin_user.so");
  EXPECT_FALSE(needed(r, "liborigin_dep.so").path.has_value());
  EXPECT_EQ(needed(r, "liborigin_dep.so").search.front().path, kFix + "/origin/real/deps/liborigin_dep.so");
  EXPECT_EQ(names(r), Names{"origin_dep"});
}

TEST(LoaderRules, ld_library_path_is_searched) {
  Report without = check("llp/libllp_user.so");
  EXPECT_FALSE(needed(lib(without, "llp/libllp_user.so"), "libllp_dep.so").path.has_value());
  EXPECT_EQ(names(lib(without, "llp/libllp_user.so")), Names{"llp_dep"});

  LinkcheckOptions o;
  o.env.library_path = {kFix + "/llp/elsewhere"};
  Report with = check("llp/libllp_user.so", o);
  const auto& n = needed(lib(with, "llp/libllp_user.so"), "libllp_dep.so");
  EXPECT_EQ(n.path, kFix + "/llp/elsewhere/libllp_dep.so");
  EXPECT_EQ(n.how, loader::FoundHow::LdLibraryPath);
  EXPECT_EQ(with.unresolved_count(), 0u);
}

TEST(LoaderRules, nodeflib_skips_system_cache_entries_and_default_dirs) {
  Report plain = check("nodeflib/libdeflib_user.so");
  const auto& m = needed(lib(plain, "nodeflib/libdeflib_user.so"), "libm.so.6");
  ASSERT_TRUE(m.path.has_value());
  EXPECT_EQ(m.how, loader::FoundHow::LdSoCache);

  Report nodef = check("nodeflib/libnodeflib_user.so");
  const auto& n = needed(lib(nodef, "nodeflib/libnodeflib_user.so"), "libm.so.6");
  EXPECT_FALSE(n.path.has_value());
  ASSERT_EQ(n.search.size(), 2u);
  EXPECT_EQ(n.search[0].how, loader::FoundHow::LdSoCache);
  EXPECT_EQ(loader::to_string(n.search[0].outcome), "skipped: in a system directory (NODEFLIB)");
  EXPECT_EQ(loader::to_string(n.search[1].outcome), "skipped: NODEFLIB");
}

TEST(LoaderRules, loaded_soname_satisfies_a_later_needed_entry) {
  Report r = check("soname/libdup_top.so", closure());
  const auto& second = lib(r, "soname/libdup_second.so");
  // libdup_second.so's RUNPATH would find two/libdup.so.1, but one/libdup.so.1 is already loaded
  // under that soname, and it lacks dup_two.
  EXPECT_EQ(needed(second, "libdup.so.1").path, kFix + "/soname/one/libdup.so.1");
  EXPECT_EQ(names(second), Names{"dup_two"});
  EXPECT_TRUE(lib(r, "soname/libdup_top.so").unresolved.empty());
}

TEST(LoaderRules, same_device_and_inode_is_one_object) {
  Report r = check("inode/libinode_user.so", closure());
  const auto& u = lib(r, "inode/libinode_user.so");
  // Two DT_NEEDED names, one file: the second name finds the object loaded under the first.
  EXPECT_EQ(needed(u, "libnoso.so").path, kFix + "/inode/lib/libnoso.so");
  EXPECT_EQ(needed(u, "libnoso_alias.so").path, kFix + "/inode/lib/libnoso.so");
  size_t copies = 0;
  for (const auto& l : r.libraries) copies += l.path.find("/inode/lib/") != std::string::npos;
  EXPECT_EQ(copies, 1u);
  EXPECT_EQ(r.unresolved_count(), 0u);
}

// dl-load.c _dl_dst_substitute, as the real loader applies it to one DT_RUNPATH holding every form of
// token (fixtures/loader "dst/forms"): known tokens, braced or not, expanded; an unknown $NAME, a
// token followed by an identifier character, an unterminated ${ kept literally; a directory named
// twice searched once. The files the model tries are the files the real loader
// tries (LD_DEBUG=libs), hwcaps subdirectories included.
TEST(LoaderRules, dynamic_string_tokens_expand_as_the_real_loader_expands_them) {
  const std::string target = kFix + "/dst/forms/libdst_forms.so";
  auto real = test::real_search(target, "libdst_nothere.so");
  ASSERT_FALSE(real.tried.empty()) << "the real loader tried nothing";
  auto p = loader::load_process(target, {});
  ASSERT_TRUE(p.ok()) << p.error().to_line();
  const loader::NeededEntry* entry = nullptr;
  for (const auto& n : p->objects[p->target].needed)
    if (n.name == "libdst_nothere.so") entry = &n;
  ASSERT_NE(entry, nullptr);
  EXPECT_FALSE(entry->object >= 0);
  // The model's whole order for that name (every candidate, as a fresh process tries each once).
  const auto& o = p->objects[p->target];
  loader::LoaderEnv env;
  env.x86_isa_level = machine_level();
  env.hwcap_avx512_1 = test::real_hwcap_avx512_1();
  env.platform_token = test::real_platform();
  auto platform = loader::search_platform(env, o.elf.machine, o.elf.is_64);
  std::vector<std::string> model;
  for (const auto& step : loader::search_order("libdst_nothere.so", *p, p->target, env, platform,
                                               *loader::read_system_cache(env, platform.default_dirs)))
    if (!step.passed_over && step.how == loader::FoundHow::Runpath) model.push_back(step.path);
  // Every file the loader tries from the RUNPATH, whole: a model that drops a trailing candidate fails.
  std::vector<std::string> tried_in_runpath;
  for (size_t k = 0; k < real.tried.size(); ++k)
    if (real.tried_from[k] == "RUNPATH") tried_in_runpath.push_back(real.tried[k]);
  ASSERT_FALSE(tried_in_runpath.empty()) << "LD_DEBUG=libs named no RUNPATH search";
  EXPECT_EQ(model, tried_in_runpath);
  // The literal directories are searched, and the one holding the library is where both find it.
  for (const char* literal : {"/dst/forms/d$UNKNOWN/", "/dst/forms/${ORIGIN/", "/dst/forms/$ORIGINX/"})
    EXPECT_NE(std::find(model.begin(), model.end(), kFix + literal + "libdst_nothere.so"), model.end()) << literal;
}

// A load decomposes each RPATH/RUNPATH list once (SearchDirsMemo, as glibc keeps l_rpath_dirs): the steps it
// lists are the steps listed without the memo, and a list is decomposed again for another $ORIGIN.
TEST(LoaderRules, search_lists_decomposed_once_are_the_lists_decomposed_each_time) {
  auto p = loader::load_process(kFix + "/dst/forms/libdst_forms.so", {});
  ASSERT_TRUE(p.ok()) << p.error().to_line();
  const auto& o = p->objects[p->target];
  ASSERT_TRUE(o.elf.runpath.has_value());
  loader::LoaderEnv env;
  const auto platform = loader::search_platform(env, o.elf.machine, o.elf.is_64);
  const auto cache = loader::read_system_cache(env, platform.default_dirs);
  loader::SearchDirsMemo memo;
  const auto listed = [](const loader::SearchSteps& steps) {
    std::vector<std::vector<std::string>> out;
    for (const auto& item : steps.items) out.push_back(item.dirs ? *item.dirs : std::vector<std::string>{});
    return out;
  };
  const auto once = loader::search_steps("libdst_nothere.so", *p, p->target, env, platform, *cache, &memo);
  const auto again = loader::search_steps("libother.so", *p, p->target, env, platform, *cache, &memo);
  const auto fresh = loader::search_steps("libdst_nothere.so", *p, p->target, env, platform, *cache);
  EXPECT_EQ(listed(once), listed(fresh));
  ASSERT_FALSE(once.items.empty());
  ASSERT_TRUE(once.items[0].dirs && !once.items[0].dirs->empty());
  EXPECT_EQ(once.items[0].dirs, again.items[0].dirs);  // the same list, decomposed once
  EXPECT_NE(once.items[0].dirs, fresh.items[0].dirs);
  const auto here = memo.tag_dirs(*o.elf.runpath, o.origin, env, platform);
  const auto elsewhere = memo.tag_dirs(*o.elf.runpath, "/elsewhere", env, platform);
  EXPECT_EQ(here, once.items[0].dirs);
  ASSERT_EQ(elsewhere->size(), here->size());
  EXPECT_NE(*elsewhere, *here);  // $ORIGIN expands to the other directory
  EXPECT_NE(std::find(elsewhere->begin(), elsewhere->end(), "/elsewhere/x"), elsewhere->end());  // ${ORIGIN}/x/
}

TEST(LoaderRules, versioned_reference_binds_only_to_its_version) {
  Report r = check("ver/libver_moved_user.so");
  const auto& u = lib(r, "ver/libver_moved_user.so");
  // ver_moved is in VER_1 at run time, not in VER_2.
  ASSERT_EQ(names(u), (Names{"ver_moved@VER_2"}));
  EXPECT_EQ(u.unresolved[0].classification, Classification::VersionMismatch);
  EXPECT_EQ(u.unresolved[0].reason, "defined in " + kFix + "/ver/run/libver.so.1, but not with version VER_2");
  EXPECT_TRUE(u.missing_versions.empty());
}

TEST(LoaderRules, hidden_version_is_invisible_to_unversioned_reference) {
  Report r = check("ver/libver_hid_user.so");
  const auto& u = lib(r, "ver/libver_hid_user.so");
  // ver_hid has only a hidden version (VER_2, not the default).
  ASSERT_EQ(names(u), (Names{"ver_hid"}));
  EXPECT_FALSE(u.unresolved[0].version.has_value());
  EXPECT_EQ(u.unresolved[0].classification, Classification::Hidden);
}

TEST(LoaderRules, missing_version_node_is_reported_as_such) {
  Report r = check("ver/libver_user3.so");
  const auto& u = lib(r, "ver/libver_user3.so");
  ASSERT_EQ(u.missing_versions.size(), 1u);
  EXPECT_EQ(u.missing_versions[0].version, "VER_2");
  EXPECT_EQ(u.missing_versions[0].file, "libver.so.1");
  EXPECT_EQ(u.missing_versions[0].provider, kFix + "/ver/run3/libver.so.1");
  EXPECT_EQ(names(u), Names{"ver_new@VER_2"});
}

// A world whose only unresolved reference is weak: it loads, for the model and for the real loader.
TEST(LoaderRules, weak_undefined_reference_is_never_an_error) {
  Report r = check("weak/libweak_only_user.so");
  EXPECT_TRUE(lib(r, "weak/libweak_only_user.so").unresolved.empty());
  EXPECT_EQ(r.unresolved_count(), 0u);
  EXPECT_TRUE(r.errors.empty());
}

// The same reference beside a strong one: only the strong one is a finding.
TEST(LoaderRules, strong_undefined_reference_beside_a_weak_one_is_the_only_finding) {
  Report r = check("weak/libweak_user.so");
  EXPECT_EQ(names(lib(r, "weak/libweak_user.so")), Names{"strong_missing"});
  EXPECT_EQ(lib(r, "weak/libweak_user.so").unresolved[0].classification, Classification::Unknown);
}

TEST(LoaderRules, hidden_definition_does_not_satisfy_a_reference) {
  Report r = check("hid/libhid_user.so");
  const auto& u = lib(r, "hid/libhid_user.so");
  ASSERT_EQ(names(u), Names{"hid_func"});
  EXPECT_EQ(u.unresolved[0].classification, Classification::Hidden);
  ASSERT_TRUE(u.unresolved[0].origin.has_value());
  EXPECT_EQ(u.unresolved[0].origin->file, kFix + "/hid/run/libhid.so");
  EXPECT_EQ(u.unresolved[0].fix->kind, FixKind::ExportSymbol);
}

TEST(LoaderRules, missing_library_lists_every_path_considered_in_order) {
  LinkcheckOptions o;
  o.env.library_path = {kFix + "/miss/third"};
  Report r = check("miss/libmiss_user.so", o);
  const auto& u = lib(r, "miss/libmiss_user.so");
  const auto& n = needed(u, "libnothere.so.1");
  EXPECT_FALSE(n.path.has_value());
  std::vector<std::string> got;
  for (const auto& s : n.search)
    got.push_back(s.path + " [" + loader::to_string(s.how) + "] " + loader::to_string(s.outcome));
  std::vector<std::string> want = {
      kFix + "/miss/first/libnothere.so.1 [rpath] not found",
      kFix + "/miss/second/libnothere.so.1 [rpath] not found",
      kFix + "/miss/third/libnothere.so.1 [ld_library_path] not found",
      "/etc/ld.so.cache [ld.so.cache] no entry",
      "/lib/x86_64-linux-gnu/libnothere.so.1 [default] not found",
      "/usr/lib/x86_64-linux-gnu/libnothere.so.1 [default] not found",
      "/lib/libnothere.so.1 [default] not found",
      "/usr/lib/libnothere.so.1 [default] not found",
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(n.searched.front(), kFix + "/miss/first");
  // The real loader tries the same files in the same order. glibc also tries each hwcaps and legacy
  // subdirectory (glibc-hwcaps/x86-64-v3, tls, x86_64) of a search directory, where the model lists
  // only the subdirectories that exist: those are left out of the loader's list alone. The host's own
  // start already tried LD_LIBRARY_PATH (for libc) and glibc then passes over a directory it found
  // missing, where the model tells a fresh search: a missing LD_LIBRARY_PATH directory is left out of
  // the model's. Every other path the model names is compared, whether its directory exists or not.
  auto real = test::real_search(kFix + "/miss/libmiss_user.so", "libnothere.so.1", o.env.library_path);
  auto dir_exists = [](const std::string& path) { return is_dir(std::filesystem::path(path).parent_path().string()); };
  auto absent_subdirectory = [&](const std::string& path) {
    static const std::regex subdirectory(R"(.*/(glibc-hwcaps/[^/]+|((tls|x86_64|haswell|xeon_phi|avx512_1)/?)+)$)");
    return !dir_exists(path) && std::regex_match(std::filesystem::path(path).parent_path().string(), subdirectory);
  };
  std::vector<std::string> model_paths, real_paths;
  for (const auto& s : n.search)
    if (s.how != loader::FoundHow::LdSoCache && !(s.how == loader::FoundHow::LdLibraryPath && !dir_exists(s.path)))
      model_paths.push_back(s.path);
  for (const auto& t : real.tried)
    if (!absent_subdirectory(t)) real_paths.push_back(t);
  ASSERT_FALSE(real_paths.empty());
  EXPECT_EQ(model_paths, real_paths);
  EXPECT_EQ(names(u), Names{"nothere_func"});
  EXPECT_EQ(u.unresolved[0].classification, Classification::MissingLibrary);
}

TEST(LoaderRules, library_loaded_with_satisfies_references) {
  Report alone = check("with/libkernels.so");
  EXPECT_EQ(names(lib(alone, "with/libkernels.so")), Names{"torchlike_op"});

  LinkcheckOptions o;
  o.env.with = {kFix + "/with/libtorchlike.so"};
  Report with = check("with/libkernels.so", o);
  EXPECT_EQ(with.unresolved_count(), 0u);
  EXPECT_TRUE(with.errors.empty());
}

TEST(LoaderRules, platform_token_expands_in_runpath) {
  LinkcheckOptions o;
  o.env.platform_token = "x86_64";
  Report r = check("dst/libdst_user.so", o);
  const auto& n = needed(lib(r, "dst/libdst_user.so"), "libdst_dep.so");
  EXPECT_EQ(n.path, kFix + "/dst/x86_64/libdst_dep.so");
  EXPECT_EQ(n.how, loader::FoundHow::Runpath);
}

TEST(LoaderRules, sysroot_uses_its_ld_so_conf_when_it_has_no_cache) {
  ASSERT_FALSE(std::ifstream(kFix + "/sysroot/etc/ld.so.cache").good()) << "the fixture sysroot must have no cache";
  LinkcheckOptions o;
  o.env.sysroot = kFix + "/sysroot";
  Report r = check("sysroot_user/libsysroot_user.so", o);
  const auto& n = needed(lib(r, "sysroot_user/libsysroot_user.so"), "libvendor.so.2");
  EXPECT_EQ(n.path, kFix + "/sysroot/opt/vendor/lib/libvendor.so.2");
  EXPECT_EQ(n.how, loader::FoundHow::LdSoConf);
  EXPECT_EQ(r.unresolved_count(), 0u);
}

// dl-load.c expands $ORIGIN to the directory the object was loaded from, a path on disk already:
// under --sysroot only the absolute elements of a search path move into the sysroot, never $ORIGIN's.
TEST(LoaderRules, origin_element_under_a_sysroot_is_the_objects_own_directory) {
  LinkcheckOptions o;
  o.env.sysroot = kFix + "/sysroot";
  Report r = check("prec/libprec_user_runpath.so", o);
  const auto& n = needed(lib(r, "prec/libprec_user_runpath.so"), "libprec.so");
  EXPECT_EQ(n.path, kFix + "/prec/rp/libprec.so");
  EXPECT_EQ(n.how, loader::FoundHow::Runpath);
  EXPECT_EQ(r.unresolved_count(), 0u);
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

const UnresolvedSymbol* find_symbol(const LibraryReport& l, const std::string& name) {
  for (const auto& u : l.unresolved)
    if (u.symbol == name) return &u;
  return nullptr;
}

TEST(Suggestions, abi_drift_extern_c_and_namespace_moves_are_suggested) {
  LinkcheckOptions o;
  o.trace.cuda_home = "";
  Report r = check("abi/libabi_user.so", o);
  const auto& u = lib(r, "abi/libabi_user.so");
  ASSERT_EQ(u.unresolved.size(), 5u);
  const std::string provider = kFix + "/abi/libabi_provider.so";

  const auto* take = find_symbol(u, "_ZN2ns4takeENS_6WidgetE");
  ASSERT_NE(take, nullptr);
  EXPECT_EQ(take->classification, Classification::AbiMismatch);
  ASSERT_EQ(take->suggestions.size(), 1u);
  EXPECT_EQ(take->suggestions[0].symbol, "_ZN2ns4takeERKNS_6WidgetE");
  EXPECT_EQ(take->suggestions[0].demangled, "ns::take(ns::Widget const&)");
  EXPECT_EQ(take->suggestions[0].reason, SuggestionReason::ByValue);
  EXPECT_EQ(take->suggestions[0].library, provider);
  EXPECT_EQ(take->fix->kind, FixKind::RebuildAbi);

  const auto* label = find_symbol(u, "_ZN2ns5labelEi");
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->classification, Classification::AbiMismatch);
  EXPECT_EQ(label->suggestions.at(0).symbol, "_ZN2ns5labelB5cxx11Ei");
  EXPECT_EQ(label->suggestions.at(0).reason, SuggestionReason::Cxx11Abi);

  const auto* legacy = find_symbol(u, "legacy_init");
  ASSERT_NE(legacy, nullptr);
  EXPECT_EQ(legacy->suggestions.at(0).symbol, "_Z11legacy_initv");
  EXPECT_EQ(legacy->suggestions.at(0).reason, SuggestionReason::ExternC);
  const auto* modern = find_symbol(u, "_Z11modern_initv");
  ASSERT_NE(modern, nullptr);
  EXPECT_EQ(modern->suggestions.at(0).symbol, "modern_init");
  EXPECT_EQ(modern->suggestions.at(0).reason, SuggestionReason::ExternC);
  const auto* moved = find_symbol(u, "_ZN5oldns5movedEi");
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->suggestions.at(0).demangled, "newns::moved(int)");
  EXPECT_EQ(moved->suggestions.at(0).reason, SuggestionReason::Namespace);
}

// The look-ups of a process kept between runs (loader/kept_bindings.h): the same files in the same places are
// answered with what the first run bound, and nothing else is: a library rebuilt, another copy found first,
// or a garbled entry is bound again. The real loader agrees with every outcome (ldd -r).
TEST(KeptBindings, the_same_process_is_answered_as_bound_and_a_rebuilt_library_or_another_copy_is_bound_again) {
  const std::string dir = test::scratch_dir("kept-bindings");
  std::filesystem::create_directories(dir + "/a");
  std::filesystem::create_directories(dir + "/b");
  auto build_dep = [&](const std::string& where, const std::string& source) {
    test::write_file(where + "/dep.c", source);
    auto built = test::run("cc -shared -fPIC -Wl,-soname,libdep.so.1 -o " + test::quote(where + "/libdep.so.1") + " " +
                           test::quote(where + "/dep.c"));
    ASSERT_EQ(built.status, 0) << built.err;
  };
  build_dep(dir + "/a", "int d1(void) { return 1; }\n");
  build_dep(dir + "/b", "int d1(void) { return 1; }\nint d2(void) { return 2; }\n");
  test::write_file(dir + "/user.c", "extern int d1(void), d2(void);\nint u(void) { return d1() + d2(); }\n");
  const std::string user = dir + "/libuser.so";
  auto linked = test::run("cc -shared -fPIC -o " + test::quote(user) + " " + test::quote(dir + "/user.c") + " " +
                          test::quote(dir + "/a/libdep.so.1"));
  ASSERT_EQ(linked.status, 0) << linked.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));  // not changed in the last two seconds

  const loader::KeptBindings kept(dir + "/cache");
  const elf::KeptRelocations relocations(dir + "/cache");
  auto unresolved = [&](const std::string& from) {
    loader::LoaderEnv env;
    env.library_path = {dir + "/" + from};
    auto p = loader::load_process(user, env);
    EXPECT_TRUE(p.ok());
    loader::read_symbol_tables(*p, {p->target}, &relocations);
    std::vector<std::string> out;
    for (const auto& u : loader::bind(*p, {p->target}, env, &kept).unresolved)
      out.push_back(std::string(u.name) + (u.miss == loader::Miss::NoDefinition ? "" : " (near miss)"));
    return out;
  };
  auto real = [&](const std::string& from) {
    return test::run("LD_LIBRARY_PATH=" + test::quote(dir + "/" + from) + " ldd -r " + test::quote(user) +
                     " 2>&1 | grep -c 'undefined symbol: d2'")
        .out;
  };
  const std::vector<std::string> d2{"d2"}, none;
  EXPECT_EQ(unresolved("a"), d2);
  EXPECT_EQ(real("a"), "1\n");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cache/bindings")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u) << "the process's look-ups were not kept";
  // The kept entry answers: planted there, another reason for the miss is what the next run says.
  std::ifstream in(files[0]);
  const std::string kept_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t row = kept_text.find("\nU\t");
  ASSERT_NE(row, std::string::npos) << kept_text;
  std::string planted = kept_text;
  const size_t miss = planted.find('\t', planted.find('\t', row + 3) + 1) + 1;  // U object symbol MISS near
  ASSERT_EQ(planted.substr(miss, 2), "0\t");
  planted[miss] = '3';
  test::write_file(files[0].string(), planted);
  EXPECT_EQ(unresolved("a"), std::vector<std::string>{"d2 (near miss)"});
  // A garbled entry is no answer: bound again (and kept again).
  test::write_file(files[0].string(), "mlc-bindings 1\ngarbage\n");
  EXPECT_EQ(unresolved("a"), d2);
  EXPECT_EQ(unresolved("a"), d2);

  // Another copy found first (LD_LIBRARY_PATH): another process, bound again.
  EXPECT_EQ(unresolved("b"), none);
  EXPECT_EQ(real("b"), "0\n");
  // The library rebuilt in place with the missing definition: bound again.
  build_dep(dir + "/a", "int d1(void) { return 1; }\nint d2(void) { return 2; }\n");
  EXPECT_EQ(unresolved("a"), none);
  EXPECT_EQ(real("a"), "0\n");
  std::filesystem::remove_all(dir);
}

// Where an initial-exec TLS reference binds is kept with the look-ups ("T object symbol provider"): a
// planted provider is what the next run's static TLS check reaches, and one naming no object of the process
// is looked up again. ldd -r agrees with the unplanted outcome.
TEST(KeptBindings, where_an_initial_exec_reference_binds_is_kept_and_a_planted_provider_is_what_the_next_run_reaches) {
  const std::string dir = test::scratch_dir("kept-tls");
  test::write_file(dir + "/x.c", "__thread int x = 5;\n");
  test::write_file(
      dir + "/ie.c",
      "extern __thread int x __attribute__((tls_model(\"initial-exec\")));\nint get(void) { return x; }\n");
  const std::string ie = dir + "/libie.so";
  auto built = test::run("cc -shared -fPIC -Wl,-soname,libx.so -o " + test::quote(dir + "/libx.so") + " " +
                         test::quote(dir + "/x.c") + " && cc -shared -fPIC -Wl,-rpath,'$ORIGIN' -o " + test::quote(ie) +
                         " " + test::quote(dir + "/ie.c") + " " + test::quote(dir + "/libx.so"));
  ASSERT_EQ(built.status, 0) << built.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));  // not changed in the last two seconds

  const loader::KeptBindings kept(dir + "/cache");
  auto failures = [&] {
    loader::LoaderEnv env;
    auto p = loader::load_process(ie, env);
    EXPECT_TRUE(p.ok());
    loader::read_symbol_tables(*p, {p->target});
    std::vector<std::string> out;
    for (const auto& f : loader::bind(*p, {p->target}, env, &kept).failures)
      out.push_back(std::string(loader::to_string(f.kind)) + " " + base_name(f.file));
    return out;
  };
  const std::vector<std::string> none;
  EXPECT_EQ(failures(), none);
  const auto real = test::run("ldd -r " + test::quote(ie) + " 2>&1");
  EXPECT_EQ(real.status, 0) << real.out;
  EXPECT_EQ(real.out.find("undefined symbol"), std::string::npos) << real.out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cache/bindings")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u) << "the process's look-ups were not kept";
  std::ifstream in(files[0]);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t row = text.find("\nT\t");
  ASSERT_NE(row, std::string::npos) << text;
  const size_t object = row + 3, symbol = text.find('\t', object) + 1, provider = text.find('\t', symbol) + 1;
  const size_t end = text.find('\n', provider);
  const std::string referencing = text.substr(object, symbol - 1 - object);
  ASSERT_NE(text.substr(provider, end - provider), referencing) << text;  // libx.so, not libie.so itself
  // Planted: the reference reaches libie.so itself, which has no TLS block (the division by its zero alignment).
  test::write_file(files[0].string(), text.substr(0, provider) + referencing + text.substr(end));
  EXPECT_EQ(failures(), std::vector<std::string>{"tls-mismatch libie.so"});
  // A provider the process does not have is no answer: looked up again.
  test::write_file(files[0].string(), text.substr(0, provider) + "99" + text.substr(end));
  EXPECT_EQ(failures(), none);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlc
