// Ownership look-ups. Python and conda records name files relative to the directory holding the
// record (site-packages, the conda prefix), so each file's ancestors are tried; dpkg's lists name
// absolute paths, tried as given, canonical and across the /usr merge (/lib -> /usr/lib).
#include "environment/ownership.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "common/file_io.h"
#include "common/hash.h"
#include "common/kept_facts.h"
#include "common/paths.h"
#include "common/phase_times.h"
#include "common/walk.h"
#include "environment/dpkg_index.h"
#include "environment/site_index.h"

namespace mlc::environment {
namespace {

// Whether `dir` holds a *.dist-info entry: the first one ends the listing. A directory reached
// under two names (/lib and /usr/lib across the /usr merge) is listed once; /usr/lib/<triplet>
// holds thousands of entries and every system library's ancestors pass through it.
bool lists_dist_info(const std::string& dir) {
  bool found = false;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string_view(e->d_name).ends_with(".dist-info")) {
        found = true;
        break;
      }
    closedir(d);
  }
  return found;
}
bool has_dist_info(const std::string& dir, std::map<std::pair<dev_t, ino_t>, bool>& seen) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  auto [it, fresh] = seen.try_emplace({st.st_dev, st.st_ino}, false);
  if (fresh) it->second = lists_dist_info(dir);
  return it->second;
}

// has_dist_info's answers kept between runs (dist-info-dirs.tsv in the cache directory) by each directory's
// identity: a directory's mtime changes with every entry made, removed or renamed in it, so an answer stands
// while the identity does. Every run listed /usr/lib/<triplet> (1,700 to 3,000 entries, 0.7 ms on the device:
// ext4 hashes each) to find no dist-info there.
class DistInfoDirs {
 public:
  explicit DistInfoDirs(const std::string& cache_dir)
      : kept_(cache_dir.empty() ? "" : cache_dir + "/dist-info-dirs.tsv", "mlc-dist-info-dirs") {}
  bool has(const std::string& dir) {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    auto [it, fresh] = seen_.try_emplace({st.st_dev, st.st_ino}, false);
    if (!fresh) return it->second;
    const std::string identity = stat_identity(st);
    if (auto kept = kept_.find(dir, identity)) return it->second = *kept == "1";
    it->second = lists_dist_info(dir);
    kept_.keep(dir, identity, changed_at(st), it->second ? "1" : "0");
    return it->second;
  }
  void save() { kept_.save(); }

 private:
  KeptFacts kept_;
  std::map<std::pair<dev_t, ino_t>, bool> seen_;  // this run's answers
};

// One site directory's dist-info records: relative path -> owner.
struct SiteRecords {
  std::map<std::string, PackageOwner> files;
};

// The full records (not only what the index covers), read as the index reads them.
SiteRecords read_site(const std::string& site) {
  SiteRecords r;
  for_each_record_row(site, RecordSource::DistInfo,
                      [&](std::string path, const PackageOwner& owner) { r.files.emplace(std::move(path), owner); });
  return r;
}

std::map<std::string, PackageOwner> read_conda(const std::string& prefix) {
  std::map<std::string, PackageOwner> files;
  for_each_record_row(prefix, RecordSource::CondaMeta,
                      [&](std::string path, const PackageOwner& owner) { files.emplace(std::move(path), owner); });
  return files;
}

std::optional<PackageOwner> sdk_owner(const std::string& home) {
  std::string name = real_path(home);
  name = name.substr(name.rfind('/') + 1);
  if (auto text = read_text(home + "/version.json")) {
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (!doc.is_discarded() && doc.is_object()) {
      for (const auto& [key, value] : doc.items()) {
        if (key == "version" && value.is_string())
          return PackageOwner{.kind = OwnerKind::Sdk, .name = name, .version = value.get<std::string>()};
        if (value.is_object() && value.contains("version") && value["version"].is_string())
          return PackageOwner{.kind = OwnerKind::Sdk, .name = name, .version = value["version"].get<std::string>()};
      }
    }
  }
  if (auto text = read_text(home + "/version.txt")) {
    std::string line = text->substr(0, text->find('\n'));
    // "MUSA Toolkit 3.1.0" or "CUDA Version 11.8.89": the last word; a bare "3.1.0" as it is.
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    auto space = line.rfind(' ');
    std::string version = space == std::string::npos ? line : line.substr(space + 1);
    if (!version.empty()) return PackageOwner{.kind = OwnerKind::Sdk, .name = name, .version = version};
  }
  return std::nullopt;
}

bool dpkg_territory(const std::string& p) {
  if (p.rfind("/usr/local/", 0) == 0) return false;
  for (const char* top : {"/usr/", "/lib", "/bin/", "/sbin/", "/opt/", "/etc/"})
    if (p.rfind(top, 0) == 0) return true;
  return false;
}

// The spellings of a path dpkg may have recorded.
std::vector<std::string> dpkg_spellings(const std::string& path, RealPaths& reals) {
  std::vector<std::string> out{path};
  auto add = [&](const std::string& p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  std::string real = reals.of(path);
  add(real);
  for (const auto& p : std::vector<std::string>{path, real}) {
    for (const char* top : {"/lib", "/bin", "/sbin"}) {
      std::string t = top;
      if (p.rfind(t + "/", 0) == 0) add("/usr" + p);
      if (p.rfind("/usr" + t + "/", 0) == 0) add(p.substr(4));
    }
  }
  return out;
}

// Whether `text` (a .list file: one path a line) holds `line` as a whole line.
bool has_line(std::string_view text, const std::string& line) {
  if (text.size() < line.size()) return false;
  if (text.compare(0, line.size(), line) == 0 && (text.size() == line.size() || text[line.size()] == '\n')) return true;
  std::string needle = "\n" + line;
  for (const char* at = text.data(); at < text.data() + text.size();) {
    const auto* hit = static_cast<const char*>(
        memmem(at, static_cast<size_t>(text.data() + text.size() - at), needle.data(), needle.size()));
    if (!hit) return false;
    const char* after = hit + needle.size();
    if (after == text.data() + text.size() || *after == '\n') return true;
    at = hit + 1;
  }
  return false;
}

// The Version field of `package` ("name" or "name:arch") in dpkg's status file; "" when absent.
std::string status_version(std::string_view status, const std::string& package) {
  std::string name = package.substr(0, package.find(':'));
  std::string arch = package.find(':') == std::string::npos ? "" : package.substr(package.find(':') + 1);
  std::string needle = "Package: " + name + "\n";
  for (size_t at = 0; (at = status.find(needle, at)) != std::string_view::npos; at += needle.size()) {
    if (at != 0 && status[at - 1] != '\n') continue;
    size_t end = status.find("\n\n", at);
    std::string_view stanza = status.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (!arch.empty() && stanza.find("\nArchitecture: " + arch + "\n") == std::string_view::npos) continue;
    size_t v = stanza.find("\nVersion: ");
    if (v == std::string_view::npos) continue;
    size_t eol = stanza.find('\n', v + 1);
    return std::string(stanza.substr(v + 10, eol == std::string_view::npos ? std::string_view::npos : eol - v - 10));
  }
  return "";
}

// The owners of the files found in dpkg's lists, with their packages' versions.
void finish_dpkg(const std::map<std::string, std::string>& package_of, const std::optional<DpkgIndex>& index,
                 const std::string& dpkg_dir, std::map<std::string, PackageOwner>& out) {
  if (package_of.empty()) return;
  // Versions from the index where it holds the package (read from status when it was built), else from the
  // status file (955 KB here: 2 ms of a run), for the packages found only.
  std::optional<std::string> status;
  bool status_read = false;
  std::map<std::string, std::string> version_of;  // each package looked up once
  for (const auto& [file, package] : package_of) {
    auto [known, fresh] = version_of.try_emplace(package);
    if (fresh) {
      if (auto v = index ? index->version_of(package) : std::nullopt) {
        known->second = std::string(*v);
      } else {
        if (!std::exchange(status_read, true)) status = read_text(dpkg_dir + "/status");
        known->second = status ? status_version(*status, package) : "";
      }
    }
    out[file] =
        PackageOwner{.kind = OwnerKind::Dpkg, .name = package.substr(0, package.find(':')), .version = known->second};
  }
}

// dpkg's answers kept between runs by each file's identity (dpkg-owner-of-<hash of the dpkg directory>.tsv in the
// cache directory): dpkg writes every file of a package it unpacks anew (an upgrade or a reinstall gives each a
// new inode, a removal takes it away), so which package owns a file, at which version, stands while the file's
// identity does; a file no package owns is kept as "-". A symbolic link is held to its own identity and its
// target's. Every run otherwise read dpkg's index (222 KB, 0.5 ms of a 9 ms run on the wheel replica) for the
// few system libraries a closure ends in.
class KeptDpkgOwners {
 public:
  explicit KeptDpkgOwners(const OwnerSources& sources)
      : kept_(sources.cache_dir.empty() ? ""
                                        : sources.cache_dir + "/dpkg-owner-of-" + fnv1a_hex(sources.dpkg_dir) + ".tsv",
              "mlc-dpkg-owner-of") {}
  // Whether the owner of `path` was kept (put in `out`, unless no package owns it).
  bool find(const std::string& path, std::map<std::string, PackageOwner>& out) {
    auto& id = identities_[path];
    struct stat link, target;
    if (lstat(path.c_str(), &link) != 0 || stat(path.c_str(), &target) != 0) return false;
    id.text = S_ISLNK(link.st_mode) ? stat_identity(link) + "|" + stat_identity(target) : stat_identity(target);
    id.changed_at = std::max(changed_at(link), changed_at(target));
    auto answer = kept_.find(path, id.text);
    if (!answer) return false;
    if (*answer != "-") {
      const size_t space = answer->find(' ');
      if (space == std::string::npos) return false;
      out[path] =
          PackageOwner{.kind = OwnerKind::Dpkg, .name = answer->substr(0, space), .version = answer->substr(space + 1)};
    }
    return true;
  }
  // Keeps the answer found for `path` (find() asked first).
  void keep(const std::string& path, const std::map<std::string, PackageOwner>& out) {
    auto id = identities_.find(path);
    if (id == identities_.end() || id->second.text.empty()) return;
    auto owner = out.find(path);
    if (owner != out.end() && (owner->second.name.empty() || owner->second.name.find(' ') != std::string::npos)) return;
    kept_.keep(path, id->second.text, id->second.changed_at,
               owner == out.end() ? "-" : owner->second.name + " " + owner->second.version);
  }
  void save() { kept_.save(); }

 private:
  struct Identity {
    std::string text;
    int64_t changed_at = 0;
  };
  KeptFacts kept_;
  std::map<std::string, Identity> identities_;
};

// Few files: the lists likely to hold them are read first, the look-up usually ends there.
// Many files (a --closure report), or a cache to keep the answer in: one index of every shared
// object dpkg installed (dpkg_index.h), built once and cached by the database's mtimes; files it
// does not cover (not named *.so*) still go through the lists.
void find_dpkg(const std::set<std::string>& all, const OwnerSources& sources, std::map<std::string, PackageOwner>& out,
               OwnerPrefetch* prefetched, RealPaths& reals) {
  const std::string& dpkg_dir = sources.dpkg_dir;
  std::map<std::string, std::vector<std::string>> spellings;  // file asked about -> spellings dpkg may have
  std::set<std::string> covered;
  for (const auto& w : all) {
    spellings[w] = dpkg_spellings(w, reals);
    if (std::all_of(spellings[w].begin(), spellings[w].end(), dpkg_index_covers)) covered.insert(w);
  }
  constexpr size_t kIndexWorthIt = 8;  // below this, without a cache, the hinted scan reads fewer lists
  std::set<std::string> wanted = all;
  std::optional<DpkgIndex> index;
  if (!covered.empty() && (!sources.cache_dir.empty() || covered.size() > kIndexWorthIt)) {
    auto taken = prefetched ? prefetched->take_dpkg() : std::nullopt;
    index = taken ? std::move(*taken) : load_dpkg_index(dpkg_dir, sources.cache_dir);
    if (index) {
      for (const auto& w : covered) {
        for (const auto& form : spellings[w]) {
          const auto entry = index->find(form);
          if (!entry) continue;
          out[w] = PackageOwner{.kind = OwnerKind::Dpkg,
                                .name = std::string(entry->package.substr(0, entry->package.find(':'))),
                                .version = std::string(entry->version)};
          break;
        }
        wanted.erase(w);  // covered: the index's answer (owned or not) is the lists' answer
      }
    }
  }
  if (wanted.empty()) return;
  std::set<std::string> hints;
  for (const auto& w : wanted)
    if (auto h = package_hint(w); !h.empty()) hints.insert(h);
  std::set<std::string> left = wanted;
  std::map<std::string, std::string> package_of;  // file asked about -> package (list file stem)
  std::set<std::string> read_lists;
  auto read_list = [&](const std::string& name) {
    if (!read_lists.insert(name).second) return;
    auto text = read_text(dpkg_dir + "/info/" + name);
    if (!text) return;
    for (auto it = left.begin(); it != left.end();) {
      const auto& forms = spellings[*it];
      if (std::any_of(forms.begin(), forms.end(), [&](const std::string& f) { return has_line(*text, f); })) {
        package_of[*it] = name.substr(0, name.size() - 5);
        it = left.erase(it);
      } else {
        ++it;
      }
    }
  };
  // A Python module's package by its name first (python3-torch.list, before libtorch-dev.list's 400 KB of
  // headers), without listing info/ (7,000 names here: 2 ms).
  for (const auto& h : hints)
    if (!left.empty()) read_list("python3-" + h + ".list");
  if (left.empty()) return finish_dpkg(package_of, index, dpkg_dir, out);
  // The lists whose package name holds a library's name are read first: the look-up usually ends
  // there, instead of after reading every one of the system's thousand lists.
  std::vector<std::string> lists;
  for (auto& name : sorted_entries(dpkg_dir + "/info"))
    if (name.ends_with(".list")) lists.push_back(std::move(name));
  // A one-letter name only as lib<letter><digit> (libc.so.6 -> libc6), else every list would match.
  auto likely = [&](const std::string& name) {
    return std::any_of(hints.begin(), hints.end(), [&](const std::string& h) {
      if (h.size() > 1) return name.find(h) != std::string::npos;
      return name.size() > 4 && name.rfind("lib" + h, 0) == 0 && std::isdigit(static_cast<unsigned char>(name[4]));
    });
  };
  std::stable_partition(lists.begin(), lists.end(), likely);
  for (const auto& name : lists) {
    if (left.empty()) break;
    read_list(name);
  }
  finish_dpkg(package_of, index, dpkg_dir, out);
}

}  // namespace

std::string package_hint(const std::string& path) {
  // A file of a Python package is its top-level package's: python3-torch ships .../dist-packages/torch/, and
  // Debian names a module's package with '-' for '_' (python3-typing-extensions). Its own name says nothing
  // (__init__.py): without the hint every list up to python3-torch's was read, 971 of 1,044 here, 14.5 ms of a
  // 42 ms run on Debian's torch/_C.
  for (std::string_view site : {"/dist-packages/", "/site-packages/"}) {
    const size_t at = path.rfind(site);
    if (at == std::string::npos) continue;
    std::string top = path.substr(at + site.size());
    top = top.substr(0, top.find('/'));
    top = top.substr(0, top.find('.'));  // a module file (six.py) or an extension (_cffi_backend.cpython-…so)
    while (!top.empty() && top.front() == '_') top.erase(0, 1);
    for (char& c : top) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!top.empty()) return top;
  }
  std::string base = path.substr(path.rfind('/') + 1);
  if (base.rfind("lib", 0) == 0) base = base.substr(3);
  size_t end = 0;
  while (end < base.size() && std::isalnum(static_cast<unsigned char>(base[end]))) ++end;
  // Digits at the end belong to a version more often than to a name (libfmt.so.9, libgflags2.2).
  while (end > 2 && std::isdigit(static_cast<unsigned char>(base[end - 1]))) --end;
  // Debian's package names are lower case (libOpenCL.so.1 is ocl-icd-libopencl1's).
  std::string hint = base.substr(0, end);
  for (char& c : hint) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hint;
}

OwnerPrefetch::OwnerPrefetch(const OwnerSources& sources, const std::vector<std::string>& inputs) {
  // Read beside the loads instead of after them: one input's owners were 3.5 ms of a 25 ms run
  // (libtorch_cuda in a pip venv, 16 cores), read after everything else. For one input, only the indexes
  // its own owner is looked up in (its site directory; dpkg's for a file in dpkg's territory), and only
  // where the cache directory could be made anyway: an index no run would read is not written, nor its
  // cache directory made under a --build-dir that does not exist.
  if (inputs.empty()) return;
  if (inputs.size() == 1 && !sources.cache_dir.empty() && !is_dir(parent_dir(sources.cache_dir))) return;
  if (!sources.dpkg_dir.empty() && (inputs.size() > 1 || dpkg_territory(inputs.front()))) {
    dpkg_ = std::async(std::launch::async, [dpkg_dir = sources.dpkg_dir, cache_dir = sources.cache_dir] {
      PhaseTime t("owners.prefetch-dpkg");
      return load_dpkg_index(dpkg_dir, cache_dir);
    });
  }
  sites_ = std::async(std::launch::async, [inputs, cache_dir = sources.cache_dir] {
    // The site directories find_owners will meet first: the nearest ancestor with dist-info
    // directories of each input (one directory of a tree's inputs is looked at once).
    PhaseTime t("owners.prefetch-sites");
    std::map<std::string, SiteIndex> sites;
    std::set<std::string> looked;
    std::map<std::pair<dev_t, ino_t>, bool> seen;
    for (const auto& input : inputs) {
      if (input.empty() || input[0] != '/') continue;
      for (std::string dir = parent_dir(input); dir != "/" && looked.insert(dir).second; dir = parent_dir(dir)) {
        if (is_dir(dir + "/conda-meta")) break;
        if (has_dist_info(dir, seen)) {
          sites.emplace(dir, load_site_index(dir, RecordSource::DistInfo, cache_dir));
          break;
        }
      }
    }
    return sites;
  });
}

OwnerPrefetch::~OwnerPrefetch() {
  if (dpkg_.valid()) dpkg_.wait();
  if (sites_.valid()) sites_.wait();
}

std::optional<std::optional<DpkgIndex>> OwnerPrefetch::take_dpkg() {
  if (!dpkg_.valid()) return std::nullopt;
  return dpkg_.get();
}

std::optional<SiteIndex> OwnerPrefetch::take_site(const std::string& dir) {
  if (sites_.valid()) sites_ready_ = sites_.get();
  if (!sites_ready_) return std::nullopt;
  auto it = sites_ready_->find(dir);
  if (it == sites_ready_->end()) return std::nullopt;
  SiteIndex index = std::move(it->second);
  sites_ready_->erase(it);
  return index;
}

std::map<std::string, PackageOwner> find_owners(const std::vector<std::string>& paths, const OwnerSources& sources,
                                                OwnerPrefetch* prefetched) {
  std::map<std::string, PackageOwner> out;
  std::set<std::string> left;
  std::map<std::string, SiteRecords> full_sites;
  std::map<std::string, std::map<std::string, PackageOwner>> prefixes;
  std::map<std::string, std::optional<PackageOwner>> sdks;
  DistInfoDirs dist_info_dirs(sources.cache_dir);
  RealPaths reals;
  // Shared objects (and packages' __init__.py) are answered by the cached indexes (site_index.h);
  // any other path by the full records, read only then.
  std::map<std::string, std::optional<SiteIndex>> site_indexes, conda_indexes;
  // Per directory, asked once: whether it is a conda prefix, and the real path of a directory spelled with
  // "." or ".." (a process's libraries share a few: torch's nvidia/*/lib, found through $ORIGIN/../..).
  std::map<std::string, bool> conda_prefixes;
  const auto conda_prefix = [&](const std::string& dir) {
    auto [it, fresh] = conda_prefixes.try_emplace(dir);
    if (fresh) it->second = is_dir(dir + "/conda-meta");
    return it->second;
  };
  std::map<std::string, std::string> real_dirs;
  const auto real_dir = [&](const std::string& dir) -> const std::string& {
    auto [it, fresh] = real_dirs.try_emplace(dir);
    if (fresh) it->second = real_path(dir);
    return it->second;
  };
  auto lookup = [](const SiteIndex& index, const std::string& rel) -> const PackageOwner* {
    auto it = index.files.find(rel);
    return it == index.files.end() ? nullptr : &it->second;
  };
  for (const auto& path : paths) {
    if (path.empty() || path[0] != '/' || out.count(path)) continue;
    bool done = false;
    // The ancestors of the file's directory as the file system has it: a library found through
    // $ORIGIN/../.. is named ".../sklearn/metrics/../../scikit_learn.libs/x.so", and each such
    // spelling of site-packages was indexed anew (23 times in a pip torch venv: 1.4 s of 2.7).
    const std::string walked = path.find("/.") == std::string::npos && path.find("//") == std::string::npos
                                   ? path
                                   : real_dir(parent_dir(path)) + path.substr(path.rfind('/'));
    for (std::string dir = parent_dir(walked); !done && dir != "/"; dir = parent_dir(dir)) {
      std::string rel = walked.substr(dir.size() + 1);
      bool covered = site_index_covers(rel);
      // A Python site directory: the first ancestor holding dist-info directories.
      auto [site_it, fresh] = site_indexes.try_emplace(dir);
      auto& site = site_it->second;
      if (fresh && dist_info_dirs.has(dir)) {
        site = prefetched ? prefetched->take_site(dir) : std::nullopt;
        if (!site) {
          PhaseTime t(PhaseTime::enabled() ? "owners.site:" + dir : std::string());
          site = load_site_index(dir, RecordSource::DistInfo, sources.cache_dir);
        }
      }
      const PackageOwner* found = nullptr;
      if (site) found = covered ? lookup(*site, rel) : nullptr;
      if (site && !covered) {
        if (!full_sites.count(dir)) {
          PhaseTime t(PhaseTime::enabled() ? "owners.full-site:" + dir : std::string());
          full_sites[dir] = read_site(dir);
        }
        if (auto it = full_sites[dir].files.find(rel); it != full_sites[dir].files.end()) found = &it->second;
      }
      if (found) {
        out[path] = *found;
        done = true;
        break;
      }
      if (conda_prefix(dir)) {
        if (covered) {
          auto& conda = conda_indexes[dir];
          if (!conda) conda = load_site_index(dir, RecordSource::CondaMeta, sources.cache_dir);
          found = lookup(*conda, rel);
        } else {
          if (!prefixes.count(dir)) prefixes[dir] = read_conda(dir);
          if (auto it = prefixes[dir].find(rel); it != prefixes[dir].end()) found = &it->second;
        }
        if (found) {
          out[path] = *found;
          done = true;
        }
        break;  // a conda prefix is the outermost environment a file can belong to
      }
    }
    if (done) continue;
    for (const auto& home : sources.sdk_homes) {
      if (home.empty() || path.rfind(home + "/", 0) != 0) continue;
      if (!sdks.count(home)) sdks[home] = sdk_owner(home);
      if (sdks[home]) {
        out[path] = *sdks[home];
        done = true;
        break;
      }
    }
    // Debian installs nothing under /usr/local or /home (policy 9.1.2): only system paths can be dpkg's.
    if (!done && (dpkg_territory(path) || dpkg_territory(reals.of(path)))) left.insert(path);
  }
  dist_info_dirs.save();
  if (!left.empty() && !sources.dpkg_dir.empty()) {
    PhaseTime t("owners.dpkg");  // timed only when dpkg is asked
    // Kept answers for the few system libraries a single file's closure ends in; many files (a --closure report, a
    // tree) are answered by the index at once, as fast as by two stats a file (284 files: 2.2-2.4 ms either way).
    constexpr size_t kKeptUpTo = 32;
    KeptDpkgOwners kept(left.size() <= kKeptUpTo ? sources : OwnerSources{});
    std::set<std::string> asked;
    for (const auto& path : left)
      if (left.size() > kKeptUpTo || !kept.find(path, out)) asked.insert(path);
    if (!asked.empty()) {
      find_dpkg(asked, sources, out, prefetched, reals);
      for (const auto& path : asked) kept.keep(path, out);
      kept.save();
    }
  }
  return out;
}

}  // namespace mlc::environment
