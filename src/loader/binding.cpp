// Symbol lookup as glibc's dl-lookup.c does it. Only the names the checked objects need are indexed,
// so a 284-library closure costs one pass over each .dynsym plus one hash probe per reference.
#include "loader/binding.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <tbb/parallel_for.h>

namespace mlc::loader {
namespace {

using elf::Binding;
using elf::Symbol;
using elf::SymbolType;
using elf::Visibility;

struct Def {
  int object;
  uint32_t index;
};

bool counts_as_reference(const elf::ElfObject& o, const Symbol& s) {
  // Weak undefined references never fail (glibc leaves them 0); only relocated names matter.
  return s.is_undefined() && !s.name.empty() && (s.binding == Binding::Global || s.binding == Binding::GnuUnique) &&
         (!o.has_relocation_info || s.relocated);
}

// check_match's tests that do not involve versions.
enum class Usable { Yes, Local, NoValue };
Usable usable(const Symbol& s) {
  switch (s.type) {
    case SymbolType::NoType:
    case SymbolType::Object:
    case SymbolType::Func:
    case SymbolType::Common:
    case SymbolType::Tls:
    case SymbolType::GnuIfunc: break;
    default: return Usable::NoValue;
  }
  if (s.value == 0 && s.shndx != elf::kShnAbs && s.type != SymbolType::Tls) return Usable::NoValue;
  if (s.binding == Binding::Local || s.binding == Binding::Other) return Usable::Local;
  // "Hidden and internal symbols are local, ignore them."
  if (s.visibility == Visibility::Hidden || s.visibility == Visibility::Internal) return Usable::Local;
  return Usable::Yes;
}

// The name glibc records for a definition's version index: none for the base version or for indexes
// without a Verdef (their hash is 0 in l_versions).
std::string_view named_version(const elf::ElfObject& o, uint16_t index) {
  const auto* d = o.definition(index);
  return d && !d->is_base ? d->name : std::string_view();
}

int find_loaded(const Process& p, std::string_view name) {
  for (size_t i = 0; i < p.objects.size(); ++i) {
    for (const auto& n : p.objects[i].names)
      if (n == name) return static_cast<int>(i);
    if (p.objects[i].elf.soname == name) return static_cast<int>(i);
  }
  return -1;
}

struct Lookup {
  bool found = false;
  bool wrong_version = false;
  bool hidden_version = false;
  bool hidden_visibility = false;
  std::vector<int> near;
};

// One object's candidates for one reference (do_lookup_x's loop over one map).
void match_in_object(const elf::ElfObject& def_obj, const std::vector<Def>& defs, size_t begin, size_t end,
                     const elf::VersionRequirement* version, Lookup& out) {
  int versioned_count = 0;
  for (size_t k = begin; k < end; ++k) {
    const Symbol& d = def_obj.dynamic_symbols[defs[k].index];
    Usable u = usable(d);
    if (u == Usable::Local) out.hidden_visibility = true;
    if (u != Usable::Yes) continue;
    if (!def_obj.has_versym) {
      out.found = true;
      return;
    }
    if (version) {
      std::string_view have = named_version(def_obj, d.version_index);
      if (have == version->name) {
        out.found = true;
        return;
      }
      // An unnamed (base/global) non-hidden definition also satisfies a versioned reference.
      if (have.empty() && !version->hidden && !d.version_hidden) {
        out.found = true;
        return;
      }
      (d.version_hidden ? out.hidden_version : out.wrong_version) = true;
    } else {
      // An unversioned reference takes index 0..2 directly; a later version only when it is the one
      // non-hidden versioned definition in this object.
      if (d.version_index < 3) {
        out.found = true;
        return;
      }
      if (d.version_hidden) {
        out.hidden_version = true;
      } else {
        ++versioned_count;
      }
    }
  }
  if (versioned_count == 1) {
    out.found = true;
    return;
  }
  if (versioned_count > 1) out.wrong_version = true;
}

}  // namespace

BindOutcome bind(const Process& p, const std::vector<int>& checked) {
  BindOutcome result;
  std::unordered_set<std::string_view> wanted;
  for (int i : checked) {
    const auto& o = p.objects[i].elf;
    for (size_t s = 1; s < o.dynamic_symbols.size(); ++s) {
      if (counts_as_reference(o, o.dynamic_symbols[s])) wanted.insert(o.dynamic_symbols[s].name);
    }
  }

  // Definitions of the wanted names, in global-scope (load) order. Scanning every .dynsym is the
  // bulk of the work; objects are scanned in parallel and the hits merged in load order.
  std::vector<std::vector<std::pair<std::string_view, Def>>> hits(p.objects.size());
  tbb::parallel_for(size_t{0}, p.objects.size(), [&](size_t i) {
    const auto& syms = p.objects[i].elf.dynamic_symbols;
    for (size_t s = 1; s < syms.size(); ++s) {
      if (!syms[s].is_undefined() && wanted.count(syms[s].name)) {
        hits[i].push_back({syms[s].name, {static_cast<int>(i), static_cast<uint32_t>(s)}});
      }
    }
  });
  std::unordered_map<std::string_view, std::vector<Def>> defs;
  defs.reserve(wanted.size());
  for (const auto& object_hits : hits)
    for (const auto& [name, def] : object_hits) defs[name].push_back(def);

  for (int i : checked) {
    const auto& o = p.objects[i].elf;
    for (size_t s = 1; s < o.dynamic_symbols.size(); ++s) {
      const Symbol& ref = o.dynamic_symbols[s];
      if (!counts_as_reference(o, ref)) continue;
      const elf::VersionRequirement* version = nullptr;
      if (o.has_versym && ref.version_index >= 2) version = o.requirement(ref.version_index);

      Lookup look;
      if (auto it = defs.find(ref.name); it != defs.end()) {
        const auto& list = it->second;
        for (size_t begin = 0; begin < list.size() && !look.found;) {
          size_t end = begin;
          while (end < list.size() && list[end].object == list[begin].object) ++end;
          Lookup here;
          match_in_object(p.objects[list[begin].object].elf, list, begin, end, version, here);
          if (!here.found && (here.wrong_version || here.hidden_version || here.hidden_visibility)) {
            look.near.push_back(list[begin].object);
          }
          look.found = here.found;
          look.wrong_version |= here.wrong_version;
          look.hidden_version |= here.hidden_version;
          look.hidden_visibility |= here.hidden_visibility;
          begin = end;
        }
      }
      if (look.found) continue;

      UnresolvedRef u;
      u.object = i;
      u.symbol_index = s;
      u.name = ref.name;
      if (version) {
        u.version = version->name;
        u.version_file = version->file;
      }
      if (version && find_loaded(p, version->file) < 0) {
        u.miss = Miss::LibraryMissing;
      } else if (look.wrong_version) {
        u.miss = Miss::WrongVersion;
      } else if (look.hidden_version) {
        u.miss = Miss::HiddenVersion;
      } else if (look.hidden_visibility) {
        u.miss = Miss::HiddenVisibility;
      }
      u.near_definitions = std::move(look.near);
      result.unresolved.push_back(std::move(u));
    }
  }

  // dl-version.c: every Vernaux must name a Verdef of the loaded file it is required from.
  for (int i : checked) {
    const auto& o = p.objects[i].elf;
    for (const auto& req : o.version_requirements) {
      int provider = find_loaded(p, req.file);
      if (provider < 0) continue;  // the missing library is its own finding
      const auto& pe = p.objects[provider].elf;
      if (!pe.has_verdef) continue;  // glibc only warns: "no version information available"
      bool present = std::any_of(pe.version_definitions.begin(), pe.version_definitions.end(),
                                 [&](const elf::VersionDefinition& d) { return d.name == req.name; });
      if (!present) result.missing_versions.push_back({i, std::string(req.name), std::string(req.file), provider, req.weak});
    }
  }
  return result;
}

}  // namespace mlc::loader
