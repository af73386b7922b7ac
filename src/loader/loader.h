// Static emulation of glibc's ld.so mapping phase (dl-load.c, dl-deps.c): which file each DT_NEEDED
// name resolves to, why, and every path considered when none does. Nothing is executed or mapped
// for execution; files are only read.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/hash.h"
#include "common/result.h"
#include "elf/elf_object.h"
#include "loader/failure_kind.h"
#include "loader/found_how.h"

namespace mlc::elf {
class KeptRelocations;
}

namespace mlc::loader {

// Everything the loader would take from its environment, passed in as a value (the core reads no
// environment variables itself).
struct LoaderEnv {
  std::vector<std::string> library_path;  // LD_LIBRARY_PATH entries, then --library-path entries
  std::vector<std::string> with;          // libraries already loaded before the target, in load order
  // Those of `with` loaded with RTLD_LOCAL (Python's default for an import, torch/_C among them):
  // loaded, so a later DT_NEEDED of their soname reuses them, but not in the global scope: their
  // symbols bind only objects whose own load reaches them. The others are RTLD_GLOBAL.
  std::vector<std::string> with_local;
  // LD_PRELOAD's entries, then /etc/ld.so.preload's, in order (rtld.c handle_preload_list): loaded right after
  // the main program and before its dependencies, in the global scope; a name without '/' is searched as a
  // DT_NEEDED of the main program. One that cannot be loaded is ignored, as glibc ignores it.
  std::vector<std::string> preload;
  std::string sysroot;                           // "" for the running system
  std::string ld_so_cache = "/etc/ld.so.cache";  // inside sysroot
  std::string ld_so_conf = "/etc/ld.so.conf";    // inside sysroot; used only when there is no cache
  // Platform facts; empty means "Debian's values for the target's machine".
  std::vector<std::string> default_dirs;
  std::string lib_token;       // what $LIB expands to
  std::string platform_token;  // what $PLATFORM expands to
  // Directories off the search path whose copies of a needed library still count as candidates
  // (the vendor SDK's lib/): where the right copy may sit when a stale one is picked.
  std::vector<std::string> candidate_dirs;
  // The process's working directory (absolute): relative search-path elements and names are opened
  // against it, and the report gives their absolute paths. "" leaves them as they are.
  std::string cwd;
  // The CPU the process runs on, as glibc sees it (sysdeps/x86/cpu-features.c, get-isa-level.h): its
  // x86-64 ISA level (1 baseline, 2, 3, 4) picks the glibc-hwcaps/x86-64-vN subdirectories searched
  // before each directory, after GLIBC_TUNABLES' glibc.cpu.hwcaps has turned features off; an Intel
  // CPU with AVX512BW/DQ/VL adds the legacy avx512_1 subdirectory (HWCAP_X86_AVX512_1). The legacy
  // platform subdirectory is platform_token (glibc's dl_platform: "x86_64", "haswell"...).
  int x86_isa_level = 1;
  // The level each object's GNU_PROPERTY_X86_ISA_1_NEEDED is checked against (dl-prop.h
  // dl_isa_level_check): the CPU's own, computed before the tunables apply; 0 when not known (no check).
  int x86_cpu_isa_level = 0;
  bool hwcap_avx512_1 = false;
  // The N of the glibc 2.N the process runs (its libc.so.6's newest GLIBC_2.N node); 0 when not known, which
  // keeps Debian 12's 2.36 rules. The rules keyed to it: glibc-hwcaps subdirectories from 2.33 on, the legacy
  // hwcap, platform and tls subdirectories before 2.37 only.
  int glibc_minor = 0;
  // The glibc.rtld tunables that size the static TLS surplus (dl-tls.c _dl_tls_static_surplus_init).
  uint64_t optional_static_tls = 512;
  uint64_t nns = 4;
};

struct SearchAttempt {
  std::string path;
  FoundHow how;
  SearchOutcome outcome;
};

// A place of a search: the path as the loader would open it (relative to LoaderEnv::cwd where a search
// path element is relative), and how it would be found.
struct SearchSteps;  // loader/search_order.h

struct SearchPlace {
  std::string path;
  FoundHow how;
  bool subdir = false;  // in a hwcaps subdirectory: tried only where that directory exists
};

struct LoadFailure {
  FailureKind kind = FailureKind::BadCandidate;
  int object = -1;     // the object whose load fails there (the requester of a refused candidate)
  std::string file;    // the file glibc names (absolute): the refused candidate, the TLS block's owner...
  std::string symbol;  // the symbol concerned, where there is one
  FailureFacts facts;  // what glibc's message and the fix name (the report words them)
};

struct NeededEntry {
  std::string name;
  int object = -1;  // index into Process::objects, -1 when not found
  FoundHow how = FoundHow::Direct;
  std::vector<SearchAttempt> searched;  // every path considered, in order (filled when not found)
  // Every place the search for the name would try, in search order (the hwcaps subdirectories where they
  // exist), kept when a search picked a file: other_copies probes them (and Process::candidate_dirs) when a
  // finding asks which other copy would have had what the picked one lacks. Most runs have no finding,
  // and probing every place of every search cost a clean run 7% of its time.
  std::shared_ptr<const SearchSteps> places;
  std::shared_ptr<const std::vector<std::string>> place_subdirs;  // SearchPlatform::subdirs, for `places`
  std::string expanded;  // the name after dynamic string token expansion (dl-deps.c), as searched
  std::string refused;   // a file the search met and glibc refuses (its path): the load fails there
};

struct LoadedObject {
  elf::ElfObject elf;
  std::string path;  // the path the loader opened (not canonicalised), made absolute against LoaderEnv::cwd
  // glibc's l_name: the path as opened (relative when a relative search path found it); names and
  // version requirements match it as they match `names` (dl-misc.c _dl_name_match_p).
  std::string realname;
  std::string origin;  // what $ORIGIN expands to: its directory; a program's real directory (/proc/self/exe)
  FoundHow how = FoundHow::Direct;
  int loader = -1;  // the object whose DT_NEEDED first brought this one in (glibc's l_loader)
  // Names it answers to (glibc's l_libname): the names it was requested by, after expansion, and its
  // soname once a request matched that.
  std::vector<std::string> names;
  dev_t dev = 0;
  ino_t ino = 0;
  bool is_target = false;  // named by the user (the main map of the emulated process)
  bool is_with = false;    // brought in by --with (or a dependency of one)
  // In the global scope (dl-open.c): the main program's load and RTLD_GLOBAL loads. The target is
  // dlopen'ed with RTLD_LOCAL, as Python imports it, and so are the RTLD_LOCAL --with libraries.
  bool global = false;
  int root = -1;  // the load (a --with library or the target) that first brought this object in
  // Loaded when the process started (the main program, its dependencies, and for a dlopen'ed target
  // the host's libc and ld.so), not by a dlopen: its TLS block is in static TLS from the start.
  bool at_start = false;
  bool host = false;  // the host process's own (libc, ld.so), not brought in by a file named
  std::vector<NeededEntry> needed;
};

struct Process {
  std::vector<LoadedObject> objects;  // in load order, which is also the global scope's order
  int target = -1;
  int main = -1;  // the main program (the target or the interpreter when a program; -1: a host not known)
  std::vector<InputError> errors;     // unusable files met along the way (the rest is still analysed)
  std::vector<LoadFailure> failures;  // loads that fail while mapping (bad candidates, NOOPEN, ISA level)
  // The load's LoaderEnv::cwd and LoaderEnv::candidate_dirs, for other_copies.
  std::string cwd;
  std::vector<std::string> candidate_dirs;
};

struct ReadContext;

// Objects already read in this run, by device and inode, with their look-up tables: scanning a
// directory of libraries reads each shared dependency once instead of once per library.
// The same for stat(2) of the paths the searches try: a tree's inputs search the same directories
// for the same names (a venv's 860 loads stat'ed each candidate again, a fifth of the run's CPU time);
// the files a run reads do not change under it. Safe from several threads: the loads of a tree run one
// at a time, but a diagnosis (warn_scope_only's load of a file alone) runs beside the next input's load.
class ObjectCache {
 public:
  // keep_objects false: only the stat(2) answers are kept (a run of one input, whose files no other input
  // reads: copying each object into the cache would cost more than it saves), until seed() is called.
  explicit ObjectCache(bool keep_objects = true) : keep_objects_(keep_objects) {}
  const elf::ElfObject* find(dev_t dev, ino_t ino) const;
  void add(dev_t dev, ino_t ino, const elf::ElfObject& object);  // kept only with keep_objects
  // Kept whatever keep_objects says: a process's objects, for a second load of the same files.
  void seed(dev_t dev, ino_t ino, const elf::ElfObject& object);
  bool keeps_objects() const { return keep_objects_; }
  // stat(2) of `path`, asked once per run: 0 and `st` filled, or the errno stat gave. A directory that two
  // absolute paths were missing from (ENOENT: it exists and can be searched) is listed once; a name not in
  // its listing is then missing without a stat. A search up a long RPATH misses in each directory of it,
  // for each name (torch's libraries: a dozen directories, a hundred names).
  int stat_path(const std::string& path, struct stat& st);

 private:
  using Names = std::unordered_set<std::string, ViewHash, std::equal_to<>>;
  bool keep_objects_ = true;
  std::map<std::pair<dev_t, ino_t>, elf::ElfObject> objects_;
  std::unordered_map<std::string, std::pair<int, struct stat>> stats_;
  // By directory: its names (null: not to be listed), and the misses counted before it is.
  std::unordered_map<std::string, std::shared_ptr<const Names>, ViewHash, std::equal_to<>> listings_;
  std::unordered_map<std::string, int, ViewHash, std::equal_to<>> misses_;
  // The names in `dir`; null when it cannot be listed, holds more than 512 names (a system directory: listing it costs
  // more than the stats it saves), or is an automount point (its listing shows only what is mounted now, and looking a
  // name up may mount it).
  static std::shared_ptr<const Names> list_names(const std::string& dir);
  mutable std::mutex mutex_;
};

// stat(2) of `path`, through `cache` (ObjectCache::stat_path) when there is one: 0 and `st` filled, or the
// errno stat gave.
int stat_through(ObjectCache* cache, const std::string& path, struct stat& st);

// The scope ld.so looks up a reference of an object that the load of `root` brought in: the global
// scope in load order, then root's own search list (itself and its dependencies, breadth first,
// those loaded earlier included) - glibc's l_scope of a dlopen'ed object.
std::vector<int> lookup_scope(const Process& process, int root);

// The other files the search of `entry` would have accepted, in search order, after (or instead of) the
// one picked: later LD_LIBRARY_PATH, RUNPATH or RPATH entries, the ld.so.cache entry, the system
// directories, LoaderEnv::candidate_dirs. Probed (a regular file of the picked object's class and
// machine), never loaded; other files than the picked one only (device and inode). Empty when the entry
// picked nothing or was matched by a loaded name.
std::vector<SearchAttempt> other_copies(const Process& process, const NeededEntry& entry);

// Loads `target` as the main object of a process whose global scope already holds env.with.
// Fails only when the target itself cannot be read.
// Symbol tables are left unmaterialised (lookups go through each object's hash table).
Result<Process> load_process(const std::string& target, const LoaderEnv& env, ObjectCache* cache = nullptr);

// Reads which symbols the dynamic relocations of the objects to be checked name: those are the
// references ld.so looks up. The relocations of every object a dlopen maps that is flagged
// DF_STATIC_TLS are read too (bind() places their initial-exec TLS). Errors join process.errors.
// `kept` (when given) answers for files an earlier run read, and keeps what this one reads.
void read_symbol_tables(Process& process, const std::vector<int>& checked, const elf::KeptRelocations* kept = nullptr);

// Expands $ORIGIN, $LIB and $PLATFORM (also in the ${...} form) in a search path element or a
// DT_NEEDED name, as dl-load.c _dl_dst_substitute does: a token is a known name not followed by an
// identifier character; anything else after '$' (an unknown $NAME, an unterminated ${) is kept
// literally. nullopt when a known token has no value (an empty $PLATFORM or $ORIGIN): glibc drops
// the element (and skips such a DT_NEEDED).
std::optional<std::string> expand_dst(const std::string& element, const std::string& origin, const std::string& lib,
                                      const std::string& platform);

// LD_LIBRARY_PATH split as _dl_init_paths splits it: at ':' and ';', empty elements kept (they mean
// the current directory).
std::vector<std::string> split_search_path(const std::string& list);
// DT_RPATH and DT_RUNPATH split as decompose_rpath splits them: at ':' only (a ';' is part of a
// directory's name), empty elements kept.
std::vector<std::string> split_rpath(const std::string& list);

// glibc's legacy and glibc-hwcaps subdirectories searched before each directory of a search path
// (dl-hwcaps.c _dl_important_hwcaps), in order, each ending in '/', the directory itself ("") last:
// glibc-hwcaps/x86-64-v4/ ... v2/ by the ISA level (from glibc 2.33), then the power set of the legacy names
// (the hwcap names, the platform, "tls"), largest first (before glibc 2.37, which searches them no more).
// `glibc_minor`: the N of the process's glibc 2.N; 0 when not known (Debian 12's 2.36 rules).
std::vector<std::string> hwcaps_subdirs(uint16_t machine, bool is_64, int x86_isa_level, const std::string& platform,
                                        bool avx512_1, int glibc_minor = 0);

// Debian's multiarch triplet for the machine (x86_64-linux-gnu), "" for one it does not know; its
// system search path (glibc's SYSTEM_DIRS), and its $LIB / $PLATFORM values.
std::string multiarch_for(uint16_t machine, bool is_64);
std::vector<std::string> default_dirs_for(uint16_t machine, bool is_64);
std::string lib_token_for(uint16_t machine, bool is_64);
std::string platform_token_for(uint16_t machine, bool is_64);

}  // namespace mlc::loader
