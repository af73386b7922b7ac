// The structure of a demangled C++ name: enclosing scopes, the entity's own name, template
// arguments, return type (templates encode it), parameter types and method qualifiers, or the
// special kind (vtable, typeinfo...). Tracing matches these pieces against source declarations.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlc::demangle {

enum class NameKind {
  CName,  // not mangled: a C symbol
  Function,
  Data,           // a variable or static data member
  VTable,         // "vtable for X" (and VTT, construction vtable)
  TypeInfo,       // "typeinfo for X", "typeinfo name for X"
  GuardVariable,  // "guard variable for X"
  Thunk,          // "non-virtual thunk to X", "virtual thunk to X"...
  Other,
};

struct SymbolName {
  NameKind kind = NameKind::Other;
  std::string demangled;
  std::vector<std::string> scopes;         // enclosing namespaces and classes, as printed ("at", "musa", "cub")
  std::string name;                        // "exclusive_sum_in_common_type", "Foo", "~Foo", "operator()"
  std::vector<std::string> template_args;  // "int", "int"
  std::optional<std::string> return_type;  // present for function templates
  std::vector<std::string> params;         // printed parameter types
  std::string method_qualifiers;           // " const", " &&"...
  std::optional<std::string> target;       // for vtable/typeinfo/guard/thunk: the entity it is about
  bool is_constructor = false;
  bool is_destructor = false;

  // "at::musa::cub::exclusive_sum_in_common_type" (no template arguments on the last component).
  std::string qualified() const;
};

// Parses the demangled form (as produced by demangle()). Never fails: unparseable names come back
// as NameKind::Other with only `demangled` set.
SymbolName parse_symbol(std::string_view mangled);

// The same for a name a person typed in demangled form ("at::native::f(long)", "vtable for X").
// A plain identifier is taken as a C name.
SymbolName parse_demangled(std::string_view demangled);

// Splits "a, b<c, d>, e" at top-level commas; also used for parameter lists written in sources.
std::vector<std::string> split_top_level(std::string_view list, char separator = ',');

}  // namespace mlc::demangle
