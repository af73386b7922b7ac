// Provider mismatch: the loaded libtorch_cpu defines tens of thousands of at:: symbols but not the
// one an extension needs, or the driver's library defines PVRSRV* but not PVRSRVGetDevInfo. The
// symbol belongs to that library; the object was built against another version of it.
#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "common/paths.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "installed/installed.h"
#include "python/torch.h"
#include "report/said.h"
#include "verdict/verdict.h"

namespace mlc::installed {
namespace {

bool is_identifier(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// What a symbol's owner is looked up by: the mangled prefix of its class and of its top namespace
// ("2at18_GeneratorRegister", "2at"), or a C name's family ("PVRSRV" for PVRSRVGetDevInfo).
struct Family {
  std::vector<std::string> prefixes;  // innermost (class) first
  std::vector<std::string> labels;    // "class at::_GeneratorRegister", "namespace at", "PVRSRV*"
  bool cxx = true;
};

std::optional<Family> family_of(const UnresolvedSymbol& u) {
  Family f;
  if (demangle::is_mangled(u.symbol)) {
    demangle::SymbolName n = demangle::parse_symbol(u.symbol);
    if (n.scopes.empty() || n.scopes.front() == "std" || n.target) return std::nullopt;
    std::string prefix, label;
    std::vector<std::pair<std::string, std::string>> levels;
    for (const auto& s : n.scopes) {
      if (!is_identifier(s)) break;
      prefix += std::to_string(s.size()) + s;
      label += (label.empty() ? "" : "::") + s;
      levels.emplace_back(prefix, label);
    }
    if (levels.empty()) return std::nullopt;
    // The innermost scope (the class, or the deepest namespace), then the top namespace.
    f.prefixes.push_back(levels.back().first);
    f.labels.push_back(levels.back().second);
    if (levels.size() > 1) {
      f.prefixes.push_back(levels.front().first);
      f.labels.push_back("namespace " + levels.front().second);
    }
    return f;
  }
  // A C name: its leading run of capitals less the one that starts the next word (PVRSRV|GetDevInfo),
  // or its leading lower-case word (mcclAllReduce -> mccl).
  const std::string& s = u.symbol;
  size_t i = 0;
  if (!s.empty() && std::isupper(static_cast<unsigned char>(s[0]))) {
    while (i < s.size() && std::isupper(static_cast<unsigned char>(s[i]))) ++i;
    if (i < s.size() && std::islower(static_cast<unsigned char>(s[i]))) --i;
  } else {
    while (i < s.size() && std::islower(static_cast<unsigned char>(s[i]))) ++i;
    if (i == s.size()) return std::nullopt;
  }
  if (i < 3) return std::nullopt;
  f.cxx = false;
  f.prefixes.push_back(s.substr(0, i));
  f.labels.push_back(s.substr(0, i) + "*");
  return f;
}

// Whether an exported name belongs to the family: a mangled name whose nested name starts with the
// prefix (_ZN2at..., _ZNK2at..., _ZTVN2at...), or a C name starting with it.
bool member_of(std::string_view name, const std::string& prefix, bool cxx) {
  if (!cxx) return name.rfind(prefix, 0) == 0 && name.size() > prefix.size();
  if (name.rfind("_Z", 0) != 0) return false;
  size_t pos = name.find(prefix);
  return pos != std::string_view::npos && pos >= 3 && pos <= 6 && (name[pos - 1] == 'N' || name[pos - 1] == 'K');
}

struct Owner {
  int object = -1;
  size_t members = 0;  // how many names of the family it defines
  size_t level = 0;    // index into Family::prefixes
};

// The exported names of one loaded object (defined, global/weak, default or protected visibility).
template <typename F>
void for_each_export(const elf::ElfObject& o, F&& f) {
  size_t n = o.dynamic_symbol_count();
  for (size_t i = 1; i < n; ++i) {
    elf::Symbol s = o.dynamic_symbol(i);
    if (s.is_undefined() || s.binding == elf::Binding::Local ||
        (s.visibility != elf::Visibility::Default && s.visibility != elf::Visibility::Protected) || s.version_hidden)
      continue;
    std::string_view name = o.name_of(s);
    if (!name.empty()) f(name);
  }
}

}  // namespace

std::string soname_version(const std::string& name) {
  size_t so = name.find(".so.");
  return so == std::string::npos ? "" : name.substr(so + 4);
}

namespace {

// An unresolved symbol that may be a provider mismatch, with the family its owner is looked up by.
struct Item {
  UnresolvedSymbol* u;
  const loader::UnresolvedRef* ref;
  Family family;
};

// What one object misses from one owner: the owner's names and the fix, for the grouped cause.
struct Group {
  std::vector<UnresolvedSymbol*> symbols;
  std::string soname, who, path, holder, torch;
  SaidPtr fix;
};

using FamilyCounts = std::map<std::pair<std::string, bool>, std::vector<size_t>>;  // (prefix, cxx) -> per object

// The symbols no library defines that are still unexplained (or an ABI mismatch other than
// _GLIBCXX_USE_CXX11_ABI), and not traced to a source, whose name gives a family.
std::vector<Item> candidates(std::vector<trace::SymbolFinding>& symbols) {
  std::vector<Item> items;
  for (auto& symbol : symbols) {
    const auto* ref = &symbol.ref;
    auto* u = &symbol.symbol;
    if (u->cause || ref->miss != loader::Miss::NoDefinition) continue;
    bool abi = verdict::current(*u) == Classification::AbiMismatch &&
               std::none_of(u->suggestions.begin(), u->suggestions.end(),
                            [](const Suggestion& s) { return s.reason == SuggestionReason::Cxx11Abi; });
    if (verdict::current(*u) != Classification::Unknown && !abi) continue;
    if (verdict::current(*u) == Classification::Unknown && u->origin) continue;  // traced to a source: not a library's
    if (auto f = family_of(*u)) items.push_back({u, ref, std::move(*f)});
  }
  return items;
}

// One pass over each loaded object's exports counts every family's members.
FamilyCounts count_members(const loader::Process& p, const std::vector<Item>& items) {
  FamilyCounts counts;
  for (const auto& it : items)
    for (const auto& pre : it.family.prefixes) counts[{pre, it.family.cxx}].assign(p.objects.size(), 0);
  for (size_t o = 0; o < p.objects.size(); ++o) {
    for_each_export(p.objects[o].elf, [&](std::string_view name) {
      for (auto& [key, per] : counts)
        if (member_of(name, key.first, key.second)) ++per[o];
    });
  }
  return counts;
}

// The library that owns the symbol's family, innermost scope first; never the referencing object.
std::optional<Owner> owner_of(const Item& it, FamilyCounts& counts) {
  for (size_t level = 0; level < it.family.prefixes.size(); ++level) {
    const auto& per = counts[{it.family.prefixes[level], it.family.cxx}];
    size_t total = 0, best = 0;
    int who = -1;
    for (size_t o = 0; o < per.size(); ++o) {
      total += per[o];
      if (per[o] > best) best = per[o], who = static_cast<int>(o);
    }
    // A class: its members' home. A namespace or a C family: the library holding most of it, and
    // enough of it to be a library of that name space rather than a stray helper.
    bool enough = level == 0 && it.family.cxx && it.family.prefixes.size() > 1 ? best >= 1 : best >= 2;
    if (who >= 0 && enough && best * 2 > total && who != it.ref->object) return Owner{who, best, level};
  }
  return std::nullopt;
}

// The closest definitions the owner has: the same name with other parameters (up to three), else
// other members of the family (up to five), each list sorted.
void closest_definitions(const elf::ElfObject& lib, const Item& it, const Owner& owner, std::vector<std::string>& same,
                         std::vector<std::string>& members) {
  demangle::SymbolName want =
      demangle::is_mangled(it.u->symbol) ? demangle::parse_symbol(it.u->symbol) : demangle::SymbolName{};
  const std::string& prefix = it.family.prefixes[owner.level];
  for_each_export(lib, [&](std::string_view name) {
    if (same.size() >= 3 && members.size() >= 5) return;
    if (!member_of(name, prefix, it.family.cxx)) return;
    std::string n(name);
    if (it.family.cxx) {
      demangle::SymbolName got = demangle::parse_symbol(n);
      std::string text = got.demangled.empty() ? demangle::demangle(n) : got.demangled;
      if (got.name == want.name && got.scopes == want.scopes) {
        if (same.size() < 3 && std::find(same.begin(), same.end(), text) == same.end()) same.push_back(text);
      } else if (owner.level == 0 && members.size() < 5 &&
                 std::find(members.begin(), members.end(), text) == members.end()) {
        members.push_back(text);
      }
    } else if (members.size() < 5) {
      members.push_back(n);
    }
  });
  std::sort(same.begin(), same.end());
  std::sort(members.begin(), members.end());
}

// The owner as a reader knows it: its soname and version (else the real file's), and torch's
// version where the owner is libtorch.
struct OwnerVersion {
  std::string soname, version, torch, torch_file;
};

OwnerVersion version_of(const loader::LoadedObject& lib) {
  OwnerVersion v;
  v.soname = lib.elf.soname.empty() ? base_name(lib.path) : lib.elf.soname;
  v.version = soname_version(v.soname);
  std::string real_version = soname_version(base_name(lib.path));
  if (real_version.size() > v.version.size()) v.version = real_version;
  v.torch = python::torch_version_for(lib.path, &v.torch_file);
  return v;
}

// The finding becomes a provider mismatch: its reason, origin, fix and did-you-mean; `g` gathers it.
// The evidence of one provider mismatch: the symbol's family, the library that owns it and its version,
// the referencing file, and the definitions the owner has instead (same name, other members).
struct Mismatch {
  const Item& it;
  const Owner& owner;
  const loader::LoadedObject& lib;
  const OwnerVersion& v;
  std::string holder;
  std::vector<std::string> same, members;
};

void mark_mismatch(const Mismatch& m, Group& g) {
  UnresolvedSymbol& u = *m.it.u;
  const auto& [it, owner, lib, v, holder, same, members] = m;
  std::string who =
      v.soname + (v.version.empty() || soname_version(v.soname) == v.version ? "" : " (" + v.version + ")");
  if (v.version.empty() && v.torch.empty()) who += " (version unknown)";
  std::string torch_note = v.torch.empty() ? "" : ", torch " + v.torch + " (" + v.torch_file + ")";
  std::string family = owner.level == 0 && it.family.cxx && it.family.prefixes.size() > 1
                           ? "class " + it.family.labels[0]
                           : it.family.labels[owner.level];
  verdict::claim(u, EvidencePass::Provider, Classification::ProviderMismatch);
  say(u, said::ProviderLacks{.soname = v.soname,
                             .library = lib.path,
                             .torch_note = torch_note,
                             .members = owner.members,
                             .family = family,
                             .same = same,
                             .members_shown = members});
  u.origin = Origin{.file = lib.path,
                    .line = std::nullopt,
                    .kind = OriginKind::Library,
                    .library = lib.path,
                    .ported_from = std::nullopt};
  u.fix = Fix{.kind = FixKind::RebuildAbi,
              .cmake_file = std::nullopt,
              .list = std::nullopt,
              .entry = std::nullopt,
              .library = lib.path,
              .why = saying(said::InstallProviderBuiltAgainst{
                  .soname = v.soname, .torch = v.torch, .holder = holder, .who = who})};
  g.symbols.push_back(&u);
  g.soname = v.soname;
  g.who = who;
  g.path = lib.path;
  g.holder = holder;
  g.fix = u.fix->why;
  g.torch = v.torch;
  // A constructor's complete and base-object variants (C1, C2) read alike: one did-you-mean each.
  std::vector<Suggestion> unique;
  for (auto& s : u.suggestions)
    if (std::none_of(unique.begin(), unique.end(), [&](const Suggestion& k) { return k.demangled == s.demangled; }))
      unique.push_back(std::move(s));
  u.suggestions = std::move(unique);
  // The definitions it has stay as suggestions (did you mean), with the drift's reason when known.
  if (u.suggestions.empty()) {
    for (const auto& s : same)
      u.suggestions.push_back(
          {.symbol = "", .demangled = s, .library = lib.path, .reason = SuggestionReason::Signature});
  }
}

// Many symbols one object misses from one owner are one cause: the version it was built against.
void add_group_causes(std::map<std::pair<int, int>, Group>& groups, CauseList& causes) {
  for (auto& [key, g] : groups) {
    if (g.symbols.size() < 2) continue;
    Cause c;
    c.kind = CauseKind::ProviderMismatch;
    c.library = g.soname;
    c.symbols = g.symbols.size();
    c.headline_why = saying(said::ProviderLacksMany{.holder = g.holder,
                                                    .soname = g.soname,
                                                    .who = g.who,
                                                    .path = g.path,
                                                    .torch = g.torch,
                                                    .symbols = g.symbols.size()});
    c.fix_why = g.fix;
    const std::string& id = causes.add(std::move(c)).id;
    for (UnresolvedSymbol* u : g.symbols) u->cause = id;
  }
}

}  // namespace

// The passes: candidates, their families' members counted per loaded object, each candidate's owner
// and closest definitions, then one cause per (object, owner) pair missing several.
void find_provider_mismatch(const loader::Process& p, std::vector<trace::SymbolFinding>& symbols, CauseList& causes,
                            const build::Model* build) {
  std::vector<Item> items = candidates(symbols);
  if (items.empty()) return;
  std::map<std::pair<int, int>, Group> groups;  // (referencing object, owner) -> what it misses
  FamilyCounts counts = count_members(p, items);
  for (auto& it : items) {
    std::optional<Owner> owner = owner_of(it, counts);
    if (!owner) continue;
    const auto& lib = p.objects[owner->object];
    OwnerVersion v = version_of(lib);
    if (verdict::current(*it.u) == Classification::AbiMismatch && v.version.empty() && v.torch.empty()) continue;
    std::vector<std::string> same, members;
    closest_definitions(lib.elf, it, *owner, same, members);
    // Only neighbours in its scope, in a library the same build makes: no evidence of another version
    // (the symbol belongs to a source that build leaves out, here or there).
    if (it.family.cxx && same.empty() && build && build->target_for_artifact(lib.path)) continue;
    mark_mismatch({.it = it,
                   .owner = *owner,
                   .lib = lib,
                   .v = v,
                   .holder = base_name(p.objects[it.ref->object].path),
                   .same = std::move(same),
                   .members = std::move(members)},
                  groups[{it.ref->object, owner->object}]);
  }
  add_group_causes(groups, causes);
}

}  // namespace mlc::installed
