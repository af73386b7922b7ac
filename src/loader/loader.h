// Static emulation of glibc's ld.so mapping phase (dl-load.c, dl-deps.c): which file each DT_NEEDED
// name resolves to, why, and every path considered when none does. Nothing is executed or mapped
// for execution; files are only read.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "elf/elf_object.h"
#include "loader/found_how.h"

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
  std::string sysroot;                    // "" for the running system
  std::string ld_so_cache = "/etc/ld.so.cache";  // inside sysroot
  std::string ld_so_conf = "/etc/ld.so.conf";    // inside sysroot; used only when there is no cache
  // Platform facts; empty means "Debian's values for the target's machine".
  std::vector<std::string> default_dirs;
  std::string lib_token;       // what $LIB expands to
  std::string platform_token;  // what $PLATFORM expands to
  // Directories off the search path whose copies of a needed library still count as candidates
  // (the vendor SDK's lib/): where the right copy may sit when a stale one is picked.
  std::vector<std::string> candidate_dirs;
};

struct SearchAttempt {
  std::string path;
  FoundHow how;
  std::string outcome;  // "not found", "wrong ELF class", "wrong machine", "excluded by NODEFLIB"...
};

struct NeededEntry {
  std::string name;
  int object = -1;  // index into Process::objects, -1 when not found
  FoundHow how = FoundHow::Direct;
  std::vector<SearchAttempt> searched;  // every path considered, in order (filled when not found)
  // The other files the search would have accepted, in search order, after (or instead of) the one
  // picked: later LD_LIBRARY_PATH, RUNPATH or RPATH entries, the ld.so.cache entry, the system
  // directories, LoaderEnv::candidate_dirs. Probed (class and machine), never loaded; other files
  // than the picked one only (device and inode). Filled when a search picked a file.
  std::vector<SearchAttempt> candidates;
};

struct LoadedObject {
  elf::ElfObject elf;
  std::string path;  // the path the loader opened (not canonicalised)
  FoundHow how = FoundHow::Direct;
  int loader = -1;   // the object whose DT_NEEDED first brought this one in (glibc's l_loader)
  std::vector<std::string> names;  // names it answers to (requested names and its soname)
  dev_t dev = 0;
  ino_t ino = 0;
  bool is_target = false;  // named by the user (the main map of the emulated process)
  bool is_with = false;    // brought in by --with (or a dependency of one)
  // In the global scope (dl-open.c): the main program's load and RTLD_GLOBAL loads. The target is
  // dlopen'ed with RTLD_LOCAL, as Python imports it, and so are the RTLD_LOCAL --with libraries.
  bool global = false;
  int root = -1;  // the load (a --with library or the target) that first brought this object in
  std::vector<NeededEntry> needed;
};

struct Process {
  std::vector<LoadedObject> objects;  // in load order, which is also the global scope's order
  int target = -1;
  std::vector<InputError> errors;     // unusable files met along the way (the rest is still analysed)
};

struct ReadContext;

// Objects already read in this run, by device and inode, with their look-up tables: scanning a
// directory of libraries reads each shared dependency once instead of once per library.
class ObjectCache {
 public:
  const elf::ElfObject* find(dev_t dev, ino_t ino) const;
  void add(dev_t dev, ino_t ino, const elf::ElfObject& object);

 private:
  std::map<std::pair<dev_t, ino_t>, elf::ElfObject> objects_;
};

// The scope ld.so looks up a reference of an object that the load of `root` brought in: the global
// scope in load order, then root's own search list (itself and its dependencies, breadth first,
// those loaded earlier included) - glibc's l_scope of a dlopen'ed object.
std::vector<int> lookup_scope(const Process& process, int root);

// Loads `target` as the main object of a process whose global scope already holds env.with.
// Fails only when the target itself cannot be read.
// Symbol tables are left unmaterialised (lookups go through each object's hash table).
Result<Process> load_process(const std::string& target, const LoaderEnv& env, ObjectCache* cache = nullptr);

// Reads which symbols the dynamic relocations of the objects to be checked name: those are the
// references ld.so looks up. Errors join process.errors.
void read_symbol_tables(Process& process, const std::vector<int>& objects);

// Expands $ORIGIN, $LIB and $PLATFORM (also in the ${...} form) in one search path element;
// nullopt when the element uses an unknown token (glibc drops such elements).
std::optional<std::string> expand_dst(const std::string& element, const std::string& origin,
                                      const std::string& lib, const std::string& platform);

// A search path list split as ld.so splits LD_LIBRARY_PATH and DT_RUNPATH: at ':' and ';', empty
// elements kept (they mean the current directory).
std::vector<std::string> split_search_path(const std::string& list);

// Debian's system search path for the machine (glibc's SYSTEM_DIRS), and its $LIB / $PLATFORM values.
std::vector<std::string> default_dirs_for(uint16_t machine, bool is_64);
std::string lib_token_for(uint16_t machine, bool is_64);
std::string platform_token_for(uint16_t machine, bool is_64);

}  // namespace mlc::loader
