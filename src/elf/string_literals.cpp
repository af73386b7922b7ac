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
    const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
    size_t start = 0;
    for (size_t i = 0; i < data->d_size; ++i) {
      unsigned char c = bytes[i];
      if (c >= 0x20 && c < 0x7f) continue;
      // A literal ends at its NUL; a run cut by any other byte is data, not a C string.
      if (c == 0 && i - start >= min_length) {
        std::string_view literal(reinterpret_cast<const char*>(bytes) + start, i - start);
        if (!keep || keep(literal)) out.emplace_back(literal);
      }
      start = i + 1;
    }
  }
  done();
  return out;
}

}  // namespace mlc::elf
