// The mapping phase of glibc's ld.so, emulated on files: breadth-first over DT_NEEDED in load order,
// each name searched as _dl_map_object does (RPATH chain, LD_LIBRARY_PATH, RUNPATH, ld.so.cache,
// system dirs), objects de-duplicated by name, soname and device+inode.
#include "loader/loader.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "common/paths.h"
#include "common/phase_times.h"
#include "loader/ld_cache.h"
#include "loader/search_order.h"

namespace mlc::loader {

const char* to_string(FoundHow how) {
  switch (how) {
    case FoundHow::Direct: return "direct";
    case FoundHow::Rpath: return "rpath";
    case FoundHow::LdLibraryPath: return "ld_library_path";
    case FoundHow::Runpath: return "runpath";
    case FoundHow::LdSoCache: return "ld.so.cache";
    case FoundHow::LdSoConf: return "ld.so.conf";
    case FoundHow::Default: return "default";
    case FoundHow::With: return "with";
    case FoundHow::AlreadyLoaded: return "loaded";
    case FoundHow::Sdk: return "sdk";
    case FoundHow::Home: return "home";
    case FoundHow::Conda: return "conda";
    case FoundHow::Venv: return "venv";
    case FoundHow::Beside: return "beside";
  }
  return "direct";
}

std::vector<std::string> default_dirs_for(uint16_t machine, bool is_64) {
  // Debian's glibc: slibdir and libdir are the multiarch directories, then the generic ones.
  std::string triplet;
  switch (machine) {
    case 62: triplet = is_64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32"; break;
    case 3: triplet = "i386-linux-gnu"; break;
    case 183: triplet = "aarch64-linux-gnu"; break;
    case 40: triplet = "arm-linux-gnueabihf"; break;
    case 21: triplet = "powerpc64le-linux-gnu"; break;
    case 22: triplet = "s390x-linux-gnu"; break;
    case 243: triplet = "riscv64-linux-gnu"; break;
    default: break;
  }
  if (triplet.empty()) return {"/lib", "/usr/lib"};
  return {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"};
}

std::string lib_token_for(uint16_t machine, bool is_64) {
  auto dirs = default_dirs_for(machine, is_64);
  return dirs.size() > 2 ? dirs[0].substr(1) : "lib";  // Debian: $LIB = lib/<triplet>
}

std::string platform_token_for(uint16_t machine, bool is_64) {
  switch (machine) {
    case 62: return is_64 ? "x86_64" : "i686";
    case 3: return "i686";
    case 183: return "aarch64";
    case 21: return "power8";
    default: return "";
  }
}

std::optional<std::string> expand_dst(const std::string& element, const std::string& origin, const std::string& lib,
                                      const std::string& platform) {
  std::string out;
  for (size_t i = 0; i < element.size();) {
    if (element[i] != '$') {
      out += element[i++];
      continue;
    }
    // glibc's is_dst: $NAME or ${NAME}, NAME ending at a non-identifier character.
    bool braced = i + 1 < element.size() && element[i + 1] == '{';
    size_t start = i + (braced ? 2 : 1);
    size_t end = start;
    while (end < element.size() && (isalnum(static_cast<unsigned char>(element[end])) || element[end] == '_')) ++end;
    std::string token = element.substr(start, end - start);
    if (braced) {
      if (end >= element.size() || element[end] != '}') return std::nullopt;
      ++end;
    }
    if (token == "ORIGIN") {
      out += origin;
    } else if (token == "LIB") {
      out += lib;
    } else if (token == "PLATFORM") {
      if (platform.empty()) return std::nullopt;
      out += platform;
    } else {
      return std::nullopt;  // unknown DST: glibc drops the whole element
    }
    i = end;
  }
  return out;
}

namespace {

constexpr elf::ReadOptions kHeadersOnly{false, false, false};

}  // namespace

std::vector<std::string> split_search_path(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t colon = list.find_first_of(":;", start);
    out.push_back(list.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

namespace {

class Emulator {
 public:
  Emulator(const LoaderEnv& env, ObjectCache* cache) : env_(env), cache_objects_(cache) {}

  Result<Process> run(const std::string& target) {
    for (const auto& with : env_.with) {
      const bool global = std::find(env_.with_local.begin(), env_.with_local.end(), with) == env_.with_local.end();
      const size_t before = process_.objects.size();
      int index = load_root(with, FoundHow::With);
      if (index >= 0) {
        process_.objects[index].is_with = true;
        walk_needed(index, true);
        mark_root(before, index);
        // dl-open.c add_to_global: RTLD_GLOBAL puts the whole search list of the new object in the
        // global scope, objects an earlier RTLD_LOCAL load brought in included.
        if (global)
          for (int i : lookup_scope(process_, index)) process_.objects[i].global = true;
      }
    }
    auto ident = elf::read_ident(target);
    if (!ident) return ident.error();
    const size_t before = process_.objects.size();
    int index = load_root(target, FoundHow::Direct);
    if (index < 0) return process_.errors.back();
    process_.objects[index].is_target = true;
    process_.target = index;
    walk_needed(index, false);
    mark_root(before, index);
    if (auto err = complete_objects()) return *err;
    return std::move(process_);
  }

  // The mapping phase read headers only; symbol tables, versions and relocations of all objects are
  // read now, in parallel (objects are independent). A bad target fails the load; a bad dependency
  // is an error beside the report.
  std::optional<InputError> complete_objects() {
    auto& objs = process_.objects;
    std::vector<std::optional<InputError>> errors(objs.size());
    from_cache_.resize(objs.size());
    tbb::parallel_for(size_t{0}, objs.size(), [&](size_t i) {
      if (from_cache_[i]) return;
      errors[i] = elf::read_symbols(objs[i].elf, elf::ReadOptions{.relocations = false, .lookup_only = true});
    });
    if (cache_objects_) {
      for (size_t i = 0; i < objs.size(); ++i)
        if (!from_cache_[i] && !errors[i]) cache_objects_->add(objs[i].dev, objs[i].ino, objs[i].elf);
    }
    for (size_t i = 0; i < objs.size(); ++i) {
      if (!errors[i]) continue;
      if (static_cast<int>(i) == process_.target) return errors[i];
      process_.errors.push_back(*errors[i]);
    }
    return std::nullopt;
  }

 private:
  // Platform facts follow the first object loaded (what the loader of that class/machine would be).
  void set_platform(const elf::ElfObject& o) {
    if (platform_set_) return;
    platform_set_ = true;
    platform_ = search_platform(env_, o.machine, o.is_64);
  }

  // The objects from `first` on were brought in by the load of `root`.
  void mark_root(size_t first, int root) {
    for (size_t i = first; i < process_.objects.size(); ++i) process_.objects[i].root = root;
  }

  int load_root(const std::string& path, FoundHow how) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0) {
      if (int existing = find_by_inode(st); existing >= 0) return existing;
    }
    auto obj = read_headers(path, st);
    if (!obj) {
      process_.errors.push_back(obj.error());
      return -1;
    }
    set_platform(*obj);
    return add_object(std::move(obj).value(), path, how, -1, path.substr(path.rfind('/') + 1), st);
  }

  int add_object(elf::ElfObject obj, const std::string& path, FoundHow how, int loader, const std::string& name,
                 const struct stat& st) {
    LoadedObject lo;
    lo.path = path;
    lo.how = how;
    lo.loader = loader;
    lo.dev = st.st_dev;
    lo.ino = st.st_ino;
    lo.names.push_back(name);
    if (!obj.soname.empty() && obj.soname != name) lo.names.push_back(obj.soname);
    lo.elf = std::move(obj);
    const int index = static_cast<int>(process_.objects.size());
    for (const auto& n : lo.names) index_name(n, index);
    index_name(lo.elf.soname, index);
    by_inode_.emplace(std::make_pair(lo.dev, lo.ino), index);
    process_.objects.push_back(std::move(lo));
    return index;
  }

  int find_by_inode(const struct stat& st) const {
    auto it = by_inode_.find({st.st_dev, st.st_ino});
    return it == by_inode_.end() ? -1 : it->second;
  }

  // glibc's _dl_name_match_p plus the soname comparison of _dl_map_object: the first object in
  // load order that answers to the name (its names or its soname).
  int find_by_name(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? -1 : it->second;
  }

  void index_name(const std::string& name, int index) {
    auto [it, fresh] = by_name_.emplace(name, index);
    if (!fresh && index < it->second) it->second = index;
  }

  void walk_needed(int root, bool with) {
    std::deque<int> queue{root};
    while (!queue.empty()) {
      int current = queue.front();
      queue.pop_front();
      std::vector<std::string> names = process_.objects[current].elf.needed;
      for (const auto& name : names) {
        size_t before = process_.objects.size();
        NeededEntry entry = map_needed(name, current);
        process_.objects[current].needed.push_back(entry);
        for (size_t i = before; i < process_.objects.size(); ++i) {
          process_.objects[i].is_with = with;
          queue.push_back(static_cast<int>(i));
        }
      }
    }
  }

  std::string origin_of(int index) const { return dir_name(process_.objects[index].path); }

  // glibc's open_verify: a file of another ELF class or machine is skipped silently and the search goes
  // on; anything else that is not a loadable ELF object ends the search with an error.
  const char* skip_reason(const elf::ElfIdent& ident) const {
    if (platform_set_ && ident.is_64 != platform_.is_64) return "skipped: wrong ELF class";
    if (platform_set_ && ident.machine != platform_.machine) return "skipped: wrong machine";
    return nullptr;
  }

  // One candidate file: identified (open_verify), then matched by device and inode against the loaded
  // objects, else read. An object already read in this process or run answers for its file's
  // identification; any other file is identified and read in one opening.
  bool try_path(const std::string& path, const std::string& name, FoundHow how, int requester, NeededEntry& entry,
                bool& stop) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      entry.searched.push_back({path, how, "not found"});
      return false;
    }
    const int existing = find_by_inode(st);
    const elf::ElfObject* known = existing >= 0 ? &process_.objects[existing].elf
                                  : cache_objects_ ? cache_objects_->find(st.st_dev, st.st_ino)
                                                   : nullptr;
    std::optional<elf::ElfObject> fresh;
    elf::ElfIdent ident;
    if (known) {
      ident = {known->is_64, known->big_endian, known->machine, known->osabi, known->kind};
    } else {
      auto probed = elf::probe_object(path, kHeadersOnly, [this](const elf::ElfIdent& id) { return !skip_reason(id); });
      if (!probed) {
        process_.errors.push_back(probed.error());
        entry.searched.push_back({path, how, probed.error().message});
        stop = true;
        return false;
      }
      ident = probed->ident;
      fresh = std::move(probed->object);
    }
    if (const char* skipped = skip_reason(ident)) {
      entry.searched.push_back({path, how, skipped});
      return false;
    }
    entry.searched.push_back({path, how, "found"});
    if (existing >= 0) {
      // glibc: same device and inode as a loaded object -> that object, now also known by this name.
      process_.objects[existing].names.push_back(name);
      index_name(name, existing);
      entry.object = existing;
      entry.how = how;
      return true;
    }
    Result<elf::ElfObject> obj = fresh ? Result<elf::ElfObject>(std::move(*fresh)) : read_headers(path, st);
    if (!obj) {
      process_.errors.push_back(obj.error());
      entry.searched.back().outcome = obj.error().message;
      stop = true;
      return false;
    }
    entry.object = add_object(std::move(obj).value(), path, how, requester, name, st);
    entry.how = how;
    return true;
  }

  NeededEntry map_needed(const std::string& name, int requester) {
    NeededEntry entry;
    entry.name = name;
    if (int loaded = find_by_name(name); loaded >= 0) {
      entry.object = loaded;
      entry.how = FoundHow::AlreadyLoaded;
      return entry;
    }
    if (auto missing = missing_.find(name); missing != missing_.end()) {
      // glibc (trace mode) keeps a stand-in map for a library that was not found; later requests
      // for the same name match it and fail the same way.
      entry.searched = missing->second;
      return entry;
    }
    bool stop = false;
    if (name.find('/') != std::string::npos) {
      auto expanded = expand_dst(name, origin_of(requester), platform_.lib, platform_.platform);
      if (expanded) try_path(*expanded, name, FoundHow::Direct, requester, entry, stop);
    } else {
      search(name, requester, entry, stop);
      if (entry.object >= 0) entry.candidates = other_candidates(name, requester, process_.objects[entry.object]);
    }
    if (entry.object < 0) missing_[name] = entry.searched;
    return entry;
  }

  // The files the search would accept other than `picked`, in search order (loader/search_order.h),
  // then the candidate directories: what the loader would have taken had the picked copy been
  // absent. Side-effect free: nothing is loaded or reported.
  std::vector<SearchAttempt> other_candidates(const std::string& name, int requester, const LoadedObject& picked) {
    std::vector<std::pair<std::string, FoundHow>> order;
    for (const auto& step : search_order(name, process_, requester, env_, platform_, system_cache()))
      if (!step.passed_over) order.push_back({step.path, step.how});
    for (const auto& d : env_.candidate_dirs) order.push_back({join_path(d, name), FoundHow::Sdk});
    std::vector<SearchAttempt> out;
    std::vector<std::pair<dev_t, ino_t>> seen{{picked.dev, picked.ino}};
    for (const auto& [path, how] : order) {
      struct stat st;
      if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (std::find(seen.begin(), seen.end(), std::make_pair(st.st_dev, st.st_ino)) != seen.end()) continue;
      seen.push_back({st.st_dev, st.st_ino});
      auto ident = elf::read_ident(path);
      if (!ident || ident->is_64 != platform_.is_64 || ident->machine != platform_.machine) continue;
      out.push_back({path, how, "candidate"});
    }
    return out;
  }

  // The search itself: each step of the order (loader/search_order.h) tried until one is taken or an
  // error ends it; the steps the loader passes over are recorded. The order is listed before the
  // first try, since a try that loads a library grows process_.objects.
  void search(const std::string& name, int requester, NeededEntry& entry, bool& stop) {
    for (const auto& step : search_order(name, process_, requester, env_, platform_, system_cache())) {
      if (step.passed_over) {
        entry.searched.push_back({step.path, step.how, step.passed_over});
        continue;
      }
      if (try_path(step.path, name, step.how, requester, entry, stop) || stop) return;
    }
  }

  const SystemCache& system_cache() {
    if (!cache_loaded_) cache_ = read_system_cache(env_, platform_.default_dirs);
    cache_loaded_ = true;
    return cache_;
  }

  const LoaderEnv& env_;
  ObjectCache* cache_objects_;  // may be null
  std::vector<bool> from_cache_;  // per object: already complete

  // An object read before in this run (complete), else read from the file (headers only).
  Result<elf::ElfObject> read_headers(const std::string& path, const struct stat& st) {
    if (cache_objects_) {
      if (const elf::ElfObject* known = cache_objects_->find(st.st_dev, st.st_ino)) {
        from_cache_.resize(process_.objects.size() + 1);
        from_cache_[process_.objects.size()] = true;
        return *known;
      }
    }
    return elf::read_object(path, kHeadersOnly);
  }
  Process process_;
  std::unordered_map<std::string, int> by_name_;           // find_by_name's index
  std::map<std::pair<dev_t, ino_t>, int> by_inode_;        // find_by_inode's index
  std::map<std::string, std::vector<SearchAttempt>> missing_;
  bool platform_set_ = false;
  SearchPlatform platform_;
  bool cache_loaded_ = false;
  SystemCache cache_;
};

}  // namespace

Result<Process> load_process(const std::string& target, const LoaderEnv& env, ObjectCache* cache) {
  return Emulator(env, cache).run(target);
}

const elf::ElfObject* ObjectCache::find(dev_t dev, ino_t ino) const {
  auto it = objects_.find({dev, ino});
  return it == objects_.end() ? nullptr : &it->second;
}

void ObjectCache::add(dev_t dev, ino_t ino, const elf::ElfObject& object) { objects_.emplace(std::make_pair(dev, ino), object); }

std::vector<int> lookup_scope(const Process& process, int root) {
  std::vector<int> scope;
  std::vector<char> listed(process.objects.size(), 0);
  for (size_t i = 0; i < process.objects.size(); ++i)
    if (process.objects[i].global) {
      scope.push_back(static_cast<int>(i));
      listed[i] = 1;
    }
  if (root < 0 || root >= static_cast<int>(process.objects.size())) return scope;
  // dl-deps.c: breadth first over DT_NEEDED, each object once, through objects loaded before too.
  std::vector<int> queue{root};
  std::vector<char> seen(process.objects.size(), 0);
  seen[root] = 1;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int current = queue[head];
    if (!listed[current]) {
      scope.push_back(current);
      listed[current] = 1;
    }
    for (const auto& entry : process.objects[current].needed)
      if (entry.object >= 0 && !seen[entry.object]) {
        seen[entry.object] = 1;
        queue.push_back(entry.object);
      }
  }
  return scope;
}

void read_symbol_tables(Process& process, const std::vector<int>& objects) {
  std::vector<std::optional<InputError>> errors(objects.size());
  tbb::parallel_for(size_t{0}, objects.size(), [&](size_t k) {
    auto& elf = process.objects[objects[k]].elf;
    // The objects whose relocations take long, each on its own line.
    PhaseTime timed(PhaseTime::enabled() ? "relocations:" + elf.path : std::string(), 2.0);
    errors[k] = elf::read_symbols(elf, elf::ReadOptions{.relocations = true, .lookup_only = true});
  });
  for (auto& e : errors)
    if (e) process.errors.push_back(*e);
}

}  // namespace mlc::loader
