// libelf-backed reader. Every offset, count and link taken from the file is checked before use:
// a truncated or hostile file yields an InputError naming the file, never a crash or a hang.
#include "elf/elf_object.h"

#include <ar.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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
  size_t dynsym_index = 0;
  std::vector<Elf_Scn*> relocations;
};

Result<std::vector<Symbol>> read_symbols(Elf* elf, Elf_Scn* scn, const std::string& path) {
  GElf_Shdr shdr;
  if (!gelf_getshdr(scn, &shdr)) return InputError{path, "bad symbol table header: " + elf_error()};
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data) return InputError{path, "unreadable symbol table: " + elf_error()};
  size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (entsize == 0) return InputError{path, "bad symbol entry size"};
  size_t count = data->d_size / entsize;
  std::vector<Symbol> symbols;
  symbols.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym)) return InputError{path, "unreadable symbol: " + elf_error()};
    Symbol s;
    s.name = string_at(elf, shdr.sh_link, sym.st_name);
    s.value = sym.st_value;
    s.size = sym.st_size;
    s.shndx = sym.st_shndx;
    s.type = type_of(GELF_ST_TYPE(sym.st_info));
    s.binding = binding_of(GELF_ST_BIND(sym.st_info));
    s.visibility = visibility_of(sym.st_other);
    symbols.push_back(s);
  }
  return symbols;
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
// The memory representation from elf_getdata is already in host byte order.
template <typename Rel, bool kIs64>
void mark_relocated(Elf_Data* data, std::vector<Symbol>& symbols) {
  const auto* rel = static_cast<const Rel*>(data->d_buf);
  size_t count = data->d_size / sizeof(Rel);
  for (size_t i = 0; i < count; ++i) {
    uint64_t sym = kIs64 ? (static_cast<uint64_t>(rel[i].r_info) >> 32) : (static_cast<uint64_t>(rel[i].r_info) >> 8);
    if (sym != 0 && sym < symbols.size()) symbols[sym].relocated = true;
  }
}

bool read_relocations(const std::vector<Elf_Scn*>& scns, bool is_64, std::vector<Symbol>& symbols) {
  for (Elf_Scn* scn : scns) {
    GElf_Shdr shdr;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!gelf_getshdr(scn, &shdr) || !data || (!data->d_buf && data->d_size)) return false;
    if (data->d_size == 0) continue;
    if (shdr.sh_type == SHT_RELA) {
      is_64 ? mark_relocated<Elf64_Rela, true>(data, symbols) : mark_relocated<Elf32_Rela, false>(data, symbols);
    } else {
      is_64 ? mark_relocated<Elf64_Rel, true>(data, symbols) : mark_relocated<Elf32_Rel, false>(data, symbols);
    }
  }
  return true;
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
      auto str = [&] { return std::string(string_at(elf, shdr.sh_link, dyn.d_un.d_val)); };
      switch (dyn.d_tag) {
        case DT_NEEDED: obj.needed.push_back(str()); break;
        case DT_SONAME: obj.soname = str(); break;
        case DT_RPATH: obj.rpath = str(); break;
        case DT_RUNPATH: obj.runpath = str(); break;
        case DT_FLAGS: obj.dt_flags = dyn.d_un.d_val; break;
        case DT_FLAGS_1: obj.dt_flags_1 = dyn.d_un.d_val; break;
        default: break;
      }
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
      case SHT_RELA:
      case SHT_REL: sec.relocations.push_back(scn); break;
      default: break;
    }
  }

  return sec;
}

std::optional<InputError> read_tables(Elf* elf, const Sections& sec, const ReadOptions& options, ElfObject& obj) {
  const std::string& path = obj.path;
  if (sec.dynsym) {
    auto syms = read_symbols(elf, sec.dynsym, path);
    if (!syms) return syms.error();
    obj.dynamic_symbols = std::move(syms).value();
    if (sec.versym) {
      read_versym(sec.versym, obj.dynamic_symbols);
      obj.has_versym = true;
    }
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
    if (options.relocations) {
      std::vector<Elf_Scn*> dynamic_relocs;
      for (Elf_Scn* scn : sec.relocations) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && shdr.sh_link == sec.dynsym_index && (shdr.sh_flags & SHF_ALLOC)) {
          dynamic_relocs.push_back(scn);
        }
      }
      obj.has_relocation_info = !dynamic_relocs.empty() &&
                                read_relocations(dynamic_relocs, obj.is_64, obj.dynamic_symbols);
    }
  }
  if (options.static_symbols && sec.symtab) {
    auto syms = read_symbols(elf, sec.symtab, path);
    if (!syms) return syms.error();
    obj.static_symbols = std::move(syms).value();
  }
  return std::nullopt;
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

Result<ElfIdent> read_ident(const std::string& path) {
  auto map = open_mapping(path);
  if (!map) return map.error();
  unsigned char id[64] = {};
  ssize_t got = pread(map.value()->fd, id, sizeof id, 0);
  if (got < 0) return InputError{path, std::string("cannot read: ") + std::strerror(errno)};
  if (got < EI_NIDENT || std::memcmp(id, ELFMAG, SELFMAG) != 0) return InputError{path, "not an ELF file"};
  if (got < 20) return InputError{path, "truncated ELF header"};
  ElfIdent ident;
  ident.is_64 = id[EI_CLASS] == ELFCLASS64;
  ident.big_endian = id[EI_DATA] == ELFDATA2MSB;
  ident.osabi = id[EI_OSABI];
  auto half = [&](int off) {
    return ident.big_endian ? static_cast<uint16_t>(id[off] << 8 | id[off + 1])
                            : static_cast<uint16_t>(id[off + 1] << 8 | id[off]);
  };
  ident.kind = kind_of(half(16));
  ident.machine = half(18);
  return ident;
}

bool is_archive(const std::string& path) {
  auto map = open_mapping(path);
  if (!map) return false;
  char magic[SARMAG];
  return pread(map.value()->fd, magic, SARMAG, 0) == SARMAG && std::memcmp(magic, ARMAG, SARMAG) == 0;
}

Result<ElfObject> read_object(const std::string& path, const ReadOptions& options) {
  auto ident = read_ident(path);  // distinguishes "not ELF" from libelf's generic complaints
  if (!ident) return ident.error();
  auto map = open_mapping(path);
  if (!map) return map.error();
  map.value()->elf = elf_begin(map.value()->fd, ELF_C_READ_MMAP, nullptr);
  if (!map.value()->elf) return InputError{path, "cannot read ELF: " + elf_error()};
  auto obj = read_elf(map.value()->elf, path, options);
  if (!obj) return obj.error();
  obj->keep_alive = std::move(map).value();
  return obj;
}

std::optional<InputError> read_symbols(ElfObject& object, const ReadOptions& options) {
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
