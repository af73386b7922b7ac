// The native reader: files in the host's byte order, read without libelf. The file is mapped
// read-only and its tables are used in place; the section header table and the dynamic section
// (which sit far from the symbol tables) are read with pread, so that the only pages of the mapping
// ever touched are those the look-ups need (ld.so touches the same ones).
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "elf/readers.h"
#include "elf/resident.h"
#include "elf/tables.h"

namespace mlc::elf::detail {
namespace {

std::atomic<bool> keep_mapped{false};  // keep_native_mappings()

struct Section {
  uint32_t name = 0;  // sh_name: its offset in the section name table
  uint32_t type = 0;
  uint32_t link = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
};

struct File {
  const char* base = nullptr;  // the mapping of the whole file
  size_t size = 0;
  std::vector<Section> sections;
  size_t dynsym = 0, symtab = 0, dynamic = 0, versym = 0, verdef = 0, verneed = 0, gnu_hash = 0;  // 0: none
  size_t shstrndx = 0;  // the section name table (0: none)
  std::vector<size_t> relocations;
  std::vector<std::unique_ptr<uint64_t[]>> copies;  // aligned copies of misaligned tables
  // Read with pread while the file was open (read_copies), so that reading an object's headers and version
  // tables touches no page of the mapping: a part of the dynamic string table (the names .dynamic and the
  // version tables give, which sit together), the version tables, and .gnu.hash's first four words.
  std::string dynstr_window;
  uint64_t dynstr_window_at = 0;
  std::optional<std::string> verdef_copy, verneed_copy;
  std::optional<std::array<uint32_t, 4>> gnu_hash_head;
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
  SymbolTableBytes symbol_table(size_t index, bool is_64) {
    std::string_view b = bytes(index);
    return {.entries = aligned(b, is_64 ? alignof(Elf64_Sym) : alignof(Elf32_Sym)),
            .size = b.size(),
            .strings = bytes(sections[index].link)};
  }
};

template <typename Ehdr, typename Shdr>
std::optional<InputError> read_headers(const Source& in, const std::string& path, File& f, ElfObject& obj) {
  Ehdr ehdr;
  if (f.size < sizeof ehdr || !in.read(&ehdr, sizeof ehdr, 0)) return InputError{path, "truncated ELF header"};
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
    if (ehdr.e_shoff + sizeof first > f.size || !in.read(&first, sizeof first, ehdr.e_shoff)) {
      return InputError{path, "malformed section header table: truncated"};
    }
    shnum = first.sh_size;
    if (shnum > (f.size - ehdr.e_shoff) / sizeof(Shdr)) {
      return InputError{path, "malformed section header table: more sections than the file holds"};
    }
  }
  std::vector<Shdr> raw(shnum);
  if (shnum && !in.read(raw.data(), shnum * sizeof(Shdr), ehdr.e_shoff)) {
    return InputError{path, "malformed section header table: unreadable"};
  }
  f.shstrndx = ehdr.e_shstrndx == SHN_XINDEX ? (shnum ? raw[0].sh_link : 0) : ehdr.e_shstrndx;
  if (f.shstrndx >= shnum) f.shstrndx = 0;
  f.sections.resize(shnum);
  for (size_t i = 0; i < shnum; ++i) {
    f.sections[i] = {raw[i].sh_name, raw[i].sh_type,   raw[i].sh_link, raw[i].sh_flags,
                     raw[i].sh_addr, raw[i].sh_offset, raw[i].sh_size};
  }
  for (size_t i = 1; i < shnum; ++i) {
    const Section& s = f.sections[i];
    if (s.type != SHT_NOBITS && s.size > 0 && s.type != SHT_NULL) {
      uint64_t end = s.offset + s.size;
      if (end < s.offset || end > f.size) {
        return InputError{
            path, "section " + std::to_string(i) + " extends past the end of the file (truncated or corrupt ELF)"};
      }
    }
    if (s.link >= shnum && (s.type == SHT_DYNSYM || s.type == SHT_SYMTAB || s.type == SHT_DYNAMIC)) {
      return InputError{path, "section " + std::to_string(i) + " links to a section that does not exist"};
    }
    switch (s.type) {
      case SHT_DYNSYM: f.dynsym = i; break;
      case SHT_SYMTAB:
        f.symtab = i;
        obj.has_static_symtab = true;
        break;
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

constexpr uint64_t kWindowMargin = 1024, kWindowMax = 1u << 20;

// The version tables and .gnu.hash's header, copied out with pread (File's comment says why). A table too
// large or unreadable is left to the mapping.
void read_copies(const Source& in, File& f) {
  const auto copy = [&](size_t index, std::optional<std::string>& out) {
    if (index == 0 || f.sections[index].type == SHT_NOBITS || f.sections[index].size > kWindowMax) return;
    std::string bytes(f.sections[index].size, '\0');
    if (bytes.empty() || in.read(bytes.data(), bytes.size(), f.sections[index].offset)) out = std::move(bytes);
  };
  copy(f.verdef, f.verdef_copy);
  copy(f.verneed, f.verneed_copy);
  std::array<uint32_t, 4> head;
  if (f.gnu_hash && f.sections[f.gnu_hash].type != SHT_NOBITS && f.sections[f.gnu_hash].size >= sizeof head &&
      in.read(head.data(), sizeof head, f.sections[f.gnu_hash].offset))
    f.gnu_hash_head = head;
}

template <typename Dyn>
std::optional<InputError> read_dynamic(const Source& in, const std::string& path, File& f, ElfObject& obj) {
  const Section& s = f.sections[f.dynamic];
  if (s.type == SHT_NOBITS || s.size == 0) return std::nullopt;
  std::vector<Dyn> entries(s.size / sizeof(Dyn));
  if (!entries.empty() && !in.read(entries.data(), entries.size() * sizeof(Dyn), s.offset)) {
    return InputError{path, "unreadable dynamic section"};
  }
  std::string_view strings = f.strtab(s.link);
  // The strings the entries name (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH) are read with one pread of the
  // span they lie in, not through the mapping: a first touch of a mapped page costs more than the copy (the
  // mapping's pages are touched only by what looks symbols up), and a loader reads hundreds of files.
  uint64_t low = UINT64_MAX, high = 0;
  for (const Dyn& dyn : entries) {
    if (dyn.d_tag == DT_NULL) break;
    if (is_string_tag(dyn.d_tag) && dyn.d_un.d_val < strings.size()) {
      low = std::min<uint64_t>(low, dyn.d_un.d_val);
      high = std::max<uint64_t>(high, dyn.d_un.d_val);
    }
  }
  // The window: those names and 1 KiB either side, where linkers put the version names too.
  if (low <= high) {
    const uint64_t from = low > kWindowMargin ? low - kWindowMargin : 0;
    const uint64_t end = std::min<uint64_t>(strings.size(), high + kWindowMargin);
    f.dynstr_window.resize(end - from);
    f.dynstr_window_at = from;
    if (end - from > kWindowMax ||
        !in.read(f.dynstr_window.data(), f.dynstr_window.size(), f.sections[s.link].offset + from))
      f.dynstr_window.clear();
  }
  const StringsView names{.all = strings, .window = f.dynstr_window, .window_at = f.dynstr_window_at};
  for (const Dyn& dyn : entries) {
    if (dyn.d_tag == DT_NULL) break;
    note_dynamic(obj, dyn.d_tag, dyn.d_un.d_val, [&] { return names.at(dyn.d_un.d_val); });
  }
  if (obj.runpath) obj.rpath.reset();  // glibc (get-dynamic-info.h): DT_RUNPATH wins
  return std::nullopt;
}

uintptr_t page_size() {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Whether the page of the mapping at `at` is in the page cache.
bool cached(const char* at) {
  unsigned char in = 0;
  void* page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(at) & ~(page_size() - 1));
  return mincore(page, page_size(), &in) == 0 && (in & 1);
}

// Whether the last page of .dynsym's string table (else of .dynsym) is cached: the tables sit at the start of
// the file, whose first pages reading the ELF header just brought in (16 KiB and more of read-ahead), so the
// first page of .dynsym says nothing; the end of its strings is past them in any library whose tables matter.
bool tables_cached(const File& f) {
  std::string_view probe = f.strtab(f.sections[f.dynsym].link);
  if (probe.empty()) probe = f.bytes(f.dynsym);
  return probe.empty() || cached(probe.data() + probe.size() - 1);
}

// madvise(2) over the pages of `bytes`.
void advise(std::string_view bytes, int advice) {
  if (bytes.empty()) return;
  const uintptr_t from = reinterpret_cast<uintptr_t>(bytes.data()) & ~(page_size() - 1);
  madvise(reinterpret_cast<void*>(from), reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size() - from, advice);
}

// MADV_WILLNEED: the kernel starts reading the pages and the call returns.
void ask(std::string_view bytes) { advise(bytes, MADV_WILLNEED); }

// The tables every reader of an object looks up: .dynsym and its strings, the version tables, .gnu.hash.
void ask_tables(const File& f) {
  ask(f.bytes(f.dynsym));
  ask(f.strtab(f.sections[f.dynsym].link));
  for (size_t index : {f.versym, f.gnu_hash, f.verdef, f.verneed}) ask(f.bytes(index));
}

// The sections' bytes for the decoder, in place in the mapping.
TableBytes table_bytes(File& f, const ReadOptions& options, const ElfObject& obj) {
  TableBytes b;
  if (f.dynsym) {
    b.has_dynsym = true;
    b.dynsym = f.symbol_table(f.dynsym, obj.is_64);
    b.has_versym = f.versym != 0;
    b.versym = f.bytes(f.versym);
    if (f.gnu_hash && f.sections[f.gnu_hash].link == f.dynsym) {
      b.gnu_hash = f.bytes(f.gnu_hash);
      if (f.gnu_hash_head) b.gnu_hash_head = f.gnu_hash_head->data();
    }
    // The version tables' strings: the window applies when they name the string table .dynamic does.
    const size_t dynstr = f.dynamic ? f.sections[f.dynamic].link : 0;
    const auto strings_of = [&](size_t table) {
      const size_t link = f.sections[table].link;
      StringsView v;
      v.all = f.strtab(link);
      if (link == dynstr && !v.all.empty()) {
        v.window = f.dynstr_window;
        v.window_at = f.dynstr_window_at;
      }
      return v;
    };
    b.has_verdef = f.verdef != 0;
    if (b.has_verdef) {
      b.verdef = f.verdef_copy ? std::string_view(*f.verdef_copy) : f.bytes(f.verdef);
      b.verdef_strings = strings_of(f.verdef);
    }
    b.has_verneed = f.verneed != 0;
    if (b.has_verneed) {
      b.verneed = f.verneed_copy ? std::string_view(*f.verneed_copy) : f.bytes(f.verneed);
      b.verneed_strings = strings_of(f.verneed);
    }
  }
  if (f.dynsym && options.relocations) {
    for (size_t index : f.relocations) {
      const Section& s = f.sections[index];
      if (s.link != f.dynsym || !(s.flags & SHF_ALLOC)) continue;
      b.relocations.push_back({.bytes = f.bytes(index), .rela = s.type == SHT_RELA, .addr = s.addr});
      will_need(named_entries(b.relocations.back(), obj));
    }
  }
  if (options.static_symbols && f.symtab) {
    b.has_symtab = true;
    b.symtab = f.symbol_table(f.symtab, obj.is_64);
    will_need(f.bytes(f.symtab));
    will_need(b.symtab.strings);
  }
  return b;
}

}  // namespace

ssize_t pread_up_to(int fd, void* buf, size_t len, uint64_t offset) {
  char* out = static_cast<char*>(buf);
  size_t done = 0;
  while (done < len) {
    ssize_t got = pread(fd, out + done, len - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

bool pread_all(int fd, void* buf, size_t len, uint64_t offset) {
  return pread_up_to(fd, buf, len, offset) == static_cast<ssize_t>(len);
}

bool Source::read(void* buf, size_t len, uint64_t offset) const {
  if (offset <= head.size() && len <= head.size() - offset) {
    std::memcpy(buf, head.data() + offset, len);
    return true;
  }
  return pread_all(fd, buf, len, offset);
}

Result<ElfObject> read_native(int fd, std::string_view head, const std::string& path, size_t file_size,
                              const ElfIdent& ident, const ReadOptions& options) {
  const Source in{.fd = fd, .head = head};
  auto f = std::make_shared<File>();
  f->size = file_size;
  ElfObject obj;
  obj.path = path;
  obj.is_64 = ident.is_64;
  obj.big_endian = ident.big_endian;
  obj.osabi = ident.osabi;
  auto err = ident.is_64 ? read_headers<Elf64_Ehdr, Elf64_Shdr>(in, path, *f, obj)
                         : read_headers<Elf32_Ehdr, Elf32_Shdr>(in, path, *f, obj);
  if (err) return *err;
  void* base = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return InputError{path, std::string("cannot map: ") + std::strerror(errno)};
  f->base = static_cast<const char*>(base);
  // A fault on a cold page of a file mapping reads the pages around it too, and more behind them (read_ahead_kb
  // of them, twice: 16 MiB of each file on some hosts, most of them bytes no reader here touches): this
  // mapping reads the page a fault needs, and a reader about to go through a range asks for it first
  // (will_need). The tables every reader looks up are asked for here when they are not cached (one mincore(2)
  // on a page of them), so that the kernel reads them while the loader goes on to the next file. Asking on a
  // warm page cache would cost a look-up per page (22 ms of a 116 ms run over libtorch_cpu's 284 libraries,
  // 2 cores).
  madvise(base, file_size, MADV_RANDOM);
  if (f->dynsym && !tables_cached(*f)) ask_tables(*f);
  if (f->dynamic) {
    err = ident.is_64 ? read_dynamic<Elf64_Dyn>(in, path, *f, obj) : read_dynamic<Elf32_Dyn>(in, path, *f, obj);
    if (err) return *err;
  }
  if (f->dynsym) read_copies(in, *f);
  if (options.symbols) {
    if (auto e = decode_tables(table_bytes(*f, options, obj), options, obj)) return *e;
  }
  obj.native = f.get();
  obj.keep_alive = std::move(f);
  return obj;
}

std::optional<InputError> read_native_symbols(ElfObject& object, const ReadOptions& options) {
  File& f = *static_cast<File*>(object.native);
  return decode_tables(table_bytes(f, options, object), options, object);
}

std::vector<RawSection> native_sections(const ElfObject& object) {
  const File& f = *static_cast<const File*>(object.native);
  std::string_view names = f.strtab(f.shstrndx);
  std::vector<RawSection> out;
  out.reserve(f.sections.size());
  for (size_t i = 1; i < f.sections.size(); ++i) {
    const Section& s = f.sections[i];
    // A name outside the table or without its NUL is no name.
    std::string_view name;
    if (s.name < names.size()) {
      size_t end = names.find('\0', s.name);
      if (end != std::string_view::npos) name = names.substr(s.name, end - s.name);
    }
    out.push_back({.name = name, .type = s.type, .flags = s.flags, .bytes = f.bytes(i)});
  }
  return out;
}

void keep_native_mappings() { keep_mapped.store(true); }

// A range whose first, middle and last pages are in the page cache is taken as cached.
void will_need(std::string_view bytes) {
  if (bytes.empty()) return;
  const char* last = bytes.data() + bytes.size() - 1;
  if (cached(bytes.data()) && cached(last) && cached(bytes.data() + bytes.size() / 2)) return;
  ask(bytes);
}

void read_in_order(std::string_view bytes) { advise(bytes, MADV_SEQUENTIAL); }

// MADV_DONTNEED on a read-only private file mapping never written: the pages leave the resident set
// and the next access reads them again from the page cache, unchanged, so every view stays valid.
size_t release_native_pages(void* native) {
  auto* f = static_cast<File*>(native);
  if (!f || !f->base) return 0;
  madvise(const_cast<char*>(f->base), f->size, MADV_DONTNEED);
  return f->size;
}

}  // namespace mlc::elf::detail

namespace mlc::elf {
size_t release_resident_pages(void* native) { return detail::release_native_pages(native); }
}  // namespace mlc::elf
