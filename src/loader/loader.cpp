// The mapping phase of glibc's ld.so, emulated on files: breadth-first over DT_NEEDED in load order,
// each name expanded (dl-deps.c) and searched as _dl_map_object does (RPATH chain, LD_LIBRARY_PATH,
// RUNPATH, ld.so.cache, system dirs, each directory after its hwcaps subdirectories), each candidate
// verified as open_verify and _dl_map_object_from_fd do, objects de-duplicated by name, soname and
// device+inode; the host's ld.so and libc loaded already.
#include "loader/loader.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "common/paths.h"
#include "common/phase_times.h"
#include "elf/kept_relocations.h"
#include "loader/ld_cache.h"
#include "loader/program.h"
#include "loader/read_ahead.h"
#include "loader/search_order.h"

namespace mlc::loader {

std::string to_string(const SearchOutcome& outcome) {
  switch (outcome.kind) {
    case SearchOutcome::Kind::Found: return "found";
    case SearchOutcome::Kind::NotFound: return "not found";
    case SearchOutcome::Kind::NoEntry: return "no entry";
    case SearchOutcome::Kind::Candidate: return "candidate";
    case SearchOutcome::Kind::Skipped: return "skipped: " + outcome.detail;
    case SearchOutcome::Kind::Refused: break;
  }
  return outcome.detail;
}

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
    case FoundHow::Checked: return "checked";
    case FoundHow::Preload: return "ld_preload";
  }
  return "direct";
}

namespace {

// A path the process opens relative to its working directory `cwd`, made absolute for the report.
std::string absolute_in(const std::string& cwd, std::string path) {
  if (path.empty() || path[0] == '/' || cwd.empty()) return path;
  while (path.rfind("./", 0) == 0) path.erase(0, 2);
  return join_path(cwd, path);
}

// The names glibc's own ld.so answers to in a process: the soname rtld.c adds to its map beside the
// PT_INTERP path. Every process has it loaded before anything else.
std::vector<std::string> ldso_names(uint16_t machine, bool is_64) {
  switch (machine) {
    case 62:
      return is_64 ? std::vector<std::string>{"ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"}
                   : std::vector<std::string>{"ld-linux-x32.so.2", "/libx32/ld-linux-x32.so.2"};
    case 3: return {"ld-linux.so.2", "/lib/ld-linux.so.2"};
    case 183: return {"ld-linux-aarch64.so.1", "/lib/ld-linux-aarch64.so.1"};
    case 40: return {"ld-linux-armhf.so.3", "/lib/ld-linux-armhf.so.3"};
    case 21: return {"ld64.so.2", "/lib64/ld64.so.2"};
    case 22: return {"ld64.so.1", "/lib/ld64.so.1"};
    case 243: return {"ld-linux-riscv64-lp64d.so.1", "/lib/ld-linux-riscv64-lp64d.so.1"};
    default: return {};
  }
}

class Emulator {
 public:
  // Room for a process's objects from the start: an object is 912 bytes, and a vector grown by doubling
  // moved Debian's libtorch_cpu's objects at each of its nine growths, into fresh pages each time (3.8% of the
  // main thread's samples here). Reserving touches no page.
  Emulator(const LoaderEnv& env, ObjectCache* cache) : env_(env), cache_objects_(cache) {
    process_.objects.reserve(512);
  }

  Result<Process> run(const std::string& target) {
    process_.cwd = env_.cwd;
    process_.candidate_dirs = env_.candidate_dirs;
    // The main program: the target when it is one (its --with libraries are then what LD_PRELOAD
    // loads at its start), else the first --with library when that is one (an interpreter).
    if (auto headers = elf::read_object(target, kHeadersOnly); headers && is_program(*headers)) {
      main_path_ = target;
    } else if (!env_.with.empty()) {
      if (auto first = elf::read_object(env_.with.front(), kHeadersOnly); first && is_program(*first))
        main_path_ = env_.with.front();
    }
    // A file loaded without a program (no host known): the preloads come first all the same.
    if (main_path_.empty() && !env_.preload.empty())
      if (auto headers = elf::read_object(target, kHeadersOnly)) {
        set_platform(*headers);
        walk_preloads(load_preloads());
      }
    for (const auto& with : env_.with) {
      const bool global = std::find(env_.with_local.begin(), env_.with_local.end(), with) == env_.with_local.end();
      const size_t before = process_.objects.size();
      int index = load_root(with, FoundHow::With);
      if (index >= 0) {
        process_.objects[index].is_with = true;
        const std::vector<int> preloads = index == process_.main ? load_preloads() : std::vector<int>{};
        walk_needed(index, true);
        mark_root(before, index);
        walk_preloads(preloads);
        // dl-open.c add_to_global: RTLD_GLOBAL puts the whole search list of the new object in the
        // global scope, objects an earlier RTLD_LOCAL load brought in included.
        if (global)
          for (int i : lookup_scope(process_, index)) process_.objects[i].global = true;
      }
    }
    auto ident = elf::read_ident(target);
    if (!ident) return ident.error();
    const size_t before = process_.objects.size();
    int index = load_root(target, FoundHow::Direct, &*ident);
    if (index < 0) return process_.errors.back();
    process_.objects[index].is_target = true;
    process_.target = index;
    const std::vector<int> preloads = index == process_.main ? load_preloads() : std::vector<int>{};
    walk_needed(index, false);
    mark_root(before, index);
    walk_preloads(preloads);
    ahead_.reset();  // the reads nobody took are dropped, and the cores are free for the tables
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
  // The process's class, byte order and machine, from its first object's identification.
  void take_class(const elf::ElfIdent& ident) {
    process_class_ = {.is_64 = ident.is_64, .big_endian = ident.big_endian, .machine = ident.machine};
  }

  // Platform facts follow the first object loaded (what the loader of that class/machine would be).
  void set_platform(const elf::ElfObject& o) {
    if (platform_set_) return;
    platform_set_ = true;
    platform_ = search_platform(env_, o.machine, o.is_64);
    dirs_memo_ = {};  // lists decomposed for another platform's $LIB and $PLATFORM
    process_class_ = {.is_64 = o.is_64, .big_endian = o.big_endian, .machine = o.machine};
  }

  // rtld.c: LD_PRELOAD's (and /etc/ld.so.preload's) objects are mapped right after the main program, as
  // requested by it (do_preload: _dl_map_object(main_map, name, lt_library...)), before its DT_NEEDED; they
  // are in the global scope, so they come before its dependencies in every look-up. One glibc cannot load is
  // ignored ("cannot be preloaded ...: ignored"). The roots loaded, in order; their dependencies come after.
  std::vector<int> load_preloads() {
    std::vector<int> roots;
    for (const auto& name : env_.preload) {
      NeededEntry entry;
      const bool was_starting = starting_;
      starting_ = true;
      if (process_.main >= 0) {
        entry = map_needed(name, process_.main);
      } else if (name.find('/') == std::string::npos) {
        entry.name = entry.expanded = name;
        search(name, -1, entry);
      } else {
        TryOutcome out;
        entry.name = entry.expanded = name;
        try_path({name, name, FoundHow::Direct, -1, false}, entry, out);
      }
      starting_ = was_starting;
      if (entry.object < 0 || std::find(roots.begin(), roots.end(), entry.object) != roots.end()) continue;
      auto& o = process_.objects[entry.object];
      if (o.host || static_cast<int>(entry.object) == process_.main) continue;  // already in the process
      o.is_with = o.global = o.at_start = true;
      o.how = FoundHow::Preload;
      o.root = entry.object;
      roots.push_back(entry.object);
    }
    return roots;
  }

  // The preloads' own dependencies, after the main program's (one breadth-first walk in glibc); in the
  // global scope, as they are.
  void walk_preloads(const std::vector<int>& roots) {
    for (int root : roots) {
      const size_t before = process_.objects.size();
      starting_ = true;
      walk_needed(root, true);
      mark_root(before, root);
      process_.objects[root].root = root;
      for (int i : lookup_scope(process_, root)) process_.objects[i].global = true;
    }
  }

  // The objects from `first` on were brought in by the load of `root`.
  void mark_root(size_t first, int root) {
    for (size_t i = first; i < process_.objects.size(); ++i)
      if (!process_.objects[i].host) process_.objects[i].root = root;
  }

  // A --with library or the target: dlopen'ed by the host, or - a program (loader/program.h) - the
  // main program the process starts with, whose closure is loaded at start.
  // `ident`: the file's identification when the caller read it already.
  int load_root(const std::string& path, FoundHow how, const elf::ElfIdent* ident = nullptr) {
    struct stat st;
    const bool stated = stat_path(path, st) == 0;
    if (stated) {
      if (int existing = find_by_inode(st); existing >= 0) return existing;
    }
    // Only a regular file is opened here (a FIFO's open would wait for a writer); anything else gets
    // read_object's own error.
    elf::Descriptor file;
    elf::LoadHeader header;
    if (stated && S_ISREG(st.st_mode)) {
      // The first object's class, byte order and machine are the process's (set_platform): its header is
      // read as that loader reads it, not as the tool's own class would.
      if (!platform_set_) {
        if (ident) take_class(*ident);
        else if (auto read = elf::read_ident(path)) take_class(*read);
      }
      header = elf::read_load_header(path, process_class_, &file);
    }
    auto obj = read_headers(path, st, file);
    if (!obj) {
      process_.errors.push_back(obj.error());
      return -1;
    }
    set_platform(*obj);
    const bool program = path == main_path_;
    // Loaded at the process's start: the main program, and before a program target, its preloads.
    starting_ = program || (!main_path_.empty() && process_.main < 0 && how == FoundHow::With);
    obj->header = header;
    const int index = add_object(std::move(obj).value(), path, how, -1, path, st);
    auto& o = process_.objects[index];
    if (program) {
      // The main program: $ORIGIN is its real directory (dl-origin.c reads /proc/self/exe).
      char real[PATH_MAX];
      if (realpath(o.path.c_str(), real)) o.origin = dir_name(real);
      o.at_start = true;
      o.global = true;
      process_.main = index;
    } else if (o.elf.noopen() && !starting_) {
      fail(FailureKind::NoOpen, index, o.path, {});
    }
    check_isa_level(index, index);
    return index;
  }

  int add_object(elf::ElfObject obj, const std::string& realname, FoundHow how, int loader, const std::string& name,
                 const struct stat& st) {
    LoadedObject lo;
    lo.realname = realname;
    lo.path = absolute(realname);
    lo.origin = dir_name(lo.path);
    lo.how = how;
    lo.loader = loader;
    lo.dev = st.st_dev;
    lo.ino = st.st_ino;
    lo.names.push_back(name);
    lo.at_start = starting_;
    lo.elf = std::move(obj);
    const int index = static_cast<int>(process_.objects.size());
    index_name(name, index);
    index_name(lo.realname, index);
    if (!lo.elf.soname.empty()) by_soname_.emplace(lo.elf.soname, index);
    by_inode_.emplace(std::make_pair(lo.dev, lo.ino), index);
    process_.objects.push_back(std::move(lo));
    return index;
  }

  std::string absolute(std::string path) const { return absolute_in(env_.cwd, std::move(path)); }

  int find_by_inode(const struct stat& st) const {
    auto it = by_inode_.find({st.st_dev, st.st_ino});
    return it == by_inode_.end() ? -1 : it->second;
  }

  // dl-load.c _dl_map_object: the first object in load order that answers to the name - its l_name,
  // one of the names it was requested by (_dl_name_match_p), or its soname, which it then answers to.
  int find_by_name(const std::string& name) {
    auto by_name = by_name_.find(name);
    auto by_soname = by_soname_.find(name);
    int found = by_name == by_name_.end() ? -1 : by_name->second;
    if (by_soname != by_soname_.end() && (found < 0 || by_soname->second < found)) {
      found = by_soname->second;
      process_.objects[found].names.push_back(name);
      index_name(name, found);
    }
    return found;
  }

  void index_name(const std::string& name, int index) {
    auto [it, fresh] = by_name_.emplace(name, index);
    if (!fresh && index < it->second) it->second = index;
  }

  void walk_needed(int root, bool with) {
    // A run of several inputs loads them side by side already: its cores are taken.
    if (!ahead_ && (!cache_objects_ || !cache_objects_->keeps_objects()) && ReadAhead::worthwhile())
      ahead_ = std::make_unique<ReadAhead>(process_class_, cache_objects_);
    read_ahead(root);
    std::deque<int> queue{root};
    while (!queue.empty()) {
      int current = queue.front();
      queue.pop_front();
      std::vector<std::string> names = process_.objects[current].elf.needed;
      for (const auto& name : names) {
        size_t before = process_.objects.size();
        NeededEntry entry = map_needed(name, current);
        process_.objects[current].needed.push_back(std::move(entry));
        for (size_t i = before; i < process_.objects.size(); ++i) {
          if (process_.objects[i].host) continue;
          process_.objects[i].is_with = with;
          queue.push_back(static_cast<int>(i));
          read_ahead(static_cast<int>(i));
        }
      }
    }
    starting_ = false;
  }

  // The searches the DT_NEEDED names of `object` will make, started ahead (loader/read_ahead.h): each name
  // not loaded by now, searched from this object. Their steps are kept for the walk's own search of the
  // same name from the same object.
  void read_ahead(int object) {
    if (!ahead_ || object < 0 || !platform_set_) return;
    const LoadedObject& o = process_.objects[object];
    for (const auto& name : o.elf.needed) {
      if (steps_ahead_.count(name)) continue;  // most names: a DT_NEEDED without a token is its own expansion
      std::optional<std::string> dst;
      if (name.find('$') != std::string::npos && !(dst = expand_dst(name, o.origin, platform_.lib, platform_.platform)))
        continue;
      const std::string& expanded = dst ? *dst : name;
      if (expanded.find('/') != std::string::npos || by_name_.count(expanded) || by_soname_.count(expanded) ||
          missing_.count(expanded))
        continue;  // loaded already
      auto [it, fresh] = steps_ahead_.try_emplace(expanded);
      if (!fresh) continue;  // searched ahead from an object before (most often the same search)
      it->second.requester = object;
      it->second.main = process_.main;
      it->second.target = process_.target;
      it->second.steps = std::make_shared<const SearchSteps>(
          search_steps(expanded, process_, object, env_, platform_, system_cache(), &dirs_memo_));
      ahead_->search(it->second.steps, expanded, subdirs());
    }
  }

  const std::shared_ptr<const std::vector<std::string>>& subdirs() {
    if (!subdirs_) subdirs_ = std::make_shared<const std::vector<std::string>>(platform_.subdirs);
    return subdirs_;
  }

  void fail(FailureKind kind, int object, const std::string& file, FailureFacts facts) {
    process_.failures.push_back(
        {.kind = kind, .object = object, .file = file, .symbol = "", .facts = std::move(facts)});
  }

  // sysdeps/x86/dl-prop.h dl_isa_level_check: an object needing a higher x86-64 ISA level than the
  // CPU's fails the load (ld.so itself is exempt).
  void check_isa_level(int index, int requester) {
    const auto& o = process_.objects[index];
    const uint32_t needed = o.elf.header.x86_isa_1_needed;
    const int level = env_.x86_cpu_isa_level;
    const uint32_t cpu = (1u << std::clamp(level, 1, 4)) - 1;
    if (level <= 0 || o.elf.machine != 62 || o.host || (needed & cpu) == needed) return;
    fail(FailureKind::IsaLevel, requester, o.path, {.level = level});
  }

  // A candidate glibc refuses: the search ends and the load fails there (the tool goes on, as ldd
  // does, to report the rest).
  void refuse(FailureKind kind, const std::string& path, const std::string& words, int requester, NeededEntry& entry) {
    const std::string file = absolute(path);
    entry.refused = file;
    entry.searched.back().outcome = {.kind = SearchOutcome::Kind::Refused, .detail = words};
    const std::string needed_by = requester >= 0 ? base_name(process_.objects[requester].path) : "the host program";
    fail(kind, requester, file,
         {.by = needed_by, .provider = dir_name(file), .needed = entry.expanded, .refused = true, .glibc = words});
  }

  // One file to try: where, for which name, reached how, asked for by whom. `quiet`: a hwcaps
  // subdirectory's file, recorded only when something is there.
  struct Candidate {
    const std::string& path;
    const std::string& name;
    FoundHow how;
    int requester;
    bool quiet;
  };
  // What a try says besides taking the file: whether the search ends there (a refused file), and the
  // error the open gave (ENOENT for a file passed over), which decides whether open_path goes on.
  struct TryOutcome {
    bool stop = false;
    int open_errno = ENOENT;
  };

  // One candidate file, as dl-load.c tries it: open_verify (another class or machine is skipped;
  // anything else amiss ends the search with an error), then map_candidate.
  bool try_path(const Candidate& c, NeededEntry& entry, TryOutcome& out) {
    struct stat st;
    out.open_errno = ENOENT;
    if (stat_path(c.path, st) != 0) {
      out.open_errno = errno == ENOTDIR ? ENOENT : errno;
      if (out.open_errno == ENOENT || out.open_errno == EACCES) {
        if (!c.quiet) entry.searched.push_back({c.path, c.how, {}});
      } else {
        entry.searched.push_back({c.path, c.how, skipped(std::strerror(out.open_errno))});
      }
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      // open(2) takes a directory; reading its header fails with EISDIR. At a program's start ld.so
      // words errno itself (dl-minimal.c __strerror_r: "Error 21"); a dlopen's dlerror() has libc's.
      entry.searched.push_back({c.path, c.how, {}});
      refuse(FailureKind::BadCandidate, c.path,
             starting_ ? "cannot read file data: Error 21" : "cannot read file data: Is a directory", c.requester,
             entry);
      out.stop = true;
      return false;
    }
    const int existing = S_ISREG(st.st_mode) ? find_by_inode(st) : -1;
    const elf::ElfObject* known = existing >= 0    ? &process_.objects[existing].elf
                                  : cache_objects_ ? cache_objects_->find(st.st_dev, st.st_ino)
                                                   : nullptr;
    elf::Descriptor file;  // the one open of this candidate, read again by map_candidate
    // An object read before (this run's cache) answers with the header it was accepted with, when this
    // process is of its class: one of another process's class was read against that class.
    const bool known_fits = known && known->header.verdict == elf::LoadHeader::Verdict::Accepted &&
                            known->is_64 == process_class_.is_64 && known->big_endian == process_class_.big_endian &&
                            known->machine == process_class_.machine;
    // Else the file as a search ahead read it, when one did.
    std::optional<ReadAheadFile> ahead;
    if (S_ISREG(st.st_mode) && !known_fits && existing < 0 && ahead_) ahead = ahead_->take(c.path);
    const elf::LoadHeader header = !S_ISREG(st.st_mode) ? elf::LoadHeader{}
                                   : known_fits         ? known->header
                                   : ahead              ? ahead->header
                                                        : elf::read_load_header(c.path, process_class_, &file);
    switch (header.verdict) {
      case elf::LoadHeader::Verdict::Unopened:
        if (!c.quiet) entry.searched.push_back({c.path, c.how, {}});
        return false;
      case elf::LoadHeader::Verdict::OtherClass:
        entry.searched.push_back({c.path, c.how, skipped("wrong ELF class")});
        return false;
      case elf::LoadHeader::Verdict::OtherMachine:
        entry.searched.push_back({c.path, c.how, skipped("wrong machine")});
        return false;
      case elf::LoadHeader::Verdict::Refused:
        entry.searched.push_back({c.path, c.how, {}});
        refuse(FailureKind::BadCandidate, c.path, header.open_refusal, c.requester, entry);
        out.stop = true;
        return false;
      case elf::LoadHeader::Verdict::Accepted: break;
    }
    entry.searched.push_back({c.path, c.how, {.kind = SearchOutcome::Kind::Found, .detail = ""}});
    return map_candidate(c, header, st, existing, file, ahead ? &ahead->object : nullptr, entry, out);
  }

  // An accepted file: the loaded object of the same device and inode, else _dl_map_object_from_fd's
  // own refusals (no PT_LOAD or PT_DYNAMIC, an executable, a PIE, DF_1_NOOPEN under dlopen), else a
  // new object.
  // `ahead`: the headers a search ahead read, when it did.
  bool map_candidate(const Candidate& c, const elf::LoadHeader& header, const struct stat& st, int existing,
                     elf::Descriptor& file, std::optional<Result<elf::ElfObject>>* ahead, NeededEntry& entry,
                     TryOutcome& out) {
    if (existing >= 0) {
      // glibc: same device and inode as a loaded object -> that object, now also known by this name.
      process_.objects[existing].names.push_back(c.name);
      index_name(c.name, existing);
      entry.object = existing;
      entry.how = c.how;
      return true;
    }
    const char* refusal = header.map_refusal.empty() ? nullptr : header.map_refusal.c_str();
    Result<elf::ElfObject> obj =
        refusal ? Result<elf::ElfObject>(InputError{c.path, ""}) : read_headers(c.path, st, file, ahead);
    if (!refusal && !obj) {
      process_.errors.push_back(obj.error());
      entry.searched.back().outcome = {.kind = SearchOutcome::Kind::Refused, .detail = obj.error().message};
      out.stop = true;
      return false;
    }
    FailureKind kind = FailureKind::BadCandidate;
    if (!refusal && obj->pie()) refusal = "cannot dynamically load position-independent executable";
    if (!refusal && obj->noopen() && !starting_) {
      refusal = "shared object cannot be dlopen()ed";
      kind = FailureKind::NoOpen;
    }
    if (refusal) {
      refuse(kind, c.path, refusal, c.requester, entry);
      out.stop = true;
      return false;
    }
    obj->header = header;
    entry.object = add_object(std::move(obj).value(), c.path, c.how, c.requester, c.name, st);
    entry.how = c.how;
    check_isa_level(entry.object, c.requester);
    return true;
  }

  NeededEntry map_needed(const std::string& name, int requester) {
    NeededEntry entry;
    entry.name = name;
    // dl-deps.c: every DT_NEEDED is expanded (DSTs) before it is matched or searched.
    auto expanded = expand_dst(name, process_.objects[requester].origin, platform_.lib, platform_.platform);
    entry.expanded = expanded.value_or(name);
    if (!expanded) {
      entry.searched.push_back({name, FoundHow::Direct, skipped("a dynamic string token has no value here")});
      return entry;
    }
    if (int loaded = find_by_name(entry.expanded); loaded >= 0) {
      entry.object = loaded;
      entry.how = FoundHow::AlreadyLoaded;
      return entry;
    }
    if (int host = host_object(entry.expanded); host >= 0) {
      entry.object = host;
      entry.how = FoundHow::AlreadyLoaded;
      return entry;
    }
    if (auto missing = missing_.find(entry.expanded); missing != missing_.end()) {
      // glibc (trace mode) keeps a stand-in map for a library that was not found; later requests
      // for the same name match it and fail the same way.
      entry.searched = missing->second.searched;
      entry.refused = missing->second.refused;
      return entry;
    }
    if (entry.expanded.find('/') != std::string::npos) {
      TryOutcome out;
      try_path({entry.expanded, entry.expanded, FoundHow::Direct, requester, false}, entry, out);
    } else {
      std::shared_ptr<const SearchSteps> steps = search(entry.expanded, requester, entry);
      if (entry.object >= 0) {
        entry.places = std::move(steps);
        entry.place_subdirs = subdirs();
      }
    }
    // The report's paths are absolute: a relative search path element is the working directory's.
    for (auto& step : entry.searched)
      if (!step.path.empty() && step.path[0] != '(') step.path = absolute(step.path);
    if (entry.object < 0) missing_[entry.expanded] = entry;
    return entry;
  }

  // The host a dlopen'ed file is loaded into (a Python, a C program) has ld.so and its own libc.so.6
  // loaded before anything: a DT_NEEDED of either name is that object, whatever the requester's
  // search path or DF_1_NODEFLIB say (dl-load.c _dl_map_object matches loaded names first). A program
  // target's own start loads libc by its search; ld.so is in every process. They are added when
  // first asked for, found as the host's own start finds them (LD_LIBRARY_PATH, ld.so.cache, the
  // system directories).
  int host_object(const std::string& name) {
    if (!platform_set_) return -1;
    const auto ldso = ldso_names(platform_.machine, platform_.is_64);
    const bool is_ldso = std::find(ldso.begin(), ldso.end(), name) != ldso.end();
    if (!is_ldso && (name != "libc.so.6" || !main_path_.empty())) return -1;
    const std::string soname = is_ldso ? ldso.front() : name;
    NeededEntry entry;
    entry.name = entry.expanded = soname;
    const bool was_starting = starting_;
    starting_ = true;
    search(soname, -1, entry);
    starting_ = was_starting;
    if (entry.object < 0) return -1;
    const int index = entry.object;
    auto& o = process_.objects[index];
    o.host = o.global = o.at_start = true;
    for (const auto& n : ldso)
      if (is_ldso && n != soname) {
        o.names.push_back(n);
        index_name(n, index);
      }
    // Its own dependencies (libc's ld.so) were loaded with it, at the host's start.
    const std::vector<std::string> needs = o.elf.needed;
    starting_ = true;
    for (const auto& n : needs) {
      NeededEntry dep = map_needed(n, index);
      process_.objects[index].needed.push_back(std::move(dep));
    }
    starting_ = was_starting;
    return index;
  }

  // The search itself: each step of the order (loader/search_order.h) tried until one is taken or an
  // error ends it; the steps the loader passes over are recorded. The steps are listed before the first
  // try, since a try that loads a library grows process_.objects; a step's path is made when it is tried.
  // The steps are kept when a search picks a file: other_copies probes them.
  std::shared_ptr<const SearchSteps> search(const std::string& name, int requester, NeededEntry& entry) {
    int ended = -1;  // a list an open error ended
    TryOutcome out;  // its open_errno: the last open's error in the current directory
    std::shared_ptr<const SearchSteps> steps;
    if (auto it = steps_ahead_.find(name); it != steps_ahead_.end() && it->second.requester == requester &&
                                           it->second.main == process_.main && it->second.target == process_.target)
      steps = it->second.steps;  // listed for the search ahead, from the same process state
    else
      steps = std::make_shared<const SearchSteps>(
          search_steps(name, process_, requester, env_, platform_, system_cache(), &dirs_memo_));
    each_step(*steps, name, platform_.subdirs,
              [&](const std::string& path, FoundHow how, int list, bool subdir,
                  const std::optional<SearchOutcome>& passed_over) {
                if (list == ended) return false;
                if (passed_over) {
                  entry.searched.push_back({path, how, *passed_over});
                  return false;
                }
                if (subdir && !dir_exists(dir_view(path))) {
                  out.open_errno = ENOENT;
                  return false;
                }
                if (try_path({path, name, how, requester, subdir}, entry, out) || out.stop) return true;
                // dl-load.c open_path: once a directory's files are all tried (its own last), an error other
                // than ENOENT or EACCES in an existing directory ends the list.
                if (!subdir && out.open_errno != ENOENT && out.open_errno != EACCES && dir_exists(dir_view(path)))
                  ended = list;
                return false;
              });
    return steps;
  }

  // Whether a hwcaps subdirectory exists, asked once per directory (glibc remembers it too: the
  // r_search_path_elem status of each directory and subdirectory).
  bool dir_exists(std::string_view dir) {
    if (auto it = dirs_.find(dir); it != dirs_.end()) return it->second;
    const std::string named(dir);
    struct stat st;
    const bool is = stat_path(named, st) == 0 && S_ISDIR(st.st_mode);
    dirs_.emplace(named, is);
    return is;
  }

  const SystemCache& system_cache() {
    if (!cache_) cache_ = read_system_cache(env_, platform_.default_dirs);
    return *cache_;
  }

  const LoaderEnv& env_;
  ObjectCache* cache_objects_;    // may be null
  std::vector<bool> from_cache_;  // per object: already complete

  // stat(2), through the run's memo when there is one (stat_through); errno as stat sets it.
  int stat_path(const std::string& path, struct stat& st) {
    if (int err = stat_through(cache_objects_, path, st); err != 0) {
      errno = err;
      return -1;
    }
    return 0;
  }

  // An object read before in this run (complete), else read from the file (headers only): from the
  // descriptor read_load_header opened, when it kept one.
  Result<elf::ElfObject> read_headers(const std::string& path, const struct stat& st, elf::Descriptor& file,
                                      std::optional<Result<elf::ElfObject>>* ahead = nullptr) {
    if (cache_objects_) {
      if (const elf::ElfObject* known = cache_objects_->find(st.st_dev, st.st_ino)) {
        from_cache_.resize(process_.objects.size() + 1);
        from_cache_[process_.objects.size()] = true;
        return *known;
      }
    }
    if (ahead && ahead->has_value()) return std::move(**ahead);
    return file.fd >= 0 ? elf::read_object(file, path, kHeadersOnly) : elf::read_object(path, kHeadersOnly);
  }
  Process process_;
  std::unordered_map<std::string, int> by_name_;     // l_name and the names requested (find_by_name)
  std::unordered_map<std::string, int> by_soname_;   // sonames not requested yet
  std::map<std::pair<dev_t, ino_t>, int> by_inode_;  // find_by_inode's index
  std::map<std::string, NeededEntry> missing_;
  std::unordered_map<std::string, bool, ViewHash, std::equal_to<>> dirs_;  // dir_exists's answers
  SearchDirsMemo dirs_memo_;  // the RPATH and RUNPATH lists, decomposed once each
  bool platform_set_ = false;
  bool starting_ = false;  // mapping the main program's closure (a process's start), not a dlopen
  std::string main_path_;  // the main program, when the process has a known one
  SearchPlatform platform_;
  elf::ProcessClass process_class_;
  std::shared_ptr<const SystemCache> cache_;
  std::shared_ptr<const std::vector<std::string>> subdirs_;  // platform_.subdirs, shared by the kept places
  // The steps listed for a search ahead, by name (each searched ahead once), with the object that requested
  // it and the main program and target they were listed under (an LD_LIBRARY_PATH's $ORIGIN is theirs).
  struct StepsAhead {
    int requester = -1;
    int main = -1;
    int target = -1;
    std::shared_ptr<const SearchSteps> steps;
  };
  std::unordered_map<std::string, StepsAhead> steps_ahead_;
  std::unique_ptr<ReadAhead> ahead_;  // last: its reads end before the rest goes
};

}  // namespace

Result<Process> load_process(const std::string& target, const LoaderEnv& env, ObjectCache* cache) {
  return Emulator(env, cache).run(target);
}

std::vector<SearchAttempt> other_copies(const Process& process, const NeededEntry& entry) {
  std::vector<SearchAttempt> out;
  if (entry.object < 0 || !entry.places || !entry.place_subdirs) return out;
  std::vector<SearchPlace> places;
  each_step(
      *entry.places, entry.expanded, *entry.place_subdirs,
      [&](const std::string& path, FoundHow how, int, bool subdir, const std::optional<SearchOutcome>& passed_over) {
        if (!passed_over) places.push_back({path, how, subdir});
        return false;
      });
  if (places.empty()) return out;
  for (const auto& d : process.candidate_dirs) places.push_back({join_path(d, entry.expanded), FoundHow::Sdk, false});
  const LoadedObject& picked = process.objects[entry.object];
  std::vector<std::pair<dev_t, ino_t>> seen{{picked.dev, picked.ino}};
  std::map<std::string, bool> dirs;  // whether a hwcaps subdirectory exists, asked once
  for (const auto& place : places) {
    if (place.subdir) {
      const std::string dir = dir_name(place.path);
      auto [it, fresh] = dirs.emplace(dir, false);
      struct stat st;
      if (fresh) it->second = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      if (!it->second) continue;
    }
    struct stat st;
    if (::stat(place.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (std::find(seen.begin(), seen.end(), std::make_pair(st.st_dev, st.st_ino)) != seen.end()) continue;
    seen.push_back({st.st_dev, st.st_ino});
    auto ident = elf::read_ident(place.path);
    if (!ident || ident->is_64 != picked.elf.is_64 || ident->machine != picked.elf.machine) continue;
    out.push_back(
        {absolute_in(process.cwd, place.path), place.how, {.kind = SearchOutcome::Kind::Candidate, .detail = ""}});
  }
  return out;
}

const elf::ElfObject* ObjectCache::find(dev_t dev, ino_t ino) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = objects_.find({dev, ino});
  return it == objects_.end() ? nullptr : &it->second;  // a map's element stays where it is
}

void ObjectCache::add(dev_t dev, ino_t ino, const elf::ElfObject& object) {
  if (keep_objects_) seed(dev, ino, object);
}

void ObjectCache::seed(dev_t dev, ino_t ino, const elf::ElfObject& object) {
  std::lock_guard<std::mutex> lock(mutex_);
  objects_.emplace(std::make_pair(dev, ino), object);
}

int stat_through(ObjectCache* cache, const std::string& path, struct stat& st) {
  if (cache) return cache->stat_path(path, st);
  return ::stat(path.c_str(), &st) == 0 ? 0 : errno;
}

namespace {

constexpr size_t kListedAtMost = 512;  // names; a larger directory (a system one) is stat'ed name by name
constexpr long kAutofsMagic = 0x0187;  // AUTOFS_SUPER_MAGIC
constexpr int kMissesBeforeListing = 2;

}  // namespace

std::shared_ptr<const ObjectCache::Names> ObjectCache::list_names(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  if (!d) return nullptr;
  struct statfs fs;
  if (fstatfs(dirfd(d.get()), &fs) != 0 || static_cast<long>(fs.f_type) == kAutofsMagic) return nullptr;
  auto names = std::make_shared<Names>();
  errno = 0;
  while (const dirent* e = readdir(d.get())) {
    if (names->size() == kListedAtMost) return nullptr;
    names->emplace(e->d_name);
  }
  return errno == 0 ? names : nullptr;  // a listing cut short by an error lists nothing
}

int ObjectCache::stat_path(const std::string& path, struct stat& st) {
  const size_t slash = path.rfind('/');
  const bool listable = !path.empty() && path[0] == '/' && slash != 0 && slash != std::string::npos;
  const std::string_view dir = listable ? std::string_view(path).substr(0, slash) : std::string_view();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = stats_.find(path); it != stats_.end()) {
      st = it->second.second;
      return it->second.first;
    }
    // Missing from its directory's listing, or its directory from the listing of the one above (a hwcaps
    // subdirectory of an RPATH directory that has none).
    const auto missing = [&](std::string_view in, std::string_view name) {
      auto it = listings_.find(in);
      return it != listings_.end() && it->second && !it->second->count(name);
    };
    if (listable) {
      if (missing(dir, std::string_view(path).substr(slash + 1))) return ENOENT;
      if (const size_t up = dir.rfind('/');
          up != 0 && up != std::string_view::npos && missing(dir.substr(0, up), dir.substr(up + 1)))
        return ENOENT;
    }
  }
  std::pair<int, struct stat> answer{0, {}};
  if (::stat(path.c_str(), &answer.second) != 0) answer.first = errno;
  bool list = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = stats_.emplace(path, answer).first;
    st = it->second.second;
    if (listable && answer.first == ENOENT && !listings_.count(dir)) {
      auto [miss, fresh] = misses_.try_emplace(std::string(dir), 0);
      list = ++miss->second == kMissesBeforeListing;
    }
  }
  if (list) {
    const std::string named(dir);
    auto names = list_names(named);
    std::lock_guard<std::mutex> lock(mutex_);
    listings_.try_emplace(named, std::move(names));
  }
  return answer.first;
}

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

void read_symbol_tables(Process& process, const std::vector<int>& checked, const elf::KeptRelocations* kept) {
  // The checked objects, and every other object flagged DF_STATIC_TLS mapped by a dlopen: the static
  // TLS model (relocation_checks.h) needs their initial-exec relocations.
  std::vector<int> objects = checked;
  for (size_t i = 0; i < process.objects.size(); ++i)
    if (process.objects[i].elf.static_tls() && !process.objects[i].at_start &&
        std::find(checked.begin(), checked.end(), static_cast<int>(i)) == checked.end())
      objects.push_back(static_cast<int>(i));
  std::vector<std::optional<InputError>> errors(objects.size());
  tbb::parallel_for(size_t{0}, objects.size(), [&](size_t k) {
    auto& elf = process.objects[objects[k]].elf;
    // The objects whose relocations take long, each on its own line.
    PhaseTime timed(PhaseTime::enabled() ? "relocations:" + elf.path : std::string(), 2.0);
    if (kept) {
      // What an earlier run read of the same file answers: the lookup tables are read (when they were not),
      // the relocations not.
      if (!elf.tables_read)
        if ((errors[k] = elf::read_symbols(elf, elf::ReadOptions{.relocations = false, .lookup_only = true}))) return;
      if (kept->find(elf)) return;
    }
    errors[k] = elf::read_symbols(elf, elf::ReadOptions{.relocations = true, .lookup_only = true});
    if (kept && !errors[k]) kept->store(elf);
  });
  for (auto& e : errors)
    if (e) process.errors.push_back(*e);
}

}  // namespace mlc::loader
