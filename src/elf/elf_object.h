// Reads what the dynamic loader reads from an ELF file (dynamic section, .dynsym, symbol versions,
// dynamic relocations) and, for tracing, the static .symtab of shared objects, .o files and the
// members of .a archives. Files in the host's byte order are read directly (section headers and
// .dynamic by pread, the tables in place in a read-only mapping, so only the pages look-ups need are
// touched); other files and archive members go through libelf. Only this folder includes libelf;
// its types never leave it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace mlc::elf {

enum class SymbolType : uint8_t { NoType, Object, Func, Section, File, Common, Tls, GnuIfunc, Other };
enum class Binding : uint8_t { Local, Global, Weak, GnuUnique, Other };
enum class Visibility : uint8_t { Default, Internal, Hidden, Protected };

inline constexpr uint16_t kShnUndef = 0;
inline constexpr uint16_t kShnAbs = 0xfff1;
inline constexpr uint16_t kShnCommon = 0xfff2;
// Version indexes with a meaning of their own (gABI): 0 local, 1 global/base.
inline constexpr uint16_t kVerNdxLocal = 0;
inline constexpr uint16_t kVerNdxGlobal = 1;

struct Symbol {
  std::string_view name;     // points into the owning object's mapped string table; empty for a defined
                             // .dynsym entry read with ReadOptions::defined_names = false (ElfObject::name_of)
  uint32_t name_offset = 0;  // st_name: where the name starts in the linked string table
  uint64_t value = 0;
  uint64_t size = 0;
  uint16_t shndx = 0;
  SymbolType type = SymbolType::NoType;
  Binding binding = Binding::Global;
  Visibility visibility = Visibility::Default;
  uint16_t version_index = kVerNdxGlobal;  // .gnu.version entry & 0x7fff (1 when there is no versym)
  bool version_hidden = false;             // .gnu.version entry & 0x8000
  bool relocated = false;                  // named by at least one dynamic relocation
  bool is_undefined() const { return shndx == kShnUndef; }
};

// One Verdef entry: the versions this object provides.
struct VersionDefinition {
  uint16_t index = 0;
  bool is_base = false;  // VER_FLG_BASE: the file's own name, not a real version
  std::string_view name;
};

// One Vernaux entry, flattened with its Verneed file: "this object needs version NAME of FILE".
struct VersionRequirement {
  uint16_t index = 0;
  std::string_view file;
  std::string_view name;
  bool weak = false;    // VER_FLG_WEAK: a missing node is only a warning
  bool hidden = false;  // vna_other & 0x8000
};

enum class ObjectKind : uint8_t { Relocatable, Executable, SharedObject, Core, Other };

// The GNU hash of a symbol name (dl_new_hash: h = h * 33 + c from 5381), computed once per lookup.
uint32_t gnu_hash(std::string_view name);

// A view of .gnu.hash in host byte order (what ld.so looks names up through). Every count and index
// was checked against the section and the symbol table when it was read.
struct GnuHashTable {
  const uint32_t* buckets = nullptr;
  const uint32_t* chains = nullptr;   // chains[i - symoffset] for symbol i
  const uint64_t* bloom64 = nullptr;  // ELFCLASS64: 64-bit bloom words
  const uint32_t* bloom32 = nullptr;  // ELFCLASS32
  uint32_t nbuckets = 0, symoffset = 0, bloom_size = 0, bloom_shift = 0;
  bool present() const { return buckets != nullptr; }
  // The bloom filter's verdict (dl-lookup.c): false means the object certainly lacks the name.
  bool may_define(uint32_t hash) const {
    if (!buckets) return true;
    const unsigned bits = bloom64 ? 64 : 32;
    uint64_t word = bloom64 ? bloom64[(hash / bits) & (bloom_size - 1)] : bloom32[(hash / bits) & (bloom_size - 1)];
    return ((word >> (hash % bits)) & (word >> ((hash >> bloom_shift) % bits)) & 1) != 0;
  }
};

// The class, byte order and machine of a process: the loader skips files of another class or
// machine, and refuses those of another byte order.
struct ProcessClass {
  bool is_64 = true;
  bool big_endian = false;
  uint16_t machine = 62;
};

// What glibc's loader reads of a candidate file before mapping it, and its words when it refuses
// the file (src/elf/load_header.cpp): dl-load.c open_verify checks the ELF header (a file of another
// class or machine is skipped, anything else wrong - too short, not ELF, another byte order, OS ABI,
// ABI version, padding, version, type, phentsize - ends the search with an error);
// _dl_map_object_from_fd checks the program headers, after it has matched the file against the
// loaded objects by device and inode. Program-header facts are read for files of the tool's own
// class and byte order only.
struct LoadHeader {
  enum class Verdict : uint8_t { Unopened, Accepted, OtherClass, OtherMachine, Refused };
  Verdict verdict = Verdict::Unopened;
  int errno_value = 0;       // Unopened: open(2)'s error
  std::string open_refusal;  // Refused: open_verify's words ("invalid ELF header", "file too short"...)
  // Accepted, yet refused when mapped ("object file has no loadable segments", "cannot dynamically
  // load executable", "object file has no dynamic section"); "" when it maps.
  std::string map_refusal;
  bool refused_unless_main = false;  // map_refusal is ET_EXEC's, which the main program is exempt from
  ObjectKind kind = ObjectKind::Other;
  uint64_t tls_blocksize = 0, tls_align = 0, tls_firstbyte_offset = 0;  // PT_TLS (0: no TLS block)
  uint32_t gnu_1_needed = 0;      // GNU_PROPERTY_1_NEEDED (bit 0: indirect external access)
  uint32_t x86_isa_1_needed = 0;  // GNU_PROPERTY_X86_ISA_1_NEEDED (bit 0 baseline, 1 v2, 2 v3, 3 v4)
};
struct ElfObject {
  std::string path;            // as given / as found (never canonicalised: $ORIGIN depends on it)
  std::string archive_member;  // set for members of a static archive
  // The file as its descriptor was read (stat_identity: device, inode, size, mtime, ctime) and when it last
  // changed (the later of mtime and ctime, in seconds): what a cache of facts read from it is keyed by.
  // "" for a file read through libelf (another byte order) or a member of an archive: nothing is kept.
  std::string identity;
  int64_t changed_at = 0;
  bool is_64 = true;
  bool big_endian = false;
  uint16_t machine = 0;
  uint8_t osabi = 0;
  ObjectKind kind = ObjectKind::Other;

  std::string soname;
  std::vector<std::string> needed;
  std::optional<std::string> rpath;    // DT_RPATH (already dropped when DT_RUNPATH is present, as glibc does)
  std::optional<std::string> runpath;  // DT_RUNPATH
  uint64_t dt_flags = 0;
  uint64_t dt_flags_1 = 0;
  uint64_t rela_table = 0, rel_table = 0;                    // DT_RELA, DT_REL
  uint64_t relative_rela_count = 0, relative_rel_count = 0;  // DT_RELACOUNT, DT_RELCOUNT

  std::vector<Symbol> dynamic_symbols;  // index 0 (the null symbol) included, so indexes match the file
  std::vector<Symbol> static_symbols;   // .symtab, only when asked for
  std::vector<VersionDefinition> version_definitions;
  std::vector<VersionRequirement> version_requirements;
  bool has_versym = false;
  bool has_verdef = false;
  bool has_relocation_info = false;  // false: relocations could not be read; every undefined symbol counts
  // Sorted .dynsym indexes of the undefined symbols the dynamic relocations name (the references
  // ld.so looks up; relocations naming definitions bind within the scope and cannot fail).
  std::vector<uint32_t> relocated_symbols;
  // .dynsym indexes (sorted, each once) of the symbols an x86-64 copy relocation names
  // (R_X86_64_COPY: a program's copy of a library's data, which ld.so looks up outside the program),
  // and of those an initial-exec TLS relocation names (R_X86_64_TPOFF64: the defining object's block
  // must sit in static TLS, dl-reloc.c CHECK_STATIC_TLS); 0 there is the object's own block.
  std::vector<uint32_t> copy_symbols;
  std::vector<uint32_t> static_tls_symbols;
  bool has_static_symtab = false;  // a .symtab exists (read only when ReadOptions::static_symbols)

  std::string_view dynamic_strings;   // the .dynsym's string table (names not materialised are read from it)
  const void* dynsym_data = nullptr;  // the raw .dynsym (Elf32_Sym/Elf64_Sym, host order) in the mapping
  size_t dynsym_count = 0;
  const uint16_t* versym_data = nullptr;  // the raw .gnu.version
  size_t versym_count = 0;
  GnuHashTable gnu_hash;  // empty when absent or malformed: lookups then scan .dynsym

  std::shared_ptr<const void> keep_alive;  // owns the mapping the string_views point into
  void* handle = nullptr;                  // the open libelf handle (opaque outside src/elf)
  void* native = nullptr;                  // the file read without libelf (host byte order; opaque outside src/elf)
  bool tables_read = false;  // .dynsym views and version tables already read (read_symbols reads them once)
  LoadHeader header;         // what the loader read of it before mapping it (read_load_header; the loader fills it)

  bool nodeflib() const { return (dt_flags_1 & 0x800) != 0; }  // DF_1_NODEFLIB
  bool pie() const { return (dt_flags_1 & 0x08000000) != 0; }  // DF_1_PIE
  bool noopen() const { return (dt_flags_1 & 0x40) != 0; }     // DF_1_NOOPEN
  bool static_tls() const { return (dt_flags & 0x10) != 0; }   // DF_STATIC_TLS
  const VersionDefinition* definition(uint16_t index) const;
  const VersionRequirement* requirement(uint16_t index) const;
  // .dynsym entries, whether or not dynamic_symbols was materialised (ReadOptions::lookup_only);
  // an entry decoded on demand has no name (name_of) and no `relocated` flag (relocated_symbols).
  size_t dynamic_symbol_count() const;
  Symbol dynamic_symbol(size_t index) const;
  // The indexes of the undefined .dynsym entries (st_shndx SHN_UNDEF; the null entry 0 left out), in
  // order, read in place: a scan for imports decodes only these (libtorch_cpu: 5,000 of 200,000 entries).
  std::vector<uint32_t> undefined_dynamic_symbols() const;
  // A .dynsym entry's name, also when it was not materialised at read time.
  std::string_view name_of(const Symbol& s) const;
  // The .dynstr name at `offset` and its GNU hash, in one pass over its bytes (as ld.so hashes a
  // reference's name); empty when the offset or the name's end lies outside the table.
  std::string_view name_and_hash(uint32_t offset, uint32_t& hash) const;
  // Appends the indexes of the defined .dynsym entries named `name` (hash = gnu_hash(name)), as
  // ld.so's do_lookup_x finds them: bloom filter, bucket, chain; a scan when there is no .gnu.hash.
  void find_defined(std::string_view name, uint32_t hash, std::vector<uint32_t>& out) const;
};

struct ReadOptions {
  bool static_symbols = false;  // also read .symtab
  bool relocations = true;      // mark symbols named by dynamic relocations
  bool symbols = true;          // false: headers and dynamic section only; read_symbols() completes later
  // false: names of defined .dynsym entries are left empty (read on demand through name_of and
  // find_defined): the loader looks definitions up by hash and never needs most of them.
  bool defined_names = true;
  // true: only what lookups need (raw .dynsym, .gnu.version, .dynstr, .gnu.hash, version tables, and
  // with `relocations` the indexes relocations name); dynamic_symbols stays empty.
  bool lookup_only = false;
};

// The ELF identification of a file: enough for the loader to accept or skip a candidate
// (glibc's open_verify: class, byte order, machine, ET_DYN).
struct ElfIdent {
  bool is_64 = true;
  bool big_endian = false;
  uint16_t machine = 0;
  uint8_t osabi = 0;
  ObjectKind kind = ObjectKind::Other;
};

// Cheap check on the first bytes only; an error when the file is not an ELF file at all.
Result<ElfIdent> read_ident(const std::string& path);

// An open descriptor, closed with this value unless a reader takes it over (libelf does).
struct Descriptor {
  int fd = -1;
  // The file's first bytes (up to kHeadBytes), read once by whichever reader comes first: the ELF header,
  // the program headers, the GNU property note and .gnu.hash's header lie there in most files, and each
  // was a pread(2) of its own (five a candidate, on 285 libraries). Empty until read.
  std::string head;
  static constexpr size_t kHeadBytes = 1024;
  Descriptor() = default;
  explicit Descriptor(int f) : fd(f) {}
  ~Descriptor();
  Descriptor(Descriptor&& other) noexcept : fd(other.release()), head(std::move(other.head)) {}
  Descriptor& operator=(Descriptor&& other) noexcept;
  // Reads `head` when it was not read yet; false when the read fails (errno set).
  bool read_head();
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int release() { return std::exchange(fd, -1); }
};

// `opened`, when given, receives the descriptor the header was read from (an Accepted file only), so
// that the object is read from the same open file: dl-load.c's open_verify hands its descriptor to
// _dl_map_object_from_fd, one open(2) per candidate, and a file replaced between the two reads
// cannot give a header of one file and tables of another.
LoadHeader read_load_header(const std::string& path, const ProcessClass& process, Descriptor* opened = nullptr);

Result<ElfObject> read_object(const std::string& path, const ReadOptions& options = {});
// The same, from a descriptor read_load_header opened (`file` may be taken over).
Result<ElfObject> read_object(Descriptor& file, const std::string& path, const ReadOptions& options = {});

// Files read natively stay mapped while an object refers to them and are unmapped with the last
// one. A program that exits right after its run may keep them mapped instead: the kernel then drops
// them all at exit, rather than one munmap (and TLB shootdown across threads) per file.
void keep_mappings_until_exit();

// Completes an object read with `symbols = false`: symbol tables, versions, relocations. Objects are
// independent, so several may be completed on different threads at once.
std::optional<InputError> read_symbols(ElfObject& object, const ReadOptions& options = {});

// Every ELF member of a static archive (.a), with its .symtab.
Result<std::vector<ElfObject>> read_archive(const std::string& path);

bool is_archive(const std::string& path);

// Which string literals read_string_literals returns.
struct LiteralSearch {
  size_t min_length = 4;
  // When given, chooses which to return: a large library's .rodata holds hundreds of thousands.
  std::function<bool(std::string_view)> keep;
  // When not empty, only the literals holding this text, found with memchr for its first byte rather
  // than by walking every NUL: ".so" finds dlopen's sonames in a fraction of the time.
  std::string containing;
  // When not empty, only the literals beginning with one of these texts (the API prefixes of dlsym
  // names), in file order, each once.
  std::vector<std::string> starting;
};

// The C string literals in the read-only data (.rodata*: never .lrodata, .ldata, .nv_fatbin or code)
// of an object, at least min_length bytes long, in file order: the names a dlopen or dlsym call may
// be given (src/elf/string_literals.cpp). Read in the object's own mapping (native or libelf), which
// stays open while the object lives: the file is not opened again.
Result<std::vector<std::string>> read_string_literals(const ElfObject& object, const LiteralSearch& search);
// The same for a file, read for the purpose.
Result<std::vector<std::string>> read_string_literals(const std::string& path, size_t min_length = 4,
                                                      const std::function<bool(std::string_view)>& keep = {},
                                                      std::string_view containing = {});

}  // namespace mlc::elf
