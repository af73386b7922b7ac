// Demangling through libiberty, with the same flags and style selection as binutils' c++filt, so
// every name we print is the one a developer would get by piping the mangled name through c++filt.
#pragma once

#include <string>
#include <string_view>

namespace mlc::demangle {

// The demangled form of a symbol name; the name itself when it is not mangled (C symbols).
std::string demangle(std::string_view mangled);

// True when the name is an Itanium C++ ABI mangled name.
bool is_mangled(std::string_view name);

}  // namespace mlc::demangle
