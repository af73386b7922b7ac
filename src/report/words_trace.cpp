// The tracer's sentences (src/trace/trace.cpp's evidence): where a definition is, and what to do.
#include <string>

#include "report/said.h"

namespace mlc::said {
namespace {

// How the loader found a file, in its own terms: the dynamic tag or the variable.
std::string search_words(loader::FoundHow how) {
  switch (how) {
    case loader::FoundHow::Rpath: return "a DT_RPATH";
    case loader::FoundHow::Runpath: return "a DT_RUNPATH";
    case loader::FoundHow::LdLibraryPath: return "LD_LIBRARY_PATH";
    case loader::FoundHow::Preload: return "LD_PRELOAD";
    case loader::FoundHow::LdSoCache: return "ld.so.cache";
    case loader::FoundHow::Default: return "the system directories";
    default: return loader::to_string(how);
  }
}

}  // namespace

std::string SearchCutShort::words() const {
  return "the search for definitions under " + root +
         (from_debug_info ? " (where the library's debug information says it was built)"
                          : " (the build's source directory)") +
         " stopped after " + std::to_string(limit) + " files; --source-root names the trees to search";
}
std::string ListedTwice::words() const { return file + " is listed twice in " + list + " (" + at + ")"; }

std::string DefinitionAt::phrase() const {
  std::string out = file + ":" + std::to_string(line);
  if (!key_function.empty()) out += " (the key function " + key_function + " is defined there)";
  if (!inexact_params.empty())
    out += " (same name and arity; its parameter types (" + inexact_params + ") could not be matched exactly)";
  if (template_body) out += " (a template body)";
  if (!included_from.empty()) out += " (defined in " + included_from + ", which " + file + " includes)";
  return out;
}

std::string DeclaredNotDefined::words() const {
  return "declared in " + file + (line ? ":" + std::to_string(*line) : "") +
         " but defined in no source, SDK library or CUDA library that was searched";
}
std::string StubOrFindSource::words() const {
  return "write a stub for it (musa-stubgen), or find the source that should define it";
}

std::string KernelListed::words() const {
  std::string listed = entries.front().op + " is listed in " + entries.front().at;
  if (entries.size() > 1) {
    listed = "one of ";
    for (size_t i = 0; i < entries.size(); ++i) listed += (i ? ", " : "") + entries[i].op + " (" + entries[i].at + ")";
    listed += " is listed";
  }
  return listed + " for " + backend + ", so the generated registration code calls " + qualified +
         (declaration.empty() ? "" : ", declared in " + declaration) +
         (other_signature.empty() ? ", but no source implements it"
                                  : ", but the library defines it only with other parameters: " + other_signature);
}
std::string ImplementKernel::words() const {
  return (other_signature ? "give the definition the generated declaration's parameters, or implement "
                          : "implement ") +
         qualified + " (" + op + "), or remove the entry " + op + " at " + at +
         "; musa-stubgen writes a stub that throws \"" + op + " is not implemented for " + backend +
         "\" so the library loads";
}

std::string StaleCopyTaken::words() const {
  if (!first.module.empty())
    return "the import of " + first.package + " (" + first.module + "), which runs first, loaded " + taken + " for " +
           soname + ", which lacks it; glibc gives every later DT_NEEDED of " + soname + " that copy, so " + definer +
           ", which defines it, is never loaded";
  return "the loader takes " + taken + " [" + loader::to_string(how) + "] for " + soname + ", which lacks it; " +
         definer + " defines it";
}
std::string LoadInstead::words() const {
  // A soname two packages vendor: no search path order of this file's gets past the copy loaded first.
  if (!first.module.empty()) {
    const std::string stem = soname.substr(0, soname.find(".so"));
    return first.own_package + " and " + first.package + " vendor " + soname +
           " under one soname: give the vendored copies distinct sonames (auditwheel repair renames each to " + stem +
           "-<hash>" + soname.substr(stem.size()) + " and patches its DT_NEEDED), or import " + first.own_package +
           "'s module before " + first.package;
  }
  // A preloaded copy is in the process before any search: no search path order gets past it.
  if (how == loader::FoundHow::Preload)
    return "take " + taken + " out of LD_PRELOAD (or /etc/ld.so.preload): it is loaded before anything searches, so " +
           definer + " is never loaded for its soname";
  return "load " + definer + " instead of " + taken + " (found through " + search_words(how) + "): put " +
         definer.substr(0, definer.rfind('/')) + " before it in the search path, or remove the stale copy";
}

std::string DefinedInUnlinked::words() const { return "defined in " + library + ", which the library does not link"; }
std::string DefinedOutOfScope::words() const {
  return "defined in " + library + ", which " + loaded_by + " loaded with RTLD_LOCAL; this library does not link " +
         soname + ", so that definition is not in its scope";
}
std::string DefinedInImportContext::words() const {
  return "defined in " + label + ", which this " + (module ? "module" : "library") + " does not link";
}
std::string LinkLine::phrase() const {
  if (!target.empty()) return "target_link_libraries(" + target + " PRIVATE " + link + ")";
  return "target_link_libraries(<target> PRIVATE " + link + "), <target> being the CMake target that builds " +
         library + (build_known ? " (the build model names none)" : " (not known without --build-dir)");
}
std::string LinkIt::words() const { return "link " + soname + ": " + line.phrase(); }
std::string OnlyInArchive::words() const {
  return "defined only in " + archive + "(" + member + "), a static archive: no shared library provides it";
}
std::string LinkArchive::words() const {
  return "link the archive into the library: " + line.phrase() + " (its objects must be position-independent)";
}
std::string OtherCopyDefinesToo::words() const {
  return "; " + other_copy +
         ", another installed copy of the library, defines it too, but the build's own product lacks it";
}

std::string NotInstantiated::words() const {
  return std::string(template_or_inline ? "a template or inline definition" : "defined") + " in " + at.phrase() +
         ", which no compiled translation unit instantiates for these arguments";
}
std::string InstantiateOrInclude::words() const {
  return "add an explicit instantiation to a compiled source, or include " + file + " where it is used";
}
std::string CompiledButOlder::words() const {
  return "defined in " + at.phrase() + ", which the build compiles since " + library + " was built";
}
std::string RebuildOlder::words() const {
  return "rebuild " + library + " (cmake --build): it predates the build's " + file;
}
std::string CompiledYetMissing::words() const {
  return "defined in " + at.phrase() +
         ", which is compiled, yet the symbol is missing: check #if guards and the library it is compiled into";
}
std::string CheckCompiledInto::words() const { return "check that " + file + " is compiled into this library"; }
std::string PortedCounterpartMissing::words() const {
  return "defined in " + at.phrase() + "; its ported counterpart " + ported + " does not exist";
}
std::string PortIt::words() const { return "port " + original + " (it is missing from the porting tree)"; }
std::string NotCompiled::words() const { return "defined in " + at.phrase() + ", which the build does not compile"; }
std::string CompileInto::words() const { return "compile " + file + " into the library"; }
std::string AddToList::words() const { return "add " + entry + " to " + list + " in " + cmake_file; }
std::string ListNote::words() const {
  const std::string glob = covered.file + " matches the file(GLOB) pattern " + covered.pattern + " of " + covered.list +
                           " (" + covered.at + ")";
  switch (covered.then) {
    case build::GlobCovers::Then::RemovedAgain:
      return glob + ", but " + covered.removal + " at " + covered.removal_at + " takes it out again: drop that entry";
    case build::GlobCovers::Then::ConfigureCompiles:
      return glob +
             ", and the configure compiles it, so it needs no entry: the library was built before it, rebuild it "
             "(cmake --build)";
    case build::GlobCovers::Then::NeedsNoEntry: break;
  }
  return glob +
         ", so it needs no entry: the fix lies elsewhere (re-run cmake if the file is newer than the configure; "
         "otherwise a wrong directory, #if guards or a missing port)";
}
std::string PytorchCpp::words() const {
  return (fix ? report::words(*fix) : std::string()) +
         " (PyTorch defines it in a .cpp: add the ported .cpp to PORTING_CPP_CSRCS, or report a bug)";
}

std::string SdkDeclaresOnly::words() const {
  return "declared in " + file + ":" + std::to_string(line) + ", but no library of the SDK (" + sdk_home +
         ") defines it";
}
std::string StubOrRequestFromSdk::words() const {
  return "stub it in unimplemented_functions.cpp (musa-stubgen) if the code never really calls it; otherwise request "
         "it from the SDK team";
}
std::string CounterpartByRule::words() const {
  return "; CUDA counterpart " + name + " by the " + api_prefix +
         "X -> cudaX naming rule (the porting map has no entry)";
}
std::string SdkLacksCudaHas::words() const {
  return "the " + sdk + " SDK lacks it; CUDA has " + name +
         (!library.empty() ? " in " + library : " (declared in " + declared_in + ")");
}
std::string SdkLacksMapMarks::words() const {
  return "the " + sdk + " SDK lacks it; the porting map (" + map_file + ":" + std::to_string(line) + ") marks " + name +
         " HIP_UNSUPPORTED";
}
std::string StubAndRequest::words() const {
  return "stub it (musa-stubgen) and request the " + sdk + " equivalent of " + name;
}
std::string CudaApiCalled::words() const {
  const std::string where =
      !library.empty() ? "CUDA's " + library + " exports it" : "CUDA declares it in " + declared_in;
  switch (counterpart) {
    case Counterpart::NoMap:
      return "a CUDA API the port still calls: " + where + "; give the porting map (--mapping) to name its " + sdk +
             " counterpart";
    case Counterpart::NoneInMap:
      return "a CUDA API the port still calls: " + where + "; the porting map has no " + sdk + " counterpart for it";
    case Counterpart::Named: break;
  }
  const std::string by = naming_rule.empty() ? "the porting map's" : "by the " + naming_rule + " naming rule, the";
  return "a CUDA API the port still calls: " + where + "; " + by + " " + sdk + " counterpart is " + name +
         (!exporter.empty()   ? ", which " + exporter + " exports"
          : !sdk_home.empty() ? ", which no library of the " + sdk + " SDK (" + sdk_home + ") exports"
                              : "");
}
std::string CallInstead::words() const {
  return "call " + counterpart + " instead of " + name +
         " where the port calls it (the porting map renames it; this call was missed), and rebuild";
}

}  // namespace mlc::said
