// The libelf reader: files in the other byte order (s390x, ppc64 on x86-64) and the members of static
// archives. libelf translates each section's data to host order (elf_getdata), which is what the one
// table decoder (tables.h) takes; this file only finds the sections and checks their bounds.
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <memory>
#include <mutex>

#include "elf/readers.h"
#include "elf/tables.h"

namespace mlc::elf::detail {
namespace {

void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

std::string elf_error() {
  const char* msg = elf_errmsg(-1);
  return msg ? msg : "unknown libelf error";
}

// Owns the descriptor and the libelf handles; string_views into the mapping stay valid while it lives.
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

// The bytes of a section ("" when unreadable).
std::string_view section_bytes(Elf_Scn* scn) {
  Elf_Data* data = scn ? elf_getdata(scn, nullptr) : nullptr;
  if (!data || !data->d_buf) return {};
  return {static_cast<const char*>(data->d_buf), data->d_size};
}

// A string table's bytes, as elf_strptr accepts one (SHT_STRTAB only): names are cut at their NUL.
std::string_view string_table(Elf* elf, size_t index) {
  Elf_Scn* scn = elf_getscn(elf, index);
  GElf_Shdr shdr;
  if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_STRTAB) return {};
  return section_bytes(scn);
}

// The bytes of a table read in place as Elf32_Sym/Elf64_Sym (libelf's copies are aligned; a
// hostile file may still defeat that, and then the table is refused).
Result<SymbolTableBytes> symbol_table(Elf* elf, Elf_Scn* scn, bool is_64, const std::string& path) {
  GElf_Shdr shdr;
  if (!gelf_getshdr(scn, &shdr)) return InputError{path, "bad symbol table header: " + elf_error()};
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data || (!data->d_buf && data->d_size)) return InputError{path, "unreadable symbol table: " + elf_error()};
  if (data->d_size && reinterpret_cast<uintptr_t>(data->d_buf) % (is_64 ? alignof(Elf64_Sym) : alignof(Elf32_Sym))) {
    return InputError{path, "misaligned symbol table"};
  }
  Elf_Data* strings = elf_getdata(elf_getscn(elf, shdr.sh_link), nullptr);
  std::string_view str = strings && strings->d_buf
                             ? std::string_view(static_cast<const char*>(strings->d_buf), strings->d_size)
                             : std::string_view();
  return SymbolTableBytes{.entries = data->d_buf, .size = data->d_size, .strings = str};
}

// A version table's bytes and its string table; an error when libelf cannot give them.
Result<std::pair<std::string_view, std::string_view>> version_table(Elf* elf, Elf_Scn* scn, const char* name,
                                                                    const std::string& path) {
  GElf_Shdr shdr;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!gelf_getshdr(scn, &shdr) || !data)
    return InputError{path, std::string("unreadable ") + name + ": " + elf_error()};
  std::string_view bytes =
      data->d_buf ? std::string_view(static_cast<const char*>(data->d_buf), data->d_size) : std::string_view();
  return std::pair{bytes, string_table(elf, shdr.sh_link)};
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
        return InputError{path, "section " + std::to_string(elf_ndxscn(scn)) +
                                    " extends past the end of the file (truncated or corrupt ELF)"};
      }
    }
    if (shdr.sh_link >= shnum && shdr.sh_type != SHT_NULL &&
        (shdr.sh_type == SHT_DYNSYM || shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNAMIC)) {
      return InputError{path, "section " + std::to_string(elf_ndxscn(scn)) + " links to a section that does not exist"};
    }
    switch (shdr.sh_type) {
      case SHT_DYNSYM:
        sec.dynsym = scn;
        sec.dynsym_index = elf_ndxscn(scn);
        break;
      case SHT_SYMTAB:
        sec.symtab = scn;
        obj.has_static_symtab = true;
        break;
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

// The sections' bytes for the decoder, as far as `options` needs them.
Result<TableBytes> table_bytes(Elf* elf, const Sections& sec, const ReadOptions& options, const ElfObject& obj) {
  TableBytes b;
  if (sec.dynsym) {
    auto dynsym = symbol_table(elf, sec.dynsym, obj.is_64, obj.path);
    if (!dynsym) return dynsym.error();
    b.has_dynsym = true;
    b.dynsym = dynsym.value();
    b.has_versym = sec.versym != nullptr;
    b.versym = section_bytes(sec.versym);
    if (sec.gnu_hash && sec.gnu_hash_link == sec.dynsym_index) b.gnu_hash = section_bytes(sec.gnu_hash);
    if (sec.verdef && !obj.tables_read) {
      auto t = version_table(elf, sec.verdef, ".gnu.version_d", obj.path);
      if (!t) return t.error();
      b.has_verdef = true;
      std::tie(b.verdef, b.verdef_strings.all) = t.value();
    }
    if (sec.verneed && !obj.tables_read) {
      auto t = version_table(elf, sec.verneed, ".gnu.version_r", obj.path);
      if (!t) return t.error();
      b.has_verneed = true;
      std::tie(b.verneed, b.verneed_strings.all) = t.value();
    }
  }
  if (sec.dynsym && options.relocations) {
    for (Elf_Scn* scn : sec.relocations) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr) || shdr.sh_link != sec.dynsym_index || !(shdr.sh_flags & SHF_ALLOC)) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!data || (!data->d_buf && data->d_size)) b.relocations_readable = false;
      std::string_view bytes = data && data->d_buf
                                   ? std::string_view(static_cast<const char*>(data->d_buf), data->d_size)
                                   : std::string_view();
      b.relocations.push_back({.bytes = bytes, .rela = shdr.sh_type == SHT_RELA, .addr = shdr.sh_addr});
    }
  }
  if (options.static_symbols && sec.symtab) {
    auto symtab = symbol_table(elf, sec.symtab, obj.is_64, obj.path);
    if (!symtab) return symtab.error();
    b.has_symtab = true;
    b.symtab = symtab.value();
  }
  return b;
}

std::optional<InputError> read_tables(Elf* elf, const ReadOptions& options, ElfObject& obj) {
  auto sec = scan_sections(elf, obj.path, obj);
  if (!sec) return sec.error();
  auto bytes = table_bytes(elf, sec.value(), options, obj);
  if (!bytes) return bytes.error();
  return decode_tables(bytes.value(), options, obj);
}

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
    if (!gelf_getshdr(sec.dynamic, &shdr) || !data)
      return InputError{path, "unreadable dynamic section: " + elf_error()};
    std::string_view strings = string_table(elf, shdr.sh_link);
    size_t entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
    size_t count = entsize ? data->d_size / entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) break;
      if (dyn.d_tag == DT_NULL) break;
      note_dynamic(obj, dyn.d_tag, dyn.d_un.d_val, [&] { return name_in(strings, dyn.d_un.d_val); });
    }
    // glibc (get-dynamic-info.h): when both are present, DT_RPATH is ignored.
    if (obj.runpath) obj.rpath.reset();
  }
  if (options.symbols) {
    auto bytes = table_bytes(elf, sec, options, obj);
    if (!bytes) return bytes.error();
    if (auto err = decode_tables(bytes.value(), options, obj)) return *err;
  }
  obj.handle = elf;
  return obj;
}

}  // namespace

Result<ElfObject> read_with_libelf(int fd, const std::string& path, const ReadOptions& options) {
  init_libelf();
  auto map = std::make_shared<Mapping>();
  map->fd = fd;
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

std::vector<RawSection> libelf_sections(const ElfObject& object) {
  std::vector<RawSection> out;
  Elf* elf = static_cast<Elf*>(object.handle);
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return out;
  size_t file_size = 0;
  elf_rawfile(elf, &file_size);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    RawSection section{.name = name ? std::string_view(name) : std::string_view(),
                       .type = shdr.sh_type,
                       .flags = shdr.sh_flags,
                       .bytes = {}};
    // Bytes only for a section that lies within the file (libelf would otherwise read past it).
    bool inside = shdr.sh_type != SHT_NOBITS && shdr.sh_offset + shdr.sh_size >= shdr.sh_offset &&
                  shdr.sh_offset + shdr.sh_size <= file_size;
    if (inside) {
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data && data->d_buf) section.bytes = {static_cast<const char*>(data->d_buf), data->d_size};
    }
    out.push_back(section);
  }
  return out;
}

std::optional<InputError> read_libelf_symbols(ElfObject& object, const ReadOptions& options) {
  Elf* elf = static_cast<Elf*>(object.handle);
  if (!elf) return InputError{object.path, "internal: object has no open ELF handle"};
  return read_tables(elf, options, object);
}

Result<std::vector<ElfObject>> read_archive_members(int fd, const std::string& path) {
  init_libelf();
  auto map = std::make_shared<Mapping>();
  map->fd = fd;
  map->archive = elf_begin(map->fd, ELF_C_READ_MMAP, nullptr);
  if (!map->archive || elf_kind(map->archive) != ELF_K_AR) return InputError{path, "not a static archive"};
  std::vector<ElfObject> members;
  Elf_Cmd cmd = ELF_C_READ_MMAP;
  std::shared_ptr<const void> keep = map;
  for (Elf* member = elf_begin(map->fd, cmd, map->archive); member; member = elf_begin(map->fd, cmd, map->archive)) {
    Elf_Arhdr* hdr = elf_getarhdr(member);
    std::string name = hdr && hdr->ar_name ? hdr->ar_name : "";
    if (elf_kind(member) == ELF_K_ELF) {
      auto obj = read_elf(member, path, ReadOptions{.static_symbols = true, .relocations = false});
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

}  // namespace mlc::elf::detail
