// Ownership that costs nothing per run: a site directory's dist-info RECORDs and a
// conda prefix's conda-meta, indexed once (shared objects only) and cached by their mtimes. The site
// is built here with gcc-built modules; Python's own importlib.metadata, which reads the same
// RECORDs, is the oracle for who owns each file.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "environment/ownership.h"
#include "environment/site_index.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::read_file;
using test::run;
using test::write_file;

const std::string kBin = MLC_LINKCHECK_BIN;

void put(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  write_file(path, text);
}

void build_so(const std::string& root, const std::string& out) {
  fs::create_directories(fs::path(out).parent_path());
  put(root + "/m.c", "int f(void) { return 1; }\n");
  auto r = run("gcc -shared -fPIC -o " + quote(out) + " " + quote(root + "/m.c"));
  ASSERT_EQ(r.status, 0) << r.err;
}

// pip's RECORD: path,sha256=...,size; a path with a comma quoted.
std::string record(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += (p.find(',') != std::string::npos ? "\"" + p + "\"" : p) + ",sha256=AAAA,1\n";
  return out;
}

// Python's answer: for every distribution on `site`, each file it records -> "name version".
std::map<std::string, std::string> importlib_owners(const std::string& site) {
  auto r = run("env PYTHONPATH=" + quote(site) + " /usr/bin/python3 -c " +
               quote("import importlib.metadata as m, json, sys\n"
                     "out = {}\n"
                     "for d in m.distributions(path=[sys.argv[1]]):\n"
                     "    for f in d.files or []:\n"
                     "        out[str(f)] = d.metadata['Name'] + ' ' + d.version\n"
                     "print(json.dumps(out))\n") +
               " " + quote(site));
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false).get<std::map<std::string, std::string>>();
}

std::string owner_text(const PackageOwner& o) { return o.name + " " + o.version; }

void dist_info(const std::string& site, const std::string& name, const std::string& version,
               const std::vector<std::string>& files) {
  std::string dir = site + "/" + name + "-" + version + ".dist-info";
  put(dir + "/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
  std::vector<std::string> all = files;
  all.push_back(name + "-" + version + ".dist-info/METADATA");
  all.push_back(name + "-" + version + ".dist-info/RECORD");
  put(dir + "/RECORD", record(all));
}

TEST(SiteOwners, dist_info_records_are_indexed_once_and_rebuilt_when_a_package_changes) {
  std::string root = test::scratch_dir("site-owners"), site = root + "/site-packages", cache = root + "/cache";
  const std::string a = "pkga/_a.cpython-311-x86_64-linux-gnu.so", liba = "pkga.libs/libfoo-1a2b.so.1",
                    b = "pkgb/_b.cpython-311-x86_64-linux-gnu.so", c = "pkgc/_c.so";
  for (const auto& f : {a, liba, b, c}) build_so(root, site + "/" + f);
  put(site + "/pkga/__init__.py", "");
  dist_info(site, "pkga", "1.0", {a, liba, "pkga/__init__.py", "pkga/x,y.py"});
  dist_info(site, "pkgb", "2.0", {b});
  environment::OwnerSources sources{.dpkg_dir = "", .sdk_homes = {}, .cache_dir = cache};
  auto owners_of = [&] {
    return environment::find_owners(
        {site + "/" + a, site + "/" + liba, site + "/" + b, site + "/" + c, site + "/pkga/__init__.py"}, sources);
  };
  auto check_against_python = [&](const std::map<std::string, PackageOwner>& owners) {
    auto oracle = importlib_owners(site);
    for (const auto& f : {a, liba, b, c, std::string("pkga/__init__.py")}) {
      SCOPED_TRACE(f);
      auto it = owners.find(site + "/" + f);
      if (!oracle.count(f)) {
        EXPECT_EQ(it, owners.end()) << owner_text(it->second);
        continue;
      }
      ASSERT_NE(it, owners.end());
      EXPECT_EQ(it->second.kind, OwnerKind::Python);
      EXPECT_EQ(owner_text(it->second), oracle[f]);
    }
  };

  auto first = environment::load_site_index(site, environment::RecordSource::DistInfo, cache);
  EXPECT_FALSE(first.from_cache);
  // Shared objects and a package's __init__.py only: not METADATA, RECORD or other Python files.
  EXPECT_EQ(first.files.size(), 4u);
  EXPECT_EQ(owner_text(first.files.at(liba)), "pkga 1.0");
  auto second = environment::load_site_index(site, environment::RecordSource::DistInfo, cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.files.size(), 4u);
  check_against_python(owners_of());
  std::vector<std::string> files;  // beside the index, which directories hold dist-info (its own test)
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename() != "dist-info-dirs.tsv") files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(fs::path(files[0]).filename().string().substr(0, 12), "site-owners-");
  // A path that is not indexed (not a shared object) is still found, in the full records.
  EXPECT_EQ(owner_text(environment::find_owners({site + "/pkga/x,y.py"}, sources).at(site + "/pkga/x,y.py")),
            "pkga 1.0");

  // A RECORD rewritten in place (the vendored library moves to pkgb): the dist-info directory's
  // mtime does not change, RECORD's does.
  put(site + "/pkga-1.0.dist-info/RECORD", record({a, "pkga/__init__.py", "pkga-1.0.dist-info/RECORD"}));
  put(site + "/pkgb-2.0.dist-info/RECORD",
      record({b, liba, "pkgb-2.0.dist-info/METADATA", "pkgb-2.0.dist-info/RECORD"}));
  EXPECT_FALSE(environment::load_site_index(site, environment::RecordSource::DistInfo, cache).from_cache);
  auto owners = owners_of();
  EXPECT_EQ(owner_text(owners.at(site + "/" + liba)), "pkgb 2.0");
  check_against_python(owners);

  // A dist-info added (pip install pkgc), then one removed (pip uninstall pkgb).
  dist_info(site, "pkgc", "3.0", {c});
  owners = owners_of();
  EXPECT_EQ(owner_text(owners.at(site + "/" + c)), "pkgc 3.0");
  check_against_python(owners);
  fs::remove_all(site + "/pkgb-2.0.dist-info");
  owners = owners_of();
  EXPECT_FALSE(owners.count(site + "/" + b));
  EXPECT_FALSE(owners.count(site + "/" + liba));
  check_against_python(owners);
  auto settled = environment::load_site_index(site, environment::RecordSource::DistInfo, cache);
  EXPECT_TRUE(settled.from_cache);
  EXPECT_EQ(settled.files.size(), 3u);

  // A garbled cache (cut short, then binary junk after the magic, then a key alone) is ignored, never
  // an error: the answer is right and the cache rewritten as it was.
  std::string good = read_file(files[0]);
  for (const std::string& bad :
       {good.substr(0, good.size() - 5), std::string("mlc-site-owner-index 1\n\x01\x02\xff junk\n"),
        good.substr(0, good.find("endkey\n") + 7), std::string()}) {
    put(files[0], bad);
    auto rebuilt = environment::load_site_index(site, environment::RecordSource::DistInfo, cache);
    EXPECT_FALSE(rebuilt.from_cache);
    EXPECT_EQ(rebuilt.files.size(), 3u);
    EXPECT_EQ(read_file(files[0]), good);
    put(files[0], bad);
    check_against_python(owners_of());
    EXPECT_EQ(read_file(files[0]), good);
  }

  // The report says it, from the cache as from the records.
  for (int run_no = 0; run_no < 2; ++run_no) {
    auto r = run(kBin + " --cuda-home '' --cache-dir " + quote(cache) + " " + quote(site + "/" + a));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("note: " + site + "/" + a + " from Python package pkga 1.0\n"), std::string::npos) << r.out;
  }
}

// A library found through $ORIGIN/../.. is named with ".." in it (a pip torch venv names 23 spellings of
// site-packages so): one site directory is one index, whatever the spelling, and each file keeps its owner.
// With the indexes prefetched (as a run starts them), the answers are the same.
TEST(SiteOwners, every_spelling_of_a_site_directory_is_one_index_and_prefetched_indexes_give_the_same_owners) {
  std::string root = test::scratch_dir("site-spellings"), site = root + "/site-packages", cache = root + "/cache";
  const std::string a = "pkga/sub/_a.cpython-311-x86_64-linux-gnu.so", liba = "pkga.libs/libfoo-1a2b.so.1";
  for (const auto& f : {a, liba}) build_so(root, site + "/" + f);
  dist_info(site, "pkga", "1.0", {a, liba});
  const std::vector<std::string> asked = {site + "/" + a, site + "/pkga/sub/../../" + liba, site + "/pkga/../" + liba,
                                          site + "/pkga/./sub/../../" + liba};
  environment::OwnerSources sources{.dpkg_dir = "", .sdk_homes = {}, .cache_dir = cache};
  auto owners = environment::find_owners(asked, sources);
  for (const auto& path : asked) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(owners.count(path));
    EXPECT_EQ(owner_text(owners.at(path)), "pkga 1.0");
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename() != "dist-info-dirs.tsv") files.push_back(e.path().filename().string());
  EXPECT_EQ(files.size(), 1u) << "one index per site directory, not per spelling";

  environment::OwnerPrefetch prefetch(sources, {site + "/" + a, site + "/" + liba});
  auto prefetched = environment::find_owners(asked, sources, &prefetch);
  EXPECT_EQ(prefetched.size(), owners.size());
  for (const auto& [path, owner] : owners) EXPECT_EQ(owner_text(prefetched.at(path)), owner_text(owner)) << path;
  fs::remove_all(root);
}

// One input's owner is read beside its load (its site index prefetched, as a tree's are), but a run that
// would make no cache directory makes none: not under a --build-dir that does not exist.
TEST(SiteOwners, one_input_prefetches_its_own_site_index_and_makes_no_cache_directory_a_run_would_not) {
  std::string root = test::scratch_dir("site-one-input"), site = root + "/site-packages";
  const std::string a = "pkga/_a.cpython-311-x86_64-linux-gnu.so";
  build_so(root, site + "/" + a);
  dist_info(site, "pkga", "1.0", {a});
  environment::OwnerSources sources{.dpkg_dir = "", .sdk_homes = {}, .cache_dir = root + "/cache"};
  {
    environment::OwnerPrefetch prefetch(sources, {site + "/" + a});
    auto index = prefetch.take_site(site);
    ASSERT_TRUE(index.has_value()) << "one input's site index is read beside its load";
    EXPECT_EQ(owner_text(index->files.at(a)), "pkga 1.0");
    EXPECT_FALSE(prefetch.take_site(site).has_value()) << "taken once";
  }
  environment::OwnerPrefetch prefetch(sources, {site + "/" + a});
  auto owners = environment::find_owners({site + "/" + a}, sources, &prefetch);
  EXPECT_EQ(owner_text(owners.at(site + "/" + a)), "pkga 1.0");
  const std::string missing_build = root + "/build-not-made";
  sources.cache_dir = missing_build + "/.musa-linkcheck-cache";
  { environment::OwnerPrefetch unmade(sources, {site + "/" + a}); }
  EXPECT_FALSE(fs::exists(missing_build));
  fs::remove_all(root);
}

// Which directories hold dist-info is kept between runs by each directory's identity: the next run
// answers from the cache (a row made to say otherwise is believed), a directory given a dist-info since is
// listed again (its mtime moved), and a directory changed in the last two seconds is answered, not kept.
TEST(SiteOwners, which_directories_hold_dist_info_is_kept_by_each_directorys_identity) {
  std::string root = test::scratch_dir("site-dist-info-dirs"), site = root + "/site-packages";
  const std::string a = "pkga/lib/liba.so";
  put(site + "/" + a, "not read\n");
  dist_info(site, "pkga", "1.0", {a});
  put(root + "/plain/lib/libb.so", "not read\n");
  environment::OwnerSources sources{.dpkg_dir = "", .sdk_homes = {}, .cache_dir = root + "/cache"};
  const std::string kept = root + "/cache/dist-info-dirs.tsv";
  // Just made: answered, not kept.
  auto owners = environment::find_owners({site + "/" + a, root + "/plain/lib/libb.so"}, sources);
  EXPECT_EQ(owner_text(owners.at(site + "/" + a)), "pkga 1.0");
  EXPECT_FALSE(owners.count(root + "/plain/lib/libb.so"));
  {
    const std::string first = fs::exists(kept) ? read_file(kept) : "";  // the settled ancestors above root only
    EXPECT_EQ(first.find("\t" + site + "\n"), std::string::npos) << first;
    EXPECT_EQ(first.find("\t" + root + "/plain/lib\n"), std::string::npos) << first;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));  // not changed in the last two seconds
  owners = environment::find_owners({site + "/" + a, root + "/plain/lib/libb.so"}, sources);
  EXPECT_EQ(owner_text(owners.at(site + "/" + a)), "pkga 1.0");
  const std::string text = read_file(kept);
  EXPECT_NE(text.find("\t1\t" + site + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\t0\t" + root + "/plain/lib\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\t0\t" + root + "/plain\n"), std::string::npos) << text;
  // The kept answer is the answer while the directory is the same: a row saying "none" hides pkga.
  std::string denied = text;
  denied.replace(denied.find("\t1\t" + site + "\n"), 3, "\t0\t");
  write_file(kept, denied);
  EXPECT_FALSE(environment::find_owners({site + "/" + a}, sources).count(site + "/" + a));
  // A dist-info made in a directory kept as holding none: its identity moved, it is listed again.
  dist_info(root + "/plain", "plainb", "2.0", {"lib/libb.so"});
  owners = environment::find_owners({root + "/plain/lib/libb.so"}, sources);
  ASSERT_TRUE(owners.count(root + "/plain/lib/libb.so")) << read_file(kept);
  EXPECT_EQ(owner_text(owners.at(root + "/plain/lib/libb.so")), "plainb 2.0");
  fs::remove_all(root);
}

TEST(SiteOwners, conda_meta_is_indexed_once_and_rebuilt_when_a_package_changes) {
  std::string root = test::scratch_dir("conda-owners"), prefix = root + "/env", cache = root + "/cache";
  build_so(root, prefix + "/lib/libstdc++.so.6.0.30");
  build_so(root, prefix + "/lib/libz.so.1");
  put(prefix + "/conda-meta/libstdcxx-ng-12.2.0-h46fd767_19.json",
      R"({"name": "libstdcxx-ng", "version": "12.2.0", "files": ["lib/libstdc++.so.6.0.30", "share/info/x"]})");
  put(prefix + "/conda-meta/history", "");
  environment::OwnerSources sources{.dpkg_dir = "", .sdk_homes = {}, .cache_dir = cache};
  auto first = environment::load_site_index(prefix, environment::RecordSource::CondaMeta, cache);
  EXPECT_FALSE(first.from_cache);
  EXPECT_EQ(first.files.size(), 1u);
  EXPECT_TRUE(environment::load_site_index(prefix, environment::RecordSource::CondaMeta, cache).from_cache);
  auto owners = environment::find_owners({prefix + "/lib/libstdc++.so.6.0.30", prefix + "/lib/libz.so.1"}, sources);
  EXPECT_EQ(owners.at(prefix + "/lib/libstdc++.so.6.0.30").kind, OwnerKind::Conda);
  EXPECT_EQ(owner_text(owners.at(prefix + "/lib/libstdc++.so.6.0.30")), "libstdcxx-ng 12.2.0");
  EXPECT_FALSE(owners.count(prefix + "/lib/libz.so.1"));
  // conda install zlib: a new conda-meta file.
  put(prefix + "/conda-meta/zlib-1.2.13-h5eee18b_0.json",
      R"({"name": "zlib", "version": "1.2.13", "files": ["lib/libz.so.1"]})");
  owners = environment::find_owners({prefix + "/lib/libz.so.1"}, sources);
  EXPECT_EQ(owner_text(owners.at(prefix + "/lib/libz.so.1")), "zlib 1.2.13");
  EXPECT_TRUE(environment::load_site_index(prefix, environment::RecordSource::CondaMeta, cache).from_cache);
  // A garbled cache is rewritten.
  std::string file;
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename() != "dist-info-dirs.tsv") file = e.path().string();
  std::string good = read_file(file);
  put(file, "garbage\n");
  EXPECT_EQ(owner_text(environment::find_owners({prefix + "/lib/libz.so.1"}, sources).at(prefix + "/lib/libz.so.1")),
            "zlib 1.2.13");
  EXPECT_EQ(read_file(file), good);
}

// A hostile wheel's RECORD: rows that name files outside the site directory (an
// absolute path, ../ escapes, a path that goes down and back up), empty and huge fields, quotes and
// commas, bytes that are not UTF-8, a quote never closed. Nothing outside the site directory becomes
// the package's, nothing crashes, and the rows that name its own files are still indexed, from the
// records as from the cache.
TEST(SiteOwners, a_record_owns_only_files_inside_its_site_directory) {
  std::string root = test::scratch_dir("hostile-record"), site = root + "/lib/site-packages", cache = root + "/cache";
  const std::string outside = root + "/lib/libout.so";
  build_so(root, outside);
  const std::string huge_name = "pkg/" + std::string(200, 'h') + ".so";  // a long but real file name
  const std::vector<std::string> inside = {"pkg/_ok.so",      "pkg/a\"b.so", "pkg/c,d.so",
                                           "pkg/\xff\xfe.so", huge_name,     "pkg/_last.so"};
  for (const auto& f : inside) build_so(root, site + "/" + f);
  std::string rows = "pkg/_ok.so,sha256=" + std::string(1 << 20, 'A') + "," + std::string(4096, '9') + "\n" + outside +
                     ",sha256=AAAA,1\n"                         // absolute
                     "../libout.so,sha256=AAAA,1\n"             // up out of the site directory
                     "pkg/../../libout.so,sha256=AAAA,1\n"      // down, then out
                     "\"pkg/../../libout.so\",sha256=AAAA,1\n"  // the same, quoted
                     "./../libout.so,,\n"
                     "pkg//../../libout.so,,\n"
                     "\n,,\n\"\",,\n,sha256=AAAA,1\n\r\n"   // empty fields and lines
                     "\"pkg/a\"\"b.so\",sha256=AAAA,1\n"    // csv: a quote doubled inside quotes
                     "\"pkg/c,d.so\",sha256=AAAA,1\r\n"     // csv: a comma, and csv.writer's CRLF
                     "pkg/\xff\xfe.so,sha256=\xc3\x28,1\n"  // not UTF-8
                     "\"pkg/open.so,sha256=AAAA,1\n"        // a quote never closed
                     "\"pkg/_ok.so\"junk,sha256=AAAA,1\n"   // text after the closing quote
                     "pkg/tab\tx.so,,\n" +
                     std::string(1 << 16, ',') + "\n" + huge_name + ",sha256=AAAA,1\npkg/_last.so";  // no final newline
  put(site + "/evil-1.0.dist-info/RECORD", rows);

  std::set<std::string> want(inside.begin(), inside.end());
  for (bool from_cache : {false, true}) {
    SCOPED_TRACE(from_cache ? "from the cache" : "from the records");
    auto index = environment::load_site_index(site, environment::RecordSource::DistInfo, cache);
    EXPECT_EQ(index.from_cache, from_cache);
    std::set<std::string> got;
    for (const auto& [path, owner] : index.files) {
      got.insert(path);
      EXPECT_EQ(owner_text(owner), "evil 1.0");
    }
    EXPECT_EQ(got, want);
  }
  // The loader's paths are not always normal ($ORIGIN/../..): the same file spelled through the site
  // directory is still nobody's, whether a shared object (the cached index) or any other file (the
  // full records).
  put(root + "/lib/notes.txt", "");
  put(site + "/evil-2.0.dist-info/RECORD", "../notes.txt,,\n" + root + "/lib/notes.txt,,\npkg/../../notes.txt,,\n");
  environment::OwnerSources sources{.dpkg_dir = "", .sdk_homes = {}, .cache_dir = cache};
  std::vector<std::string> spellings = {outside,
                                        site + "/../libout.so",
                                        site + "/pkg/../../libout.so",
                                        site + "/./../libout.so",
                                        site + "/../notes.txt",
                                        site + "/pkg/../../notes.txt"};
  std::vector<std::string> asked = spellings;
  for (const auto& f : inside) asked.push_back(site + "/" + f);
  auto owners = environment::find_owners(asked, sources);
  for (const auto& p : spellings) EXPECT_FALSE(owners.count(p)) << p << " owned by " << owner_text(owners.at(p));
  for (const auto& f : inside) {
    ASSERT_TRUE(owners.count(site + "/" + f)) << f;
    EXPECT_EQ(owner_text(owners.at(site + "/" + f)), "evil 1.0");
  }
  // The report keeps the spelling it was given: its JSON says the library has no owner, and the text
  // names no package; the same file inside the site directory is the package's.
  auto r = run(kBin + " --cuda-home '' --cache-dir " + quote(cache) + " --format json " +
               quote(site + "/pkg/../../libout.so") + " " + quote(site + "/pkg/_ok.so"));
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out << r.err;
  ASSERT_EQ(doc["libraries"].size(), 2u) << r.out;
  EXPECT_EQ(doc["libraries"][0]["path"], site + "/pkg/../../libout.so");
  EXPECT_TRUE(doc["libraries"][0]["owner"].is_null()) << doc["libraries"][0]["owner"].dump();
  EXPECT_EQ(doc["libraries"][1]["owner"]["name"], "evil");
  auto text = run(kBin + " --cuda-home '' --cache-dir " + quote(cache) + " " + quote(site + "/pkg/../../libout.so"));
  EXPECT_EQ(text.out.find("from Python package"), std::string::npos) << text.out;
}

TEST(SiteOwners, record_path_reads_the_first_csv_field_as_python_writes_it) {
  using environment::record_path;
  // Python's csv module is the oracle for the quoting: it writes each path, we read it back.
  const std::vector<std::string> paths = {"pkg/a.so", "pkg/a,b.so", "pkg/a\"b.so", "pkg/\"q\".so", "pkg/a b.so"};
  std::string script = "import csv, sys\nw = csv.writer(sys.stdout)\n";
  for (const auto& p : paths) script += "w.writerow([" + nlohmann::json(p).dump() + ", 'sha256=AAAA', 1])\n";
  auto r = run("/usr/bin/python3 -c " + quote(script));
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines;
  for (size_t start = 0, nl; (nl = r.out.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(r.out.substr(start, nl - start));
  ASSERT_EQ(lines.size(), paths.size()) << r.out;
  for (size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(record_path(lines[i]), paths[i]) << lines[i];
  for (const char* outside : {"/usr/lib/libc.so.6,,", "../x.so,,", "a/../../x.so,,", "a/./x.so,,", "a//x.so,,", ",,",
                              "", "\"\",,", "\"a.so", "\"a.so\"x,,", "..,,", "a/..,,"})
    EXPECT_EQ(record_path(outside), std::nullopt) << outside;
}

}  // namespace
}  // namespace mlc
