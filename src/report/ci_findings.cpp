// Flattening a Report for the CI formats, from the finding model itself: the diagnosis of each
// finding is the text renderer's own block for it (report/text_block.h), so SARIF, JUnit and GitHub
// annotations never drift from what the build log says.
#include "report/ci_findings.h"

#include <fmt/format.h>

#include <map>

#include "report/baseline.h"
#include "report/escape.h"
#include "report/render.h"
#include "report/text_block.h"

namespace mlc::ci {
namespace {

// A block's evidence on one line each: the text report aligns a reference's library under its
// file:line; one line reads better here.
std::vector<std::string> one_line_each(const std::vector<text::Detail>& details) {
  std::vector<std::string> out;
  for (const auto& d : details) out.push_back(d.under.empty() ? d.line : d.line + " in " + d.under);
  return out;
}

Finding make(const LibraryReport& lib, const UnresolvedSymbol* u, Rule rule, std::string name, bool baselined,
             text::Block block) {
  return Finding{.library = &lib,
                 .symbol = u,
                 .rule = rule,
                 .name = std::move(name),
                 .title = std::move(block.title),
                 .details = one_line_each(block.details),
                 .file = std::nullopt,
                 .line = std::nullopt,
                 .baselined = baselined};
}

}  // namespace

std::string rule_id(const Rule& rule) {
  switch (rule.kind) {
    case Rule::Kind::LoadFailure: return "load-failure";
    case Rule::Kind::RuntimeLookup: return "runtime-lookup";
    case Rule::Kind::Classified: break;
  }
  return to_string(rule.classification);
}

// A finding a shared cause explains is told here in full, as alone in the text report (CI shows
// each finding on its own).
std::vector<Finding> findings(const Report& report, const SourceExists& source_exists) {
  std::vector<Finding> out;
  for (const auto& lib : report.libraries) {
    for (const auto& f : lib.load_failures)
      out.push_back(make(lib, nullptr, kLoadFailureRule, f.file.substr(f.file.rfind('/') + 1) + ": " + *f.message,
                         f.baselined, text::load_failure_block(lib, f)));
    for (const auto& need : lib.needed)
      if (!need.path && !need.refused)
        out.push_back(make(lib, nullptr, classified(Classification::MissingLibrary), need.name, need.baselined,
                           text::missing_library_block(lib, need)));
    for (const auto& mv : lib.missing_versions)
      out.push_back(make(lib, nullptr, classified(Classification::VersionMismatch), mv.version + " (" + mv.file + ")",
                         mv.baselined, text::missing_version_block(lib, mv)));
    for (const auto& u : lib.unresolved) {
      Finding f = make(lib, &u, classified(u.classification), u.demangled + (u.version ? "@" + *u.version : ""),
                       u.baselined, text::undefined_symbol_block(lib, u));
      // A source path the DWARF names but this machine lacks (the build ran in a container) is no
      // place for an annotation: the next reference's, else the library.
      for (const auto& r : u.referenced_by) {
        if (!r.file || (source_exists && !source_exists(*r.file))) continue;
        f.file = r.file;
        f.line = r.line;
        break;
      }
      out.push_back(std::move(f));
    }
  }
  std::map<const LibraryReport*, bool> fails;  // per library, not per finding: the walk is over every target
  for (auto& f : out) {
    auto [it, fresh] = fails.try_emplace(f.library, false);
    if (fresh) it->second = fails_the_run(report, *f.library);
    f.warning = !f.baselined && !it->second;
  }
  return out;
}

std::vector<LookupFinding> runtime_findings(const Report& report) {
  std::vector<LookupFinding> out;
  for (const auto& r : report.runtime_lookups) {
    text::Block block = text::runtime_lookup_block(r);
    out.push_back({.lookup = &r,
                   .title = std::move(block.title),
                   .details = one_line_each(block.details),
                   .fatal = report.runtime_lookups_fatal});
  }
  return out;
}

}  // namespace mlc::ci

namespace mlc {

std::string relative_to_root(const std::string& path, const std::string& root) {
  if (root.empty()) return path;
  std::string dir = root.back() == '/' ? root : root + "/";
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 ? path.substr(dir.size()) : path;
}

}  // namespace mlc

namespace mlc::ci {

std::string printable_utf8(std::string_view text, bool xml) {
  std::string out = utf8_escaped(text);  // one escaping rule for every writer (report/escape.h)
  if (!xml) return out;
  // XML 1.0 allows no C0 control but tab, newline and CR; they are written as escaped bytes are.
  std::string clean;
  clean.reserve(out.size());
  for (char c : out) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      clean += fmt::format("\\x{:02X}", u);
    } else {
      clean += c;
    }
  }
  return clean;
}

// The rule text of each classification: an exhaustive switch, so a classification added to the enum
// without its text does not compile (-Wswitch under MLC_WERROR).
RuleText rule_text(Classification c) {
  switch (c) {
    case Classification::MissingSource:
      return {Classification::MissingSource, "MissingSource",
              "The symbol is defined in a source file that is not compiled into the library.",
              "A definition (or explicit instantiation) exists in the porting tree or the project's sources, but the "
              "build does not compile that file into this library. Add the file to the CMake source list named in the "
              "fix (musa-stubgen --apply does it)."};
    case Classification::UnlinkedLibrary:
      return {Classification::UnlinkedLibrary, "UnlinkedLibrary",
              "The symbol is defined in a library the target does not link.",
              "A library of the build or the SDK exports the symbol, but the target does not link it, so it is not "
              "loaded. Add it with target_link_libraries(<target> PRIVATE <library>)."};
    case Classification::SdkDeclaredOnly:
      return {Classification::SdkDeclaredOnly, "SdkDeclaredOnly",
              "The SDK headers declare the symbol but no SDK library defines it.",
              "The vendor SDK declares the function in its headers but ships no definition. Until the SDK provides it, "
              "musa-stubgen writes a stub that fails loudly when called."};
    case Classification::CudaOnly:
      return {Classification::CudaOnly, "CudaOnly", "The symbol exists only in CUDA; the SDK has no counterpart.",
              "The name comes from CUDA (found in the reference CUDA install) and the MUSA SDK has no equivalent. Port "
              "the caller, or stub it with musa-stubgen."};
    case Classification::AbiMismatch:
      return {Classification::AbiMismatch, "AbiMismatch",
              "A definition exists with a different signature, constness or C++ ABI tag.",
              "A loaded library exports a near-identical symbol (cxx11 ABI tag, const, parameter types). Rebuild both "
              "sides with the same _GLIBCXX_USE_CXX11_ABI and the same declaration."};
    case Classification::VersionMismatch:
      return {Classification::VersionMismatch, "VersionMismatch",
              "The symbol or symbol version required is not in the library loaded at run time.",
              "The library was linked against a provider that had this version; the one the loader finds does not. "
              "Rebuild against the library loaded at run time, or load the one it was linked against."};
    case Classification::Hidden:
      return {
          Classification::Hidden, "Hidden", "A definition exists but is not exported.",
          "The provider defines the symbol with hidden visibility, under a hidden (non-default) version, or only in "
          ".symtab. Export it (visibility attribute or version script)."};
    case Classification::Shadowed:
      return {Classification::Shadowed, "Shadowed",
              "The library that should define the symbol is shadowed by another file of the same name.",
              "The loader finds a different file under the provider's soname first (search order), and that file lacks "
              "the symbol. Fix the search path or the RUNPATH so the right file is loaded."};
    case Classification::MissingLibrary:
      return {Classification::MissingLibrary, "MissingLibrary", "A needed library is not found by the loader.",
              "A DT_NEEDED entry is found on no search path (RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache, default "
              "directories). Install it or add its directory to the RUNPATH."};
    case Classification::ProviderMismatch:
      return {Classification::ProviderMismatch, "ProviderMismatch",
              "The loaded library that owns the symbol's namespace or class lacks it: built against another version.",
              "A library that is loaded defines most of the symbol's namespace or class (or is the one the referencing "
              "object links for it), but not this symbol: the object was built against another version of it. Install "
              "the version the object was built for, or rebuild the object against the loaded one."};
    case Classification::StaticArchive:
      return {
          Classification::StaticArchive, "StaticArchive", "Only a static archive of the SDK defines the symbol.",
          "The symbol is defined in an SDK static archive (.a), not a shared library. Link the archive (its objects "
          "must be position-independent) or use a shared build of it."};
    case Classification::MissingInstantiation:
      return {Classification::MissingInstantiation, "MissingInstantiation",
              "The template is instantiated elsewhere, but not with these arguments.",
              "Other instantiations of the template exist in the build or the SDK, but not this one: the definition "
              "lives in a source file and only some argument lists are explicitly instantiated there. Add an explicit "
              "instantiation for these arguments (template class X<T>; or template R f<T>(...);) beside the others."};
    case Classification::HostProvided:
      return {Classification::HostProvided, "HostProvided", "The program that loads the library defines the symbol.",
              "The symbol belongs to the host program's API (the Python C API of the interpreter that imports an "
              "extension, Perl's XS API): no library defines it, the executable does. Check the library as the host "
              "loads it (--python, or --with the host executable)."};
    case Classification::Unported:
      return {
          Classification::Unported, "Unported", "A CUDA API the port still calls; the backend has a counterpart.",
          "The name is CUDA's own (a library of the reference CUDA install exports it): the porting script left the "
          "call unrenamed. Call the counterpart the porting map names instead and rebuild; a stub would hide it."};
    case Classification::UnimplementedKernel:
      return {
          Classification::UnimplementedKernel, "UnimplementedKernel",
          "A kernel the backend's torchgen yaml lists is implemented by no source.",
          "The backend yaml that gen_backend_stubs reads lists the operator, so the generated Register<Backend>.cpp "
          "calls <cpp_namespace>::<Backend>NativeFunctions::<op>, but no source defines it. Implement the kernel, "
          "or remove the entry from the yaml; musa-stubgen writes a stub that throws so the library loads."};
    case Classification::Unknown:
      return {Classification::Unknown, "Unknown", "No definition or declaration of the symbol was found.",
              "Nothing in the build, the sources, the SDK or CUDA defines or declares the symbol. Give more context "
              "(--build-dir, --source-root, --sdk-home) or check the spelling."};
  }
  return {c, "Unknown", "", ""};
}

const std::vector<RuleText>& rules() {
  static const std::vector<RuleText> table = [] {
    std::vector<RuleText> t;
    for (Classification c : all_classifications()) t.push_back(rule_text(c));
    return t;
  }();
  return table;
}

}  // namespace mlc::ci
