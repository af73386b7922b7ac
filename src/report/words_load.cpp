// The fixes of load failures (src/loader's facts): what to do where glibc stops a load for a
// reason other than a missing library, symbol or version.
#include <string>

#include "common/paths.h"
#include "report/said.h"

namespace mlc::report {

std::string failure_message(loader::FailureKind kind, const loader::FailureFacts& f) {
  using loader::FailureKind;
  switch (kind) {
    case FailureKind::BadCandidate: return f.glibc;
    case FailureKind::NoOpen: return f.glibc.empty() ? "shared object cannot be dlopen()ed" : f.glibc;
    case FailureKind::StaticTls: return "cannot allocate memory in static TLS block";
    case FailureKind::TlsMismatch:
      return "ld.so ends the process (SIGFPE): an initial-exec TLS relocation binds " + f.symbol +
             " to an object without a TLS block";
    case FailureKind::VersionFileUnmatched:
      return "ld.so aborts: dl-version.c _dl_check_map_versions: Assertion `needed != NULL' failed";
    case FailureKind::VersionWithoutVersym:
      return "ld.so aborts: dl-lookup.c check_match: Assertion `version->filename == NULL || ! _dl_name_match_p "
             "(version->filename, map)' failed";
    case FailureKind::ProtectedCopy: return "error due to GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS";
    case FailureKind::IsaLevel: return "CPU ISA level is lower than required";
    case FailureKind::ExtensionTag: return "No module named '" + f.module + "'";
    case FailureKind::ShadowedModule: return "the import opens " + f.provider + " instead";
    case FailureKind::PackageImport: return "";  // the failing module's own words (dlopen_error)
  }
  return "";
}

std::string dlopen_error(const Report& report, const LibraryReport& target) {
  std::string undefined, other;
  for (const auto& lib : report.libraries) {
    if (!part_of_load(target, lib)) continue;
    for (const auto& n : lib.needed)
      if (!n.path && !n.baselined) return n.name + ": cannot open shared object file: No such file or directory";
    for (const auto& u : lib.unresolved)
      if (!u.baselined && u.binding != ReferenceBinding::Weak && undefined.empty())
        undefined = lib.path + ": undefined symbol: " + u.symbol;
    for (const auto& f : lib.load_failures)
      if (!f.baselined && other.empty()) other = *f.message;
    for (const auto& mv : lib.missing_versions)
      if (!mv.baselined && other.empty())
        other = mv.file + ": version `" + mv.version + "' not found (required by " + lib.path + ")";
  }
  return !undefined.empty() ? undefined : other;
}

std::string failure_fix(loader::FailureKind kind, const loader::FailureFacts& f) {
  using loader::FailureKind;
  switch (kind) {
    case FailureKind::BadCandidate:
      return "remove it (or move it off the search path): glibc stops its search for " + f.needed + " (needed by " +
             f.by +
             ") at the first file of that name that is not a loadable object of this process, rather than "
             "skipping it";
    case FailureKind::NoOpen:
      if (f.refused)
        return "the library is linked with -z nodlopen, so it cannot come in through a dlopen: relink it without -z "
               "nodlopen, or remove it from " +
               f.provider;
      return "the object is linked with -z nodlopen; load it as a dependency (DT_NEEDED) of an object that is "
             "dlopen'ed, or relink it without -z nodlopen";
    case FailureKind::StaticTls:
      return f.provider + "'s thread-local storage (" + std::to_string(f.tls_bytes) +
             " bytes, reached through initial-exec relocations of " + f.by +
             ") does not fit in the static TLS surplus a dlopen can use: set "
             "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=" +
             std::to_string(f.tunable) + ", load it at start (LD_PRELOAD), or build it with -ftls-model=global-dynamic";
    case FailureKind::TlsMismatch:
      return f.by + " accesses " + f.symbol + " as a thread-local variable (initial-exec), but " + f.provider +
             " defines it as ordinary data: load the copy " + f.by + " was built against, or rebuild " + f.by +
             " against this one";
    case FailureKind::VersionFileUnmatched:
      return f.by + " requires version " + f.version + " of " + f.needed +
             ", a name no loaded object answers to: the loader loaded it as " +
             (f.expanded.empty() ? std::string("its expansion") : f.expanded) +
             ". Spell the DT_NEEDED and the soname without dynamic string tokens (patchelf --replace-needed '" +
             f.needed + "' " + (f.expanded.empty() ? "NAME" : base_name(f.expanded)) + " " + f.by + ")";
    case FailureKind::VersionWithoutVersym:
      return f.by + " needs " + f.symbol + "@" + f.version + " from " + f.provider +
             ", which has no symbol versions (.gnu.version): load the copy it was linked against (built with its "
             "version script), or relink " +
             f.by + " against this one";
    case FailureKind::ProtectedCopy:
      return f.by + " copies " + f.symbol + " (a copy relocation), which " + f.provider +
             " defines as protected data built with -mno-direct-extern-access: rebuild the program with -fPIC (no "
             "copy relocation), or the library without that option";
    case FailureKind::IsaLevel:
      return "the object is built for a newer x86-64 level than this CPU's (" +
             (f.level == 1 ? std::string("baseline") : "x86-64-v" + std::to_string(f.level)) +
             "; its GNU_PROPERTY_X86_ISA_1_NEEDED says more): rebuild it for this level, or run it on a CPU that has "
             "it";
    case FailureKind::ExtensionTag: {
      // Another version, or the same one built otherwise (cpython-311d, a debug build's; -linux-musl).
      const bool same_version = f.version == f.python;
      const std::string built = (same_version ? "its name's tag " + f.needed + " is another build's than " +
                                                    f.provider + "'s (Python " + f.python + ")"
                                              : "it is built for Python " + f.version + " (its name's tag " + f.needed +
                                                    "), and " + f.provider + " is Python " + f.python) +
                                ", whose import looks only for its own tag, .abi3.so and .so: ";
      if (!f.owner.empty())
        return built + "reinstall " + f.owner + " for this interpreter (" + f.provider +
               " -m pip install --force-reinstall " + f.owner + ")";
      if (same_version) return built + "rebuild or reinstall it for this interpreter";
      return built + "rebuild or reinstall it for Python " + f.python + ", or import it with a Python " + f.version +
             " interpreter";
    }
    case FailureKind::ShadowedModule:
      return "its import opens " + f.provider +
             " instead, whose suffix comes first in the interpreter's EXTENSION_SUFFIXES: this file is never "
             "loaded; remove the one that is stale (an in-place build left beside an installed module, or the "
             "reverse)";
    case FailureKind::PackageImport:
      return "importing it runs " + f.by + " first, whose module-level import of " + f.needed +
             " fails (that module's own failure is reported with it): fix that one, or import it only where it is "
             "used (inside the function that needs it)";
  }
  return "";
}

}  // namespace mlc::report
