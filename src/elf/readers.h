// The two ELF readers behind elf_object.h (internal to src/elf/): the native one for files in the
// host's byte order (native_reader.cpp), libelf for the other byte orders and for archive members
// (libelf_reader.cpp). Both hand their sections to the one decoder in tables.h.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_object.h"

namespace mlc::elf::detail {

// Reads exactly `len` bytes at `offset` (pread, retried on EINTR and short reads); false at EOF or on
// an error.
bool pread_all(int fd, void* buf, size_t len, uint64_t offset);
// Reads up to `len` bytes at `offset`, stopping only at EOF (retried on EINTR and short reads): the count
// read, -1 on an error (errno set).
ssize_t pread_up_to(int fd, void* buf, size_t len, uint64_t offset);

// An open file and its first bytes (Descriptor::head, possibly empty): a read inside them is a copy, any
// other a pread_all.
struct Source {
  int fd = -1;
  std::string_view head;
  bool read(void* buf, size_t len, uint64_t offset) const;  // pread_all's contract
};

// Reads a host-order file whose descriptor is open (and stays the caller's: nothing keeps it); `head`:
// the file's first bytes when the caller read them.
Result<ElfObject> read_native(int fd, std::string_view head, const std::string& path, size_t file_size,
                              const ElfIdent& ident, const ReadOptions& options);
// Completes an object read_native read with `symbols = false`.
std::optional<InputError> read_native_symbols(ElfObject& object, const ReadOptions& options);
// A section as string literals need it: name, type, flags and bytes (in place in the mapping).
struct RawSection {
  std::string_view name;
  uint32_t type = 0;
  uint64_t flags = 0;
  std::string_view bytes;
};
// The sections of an object read_native read (the section name table is read from the mapping).
std::vector<RawSection> native_sections(const ElfObject& object);
// Mappings of natively read files are kept until exit instead of unmapped with their last object.
void keep_native_mappings();
// Starts reading the pages of `bytes` (a range of a mapping read_native made) into the page cache and
// waits for none. Such a mapping reads a page per fault (MADV_RANDOM): a reader about to go through a
// range asks for it first, or meets one read per page on a cold page cache.
void will_need(std::string_view bytes);
// A range of such a mapping about to be read from start to end: read ahead of the faults as any sequential
// reader is (MADV_SEQUENTIAL), not a page per fault.
void read_in_order(std::string_view bytes);

// Reads a file through libelf; takes ownership of the descriptor (closed with the object, or at once
// when reading fails).
Result<ElfObject> read_with_libelf(int fd, const std::string& path, const ReadOptions& options);
// Completes an object read_with_libelf read with `symbols = false`.
std::optional<InputError> read_libelf_symbols(ElfObject& object, const ReadOptions& options);
// The sections of an object read_with_libelf read (or an archive member), through its handle.
std::vector<RawSection> libelf_sections(const ElfObject& object);
// Every ELF member of a static archive, with its .symtab; takes ownership of the descriptor.
Result<std::vector<ElfObject>> read_archive_members(int fd, const std::string& path);

}  // namespace mlc::elf::detail
