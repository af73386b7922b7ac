// libelf-backed reader. Every offset, count and link taken from the file is checked before use:
// a truncated or hostile file yields an InputError naming the file, never a crash or a hang.
#include "elf/elf_object.h"

#include <ar.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstring>
#include <mutex>

namespace mlc::elf {
namespace {

void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

std::string elf_error() {
  const char* msg = elf_errmsg(-1);
  return msg ? msg : "unknown libelf error";
}

// Owns the descriptor and the libelf handle; string_views into the mapping stay valid while it lives.
struct Mapping {
  int fd = -1;
  Elf* archive = nullptr;
  Elf* elf = nullptr;
  ~Mapping() {
    if (elf) elf_end(elf);
    if (archive) elf_end(archive);
    if (fd >= 0) close(fd);
  }
};

ObjectKind kind_of(unsigned e_type) {
  switch (e_type) {
    case ET_REL: return ObjectKind::Relocatable;
    case ET_EXEC: return ObjectKind::Executable;
    case ET_DYN: return ObjectKind::SharedObject;
    case ET_CORE: return ObjectKind::Core;
    default: return ObjectKind::Other;
  }
}

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
  switch (GELF_ST_VISIBILITY(other)) {
    case STV_INTERNAL: return Visibility::Internal;
    case STV_HIDDEN: return Visibility::Hidden;
    case STV_PROTECTED: return Visibility::Protected;
    default: return Visibility::Default;
  }
}

// A string from a string table section, or empty when the offset is out of range.
std::string_view string_at(Elf* elf, size_t strtab, size_t offset) {
  const char* s = elf_strptr(elf, strtab, offset);
  return s ? std::string_view(s) : std::string_view();
}

struct Sections {
  Elf_Scn* dynsym = nullptr;
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynamic = nullptr;
  Elf_Scn* versym = nullptr;
  Elf_Scn* verdef = nullptr;
  Elf_Scn* verneed = nullptr;
  Elf_Scn* gnu_hash = nullptr;
  size_t dynsym_index = 0;
  size_t gnu_hash_link = 0;
  std::vector<Elf_Scn*> relocations;
};

// The bytes of a string table section ("" when unreadable): names are cut at their NUL within it.
std::string_view string_table(Elf* elf, size_t index) {
  Elf_Data* data = elf_getdata(elf_getscn(elf, index), nullptr);
  if (!data || !data->d_buf) return {};
  return {static_cast<const char*>(data->d_buf), data->d_size};
}

std::string_view name_in(std::string_view strings, uint64_t offset) {
  if (offset >= strings.size()) return {};
  const char* start = strings.data() + offset;
  size_t len = strnlen(start, strings.size() - offset);
  return offset + len < strings.size() ? std::string_view(start, len) : std::string_view();
}

// The memory representation elf_getdata returns is the native Elf32_Sym/Elf64_Sym in host order, so
// entries are read in place rather than copied one by one through gelf_getsym.
// One .dynamic entry, from either reader (libelf's or the native one); str() reads the entry's value
// in the dynamic string table, only for the tags that name a string.
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

template <typename Sym, bool kIs64>
void decode_symbols(const void* buf, size_t bytes, std::string_view strings, bool defined_names, std::vector<Symbol>& out) {
  size_t count = bytes / sizeof(Sym);
  const auto* raw = static_cast<const Sym*>(buf);
  out.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const Sym& sym = raw[i];
    Symbol& s = out[i];
    s.name_offset = sym.st_name;
    s.value = sym.st_value;
    s.size = sym.st_size;
    s.shndx = sym.st_shndx;
    unsigned info = sym.st_info;
    s.type = type_of(kIs64 ? ELF64_ST_TYPE(info) : ELF32_ST_TYPE(info));
    s.binding = binding_of(kIs64 ? ELF64_ST_BIND(info) : ELF32_ST_BIND(info));
    s.visibility = visibility_of(sym.st_other);
    if (defined_names || s.shndx == kShnUndef) s.name = name_in(strings, sym.st_name);
  }
}

Result<std::vector<Symbol>> read_symbols(Elf* elf, Elf_Scn* scn, const std::string& path, bool defined_names = true) {
  GElf_Shdr shdr;
  if (!gelf_getshdr(scn, &shdr)) return InputError{path, "bad symbol table header: " + elf_error()};
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data) return InputError{path, "unreadable symbol table: " + elf_error()};
  if (!data->d_buf && data->d_size) return InputError{path, "unreadable symbol table"};
  std::string_view strings = string_table(elf, shdr.sh_link);
  std::vector<Symbol> symbols;
  if (data->d_size == 0) return symbols;
  if (gelf_getclass(elf) == ELFCLASS64) {
    if (reinterpret_cast<uintptr_t>(data->d_buf) % alignof(Elf64_Sym)) return InputError{path, "misaligned symbol table"};
    decode_symbols<Elf64_Sym, true>(data->d_buf, data->d_size, strings, defined_names, symbols);
  } else {
    if (reinterpret_cast<uintptr_t>(data->d_buf) % alignof(Elf32_Sym)) return InputError{path, "misaligned symbol table"};
    decode_symbols<Elf32_Sym, false>(data->d_buf, data->d_size, strings, defined_names, symbols);
  }
  return symbols;
}

// .gnu.hash, validated: a table whose counts do not fit its section is ignored (lookups then scan).
GnuHashTable read_gnu_hash(const void* buf, size_t bytes, bool is_64, size_t symbol_count) {
  GnuHashTable t;
  if (!buf || bytes < 16) return t;
  const auto* words = static_cast<const uint32_t*>(buf);
  if (reinterpret_cast<uintptr_t>(words) % 8) return t;
  uint32_t nbuckets = words[0], symoffset = words[1], bloom_size = words[2], bloom_shift = words[3];
  size_t word_bytes = is_64 ? 8 : 4;
  uint64_t header = 16 + uint64_t{bloom_size} * word_bytes + uint64_t{nbuckets} * 4;
  if (nbuckets == 0 || bloom_size == 0 || header > bytes || symoffset > symbol_count) return t;
  size_t nchains = (bytes - header) / 4;
  if (symbol_count - symoffset > nchains) return t;
  const char* base = static_cast<const char*>(buf);
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

void read_versym(Elf_Scn* scn, std::vector<Symbol>& symbols) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data || !data->d_buf) return;
  size_t count = std::min(data->d_size / sizeof(GElf_Versym), symbols.size());
  const auto* entries = static_cast<const GElf_Versym*>(data->d_buf);
  for (size_t i = 0; i < count; ++i) {
    symbols[i].version_index = entries[i] & 0x7fff;
    symbols[i].version_hidden = (entries[i] & 0x8000) != 0;
  }
}

// Walks Verdef entries. The entry count from the dynamic section is not trusted; the walk stops at
// the end of the data, at a zero or backwards link, or after as many steps as bytes could hold.
Result<std::vector<VersionDefinition>> read_verdef(Elf* elf, Elf_Scn* scn, const std::string& path) {
  GElf_Shdr shdr;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!gelf_getshdr(scn, &shdr) || !data) return InputError{path, "unreadable .gnu.version_d: " + elf_error()};
  std::vector<VersionDefinition> defs;
  size_t offset = 0;
  for (size_t guard = 0; guard <= data->d_size; ++guard) {
    GElf_Verdef def;
    if (!gelf_getverdef(data, static_cast<int>(offset), &def)) return InputError{path, "malformed .gnu.version_d"};
    GElf_Verdaux aux;
    if (def.vd_cnt > 0 && gelf_getverdaux(data, static_cast<int>(offset + def.vd_aux), &aux)) {
      defs.push_back({def.vd_ndx, (def.vd_flags & VER_FLG_BASE) != 0, string_at(elf, shdr.sh_link, aux.vda_name)});
    }
    if (def.vd_next == 0) break;
    if (offset + def.vd_next >= data->d_size) return InputError{path, "malformed .gnu.version_d (link past the end)"};
    offset += def.vd_next;
  }
  return defs;
}

Result<std::vector<VersionRequirement>> read_verneed(Elf* elf, Elf_Scn* scn, const std::string& path) {
  GElf_Shdr shdr;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!gelf_getshdr(scn, &shdr) || !data) return InputError{path, "unreadable .gnu.version_r: " + elf_error()};
  std::vector<VersionRequirement> reqs;
  size_t offset = 0;
  for (size_t guard = 0; guard <= data->d_size; ++guard) {
    GElf_Verneed need;
    if (!gelf_getverneed(data, static_cast<int>(offset), &need)) return InputError{path, "malformed .gnu.version_r"};
    std::string_view file = string_at(elf, shdr.sh_link, need.vn_file);
    size_t aux_offset = offset + need.vn_aux;
    for (unsigned k = 0; k < need.vn_cnt && k <= data->d_size; ++k) {
      GElf_Vernaux aux;
      if (!gelf_getvernaux(data, static_cast<int>(aux_offset), &aux)) return InputError{path, "malformed .gnu.version_r"};
      reqs.push_back({static_cast<uint16_t>(aux.vna_other & 0x7fff), file, string_at(elf, shdr.sh_link, aux.vna_name),
                      (aux.vna_flags & VER_FLG_WEAK) != 0, (aux.vna_other & 0x8000) != 0});
      if (aux.vna_next == 0) break;
      aux_offset += aux.vna_next;
    }
    if (need.vn_next == 0) break;
    if (offset + need.vn_next >= data->d_size) return InputError{path, "malformed .gnu.version_r (link past the end)"};
    offset += need.vn_next;
  }
  return reqs;
}

// Marks every dynamic symbol named by a relocation: only those can make the loader fail.
// The memory representation from elf_getdata is already in host byte order. The first `skip`
// entries are DT_RELACOUNT/DT_RELCOUNT's relative relocations, which ld.so applies without any
// symbol (elf_machine_rela_relative), so their pages are never touched.
template <typename Rel, bool kIs64>
void mark_relocated(const void* buf, size_t bytes, size_t skip, std::vector<uint8_t>& named) {
  const char* base = static_cast<const char*>(buf);
  size_t count = bytes / sizeof(Rel);
  for (size_t i = std::min(skip, count); i < count; ++i) {
    decltype(Rel::r_info) info;  // copied out: a hostile section need not be aligned
    std::memcpy(&info, base + i * sizeof(Rel) + offsetof(Rel, r_info), sizeof info);
    uint64_t sym = kIs64 ? (static_cast<uint64_t>(info) >> 32) : (static_cast<uint64_t>(info) >> 8);
    if (sym != 0 && sym < named.size()) named[sym] = 1;
  }
}

// Which .dynsym entries the dynamic relocations name (one flag per entry); false when a relocation
// section cannot be read.
bool read_relocations(const std::vector<Elf_Scn*>& scns, const ElfObject& obj, std::vector<uint8_t>& named) {
  for (Elf_Scn* scn : scns) {
    GElf_Shdr shdr;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!gelf_getshdr(scn, &shdr) || !data || (!data->d_buf && data->d_size)) return false;
    if (data->d_size == 0) continue;
    bool rela = shdr.sh_type == SHT_RELA;
    size_t skip = 0;
    if (shdr.sh_addr != 0 && shdr.sh_addr == (rela ? obj.rela_table : obj.rel_table)) {
      skip = rela ? obj.relative_rela_count : obj.relative_rel_count;
    }
    if (rela) {
      obj.is_64 ? mark_relocated<Elf64_Rela, true>(data->d_buf, data->d_size, skip, named) : mark_relocated<Elf32_Rela, false>(data->d_buf, data->d_size, skip, named);
    } else {
      obj.is_64 ? mark_relocated<Elf64_Rel, true>(data->d_buf, data->d_size, skip, named) : mark_relocated<Elf32_Rel, false>(data->d_buf, data->d_size, skip, named);
    }
  }
  return true;
}

// The named entries that are undefined (st_shndx read in place from the raw .dynsym).
void collect_undefined(ElfObject& obj, const std::vector<uint8_t>& named) {
  const size_t n = std::min(named.size(), obj.dynsym_count);
  for (uint32_t i = 1; i < n; ++i) {
    if (!named[i]) continue;
    uint16_t shndx = obj.is_64 ? static_cast<const Elf64_Sym*>(obj.dynsym_data)[i].st_shndx
                               : static_cast<const Elf32_Sym*>(obj.dynsym_data)[i].st_shndx;
    if (shndx == SHN_UNDEF) obj.relocated_symbols.push_back(i);
  }
}

Result<Sections> scan_sections(Elf* elf, const std::string& path, ElfObject& obj);
std::optional<InputError> read_tables(Elf* elf, const Sections& sec, const ReadOptions& options, ElfObject& obj);

Result<ElfObject> read_elf(Elf* elf, const std::string& path, const ReadOptions& options) {
  if (elf_kind(elf) != ELF_K_ELF) return InputError{path, "not an ELF file"};
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf, &ehdr)) return InputError{path, "malformed ELF header: " + elf_error()};
  ElfObject obj;
  obj.path = path;
  obj.is_64 = ehdr.e_ident[EI_CLASS] == ELFCLASS64;
  obj.big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
  obj.machine = ehdr.e_machine;
  obj.osabi = ehdr.e_ident[EI_OSABI];
  obj.kind = kind_of(ehdr.e_type);

  size_t file_size = 0;
  elf_rawfile(elf, &file_size);
  // libelf quietly yields no sections when the table lies past the end; the loader would see a
  // truncated file, and so do we.
  uint64_t table_end = ehdr.e_shoff + uint64_t{ehdr.e_shnum} * ehdr.e_shentsize;
  if (ehdr.e_shoff != 0 && (table_end > file_size || table_end < ehdr.e_shoff)) {
    return InputError{path, "truncated ELF: the section header table ends at byte " + std::to_string(table_end) +
                                " of a " + std::to_string(file_size) + "-byte file"};
  }
  uint64_t phdr_end = ehdr.e_phoff + uint64_t{ehdr.e_phnum} * ehdr.e_phentsize;
  if (ehdr.e_phoff != 0 && (phdr_end > file_size || phdr_end < ehdr.e_phoff)) {
    return InputError{path, "truncated ELF: the program header table ends at byte " + std::to_string(phdr_end) +
                                " of a " + std::to_string(file_size) + "-byte file"};
  }
  auto scanned = scan_sections(elf, path, obj);
  if (!scanned) return scanned.error();
  const Sections& sec = scanned.value();

  if (sec.dynamic) {
    GElf_Shdr shdr;
    Elf_Data* data = elf_getdata(sec.dynamic, nullptr);
    if (!gelf_getshdr(sec.dynamic, &shdr) || !data) return InputError{path, "unreadable dynamic section: " + elf_error()};
    size_t entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
    size_t count = entsize ? data->d_size / entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) break;
      if (dyn.d_tag == DT_NULL) break;
      note_dynamic(obj, dyn.d_tag, dyn.d_un.d_val, [&] { return string_at(elf, shdr.sh_link, dyn.d_un.d_val); });
    }
    // glibc (get-dynamic-info.h): when both are present, DT_RPATH is ignored.
    if (obj.runpath) obj.rpath.reset();
  }
  if (options.symbols) {
    if (auto err = read_tables(elf, sec, options, obj)) return *err;
  }
  obj.handle = elf;
  return obj;
}

Result<Sections> scan_sections(Elf* elf, const std::string& path, ElfObject& obj) {
  size_t file_size = 0;
  elf_rawfile(elf, &file_size);
  size_t shnum = 0;
  if (elf_getshdrnum(elf, &shnum) != 0) return InputError{path, "malformed section header table: " + elf_error()};
  Sections sec;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) return InputError{path, "malformed section header: " + elf_error()};
    if (shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0 && shdr.sh_type != SHT_NULL) {
      // libelf checks this lazily in elf_getdata; checking here gives one clear message.
      GElf_Off end = shdr.sh_offset + shdr.sh_size;
      if (end < shdr.sh_offset || end > file_size) {
        return InputError{path, "section " + std::to_string(elf_ndxscn(scn)) + " extends past the end of the file (truncated or corrupt ELF)"};
      }
    }
    if (shdr.sh_link >= shnum && shdr.sh_type != SHT_NULL &&
        (shdr.sh_type == SHT_DYNSYM || shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNAMIC)) {
      return InputError{path, "section " + std::to_string(elf_ndxscn(scn)) + " links to a section that does not exist"};
    }
    switch (shdr.sh_type) {
      case SHT_DYNSYM: sec.dynsym = scn; sec.dynsym_index = elf_ndxscn(scn); break;
      case SHT_SYMTAB: sec.symtab = scn; obj.has_static_symtab = true; break;
      case SHT_DYNAMIC: sec.dynamic = scn; break;
      case SHT_GNU_versym: sec.versym = scn; break;
      case SHT_GNU_verdef: sec.verdef = scn; break;
      case SHT_GNU_verneed: sec.verneed = scn; break;
      case SHT_GNU_HASH:
        sec.gnu_hash = scn;
        sec.gnu_hash_link = shdr.sh_link;
        break;
      case SHT_RELA:
      case SHT_REL: sec.relocations.push_back(scn); break;
      default: break;
    }
  }

  return sec;
}

// The raw .dynsym and .gnu.version in host order, for decoding single entries on demand.
std::optional<InputError> read_dynsym_views(Elf* elf, const Sections& sec, ElfObject& obj) {
  Elf_Data* data = elf_getdata(sec.dynsym, nullptr);
  if (!data || (!data->d_buf && data->d_size)) return InputError{obj.path, "unreadable symbol table: " + elf_error()};
  size_t entsize = obj.is_64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  if (data->d_size && reinterpret_cast<uintptr_t>(data->d_buf) % (obj.is_64 ? alignof(Elf64_Sym) : alignof(Elf32_Sym))) {
    return InputError{obj.path, "misaligned symbol table"};
  }
  obj.dynsym_data = data->d_buf;
  obj.dynsym_count = data->d_size / entsize;
  GElf_Shdr dynsym_header;
  if (gelf_getshdr(sec.dynsym, &dynsym_header)) obj.dynamic_strings = string_table(elf, dynsym_header.sh_link);
  if (sec.versym) {
    Elf_Data* v = elf_getdata(sec.versym, nullptr);
    if (v && v->d_buf && reinterpret_cast<uintptr_t>(v->d_buf) % 2 == 0) {
      obj.versym_data = static_cast<const uint16_t*>(v->d_buf);
      obj.versym_count = std::min(v->d_size / 2, obj.dynsym_count);
    }
    obj.has_versym = true;
  }
  if (sec.gnu_hash && sec.gnu_hash_link == sec.dynsym_index) {
    Elf_Data* h = elf_getdata(sec.gnu_hash, nullptr);
    if (h) obj.gnu_hash = read_gnu_hash(h->d_buf, h->d_size, obj.is_64, obj.dynsym_count);
  }
  return std::nullopt;
}

std::optional<InputError> read_tables(Elf* elf, const Sections& sec, const ReadOptions& options, ElfObject& obj) {
  const std::string& path = obj.path;
  if (sec.dynsym) {
    if (auto err = read_dynsym_views(elf, sec, obj)) return err;
    if (sec.verdef) {
      auto defs = read_verdef(elf, sec.verdef, path);
      if (!defs) return defs.error();
      obj.version_definitions = std::move(defs).value();
      obj.has_verdef = true;
    }
    if (sec.verneed) {
      auto reqs = read_verneed(elf, sec.verneed, path);
      if (!reqs) return reqs.error();
      obj.version_requirements = std::move(reqs).value();
    }
  }
  if (sec.dynsym && options.relocations) {
    std::vector<Elf_Scn*> dynamic_relocs;
    for (Elf_Scn* scn : sec.relocations) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) && shdr.sh_link == sec.dynsym_index && (shdr.sh_flags & SHF_ALLOC)) {
        dynamic_relocs.push_back(scn);
      }
    }
    std::vector<uint8_t> named(obj.dynsym_count, 0);
    obj.has_relocation_info = !dynamic_relocs.empty() && read_relocations(dynamic_relocs, obj, named);
    obj.relocated_symbols.clear();
    if (obj.has_relocation_info) collect_undefined(obj, named);
  }
  if (sec.dynsym && !options.lookup_only) {
    auto syms = read_symbols(elf, sec.dynsym, path, options.defined_names);
    if (!syms) return syms.error();
    obj.dynamic_symbols = std::move(syms).value();
    if (sec.versym) read_versym(sec.versym, obj.dynamic_symbols);
    for (uint32_t i : obj.relocated_symbols) obj.dynamic_symbols[i].relocated = true;
  }
  if (options.static_symbols && sec.symtab) {
    auto syms = read_symbols(elf, sec.symtab, path);
    if (!syms) return syms.error();
    obj.static_symbols = std::move(syms).value();
  }
  return std::nullopt;
}

// One .dynsym entry decoded from the raw table (no name: callers that need it take it lazily).
template <typename Sym, bool kIs64>
Symbol decode_one(const ElfObject& o, size_t i) {
  const Sym& sym = static_cast<const Sym*>(o.dynsym_data)[i];
  Symbol s;
  s.name_offset = sym.st_name;
  s.value = sym.st_value;
  s.size = sym.st_size;
  s.shndx = sym.st_shndx;
  unsigned info = sym.st_info;
  s.type = type_of(kIs64 ? ELF64_ST_TYPE(info) : ELF32_ST_TYPE(info));
  s.binding = binding_of(kIs64 ? ELF64_ST_BIND(info) : ELF32_ST_BIND(info));
  s.visibility = visibility_of(sym.st_other);
  if (o.versym_data && i < o.versym_count) {
    s.version_index = o.versym_data[i] & 0x7fff;
    s.version_hidden = (o.versym_data[i] & 0x8000) != 0;
  }
  return s;
}

Result<std::shared_ptr<Mapping>> open_mapping(const std::string& path) {
  init_libelf();
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return InputError{path, std::string("cannot open: ") + std::strerror(errno)};
  if (S_ISDIR(st.st_mode)) return InputError{path, "is a directory"};
  if (!S_ISREG(st.st_mode)) return InputError{path, "not a regular file"};
  auto map = std::make_shared<Mapping>();
  map->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (map->fd < 0) return InputError{path, std::string("cannot open: ") + std::strerror(errno)};
  return map;
}


// ---- The native reader: files in the host's byte order, read without libelf ----------------------
// The file is mapped read-only and its tables are used in place; the section header table and the
// dynamic section (which sit far from the symbol tables) are read with pread, so that the only
// pages of the mapping ever touched are those the look-ups need (ld.so touches the same ones).

namespace native {

std::atomic<bool> keep_mapped{false};  // keep_mappings_until_exit()

struct Section {
  uint32_t type = 0;
  uint32_t link = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
};

struct File {
  const char* base = nullptr;  // the mapping of the whole file
  size_t size = 0;
  bool is_64 = true;
  std::vector<Section> sections;
  size_t dynsym = 0, symtab = 0, dynamic = 0, versym = 0, verdef = 0, verneed = 0, gnu_hash = 0;  // 0: none
  std::vector<size_t> relocations;
  std::vector<std::unique_ptr<uint64_t[]>> copies;  // aligned copies of misaligned tables
  ~File() {
    if (base && !keep_mapped.load(std::memory_order_relaxed)) munmap(const_cast<char*>(base), size);
  }
  File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // A section's bytes (bounds were checked when the headers were read, for every type but these two:
  // NOBITS and NULL sections have none, whatever their offset and size say).
  std::string_view bytes(size_t index) const {
    if (index == 0 || index >= sections.size() || sections[index].type == SHT_NOBITS ||
        sections[index].type == SHT_NULL) {
      return {};
    }
    return {base + sections[index].offset, sections[index].size};
  }
  // The bytes at an alignment the table's entries need: in place, or copied once when a (hostile)
  // file places the section off its alignment.
  const void* aligned(std::string_view b, size_t alignment) {
    if (b.empty() || reinterpret_cast<uintptr_t>(b.data()) % alignment == 0) return b.data();
    copies.push_back(std::make_unique<uint64_t[]>(b.size() / 8 + 1));
    std::memcpy(copies.back().get(), b.data(), b.size());
    return copies.back().get();
  }
  // A string table as elf_strptr accepts one (SHT_STRTAB only).
  std::string_view strtab(size_t index) const {
    if (index == 0 || index >= sections.size() || sections[index].type != SHT_STRTAB) return {};
    return bytes(index);
  }
};

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool pread_all(int fd, void* buf, size_t len, uint64_t offset) {
  char* out = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t got = pread(fd, out, len, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    len -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

template <typename Ehdr, typename Shdr>
std::optional<InputError> read_headers(int fd, const std::string& path, File& f, ElfObject& obj) {
  Ehdr ehdr;
  if (f.size < sizeof ehdr || !pread_all(fd, &ehdr, sizeof ehdr, 0)) return InputError{path, "truncated ELF header"};
  obj.machine = ehdr.e_machine;
  obj.kind = kind_of(ehdr.e_type);
  uint64_t table_end = ehdr.e_shoff + uint64_t{ehdr.e_shnum} * ehdr.e_shentsize;
  if (ehdr.e_shoff != 0 && (table_end > f.size || table_end < ehdr.e_shoff)) {
    return InputError{path, "truncated ELF: the section header table ends at byte " + std::to_string(table_end) +
                                " of a " + std::to_string(f.size) + "-byte file"};
  }
  uint64_t phdr_end = ehdr.e_phoff + uint64_t{ehdr.e_phnum} * ehdr.e_phentsize;
  if (ehdr.e_phoff != 0 && (phdr_end > f.size || phdr_end < ehdr.e_phoff)) {
    return InputError{path, "truncated ELF: the program header table ends at byte " + std::to_string(phdr_end) +
                                " of a " + std::to_string(f.size) + "-byte file"};
  }
  if (ehdr.e_shoff == 0) return std::nullopt;  // no section headers: nothing ld.so's tables can be found by
  if (ehdr.e_shentsize != sizeof(Shdr)) return InputError{path, "malformed section header table: bad entry size"};
  uint64_t shnum = ehdr.e_shnum;
  if (shnum == 0) {  // extended numbering: the count is section 0's sh_size
    Shdr first;
    if (ehdr.e_shoff + sizeof first > f.size || !pread_all(fd, &first, sizeof first, ehdr.e_shoff)) {
      return InputError{path, "malformed section header table: truncated"};
    }
    shnum = first.sh_size;
    if (shnum > (f.size - ehdr.e_shoff) / sizeof(Shdr)) {
      return InputError{path, "malformed section header table: more sections than the file holds"};
    }
  }
  std::vector<Shdr> raw(shnum);
  if (shnum && !pread_all(fd, raw.data(), shnum * sizeof(Shdr), ehdr.e_shoff)) {
    return InputError{path, "malformed section header table: unreadable"};
  }
  f.sections.resize(shnum);
  for (size_t i = 0; i < shnum; ++i) {
    f.sections[i] = {raw[i].sh_type, raw[i].sh_link, raw[i].sh_flags, raw[i].sh_addr, raw[i].sh_offset, raw[i].sh_size};
  }
  for (size_t i = 1; i < shnum; ++i) {
    const Section& s = f.sections[i];
    if (s.type != SHT_NOBITS && s.size > 0 && s.type != SHT_NULL) {
      uint64_t end = s.offset + s.size;
      if (end < s.offset || end > f.size) {
        return InputError{path, "section " + std::to_string(i) + " extends past the end of the file (truncated or corrupt ELF)"};
      }
    }
    if (s.link >= shnum && (s.type == SHT_DYNSYM || s.type == SHT_SYMTAB || s.type == SHT_DYNAMIC)) {
      return InputError{path, "section " + std::to_string(i) + " links to a section that does not exist"};
    }
    switch (s.type) {
      case SHT_DYNSYM: f.dynsym = i; break;
      case SHT_SYMTAB: f.symtab = i; obj.has_static_symtab = true; break;
      case SHT_DYNAMIC: f.dynamic = i; break;
      case SHT_GNU_versym: f.versym = i; break;
      case SHT_GNU_verdef: f.verdef = i; break;
      case SHT_GNU_verneed: f.verneed = i; break;
      case SHT_GNU_HASH: f.gnu_hash = i; break;
      case SHT_RELA:
      case SHT_REL: f.relocations.push_back(i); break;
      default: break;
    }
  }
  return std::nullopt;
}

template <typename Dyn>
std::optional<InputError> read_dynamic(int fd, const std::string& path, const File& f, ElfObject& obj) {
  const Section& s = f.sections[f.dynamic];
  if (s.type == SHT_NOBITS || s.size == 0) return std::nullopt;
  std::vector<Dyn> entries(s.size / sizeof(Dyn));
  if (!entries.empty() && !pread_all(fd, entries.data(), entries.size() * sizeof(Dyn), s.offset)) {
    return InputError{path, "unreadable dynamic section"};
  }
  std::string_view strings = f.strtab(s.link);
  for (const Dyn& dyn : entries) {
    if (dyn.d_tag == DT_NULL) break;
    note_dynamic(obj, dyn.d_tag, dyn.d_un.d_val, [&] { return name_in(strings, dyn.d_un.d_val); });
  }
  if (obj.runpath) obj.rpath.reset();  // glibc (get-dynamic-info.h): DT_RUNPATH wins
  return std::nullopt;
}

// The Verdef chain, walked as read_verdef walks libelf's copy.
Result<std::vector<VersionDefinition>> read_verdef(const File& f, const std::string& path) {
  std::string_view data = f.bytes(f.verdef);
  std::string_view strings = f.strtab(f.sections[f.verdef].link);
  std::vector<VersionDefinition> defs;
  size_t offset = 0;
  for (size_t guard = 0; guard <= data.size(); ++guard) {
    if (offset + sizeof(Elf64_Verdef) > data.size()) return InputError{path, "malformed .gnu.version_d"};
    auto def = load<Elf64_Verdef>(data.data() + offset);
    uint64_t aux_at = uint64_t{offset} + def.vd_aux;
    if (def.vd_cnt > 0 && aux_at + sizeof(Elf64_Verdaux) <= data.size()) {
      auto aux = load<Elf64_Verdaux>(data.data() + aux_at);
      defs.push_back({def.vd_ndx, (def.vd_flags & VER_FLG_BASE) != 0, name_in(strings, aux.vda_name)});
    }
    if (def.vd_next == 0) break;
    if (offset + def.vd_next >= data.size()) return InputError{path, "malformed .gnu.version_d (link past the end)"};
    offset += def.vd_next;
  }
  return defs;
}

Result<std::vector<VersionRequirement>> read_verneed(const File& f, const std::string& path) {
  std::string_view data = f.bytes(f.verneed);
  std::string_view strings = f.strtab(f.sections[f.verneed].link);
  std::vector<VersionRequirement> reqs;
  size_t offset = 0;
  for (size_t guard = 0; guard <= data.size(); ++guard) {
    if (offset + sizeof(Elf64_Verneed) > data.size()) return InputError{path, "malformed .gnu.version_r"};
    auto need = load<Elf64_Verneed>(data.data() + offset);
    std::string_view file = name_in(strings, need.vn_file);
    uint64_t aux_offset = uint64_t{offset} + need.vn_aux;
    for (unsigned k = 0; k < need.vn_cnt && k <= data.size(); ++k) {
      if (aux_offset + sizeof(Elf64_Vernaux) > data.size()) return InputError{path, "malformed .gnu.version_r"};
      auto aux = load<Elf64_Vernaux>(data.data() + aux_offset);
      reqs.push_back({static_cast<uint16_t>(aux.vna_other & 0x7fff), file, name_in(strings, aux.vna_name),
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

template <typename Sym, bool kIs64>
std::vector<Symbol> symbols_of(File& f, size_t index, bool defined_names) {
  std::string_view b = f.bytes(index);
  std::vector<Symbol> out;
  if (b.size() < sizeof(Sym)) return out;
  decode_symbols<Sym, kIs64>(f.aligned(b, alignof(Sym)), b.size(), f.bytes(f.sections[index].link), defined_names, out);
  return out;
}

std::optional<InputError> read_tables(File& f, const ReadOptions& options, ElfObject& obj) {
  const std::string& path = obj.path;
  if (f.dynsym && !obj.tables_read) {
    std::string_view syms = f.bytes(f.dynsym);
    size_t entsize = obj.is_64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
    obj.dynsym_data = f.aligned(syms, obj.is_64 ? alignof(Elf64_Sym) : alignof(Elf32_Sym));
    obj.dynsym_count = syms.size() / entsize;
    obj.dynamic_strings = f.bytes(f.sections[f.dynsym].link);
    if (f.versym) {
      std::string_view v = f.bytes(f.versym);
      if (!v.empty() && reinterpret_cast<uintptr_t>(v.data()) % 2 == 0) {
        obj.versym_data = reinterpret_cast<const uint16_t*>(v.data());
        obj.versym_count = std::min(v.size() / 2, obj.dynsym_count);
      }
      obj.has_versym = true;
    }
    if (f.gnu_hash && f.sections[f.gnu_hash].link == f.dynsym) {
      std::string_view h = f.bytes(f.gnu_hash);
      obj.gnu_hash = read_gnu_hash(h.data(), h.size(), obj.is_64, obj.dynsym_count);
    }
    if (f.verdef) {
      auto defs = read_verdef(f, path);
      if (!defs) return defs.error();
      obj.version_definitions = std::move(defs).value();
      obj.has_verdef = true;
    }
    if (f.verneed) {
      auto reqs = read_verneed(f, path);
      if (!reqs) return reqs.error();
      obj.version_requirements = std::move(reqs).value();
    }
    obj.tables_read = true;
  }
  if (f.dynsym && options.relocations) {
    std::vector<uint8_t> named(obj.dynsym_count, 0);
    bool any = false;
    for (size_t index : f.relocations) {
      const Section& s = f.sections[index];
      if (s.link != f.dynsym || !(s.flags & SHF_ALLOC)) continue;
      any = true;
      std::string_view b = f.bytes(index);
      if (b.empty()) continue;
      bool rela = s.type == SHT_RELA;
      size_t skip = 0;
      if (s.addr != 0 && s.addr == (rela ? obj.rela_table : obj.rel_table)) {
        skip = rela ? obj.relative_rela_count : obj.relative_rel_count;
      }
      if (rela) {
        obj.is_64 ? mark_relocated<Elf64_Rela, true>(b.data(), b.size(), skip, named)
                  : mark_relocated<Elf32_Rela, false>(b.data(), b.size(), skip, named);
      } else {
        obj.is_64 ? mark_relocated<Elf64_Rel, true>(b.data(), b.size(), skip, named)
                  : mark_relocated<Elf32_Rel, false>(b.data(), b.size(), skip, named);
      }
    }
    obj.has_relocation_info = any;
    obj.relocated_symbols.clear();
    if (any) collect_undefined(obj, named);
  }
  if (f.dynsym && !options.lookup_only) {
    obj.dynamic_symbols = obj.is_64 ? symbols_of<Elf64_Sym, true>(f, f.dynsym, options.defined_names)
                                    : symbols_of<Elf32_Sym, false>(f, f.dynsym, options.defined_names);
    if (obj.versym_data) {
      for (size_t i = 0; i < obj.versym_count && i < obj.dynamic_symbols.size(); ++i) {
        obj.dynamic_symbols[i].version_index = obj.versym_data[i] & 0x7fff;
        obj.dynamic_symbols[i].version_hidden = (obj.versym_data[i] & 0x8000) != 0;
      }
    }
    for (uint32_t i : obj.relocated_symbols) obj.dynamic_symbols[i].relocated = true;
  }
  if (options.static_symbols && f.symtab) {
    obj.static_symbols = obj.is_64 ? symbols_of<Elf64_Sym, true>(f, f.symtab, true)
                                   : symbols_of<Elf32_Sym, false>(f, f.symtab, true);
  }
  return std::nullopt;
}

// Reads a host-order file whose descriptor is open; the descriptor is not kept.
Result<ElfObject> read(int fd, const std::string& path, size_t file_size, const ElfIdent& ident,
                       const ReadOptions& options) {
  auto f = std::make_shared<File>();
  f->size = file_size;
  f->is_64 = ident.is_64;
  ElfObject obj;
  obj.path = path;
  obj.is_64 = ident.is_64;
  obj.big_endian = ident.big_endian;
  obj.osabi = ident.osabi;
  auto err = ident.is_64 ? read_headers<Elf64_Ehdr, Elf64_Shdr>(fd, path, *f, obj)
                         : read_headers<Elf32_Ehdr, Elf32_Shdr>(fd, path, *f, obj);
  if (err) return *err;
  void* base = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return InputError{path, std::string("cannot map: ") + std::strerror(errno)};
  f->base = static_cast<const char*>(base);
  if (f->dynamic) {
    err = ident.is_64 ? read_dynamic<Elf64_Dyn>(fd, path, *f, obj) : read_dynamic<Elf32_Dyn>(fd, path, *f, obj);
    if (err) return *err;
  }
  if (options.symbols) {
    if (auto e = read_tables(*f, options, obj)) return *e;
  }
  obj.native = f.get();
  obj.keep_alive = std::move(f);
  return obj;
}

}  // namespace native

}  // namespace

const VersionDefinition* ElfObject::definition(uint16_t index) const {
  for (const auto& d : version_definitions)
    if (d.index == index) return &d;
  return nullptr;
}

const VersionRequirement* ElfObject::requirement(uint16_t index) const {
  for (const auto& r : version_requirements)
    if (r.index == index) return &r;
  return nullptr;
}

uint32_t gnu_hash(std::string_view name) {
  uint32_t h = 5381;
  for (unsigned char c : name) h = h * 33 + c;
  return h;
}

std::string_view ElfObject::name_of(const Symbol& s) const {
  if (!s.name.empty() || s.name_offset == 0) return s.name;
  return name_in(dynamic_strings, s.name_offset);
}

std::string_view ElfObject::name_and_hash(uint32_t offset, uint32_t& hash) const {
  uint32_t h = 5381;
  hash = h;
  if (offset >= dynamic_strings.size()) return {};
  const char* start = dynamic_strings.data() + offset;
  const char* end = dynamic_strings.data() + dynamic_strings.size();
  for (const char* c = start; c < end; ++c) {
    if (*c == '\0') {
      hash = h;
      return {start, static_cast<size_t>(c - start)};
    }
    h = h * 33 + static_cast<unsigned char>(*c);
  }
  hash = 5381;
  return {};
}

size_t ElfObject::dynamic_symbol_count() const {
  return dynamic_symbols.empty() ? dynsym_count : dynamic_symbols.size();
}

Symbol ElfObject::dynamic_symbol(size_t i) const {
  if (i < dynamic_symbols.size()) return dynamic_symbols[i];
  if (i >= dynsym_count) return Symbol{};
  return is_64 ? decode_one<Elf64_Sym, true>(*this, i) : decode_one<Elf32_Sym, false>(*this, i);
}

void ElfObject::find_defined(std::string_view name, uint32_t hash, std::vector<uint32_t>& out) const {
  const size_t n = dynamic_symbol_count();
  const GnuHashTable& t = gnu_hash;
  auto defined_here = [&](uint32_t i) {
    uint16_t shndx = 0;
    uint32_t st_name = 0;
    if (i < dynamic_symbols.size()) {
      shndx = dynamic_symbols[i].shndx;
      st_name = dynamic_symbols[i].name_offset;
    } else if (is_64) {
      shndx = static_cast<const Elf64_Sym*>(dynsym_data)[i].st_shndx;
      st_name = static_cast<const Elf64_Sym*>(dynsym_data)[i].st_name;
    } else {
      shndx = static_cast<const Elf32_Sym*>(dynsym_data)[i].st_shndx;
      st_name = static_cast<const Elf32_Sym*>(dynsym_data)[i].st_name;
    }
    // Compared in place: the name must match and end right there (no strlen over long names).
    if (shndx == kShnUndef || st_name >= dynamic_strings.size() ||
        dynamic_strings.size() - st_name <= name.size()) {
      return;
    }
    const char* at = dynamic_strings.data() + st_name;
    if (at[name.size()] == '\0' && std::memcmp(at, name.data(), name.size()) == 0) out.push_back(i);
  };
  if (!t.present()) {
    for (uint32_t i = 1; i < n; ++i) defined_here(i);
    return;
  }
  // dl-lookup.c do_lookup_x: two bits of the bloom filter, then the bucket's chain, whose entries
  // hold the hash with the low bit marking the chain's end.
  if (!t.may_define(hash)) return;
  uint32_t i = t.buckets[hash % t.nbuckets];
  if (i == 0 || i < t.symoffset) return;
  for (; i < n; ++i) {
    uint32_t entry = t.chains[i - t.symoffset];
    if (((entry ^ hash) >> 1) == 0) defined_here(i);
    if (entry & 1) break;
  }
}

namespace {

// The identification of an open file (its first bytes only).
// `host_order`, when given, says whether the native reader can take the file (a known class, the
// host's byte order).
Result<ElfIdent> ident_of(int fd, const std::string& path, bool* host_order = nullptr) {
  unsigned char id[64] = {};
  ssize_t got = pread(fd, id, sizeof id, 0);
  if (got < 0) return InputError{path, std::string("cannot read: ") + std::strerror(errno)};
  if (got < EI_NIDENT || std::memcmp(id, ELFMAG, SELFMAG) != 0) return InputError{path, "not an ELF file"};
  if (got < 20) return InputError{path, "truncated ELF header"};
  ElfIdent ident;
  ident.is_64 = id[EI_CLASS] == ELFCLASS64;
  ident.big_endian = id[EI_DATA] == ELFDATA2MSB;
  ident.osabi = id[EI_OSABI];
  if (host_order) {
    const unsigned host_data = std::endian::native == std::endian::big ? ELFDATA2MSB : ELFDATA2LSB;
    *host_order = (id[EI_CLASS] == ELFCLASS32 || id[EI_CLASS] == ELFCLASS64) && id[EI_DATA] == host_data;
  }
  auto half = [&](int off) {
    return ident.big_endian ? static_cast<uint16_t>(id[off] << 8 | id[off + 1])
                            : static_cast<uint16_t>(id[off + 1] << 8 | id[off]);
  };
  ident.kind = kind_of(half(16));
  ident.machine = half(18);
  return ident;
}

}  // namespace

Result<ElfIdent> read_ident(const std::string& path) {
  auto map = open_mapping(path);
  if (!map) return map.error();
  return ident_of(map.value()->fd, path);
}

bool is_archive(const std::string& path) {
  auto map = open_mapping(path);
  if (!map) return false;
  char magic[SARMAG];
  return pread(map.value()->fd, magic, SARMAG, 0) == SARMAG && std::memcmp(magic, ARMAG, SARMAG) == 0;
}

void keep_mappings_until_exit() { native::keep_mapped.store(true); }

namespace {

// Reads an opened file whose identification was taken.
Result<ElfObject> read_opened(const std::shared_ptr<Mapping>& map, const std::string& path, const ElfIdent& ident,
                              bool host_order, const ReadOptions& options) {
  if (host_order) {
    struct stat st;
    if (fstat(map->fd, &st) != 0) return InputError{path, std::string("cannot open: ") + std::strerror(errno)};
    return native::read(map->fd, path, static_cast<size_t>(st.st_size), ident, options);
  }
  map->elf = elf_begin(map->fd, ELF_C_READ_MMAP, nullptr);
  if (!map->elf) return InputError{path, "cannot read ELF: " + elf_error()};
  // Everything is read through the mapping from here on: the descriptor is given back at once, so a
  // scan of thousands of libraries never runs out of them.
  if (elf_cntl(map->elf, ELF_C_FDDONE) == 0) {
    close(map->fd);
    map->fd = -1;
  }
  auto obj = read_elf(map->elf, path, options);
  if (!obj) return obj.error();
  obj->keep_alive = map;
  return obj;
}

}  // namespace

Result<ElfObject> read_object(const std::string& path, const ReadOptions& options) {
  auto map = open_mapping(path);
  if (!map) return map.error();
  bool host_order = false;
  auto ident = ident_of(map.value()->fd, path, &host_order);  // distinguishes "not ELF" from libelf's complaints
  if (!ident) return ident.error();
  return read_opened(map.value(), path, ident.value(), host_order, options);
}

Result<ProbedObject> probe_object(const std::string& path, const ReadOptions& options,
                                  const std::function<bool(const ElfIdent&)>& accept) {
  auto map = open_mapping(path);
  if (!map) return map.error();
  bool host_order = false;
  auto ident = ident_of(map.value()->fd, path, &host_order);
  if (!ident) return ident.error();
  ProbedObject probed{ident.value(), std::nullopt};
  if (!accept(probed.ident)) return probed;
  auto obj = read_opened(map.value(), path, ident.value(), host_order, options);
  if (!obj) return obj.error();
  probed.object = std::move(obj).value();
  return probed;
}

std::optional<InputError> read_symbols(ElfObject& object, const ReadOptions& options) {
  if (object.native) return native::read_tables(*static_cast<native::File*>(object.native), options, object);
  Elf* elf = static_cast<Elf*>(object.handle);
  if (!elf) return InputError{object.path, "internal: object has no open ELF handle"};
  auto sec = scan_sections(elf, object.path, object);
  if (!sec) return sec.error();
  return read_tables(elf, sec.value(), options, object);
}

Result<std::vector<ElfObject>> read_archive(const std::string& path) {
  auto map = open_mapping(path);
  if (!map) return map.error();
  auto& m = *map.value();
  m.archive = elf_begin(m.fd, ELF_C_READ_MMAP, nullptr);
  if (!m.archive || elf_kind(m.archive) != ELF_K_AR) return InputError{path, "not a static archive"};
  std::vector<ElfObject> members;
  Elf_Cmd cmd = ELF_C_READ_MMAP;
  std::shared_ptr<const void> keep = map.value();
  for (Elf* member = elf_begin(m.fd, cmd, m.archive); member; member = elf_begin(m.fd, cmd, m.archive)) {
    Elf_Arhdr* hdr = elf_getarhdr(member);
    std::string name = hdr && hdr->ar_name ? hdr->ar_name : "";
    if (elf_kind(member) == ELF_K_ELF) {
      auto obj = read_elf(member, path, ReadOptions{true, false});
      if (!obj) {
        elf_end(member);
        return InputError{path + "(" + name + ")", obj.error().message};
      }
      obj->archive_member = name;
      members.push_back(std::move(obj).value());
      // Members stay open (their string tables are referenced); the archive mapping keeps them alive.
      cmd = elf_next(member);
      auto holder = std::shared_ptr<void>(member, [keep](void* e) { elf_end(static_cast<Elf*>(e)); });
      members.back().keep_alive = holder;
    } else {
      cmd = elf_next(member);
      elf_end(member);
    }
  }
  return members;
}

}  // namespace mlc::elf
