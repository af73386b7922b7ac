// The look-ups of a process's checked objects, kept between runs: what bind() finds unresolved is a function
// of the objects' contents, of the order the loads put them in and of the names they answer to, and nothing
// else. A process whose files and structure are those of an earlier run's is answered with that run's
// outcome (a warm run over Debian's libtorch_cpu looks up 45,000 references in 285 libraries otherwise).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loader/binding.h"

namespace mlc::loader {

// An unresolved reference as kept: the names it carries are read again from the referencing object.
struct KeptUnresolved {
  int object = -1;
  uint32_t symbol = 0;
  Miss miss = Miss::NoDefinition;
  std::vector<int> near;
};

// Where one initial-exec TLS reference (an object's .dynsym index) binds: the object whose TLS block it
// reaches, -1 when the look-up finds nothing (relocation_checks.h).
struct KeptTls {
  int object = -1;
  uint32_t symbol = 0;
  int provider = -1;
};

struct KeptLookups {
  std::vector<KeptUnresolved> unresolved;
  std::vector<MissingVersion> missing_versions;
  std::vector<KeptTls> tls;
};

// <cache_dir>/bindings/<hash of the key>.tsv, one file per process, in the common cache format
// (common/cache_file.h). The key (key()) holds this program's identity and, for every object of the process
// in load order, what the look-ups read of it: its file's identity as its descriptor was read (device, inode,
// size, mtime, ctime: its content), the names it answers to, its place in the scopes (global, the load that
// brought it in) and each DT_NEEDED entry's object; then the objects checked. Nothing is kept for a process
// holding an object read without an identity, nor one whose files changed in the last two seconds (a file
// system stamps times at a coarse granularity). Safe to use from several threads.
class KeptBindings {
 public:
  explicit KeptBindings(std::string cache_dir);  // "": nothing is kept
  // "" when the process's look-ups cannot be kept.
  std::string key(const Process& process, const std::vector<int>& checked) const;
  std::optional<KeptLookups> find(const std::string& key) const;
  // Keeps the outcome when every object of the process has stayed as it is for two seconds.
  void store(const std::string& key, const Process& process, const KeptLookups& lookups) const;

 private:
  std::string file_of(const std::string& key) const;
  std::string dir_;
};

}  // namespace mlc::loader
