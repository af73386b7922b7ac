// Candidates are found by the source-name token a mangled name must contain ("18_GeneratorRegister"),
// so the pass costs one substring scan over the exported names, then a demangle of the few hits.
#include "trace/suggest.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "backend/backend.h"
#include "common/paths.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "report/said.h"
#include "source/source_index.h"
#include "verdict/verdict.h"

namespace mlc::trace {
namespace {

bool exported(const elf::Symbol& s) {
  return !s.is_undefined() && (s.name_offset != 0 || !s.name.empty()) &&
         (s.binding == elf::Binding::Global || s.binding == elf::Binding::Weak ||
          s.binding == elf::Binding::GnuUnique) &&
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

void replace_all(std::string& s, std::string_view what, std::string_view with) {
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + with.size()))
    s.replace(p, what.size(), with);
}

// The name with the two std::string ABIs spelled alike: what is left differs only if the two
// declarations differ in something else than _GLIBCXX_USE_CXX11_ABI.
std::string cxx11_neutral(std::string s) {
  for (const char* ch : {"char", "wchar_t", "char16_t", "char32_t", "char8_t"}) {
    std::string c = ch;
    std::string spelled = "basic_string<" + c + ", std::char_traits<" + c + ">, std::allocator<" + c + "> >";
    std::string alias = c == "char" ? "std::string" : c == "wchar_t" ? "std::wstring" : "std::basic_string<" + c + ">";
    replace_all(s, "std::__cxx11::" + spelled, alias);
    replace_all(s, "std::" + spelled, alias);
  }
  replace_all(s, "std::__cxx11::", "std::");
  replace_all(s, "[abi:cxx11]", "");
  return s;
}

// The parameter passed by value where the other side takes a reference ("T" against "T const&").
bool by_value_pair(const std::string& a, const std::string& b) {
  auto referee = [](const std::string& t) -> std::string {
    for (std::string_view suffix : {" const&", " const&&", "&&", "&"}) {
      if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return t.substr(0, t.size() - suffix.size());
      }
    }
    return {};
  };
  return referee(b) == a || referee(a) == b;
}

// Why `have` is a plausible meaning of `want`, or nothing when it is not.
std::optional<SuggestionReason> relation(const std::string& want_mangled, const demangle::SymbolName& want,
                                         const std::string& have_mangled, const demangle::SymbolName& have) {
  using R = SuggestionReason;
  if (without(want_mangled, "B5cxx11") == without(have_mangled, "B5cxx11")) return R::Cxx11Abi;
  if (want.kind != have.kind) return std::nullopt;
  if (want_mangled != have_mangled && want.kind != demangle::NameKind::Other &&
      cxx11_neutral(want.demangled) == cxx11_neutral(have.demangled)) {
    return R::Cxx11Abi;
  }
  if (want.qualified() == have.qualified()) {
    // Another instantiation of the same template (of the function, or of its class).
    if ((!want.template_args.empty() && want.template_args != have.template_args) || want.scopes != have.scopes) {
      return R::Instantiation;
    }
    if (want.params == have.params && want.method_qualifiers != have.method_qualifiers) return R::Const;
    if (join(want.params) != join(have.params)) {
      auto strip = [](std::vector<std::string> ps) {
        for (auto& p : ps) p = without(without(p, " const"), "const ");
        return join(ps);
      };
      if (want.params.size() == have.params.size() && want.method_qualifiers == have.method_qualifiers) {
        bool by_value = true;
        for (size_t i = 0; i < want.params.size() && by_value; ++i) {
          by_value = want.params[i] == have.params[i] || by_value_pair(want.params[i], have.params[i]);
        }
        if (by_value) return R::ByValue;
      }
      return strip(want.params) == strip(have.params) ? R::Const : R::Signature;
    }
    return std::nullopt;
  }
  if (want.name == have.name && join(want.params) == join(have.params) && want.scopes.size() == have.scopes.size()) {
    return R::Namespace;
  }
  return std::nullopt;
}

struct Instance {
  std::string symbol, demangled, where;  // where: the library, or file:line of an explicit instantiation
};
using Instances = std::vector<Instance>;

// Does a mangled name carry the C++11 string ABI (std::__cxx11::..., or the [abi:cxx11] tag)?
bool cxx11_abi(std::string_view mangled) {
  return mangled.find("St7__cxx11") != std::string_view::npos || mangled.find("B5cxx11") != std::string_view::npos;
}

// The first position where the two parameter lists differ (or the method qualifiers, as -1).
int first_difference(const demangle::SymbolName& want, const demangle::SymbolName& have) {
  for (size_t i = 0; i < want.params.size() && i < have.params.size(); ++i) {
    if (want.params[i] != have.params[i]) return static_cast<int>(i);
  }
  return -1;
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b);
}

// abi-mismatch: the same function with another signature; the reason and fix name the drift.
void explain_abi_mismatch(UnresolvedSymbol& u, const demangle::SymbolName& want, const Suggestion& s) {
  const std::string lib = base_name(s.library);
  verdict::claim(u, EvidencePass::NearMiss, Classification::AbiMismatch);
  u.origin = Origin{.file = s.library,
                    .line = std::nullopt,
                    .kind = OriginKind::Library,
                    .library = s.library,
                    .ported_from = std::nullopt};
  said::AbiDrift drift{.library = s.library,
                       .library_name = lib,
                       .demangled = s.demangled,
                       .reason = s.reason,
                       .kind = said::AbiDrift::Kind::Headers,
                       .caller_cxx11 = cxx11_abi(u.symbol),
                       .library_cxx11 = cxx11_abi(s.symbol),
                       .what = "",
                       .there = "",
                       .here = ""};
  if (s.reason == SuggestionReason::Cxx11Abi && drift.caller_cxx11 != drift.library_cxx11) {
    drift.kind = said::AbiDrift::Kind::StringAbi;
  } else if (s.reason == SuggestionReason::ByValue || s.reason == SuggestionReason::Const) {
    drift.kind = said::AbiDrift::Kind::Parameter;
    auto have = demangle::parse_symbol(s.symbol);
    int i = first_difference(want, have);
    if (i < 0) {
      drift.what = "the method";
      drift.there = have.method_qualifiers.empty() ? "non-const" : trimmed(have.method_qualifiers);
      drift.here = want.method_qualifiers.empty() ? "non-const" : trimmed(want.method_qualifiers);
    } else {
      drift.what = "parameter " + std::to_string(i + 1);
      drift.there = have.params[i];
      drift.here = want.params[i];
    }
  }
  say(u, drift);
  u.fix = Fix{.kind = FixKind::RebuildAbi,
              .cmake_file = {},
              .list = {},
              .entry = {},
              .library = s.library,
              .why = saying(said::RebuildForAbi{.drift = drift})};
}

// The explicit instantiation that provides `want`: the function template's own line, or its class.
std::string instantiation_line(const UnresolvedSymbol& u, const demangle::SymbolName& want) {
  if (want.template_args.empty()) {
    std::string cls;
    for (const auto& scope : want.scopes) {
      cls += (cls.empty() ? "" : "::") + scope;
      if (scope.find('<') != std::string::npos) return "template class " + cls + ";";
    }
  }
  return "template " + u.demangled + ";";
}

// missing-instantiation: other instantiations of the same template exist (in the loaded libraries
// or as explicit instantiations in the sources), this one does not. False when none is known.
bool explain_missing_instantiation(UnresolvedSymbol& u, const demangle::SymbolName& want, Instances found,
                                   const source::SourceIndex* sources) {
  bool is_template =
      !want.template_args.empty() || std::any_of(want.scopes.begin(), want.scopes.end(),
                                                 [](const auto& s) { return s.find('<') != std::string::npos; });
  // Tracing found this very instantiation in the sources: that is not a missing one.
  if (!is_template || (u.origin && u.origin->kind == OriginKind::ExplicitInstantiation)) return false;
  std::string own_args;
  for (const auto& a : want.template_args) own_args += (own_args.empty() ? "" : ", ") + a;
  std::optional<Origin> definition;
  if (u.origin && u.origin->kind == OriginKind::Definition) definition = u.origin;
  if (sources) {
    // The loaded instantiations are the stronger evidence; the index's explicit ones stand in for them.
    bool loaded = !found.empty();
    for (const auto* e : sources->lookup(want.name)) {
      if (e->qualified != want.qualified()) continue;
      const std::string& path = sources->file_of(*e).path;
      if (e->kind == source::EntityKind::ExplicitInstantiation && !e->template_args.empty() && !loaded) {
        std::string args = e->template_args;
        replace_all(args, std::string(1, source::kListSep), ", ");
        if (args == own_args) continue;
        found.push_back({.symbol = "",
                         .demangled = e->qualified + "<" + args + ">",
                         .where = path + ":" + std::to_string(e->line)});
      } else if (e->kind == source::EntityKind::FunctionDefinition && e->is_template && !definition) {
        definition = Origin{.file = path,
                            .line = static_cast<int>(e->line),
                            .kind = OriginKind::Definition,
                            .library = std::nullopt,
                            .ported_from = std::nullopt};
      }
    }
  }
  if (found.empty()) return false;
  std::sort(found.begin(), found.end(), [](const Instance& a, const Instance& b) { return a.demangled < b.demangled; });
  found.erase(std::unique(found.begin(), found.end(),
                          [](const Instance& a, const Instance& b) { return a.demangled == b.demangled; }),
              found.end());
  std::optional<std::string> library;
  for (const auto& f : found) {
    if (!f.symbol.empty()) library = f.where;
  }
  said::OtherInstantiationsOnly others{.demangled = u.demangled,
                                       .library_name = library ? base_name(*library) : "",
                                       .instances = {},
                                       .more = found.size() > 8 ? found.size() - 8 : 0,
                                       .definition = ""};
  for (size_t i = 0; i < found.size() && i < 8; ++i)
    others.instances.push_back({.demangled = found[i].demangled, .at = found[i].symbol.empty() ? found[i].where : ""});
  if (definition)
    others.definition = definition->file + (definition->line ? ":" + std::to_string(*definition->line) : "");
  std::string line = instantiation_line(u, want);
  verdict::claim(u, EvidencePass::NearMiss, Classification::MissingInstantiation);
  say(u, std::move(others));
  u.origin = definition ? *definition
                        : Origin{.file = library.value_or(found.front().where),
                                 .line = std::nullopt,
                                 .kind = OriginKind::Library,
                                 .library = library,
                                 .ported_from = std::nullopt};
  if (definition) u.origin->library = library;
  u.suggestions.clear();
  for (const auto& f : found) {
    if (u.suggestions.size() < 3)
      u.suggestions.push_back({f.symbol, f.demangled, f.where, SuggestionReason::Instantiation});
  }
  u.fix = Fix{.kind = FixKind::AddInstantiation,
              .cmake_file = {},
              .list = {},
              .entry = {},
              .library = library,
              .why = saying(said::AddExplicitInstantiation{
                  .line = line,
                  .definition = definition ? definition->file : "",
                  .compiled = definition && source::is_compiled_source(definition->file, backend::file_kinds()),
                  .library_name = library ? base_name(*library) : ""})};
  return true;
}

}  // namespace

// Calls fn(token) for every "<length><identifier>" source-name token in a mangled name. Numbers that
// are not lengths (template literals, discriminators) give junk tokens, which simply match nothing.
template <typename Fn>
// A length right after a source name starts a new one even when that name ends in a digit: in
// _ZN3c106DeviceC1E..., "6Device" follows "3c10" (skipping it lost every near miss in c10::).
void for_each_source_name(std::string_view m, Fn&& fn) {
  bool after_name = false;
  for (size_t i = 0; i < m.size();) {
    if (!std::isdigit(static_cast<unsigned char>(m[i])) ||
        (!after_name && i > 0 && std::isdigit(static_cast<unsigned char>(m[i - 1])))) {
      ++i;
      after_name = false;
      continue;
    }
    size_t j = i, n = 0;
    while (j < m.size() && std::isdigit(static_cast<unsigned char>(m[j])) && n < 100000) n = n * 10 + (m[j++] - '0');
    if (n > 0 && j + n <= m.size()) {
      fn(m.substr(i, j - i + n));
      i = j + n;
      after_name = true;
    } else {
      i = j;
      after_name = false;
    }
  }
}

void suggest(const loader::Process& process, const std::vector<UnresolvedSymbol*>& symbols,
             const source::SourceIndex* sources) {
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
    std::string name =
        sym.is_constructor || sym.is_destructor ? (sym.scopes.empty() ? "" : sym.scopes.back()) : sym.name;
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
  std::map<UnresolvedSymbol*, Instances> instances;
  auto add = [&](UnresolvedSymbol* u, std::string_view name, const std::string& demangled, const std::string& lib,
                 SuggestionReason why) {
    // Told once per meaning: a constructor's complete and base objects (C1, C2) demangle alike.
    if (u->origin || u->suggestions.size() >= 3 || !seen.insert({u, demangled + "\n" + lib}).second) return;
    u->suggestions.push_back({std::string(name), demangled, lib, why});
  };
  for (const auto& obj : process.objects) {
    for (size_t i = 1; i < obj.elf.dynamic_symbol_count(); ++i) {
      const auto def = obj.elf.dynamic_symbol(i);
      if (!exported(def)) continue;
      std::string_view name = obj.elf.name_of(def);
      if (!demangle::is_mangled(name)) {
        if (auto it = by_c_name.find(name); it != by_c_name.end()) {
          for (auto* u : it->second) add(u, name, std::string(name), obj.path, SuggestionReason::ExternC);
        }
        continue;
      }
      std::vector<UnresolvedSymbol*> hits;
      for_each_source_name(name, [&](std::string_view token) {
        size_t digits = 0;
        while (std::isdigit(static_cast<unsigned char>(token[digits]))) ++digits;
        size_t len = token.size() - digits;
        if (len >= maybe.size() || !maybe[len].test(static_cast<unsigned char>(token[digits]))) return;
        if (auto it = by_token.find(token); it != by_token.end())
          hits.insert(hits.end(), it->second.begin(), it->second.end());
      });
      if (hits.empty()) continue;
      auto have = demangle::parse_symbol(name);
      for (auto* u : hits) {
        if (!demangle::is_mangled(u->symbol)) {
          if (have.kind == demangle::NameKind::Function && have.name == u->symbol && have.scopes.empty()) {
            add(u, name, have.demangled, obj.path, SuggestionReason::ExternC);
          }
          continue;
        }
        std::optional<SuggestionReason> why = relation(u->symbol, parsed[u], std::string(name), have);
        if (why == SuggestionReason::Instantiation) {
          instances[u].push_back({.symbol = std::string(name), .demangled = have.demangled, .where = obj.path});
        } else if (why && !u->origin) {
          add(u, name, have.demangled, obj.path, *why);
        }
      }
    }
  }
  for (auto* u : symbols) {
    if (verdict::current(*u) != Classification::Unknown) continue;
    if (auto it = instances.find(u); it != instances.end() || (sources && u->origin)) {
      if (explain_missing_instantiation(*u, parsed[u], it == instances.end() ? Instances{} : it->second, sources))
        continue;
    }
    if (u->origin) continue;
    // Strongest evidence first: the string ABI names its flag; parameter and const drift name the parameter.
    const Suggestion* best = nullptr;
    for (SuggestionReason reason : {SuggestionReason::Cxx11Abi, SuggestionReason::ByValue, SuggestionReason::Const,
                                    SuggestionReason::Signature}) {
      for (const auto& s : u->suggestions) {
        if (!best && s.reason == reason) best = &s;
      }
    }
    if (best) explain_abi_mismatch(*u, parsed[u], *best);
  }
}

}  // namespace mlc::trace
