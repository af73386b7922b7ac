// What an object's dynamic relocations name, kept between runs: reading it means going through every
// relocation of the file (4.4 MB of them in Debian's libtorch_cpu, and each DF_STATIC_TLS library a dlopen
// maps has its whole table read too), while what comes out of it is a few thousand symbol indexes.
#pragma once

#include <string>

#include "elf/elf_object.h"

namespace mlc::elf {

// The relocation facts of an object (ElfObject::has_relocation_info, relocated_symbols, copy_symbols and
// static_tls_symbols, as read_symbols with ReadOptions::relocations sets them), kept in the cache directory
// (<cache_dir>/relocations/<hash of the path>.tsv, one file per path, so a rebuilt library replaces its
// own entry): they answer while this program and the file's identity (device, inode, size, mtime, ctime,
// as the descriptor it was read from had them) are the same. A file changed in the last two seconds is not
// kept (a file system stamps times at a coarse granularity: a file changed in the same tick may keep its
// identity). A cache file cut short, garbled, or naming a symbol the object does not have is not an
// answer: the relocations are read again and the entry rewritten. Safe to use from several threads.
class KeptRelocations {
 public:
  explicit KeptRelocations(std::string cache_dir);  // "": nothing is kept
  // Sets the object's relocation facts from an earlier run's read of the same file; false (the object
  // untouched) when nothing answers. The object's lookup tables must be read (ElfObject::tables_read).
  bool find(ElfObject& object) const;
  // Keeps what read_symbols read of the object's relocations.
  void store(const ElfObject& object) const;

 private:
  bool keeps(const ElfObject& object) const;
  std::string file_of(const ElfObject& object) const;
  std::string key_of(const ElfObject& object) const;  // this program's identity too: another build may read otherwise
  std::string dir_;
};

}  // namespace mlc::elf
