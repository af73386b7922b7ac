// What the two ELF readers share (internal to src/elf/): each finds the bytes of the sections the
// loader reads, in host byte order (libelf through elf_getdata, the native reader in place in its
// mapping), and one decoder turns them into an ElfObject's tables, whichever reader found them.
#pragma once

#include <elf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_object.h"

namespace mlc::elf::detail {

ObjectKind kind_of(unsigned e_type);

// The NUL-terminated name at `offset` of a string table; empty when the offset or the name's end
// lies outside it.
std::string_view name_in(std::string_view strings, uint64_t offset);

// A string table and, when a reader copied part of it out, that part: `window` holds the table's bytes from
// `window_at` on. A name is taken from the copy when it lies there, NUL and all, else from the table, with
// name_in's answer either way.
struct StringsView {
  std::string_view all;
  std::string_view window;
  uint64_t window_at = 0;
  std::string_view at(uint64_t offset) const;
};

// The .dynamic tags whose value is an offset in the dynamic string table (those note_dynamic reads).
inline bool is_string_tag(int64_t tag) {
  return tag == DT_NEEDED || tag == DT_SONAME || tag == DT_RPATH || tag == DT_RUNPATH;
}

// One .dynamic entry, from either reader; str() reads the entry's value in the dynamic string table,
// only for the tags that name a string.
template <typename Str>
void note_dynamic(ElfObject& obj, int64_t tag, uint64_t value, const Str& str) {
  switch (tag) {
    case DT_NEEDED: obj.needed.emplace_back(str()); break;
    case DT_SONAME: obj.soname = std::string(str()); break;
    case DT_RPATH: obj.rpath = std::string(str()); break;
    case DT_RUNPATH: obj.runpath = std::string(str()); break;
    case DT_FLAGS: obj.dt_flags = value; break;
    case DT_FLAGS_1: obj.dt_flags_1 = value; break;
    case DT_RELA: obj.rela_table = value; break;
    case DT_REL: obj.rel_table = value; break;
    case DT_RELACOUNT: obj.relative_rela_count = value; break;
    case DT_RELCOUNT: obj.relative_rel_count = value; break;
    default: break;
  }
}

// A dynamic relocation section (one linked to .dynsym and allocated): its bytes and where ld.so
// finds it (sh_addr, compared with DT_RELA/DT_REL to skip the relative prefix).
struct RelocationBytes {
  std::string_view bytes;
  bool rela = true;
  uint64_t addr = 0;
};

// The entries at the start of `r` that ld.so applies without a symbol (elf_machine_rela_relative): DT_RELACOUNT's
// (DT_RELCOUNT's) count when `r` is the table DT_RELA (DT_REL) points at, else 0.
uint64_t relative_prefix(const RelocationBytes& r, const ElfObject& obj);
// The bytes of `r` past that prefix: the only ones the decoder reads.
std::string_view named_entries(const RelocationBytes& r, const ElfObject& obj);

// A symbol table's entries (aligned for Elf32_Sym/Elf64_Sym) and the string table its sh_link names.
struct SymbolTableBytes {
  const void* entries = nullptr;
  size_t size = 0;
  std::string_view strings;
};

// The sections a reader found, as host-order bytes. `present` flags tell an absent section from an
// empty one (an empty .gnu.version_d is still malformed; an absent one is no versions at all).
struct TableBytes {
  bool has_dynsym = false;
  SymbolTableBytes dynsym;
  bool has_versym = false;
  std::string_view versym;
  bool has_verdef = false;
  std::string_view verdef;
  StringsView verdef_strings;
  bool has_verneed = false;
  std::string_view verneed;
  StringsView verneed_strings;
  std::string_view gnu_hash;                // only when its sh_link is the .dynsym
  const uint32_t* gnu_hash_head = nullptr;  // its first four words, when a reader copied them out
  std::vector<RelocationBytes> relocations;
  bool relocations_readable = true;  // false: a dynamic relocation section's bytes could not be had
  bool has_symtab = false;
  SymbolTableBytes symtab;
};

// Decodes what `options` asks for into `obj`. The .dynsym views and version tables are read once
// (ElfObject::tables_read); relocations and materialised symbols each time they are asked for.
// Every count and link is checked against the bytes; a malformed version table is an InputError.
std::optional<InputError> decode_tables(const TableBytes& bytes, const ReadOptions& options, ElfObject& obj);

// One .dynsym entry decoded from the raw table (no name: callers that need it take it lazily).
Symbol decode_dynamic_symbol(const ElfObject& obj, size_t index);

}  // namespace mlc::elf::detail
