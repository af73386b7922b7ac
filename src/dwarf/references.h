// Where, in the source of a library, undefined symbols are referenced - the lines lld prints as
// ">>> referenced by file:line (function)" - and the declared size of variables, read from the
// library's own DWARF. Only this folder includes libdw; its types never leave it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlc::dwarf {

struct CallSite {
  std::string function;  // the calling function, demangled
  std::string file;
  int line = 0;
};

struct References {
  // For each wanted symbol (mangled, or a C name), the call sites DWARF records for it (DWARF 5
  // DW_TAG_call_site or GNU call sites: GCC and Clang emit them when optimising with -g); on x86-64,
  // where a unit records none for the symbol (-O0), each call or jump to its PLT stub or GOT slot,
  // located by the line table row holding the instruction.
  std::map<std::string, std::vector<CallSite>> calls;
  // Wanted symbols the library declares as variables, with their declared size: the first known
  // size of a declaration, as declared_size finds it (0 when none says).
  std::map<std::string, uint64_t> variables;
};

// Empty when the library has no debug information.
References references(const std::string& path, const std::set<std::string>& wanted);

// A unit the library was compiled from: its DW_AT_name as an absolute path (joined to DW_AT_comp_dir when
// relative) and its DW_AT_comp_dir, the directory the compiler ran in.
struct CompileUnit {
  std::string source;
  std::string comp_dir;
};

// The library's compile units (DW_UT_compile), in DWARF order; empty without debug information. Only the
// unit DIEs are read.
std::vector<CompileUnit> compile_units(const std::string& path);

// The byte size of the variable `name` (mangled or C name) as the library declares it.
std::optional<uint64_t> declared_size(const std::string& path, const std::string& name);

}  // namespace mlc::dwarf
