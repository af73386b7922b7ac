// glibc's search order (dl-load.c, _dl_map_object and decompose_rpath/fillin_rpath), as one list:
// the loader's mapping phase, the candidates of a picked copy and run-time dlopen all walk it.
#include "loader/search_order.h"

#include <dirent.h>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>

#include "common/kept_file.h"
#include "common/paths.h"
#include "elf/elf_object.h"

namespace mlc::loader {
namespace {

// The elements as given, never joined and split again: an empty element is the current directory
// wherever it stands (dl-load.c fillin_rpath: the directory name ""), the first one included; an
// element a DST expands to nothing is dropped; trailing slashes go; a directory listed twice is kept
// once.
std::vector<std::string> search_dirs(const std::vector<std::string>& elements, const std::string& origin,
                                     const LoaderEnv& env, const SearchPlatform& platform) {
  std::vector<std::string> dirs;
  for (const auto& element : elements) {
    std::string dir;
    if (!element.empty()) {
      auto expanded = expand_dst(element, origin, platform.lib, platform.platform);
      if (!expanded || expanded->empty()) continue;
      dir = *expanded;
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      // $ORIGIN is already a path on disk; other absolute elements are inside the sysroot.
      bool from_origin = element.find("ORIGIN") != std::string::npos;
      if (!from_origin && dir[0] == '/' && !env.sysroot.empty()) dir = env.sysroot + dir;
    }
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return dirs;
}

// dl-load.c decompose_rpath: "Ignore empty rpaths" - a DT_RPATH/DT_RUNPATH that is the empty string
// searches nothing, while an empty element inside a longer one is the current directory. Its
// elements are split at ':' only.
std::vector<std::string> tag_dirs(const std::string& list, const std::string& origin, const LoaderEnv& env,
                                  const SearchPlatform& platform) {
  if (list.empty()) return {};
  return search_dirs(split_rpath(list), origin, env, platform);
}

bool in_system_dir(std::string_view path, const SearchPlatform& platform) {
  for (const auto& d : platform.default_dirs)
    if (path.compare(0, d.size(), d) == 0 && path.size() > d.size() && path[d.size()] == '/') return true;
  return false;
}

// dl-cache.c search_cache: of the entries for the name whose flags fit, a glibc-hwcaps one for a
// subdirectory this CPU searches, the best first; else the first without hwcaps bits.
const CacheEntry* cache_entry(const SystemCache& cache, const std::string& name, const SearchPlatform& platform) {
  const CacheEntry* best = nullptr;
  const CacheEntry* plain = nullptr;
  size_t best_rank = platform.subdirs.size();
  for (uint32_t i : cache.named(name)) {
    const CacheEntry& e = cache.entries[i];
    if (!cache_flags_match(e.flags, platform.machine, platform.is_64)) continue;
    if (!e.glibc_hwcaps.empty()) {
      auto at = std::find(platform.subdirs.begin(), platform.subdirs.end(),
                          "glibc-hwcaps/" + std::string(e.glibc_hwcaps) + "/");
      if (at != platform.subdirs.end() && static_cast<size_t>(at - platform.subdirs.begin()) < best_rank) {
        best = &e;
        best_rank = static_cast<size_t>(at - platform.subdirs.begin());
      }
    } else if (e.hwcap == 0 && !plain) {
      plain = &e;
    }
  }
  return best ? best : plain;
}

}  // namespace

void index_by_soname(SystemCache& cache) {
  cache.by_soname.resize(cache.entries.size());
  std::iota(cache.by_soname.begin(), cache.by_soname.end(), uint32_t{0});
  std::stable_sort(cache.by_soname.begin(), cache.by_soname.end(),
                   [&](uint32_t a, uint32_t b) { return cache.entries[a].soname < cache.entries[b].soname; });
}

std::span<const uint32_t> SystemCache::named(std::string_view soname) const {
  const auto from = std::lower_bound(by_soname.begin(), by_soname.end(), soname,
                                     [&](uint32_t i, std::string_view s) { return entries[i].soname < s; });
  const auto to = std::upper_bound(from, by_soname.end(), soname,
                                   [&](std::string_view s, uint32_t i) { return s < entries[i].soname; });
  return {from, to};
}

SearchPlatform search_platform(const LoaderEnv& env, uint16_t machine, bool is_64) {
  SearchPlatform p{.machine = machine,
                   .is_64 = is_64,
                   .default_dirs = env.default_dirs.empty() ? default_dirs_for(machine, is_64) : env.default_dirs,
                   .lib = env.lib_token.empty() ? lib_token_for(machine, is_64) : env.lib_token,
                   .platform = env.platform_token.empty() ? platform_token_for(machine, is_64) : env.platform_token,
                   .subdirs = {}};
  p.subdirs = hwcaps_subdirs(machine, is_64, env.x86_isa_level, p.platform, env.hwcap_avx512_1, env.glibc_minor);
  return p;
}

SearchDirs SearchDirsMemo::tag_dirs(const std::string& list, const std::string& origin, const LoaderEnv& env,
                                    const SearchPlatform& platform) {
  std::string key;
  key.reserve(list.size() + origin.size() + 1);
  key.append(list).append(1, '\0').append(origin);
  auto [it, fresh] = lists_.try_emplace(std::move(key));
  if (fresh)
    it->second = std::make_shared<const std::vector<std::string>>(loader::tag_dirs(list, origin, env, platform));
  return it->second;
}

SearchSteps search_steps(const std::string& name, const Process& process, int requester, const LoaderEnv& env,
                         const SearchPlatform& platform, const SystemCache& cache, SearchDirsMemo* memo) {
  SearchSteps out;
  const auto& objects = process.objects;
  const auto origin_of = [&](int index) { return objects[index].origin; };
  int list = 0;
  // dl-load.c open_path: each directory with its capability subdirectories first.
  const auto add = [&](SearchDirs dirs, FoundHow how) {
    ++list;
    out.items.push_back({.dirs = std::move(dirs), .how = how, .list = list, .single = std::nullopt});
  };
  const auto tagged = [&](const std::string& tag, int l) {
    return memo ? memo->tag_dirs(tag, origin_of(l), env, platform)
                : std::make_shared<const std::vector<std::string>>(tag_dirs(tag, origin_of(l), env, platform));
  };
  const auto add_one = [&](SearchCandidate step) {
    out.items.push_back({.dirs = {}, .how = step.how, .list = step.list, .single = std::move(step)});
  };
  const LoadedObject* self = requester >= 0 ? &objects[requester] : nullptr;
  const bool has_runpath = self && self->elf.runpath;
  const bool nodeflib = self && self->elf.nodeflib();
  const int main = process.main;
  // 1. glibc: "When the object has the RUNPATH information we don't use any RPATHs."
  if (!has_runpath) {
    bool did_main = false;
    for (int l = requester; l >= 0; l = objects[l].loader) {
      if (!objects[l].elf.rpath) continue;
      did_main |= l == main;
      add(tagged(*objects[l].elf.rpath, l), FoundHow::Rpath);
    }
    // "If dynamically linked, try the DT_RPATH of the executable itself."
    if (!did_main && main >= 0 && objects[main].elf.rpath) add(tagged(*objects[main].elf.rpath, main), FoundHow::Rpath);
  }
  // 2. LD_LIBRARY_PATH, its $ORIGIN the main program's.
  if (!env.library_path.empty()) {
    const int origin_from = main >= 0 ? main : process.target >= 0 ? process.target : requester;
    add(std::make_shared<const std::vector<std::string>>(
            search_dirs(env.library_path, origin_from >= 0 ? origin_of(origin_from) : std::string(), env, platform)),
        FoundHow::LdLibraryPath);
  }
  // 3. The requester's own DT_RUNPATH.
  if (has_runpath) add(tagged(*self->elf.runpath, requester), FoundHow::Runpath);
  // 4. ld.so.cache.
  const FoundHow cache_how = cache.from_conf ? FoundHow::LdSoConf : FoundHow::LdSoCache;
  ++list;
  const CacheEntry* e = cache_entry(cache, name, platform);
  if (e)
    add_one({.path = env.sysroot + std::string(e->path),
             .how = cache_how,
             .passed_over = nodeflib && in_system_dir(e->path, platform)
                                ? std::optional(skipped("in a system directory (NODEFLIB)"))
                                : std::nullopt,
             .list = list});
  else
    add_one({.path = env.sysroot + (cache.from_conf ? env.ld_so_conf : env.ld_so_cache),
             .how = cache_how,
             .passed_over = SearchOutcome{.kind = SearchOutcome::Kind::NoEntry, .detail = ""},
             .list = list});
  // 5. The system directories.
  if (nodeflib) {
    add_one({.path = "(system directories)",
             .how = FoundHow::Default,
             .passed_over = skipped("NODEFLIB"),
             .list = list + 1});
    return out;
  }
  std::vector<std::string> dirs;
  dirs.reserve(platform.default_dirs.size());
  for (const auto& d : platform.default_dirs) dirs.push_back(env.sysroot + d);
  add(std::make_shared<const std::vector<std::string>>(std::move(dirs)), FoundHow::Default);
  return out;
}

std::vector<SearchCandidate> search_order(const std::string& name, const Process& process, int requester,
                                          const LoaderEnv& env, const SearchPlatform& platform,
                                          const SystemCache& cache) {
  std::vector<SearchCandidate> out;
  each_step(search_steps(name, process, requester, env, platform, cache), name, platform.subdirs,
            [&](const std::string& path, FoundHow how, int list, bool subdir,
                const std::optional<SearchOutcome>& passed_over) {
              out.push_back({.path = path, .how = how, .passed_over = passed_over, .list = list, .subdir = subdir});
              return false;
            });
  return out;
}

namespace {

KeptFile<SystemCache> kept_caches;  // the ld.so.caches parsed in this process

void read_from_conf(const LoaderEnv& env, const std::vector<std::string>& default_dirs, SystemCache& cache);

}  // namespace

std::shared_ptr<const SystemCache> read_system_cache(const LoaderEnv& env,
                                                     const std::vector<std::string>& default_dirs) {
  const std::string file = env.sysroot + env.ld_so_cache;
  auto cache = kept_caches.get(file, [&]() -> std::shared_ptr<const SystemCache> {
    auto read = read_ld_cache(file);
    if (!read) return nullptr;
    auto parsed = std::make_shared<SystemCache>();
    parsed->bytes = std::move(read->bytes);
    parsed->entries = std::move(read->entries);
    index_by_soname(*parsed);
    return parsed;
  });
  if (cache) return cache;
  auto from_conf = std::make_shared<SystemCache>();
  read_from_conf(env, default_dirs, *from_conf);
  return from_conf;
}

namespace {

void read_from_conf(const LoaderEnv& env, const std::vector<std::string>& default_dirs, SystemCache& cache) {
  // No cache (a bare sysroot): what ldconfig would write from ld.so.conf, by soname, first wins.
  auto dirs = read_ld_conf(env.ld_so_conf, env.sysroot);
  if (!dirs) return;
  cache.from_conf = true;
  std::vector<std::string> all = dirs.value();
  all.insert(all.end(), default_dirs.begin(), default_dirs.end());
  std::map<std::string, bool> seen;
  for (const auto& dir : all) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(opendir((env.sysroot + dir).c_str()), closedir);
    if (!d) continue;
    std::vector<std::string> files;
    while (dirent* de = readdir(d.get())) {
      std::string f = de->d_name;
      if (f.rfind("lib", 0) == 0 && f.find(".so") != std::string::npos) files.push_back(f);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto obj = elf::read_object(env.sysroot + join_path(dir, f), elf::ReadOptions{false, false, false});
      if (!obj || obj->kind != elf::ObjectKind::SharedObject) continue;
      std::string soname = obj->soname.empty() ? f : obj->soname;
      if (seen.emplace(soname, true).second) {
        const std::string& name = cache.names.emplace_back(soname);
        const std::string& path = cache.names.emplace_back(join_path(dir, soname));
        cache.entries.push_back({name, path, cache_flags_for(obj->machine, obj->is_64), 0});
      }
    }
  }
  index_by_soname(cache);
}

}  // namespace

}  // namespace mlc::loader
