// The report's sentences, each written from a pass's typed evidence (src/report/said.h), and the
// stage that writes them into the report.
#include <string>

#include "common/text.h"
#include "report/said.h"

namespace mlc {
namespace said {

// --- the loader's level ---------------------------------------------------------------------------
std::string VersionFileNotFound::words() const { return "required from " + file + ", which was not found"; }
std::string NotWithVersion::words() const {
  return "defined in " + library + ", but not with version " + (version.empty() ? std::string("(default)") : version);
}
std::string HiddenVersion::words() const {
  return "defined in " + library + " only under a hidden (non-default) version, invisible to an unversioned reference";
}
std::string HiddenVisibility::words() const { return "defined in " + library + " with hidden or internal visibility"; }
std::string NoneLoadedLibraryMissing::words() const {
  if (missing == 0)
    return "no loaded object defines it, and a needed library was not loaded: the loader refused a file of its name "
           "(the load failure above)";
  return "no loaded object defines it, and " + std::to_string(missing) + " needed librar" +
         (missing == 1 ? "y was" : "ies were") + " not found";
}
std::string NoneInScope::words() const {
  return "no object in the global scope (" + std::to_string(loaded) + " loaded) defines it";
}
std::string NotExported::words() const {
  return "defined in " + library + " but not exported (local or hidden in its symbol table)";
}
std::string RebuildAgainstLoaded::words() const {
  return "rebuild against the library that is loaded at run time, or load the one it was linked against";
}
std::string MakeVersionDefault::words() const {
  return "make the version the default (@@) in the provider's version script";
}
std::string GiveDefaultVisibility::words() const {
  return "give the definition default visibility (or list it in the export map)";
}
std::string DefinedNowhere::words() const {
  std::vector<std::string> searched;
  if (source_files) searched.push_back(std::to_string(*source_files) + " indexed source files");
  if (!sdk_home.empty()) searched.push_back("the SDK (" + sdk_home + ")");
  if (!cuda_searched.empty()) searched.push_back("CUDA (" + cuda_searched + ")");
  if (searched.empty() && cuda_given)
    return "no loaded object defines it (no sources or SDK were given to trace it further)";
  if (searched.empty()) return "no loaded object defines it (no sources, SDK or CUDA were given to trace it further)";
  std::string reason = "no loaded object defines it, nor was it found in " + join_list(searched);
  // A name that macros paste together (PRIV(x) -> _prefix_x_8) is spelled by no text; only the compiler
  // can place it, and it needs the build's compile commands.
  if (no_compile_database)
    reason +=
        " (no text spells it; with compile_commands.json, which -DCMAKE_EXPORT_COMPILE_COMMANDS=ON writes, the "
        "compiler would try the sources the build leaves out)";
  return reason;
}
std::string NotInSourcesSdkOrCuda::words() const { return "not found in the sources, the SDK or CUDA"; }

// --- the import context ---------------------------------------------------------------------------
std::string TorchNotFound::words() const {
  return file + " needs torch (" + report::torch_reason(reason, evidence) + "), which " +
         (!python.empty()
              ? python + " does not import"
              : "is neither beside it nor in the site directories of " + (host.empty() ? "python3" : host)) +
         ": checked without it";
}
std::string OtherEnvironment::words() const {
  return python_from_path ? "files installed in " + environment + " are checked as its interpreter " + interpreter +
                                " imports them, not as " + python + " (python3 on PATH) would"
                          : "files installed in " + environment + " are checked as " + python +
                                " imports them, as --python asked, though " + interpreter +
                                " is the interpreter that imports them (a verdict for " + python + "'s process only)";
}
std::string LoadsOnlyInImport::words() const {
  std::string names;
  for (const auto& n : providers) names += (names.empty() ? "" : ", ") + n;
  return file + ": loads as part of the import of torch, but loading it alone fails: it does not link " + names +
         ", which that import loads first";
}

}  // namespace said

namespace report {

std::string torch_reason(TorchImportReason reason, const std::string& evidence) {
  switch (reason) {
    case TorchImportReason::PackageImportsTorch: return evidence + " imports it";
    case TorchImportReason::NeedsTorchLibraries: return "it needs " + evidence + ", which the import of torch loads";
    case TorchImportReason::PartOfTorch: return "it is part of torch, whose import runs first";
  }
  return "";
}

std::string words(const Said& s) { return s.words(); }

namespace {

void write_finding(UnresolvedSymbol& u, Pen pen) {
  if (u.why) {
    std::string reason = words(*u.why);
    for (const auto& clause : u.why_also) reason += words(*clause);  // each clause begins with its joint
    u.reason.write(pen, std::move(reason));
  }
  if (u.fix && u.fix->why) u.fix->detail.write(pen, words(*u.fix->why));
}

}  // namespace

void write_sentences(UnresolvedSymbol& u) { write_finding(u, Pen{}); }

void write_sentences(Report& report) {
  const Pen pen;
  for (auto& lib : report.libraries) {
    for (auto& u : lib.unresolved) write_finding(u, pen);
    for (auto& f : lib.load_failures) {
      if (!f.facts) continue;
      loader::FailureFacts facts = *f.facts;
      // Who installed the module is known once the run is done (its owners pass): pip's reinstall names it.
      if (f.kind == loader::FailureKind::ExtensionTag && lib.owner && lib.owner->kind == OwnerKind::Python)
        facts.owner = lib.owner->name;
      if (f.kind != loader::FailureKind::PackageImport) f.message.write(pen, failure_message(f.kind, facts));
      f.fix.write(pen, failure_fix(f.kind, facts));
    }
  }
  // An import that fails with a module its package imports first says what that module's load says, once
  // that module's own messages are written.
  for (auto& lib : report.libraries)
    for (auto& f : lib.load_failures) {
      if (f.kind != loader::FailureKind::PackageImport || !f.facts) continue;
      for (const auto& failing : report.libraries)
        if (failing.role == LibraryRole::Target && failing.path == f.facts->needed) {
          f.message.write(pen, dlopen_error(report, failing));
          break;
        }
    }
  for (auto& c : report.causes) {
    if (c.headline_why) c.headline.write(pen, words(*c.headline_why));
    if (c.fix_why) c.fix.write(pen, words(*c.fix_why));
  }
}

}  // namespace report
}  // namespace mlc
