// One decoder for the tables both ELF readers find: .dynsym, .gnu.version, .gnu.version_d/_r,
// .gnu.hash and the dynamic relocations, all in host byte order. Every offset, count and link taken
// from the file is checked before use: a hostile file yields an InputError, never a crash or a hang.
#include "elf/tables.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace mlc::elf::detail {
namespace {

SymbolType type_of(unsigned t) {
  switch (t) {
    case STT_NOTYPE: return SymbolType::NoType;
    case STT_OBJECT: return SymbolType::Object;
    case STT_FUNC: return SymbolType::Func;
    case STT_SECTION: return SymbolType::Section;
    case STT_FILE: return SymbolType::File;
    case STT_COMMON: return SymbolType::Common;
    case STT_TLS: return SymbolType::Tls;
    case STT_GNU_IFUNC: return SymbolType::GnuIfunc;
    default: return SymbolType::Other;
  }
}

Binding binding_of(unsigned b) {
  switch (b) {
    case STB_LOCAL: return Binding::Local;
    case STB_GLOBAL: return Binding::Global;
    case STB_WEAK: return Binding::Weak;
    case STB_GNU_UNIQUE: return Binding::GnuUnique;
    default: return Binding::Other;
  }
}

Visibility visibility_of(unsigned other) {
  switch (ELF64_ST_VISIBILITY(other)) {
    case STV_INTERNAL: return Visibility::Internal;
    case STV_HIDDEN: return Visibility::Hidden;
    case STV_PROTECTED: return Visibility::Protected;
    default: return Visibility::Default;
  }
}

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // version records need not be aligned in a hostile file
  return v;
}

template <typename Sym, bool kIs64>
Symbol decode(const Sym& sym) {
  Symbol s;
  s.name_offset = sym.st_name;
  s.value = sym.st_value;
  s.size = sym.st_size;
  s.shndx = sym.st_shndx;
  unsigned info = sym.st_info;
  s.type = type_of(kIs64 ? ELF64_ST_TYPE(info) : ELF32_ST_TYPE(info));
  s.binding = binding_of(kIs64 ? ELF64_ST_BIND(info) : ELF32_ST_BIND(info));
  s.visibility = visibility_of(sym.st_other);
  return s;
}

// Entries are read in place: both readers hand over native Elf32_Sym/Elf64_Sym in host order.
template <typename Sym, bool kIs64>
std::vector<Symbol> decode_symbols(const SymbolTableBytes& table, bool defined_names) {
  std::vector<Symbol> out;
  if (!table.entries || table.size < sizeof(Sym)) return out;
  size_t count = table.size / sizeof(Sym);
  const auto* raw = static_cast<const Sym*>(table.entries);
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    Symbol s = decode<Sym, kIs64>(raw[i]);
    if (defined_names || s.shndx == kShnUndef) s.name = name_in(table.strings, raw[i].st_name);
    out.push_back(s);
  }
  return out;
}

std::vector<Symbol> decode_symbols(const SymbolTableBytes& table, bool is_64, bool defined_names) {
  return is_64 ? decode_symbols<Elf64_Sym, true>(table, defined_names)
               : decode_symbols<Elf32_Sym, false>(table, defined_names);
}

// .gnu.hash, validated: a table whose counts do not fit its section is ignored (lookups then scan).
GnuHashTable read_gnu_hash(std::string_view bytes, const uint32_t* head, bool is_64, size_t symbol_count) {
  GnuHashTable t;
  if (bytes.size() < 16) return t;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8) return t;
  const auto* words = head ? head : reinterpret_cast<const uint32_t*>(bytes.data());
  uint32_t nbuckets = words[0], symoffset = words[1], bloom_size = words[2], bloom_shift = words[3];
  size_t word_bytes = is_64 ? 8 : 4;
  uint64_t header = 16 + uint64_t{bloom_size} * word_bytes + uint64_t{nbuckets} * 4;
  // A shift of 32 or more would shift the 32-bit hash past its width (undefined behaviour; ld.so gets
  // whatever the hardware does): such a table is malformed and set aside, and lookups scan instead.
  if (nbuckets == 0 || bloom_size == 0 || bloom_shift >= 32 || header > bytes.size() || symoffset > symbol_count)
    return t;
  size_t nchains = (bytes.size() - header) / 4;
  if (symbol_count - symoffset > nchains) return t;
  const char* base = bytes.data();
  if (word_bytes == 8) {
    t.bloom64 = reinterpret_cast<const uint64_t*>(base + 16);
  } else {
    t.bloom32 = reinterpret_cast<const uint32_t*>(base + 16);
  }
  t.buckets = reinterpret_cast<const uint32_t*>(base + 16 + uint64_t{bloom_size} * word_bytes);
  t.chains = t.buckets + nbuckets;
  t.nbuckets = nbuckets;
  t.symoffset = symoffset;
  t.bloom_size = bloom_size;
  t.bloom_shift = bloom_shift;
  return t;
}

// The Verdef chain (Elf32_Verdef and Elf64_Verdef have one layout). The entry count from the dynamic
// section is not trusted: the walk stops at the end of the data, at a zero link, or after as many
// steps as bytes could hold.
Result<std::vector<VersionDefinition>> decode_verdef(std::string_view data, const StringsView& strings,
                                                     const std::string& path) {
  std::vector<VersionDefinition> defs;
  size_t offset = 0;
  for (size_t guard = 0; guard <= data.size(); ++guard) {
    if (offset + sizeof(Elf64_Verdef) > data.size()) return InputError{path, "malformed .gnu.version_d"};
    auto def = load<Elf64_Verdef>(data.data() + offset);
    uint64_t aux_at = uint64_t{offset} + def.vd_aux;
    if (def.vd_cnt > 0 && aux_at + sizeof(Elf64_Verdaux) <= data.size()) {
      auto aux = load<Elf64_Verdaux>(data.data() + aux_at);
      defs.push_back({def.vd_ndx, (def.vd_flags & VER_FLG_BASE) != 0, strings.at(aux.vda_name)});
    }
    if (def.vd_next == 0) break;
    if (offset + def.vd_next >= data.size()) return InputError{path, "malformed .gnu.version_d (link past the end)"};
    offset += def.vd_next;
  }
  return defs;
}

// The Verneed chain, each file's Vernaux list flattened into one requirement per version.
Result<std::vector<VersionRequirement>> decode_verneed(std::string_view data, const StringsView& strings,
                                                       const std::string& path) {
  std::vector<VersionRequirement> reqs;
  size_t offset = 0;
  for (size_t guard = 0; guard <= data.size(); ++guard) {
    if (offset + sizeof(Elf64_Verneed) > data.size()) return InputError{path, "malformed .gnu.version_r"};
    auto need = load<Elf64_Verneed>(data.data() + offset);
    std::string_view file = strings.at(need.vn_file);
    uint64_t aux_offset = uint64_t{offset} + need.vn_aux;
    for (unsigned k = 0; k < need.vn_cnt && k <= data.size(); ++k) {
      if (aux_offset + sizeof(Elf64_Vernaux) > data.size()) return InputError{path, "malformed .gnu.version_r"};
      auto aux = load<Elf64_Vernaux>(data.data() + aux_offset);
      reqs.push_back({static_cast<uint16_t>(aux.vna_other & 0x7fff), file, strings.at(aux.vna_name),
                      (aux.vna_flags & VER_FLG_WEAK) != 0, (aux.vna_other & 0x8000) != 0});
      if (aux.vna_next == 0) break;
      aux_offset += aux.vna_next;
    }
    if (need.vn_next == 0) break;
    if (offset + need.vn_next >= data.size()) return InputError{path, "malformed .gnu.version_r (link past the end)"};
    offset += need.vn_next;
  }
  return reqs;
}

// Marks every dynamic symbol named by a relocation: only those can make the loader fail. The first
// `skip` entries are DT_RELACOUNT/DT_RELCOUNT's relative relocations, which ld.so applies without
// any symbol (elf_machine_rela_relative), so their pages are never touched. On x86-64 the copy and
// initial-exec TLS relocations are told apart (RelocationKinds).
constexpr uint8_t kNamed = 1, kCopy = 2, kStaticTls = 4;
template <typename Rel, bool kIs64>
void mark_relocated(std::string_view bytes, size_t skip, bool x86_64, std::vector<uint8_t>& named) {
  size_t count = bytes.size() / sizeof(Rel);
  for (size_t i = std::min(skip, count); i < count; ++i) {
    decltype(Rel::r_info) info;  // copied out: a hostile section need not be aligned
    std::memcpy(&info, bytes.data() + i * sizeof(Rel) + offsetof(Rel, r_info), sizeof info);
    uint64_t sym = kIs64 ? (static_cast<uint64_t>(info) >> 32) : (static_cast<uint64_t>(info) >> 8);
    uint32_t type = kIs64 ? static_cast<uint32_t>(info & 0xffffffff) : static_cast<uint32_t>(info & 0xff);
    if (sym >= named.size()) continue;
    if (sym != 0) named[sym] |= kNamed;
    if (x86_64 && type == R_X86_64_COPY) named[sym] |= kCopy;
    if (x86_64 && type == R_X86_64_TPOFF64) named[sym] |= kStaticTls;
  }
}

void mark_relocated(const RelocationBytes& r, bool is_64, bool x86_64, size_t skip, std::vector<uint8_t>& named) {
  if (r.rela) {
    is_64 ? mark_relocated<Elf64_Rela, true>(r.bytes, skip, x86_64, named)
          : mark_relocated<Elf32_Rela, false>(r.bytes, skip, x86_64, named);
  } else {
    is_64 ? mark_relocated<Elf64_Rel, true>(r.bytes, skip, x86_64, named)
          : mark_relocated<Elf32_Rel, false>(r.bytes, skip, x86_64, named);
  }
}

// The named entries that are undefined (st_shndx read in place from the raw .dynsym).
void collect_undefined(ElfObject& obj, const std::vector<uint8_t>& named) {
  const size_t n = std::min(named.size(), obj.dynsym_count);
  for (uint32_t i = 0; i < n; ++i)
    if (named[i] & kStaticTls) obj.static_tls_symbols.push_back(i);
  for (uint32_t i = 1; i < n; ++i) {
    if (named[i] & kCopy) obj.copy_symbols.push_back(i);
    if (!(named[i] & kNamed)) continue;
    uint16_t shndx = obj.is_64 ? static_cast<const Elf64_Sym*>(obj.dynsym_data)[i].st_shndx
                               : static_cast<const Elf32_Sym*>(obj.dynsym_data)[i].st_shndx;
    if (shndx == SHN_UNDEF) obj.relocated_symbols.push_back(i);
  }
}

// The views look-ups go through, and the version tables, read once per object.
std::optional<InputError> read_lookup_tables(const TableBytes& b, ElfObject& obj) {
  obj.dynsym_data = b.dynsym.entries;
  obj.dynsym_count = b.dynsym.size / (obj.is_64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
  obj.dynamic_strings = b.dynsym.strings;
  if (b.has_versym) {
    if (!b.versym.empty() && reinterpret_cast<uintptr_t>(b.versym.data()) % 2 == 0) {
      obj.versym_data = reinterpret_cast<const uint16_t*>(b.versym.data());
      obj.versym_count = std::min(b.versym.size() / 2, obj.dynsym_count);
    }
    obj.has_versym = true;
  }
  obj.gnu_hash = read_gnu_hash(b.gnu_hash, b.gnu_hash_head, obj.is_64, obj.dynsym_count);
  if (b.has_verdef) {
    auto defs = decode_verdef(b.verdef, b.verdef_strings, obj.path);
    if (!defs) return defs.error();
    obj.version_definitions = std::move(defs).value();
    obj.has_verdef = true;
  }
  if (b.has_verneed) {
    auto reqs = decode_verneed(b.verneed, b.verneed_strings, obj.path);
    if (!reqs) return reqs.error();
    obj.version_requirements = std::move(reqs).value();
  }
  obj.tables_read = true;
  return std::nullopt;
}

}  // namespace

ObjectKind kind_of(unsigned e_type) {
  switch (e_type) {
    case ET_REL: return ObjectKind::Relocatable;
    case ET_EXEC: return ObjectKind::Executable;
    case ET_DYN: return ObjectKind::SharedObject;
    case ET_CORE: return ObjectKind::Core;
    default: return ObjectKind::Other;
  }
}

std::string_view name_in(std::string_view strings, uint64_t offset) {
  if (offset >= strings.size()) return {};
  const char* start = strings.data() + offset;
  size_t len = strnlen(start, strings.size() - offset);
  return offset + len < strings.size() ? std::string_view(start, len) : std::string_view();
}

std::string_view StringsView::at(uint64_t offset) const {
  if (offset >= window_at && offset - window_at < window.size()) {
    const size_t from = offset - window_at, nul = window.find('\0', from);
    if (nul != std::string_view::npos) return window.substr(from, nul - from);
  }
  return name_in(all, offset);
}

uint64_t relative_prefix(const RelocationBytes& r, const ElfObject& obj) {
  if (r.addr == 0 || r.addr != (r.rela ? obj.rela_table : obj.rel_table)) return 0;
  return r.rela ? obj.relative_rela_count : obj.relative_rel_count;
}

std::string_view named_entries(const RelocationBytes& r, const ElfObject& obj) {
  const size_t entry = r.rela ? (obj.is_64 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela))
                              : (obj.is_64 ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel));
  return r.bytes.substr(std::min<uint64_t>(relative_prefix(r, obj), r.bytes.size() / entry) * entry);
}

std::optional<InputError> decode_tables(const TableBytes& b, const ReadOptions& options, ElfObject& obj) {
  if (b.has_dynsym && !obj.tables_read) {
    if (auto err = read_lookup_tables(b, obj)) return err;
  }
  if (b.has_dynsym && options.relocations) {
    std::vector<uint8_t> named(std::max<size_t>(obj.dynsym_count, 1), 0);
    for (const auto& r : b.relocations) {
      mark_relocated(r, obj.is_64, obj.machine == EM_X86_64, relative_prefix(r, obj), named);
    }
    obj.has_relocation_info = !b.relocations.empty() && b.relocations_readable;
    obj.relocated_symbols.clear();
    obj.copy_symbols.clear();
    obj.static_tls_symbols.clear();
    if (obj.has_relocation_info) collect_undefined(obj, named);
  }
  if (b.has_dynsym && !options.lookup_only) {
    obj.dynamic_symbols = decode_symbols(b.dynsym, obj.is_64, options.defined_names);
    for (size_t i = 0; i < obj.versym_count && i < obj.dynamic_symbols.size(); ++i) {
      obj.dynamic_symbols[i].version_index = obj.versym_data[i] & 0x7fff;
      obj.dynamic_symbols[i].version_hidden = (obj.versym_data[i] & 0x8000) != 0;
    }
    for (uint32_t i : obj.relocated_symbols) obj.dynamic_symbols[i].relocated = true;
  }
  if (options.static_symbols && b.has_symtab) obj.static_symbols = decode_symbols(b.symtab, obj.is_64, true);
  return std::nullopt;
}

Symbol decode_dynamic_symbol(const ElfObject& o, size_t i) {
  Symbol s = o.is_64 ? decode<Elf64_Sym, true>(static_cast<const Elf64_Sym*>(o.dynsym_data)[i])
                     : decode<Elf32_Sym, false>(static_cast<const Elf32_Sym*>(o.dynsym_data)[i]);
  if (o.versym_data && i < o.versym_count) {
    s.version_index = o.versym_data[i] & 0x7fff;
    s.version_hidden = (o.versym_data[i] & 0x8000) != 0;
  }
  return s;
}

}  // namespace mlc::elf::detail
