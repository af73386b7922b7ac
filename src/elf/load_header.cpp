// What glibc's loader reads of a file before it maps it, and what it refuses there (elf_object.h,
// read_load_header): dl-load.c open_verify (the ELF header), _dl_map_object_from_fd (the program
// headers) and sysdeps/x86/dl-prop.h (the GNU property note). The file is only read.
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <vector>

#include "elf/elf_object.h"
#include "elf/readers.h"
#include "elf/tables.h"

namespace mlc::elf {
namespace {

// glibc's sysdeps/gnu/ldsodefs.h: VALID_ELF_OSABI and VALID_ELF_ABIVERSION, with LIBC_ABI_MAX = 4 on
// x86-64 (libc-abis: UNIQUE, IFUNC, ABSOLUTE).
bool valid_osabi(unsigned osabi) { return osabi == ELFOSABI_SYSV || osabi == ELFOSABI_GNU; }
bool valid_abiversion(unsigned osabi, unsigned version) {
  return version == 0 || (osabi == ELFOSABI_GNU && version < 4);
}

// open_verify's checks of e_ident, in its order; "" when they pass. A file of the other class is
// skipped, not refused (the caller tests that first).
const char* ident_refusal(const unsigned char* id, bool big_endian) {
  if (std::memcmp(id, ELFMAG, SELFMAG) != 0) return "invalid ELF header";
  if (id[EI_DATA] != (big_endian ? ELFDATA2MSB : ELFDATA2LSB))
    return big_endian ? "ELF file data encoding not big-endian" : "ELF file data encoding not little-endian";
  if (id[EI_VERSION] != EV_CURRENT) return "ELF file version ident does not match current one";
  if (!valid_osabi(id[EI_OSABI])) return "ELF file OS ABI invalid";
  if (!valid_abiversion(id[EI_OSABI], id[EI_ABIVERSION])) return "ELF file ABI version invalid";
  for (int i = EI_PAD; i < EI_NIDENT; ++i)
    if (id[i] != 0) return "nonzero padding in e_ident";
  return "";
}

// The NT_GNU_PROPERTY_TYPE_0 note of a PT_GNU_PROPERTY (or PT_NOTE) segment: the properties glibc's
// _dl_process_property_note keeps (GNU_PROPERTY_1_NEEDED, GNU_PROPERTY_X86_ISA_1_NEEDED), read as it
// reads them: 8-byte aligned notes, properties in ascending order, 4-byte values.
void read_properties(const std::vector<char>& notes, LoadHeader& out) {
  constexpr uint32_t kNeeded1 = 0xb0008000;       // GNU_PROPERTY_1_NEEDED
  constexpr uint32_t kX86IsaNeeded = 0xc0008002;  // GNU_PROPERTY_X86_ISA_1_NEEDED
  size_t at = 0;
  while (at + 12 <= notes.size()) {
    uint32_t namesz, descsz, type;
    std::memcpy(&namesz, notes.data() + at, 4);
    std::memcpy(&descsz, notes.data() + at + 4, 4);
    std::memcpy(&type, notes.data() + at + 8, 4);
    // ELF_NOTE_DESC_OFFSET: the descriptor starts at the header and name rounded up to 8 bytes.
    const size_t name_at = at + 12, desc_at = at + ((12 + size_t{namesz} + 7) & ~size_t{7});
    if (desc_at > notes.size() || descsz > notes.size() - desc_at) return;
    if (namesz == 4 && type == NT_GNU_PROPERTY_TYPE_0 && std::memcmp(notes.data() + name_at, "GNU", 4) == 0) {
      uint32_t last = 0;
      for (size_t p = desc_at; p + 8 <= desc_at + descsz;) {
        uint32_t ptype, datasz;
        std::memcpy(&ptype, notes.data() + p, 4);
        std::memcpy(&datasz, notes.data() + p + 4, 4);
        if (ptype < last || p + 8 + datasz > desc_at + descsz) return;
        last = ptype;
        if ((ptype == kNeeded1 || ptype == kX86IsaNeeded) && datasz == 4) {
          uint32_t value;
          std::memcpy(&value, notes.data() + p + 8, 4);
          (ptype == kNeeded1 ? out.gnu_1_needed : out.x86_isa_1_needed) = value;
        }
        p += 8 + ((datasz + 7) & ~size_t{7});
      }
      return;  // glibc stops at the first GNU property note
    }
    at = (desc_at + descsz + 7) & ~size_t{7};
  }
}

// The program headers of a 64-bit little-endian file (the only class and byte order it accepts
// here): _dl_map_object_from_fd's PT_LOAD, PT_DYNAMIC and PT_TLS, and the property note.
void read_program_headers(const detail::Source& in, const Elf64_Ehdr& ehdr, LoadHeader& out) {
  std::vector<Elf64_Phdr> phdrs(ehdr.e_phnum);
  if (ehdr.e_phnum && !in.read(phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr), ehdr.e_phoff)) {
    out.open_refusal = "cannot read file data";
    return;
  }
  bool load = false, dynamic = false, empty_dynamic = false;
  const Elf64_Phdr* property = nullptr;
  for (const auto& ph : phdrs) {
    switch (ph.p_type) {
      case PT_LOAD: load = true; break;
      case PT_DYNAMIC: (ph.p_filesz == 0 ? empty_dynamic : dynamic) = true; break;
      case PT_TLS:
        if (ph.p_memsz == 0) break;
        out.tls_blocksize = ph.p_memsz;
        out.tls_align = ph.p_align;
        out.tls_firstbyte_offset = ph.p_align == 0 ? 0 : ph.p_vaddr & (ph.p_align - 1);
        break;
      case PT_GNU_PROPERTY: property = &ph; break;
      default: break;
    }
  }
  // _dl_map_object_from_fd, in its order.
  if (!load) {
    out.map_refusal = "object file has no loadable segments";
  } else if (ehdr.e_type != ET_DYN) {
    out.map_refusal = "cannot dynamically load executable";
    out.refused_unless_main = true;
  } else if (!dynamic || empty_dynamic) {
    out.map_refusal = "object file has no dynamic section";
  }
  if (property && property->p_align == 8 && property->p_filesz > 0 && property->p_filesz < (1u << 16)) {
    std::vector<char> notes(property->p_filesz);
    if (in.read(notes.data(), notes.size(), property->p_offset)) read_properties(notes, out);
  }
}

}  // namespace

namespace {

// dl-load.c open_verify and the program headers _dl_map_object_from_fd reads, from an open file (its first
// bytes read once, as open_verify reads them into its buffer, and kept in `file` for the reader after).
LoadHeader open_verify(Descriptor& file, const ProcessClass& want) {
  const bool want_64 = want.is_64;
  LoadHeader out;
  // open_verify: at least a whole ELF header must be read.
  const size_t header_size = want_64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  unsigned char buf[sizeof(Elf64_Ehdr)] = {};
  if (!file.read_head()) {
    out.verdict = LoadHeader::Verdict::Refused;
    out.open_refusal = std::string("cannot read file data: ") + std::strerror(errno);
    return out;
  }
  const size_t have = std::min(header_size, file.head.size());
  std::memcpy(buf, file.head.data(), have);
  if (have < header_size) {
    out.verdict = LoadHeader::Verdict::Refused;
    out.open_refusal = "file too short";
    return out;
  }
  out.verdict = LoadHeader::Verdict::Refused;
  // The class is tested before the byte order and the rest of e_ident: another class is skipped.
  if (std::memcmp(buf, ELFMAG, SELFMAG) == 0 && buf[EI_CLASS] != (want_64 ? ELFCLASS64 : ELFCLASS32)) {
    out.verdict = LoadHeader::Verdict::OtherClass;
    return out;
  }
  if (const char* refusal = ident_refusal(buf, want.big_endian); *refusal) {
    out.open_refusal = refusal;
    return out;
  }
  const bool host_order = want.big_endian == (std::endian::native == std::endian::big);
  if (!want_64 || !host_order) {  // another class or byte order than the tool's: the identification only
    auto half = [&](int off) {
      return want.big_endian ? static_cast<uint16_t>(buf[off] << 8 | buf[off + 1])
                             : static_cast<uint16_t>(buf[off + 1] << 8 | buf[off]);
    };
    out.kind = detail::kind_of(half(16));
    out.verdict = half(18) != want.machine ? LoadHeader::Verdict::OtherMachine : LoadHeader::Verdict::Accepted;
    return out;
  }
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, buf, sizeof ehdr);
  out.kind = detail::kind_of(ehdr.e_type);
  if (ehdr.e_version != EV_CURRENT) {
    out.open_refusal = "ELF file version does not match current one";
  } else if (ehdr.e_machine != want.machine) {
    out.verdict = LoadHeader::Verdict::OtherMachine;
  } else if (ehdr.e_type != ET_DYN && ehdr.e_type != ET_EXEC) {
    out.open_refusal = "only ET_DYN and ET_EXEC can be loaded";
  } else if (ehdr.e_phentsize != sizeof(Elf64_Phdr)) {
    out.open_refusal = "ELF file's phentsize not the expected size";
  } else {
    read_program_headers({.fd = file.fd, .head = file.head}, ehdr, out);
    if (out.open_refusal.empty()) out.verdict = LoadHeader::Verdict::Accepted;
  }
  return out;
}

}  // namespace

LoadHeader read_load_header(const std::string& path, const ProcessClass& want, Descriptor* opened) {
  Descriptor file(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.fd < 0) {
    LoadHeader out;
    out.errno_value = errno;
    return out;
  }
  LoadHeader out = open_verify(file, want);
  if (opened && out.verdict == LoadHeader::Verdict::Accepted) *opened = std::move(file);
  return out;
}

}  // namespace mlc::elf
