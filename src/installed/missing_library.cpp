// A needed library found nowhere, told once: the loader stops at "cannot open shared object file",
// so every symbol it would have provided fails for that one reason. What a person needs next is the
// other versions of it that are installed (libmccl.so.1 in the SDK while libmccl.so.2 is needed).
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <unordered_set>

#include "common/paths.h"
#include "common/walk.h"
#include "host/host_api.h"
#include "installed/installed.h"
#include "loader/ld_cache.h"
#include "loader/search_order.h"
#include "python/package.h"
#include "report/said.h"
#include "trace/causes.h"
#include "verdict/verdict.h"

namespace mlc::installed {
namespace {

// "libmccl.so.2" -> "libmccl.so": every soname version of a library shares it.
std::string stem_of(const std::string& name) {
  size_t so = name.find(".so");
  return so == std::string::npos ? name : name.substr(0, so + 3);
}

bool same_stem(std::string_view file, std::string_view stem) {
  return file.substr(0, stem.size()) == stem && (file.size() == stem.size() || file[stem.size()] == '.');
}

struct OtherVersion {
  LibraryCopy copy;
  std::string soname;
  std::unordered_set<std::string> defines;  // exported names
};

// Every file of `dir` with the stem's name and an ELF shared object of the requester's class and machine,
// found as `found` says (its how, and the home's glob for a home).
void scan_dir(const std::string& dir, const LibraryCopy& found, const std::string& stem,
              const elf::ElfObject& requester, std::set<std::string>& seen, std::vector<OtherVersion>& out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (same_stem(n, stem)) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string path = dir + "/" + n;
    if (!seen.insert(real_path(path)).second) continue;  // a soname link and its file are one version
    auto ident = elf::read_ident(path);
    if (!ident || ident->kind != elf::ObjectKind::SharedObject || ident->machine != requester.machine ||
        ident->is_64 != requester.is_64)
      continue;
    auto obj = elf::read_object(path, elf::ReadOptions{.static_symbols = false, .relocations = false});
    if (!obj) continue;
    OtherVersion v{.copy = LibraryCopy{.path = path, .how = found.how, .home = found.home},
                   .soname = obj->soname.empty() ? n : obj->soname,
                   .defines = {}};
    for (size_t i = 1; i < obj->dynamic_symbols.size(); ++i) {
      const auto& s = obj->dynamic_symbols[i];
      if (!s.is_undefined() && !s.name.empty() && s.binding != elf::Binding::Local) v.defines.emplace(s.name);
    }
    out.push_back(std::move(v));
  }
}

struct MissingNeed {
  Cause* cause = nullptr;
  std::vector<OtherVersion> others;
  // The DT_NEEDED entries (library, entry) of this name: they take the cause's id once it is known.
  std::set<std::pair<int, size_t>> needs;
};

// Other versions of a missing library: in the directories the search tried, ld.so.cache's, then the
// places given. `cache` is the loader's system cache (ld.so.cache, else ld.so.conf's), read on first use.
// A copy where the requesting object's author put it: its own directory, or anywhere in its Python
// package (pkg/lib/ beside pkg/_C.so), searched only when the loader's search did not reach there.
void find_beside(const loader::LoadedObject& obj, const std::string& stem, std::set<std::string>& seen,
                 std::set<std::string>& dirs_done, std::vector<OtherVersion>& others) {
  const std::string own = dir_of(obj.path);
  if (dirs_done.insert(own).second)
    scan_dir(own, {.path = "", .how = loader::FoundHow::Beside}, stem, obj.elf, seen, others);
  const auto chain = python::package_chain(obj.path);
  if (chain.packages.empty()) return;
  std::set<std::string> dirs;
  walk_tree(
      chain.packages.front(),
      [&](const std::string& path, const struct stat&) {
        if (same_stem(base_name(path), stem)) dirs.insert(dir_of(path));
      },
      WalkOptions{.skip_hidden = true, .follow_symlinks = false, .max_depth = 8, .max_files = 20000});
  for (const auto& d : dirs)
    if (dirs_done.insert(d).second)
      scan_dir(d, {.path = "", .how = loader::FoundHow::Beside}, stem, obj.elf, seen, others);
}

// A copy the run itself checks (a file named, or found in a directory given) off the search: a JDK's
// lib/server/libjvm.so, which lib/libjava.so needs and which only the java launcher loads, by its path.
void find_checked(const loader::LoadedObject& obj, const std::string& stem, const std::vector<std::string>& checked,
                  std::set<std::string>& seen, std::set<std::string>& dirs_done, std::vector<OtherVersion>& others) {
  for (const auto& file : checked)
    if (same_stem(base_name(file), stem))
      if (std::string dir = dir_of(file); dirs_done.insert(dir).second)
        scan_dir(dir, {.path = "", .how = loader::FoundHow::Checked}, stem, obj.elf, seen, others);
}

void find_other_versions(const loader::LoadedObject& obj, const loader::NeededEntry& need,
                         const std::vector<Place>& places, const std::vector<std::string>& checked,
                         const loader::LoaderEnv& env, std::shared_ptr<const loader::SystemCache>& cache,
                         std::vector<OtherVersion>& others) {
  std::string stem = stem_of(need.name);
  std::set<std::string> seen, dirs_done;
  // The directories the search tried come first (a copy there is of another version: it was not taken).
  for (const auto& step : need.searched)
    if (!step.path.empty() && step.path.front() == '/') dirs_done.insert(dir_of(step.path));
  find_beside(obj, stem, seen, dirs_done, others);
  find_checked(obj, stem, checked, seen, dirs_done, others);
  dirs_done.clear();
  for (const auto& step : need.searched) {
    if (step.path.empty() || step.path.front() != '/' || step.how == loader::FoundHow::LdSoCache ||
        step.how == loader::FoundHow::LdSoConf)
      continue;
    std::string dir = dir_of(step.path);
    if (dirs_done.insert(dir).second) scan_dir(dir, {.path = "", .how = step.how}, stem, obj.elf, seen, others);
  }
  if (!cache)
    cache = loader::read_system_cache(env, loader::search_platform(env, obj.elf.machine, obj.elf.is_64).default_dirs);
  const auto cached_how = cache->from_conf ? loader::FoundHow::LdSoConf : loader::FoundHow::LdSoCache;
  for (const auto& e : cache->entries) {
    if (e.hwcap != 0 || !same_stem(e.soname, stem) ||
        !loader::cache_flags_match(e.flags, obj.elf.machine, obj.elf.is_64))
      continue;
    std::string dir = dir_of(env.sysroot + std::string(e.path));
    if (dirs_done.insert(dir).second) scan_dir(dir, {.path = "", .how = cached_how}, stem, obj.elf, seen, others);
  }
  for (const auto& place : places)
    if (dirs_done.insert(place.dir).second)
      scan_dir(place.dir, {.path = "", .how = place.how, .home = place.home}, stem, obj.elf, seen, others);
}

// Each missing DT_NEEDED name once, with its other versions and a cause. One cause per missing
// library for the whole run: an environment where one missing libcutensor.so.2 breaks two modules
// gets one headline naming both (needed_by grows later). Each need is noted under its name, to take
// its cause's id once `causes` has stopped growing (link_causes).
std::map<std::string, MissingNeed> collect_missing(const loader::Process& p, std::map<int, LibraryReport>& libs,
                                                   const std::vector<Place>& places,
                                                   const std::vector<std::string>& checked,
                                                   const loader::LoaderEnv& env, CauseList& causes) {
  std::map<std::string, MissingNeed> missing;  // by DT_NEEDED name
  std::shared_ptr<const loader::SystemCache> cache;
  for (auto& [index, lib] : libs) {
    const auto& obj = p.objects[index];
    for (size_t k = 0; k < obj.needed.size() && k < lib.needed.size(); ++k) {
      const auto& need = obj.needed[k];
      // A refused file is a load failure of its own (loader::FailureKind::BadCandidate), not a missing library.
      if (need.object >= 0 || !need.refused.empty()) continue;
      auto [it, fresh] = missing.try_emplace(need.name);
      MissingNeed& m = it->second;
      if (fresh) {
        find_other_versions(obj, need, places, checked, env, cache, m.others);
        bool told = std::any_of(causes.begin(), causes.end(), [&](const Cause& c) {
          return c.kind == CauseKind::MissingLibrary && c.library == need.name;
        });
        if (!told) {
          Cause c;
          c.kind = CauseKind::MissingLibrary;
          c.library = need.name;
          for (const auto& o : m.others) c.others.push_back(o.copy);
          causes.add(std::move(c));
        }
      }
      m.needs.insert({index, k});
    }
  }
  return missing;
}

// Pointers are taken only now (`causes` grew while the needs were collected); each need then names
// its cause by id, and the cause the libraries that need it.
void link_causes(std::map<std::string, MissingNeed>& missing, std::map<int, LibraryReport>& libs, CauseList& causes) {
  for (auto& [name, m] : missing)
    for (auto& c : causes)
      if (c.kind == CauseKind::MissingLibrary && c.library == name) m.cause = &c;
  std::map<std::pair<int, size_t>, Cause*> cause_of;  // in the libraries' and their entries' order
  for (auto& [name, m] : missing)
    for (const auto& need : m.needs) cause_of[need] = m.cause;
  for (const auto& [need, c] : cause_of) {
    LibraryReport& lib = libs.at(need.first);
    lib.needed[need.second].cause = c->id;
    if (std::find(c->needed_by.begin(), c->needed_by.end(), lib.path) == c->needed_by.end())
      c->needed_by.push_back(lib.path);
  }
}

// The missing library a symbol would have come from: the one its version names, the other version
// that defines it, or the only one missing; "" when none can be named. The host's API (the Python C
// API, Perl's XS API) comes from the program that loads the object, not from whatever library is
// missing - unless that library is the host's own (libpython3.11): then `host_api` is set.
std::string owner_of(const trace::SymbolFinding& symbol, const loader::LoadedObject& obj,
                     const std::vector<std::string>& absent, const std::map<std::string, MissingNeed>& missing,
                     said::WouldComeFrom& evidence, bool& host_api) {
  const auto* ref = &symbol.ref;
  const auto* u = &symbol.symbol;
  std::string owner;
  if (ref->miss == loader::Miss::LibraryMissing && missing.count(std::string(ref->version_file))) {
    owner = std::string(ref->version_file);
    evidence.basis = said::WouldComeFrom::Basis::Version;
    evidence.version = std::string(ref->version);
  } else if (ref->miss == loader::Miss::NoDefinition) {
    for (const auto& name : absent) {
      for (const auto& o : missing.at(name).others) {
        if (!o.defines.count(u->symbol)) continue;
        owner = name;
        evidence.basis = said::WouldComeFrom::Basis::OtherVersionDefines;
        evidence.definer = o.soname;
        evidence.at = o.copy.path;
        break;
      }
      if (!owner.empty()) break;
    }
    const host::HostApi host = host::host_api_of(u->symbol);
    const bool host_library = host != host::HostApi::None && absent.front().starts_with(host::library_prefix_of(host));
    if (owner.empty() && absent.size() == 1 && host != host::HostApi::None && !host_library) {
      host_api = true;
      return "";
    }
    if (owner.empty() && absent.size() == 1) {
      owner = absent.front();
      evidence.basis = said::WouldComeFrom::Basis::OnlyMissing;
      evidence.needer = base_name(obj.path);
    }
  }
  return owner;
}

// The symbols each missing library would have provided.
void attribute_symbols(const loader::Process& p, std::vector<trace::SymbolFinding>& symbols,
                       const std::map<std::string, MissingNeed>& missing) {
  for (auto& symbol : symbols) {
    const auto* ref = &symbol.ref;
    auto* u = &symbol.symbol;
    if (u->cause) continue;
    const auto& obj = p.objects[ref->object];
    std::vector<std::string> absent;
    for (const auto& need : obj.needed)
      if (need.object < 0 && missing.count(need.name)) absent.push_back(need.name);
    if (absent.empty()) continue;
    said::WouldComeFrom evidence;
    bool host_api = false;
    std::string owner = owner_of(symbol, obj, absent, missing, evidence, host_api);
    if (host_api) {
      verdict::claim(*u, EvidencePass::MissingLibrary, Classification::Unknown);  // for the host pass, after tracing
      say(*u, said::NoLoadedDefinition{});
      continue;
    }
    if (owner.empty()) continue;
    Cause* c = missing.at(owner).cause;
    ++c->symbols;
    verdict::claim(*u, EvidencePass::MissingLibrary, Classification::MissingLibrary);
    u->cause = c->id;
    evidence.owner = owner;
    say(*u, std::move(evidence));
    u->suggestions.clear();
  }
}

// The very library (its soname is the name needed), where its author put it or among the files the run
// checks, but off the search path: then the search path is the fix.
const OtherVersion* beside_of(const std::string& name, const MissingNeed& m) {
  for (const auto& o : m.others)
    if ((o.copy.how == loader::FoundHow::Beside || o.copy.how == loader::FoundHow::Checked) && o.soname == name)
      return &o;
  return nullptr;
}

// What fixes a missing library for `needers` (the paths of the files whose DT_NEEDED names it): a
// RUNPATH to the copy beside them, else install it, or rebuild them against the other version found.
SaidPtr fix_for(const std::string& name, const MissingNeed& m, const std::vector<std::string>& needers) {
  said::InstallLibrary fix{.name = name,
                           .needers = {},
                           .first_needer = needers.empty() ? "" : needers.front(),
                           .beside = "",
                           .checked = false,
                           .by_dir = {},
                           .other = std::nullopt,
                           .other_soname = ""};
  for (const auto& n : needers) fix.needers.push_back(base_name(n));
  if (const OtherVersion* beside = beside_of(name, m); beside && !needers.empty()) {
    fix.beside = beside->copy.path;
    fix.checked = beside->copy.how == loader::FoundHow::Checked;
    for (const auto& n : needers) {
      auto group =
          std::find_if(fix.by_dir.begin(), fix.by_dir.end(), [&](const auto& g) { return g.first == dir_of(n); });
      if (group == fix.by_dir.end()) group = fix.by_dir.insert(fix.by_dir.end(), {dir_of(n), {}});
      group->second.push_back(base_name(n));
    }
  }
  if (!m.others.empty()) {
    fix.other = m.others.front().copy;
    fix.other_soname = m.others.front().soname;
  }
  return saying(std::move(fix));
}

// Each cause's headline and fix (install it, or rebuild against the other version found), and the
// fix of every finding it explains, which names the file holding that finding (the cause may be
// shared by other inputs: their names are not this finding's fix).
void describe_causes(const loader::Process& p, std::map<std::string, MissingNeed>& missing,
                     std::vector<trace::SymbolFinding>& symbols) {
  for (auto& [name, m] : missing) {
    Cause& c = *m.cause;
    std::vector<std::string> needers;
    for (const auto& n : c.needed_by) needers.push_back(base_name(n));
    said::LibraryNotFound headline{.name = name, .needers = needers, .others = {}, .beside = "", .checked = false};
    for (const auto& o : m.others) headline.others.push_back(o.copy);
    if (const OtherVersion* beside = beside_of(name, m); beside && !c.needed_by.empty()) {
      headline.beside = beside->copy.path;
      headline.checked = beside->copy.how == loader::FoundHow::Checked;
    }
    c.headline_why = saying(std::move(headline));
    c.fix_why = fix_for(name, m, c.needed_by);
    for (auto& [ref, u] : symbols)
      if (u.cause == c.id)
        u.fix = Fix{.kind = FixKind::UseLibrary,
                    .cmake_file = std::nullopt,
                    .list = std::nullopt,
                    .entry = std::nullopt,
                    .library = name,
                    .why = fix_for(name, m, {p.objects[ref.object].path})};
  }
}

}  // namespace

// The passes: the missing libraries with their other versions and causes, the causes linked to the
// needs, the symbols each would have provided, then the headlines and fixes.
void find_missing_libraries(const loader::Process& p, std::map<int, LibraryReport>& libs,
                            std::vector<trace::SymbolFinding>& symbols, const std::vector<Place>& places,
                            const std::vector<std::string>& checked, const loader::LoaderEnv& env, CauseList& causes) {
  std::map<std::string, MissingNeed> missing = collect_missing(p, libs, places, checked, env, causes);
  if (missing.empty()) return;
  link_causes(missing, libs, causes);
  attribute_symbols(p, symbols, missing);
  describe_causes(p, missing, symbols);
}

}  // namespace mlc::installed
