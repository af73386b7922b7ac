// String literals of an ELF object (what a dlopen("libx.so.4") or dlsym(h, "xInit") call passes):
// the NUL-terminated printable runs of its read-only data sections. Read through libelf, so any
// byte order works; a malformed file is an error value, never a crash.
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "elf/elf_object.h"

namespace mlc::elf {

Result<std::vector<std::string>> read_string_literals(const std::string& path, size_t min_length,
                                                      const std::function<bool(std::string_view)>& keep) {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InputError{path, std::string("cannot open: ") + std::strerror(errno)};
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  auto done = [&] {
    if (elf) elf_end(elf);
    close(fd);
  };
  size_t shstrndx = 0;
  if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0) {
    done();
    return InputError{path, "not a readable ELF file"};
  }
  size_t file_size = 0;
  elf_rawfile(elf, &file_size);
  std::vector<std::string> out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS || (shdr.sh_flags & SHF_WRITE) ||
        (shdr.sh_flags & SHF_EXECINSTR) || !(shdr.sh_flags & SHF_ALLOC))
      continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    // .rodata and its split parts (.rodata.str1.1 in relocatable objects); not .eh_frame and the like.
    if (!name || std::strncmp(name, ".rodata", 7) != 0) continue;
    if (shdr.sh_offset + shdr.sh_size < shdr.sh_offset || shdr.sh_offset + shdr.sh_size > file_size) continue;
    Elf_Data* data = elf_rawdata(scn, nullptr);
    if (!data || !data->d_buf) continue;
    // From each NUL (found with memchr) back over the printable bytes before it: a literal ends at its
    // NUL, and a run cut by any other byte begins after that byte (what precedes is data).
    const char* bytes = static_cast<const char*>(data->d_buf);
    const char* end = bytes + data->d_size;
    for (const char* from = bytes; from < end;) {
      const auto* nul = static_cast<const char*>(std::memchr(from, 0, static_cast<size_t>(end - from)));
      if (!nul) break;
      const char* begin = nul;
      while (begin > from && static_cast<unsigned char>(begin[-1]) >= 0x20 && static_cast<unsigned char>(begin[-1]) < 0x7f)
        --begin;
      if (static_cast<size_t>(nul - begin) >= min_length) {
        std::string_view literal(begin, static_cast<size_t>(nul - begin));
        if (!keep || keep(literal)) out.emplace_back(literal);
      }
      from = nul + 1;
    }
  }
  done();
  return out;
}

}  // namespace mlc::elf
