// Candidates are found by the source-name token a mangled name must contain ("18_GeneratorRegister"),
// so the pass costs one substring scan over the exported names, then a demangle of the few hits.
#include "trace/suggest.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <deque>
#include <unordered_map>
#include <map>
#include <set>

#include "demangle/demangle.h"
#include "demangle/symbol_name.h"

namespace mlc::trace {
namespace {

bool exported(const elf::Symbol& s) {
  return !s.is_undefined() && (s.name_offset != 0 || !s.name.empty()) &&
         (s.binding == elf::Binding::Global || s.binding == elf::Binding::Weak || s.binding == elf::Binding::GnuUnique) &&
         s.visibility != elf::Visibility::Hidden && s.visibility != elf::Visibility::Internal;
}

std::string without(std::string s, const std::string& what) {
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what)) s.erase(p, what.size());
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += x + ",";
  return out;
}

// Why `have` is a plausible meaning of `want`, or "" when it is not.
std::string relation(const std::string& want_mangled, const demangle::SymbolName& want, const std::string& have_mangled,
                     const demangle::SymbolName& have) {
  if (without(want_mangled, "B5cxx11") == without(have_mangled, "B5cxx11")) return "cxx11-abi";
  if (want.kind != have.kind) return "";
  if (want.qualified() == have.qualified()) {
    if (want.params == have.params && want.method_qualifiers != have.method_qualifiers) return "const";
    if (join(want.params) != join(have.params)) {
      auto strip = [](std::vector<std::string> ps) {
        for (auto& p : ps) p = without(without(p, " const"), "const ");
        return join(ps);
      };
      return strip(want.params) == strip(have.params) ? "const" : "signature";
    }
    return "";
  }
  if (want.name == have.name && join(want.params) == join(have.params) && want.scopes.size() == have.scopes.size()) {
    return "namespace";
  }
  return "";
}

}  // namespace

// Calls fn(token) for every "<length><identifier>" source-name token in a mangled name. Numbers that
// are not lengths (template literals, discriminators) give junk tokens, which simply match nothing.
template <typename Fn>
void for_each_source_name(std::string_view m, Fn&& fn) {
  for (size_t i = 0; i < m.size();) {
    if (!std::isdigit(static_cast<unsigned char>(m[i])) || (i > 0 && std::isdigit(static_cast<unsigned char>(m[i - 1])))) {
      ++i;
      continue;
    }
    size_t j = i, n = 0;
    while (j < m.size() && std::isdigit(static_cast<unsigned char>(m[j])) && n < 100000) n = n * 10 + (m[j++] - '0');
    if (n > 0 && j + n <= m.size()) {
      fn(m.substr(i, j - i + n));
      i = j + n;
    } else {
      i = j;
    }
  }
}

void suggest(const loader::Process& process, const std::vector<UnresolvedSymbol*>& symbols) {
  // C++ symbols by the length-prefixed source name their definitions must contain; C symbols by
  // name (a C++ definition of that name means extern "C" was forgotten); C++ free functions in the
  // global namespace by plain name (a C definition means extern "C" where C++ was meant).
  // Keys are views into `keys`, so the scan below looks tokens up without allocating.
  std::deque<std::string> keys;
  auto key = [&](std::string k) -> std::string_view { return keys.emplace_back(std::move(k)); };
  std::unordered_map<std::string_view, std::vector<UnresolvedSymbol*>> by_token;
  std::unordered_map<std::string_view, std::vector<UnresolvedSymbol*>> by_c_name;
  std::map<UnresolvedSymbol*, demangle::SymbolName> parsed;
  for (auto* u : symbols) {
    if (!demangle::is_mangled(u->symbol)) {
      by_token[key(std::to_string(u->symbol.size()) + u->symbol)].push_back(u);
      continue;
    }
    auto sym = demangle::parse_symbol(u->symbol);
    std::string name = sym.is_constructor || sym.is_destructor ? (sym.scopes.empty() ? "" : sym.scopes.back()) : sym.name;
    if (auto lt = name.find('<'); lt != std::string::npos) name = name.substr(0, lt);
    if (name.empty() || name.rfind("operator", 0) == 0 || name[0] == '~') continue;
    by_token[key(std::to_string(name.size()) + name)].push_back(u);
    if (sym.scopes.empty() && sym.kind == demangle::NameKind::Function) by_c_name[key(name)].push_back(u);
    parsed[u] = sym;
  }
  if (by_token.empty()) return;
  // A cheap filter before hashing: (identifier length, first character) pairs that some token has.
  std::vector<std::bitset<256>> maybe(512);
  for (const auto& [token, us] : by_token) {
    size_t digits = 0;
    while (digits < token.size() && std::isdigit(static_cast<unsigned char>(token[digits]))) ++digits;
    size_t len = token.size() - digits;
    if (len < maybe.size() && digits < token.size()) maybe[len].set(static_cast<unsigned char>(token[digits]));
  }
  std::set<std::pair<UnresolvedSymbol*, std::string>> seen;
  auto add = [&](UnresolvedSymbol* u, std::string_view name, const std::string& demangled, const std::string& lib,
                 const std::string& why) {
    if (u->suggestions.size() >= 3 || !seen.insert({u, std::string(name)}).second) return;
    u->suggestions.push_back({std::string(name), demangled, lib, why});
  };
  for (const auto& obj : process.objects) {
    for (size_t i = 1; i < obj.elf.dynamic_symbol_count(); ++i) {
      const auto def = obj.elf.dynamic_symbol(i);
      if (!exported(def)) continue;
      std::string_view name = obj.elf.name_of(def);
      if (!demangle::is_mangled(name)) {
        if (auto it = by_c_name.find(name); it != by_c_name.end()) {
          for (auto* u : it->second) add(u, name, std::string(name), obj.path, "extern-c");
        }
        continue;
      }
      std::vector<UnresolvedSymbol*> hits;
      for_each_source_name(name, [&](std::string_view token) {
        size_t digits = 0;
        while (std::isdigit(static_cast<unsigned char>(token[digits]))) ++digits;
        size_t len = token.size() - digits;
        if (len >= maybe.size() || !maybe[len].test(static_cast<unsigned char>(token[digits]))) return;
        if (auto it = by_token.find(token); it != by_token.end()) hits.insert(hits.end(), it->second.begin(), it->second.end());
      });
      if (hits.empty()) continue;
      auto have = demangle::parse_symbol(name);
      for (auto* u : hits) {
        if (!demangle::is_mangled(u->symbol)) {
          if (have.kind == demangle::NameKind::Function && have.name == u->symbol && have.scopes.empty()) {
            add(u, name, have.demangled, obj.path, "extern-c");
          }
          continue;
        }
        std::string why = relation(u->symbol, parsed[u], std::string(name), have);
        if (!why.empty()) add(u, name, have.demangled, obj.path, why);
      }
    }
  }
  for (auto* u : symbols) {
    auto it = std::find_if(u->suggestions.begin(), u->suggestions.end(), [](const Suggestion& s) {
      return s.reason == "signature" || s.reason == "const" || s.reason == "cxx11-abi";
    });
    if (it == u->suggestions.end() || u->classification != Classification::Unknown) continue;
    // The same function, compiled against other headers: ABI drift between the two builds.
    u->classification = Classification::AbiMismatch;
    u->reason = it->library + " defines " + it->demangled + " (" + it->reason +
                "): the caller was compiled against other headers than the library that is loaded";
    u->origin = Origin{it->library, std::nullopt, "library", it->library, std::nullopt};
    u->fix = Fix{"rebuild-abi", {}, {}, {}, it->library,
                 "rebuild against the headers of the loaded " + it->library.substr(it->library.rfind('/') + 1) +
                     " (or load the version it was built against)"};
  }
}

}  // namespace mlc::trace
