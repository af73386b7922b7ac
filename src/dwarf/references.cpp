// A walk over every DIE of every unit with libdw. Call sites name their callee through
// DW_AT_call_origin (DWARF 5) or DW_AT_abstract_origin (DW_TAG_GNU_call_site); the line is the one
// containing the call instruction, i.e. the line of return_pc - 1.
#include "dwarf/references.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <functional>

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

}  // namespace

References references(const std::string& path, const std::set<std::string>& wanted) {
  References refs;
  auto& out = refs.calls;
  Session s(path);
  if (!s.get() || wanted.empty()) return refs;
  for_each_unit(s.get(), [&](Dwarf_Die* cudie) {
    std::vector<std::string> functions(258);  // the enclosing function at each depth
    walk(cudie, 0, [&](Dwarf_Die* die, int depth) {
      int tag = dwarf_tag(die);
      std::string enclosing = depth > 0 ? functions[depth - 1] : "";
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) enclosing = function_label(die);
      functions[depth] = enclosing;
      if (tag == DW_TAG_variable) {
        std::string sym = symbol_of(die);
        if (!wanted.count(sym) || refs.variables.count(sym)) return;
        Dwarf_Attribute type_attr;
        Dwarf_Die type;
        Dwarf_Word bytes = 0;
        if (dwarf_attr_integrate(die, DW_AT_type, &type_attr) && dwarf_formref_die(&type_attr, &type)) {
          if (dwarf_aggregate_size(&type, &bytes) != 0) bytes = 0;
        }
        refs.variables[sym] = bytes;
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
      CallSite site{enclosing, "", 0};
      Dwarf_Addr pc = 0;
      if ((dwarf_attr(die, DW_AT_call_return_pc, &attr) && dwarf_formaddr(&attr, &pc) == 0) ||
          (dwarf_attr(die, DW_AT_low_pc, &attr) && dwarf_formaddr(&attr, &pc) == 0)) {
        if (Dwarf_Line* line = dwarf_getsrc_die(cudie, pc > 0 ? pc - 1 : pc)) {
          const char* file = dwarf_linesrc(line, nullptr, nullptr);
          int lineno = 0;
          dwarf_lineno(line, &lineno);
          site.file = absolute_source(file ? file : "", cudie);
          site.line = lineno;
        }
      }
      auto& sites = out[sym];
      bool dup = false;
      for (const auto& x : sites) dup |= x.file == site.file && x.line == site.line && x.function == site.function;
      if (!dup) sites.push_back(site);
    });
  });
  return refs;
}

std::optional<uint64_t> declared_size(const std::string& path, const std::string& name) {
  Session s(path);
  if (!s.get()) return std::nullopt;
  std::optional<uint64_t> size;
  for_each_unit(s.get(), [&](Dwarf_Die* cudie) {
    if (size) return;
    walk(cudie, 0, [&](Dwarf_Die* die, int) {
      if (size || dwarf_tag(die) != DW_TAG_variable || symbol_of(die) != name) return;
      Dwarf_Attribute attr;
      Dwarf_Die type;
      if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &type)) return;
      Dwarf_Word bytes = 0;
      if (dwarf_aggregate_size(&type, &bytes) == 0 && bytes > 0) size = bytes;
    });
  });
  return size;
}

}  // namespace mlc::dwarf
