// musa-linkcheck explain: where one symbol comes from in each named library's process, and why
// there - the object ld.so binds the reference to and how the loader found that object - or why
// nothing does (then the linkcheck finding, traced, says it). Also: is the name a symbol name at all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loader/loader.h"

namespace mlc::explain {

// What explain can say about one symbol in one library's process.
struct SymbolBinding {
  std::string library;  // the named file (the process's main object)
  std::string symbol;   // the mangled name the library references (the asked name when unreferenced)
  enum class State { Resolved, Unresolved, Unreferenced } state = State::Unreferenced;
  bool weak = false;
  // Resolved: the object that defines it, its soname (the file name without one) and how the
  // loader found it (ld.so.cache, runpath, with...).
  std::string provider, provider_name;
  loader::FoundHow how = loader::FoundHow::Direct;
  // Unreferenced: the library's references (demangled) of the same function under another spelling
  // ("char const*" for "const char*", an overload of a bare name), for "did you mean ...".
  std::vector<std::string> near;
};

// `symbol` as typed (mangled, or demangled: matched against each reference's demangled name) in the
// process of one named file, as the link check loaded it (LinkcheckOptions::inspect): its findings
// and its binding come from one load, in one environment. The named file's relocations must be read.
SymbolBinding binding_in(const std::string& symbol, const loader::Process& process);

// Why a typed name cannot be a symbol (empty when it can): unbalanced brackets, control bytes, an
// empty name. A mangled name is always accepted (the demangler decides what it means).
std::string malformed_reason(const std::string& symbol);

// The human lines for one binding, lld-style (">>> ..."), ending in a newline.
std::string describe(const SymbolBinding& b, const std::string& shown_name);

}  // namespace mlc::explain
