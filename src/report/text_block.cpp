// Each finding's block as the text report tells it (lld's shape: the error line, then ">>>" lines
// with the evidence, locations capped at three). Shared by render_text.cpp and ci_findings.cpp.
#include "report/text_block.h"

#include <fmt/format.h>

#include "common/paths.h"

namespace mlc::text {
namespace {

constexpr size_t kMaxLocations = 3;

}  // namespace

std::string holder_note(const LibraryReport& lib) {
  if (lib.role == LibraryRole::Dependency && lib.loaded_by)
    return fmt::format(" (a dependency loaded for {})", base_name(*lib.loaded_by));
  if (lib.role == LibraryRole::Preloaded && lib.loaded_by)
    return fmt::format(" (loaded by the import of torch that importing {} does first)", base_name(*lib.loaded_by));
  if (lib.role == LibraryRole::Preloaded) return " (loaded before the checked files: --with/--python)";
  return "";
}

std::string owner_text(const PackageOwner& o) {
  std::string v = o.version.empty() ? "" : " " + o.version;
  if (o.kind == OwnerKind::Dpkg) return "Debian's " + o.name + v;
  if (o.kind == OwnerKind::Conda) return "conda's " + o.name + v;
  if (o.kind == OwnerKind::Python) return "Python package " + o.name + v;
  return "the SDK " + o.name + v;
}

Block missing_library_block(const LibraryReport& lib, const NeededLibrary& need) {
  Block b{.title = "library not found: " + need.name, .details = {}};
  b.details.push_back({.line = fmt::format("needed by {}{}", lib.path, holder_note(lib))});
  for (const auto& step : need.search)
    b.details.push_back({.line = fmt::format("searched {} [{}]: {}", step.path, loader::to_string(step.how),
                                             loader::to_string(step.outcome))});
  return b;
}

Block missing_version_block(const LibraryReport& lib, const MissingVersionFinding& mv) {
  Block b{.title = fmt::format("version `{}' not found in {} (required by {}{})", mv.version, mv.file, lib.path,
                               holder_note(lib)),
          .details = {}};
  if (mv.provider) {
    std::string owner;
    for (const auto& n : lib.needed)
      if (n.path == mv.provider && n.owner) owner = " (" + owner_text(*n.owner) + ")";
    b.details.push_back({.line = fmt::format("{} was loaded from {}{}", mv.file, *mv.provider, owner)});
  }
  return b;
}

Block load_failure_block(const LibraryReport& lib, const LoadFailureFinding& f) {
  Block b{.title = fmt::format("{}: {}", f.file, *f.message), .details = {}};
  b.details.push_back({.line = fmt::format("the load of {}{} fails there{}", lib.path, holder_note(lib),
                                           f.symbol ? " (" + *f.symbol + ")" : std::string())});
  b.details.push_back({.line = "fix: " + *f.fix});
  return b;
}

Block undefined_symbol_block(const LibraryReport& lib, const UnresolvedSymbol& u) {
  Block b{.title = "undefined symbol: " + u.demangled + (u.version ? "@" + *u.version : ""), .details = {}};
  auto add = [&](std::string line) { b.details.push_back({.line = std::move(line)}); };
  for (size_t i = 0; i < u.referenced_by.size() && i < kMaxLocations; ++i) {
    const auto& r = u.referenced_by[i];
    std::string where = r.file ? fmt::format("{}:{}", *r.file, r.line.value_or(0)) : std::string();
    if (r.function) where = where.empty() ? *r.function : fmt::format("{} ({})", where, *r.function);
    if (where.empty()) {
      add("referenced by " + r.library);
    } else {
      b.details.push_back({.line = "referenced by " + where, .under = r.library});
    }
  }
  // Which object holds the reference, when it is not the named file ("in the SDK's libmusa.so.1").
  if (lib.role != LibraryRole::Target)
    add(fmt::format("in {}{}{}{}", lib.in_sdk ? "the SDK's " : "",
                    lib.soname.empty() ? base_name(lib.path) : lib.soname, holder_note(lib),
                    lib.loaded_by ? ", not in " + base_name(*lib.loaded_by) : std::string()));
  if (u.referenced_by.size() > kMaxLocations)
    add(fmt::format("referenced {} more times", u.referenced_by.size() - kMaxLocations));
  if (u.symbol != u.demangled) add("mangled: " + u.symbol);
  add(fmt::format("{}: {}", to_string(u.classification), *u.reason));
  // A provider-mismatch's origin is the library that should define it and does not (the reason
  // names it): "defined in" it would contradict the line above.
  if (u.origin && u.classification != Classification::ProviderMismatch) {
    std::string at = u.origin->line ? fmt::format("{}:{}", u.origin->file, *u.origin->line) : u.origin->file;
    const char* how = u.classification == Classification::UnimplementedKernel ? "listed"  // its backend yaml entry
                      : u.origin->kind == OriginKind::Declaration             ? "declared"
                                                                              : "defined";
    add(fmt::format("{} in: {}", how, at));
    if (u.origin->ported_from) add("ported from: " + *u.origin->ported_from);
  }
  if (u.counterpart)
    add(fmt::format("counterpart: {}{}", u.counterpart->name,
                    u.counterpart->library ? " in " + *u.counterpart->library : std::string()));
  for (const auto& s : u.suggestions)
    add(fmt::format("did you mean: {} ({}, {})", s.demangled, to_string(s.reason), s.library));
  if (u.fix && !u.fix->detail->empty()) add("fix: " + *u.fix->detail);
  return b;
}

Block runtime_lookup_block(const RuntimeLookup& r) {
  if (r.kind != LookupKind::Dlopen)
    return {.title = fmt::format("dlsym(\"{}\") in {}: {} ({}) does not export it", r.name, r.library, r.provider_name,
                                 r.provider.value_or("?")),
            .details = {}};
  Block b{.title = fmt::format("dlopen(\"{}\") in {}: library not found", r.name, r.library), .details = {}};
  for (const auto& s : r.searched) b.details.push_back({.line = "searched " + s});
  return b;
}

}  // namespace mlc::text
