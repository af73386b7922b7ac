// dlopen and dlsym literals checked against the environment. dlopen's search from a library is the
// DT_NEEDED search of that library (glibc dl-open.c -> _dl_map_object with the caller's link map):
// objects already loaded answer first, then the loader's own search order from the caller
// (loader/search_order.h: RPATH chain and the main object's, LD_LIBRARY_PATH, RUNPATH, ld.so.cache,
// the system directories, NODEFLIB).
#include "literals/lookups.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "backend/backend.h"
#include "common/paths.h"
#include "common/phase_times.h"
#include "loader/search_order.h"

namespace mlc::literals {
namespace {

bool imports(const elf::ElfObject& o, std::initializer_list<std::string_view> names) {
  auto named = [&](uint32_t i) {
    auto name = o.name_of(o.dynamic_symbol(i));
    for (auto n : names)
      if (name == n) return true;
    return false;
  };
  // A function called through the PLT is named by a relocation: the checked objects have those read,
  // which spares decoding every .dynsym entry of a large library.
  if (o.has_relocation_info) return std::any_of(o.relocated_symbols.begin(), o.relocated_symbols.end(), named);
  const std::vector<uint32_t> undefined = o.undefined_dynamic_symbols();
  return std::any_of(undefined.begin(), undefined.end(), named);
}

bool exports(const elf::ElfObject& o, const std::string& name, uint32_t hash) {
  std::vector<uint32_t> found;
  o.find_defined(name, hash, found);
  for (uint32_t i : found) {
    auto s = o.dynamic_symbol(i);
    if ((s.binding == elf::Binding::Global || s.binding == elf::Binding::Weak ||
         s.binding == elf::Binding::GnuUnique) &&
        (s.visibility == elf::Visibility::Default || s.visibility == elf::Visibility::Protected))
      return true;
  }
  return false;
}

struct Found {
  std::string path;
  int loaded = -1;  // the process's object dlopen would return, when one is loaded under that name
  std::vector<std::string> searched;
};

// What the searches of one check asked the file system, asked once: the callers of a CUDA stack
// search the same directories for the same names (libcuda.so.1 from each of them), and each directory
// of a search order is tried with its hwcaps subdirectories first. Safe from several threads.
// Every path asked about is what a kept answer depends on (LiteralCache::find_lookups).
class FileFacts {
 public:
  bool is_dir(const std::string& path) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = dirs_.find(path); it != dirs_.end()) return it->second;
    }
    bool d = mlc::is_dir(path);
    std::lock_guard<std::mutex> lock(mutex_);
    return dirs_.emplace(path, d).first->second;
  }
  // The paths asked about, each once.
  std::set<std::string> asked() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::string> out;
    for (const auto& [path, d] : dirs_) out.insert(path);
    for (const auto& [path, id] : idents_) out.insert(path);
    out.insert(noted_.begin(), noted_.end());
    return out;
  }
  // A loaded object a search answered with: read as the process's, asked nothing, depended on all the same.
  void note(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    noted_.insert(path);
  }
  // The file's ELF class and machine, when it is an ELF file.
  std::optional<std::pair<bool, uint16_t>> ident(const std::string& path) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = idents_.find(path); it != idents_.end()) return it->second;
    }
    std::optional<std::pair<bool, uint16_t>> id;
    if (auto r = elf::read_ident(path)) id = std::pair{r->is_64, r->machine};
    std::lock_guard<std::mutex> lock(mutex_);
    return idents_.emplace(path, id).first->second;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, bool> dirs_;
  std::set<std::string> noted_;
  std::unordered_map<std::string, std::optional<std::pair<bool, uint16_t>>> idents_;
};

// Where dlopen(name) called from `caller` finds the file (empty path when nowhere): an object already
// loaded under that name, else the first file of the loader's search order (loader/search_order.h)
// of the caller's class and machine. The steps the loader passes over (NODEFLIB) are not searched.
Found search(const loader::Process& p, int caller, const std::string& name, const loader::LoaderEnv& env,
             const loader::SystemCache& cache, FileFacts& facts) {
  Found f;
  for (const auto& o : p.objects)
    for (const auto& n : o.names)
      if (n == name) {
        f.path = o.path;
        f.loaded = static_cast<int>(&o - p.objects.data());
        return f;
      }
  const auto& obj = p.objects[caller].elf;
  // A path relative to the working directory (an empty LD_LIBRARY_PATH element) is reported absolute.
  auto absolute = [&](const std::string& path) {
    return path.empty() || path[0] == '/' || env.cwd.empty() ? path : join_path(env.cwd, path);
  };
  for (const auto& step :
       loader::search_order(name, p, caller, env, loader::search_platform(env, obj.machine, obj.is_64), cache)) {
    // A hwcaps subdirectory that does not exist holds nothing (the loader's own search skips it too).
    if (step.passed_over || (step.subdir && !facts.is_dir(dir_name(step.path)))) continue;
    f.searched.push_back(absolute(step.path));
    auto ident = facts.ident(step.path);
    if (ident && ident->first == obj.is_64 && ident->second == obj.machine) {
      f.path = absolute(step.path);
      return f;
    }
  }
  return f;
}

// api_prefix without a copy: a view into `s`.
std::string_view prefix_of(std::string_view s) {
  if (s.size() < 3 || s.size() > 128 || !std::islower(static_cast<unsigned char>(s[0]))) return {};
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return {};
  size_t i = 0;
  while (i < s.size() && std::islower(static_cast<unsigned char>(s[i]))) ++i;
  if (i < 2 || i > 6 || i + 1 >= s.size() || !std::isupper(static_cast<unsigned char>(s[i]))) return {};
  return s.substr(0, i);
}

// The API prefixes of the names an object itself exports (hip for hipMalloc): string literals of its
// own API in its .rodata are its error-name and enum tables, not names it looks up elsewhere.
using Prefixes = std::set<std::string, std::less<>>;  // looked up by string_view, never copied for it

Prefixes scan_own_prefixes(const elf::ElfObject& o) {
  Prefixes out;
  for (size_t i = 1; i < o.dynamic_symbol_count(); ++i) {
    auto s = o.dynamic_symbol(static_cast<uint32_t>(i));
    if (s.is_undefined() || s.binding == elf::Binding::Local) continue;
    // Mangled C++ names (most of a large library's) start with '_' and are turned away at once.
    if (auto prefix = prefix_of(o.name_of(s)); !prefix.empty() && !out.count(prefix)) out.emplace(prefix);
  }
  return out;
}

// The same, kept in the literal cache by the file's identity: a warm run reads no .dynsym for it
// (libtorch_cpu's is 15 ms of a 23 ms run-time look-up on the device, all of it this scan).
Prefixes own_prefixes(const elf::ElfObject& o, LiteralCache* cache) {
  static const std::string query = "exported-prefixes";
  if (cache)
    if (auto kept = cache->find(o.path, query)) return Prefixes(kept->begin(), kept->end());
  Prefixes out = scan_own_prefixes(o);
  if (cache) cache->store(o.path, query, std::vector<std::string>(out.begin(), out.end()));
  return out;
}

// A library some caller dlopens, read once per check however many callers open it: the process's
// own object when it is loaded, else read from its file; with the API prefixes it exports.
struct Opened {
  const elf::ElfObject* object = nullptr;
  std::optional<elf::ElfObject> read;  // when not loaded in the process
  Prefixes prefixes;
};

}  // namespace

void add_gpu_stacks(const loader::Process& process, std::set<std::string>& vendors) {
  auto add = [&](const std::string& name) {
    if (auto v = backend::stack_vendor(base_name(name)); !v.empty()) vendors.emplace(v);
  };
  // Each object by its file and the names it answers to (every DT_NEEDED that found it), then each
  // DT_NEEDED that found nothing, by its name.
  for (const auto& o : process.objects) {
    add(o.path);
    for (const auto& n : o.names) add(n);
    for (const auto& need : o.needed)
      if (need.object < 0) add(need.name);
  }
}

void settle_drivers(std::vector<RuntimeLookup>& lookups, const std::set<std::string>& vendors) {
  if (vendors.empty()) return;
  for (auto& r : lookups)
    if (r.driver && !vendors.count(std::string(backend::driver_vendor(r.name)))) r.driver = false;
}

bool is_soname_literal(const std::string& s) {
  if (s.size() < 7 || s.rfind("lib", 0) != 0) return false;
  size_t so = s.find(".so");
  if (so == std::string::npos || so <= 3) return false;
  for (size_t i = 3; i < so; ++i) {
    char c = s[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '+' || c == '.')) return false;
  }
  // After ".so": nothing, or ".<digits>" groups (libmusa.so.4, libfoo.so.1.2.3).
  for (size_t i = so + 3; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i + 1]))) return false;
    } else if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

std::string api_prefix(const std::string& s) { return std::string(prefix_of(s)); }

// A search's literals: from the cache when an earlier run read this file, else read and kept.
static Result<std::vector<std::string>> literals_of(const elf::ElfObject& object, const elf::LiteralSearch& search,
                                                    const std::string& query, LiteralCache* cache) {
  if (cache)
    if (auto kept = cache->find(object.path, query)) return std::move(kept).value();
  auto read = elf::read_string_literals(object, search);
  if (read && cache) cache->store(object.path, query, read.value());
  return read;
}

namespace {

// The objects that import dlopen. The distribution's own libraries in the closure (/lib, /usr/lib) are
// not scanned unless named: their run-time look-ups are the distribution's concern, and their .rodata
// is most of the bytes.
std::vector<int> dlopen_callers(const loader::Process& p, const std::vector<int>& objects) {
  std::vector<int> callers;
  for (int index : objects) {
    const auto& path = p.objects[index].path;
    if (in_system_library_dir(path) && !p.objects[index].is_target) continue;
    if (imports(p.objects[index].elf, {"dlopen", "dlmopen"})) callers.push_back(index);
  }
  return callers;
}

// Each caller's literals holding ".so" (memmem over .rodata), read in parallel in the mapping the
// loader made of its file; a section that cannot be read costs only that caller's check.
std::vector<std::optional<std::vector<std::string>>> soname_literals(const loader::Process& p,
                                                                     const std::vector<int>& callers,
                                                                     LiteralCache* lcache) {
  std::vector<std::optional<std::vector<std::string>>> read(callers.size());
  tbb::parallel_for(size_t{0}, callers.size(), [&](size_t i) {
    auto literals = literals_of(p.objects[callers[i]].elf,
                                {.min_length = 4,
                                 .keep = [](std::string_view s) { return is_soname_literal(std::string(s)); },
                                 .containing = ".so",
                                 .starting = {}},
                                "sonames", lcache);
    if (literals) read[i] = std::move(literals).value();
  });
  return read;
}

using FoundPerCaller = std::vector<std::vector<std::pair<std::string, Found>>>;  // soname literal, where

// Where each caller's dlopen literals lead (the search stats the caller's search order), in parallel.
// `facts` keeps what was asked; `from_conf` tells a system cache made from ld.so.conf's directories.
FoundPerCaller where_opened(const loader::Process& p, const std::vector<int>& callers,
                            const std::vector<std::optional<std::vector<std::string>>>& read,
                            const loader::LoaderEnv& env, FileFacts& facts, bool& from_conf) {
  // The cache the loader's own search consulted (with ld.so.conf's fallback in a bare sysroot).
  if (p.objects.empty()) return FoundPerCaller(callers.size());
  const auto& main = p.objects[p.target >= 0 ? p.target : 0].elf;
  const auto kept_cache =
      loader::read_system_cache(env, loader::search_platform(env, main.machine, main.is_64).default_dirs);
  const loader::SystemCache& system_cache = *kept_cache;
  from_conf = system_cache.from_conf;
  FoundPerCaller found(callers.size());
  tbb::parallel_for(size_t{0}, callers.size(), [&](size_t k) {
    if (!read[k]) return;
    std::set<std::string> seen;
    for (const auto& lit : read[k].value())
      if (is_soname_literal(lit) && seen.insert(lit).second)
        if (auto& [l, f] = found[k].emplace_back(lit, search(p, callers[k], lit, env, system_cache, facts));
            f.loaded >= 0)
          facts.note(f.path);
  });
  return found;
}

// Each library found, read once (in parallel) with its exported API prefixes: a driver that every
// library of a CUDA stack dlopens is not read and scanned once per caller.
std::map<std::string, Opened> open_libraries(const loader::Process& p, const FoundPerCaller& found,
                                             LiteralCache* lcache) {
  std::map<std::string, Opened> opened;
  for (const auto& per_caller : found)
    for (const auto& [lit, f] : per_caller)
      if (!f.path.empty()) opened.try_emplace(f.path);
  std::vector<std::pair<const std::string, Opened>*> libs;
  for (auto& entry : opened) libs.push_back(&entry);
  std::map<std::string, int> loaded;
  for (const auto& per_caller : found)
    for (const auto& [lit, f] : per_caller)
      if (f.loaded >= 0) loaded.emplace(f.path, f.loaded);
  tbb::parallel_for(size_t{0}, libs.size(), [&](size_t k) {
    auto& [path, lib] = *libs[k];
    if (auto it = loaded.find(path); it != loaded.end()) {
      lib.object = &p.objects[it->second].elf;
    } else if (auto r = elf::read_object(path, elf::ReadOptions{.relocations = false, .lookup_only = true})) {
      lib.read = std::move(r).value();
      lib.object = &*lib.read;
    }
    if (lib.object) lib.prefixes = own_prefixes(*lib.object, lcache);
  });
  return opened;
}

// The search for literals that may be dlsym arguments: those starting with a wanted API prefix.
elf::LiteralSearch entry_point_search(const std::set<std::string>& wanted) {
  elf::LiteralSearch search{.min_length = 4,
                            .keep = {},
                            .containing = {},
                            .starting = std::vector<std::string>(wanted.begin(), wanted.end())};
  search.keep = [](std::string_view s) {
    // Cheap rejections first: messages and format strings (spaces, '%') are most of .rodata.
    if (s.size() > 128 || !std::islower(static_cast<unsigned char>(s[0])) || s.find_first_of(" %/:.") != s.npos)
      return false;
    auto prefix = prefix_of(s);
    if (prefix.empty()) return false;
    // Enum and error-code names (hipSuccess, hipErrorInvalidValue, cudaErrorNoDevice) are literals of
    // the library's error-string tables, never a dlsym argument: no API exports a function so named.
    std::string_view rest = s.substr(prefix.size());
    return rest.rfind("Success", 0) != 0 && rest.rfind("Error", 0) != 0;
  };
  return search;
}

using OpenedLibs = std::vector<std::pair<std::string, const Opened*>>;  // soname literal, the library found

// The entry points no opened library exports, grouped by API prefix: a prefix counts for a library
// that exports one of its names, and the object's own API is not looked up elsewhere.
void missing_entry_points(const loader::LoadedObject& obj, const OpenedLibs& libs, const Prefixes& own,
                          const std::vector<std::string>& identifiers, std::vector<RuntimeLookup>& told) {
  std::map<std::string, std::vector<std::string>> by_prefix;
  std::set<std::string> names;
  for (const auto& s : identifiers)
    if (auto prefix = api_prefix(s); !prefix.empty() && names.insert(s).second) by_prefix[prefix].push_back(s);
  for (const auto& [prefix, entries] : by_prefix) {
    if (own.count(prefix)) continue;  // its own API's names (hipSuccess in libamdhip64's error table)
    // Each name hashed once, each look-up stopped at the first library that answers (libcupti's 590
    // names against the libraries it opens were a quarter of libtorch_cpu's run-time look-ups).
    std::vector<uint32_t> hashes;
    hashes.reserve(entries.size());
    for (const auto& e : entries) hashes.push_back(elf::gnu_hash(e));
    // (a reference, not the structured binding: Clang 14 does not let a lambda capture one)
    const std::vector<std::string>& wanted = entries;
    auto exported = [&](const Opened& lib, size_t i) { return exports(*lib.object, wanted[i], hashes[i]); };
    const std::pair<std::string, const Opened*>* owner = nullptr;
    for (const auto& lib : libs) {
      for (size_t i = 0; i < entries.size() && !owner; ++i)
        if (exported(*lib.second, i)) owner = &lib;
      if (owner) break;
    }
    if (!owner) continue;
    for (size_t i = 0; i < entries.size(); ++i) {
      const std::string& e = entries[i];
      const bool anywhere =
          std::any_of(libs.begin(), libs.end(), [&](const auto& lib) { return exported(*lib.second, i); });
      if (!anywhere)
        told.push_back({.library = obj.path,
                        .kind = LookupKind::Dlsym,
                        .name = e,
                        .provider = owner->second->object->path,
                        .provider_name = owner->first,
                        .searched = {},
                        .driver = false});
    }
  }
}

// One caller's look-ups: the libraries it dlopens that are not found, then the entry points it
// dlsyms that no library it opens exports.
void caller_lookups(const loader::LoadedObject& obj, const std::vector<std::pair<std::string, Found>>& found,
                    const std::map<std::string, Opened>& opened, LiteralCache* lcache,
                    std::vector<RuntimeLookup>& told) {
  OpenedLibs libs;
  for (const auto& [lit, f] : found) {
    if (f.path.empty()) {
      told.push_back({.library = obj.path,
                      .kind = LookupKind::Dlopen,
                      .name = lit,
                      .provider = std::nullopt,
                      .provider_name = "",
                      .searched = f.searched,
                      .driver = backend::is_gpu_driver(lit)});
      continue;
    }
    if (const Opened& lib = opened.at(f.path); lib.object) libs.emplace_back(lit, &lib);
  }
  if (libs.empty() || !imports(obj.elf, {"dlsym", "dlvsym"})) return;
  // Only a prefix one of the opened libraries exports can make a finding (a prefix counts for the
  // library that exports one of its names), and not the object's own: the literals beginning with
  // those prefixes are all that is read, not every literal of .rodata (libcublasLt's 46 MB hold
  // 4.6 million NULs, one memchr each).
  const Prefixes own = own_prefixes(obj.elf, lcache);
  std::set<std::string> wanted;
  for (const auto& lib : libs)
    for (const auto& prefix : lib.second->prefixes)
      if (!own.count(prefix)) wanted.insert(prefix);
  if (wanted.empty()) return;
  std::string query = "entry-points";
  for (const auto& prefix : wanted) query += ' ' + prefix;
  auto identifiers = literals_of(obj.elf, entry_point_search(wanted), query, lcache);
  if (!identifiers) return;
  missing_entry_points(obj, libs, own, identifiers.value(), told);
}

// The pass itself, when no earlier run answers.
std::vector<RuntimeLookup> check_runtime_lookups_anew(const loader::Process& p, const std::vector<int>& objects,
                                                      const loader::LoaderEnv& env, LiteralCache* lcache,
                                                      FileFacts& facts, bool& from_conf) {
  std::vector<RuntimeLookup> out;
  std::optional<PhaseTime> step(std::in_place, "runtime.callers");
  std::vector<int> callers = dlopen_callers(p, objects);
  // Every entry-point literal is read later, and only from an object one of whose dlopen'd libraries was found.
  step.emplace("runtime.sonames");
  auto read = soname_literals(p, callers, lcache);
  if (std::none_of(read.begin(), read.end(), [](const auto& r) { return r && !r->empty(); })) return out;
  step.emplace("runtime.search");
  FoundPerCaller found = where_opened(p, callers, read, env, facts, from_conf);
  step.emplace("runtime.open");
  std::map<std::string, Opened> opened = open_libraries(p, found, lcache);
  step.emplace("runtime.entry-points");
  std::vector<std::vector<RuntimeLookup>> per_caller(callers.size());
  tbb::parallel_for(size_t{0}, callers.size(),
                    [&](size_t k) { caller_lookups(p.objects[callers[k]], found[k], opened, lcache, per_caller[k]); });
  step.reset();
  for (auto& told : per_caller)
    for (auto& r : told) out.push_back(std::move(r));
  return out;
}

// A path's identity (file_identity) and whether it changed in the last two seconds, from one stat: a file
// system stamps times at a coarse granularity, so a file changed in the same tick may keep its identity.
struct Stamp {
  std::string identity;  // "" when nothing is there
  bool racy = false;
};
Stamp stamp(const std::string& path, time_t settled) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  return {stat_identity(st), changed_at(st) >= settled};
}

// What the pass reads besides the file system's answers to its searches (LiteralCache::find_lookups):
// this program, the loader's environment, each object of the process (path, identity, names, loader,
// origin) and the objects checked. "" when it cannot be keyed (a file gone since the load).
std::string lookups_key(const loader::Process& p, const std::vector<int>& objects, const loader::LoaderEnv& env) {
  std::string key = program_identity();
  if (key.empty()) return "";
  auto add = [&](const std::string& s) {
    key += '\x1f';
    key += s;
  };
  auto add_all = [&](const std::vector<std::string>& list) {
    add(std::to_string(list.size()));
    for (const auto& s : list) add(s);
  };
  add_all(env.library_path);
  add_all(env.with);
  add_all(env.with_local);
  add_all(env.preload);
  add_all(env.default_dirs);
  add_all(env.candidate_dirs);
  for (const auto* s : {&env.sysroot, &env.ld_so_cache, &env.ld_so_conf, &env.lib_token, &env.platform_token, &env.cwd})
    add(*s);
  for (int n : {env.x86_isa_level, env.x86_cpu_isa_level, int(env.hwcap_avx512_1), env.glibc_minor})
    add(std::to_string(n));
  add(std::to_string(p.target) + ' ' + std::to_string(p.main));
  // Read for their content: the objects that may be searched for literals (checked, outside the system
  // directories, or named), and whose RPATH a search from one of them reads (its loaders, the main
  // program). A loaded object a search answers with is a witness (FileFacts::note).
  std::vector<bool> read(p.objects.size());
  auto read_with_loaders = [&](int i) {
    for (; i >= 0 && !read[i]; i = p.objects[i].loader) read[i] = true;
  };
  for (int i : objects)
    if (!in_system_library_dir(p.objects[i].path) || p.objects[i].is_target) read_with_loaders(i);
  for (int i : {p.main, p.target, 0})
    if (i >= 0 && static_cast<size_t>(i) < p.objects.size()) read_with_loaders(i);
  const time_t settled = settled_since();  // as witnesses(): a file changed in the last two seconds is not keyed
  for (size_t i = 0; i < p.objects.size(); ++i) {
    const auto& o = p.objects[i];
    std::string identity;
    if (read[i]) {
      // The identity its descriptor had when the load read it, else (a file read through libelf) its path's now.
      Stamp s = o.elf.identity.empty() ? stamp(o.path, settled) : Stamp{o.elf.identity, o.elf.changed_at >= settled};
      if (s.identity.empty() || s.racy) return "";
      identity = std::move(s.identity);
    }
    add(o.path);
    add(o.realname);
    add(o.origin);
    add(identity);
    add(std::to_string(o.loader) + ' ' + std::to_string(static_cast<int>(o.how)) + ' ' + std::to_string(o.is_target));
    add_all(o.names);
  }
  std::string checked;
  for (int i : objects) checked += std::to_string(i) + ' ';
  add(checked);
  return key;
}

// What must still hold for the answer to stand: each path the searches asked about by its identity, a
// missing one by its nearest existing directory's. A relative path (an empty LD_LIBRARY_PATH element) was
// asked against this program's working directory: it is a witness as an absolute path, and the working
// directory with it (`cwd`, else ""). Nothing is kept when one changed in the last two seconds: a file
// system stamps times at a coarse granularity (a clock tick, a second, two on FAT), so a file created in
// the same tick may leave its directory's identity as it was.
std::optional<std::vector<std::pair<std::string, std::string>>> witnesses(std::set<std::string> asked,
                                                                          std::string& cwd) {
  std::map<std::string, std::string> out;
  const time_t settled = settled_since();
  // Each path stat'ed once: the missing paths of one search share their nearest existing directory.
  std::map<std::string, Stamp> stamps;
  auto stamp_of = [&](const std::string& path) -> const Stamp& {
    auto it = stamps.find(path);
    return it != stamps.end() ? it->second : stamps.emplace(path, stamp(path, settled)).first->second;
  };
  for (const auto& asked_path : asked) {
    std::string at = asked_path;
    if (at.empty() || at[0] != '/') {
      if (cwd.empty()) cwd = current_dir();
      if (cwd.empty()) return std::nullopt;
      at = join_path(cwd, at);
    }
    while (stamp_of(at).identity.empty() && at != "/") at = dir_name(at);
    const Stamp& s = stamp_of(at);
    if (s.racy) return std::nullopt;
    out.emplace(at, s.identity);
  }
  return std::vector<std::pair<std::string, std::string>>(out.begin(), out.end());
}

}  // namespace

// The passes: the callers of dlopen, their soname literals (only those, at first), where each leads,
// each library found read once, then each caller's look-ups, in the callers' order. A process an
// earlier run checked, unchanged, is answered from the cache.
KeptAsk ask_kept_lookups(const loader::Process& p, const std::vector<int>& objects, const loader::LoaderEnv& env,
                         const LiteralCache* lcache) {
  if (!lcache) return {};
  std::optional<PhaseTime> step(std::in_place, "runtime.key");
  KeptAsk out{.key = lookups_key(p, objects, env), .lookups = std::nullopt};
  step.emplace("runtime.kept");
  out.lookups = lcache->find_lookups(out.key);
  return out;
}

std::vector<RuntimeLookup> check_runtime_lookups(const loader::Process& p, const std::vector<int>& objects,
                                                 const loader::LoaderEnv& env, LiteralCache* lcache, KeptAsk* kept) {
  KeptAsk here;
  if (!kept) {
    here = ask_kept_lookups(p, objects, env, lcache);
    kept = &here;
  }
  if (kept->lookups) return std::move(kept->lookups).value();
  const std::string& key = kept->key;
  FileFacts facts;
  bool from_conf = false;
  std::vector<RuntimeLookup> out = check_runtime_lookups_anew(p, objects, env, lcache, facts, from_conf);
  PhaseTime keep("runtime.keep");
  // The ld.so.cache the searches read is a witness too; one made from ld.so.conf's directories is not kept.
  std::set<std::string> asked = facts.asked();
  asked.insert(env.sysroot + env.ld_so_cache);
  std::string cwd;
  if (auto w = witnesses(std::move(asked), cwd); w && !from_conf && lcache) lcache->store_lookups(key, *w, cwd, out);
  return out;
}

}  // namespace mlc::literals
