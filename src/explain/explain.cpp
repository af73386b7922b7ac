// musa-linkcheck explain's answer for a symbol that is bound or not referenced at all: the one
// reference is followed to its definition, in the process the link check made for each library
// (LinkcheckOptions::inspect), with the binding pass's own rules (loader::bind_one).
#include "explain/explain.h"

#include <algorithm>
#include <filesystem>

#include "common/text.h"
#include "demangle/demangle.h"
#include "loader/binding.h"

namespace mlc::explain {

std::string malformed_reason(const std::string& symbol) {
  if (symbol.empty()) return "an empty name";
  for (unsigned char c : symbol)
    if (c < 0x20 || c == 0x7f) return "a control character in the name";
  if (demangle::is_mangled(symbol)) return "";
  // Demangled spellings nest (), <> and []: "at::f(int" or "std::vector<int" was cut short. In
  // "operator<" and "operator->" the bracket is part of a name, not a nesting.
  std::string text = symbol;
  for (const char* op :
       {"operator<<=", "operator>>=", "operator<<", "operator>>", "operator<=>",
        "operator<=", "operator>=", "operator->*", "operator->", "operator<", "operator>", "operator()", "operator[]"})
    for (size_t at = text.find(op); at != std::string::npos; at = text.find(op, at))
      text.replace(at, std::string(op).size(), "operator");
  std::string open;
  for (char c : text) {
    if (c == '(' || c == '<' || c == '[') {
      open.push_back(c);
    } else if (c == ')' || c == '>' || c == ']') {
      char want = c == ')' ? '(' : c == '>' ? '<' : '[';
      if (open.empty() || open.back() != want) return std::string("an unmatched '") + c + "'";
      open.pop_back();
    }
  }
  if (!open.empty()) return std::string("an unclosed '") + open.back() + "'";
  return "";
}

namespace {

// A demangled function's qualified name, without its return type, parameters or template arguments:
// "void at::cub::sum<int>(int const*)" -> "at::cub::sum"; a plain name stays itself.
std::string base_name(const std::string& demangled) {
  std::string out;
  int depth = 0;
  for (char c : demangled) {
    if (c == '<') {
      ++depth;
    } else if (c == '>') {
      --depth;
    } else if (depth == 0 && c == '(') {
      break;
    } else if (depth == 0 && c == ' ') {
      out.clear();  // what came before was a return type
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

// The references of `target` that are `typed` under another spelling: the same qualified name (or
// the typed one is its unqualified tail), whatever the parameters' spelling.
std::vector<std::string> near_references(const elf::ElfObject& o, const std::string& typed) {
  const std::string want = base_name(typed);
  std::vector<std::string> out;
  if (want.empty()) return out;
  for (size_t s = 1; s < o.dynamic_symbol_count(); ++s) {
    auto sym = o.dynamic_symbol(s);
    if (!sym.is_undefined()) continue;
    std::string name(o.name_of(sym));
    std::string shown = demangle::is_mangled(name) ? demangle::demangle(name) : name;
    std::string base = base_name(shown);
    if (shown != typed && (base == want || (base.size() > want.size() && base.ends_with("::" + want))) &&
        std::find(out.begin(), out.end(), shown) == out.end())
      out.push_back(shown);
  }
  return out;
}

}  // namespace

SymbolBinding binding_in(const std::string& symbol, const loader::Process& p) {
  const bool mangled = demangle::is_mangled(symbol) || symbol.find_first_of(":( <") == std::string::npos;
  const auto& target = p.objects[p.target];
  SymbolBinding b;
  b.library = target.path;
  b.symbol = symbol;
  // The name as the library spells it: the asked name, or the reference whose demangling it is.
  std::string name = symbol;
  if (!mangled) {
    const auto& o = target.elf;
    for (size_t s = 1; s < o.dynamic_symbol_count(); ++s) {
      auto sym = o.dynamic_symbol(s);
      if (!sym.is_undefined()) continue;
      std::string candidate(o.name_of(sym));
      if (demangle::is_mangled(candidate) && demangle::demangle(candidate) == symbol) {
        name = candidate;
        break;
      }
    }
  }
  loader::OneBinding one = loader::bind_one(p, p.target, name);
  if (one.referencing >= 0) {
    b.symbol = name;
    b.weak = one.weak;
    b.state = one.provider >= 0 ? SymbolBinding::State::Resolved : SymbolBinding::State::Unresolved;
    if (one.provider >= 0) {
      const auto& def = p.objects[one.provider];
      b.provider = def.path;
      b.provider_name = def.elf.soname.empty() ? std::filesystem::path(def.path).filename().string() : def.elf.soname;
      b.how = def.how;
    }
  }
  if (b.state == SymbolBinding::State::Unreferenced) b.near = near_references(target.elf, symbol);
  return b;
}

std::string describe(const SymbolBinding& b, const std::string& shown_name) {
  switch (b.state) {
    case SymbolBinding::State::Resolved: {
      std::string how = b.how == loader::FoundHow::Direct ? "it is the file named"
                        : b.how == loader::FoundHow::With ? "it was loaded first (--with)"
                                                          : "found through " + std::string(loader::to_string(b.how));
      return shown_name + "\n>>> referenced by " + b.library + (b.weak ? " (weak)" : "") + "\n>>> resolved by " +
             b.provider_name + " (" + b.provider + "), " + how + "\n";
    }
    case SymbolBinding::State::Unreferenced: {
      if (b.near.empty()) return shown_name + "\n>>> not referenced by " + b.library + ": nothing there needs it\n";
      std::vector<std::string> quoted;
      for (const auto& n : b.near) quoted.push_back("'" + n + "'");
      return shown_name + "\n>>> no exact match in " + b.library + "; did you mean " + join_list(quoted) + "?\n";
    }
    case SymbolBinding::State::Unresolved: return "";  // the traced finding says it
  }
  return "";
}

}  // namespace mlc::explain
