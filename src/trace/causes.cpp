// Shared causes. A stale copy found first on the search path (a conda libstdc++.so.6 on
// LD_LIBRARY_PATH) leaves thousands of references unresolved for one reason; the loader's other
// candidates for that soname show which copy would have satisfied them, so the reason is told once.
#include "trace/causes.h"

#include "build/model.h"
#include "trace/trace.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "common/paths.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "host/host_api.h"
#include "python/torch.h"
#include "report/said.h"
#include "verdict/verdict.h"

namespace mlc::trace {
namespace {

// GLIBCXX_3.4.9 before GLIBCXX_3.4.30: numbers compare as numbers.
bool version_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (isdigit(static_cast<unsigned char>(a[i])) && isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ei = i, ej = j;
      while (ei < a.size() && isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      unsigned long x = std::strtoul(a.substr(i, ei - i).c_str(), nullptr, 10),
                    y = std::strtoul(b.substr(j, ej - j).c_str(), nullptr, 10);
      if (x != y) return x < y;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// A candidate copy, read for its exported definitions: name -> the version names it carries them
// under ("" for the base version or an unversioned file).
struct CandidateCopy {
  loader::SearchAttempt where;
  std::optional<elf::ElfObject> elf;
  std::unordered_map<std::string_view, std::vector<std::string_view>> defs;
  std::set<std::string_view> versions;
};

bool exported_definition(const elf::Symbol& s) {
  return !s.is_undefined() && !s.name.empty() &&
         (s.binding == elf::Binding::Global || s.binding == elf::Binding::Weak ||
          s.binding == elf::Binding::GnuUnique) &&
         (s.visibility == elf::Visibility::Default || s.visibility == elf::Visibility::Protected) && !s.version_hidden;
}

void read_copy(CandidateCopy& c) {
  auto obj = elf::read_object(c.where.path, elf::ReadOptions{.static_symbols = false, .relocations = false});
  if (!obj) return;  // unreadable: simply not a candidate
  c.elf.emplace(std::move(obj).value());
  for (const auto& d : c.elf->version_definitions)
    if (!d.is_base) c.versions.insert(d.name);
  for (size_t i = 1; i < c.elf->dynamic_symbols.size(); ++i) {
    const auto& s = c.elf->dynamic_symbols[i];
    if (!exported_definition(s)) continue;
    const auto* d = c.elf->has_versym ? c.elf->definition(s.version_index) : nullptr;
    c.defs[s.name].push_back(d && !d->is_base ? d->name : std::string_view());
  }
}

bool satisfies(const CandidateCopy& c, std::string_view name, std::string_view version) {
  auto it = c.defs.find(name);
  if (it == c.defs.end()) return false;
  if (version.empty()) return true;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](std::string_view v) { return v.empty() || v == version; });
}

// Whether a loaded object exports `name` (at `version` when one is asked for).
bool picked_exports(const elf::ElfObject& o, std::string_view name, std::string_view version) {
  std::vector<uint32_t> found;
  o.find_defined(name, elf::gnu_hash(name), found);
  for (uint32_t i : found) {
    // A lazily read object (lookup_only) has no materialised table: dynamic_symbol reads the entry, with its
    // version index, from the raw .dynsym and .gnu.version (the version decides: libstdc++'s operator delete
    // at another node than the reference's is not what it missed).
    elf::Symbol sym = i < o.dynamic_symbols.size() ? o.dynamic_symbols[i] : o.dynamic_symbol(i);
    if (sym.name.empty()) sym.name = name;  // find_defined matched it by name
    if (!exported_definition(sym)) continue;
    if (version.empty()) return true;
    const auto* d = o.has_versym ? o.definition(sym.version_index) : nullptr;
    if (!d || d->is_base || d->name == version) return true;
  }
  return false;
}

bool has_version(const elf::ElfObject& o, std::string_view version) {
  return std::any_of(o.version_definitions.begin(), o.version_definitions.end(),
                     [&](const elf::VersionDefinition& d) { return !d.is_base && d.name == version; });
}

bool answers_to(const loader::LoadedObject& o, std::string_view name) {
  return o.elf.soname == name || std::find(o.names.begin(), o.names.end(), name) != o.names.end();
}

std::string base_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string without_trailing_slash(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// The object whose DT_RPATH listed `dir` for a search `requester` made: the requester, the objects
// that loaded it, then the main object (dl-load.c's order); the requester when none lists it.
int rpath_holder(const loader::Process& p, int requester, const std::string& dir) {
  auto lists = [&](int l) {
    const auto& o = p.objects[l];
    if (!o.elf.rpath) return false;
    std::string origin = dir_of(o.path);
    std::string lib = loader::lib_token_for(o.elf.machine, o.elf.is_64),
                platform = loader::platform_token_for(o.elf.machine, o.elf.is_64);
    for (const auto& e : loader::split_rpath(*o.elf.rpath))
      if (auto x = loader::expand_dst(e, origin, lib, platform); x && !x->empty() && without_trailing_slash(*x) == dir)
        return true;
    return false;
  };
  for (int l = requester; l >= 0; l = p.objects[l].loader)
    if (lists(l)) return l;
  if (p.target >= 0 && lists(p.target)) return p.target;
  return requester;
}

// Where a directory of the search came from: the list it was read from, with the object that carries it.
said::SearchList search_list(const loader::Process& p, int requester, const LibraryCopy& copy) {
  said::SearchList out{.how = copy.how, .holder = "", .shown = shown_how(copy)};
  if (copy.how == loader::FoundHow::Rpath)
    out.holder = base_of(p.objects[rpath_holder(p, requester, dir_of(copy.path))].path);
  if (copy.how == loader::FoundHow::Runpath) out.holder = base_of(p.objects[requester].path);
  return out;
}

// The fix of a stale copy: remove it, or change the list that put its directory first.
SaidPtr stale_copy_fix(const loader::Process& p, int requester, const Cause& c) {
  return saying(said::RemoveStaleCopy{.picked = *c.picked,
                                      .other = *c.other,
                                      .picked_list = search_list(p, requester, *c.picked),
                                      .other_list = search_list(p, requester, *c.other)});
}

void write_headline(Cause& c) {
  c.headline_why = saying(said::CopyLacks{.library = c.library,
                                          .picked = *c.picked,
                                          .other = *c.other,
                                          .missing_versions = c.missing_versions,
                                          .symbols = c.symbols});
}

Cause& cause_for(CauseList& causes, const std::string& soname, const loader::LoadedObject& picked,
                 const loader::SearchAttempt& other) {
  for (auto& c : causes) {
    if (c.picked && c.other && c.picked->path == picked.path && c.other->path == other.path) return c;
  }
  Cause c;
  c.kind = CauseKind::Shadowed;
  c.library = soname;
  c.picked = LibraryCopy{.path = picked.path, .how = picked.how};
  c.other = LibraryCopy{.path = other.path, .how = other.how};
  return causes.add(std::move(c));
}

// The torch a library belongs to: its torch/lib (site-packages/torch/lib beside version.py, or Debian's
// /usr/lib/<triplet> paired with dist-packages/torch) holds the file. Only the file's place counts: a
// copy on LD_LIBRARY_PATH that the import of torch happens to load is as stale for torch as for us.
struct TorchLoad {
  std::string who;  // "torch 2.0.0"
};

std::optional<TorchLoad> torch_loading(const loader::Process& p, int object) {
  std::string version = python::torch_version_for(p.objects[object].path);
  if (version.empty()) return std::nullopt;
  return TorchLoad{.who = "torch " + version};
}

// One provider-mismatch cause per (torch's copy, other copy, referencing object).
Cause& torch_cause_for(CauseList& causes, const loader::Process& p, int picked_index,
                       const loader::SearchAttempt& other, int holder_index, const TorchLoad& torch) {
  const auto& picked = p.objects[picked_index];
  std::string holder = base_of(p.objects[holder_index].path);
  for (auto& c : causes)
    if (c.kind == CauseKind::ProviderMismatch && c.picked && c.other && c.picked->path == picked.path &&
        c.other->path == other.path && !c.needed_by.empty() && c.needed_by.front() == p.objects[holder_index].path)
      return c;
  Cause c;
  c.kind = CauseKind::ProviderMismatch;
  c.library = picked.elf.soname.empty() ? picked.names.front() : picked.elf.soname;
  c.picked = LibraryCopy{.path = picked.path, .how = picked.how};
  c.other = LibraryCopy{.path = other.path, .how = other.how};
  c.needed_by = {p.objects[holder_index].path};  // the object built against another torch
  c.fix_why = saying(said::InstallTorchBuiltAgainst{
      .holder = holder, .library = c.library, .torch = torch.who, .picked = picked.path});
  return causes.add(std::move(c));
}

using Copies = std::map<int, std::vector<CandidateCopy>>;  // per loaded object, in search order

// The candidates of each loaded object: those of the search that first loaded it (by its requester),
// probed now (loader::other_copies), then read in parallel.
Copies candidate_copies(const loader::Process& p, std::map<int, int>& requester_of) {
  Copies copies;
  for (const auto& o : p.objects) {
    for (const auto& need : o.needed) {
      if (need.object < 0 || need.how == loader::FoundHow::AlreadyLoaded || copies.count(need.object)) continue;
      std::vector<loader::SearchAttempt> others = loader::other_copies(p, need);
      if (others.empty()) continue;
      requester_of[need.object] = static_cast<int>(&o - p.objects.data());
      auto& list = copies[need.object];
      for (auto& c : others) {
        list.emplace_back();
        list.back().where = std::move(c);
      }
    }
  }
  if (copies.empty()) return copies;
  std::vector<CandidateCopy*> all;
  for (auto& [index, list] : copies)
    for (auto& c : list) all.push_back(&c);
  tbb::parallel_for(size_t{0}, all.size(), [&](size_t i) { read_copy(*all[i]); });
  return copies;
}

// A loaded object and the candidate that has what it lacks.
struct Hit {
  int object;
  const CandidateCopy* copy;
};

// Links findings to the copy the loader took over one that has what they miss.
struct ShadowTracer {
  const loader::Process& p;
  CauseList& causes;
  const Copies& copies;
  std::map<int, std::optional<TorchLoad>> torch_of = {};  // per picked object: torch/version.py is read once
  std::set<std::string> touched = {};                     // ids: the vector may grow while findings are linked

  // The first candidate (in search order) of `object` with that version node or symbol.
  template <typename Pred>
  const CandidateCopy* first_copy(int object, Pred&& pred) const {
    auto it = copies.find(object);
    if (it == copies.end()) return nullptr;
    for (const auto& c : it->second)
      if (c.elf && pred(c)) return &c;
    return nullptr;
  }

  Cause& link(const Hit& hit) {
    const auto& picked = p.objects[hit.object];
    std::string soname = picked.elf.soname.empty() ? picked.names.front() : picked.elf.soname;
    return cause_for(causes, soname, picked, hit.copy->where);
  }

  const std::optional<TorchLoad>& torch_loads(int object) {
    auto it = torch_of.find(object);
    if (it == torch_of.end()) it = torch_of.emplace(object, torch_loading(p, object)).first;
    return it->second;
  }

  // A version node the loaded copy lacks and another candidate has.
  void version(VersionFinding& version_finding) {
    const auto* mv = &version_finding.missing;
    auto* finding = &version_finding.finding;
    if (mv->provider < 0) return;
    const auto* copy =
        first_copy(mv->provider, [&](const CandidateCopy& c) { return c.versions.count(mv->version) > 0; });
    if (!copy || torch_loads(mv->provider)) return;  // torch's own copy is no stale copy
    Cause& c = link({mv->provider, copy});
    c.kind = CauseKind::VersionMismatch;
    if (std::find(c.missing_versions.begin(), c.missing_versions.end(), mv->version) == c.missing_versions.end())
      c.missing_versions.push_back(mv->version);
    finding->cause = c.id;
    touched.insert(c.id);
  }

  // The loaded object one of whose other candidates defines the reference.
  std::optional<Hit> hit_for(const loader::UnresolvedRef* ref) const {
    if (!ref->version.empty()) {
      // A versioned reference binds to the file it names (dl-lookup.c checks the version there).
      for (const auto& [index, list] : copies) {
        if (!answers_to(p.objects[index], ref->version_file)) continue;
        if (const auto* c =
                first_copy(index, [&](const CandidateCopy& cc) { return satisfies(cc, ref->name, ref->version); }))
          return Hit{index, c};
        break;
      }
      return std::nullopt;
    }
    for (const auto& [index, list] : copies) {
      if (const auto* c = first_copy(index, [&](const CandidateCopy& cc) { return satisfies(cc, ref->name, {}); }))
        return Hit{index, c};
    }
    return std::nullopt;
  }

  // The copy torch itself loads is no stale copy: the referencing object was built against another
  // torch. Removing the copy breaks torch; the fix is the provider-mismatch one.
  void torch_mismatch(UnresolvedSymbol* u, const loader::UnresolvedRef* ref, const Hit& hit, const TorchLoad& torch) {
    const auto& picked = p.objects[hit.object];
    Cause& c = torch_cause_for(causes, p, hit.object, hit.copy->where, ref->object, torch);
    ++c.symbols;
    touched.insert(c.id);
    c.headline_why = saying(said::TorchCopyLacks{.holder = base_of(c.needed_by.front()),
                                                 .library = c.library,
                                                 .torch = torch.who,
                                                 .picked = *c.picked,
                                                 .other = *c.other,
                                                 .symbols = c.symbols});
    const std::string& soname = c.library;
    verdict::claim(*u, EvidencePass::Shadow, Classification::ProviderMismatch);
    u->cause = c.id;
    say(*u, said::TorchCopyLacksIt{.soname = soname,
                                   .torch = torch.who,
                                   .picked = {.path = picked.path, .how = picked.how},
                                   .other = {.path = hit.copy->where.path, .how = hit.copy->where.how}});
    u->origin = Origin{.file = picked.path,
                       .line = std::nullopt,
                       .kind = OriginKind::Library,
                       .library = picked.path,
                       .ported_from = std::nullopt};
    u->fix = cause_fix(c, FixKind::RebuildAbi, picked.path);
    u->suggestions.clear();
  }

  // A symbol the loaded copy lacks (or lacks at that version) and another candidate has.
  void symbol(SymbolFinding& symbol_finding) {
    const auto* ref = &symbol_finding.ref;
    auto* u = &symbol_finding.symbol;
    if (ref->miss != loader::Miss::NoDefinition && ref->miss != loader::Miss::WrongVersion) return;
    std::optional<Hit> hit = hit_for(ref);
    if (!hit) return;
    const auto& picked = p.objects[hit->object];
    // A loaded copy that itself exports the symbol is not what the reference missed: the miss is one
    // of scope (the copy is loaded RTLD_LOCAL, in another object's scope), not of which copy was found.
    if (picked_exports(picked.elf, ref->name, ref->version)) return;
    if (const auto& torch = torch_loads(hit->object)) {
      torch_mismatch(u, ref, *hit, *torch);
      return;
    }
    Cause& c = link(*hit);
    bool node_missing = !ref->version.empty() && !has_version(picked.elf, ref->version);
    if (node_missing) {
      c.kind = CauseKind::VersionMismatch;
      std::string v(ref->version);
      if (std::find(c.missing_versions.begin(), c.missing_versions.end(), v) == c.missing_versions.end())
        c.missing_versions.push_back(v);
    }
    ++c.symbols;
    touched.insert(c.id);
    verdict::claim(*u, EvidencePass::Shadow, node_missing ? Classification::VersionMismatch : Classification::Shadowed);
    u->cause = c.id;
    say(*u, said::CopyTakenLacksIt{.soname = c.library,
                                   .picked = {.path = picked.path, .how = picked.how},
                                   .other = {.path = hit->copy->where.path, .how = hit->copy->where.how},
                                   .version = node_missing ? std::string(ref->version) : ""});
    // The origin is the file that defines it (a soname link resolved), as the SDK index names it.
    std::string defining = real_path(hit->copy->where.path);
    u->origin = Origin{.file = defining,
                       .line = std::nullopt,
                       .kind = OriginKind::Library,
                       .library = defining,
                       .ported_from = std::nullopt};
    u->suggestions.clear();
  }

  // Each cause touched: its headline and the stale-copy fix, in the words of the search that loaded it.
  void finish(const std::map<int, int>& requester_of) {
    for (auto& c : causes) {
      if (!touched.count(c.id) || c.kind == CauseKind::ProviderMismatch) continue;
      std::sort(c.missing_versions.begin(), c.missing_versions.end(), version_less);
      write_headline(c);
      int picked = -1;
      for (const auto& [index, list] : copies)
        if (p.objects[index].path == c.picked->path) picked = index;
      if (picked >= 0) c.fix_why = stale_copy_fix(p, requester_of.at(picked), c);
    }
  }
};

}  // namespace

// The passes: each loaded object's other candidates, the version nodes and symbols one of them has,
// the causes' headlines and fixes, then each finding's fix in its cause's words.
void find_shadowing(const loader::Process& p, std::vector<SymbolFinding>& symbols,
                    std::vector<VersionFinding>& versions, CauseList& causes) {
  if (symbols.empty() && versions.empty()) return;
  std::map<int, int> requester_of;
  const Copies copies = candidate_copies(p, requester_of);
  if (copies.empty()) return;
  ShadowTracer tracer{.p = p, .causes = causes, .copies = copies};
  for (auto& version_finding : versions) tracer.version(version_finding);
  for (auto& symbol_finding : symbols) tracer.symbol(symbol_finding);
  tracer.finish(requester_of);
  for (auto& [ref, u] : symbols) {
    if (!u.cause || verdict::current(u) == Classification::ProviderMismatch) continue;
    for (const auto& c : causes)
      if (c.id == *u.cause) u.fix = cause_fix(c, FixKind::UseLibrary, c.other->path);
  }
}

size_t reclaim_own_build(const loader::Process& p, std::vector<SymbolFinding>& symbols, const TraceContext& ctx,
                         CauseList& causes) {
  if (!ctx.build) return 0;
  auto own = [&](const std::string& path) {
    if (ctx.build->target_for_artifact(path)) return true;
    const std::string dir = ctx.build->build_dir;
    if (dir.empty()) return false;
    std::string real = real_path(path), real_dir = real_path(dir);
    return real.size() > real_dir.size() && real.compare(0, real_dir.size(), real_dir) == 0 &&
           real[real_dir.size()] == '/';
  };
  size_t reclaimed = 0;
  std::set<std::string> emptied;
  for (auto& symbol : symbols) {
    const auto* ref = &symbol.ref;
    auto* u = &symbol.symbol;
    if (!u->cause || verdict::current(*u) != Classification::Shadowed) continue;
    const std::string& id = *u->cause;  // a structured binding cannot be captured before C++20 (clang 14)
    auto c = std::find_if(causes.begin(), causes.end(), [&](const Cause& k) { return k.id == id; });
    if (c == causes.end() || !c->picked || !c->other || !own(c->picked->path)) continue;
    // Traced afresh on a copy that keeps the earlier passes' claims: the tracer's outranks the shadow's.
    UnresolvedSymbol again = *u;
    again.cause.reset();
    again.origin.reset();
    again.fix.reset();
    again.reason = {};
    again.why = nullptr;
    again.why_also.clear();
    trace_symbol(&p, ref->object, ctx, again);
    if (verdict::current(again) != Classification::MissingSource) continue;
    if (!says_also<said::OtherCopyDefinesToo>(again))
      also(again, said::OtherCopyDefinesToo{.other_copy = c->other->path});
    *u = std::move(again);
    ++reclaimed;
    if (c->symbols > 0 && --c->symbols == 0 && c->missing_versions.empty()) emptied.insert(c->id);
    else write_headline(*c);
  }
  causes.erase_if([&](const Cause& c) { return emptied.count(c.id) > 0; });
  return reclaimed;
}

std::vector<UnresolvedSymbol*> find_host_symbols(const std::vector<UnresolvedSymbol*>& symbols, CauseList& causes) {
  std::vector<UnresolvedSymbol*> rest;
  std::map<std::string, std::pair<host::HostApi, std::vector<UnresolvedSymbol*>>> by_host;  // by executable
  for (UnresolvedSymbol* u : symbols) {
    const host::HostApi api = host::host_api_of(u->symbol);
    if (api == host::HostApi::None || verdict::current(*u) != Classification::Unknown || u->origin) {
      rest.push_back(u);
    } else {
      auto& [kind, list] = by_host[host::executable_of(api)];
      kind = api;
      list.push_back(u);
    }
  }
  for (const auto& [host, kind_and_list] : by_host) {
    const auto& [kind, list] = kind_and_list;
    Cause* c = nullptr;
    for (auto& existing : causes)
      if (existing.kind == CauseKind::Host && existing.library == host) c = &existing;
    if (!c) {
      Cause fresh;
      fresh.kind = CauseKind::Host;
      fresh.library = host;
      c = &causes.add(std::move(fresh));
    }
    c->symbols += list.size();
    const bool python = kind == host::HostApi::Python;
    c->headline_why = saying(said::HostApiSymbols{.symbols = c->symbols, .python = python, .host = host});
    c->fix_why = saying(said::CheckAsHostLoads{.python = python});
    for (UnresolvedSymbol* u : list) {
      u->cause = c->id;
      verdict::claim(*u, EvidencePass::Host,
                     Classification::HostProvided);  // "unknown": nothing defines it; the host does
      say(*u, said::PartOfHostApi{.python = python, .host = host});
      u->fix = cause_fix(*c, FixKind::None);
      u->suggestions.clear();
    }
  }
  return rest;
}

void filter_suggestions(const std::vector<UnresolvedSymbol*>& symbols) {
  auto top_namespace = [](const std::string& mangled) {
    demangle::SymbolName n = demangle::parse_symbol(mangled);
    const auto& scopes = n.scopes;
    return scopes.empty() ? std::string() : scopes.front();
  };
  for (UnresolvedSymbol* u : symbols) {
    if (u->cause) {
      u->suggestions.clear();
      continue;
    }
    if (u->suggestions.empty() || !demangle::is_mangled(u->symbol) || top_namespace(u->symbol) != "std") continue;
    std::erase_if(u->suggestions, [&](const Suggestion& s) {
      return !s.symbol.empty() && demangle::is_mangled(s.symbol) && top_namespace(s.symbol) != "std";
    });
  }
}

}  // namespace mlc::trace
