// A walk over the DIEs (types skipped) of the units that reference the wanted symbols, with libdw.
// Call sites name their callee through DW_AT_call_origin (DWARF 5) or DW_AT_abstract_origin
// (DW_TAG_GNU_call_site); the line is the one containing the call instruction (return_pc - 1).
// Calls a unit records no call site for (GCC records none without optimisation, bar indirect calls)
// are located by the line table row holding the call instruction that the scan below finds.
//
// Which units: a library's debug information can be hundreds of megabytes, and only the few units
// whose code refers to an undefined symbol can hold its call sites. On x86-64 that code reaches the
// symbol rip-relatively, through its GOT slot (a load, or a call with -fno-plt) or through the PLT
// stub that jumps through that slot; so the code is scanned for 32-bit displacements landing on
// those slots or stubs, and each hit is mapped to the unit whose address ranges hold it (read from
// the unit DIEs only). Stray byte patterns only add a unit to walk, never lose one. Only those units'
// DIEs and line tables are read. A symbol referenced from data only (a table, a vtable) leads to
// the units whose code uses the data object holding the reference. Only a symbol that no unit's code
// reaches at all is looked for among the namespace-scope declarations of the other units (which
// touches most of their pages), as a variable. Other machines, and files without section addresses
// (objects), keep the walk over every unit.
#include "dwarf/references.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_set>

#include "demangle/demangle.h"

namespace mlc::dwarf {
namespace {

class Session {
 public:
  explicit Session(const std::string& path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) dw_ = dwarf_begin(fd_, DWARF_C_READ);
  }
  ~Session() {
    if (dw_) dwarf_end(dw_);
    if (fd_ >= 0) close(fd_);
  }
  Dwarf* get() const { return dw_; }

 private:
  int fd_ = -1;
  Dwarf* dw_ = nullptr;
};

std::string string_attr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  if (!dwarf_attr_integrate(die, name, &attr)) return "";
  const char* s = dwarf_formstring(&attr);
  return s ? s : "";
}

// The symbol name a declaration DIE stands for: its linkage name, else its plain name.
std::string symbol_of(Dwarf_Die* die) {
  std::string linkage = string_attr(die, DW_AT_linkage_name);
  if (linkage.empty()) linkage = string_attr(die, DW_AT_MIPS_linkage_name);
  return linkage.empty() ? string_attr(die, DW_AT_name) : linkage;
}

std::string function_label(Dwarf_Die* die) {
  std::string sym = symbol_of(die);
  return sym.empty() ? "" : demangle::demangle(sym);
}

// Depth-first over a DIE and its children, with a bound on depth against hostile input.
void walk(Dwarf_Die* die, int depth, const std::function<void(Dwarf_Die*, int)>& visit) {
  if (depth > 256) return;
  visit(die, depth);
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) return;
  do {
    walk(&child, depth + 1, visit);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The DIEs that can hold call sites or declarations of variables with a symbol: units, namespaces
// and code. Types are not entered: in a C++ unit they are most of the DIEs, and hold neither.
bool holds_code_or_symbols(int tag) {
  switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block: return true;
    default: return false;
  }
}

// Depth-first over the DIEs of a unit that holds_code_or_symbols() enters.
void walk_code(Dwarf_Die* die, int depth, const std::function<void(Dwarf_Die*, int)>& visit) {
  if (depth > 256) return;
  visit(die, depth);
  Dwarf_Die child;
  if (!holds_code_or_symbols(dwarf_tag(die)) || dwarf_child(die, &child) != 0) return;
  do {
    walk_code(&child, depth + 1, visit);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The innermost function (subprogram or inlined subroutine) whose code holds pc. dwarf_getscopes
// says the same, but libdw 0.188 leaks the array it built when its second pass fails on malformed
// DWARF (fuzz_elf_loader found it: tests/fuzz/regressions/elf_loader/leak-getscopes).
void innermost_function(Dwarf_Die* die, Dwarf_Addr pc, int depth, std::optional<Dwarf_Die>& found) {
  if (depth > 256) return;
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (!holds_code_or_symbols(tag)) continue;
    if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
      innermost_function(&child, pc, depth + 1, found);
    } else if (dwarf_haspc(&child, pc) == 1) {
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) found = child;
      innermost_function(&child, pc, depth + 1, found);
      return;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}
std::optional<Dwarf_Die> innermost_function(Dwarf_Die* cudie, Dwarf_Addr pc) {
  std::optional<Dwarf_Die> found;
  innermost_function(cudie, pc, 0, found);
  return found;
}

template <typename Fn>
void for_each_unit(Dwarf* dw, Fn&& fn) {
  Dwarf_CU* cu = nullptr;
  Dwarf_Die cudie;
  uint8_t unit_type = 0;
  while (dwarf_get_units(dw, cu, &cu, nullptr, &unit_type, &cudie, nullptr) == 0) {
    if (unit_type == DW_UT_compile || unit_type == DW_UT_partial) fn(&cudie);
  }
}

// Line tables may name files relative to the unit's DW_AT_comp_dir (ccache's base_dir rewriting, or
// compilers run with relative paths); reports promise absolute paths, so join and normalise lexically.
std::string absolute_source(const std::string& file, Dwarf_Die* cudie) {
  if (file.empty() || file.front() == '/') return file;
  Dwarf_Attribute attr;
  const char* comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
  if (!comp_dir || comp_dir[0] != '/') return file;
  std::vector<std::string> parts;
  std::string joined = std::string(comp_dir) + "/" + file;
  size_t i = 0;
  while (i <= joined.size()) {
    size_t j = joined.find('/', i);
    if (j == std::string::npos) j = joined.size();
    std::string part = joined.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (const auto& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

struct Relocation {
  uint64_t address;  // a GOT slot, a word in data, or (text relocations) code
  std::string symbol;
};

// The relocations against the wanted dynamic symbols. 64-bit ELF only; libelf hands the tables over
// in host order.
std::vector<Relocation> relocations_against(Elf* elf, const std::set<std::string>& wanted) {
  std::unordered_set<std::string_view> names(wanted.begin(), wanted.end());
  std::vector<Relocation> out;
  std::map<size_t, std::vector<const char*>> wanted_index;  // per symbol table: symbol i's name if wanted
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL)) continue;
    Elf_Scn* symscn = elf_getscn(elf, sh.sh_link);
    GElf_Shdr symsh;
    if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM) continue;
    auto found = wanted_index.find(sh.sh_link);
    if (found == wanted_index.end()) {
      std::vector<const char*> is_wanted;
      Elf_Data* syms = elf_getdata(symscn, nullptr);
      Elf_Data* strs = elf_getdata(elf_getscn(elf, symsh.sh_link), nullptr);
      // gelf_* reads either class (a raw Elf64_Sym cast would misread a 32-bit file).
      if (syms && strs && syms->d_type == ELF_T_SYM && syms->d_buf && strs->d_buf && symsh.sh_entsize != 0) {
        const char* text = static_cast<const char*>(strs->d_buf);
        size_t count = symsh.sh_size / symsh.sh_entsize;
        is_wanted.resize(count);
        for (size_t i = 1; i < count; ++i) {
          GElf_Sym sym;
          if (!gelf_getsym(syms, static_cast<int>(i), &sym)) break;
          size_t at = sym.st_name;
          if (at >= strs->d_size) continue;
          std::string_view name(text + at, strnlen(text + at, strs->d_size - at));
          if (names.count(name)) is_wanted[i] = text + at;
        }
      }
      found = wanted_index.emplace(sh.sh_link, std::move(is_wanted)).first;
    }
    const std::vector<const char*>& is_wanted = found->second;
    Elf_Data* rels = elf_getdata(scn, nullptr);
    if (!rels || !rels->d_buf) continue;
    // GELF_R_SYM of a gelf_getrel(a) entry is the symbol index in either class.
    auto take = [&](uint64_t offset, uint64_t info) {
      size_t index = GELF_R_SYM(info);
      if (index < is_wanted.size() && is_wanted[index]) out.push_back({offset, is_wanted[index]});
    };
    const size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    if (rels->d_type == ELF_T_RELA) {
      GElf_Rela r;
      for (size_t i = 0; i < count && gelf_getrela(rels, static_cast<int>(i), &r); ++i) take(r.r_offset, r.r_info);
    } else if (rels->d_type == ELF_T_REL) {
      GElf_Rel r;
      for (size_t i = 0; i < count && gelf_getrel(rels, static_cast<int>(i), &r); ++i) take(r.r_offset, r.r_info);
    }
  }
  return out;
}

std::vector<uint64_t> sorted_addresses(const std::vector<Relocation>& relocations) {
  std::vector<uint64_t> out;
  for (const auto& r : relocations) out.push_back(r.address);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct CodeSection {
  uint64_t address;
  const unsigned char* bytes;
  size_t size;
  uint64_t entry_size;  // of PLT sections
  bool plt;
};

// Each position in `code` whose 32-bit displacement, taken from the end of the displacement (as a
// call, a jump or a rip-relative operand without an immediate takes it), lands on a sorted target.
template <typename Hit>
void scan_displacements(const CodeSection& code, const std::vector<uint64_t>& targets, Hit&& hit) {
  if (targets.empty() || code.size < 4) return;
  const uint64_t lo = targets.front(), hi = targets.back();
  // The code lies between the PLT and the GOT, so most positions pass the range check: a bitmap of
  // the targets' low bits turns away nearly all the others before the binary search.
  std::vector<uint64_t> filter(1024);
  for (uint64_t t : targets) filter[(t >> 6) & 1023] |= uint64_t{1} << (t & 63);
  for (size_t i = 0; i + 4 <= code.size; ++i) {
    int32_t disp;
    std::memcpy(&disp, code.bytes + i, 4);
    uint64_t target = code.address + i + 4 + static_cast<uint64_t>(static_cast<int64_t>(disp));
    if (target < lo || target > hi || !(filter[(target >> 6) & 1023] >> (target & 63) & 1)) continue;
    if (std::binary_search(targets.begin(), targets.end(), target)) hit(code.address + i, target);
  }
}

struct DataObject {
  std::string name;
  uint64_t start, size;
};

// The defined data objects that hold one of the sorted addresses `inside`, from the symbol table
// (.dynsym when there is none).
std::vector<DataObject> holding_objects(Elf* elf, const std::vector<uint64_t>& inside) {
  std::vector<DataObject> out;
  Elf_Scn* table = nullptr;
  Elf_Scn* scn = nullptr;
  GElf_Shdr sh;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !table)) table = scn;
  }
  if (!table || !gelf_getshdr(table, &sh)) return out;
  Elf_Data* syms = elf_getdata(table, nullptr);
  if (!syms || syms->d_type != ELF_T_SYM || !syms->d_buf || sh.sh_entsize == 0) return out;
  const size_t count = sh.sh_size / sh.sh_entsize;
  for (size_t i = 1; i < count; ++i) {  // gelf_getsym: either class
    GElf_Sym sym;
    if (!gelf_getsym(syms, static_cast<int>(i), &sym)) break;
    if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF || sym.st_size == 0) continue;
    auto it = std::lower_bound(inside.begin(), inside.end(), sym.st_value);
    if (it == inside.end() || *it - sym.st_value >= sym.st_size) continue;
    if (const char* name = elf_strptr(elf, sh.sh_link, sym.st_name)) out.push_back({name, sym.st_value, sym.st_size});
  }
  return out;
}

struct Referencing {
  std::set<Dwarf_Off> units;      // the compile units whose code refers to a wanted symbol
  std::set<std::string> reached;  // the wanted symbols code in those units refers to
  // The calls and tail jumps to a wanted symbol (through its PLT stub or its GOT slot), as (address
  // within the instruction, symbol), sorted: what the line table locates where the compiler recorded
  // no call site (at -O0, DW_TAG_call_site exists only with optimisation).
  std::vector<std::pair<uint64_t, std::string>> calls;
};

// Whether the 32-bit displacement at `offset` of `code` is the operand of a call or a jump that
// transfers control: `call/jmp rel32` (E8/E9, to a PLT stub) or `call/jmp *disp32(%rip)` (FF 15/FF 25,
// through a GOT slot with -fno-plt). Loads of the address (a variable, a function pointer) are not.
bool transfers_control(const CodeSection& code, size_t offset, bool through_slot) {
  if (through_slot) {
    return offset >= 2 && code.bytes[offset - 2] == 0xff &&
           (code.bytes[offset - 1] == 0x15 || code.bytes[offset - 1] == 0x25);
  }
  return offset >= 1 && (code.bytes[offset - 1] == 0xe8 || code.bytes[offset - 1] == 0xe9);
}

// The executable PROGBITS sections, PLT sections marked; nullopt when the section names cannot be read.
std::optional<std::vector<CodeSection>> code_sections(Elf* elf) {
  std::vector<CodeSection> code;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return std::nullopt;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf || data->d_size == 0) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    bool plt = name && std::strncmp(name, ".plt", 4) == 0;
    code.push_back({sh.sh_addr, static_cast<const unsigned char*>(data->d_buf), data->d_size,
                    sh.sh_entsize ? sh.sh_entsize : 16, plt});
  }
  return code;
}

// The PLT stubs jumping through the wanted slots: stub address -> slot.
std::map<uint64_t, uint64_t> plt_stubs(const std::vector<CodeSection>& code, const std::vector<uint64_t>& slots) {
  std::map<uint64_t, uint64_t> stub_slot;
  for (const auto& section : code) {
    if (!section.plt) continue;
    scan_displacements(section, slots, [&](uint64_t at, uint64_t slot) {
      stub_slot[section.address + (at - section.address) / section.entry_size * section.entry_size] = slot;
    });
  }
  return stub_slot;
}

// Where code refers to each wanted symbol, as (code address, symbol); the calls among them; the slots reached.
struct Sites {
  std::vector<std::pair<uint64_t, std::string>> sites;
  std::vector<std::pair<uint64_t, std::string>> calls;
  std::set<uint64_t> reached;  // slots some code reaches
};

// The code (outside the PLT) reaching a wanted slot or a stub jumping through one.
Sites code_sites(const std::vector<CodeSection>& code, const std::vector<Relocation>& relocations,
                 const std::vector<uint64_t>& slots, const std::map<uint64_t, uint64_t>& stub_slot) {
  std::vector<uint64_t> targets = slots;
  for (const auto& entry : stub_slot) targets.push_back(entry.first);
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  std::multimap<uint64_t, std::string> slot_symbols;
  for (const auto& r : relocations) slot_symbols.emplace(r.address, r.symbol);
  Sites out;
  for (const auto& section : code) {
    if (section.plt) continue;
    scan_displacements(section, targets, [&](uint64_t at, uint64_t target) {
      auto stub = stub_slot.find(target);
      uint64_t slot = stub == stub_slot.end() ? target : stub->second;
      out.reached.insert(slot);
      auto range = slot_symbols.equal_range(slot);
      for (auto it = range.first; it != range.second; ++it) out.sites.emplace_back(at, it->second);
      if (transfers_control(section, at - section.address, stub == stub_slot.end())) {
        for (auto it = range.first; it != range.second; ++it) out.calls.emplace_back(at, it->second);
      }
    });
  }
  return out;
}

// A wanted relocation that no code reaches sits in data: a table, a vtable. The code that uses the
// object holding it (through the object's GOT slot, or at its address) is in the unit that most
// likely declares the symbol. `from_data` is sorted.
void data_sites(Elf* elf, const std::vector<CodeSection>& code, const std::vector<Relocation>& relocations,
                const std::vector<uint64_t>& from_data, std::vector<std::pair<uint64_t, std::string>>& sites) {
  std::vector<DataObject> holders = holding_objects(elf, from_data);
  if (holders.empty()) return;
  std::set<std::string> names;
  for (const auto& h : holders) names.insert(h.name);
  std::vector<Relocation> holder_relocations = relocations_against(elf, names);
  // Each way code reaches a holder (its start, its GOT slots), with the holder.
  std::multimap<uint64_t, const DataObject*> ways;
  for (const auto& h : holders) {
    ways.emplace(h.start, &h);
    for (const auto& r : holder_relocations) {
      if (r.symbol == h.name) ways.emplace(r.address, &h);
    }
  }
  std::vector<uint64_t> holder_targets;
  for (const auto& way : ways) holder_targets.push_back(way.first);
  holder_targets.erase(std::unique(holder_targets.begin(), holder_targets.end()), holder_targets.end());
  for (const auto& section : code) {
    if (section.plt) continue;
    scan_displacements(section, holder_targets, [&](uint64_t at, uint64_t target) {
      auto range = ways.equal_range(target);
      for (auto it = range.first; it != range.second; ++it) {
        const DataObject* h = it->second;
        for (const auto& r : relocations) {
          if (r.address >= h->start && r.address - h->start < h->size) sites.emplace_back(at, r.symbol);
        }
      }
    });
  }
}

// The units holding a site (sorted), by the address ranges of their unit DIEs.
void units_of_sites(Dwarf* dw, const std::vector<std::pair<uint64_t, std::string>>& sites, Referencing& out) {
  for_each_unit(dw, [&](Dwarf_Die* cudie) {
    Dwarf_Addr base = 0, start = 0, end = 0;
    ptrdiff_t offset = 0;
    while (!sites.empty() && (offset = dwarf_ranges(cudie, offset, &base, &start, &end)) > 0) {
      auto it = std::lower_bound(sites.begin(), sites.end(), std::pair<uint64_t, std::string>(start, ""));
      for (; it != sites.end() && it->first < end; ++it) {
        out.units.insert(dwarf_dieoffset(cudie));
        out.reached.insert(it->second);
      }
    }
  });
}

// Which units' code refers to the wanted symbols; nullopt when this file cannot be read that way
// (then every unit is walked). The passes: the wanted relocations, the PLT stubs through them, the
// code reaching either, the data holding the rest, then the units holding those sites.
std::optional<Referencing> referencing_units(Dwarf* dw, const std::set<std::string>& wanted) {
  Elf* elf = dwarf_getelf(dw);
  GElf_Ehdr eh;
  if (!elf || gelf_getclass(elf) != ELFCLASS64 || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
      (eh.e_type != ET_DYN && eh.e_type != ET_EXEC)) {
    return std::nullopt;
  }
  std::vector<Relocation> relocations = relocations_against(elf, wanted);
  std::vector<uint64_t> slots = sorted_addresses(relocations);
  std::optional<std::vector<CodeSection>> code = code_sections(elf);
  if (!code) return std::nullopt;
  Sites found = code_sites(*code, relocations, slots, plt_stubs(*code, slots));
  auto in_code = [&](uint64_t address) {
    return std::any_of(code->begin(), code->end(),
                       [&](const CodeSection& c) { return address >= c.address && address - c.address < c.size; });
  };
  std::vector<uint64_t> from_data;
  for (const auto& r : relocations) {
    if (in_code(r.address)) {
      found.sites.emplace_back(r.address, r.symbol);  // a text relocation's own address is a site too
    } else if (!found.reached.count(r.address)) {
      from_data.push_back(r.address);
    }
  }
  std::sort(from_data.begin(), from_data.end());
  data_sites(elf, *code, relocations, from_data, found.sites);
  std::sort(found.sites.begin(), found.sites.end());
  found.sites.erase(std::unique(found.sites.begin(), found.sites.end()), found.sites.end());
  Referencing out;
  std::sort(found.calls.begin(), found.calls.end());
  found.calls.erase(std::unique(found.calls.begin(), found.calls.end()), found.calls.end());
  out.calls = std::move(found.calls);
  units_of_sites(dw, found.sites, out);
  return out;
}

// The variables declared at namespace scope of one unit, without entering types or code.
void walk_scopes(Dwarf_Die* scope, int depth, const std::function<void(Dwarf_Die*)>& visit) {
  if (depth > 256) return;
  Dwarf_Die child;
  if (dwarf_child(scope, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_namespace) {
      walk_scopes(&child, depth + 1, visit);
    } else if (tag == DW_TAG_variable) {
      visit(&child);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// Declarations of wanted variables at namespace scope of one unit, with their size.
void scope_variables(Dwarf_Die* cudie, const std::set<std::string>& wanted,
                     std::map<std::string, uint64_t>& variables) {
  walk_scopes(cudie, 0, [&](Dwarf_Die* die) {
    std::string sym = symbol_of(die);
    if (!wanted.count(sym) || (variables.count(sym) && variables[sym] > 0)) return;
    Dwarf_Attribute type_attr;
    Dwarf_Die type;
    Dwarf_Word bytes = 0;
    if (dwarf_attr_integrate(die, DW_AT_type, &type_attr) && dwarf_formref_die(&type_attr, &type)) {
      if (dwarf_aggregate_size(&type, &bytes) != 0) bytes = 0;
    }
    if (bytes > 0 || !variables.count(sym)) variables[sym] = bytes;
  });
}

// The file and line of the line table row holding `pc`, into `site`.
void locate_line(Dwarf_Die* cudie, Dwarf_Addr pc, CallSite& site) {
  Dwarf_Line* line = dwarf_getsrc_die(cudie, pc);
  if (!line) return;
  const char* file = dwarf_linesrc(line, nullptr, nullptr);
  int lineno = 0;
  dwarf_lineno(line, &lineno);
  site.file = absolute_source(file ? file : "", cudie);
  site.line = lineno;
}

void add_site(std::vector<CallSite>& sites, const CallSite& site) {
  for (const auto& x : sites)
    if (x.file == site.file && x.line == site.line && x.function == site.function) return;
  sites.push_back(site);
}

}  // namespace

std::vector<CompileUnit> compile_units(const std::string& path) {
  std::vector<CompileUnit> out;
  Session s(path);
  if (!s.get()) return out;
  Dwarf_CU* cu = nullptr;
  Dwarf_Die cudie;
  uint8_t unit_type = 0;
  while (dwarf_get_units(s.get(), cu, &cu, nullptr, &unit_type, &cudie, nullptr) == 0) {
    if (unit_type != DW_UT_compile) continue;
    std::string name = string_attr(&cudie, DW_AT_name);
    if (name.empty()) continue;
    out.push_back({.source = absolute_source(name, &cudie), .comp_dir = string_attr(&cudie, DW_AT_comp_dir)});
  }
  return out;
}

References references(const std::string& path, const std::set<std::string>& wanted) {
  References refs;
  auto& out = refs.calls;
  Session s(path);
  if (!s.get() || wanted.empty()) return refs;
  const std::optional<Referencing> lazy = referencing_units(s.get(), wanted);
  for_each_unit(s.get(), [&](Dwarf_Die* cudie) {
    if (lazy && !lazy->units.count(dwarf_dieoffset(cudie))) return;
    // The enclosing function at each depth (named only when one of its call sites is wanted).
    std::vector<std::optional<Dwarf_Die>> functions(258);
    std::set<std::string> recorded;  // the wanted symbols this unit has DWARF call sites for
    walk_code(cudie, 0, [&](Dwarf_Die* die, int depth) {
      int tag = dwarf_tag(die);
      functions[depth] = depth > 0 ? functions[depth - 1] : std::nullopt;
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) functions[depth] = *die;
      if (tag == DW_TAG_variable) {
        std::string sym = symbol_of(die);
        if (!wanted.count(sym) || (refs.variables.count(sym) && refs.variables[sym] > 0)) return;
        Dwarf_Attribute type_attr;
        Dwarf_Die type;
        Dwarf_Word bytes = 0;
        if (dwarf_attr_integrate(die, DW_AT_type, &type_attr) && dwarf_formref_die(&type_attr, &type)) {
          if (dwarf_aggregate_size(&type, &bytes) != 0) bytes = 0;
        }
        if (bytes > 0 || !refs.variables.count(sym)) refs.variables[sym] = bytes;
        return;
      }
      if (tag != DW_TAG_call_site && tag != DW_TAG_GNU_call_site) return;
      Dwarf_Attribute attr;
      Dwarf_Die callee;
      if (!(dwarf_attr(die, DW_AT_call_origin, &attr) || dwarf_attr(die, DW_AT_abstract_origin, &attr)) ||
          !dwarf_formref_die(&attr, &callee)) {
        return;
      }
      std::string sym = symbol_of(&callee);
      if (!wanted.count(sym)) return;
      std::string enclosing;
      if (functions[depth]) enclosing = function_label(&*functions[depth]);
      CallSite site{enclosing, "", 0};
      Dwarf_Addr pc = 0;
      if ((dwarf_attr(die, DW_AT_call_return_pc, &attr) && dwarf_formaddr(&attr, &pc) == 0) ||
          (dwarf_attr(die, DW_AT_low_pc, &attr) && dwarf_formaddr(&attr, &pc) == 0)) {
        locate_line(cudie, pc > 0 ? pc - 1 : pc, site);
      }
      recorded.insert(sym);
      add_site(out[sym], site);
    });
    // Calls the compiler recorded no call site for (all of them at -O0): the line table row holding
    // the call instruction, as lld maps a relocation's offset for "referenced by file:line".
    if (!lazy) return;
    Dwarf_Addr base = 0, start = 0, end = 0;
    ptrdiff_t offset = 0;
    while ((offset = dwarf_ranges(cudie, offset, &base, &start, &end)) > 0) {
      auto it = std::lower_bound(lazy->calls.begin(), lazy->calls.end(), std::pair<uint64_t, std::string>(start, ""));
      for (; it != lazy->calls.end() && it->first < end; ++it) {
        if (recorded.count(it->second)) continue;
        CallSite site;
        if (auto function = innermost_function(cudie, it->first)) site.function = function_label(&*function);
        locate_line(cudie, it->first, site);
        add_site(out[it->second], site);
      }
    }
  });
  if (lazy) {
    // Symbols no walked unit's code was found to refer to: a variable may still be declared in
    // another unit (a reference from data no code uses, or from code without debug information).
    // So may the size of one declared without it where it is used (`extern int table[];`), as
    // declared_size looks for it.
    std::set<std::string> rest;
    for (const auto& name : wanted) {
      auto v = refs.variables.find(name);
      if (v == refs.variables.end() ? !lazy->reached.count(name) : v->second == 0) rest.insert(name);
    }
    if (!rest.empty()) {
      for_each_unit(s.get(), [&](Dwarf_Die* cudie) {
        if (!lazy->units.count(dwarf_dieoffset(cudie))) scope_variables(cudie, rest, refs.variables);
      });
    }
  }
  return refs;
}

// The first declaration of `name` with a known size, looked for as references() looks: in the units
// whose code refers to it; when that code declares no variable of that name, it is a function.
std::optional<uint64_t> declared_size(const std::string& path, const std::string& name) {
  Session s(path);
  if (!s.get()) return std::nullopt;
  std::optional<uint64_t> size;
  bool declared = false;  // a variable of that name was seen, sized or not
  auto visit = [&](Dwarf_Die* die, int) {
    if (size || dwarf_tag(die) != DW_TAG_variable || symbol_of(die) != name) return;
    declared = true;
    Dwarf_Attribute attr;
    Dwarf_Die type;
    if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &type)) return;
    Dwarf_Word bytes = 0;
    if (dwarf_aggregate_size(&type, &bytes) == 0 && bytes > 0) size = bytes;
  };
  const std::optional<Referencing> lazy = referencing_units(s.get(), {name});
  for_each_unit(s.get(), [&](Dwarf_Die* cudie) {
    if (size) return;
    if (!lazy) {
      walk(cudie, 0, visit);
    } else if (lazy->units.count(dwarf_dieoffset(cudie))) {
      walk_code(cudie, 0, visit);
    }
  });
  if (size || !lazy || (lazy->reached.count(name) && !declared)) return size;
  // Declared without a size where it is used (`extern int table[];`), or used by no code found:
  // another unit's namespace-scope declaration may say more.
  for_each_unit(s.get(), [&](Dwarf_Die* cudie) {
    if (!size && !lazy->units.count(dwarf_dieoffset(cudie)))
      walk_scopes(cudie, 0, [&](Dwarf_Die* die) { visit(die, 0); });
  });
  return size;
}

}  // namespace mlc::dwarf
