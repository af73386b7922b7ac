// What is looked up at run time: names given to dlopen and dlsym as string
// literals, which no DT_NEEDED shows. Each object of the process that imports dlopen is searched for
// soname-shaped literals, each is looked for as dlopen from that object would, and entry-point
// literals are checked against the libraries found. Files are read, never loaded.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loader/loader.h"
#include "report/report.h"

namespace mlc::literals {

// The literals a search found in a file, kept between runs in the cache directory
// (<cache_dir>/runtime-literals.tsv): keyed by the file's device, inode, size, mtime and ctime and by
// the search, so a file rewritten, replaced or touched is read again. A warm run reads no .rodata
// (libcublasLt's 45 MB were most of a run on libcublas). A garbled cache is ignored and rewritten;
// entries of files that changed are dropped when it is written. Safe to use from several threads.
//
// A check's whole answer is kept too (<cache_dir>/runtime-lookups/<key>.tsv, one file per process, so a
// run reads only its own): the look-ups of a process, keyed by everything the pass reads that is not a
// search's question to the file system (each object's path, identity, names and loader, the objects
// checked, the loader's environment, this program's own identity), and answering while every path those
// searches asked about is as it was: a file by its identity, a path that was missing by the identity of
// its nearest existing directory (a file created under it changes that directory). A warm single-file run
// searches and reads nothing for its run-time look-ups.
class LiteralCache {
 public:
  explicit LiteralCache(std::string cache_dir);  // "": nothing is kept
  std::optional<std::vector<std::string>> find(const std::string& path, const std::string& query);
  void store(const std::string& path, const std::string& query, const std::vector<std::string>& literals);
  void save();  // writes the cache when this run stored something
  size_t hits() const { return hits_; }
  // A process's look-ups (check_runtime_lookups), by its key; written at once, atomically. `witnesses`:
  // (path, file_identity) pairs that must still hold, an empty identity for none being allowed; `cwd`: the
  // working directory the run must have (a relative path was asked), else "".
  std::optional<std::vector<RuntimeLookup>> find_lookups(const std::string& key) const;
  void store_lookups(const std::string& key, const std::vector<std::pair<std::string, std::string>>& witnesses,
                     const std::string& cwd, const std::vector<RuntimeLookup>& lookups) const;

 private:
  struct Entry {
    std::string path, identity, query;
    std::vector<std::string> literals;
  };
  void load();
  std::string lookups_file(const std::string& key) const;
  std::string dir_, file_;
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;  // identity TAB query -> the literals
  bool loaded_ = false, dirty_ = false;
  size_t hits_ = 0;
};

// The look-ups an earlier run kept for this process, asked for apart (LiteralCache::find_lookups): what the
// key reads is the load's (paths, identities, names, the scopes), which the binding does not change, so the
// caller asks beside the binding. `key` is "" when the process cannot be keyed (or there is no cache).
struct KeptAsk {
  std::string key;
  std::optional<std::vector<RuntimeLookup>> lookups;
};
KeptAsk ask_kept_lookups(const loader::Process& process, const std::vector<int>& objects, const loader::LoaderEnv& env,
                         const LiteralCache* cache);

// Heuristic (documented in docs/design.md, the runtime/ room):
// - Which objects: the named files, and the other objects of `objects` outside the system directories
//   (/lib, /usr/lib, /lib64, /usr/lib64): a distribution's libraries are its own concern.
// - dlopen: literals in .rodata shaped like a soname (lib<name>.so or lib<name>.so.<digits>..., no
//   '/'), in objects whose .dynsym imports dlopen or dlmopen.
// - dlsym: identifier literals ([A-Za-z_][A-Za-z0-9_]*) with an API prefix (lowercase letters then an
//   uppercase one: muInit -> "mu"), in objects that import dlsym or dlvsym. Guard against false
//   positives: an identifier is checked only against a library that this object dlopens by a literal,
//   that was found, and that exports at least one other literal of the same prefix; it is reported
//   when that library does not export it.
// `cache` (when given) answers for files whose literals an earlier run read.
// `kept` (when given): ask_kept_lookups's answer for the same process, objects and environment, which
// answers instead of asking again; what is looked up anew is kept under its key.
std::vector<RuntimeLookup> check_runtime_lookups(const loader::Process& process, const std::vector<int>& objects,
                                                 const loader::LoaderEnv& env, LiteralCache* cache = nullptr,
                                                 KeptAsk* kept = nullptr);

// Whether a literal is shaped like a soname dlopen would search for.
bool is_soname_literal(const std::string& s);

// The GPU vendors whose stacks `process` loads (backend::stack_vendor of each object's file name and
// of every name a DT_NEEDED asks for, found or not), added to `vendors`.
void add_gpu_stacks(const loader::Process& process, std::set<std::string>& vendors);
// A GPU driver is the run's only where its vendor's stack is: once a run loads some vendor's stack, a
// dlopen of another vendor's driver (triton probing libamdhip64 in a CUDA install) is optional, as
// any other look-up. A run that loads no stack keeps every driver.
void settle_drivers(std::vector<RuntimeLookup>& lookups, const std::set<std::string>& vendors);
// The API prefix of an entry-point literal ("" when it has none).
std::string api_prefix(const std::string& s);

}  // namespace mlc::literals
