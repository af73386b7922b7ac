// The findings at the loader's level, their references and the sources their DWARF names.
#include "trace/loader_miss.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "backend/cuda_api.h"
#include "build/model.h"
#include "common/paths.h"
#include "dwarf/references.h"
#include "elf/elf_object.h"
#include "report/said.h"
#include "verdict/verdict.h"

namespace mlc::trace {

SymbolType symbol_type(elf::SymbolType t) {
  switch (t) {
    case elf::SymbolType::Func:
    case elf::SymbolType::GnuIfunc: return SymbolType::Func;
    case elf::SymbolType::Object:
    case elf::SymbolType::Common: return SymbolType::Object;
    case elf::SymbolType::Tls: return SymbolType::Tls;
    default: return SymbolType::NoType;
  }
}

// Pass: classify what the loader saw. Later passes (origin tracing) refine Unknown.
void classify_loader_miss(const loader::Process& p, const loader::UnresolvedRef& ref, UnresolvedSymbol& u) {
  auto lib_of = [&](int i) { return p.objects[i].path; };
  switch (ref.miss) {
    case loader::Miss::LibraryMissing:
      verdict::claim(u, EvidencePass::Loader, Classification::MissingLibrary);
      say(u, said::VersionFileNotFound{.file = std::string(ref.version_file)});
      break;
    case loader::Miss::WrongVersion:
      verdict::claim(u, EvidencePass::Loader, Classification::VersionMismatch);
      say(u,
          said::NotWithVersion{.library = lib_of(ref.near_definitions.front()), .version = std::string(ref.version)});
      u.fix = Fix{FixKind::UseLibrary,
                  {},
                  {},
                  {},
                  lib_of(ref.near_definitions.front()),
                  {},
                  saying(said::RebuildAgainstLoaded{})};
      break;
    case loader::Miss::HiddenVersion:
      verdict::claim(u, EvidencePass::Loader, Classification::Hidden);
      say(u, said::HiddenVersion{.library = lib_of(ref.near_definitions.front())});
      u.fix = Fix{FixKind::ExportSymbol,
                  {},
                  {},
                  {},
                  lib_of(ref.near_definitions.front()),
                  {},
                  saying(said::MakeVersionDefault{})};
      break;
    case loader::Miss::HiddenVisibility:
      verdict::claim(u, EvidencePass::Loader, Classification::Hidden);
      say(u, said::HiddenVisibility{.library = lib_of(ref.near_definitions.front())});
      u.fix = Fix{FixKind::ExportSymbol,
                  {},
                  {},
                  {},
                  lib_of(ref.near_definitions.front()),
                  {},
                  saying(said::GiveDefaultVisibility{})};
      break;
    case loader::Miss::NoDefinition: {
      const auto& refobj = p.objects[ref.object];
      size_t missing = 0, refused = 0;
      for (const auto& need : refobj.needed) (need.refused.empty() ? missing : refused) += need.object < 0 ? 1 : 0;
      if (missing + refused > 0) {
        verdict::claim(u, EvidencePass::Loader, Classification::MissingLibrary);
        say(u, said::NoneLoadedLibraryMissing{.missing = missing});
      } else {
        verdict::claim(u, EvidencePass::Loader, Classification::Unknown);
        say(u, said::NoneInScope{.loaded = p.objects.size()});
      }
      break;
    }
  }
}

// A definition present only in a .symtab (not exported) explains a NoDefinition miss.
void find_unexported(const loader::Process& p, std::vector<SymbolFinding>& findings) {
  std::vector<SymbolFinding*> unknown;
  for (auto& f : findings)
    if (f.ref.miss == loader::Miss::NoDefinition) unknown.push_back(&f);
  if (unknown.empty()) return;
  for (const auto& obj : p.objects) {
    if (!obj.elf.has_static_symtab) continue;  // stripped: nothing more to learn
    auto full = elf::read_object(obj.path, elf::ReadOptions{true, false});
    if (!full || full->static_symbols.empty()) continue;
    std::set<std::string_view> local;
    // Only what the object keeps to itself (local binding, hidden or internal visibility): a global
    // default definition is exported, and a miss beside it is a matter of scope, not of visibility.
    for (const auto& s : full->static_symbols)
      if (!s.is_undefined() && s.type != elf::SymbolType::Section && s.type != elf::SymbolType::File &&
          (s.binding == elf::Binding::Local ||
           (s.visibility != elf::Visibility::Default && s.visibility != elf::Visibility::Protected)))
        local.insert(s.name);
    for (auto* f : unknown) {
      UnresolvedSymbol& u = f->symbol;
      if (verdict::current(u) == Classification::Hidden || !local.count(f->ref.name)) continue;
      verdict::claim(u, EvidencePass::Unexported, Classification::Hidden);
      say(u, said::NotExported{.library = obj.path});
      u.origin = Origin{obj.path, std::nullopt, OriginKind::Library, obj.path, std::nullopt};
      u.fix = Fix{FixKind::ExportSymbol, {}, {}, {}, obj.path, {}, saying(said::GiveDefaultVisibility{})};
    }
  }
}

// What "defined nowhere" covered, so a reader knows which context was missing. CUDA is named only for a
// name that looks like one of the backend's CUDA APIs: no CUDA install is searched for a C++ function of
// the project's own.
said::DefinedNowhere nowhere_reason(const TraceContext& ctx, const UnresolvedSymbol& u) {
  said::DefinedNowhere out;
  if (ctx.sources) out.source_files = ctx.sources->files().size();
  out.sdk_home = ctx.sdk_home;
  out.cuda_given = !ctx.cuda_home.empty();
  if (out.cuda_given && ctx.backend && backend::looks_like_cuda_api(*ctx.backend, u.symbol))
    out.cuda_searched = ctx.cuda_home;
  out.no_compile_database =
      ctx.build && !ctx.build->build_dir.empty() && !ctx.build->has_compile_database && !ctx.build->cache.empty();
  return out;
}

bool wants_tracing(const UnresolvedSymbol& u, const loader::UnresolvedRef& ref) {
  if (u.cause) return false;  // a shared cause (a stale copy picked first) already explains it
  const Classification now = verdict::current(u);
  return now == Classification::Unknown ||
         (now == Classification::MissingLibrary && ref.miss == loader::Miss::NoDefinition);
}

void locate_references(const loader::Process& process, std::vector<SymbolFinding>& findings) {
  std::map<int, std::vector<UnresolvedSymbol*>> by_object;  // by object index: in load order, as reported
  for (auto& f : findings) by_object[f.ref.object].push_back(&f.symbol);
  for (auto& [index, symbols] : by_object) {
    const std::string& path = process.objects[index].path;
    std::set<std::string> names;
    for (const auto* u : symbols) names.insert(u->symbol);
    auto refs = dwarf::references(path, names);
    for (auto* u : symbols) {
      // An undefined reference carries no type in .dynsym; the library's DWARF knows a variable.
      if (u->type == SymbolType::NoType && refs.variables.count(u->symbol)) u->type = SymbolType::Object;
      // Its size travels in the finding, for a stub that must match it (stubgen reads no DWARF).
      if (auto v = refs.variables.find(u->symbol); v != refs.variables.end() && v->second > 0) u->size = v->second;
      auto it = refs.calls.find(u->symbol);
      if (it == refs.calls.end() || it->second.empty()) continue;
      u->referenced_by.clear();
      for (const auto& site : it->second) {
        u->referenced_by.push_back({path,
                                    site.function.empty() ? std::nullopt : std::optional<std::string>(site.function),
                                    site.file.empty() ? std::nullopt : std::optional<std::string>(site.file),
                                    site.line > 0 ? std::optional<int>(site.line) : std::nullopt});
      }
    }
  }
}

// The natural call names no source tree and no build: the library's own DWARF says where it was built.
// The directory its units' sources share (the project's top, when the compiler was given paths inside one
// project), else each unit's directory; and each unit's DW_AT_comp_dir where the compiler ran (a setup.py's
// directory) unless that is a CMake build tree, which holds copies and generated files, not the project.
// Directories that do not exist here (a distribution's build root) and the system's own are left out.
std::optional<InferredSources> dwarf_sources(const loader::Process& process,
                                             const std::vector<SymbolFinding>& findings) {
  std::set<int> referencing;
  for (const auto& f : findings)
    if (wants_tracing(f.symbol, f.ref)) referencing.insert(f.ref.object);
  auto system = [](const std::string& d) {
    if (d == "/" || d.empty() || d.front() != '/') return true;
    for (const std::string p : {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev"})
      if (d == p || d.rfind(p + "/", 0) == 0) return true;
    return false;
  };
  auto build_tree = [](const std::string& d) {
    return access((d + "/CMakeCache.txt").c_str(), F_OK) == 0 || d.ends_with("/CMakeFiles");
  };
  InferredSources out;
  // What was compiled: every unit of the loaded objects outside the system (a sibling library of the same
  // project compiles a file the referencing one lacks: that file is no missing source of it).
  for (const auto& o : process.objects)
    if (!system(dir_name(o.path)))
      for (const auto& unit : dwarf::compile_units(o.path)) out.units.insert(unit.source);
  std::set<std::string> dirs;
  for (int object : referencing) {
    std::string shared;
    bool first = true;
    for (const auto& unit : dwarf::compile_units(process.objects[object].path)) {
      const std::string dir = build::normalize_path(dir_name(unit.source));
      if (system(dir) || !is_dir(dir)) continue;
      shared = first ? dir : shared.substr(0, shared_dir_prefix(shared + "/", dir + "/"));
      first = false;
      dirs.insert(dir);
      if (!unit.comp_dir.empty() && !system(unit.comp_dir) && is_dir(unit.comp_dir) && !build_tree(unit.comp_dir))
        dirs.insert(build::normalize_path(unit.comp_dir));
    }
    if (!shared.empty() && !system(shared)) dirs.insert(shared);
  }
  for (const auto& d : dirs)
    if (std::none_of(out.roots.begin(), out.roots.end(),
                     [&](const std::string& r) { return d.rfind(r + "/", 0) == 0; }))
      out.roots.push_back(d);
  if (out.roots.empty()) return std::nullopt;
  return out;
}

}  // namespace mlc::trace
