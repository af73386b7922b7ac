// The public face of src/elf/: opens a file, identifies it, and hands it to the reader that takes it
// (native_reader.cpp for the host's byte order, libelf_reader.cpp for the others and for archive
// members); the ElfObject look-ups ld.so's binding goes through. Only this folder includes libelf.
#include "elf/elf_object.h"

#include <ar.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/paths.h"
#include "elf/readers.h"
#include "elf/tables.h"

namespace mlc::elf {
namespace {

Result<std::unique_ptr<Descriptor>> open_file(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return InputError{path, std::string("cannot open: ") + std::strerror(errno)};
  if (S_ISDIR(st.st_mode)) return InputError{path, "is a directory"};
  if (!S_ISREG(st.st_mode)) return InputError{path, "not a regular file"};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InputError{path, std::string("cannot open: ") + std::strerror(errno)};
  return std::make_unique<Descriptor>(fd);
}

}  // namespace

Descriptor::~Descriptor() {
  if (fd >= 0) close(fd);
}

Descriptor& Descriptor::operator=(Descriptor&& other) noexcept {
  if (this != &other) {
    if (fd >= 0) close(fd);
    fd = other.release();
    head = std::move(other.head);
  }
  return *this;
}

bool Descriptor::read_head() {
  if (!head.empty()) return true;
  head.resize(kHeadBytes);
  const ssize_t got = detail::pread_up_to(fd, head.data(), kHeadBytes, 0);
  head.resize(got < 0 ? 0 : static_cast<size_t>(got));
  return got >= 0;
}

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
  return detail::name_in(dynamic_strings, s.name_offset);
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
  return detail::decode_dynamic_symbol(*this, i);
}

std::vector<uint32_t> ElfObject::undefined_dynamic_symbols() const {
  std::vector<uint32_t> out;
  if (!dynamic_symbols.empty()) {
    for (size_t i = 1; i < dynamic_symbols.size(); ++i)
      if (dynamic_symbols[i].is_undefined()) out.push_back(static_cast<uint32_t>(i));
    return out;
  }
  auto scan = [&](const auto* raw) {
    for (size_t i = 1; i < dynsym_count; ++i)
      if (raw[i].st_shndx == SHN_UNDEF) out.push_back(static_cast<uint32_t>(i));
  };
  if (!dynsym_data) return out;
  if (is_64) scan(static_cast<const Elf64_Sym*>(dynsym_data));
  else scan(static_cast<const Elf32_Sym*>(dynsym_data));
  return out;
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
    if (shndx == kShnUndef || st_name >= dynamic_strings.size() || dynamic_strings.size() - st_name <= name.size()) {
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

// The identification of an open file (its first bytes only, read into file.head when they were not).
// `host_order`, when given, says whether the native reader can take the file (a known class, the
// host's byte order).
Result<ElfIdent> ident_of(Descriptor& file, const std::string& path, bool* host_order = nullptr) {
  if (!file.read_head()) return InputError{path, std::string("cannot read: ") + std::strerror(errno)};
  unsigned char id[64] = {};
  const size_t got = std::min(sizeof id, file.head.size());
  std::memcpy(id, file.head.data(), got);
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
  ident.kind = detail::kind_of(half(16));
  ident.machine = half(18);
  return ident;
}

}  // namespace

Result<ElfIdent> read_ident(const std::string& path) {
  auto file = open_file(path);
  if (!file) return file.error();
  return ident_of(*file.value(), path);
}

bool is_archive(const std::string& path) {
  auto file = open_file(path);
  if (!file) return false;
  char magic[SARMAG];
  return pread(file.value()->fd, magic, SARMAG, 0) == SARMAG && std::memcmp(magic, ARMAG, SARMAG) == 0;
}

void keep_mappings_until_exit() { detail::keep_native_mappings(); }

namespace {

// Reads an opened file whose identification was taken.
Result<ElfObject> read_opened(Descriptor& file, const std::string& path, const ElfIdent& ident, bool host_order,
                              const ReadOptions& options) {
  if (host_order) {
    struct stat st;
    if (fstat(file.fd, &st) != 0) return InputError{path, std::string("cannot open: ") + std::strerror(errno)};
    auto obj = detail::read_native(file.fd, file.head, path, static_cast<size_t>(st.st_size), ident, options);
    if (obj) {
      obj->identity = stat_identity(st);
      obj->changed_at = changed_at(st);
    }
    return obj;
  }
  return detail::read_with_libelf(file.release(), path, options);
}

}  // namespace

Result<ElfObject> read_object(const std::string& path, const ReadOptions& options) {
  auto file = open_file(path);
  if (!file) return file.error();
  bool host_order = false;
  auto ident = ident_of(*file.value(), path, &host_order);  // distinguishes "not ELF" from libelf's complaints
  if (!ident) return ident.error();
  return read_opened(*file.value(), path, ident.value(), host_order, options);
}

Result<ElfObject> read_object(Descriptor& file, const std::string& path, const ReadOptions& options) {
  bool host_order = false;
  auto ident = ident_of(file, path, &host_order);
  if (!ident) return ident.error();
  return read_opened(file, path, ident.value(), host_order, options);
}

std::optional<InputError> read_symbols(ElfObject& object, const ReadOptions& options) {
  if (object.native) return detail::read_native_symbols(object, options);
  return detail::read_libelf_symbols(object, options);
}

Result<std::vector<ElfObject>> read_archive(const std::string& path) {
  auto file = open_file(path);
  if (!file) return file.error();
  return detail::read_archive_members(file.value()->release(), path);
}

}  // namespace mlc::elf
