// What the passes found, as typed evidence for the report's sentences. A pass states a finding's
// reason, its fix, a cause's headline as one of these; report::write_sentences (src/report/words.cpp)
// writes every sentence from them. No pass composes text.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "build/model.h"
#include "report/report.h"

namespace mlc {
namespace said {

// --- the loader's level (trace/loader_miss.cpp) ---------------------------------------------------
struct VersionFileNotFound {  // a reference's version names a file the load did not find
  std::string file;
  std::string words() const;
};
struct NotWithVersion {  // defined, but not with the version the reference asks for
  std::string library, version;
  std::string words() const;
};
struct HiddenVersion {  // defined only under a non-default version
  std::string library;
  std::string words() const;
};
struct HiddenVisibility {  // defined with hidden or internal visibility in .dynsym
  std::string library;
  std::string words() const;
};
struct NoneLoadedLibraryMissing {  // no loaded object defines it; needed libraries were not found
  size_t missing = 0;              // 0: a needed library's file was refused instead
  std::string words() const;
};
struct NoneInScope {  // no object of the global scope defines it
  size_t loaded = 0;
  std::string words() const;
};
struct NotExported {  // a .symtab definition, local or hidden
  std::string library;
  std::string words() const;
};
struct RebuildAgainstLoaded {  // fix: rebuild against the loaded library
  std::string words() const;
};
struct MakeVersionDefault {  // fix: @@ in the version script
  std::string words() const;
};
struct GiveDefaultVisibility {  // fix: default visibility or the export map
  std::string words() const;
};
struct DefinedNowhere {                // searched what the run was given, defined nowhere
  std::optional<size_t> source_files;  // the sources indexed, when sources were given
  std::string sdk_home;                // the SDK searched ("" without)
  std::string cuda_searched;           // the CUDA install searched for this name ("" when not)
  bool cuda_given = false;             // a CUDA install was given (searched only for a CUDA API's name)
  bool no_compile_database = false;    // a build without compile_commands.json: the compiler could not try
  std::string words() const;
};
struct NotInSourcesSdkOrCuda {  // musa-linkcheck --explain of a bare name, before tracing
  std::string words() const;
};

// --- the tracer (trace/trace.cpp) -----------------------------------------------------------------
// Where a source defines it, and what else the tracer knows of that definition.
struct DefinitionAt {
  std::string file;
  size_t line = 0;
  std::string key_function;    // a vtable's: the key function that is defined there ("" for none)
  std::string inexact_params;  // same name and arity, these parameter types not matched ("" when exact)
  bool template_body = false;  // only this unit emits the template's body
  std::string included_from;   // the file:line of a plain definition only this unit includes ("" for none)
  std::string phrase() const;  // "file:line (...)"
};
struct DeclaredNotDefined {  // a declaration, and no definition in anything searched
  std::string file;
  std::optional<size_t> line;
  std::string words() const;
};
struct StubOrFindSource {  // fix
  std::string words() const;
};
struct KernelListed {  // a kernel a torchgen backend yaml lists
  struct Entry {
    std::string op, at;  // the op, and the yaml's file:line
  };
  std::vector<Entry> entries;
  std::string backend, qualified;
  std::string declaration;      // "file:line (text)" of the generated declaration ("" when none)
  std::string other_signature;  // the library's definition with other parameters ("" for none)
  std::string words() const;
};
struct ImplementKernel {  // fix
  bool other_signature = false;
  std::string qualified, op, at, backend;
  std::string words() const;
};
// Another package's extension module, imported before the file, loaded the copy taken: its package and its
// file, and the file's own package ("" when the copy came from a search of the file's own load).
struct ImportedFirstBy {
  std::string module, package, own_package;
};
struct StaleCopyTaken {  // the loader takes a copy that lacks it
  std::string taken;
  loader::FoundHow how = loader::FoundHow::Direct;
  std::string soname, definer;
  ImportedFirstBy first = {};
  std::string words() const;
};
struct LoadInstead {  // fix
  std::string definer, taken;
  loader::FoundHow how = loader::FoundHow::Direct;
  std::string soname = "";
  ImportedFirstBy first = {};
  std::string words() const;
};
struct DefinedInUnlinked {
  std::string library;
  std::string words() const;
};
struct DefinedOutOfScope {  // loaded with RTLD_LOCAL by another load
  std::string library, loaded_by, soname;
  std::string words() const;
};
struct DefinedInImportContext {
  std::string label;
  bool module = false;  // the referencing object is an extension module
  std::string words() const;
};
// The link a fix asks for, in CMake's words.
struct LinkLine {
  std::string target;  // "" when the build model names none
  std::string link;
  std::string library;  // the referencing library's file name (said when the target is not known)
  bool build_known = false;
  std::string phrase() const;
};
struct LinkIt {  // fix
  std::string soname;
  LinkLine line;
  std::string words() const;
};
struct OnlyInArchive {
  std::string archive, member;
  std::string words() const;
};
struct LinkArchive {  // fix
  LinkLine line;
  std::string words() const;
};
struct OtherCopyDefinesToo {  // clause: the installed copy beside the build's own product
  std::string other_copy;
  std::string words() const;
};
struct NotInstantiated {
  DefinitionAt at;
  bool template_or_inline = false;
  std::string words() const;
};
struct InstantiateOrInclude {  // fix
  std::string file;
  std::string words() const;
};
struct CompiledButOlder {
  DefinitionAt at;
  std::string library;
  std::string words() const;
};
struct RebuildOlder {  // fix
  std::string library, file;
  std::string words() const;
};
struct CompiledYetMissing {
  DefinitionAt at;
  std::string words() const;
};
struct CheckCompiledInto {  // fix
  std::string file;
  std::string words() const;
};
struct PortedCounterpartMissing {
  DefinitionAt at;
  std::string ported;
  std::string words() const;
};
struct PortIt {  // fix
  std::string original;
  std::string words() const;
};
struct NotCompiled {
  DefinitionAt at;
  std::string words() const;
};
struct CompileInto {  // fix: no list known
  std::string file;
  std::string words() const;
};
struct AddToList {  // fix
  std::string entry, list, cmake_file;
  std::string words() const;
};
struct ListNote {  // fix: a glob of the build covers the file already, so no entry is the fix
  build::GlobCovers covered;
  std::string words() const;
};
struct AddToExtension {          // fix: a setup.py Extension's sources
  std::string entry, extension;  // extension: "Kind('name') at setup.py:line"
  bool by_hand = false;          // the sources are no literal list: edited by hand
  std::string not_literal;       // what they are instead
  std::string variable;          // the sources are this variable's literal list ("" when inline)
  std::string variable_at;       // "setup.py:line" of its assignment
  std::string words() const;
};
struct GlobMisses {  // fix: sources= is a glob that does not match the file
  std::string entry, extension, glob;
  std::string words() const;
};
struct GlobCovers {  // fix: sources= is a glob that matches the file: the module is older than that
  std::string entry, extension, glob;
  std::string words() const;
};
struct AddJoinEntry {  // fix: sources= holds os.path.join(...) calls; the one to add, as its siblings
  std::string expression, extension;
  std::string words() const;
};
struct SiblingModuleDefines {  // another extension module of the same setup.py compiles the definer
  std::string module, file;    // that module, and the source of it that defines the symbol
  std::string words() const;
};
struct PytorchCpp {  // fix: another fix, and PyTorch's .cpp that defines it
  SaidPtr fix;
  std::string words() const;
};
struct SdkDeclaresOnly {
  std::string file;
  size_t line = 0;
  std::string sdk_home;
  std::string words() const;
};
struct StubOrRequestFromSdk {  // fix
  std::string words() const;
};
struct CounterpartByRule {  // clause
  std::string name, api_prefix;
  std::string words() const;
};
struct SdkLacksCudaHas {
  std::string sdk, name;
  std::string library;      // the CUDA library exporting it ("" when only declared)
  std::string declared_in;  // the CUDA header declaring it
  std::string words() const;
};
struct SdkLacksMapMarks {  // the porting map marks it HIP_UNSUPPORTED
  std::string sdk, map_file, name;
  size_t line = 0;
  std::string words() const;
};
struct StubAndRequest {  // fix
  std::string sdk, name;
  std::string words() const;
};
struct CudaApiCalled {      // a CUDA API the port still calls
  std::string library;      // the CUDA library exporting it ("" when only declared)
  std::string declared_in;  // the header that declares it
  std::string sdk;
  enum class Counterpart { NoMap, NoneInMap, Named } counterpart = Counterpart::NoMap;
  std::string name;         // the counterpart
  std::string naming_rule;  // found by this naming rule ("" when the map names it)
  std::string exporter;     // the SDK library exporting the counterpart
  std::string sdk_home;     // the SDK searched, when none exports it ("" without an SDK)
  std::string words() const;
};
struct CallInstead {  // fix
  std::string counterpart, name;
  std::string words() const;
};

// --- the tracer's resources (trace/resources.cpp): warnings of the run -------------------------------
struct SearchCutShort {  // the walk for definitions under a root stopped at its limit
  std::string root;
  bool from_debug_info = false;  // the root is where the library's DWARF says it was built (else the build's)
  size_t limit = 0;
  static constexpr WarningKind kWarning = WarningKind::SearchCutShort;
  std::string subject() const { return root; }
  std::string words() const;
};
struct ListedTwice {           // a source listed twice in one list
  std::string file, list, at;  // at: the list's file:line
  static constexpr WarningKind kWarning = WarningKind::ListedTwice;
  std::string subject() const { return at + ": " + file; }
  std::string words() const;
};

// --- shared causes (trace/causes.cpp) -------------------------------------------------------------
struct CopyLacks {  // headline: a stale copy picked before the right one
  std::string library;
  LibraryCopy picked, other;
  std::vector<std::string> missing_versions;  // sorted
  size_t symbols = 0;
  std::string words() const;
};
// A list the loader read a directory from ("the DT_RPATH of libfoo.so").
struct SearchList {
  loader::FoundHow how = loader::FoundHow::Direct;
  std::string holder;  // the object whose DT_RPATH or DT_RUNPATH it is
  std::string shown;   // the copy's `how` as the report shows it (system directories)
  std::string phrase() const;
};
struct RemoveStaleCopy {  // fix of a stale copy: remove it, or change the list that put it first
  LibraryCopy picked, other;
  SearchList picked_list, other_list;
  std::string words() const;
};
struct TorchCopyLacks {                // headline: an object built against another torch
  std::string holder, library, torch;  // torch: "torch 2.0.0"
  LibraryCopy picked, other;
  size_t symbols = 0;
  std::string words() const;
};
struct InstallTorchBuiltAgainst {  // fix
  std::string holder, library, torch, picked;
  std::string words() const;
};
struct TorchCopyLacksIt {  // one symbol of that cause
  std::string soname, torch;
  LibraryCopy picked, other;
  std::string words() const;
};
struct CopyTakenLacksIt {  // one symbol (or version) of a stale-copy cause
  std::string soname;
  LibraryCopy picked, other;
  std::string version;  // the version node the copy lacks ("" when it lacks the symbol)
  std::string words() const;
};
struct HostApiSymbols {  // headline: symbols of a host program's API
  size_t symbols = 0;
  bool python = true;  // the Python C API, else Perl's XS API
  std::string host;
  std::string words() const;
};
struct CheckAsHostLoads {  // fix
  bool python = true;
  std::string words() const;
};
struct PartOfHostApi {
  bool python = true;
  std::string host;
  std::string words() const;
};

// --- the host's passes (host/host_load.cpp, python/c_api.cpp) ---------------------------------
struct DefinedByHostLoad {  // a library the python3 executable loads itself defines it
  std::string soname, path, interpreter;
  std::string words() const;
};
struct HostApiAndOwnLibraries {  // headline: the Python C API and the interpreter's own libraries
  size_t api = 0, own = 0;
  std::vector<std::string> libraries;
  std::string words() const;
};
struct ApiNotInInterpreter {  // headline: the Python C API the interpreter lacks
  size_t symbols = 0;
  std::string interpreter, python;  // python: "Python 3.11" or "Python (version unknown)"
  std::string newest, example;      // the newest version that added a lacking name, and that name ("" unknown)
  std::string tag = "";             // the extension's name's tag (cpython-311), when it says another Python
  std::string words() const;
};
struct BuildAgainstPython {    // fix
  std::string python, newest;  // newest: "" when no later Python is needed
  std::string tag = "";        // the extension's name's tag, when it says another Python (newest is that one's)
  std::string words() const;
};
struct InterpreterTooOld {
  std::string added, interpreter, python;
  std::string words() const;
};
struct InterpreterLacks {
  std::string interpreter, python;
  std::string words() const;
};
struct ModuleDoesNotLink {  // clause: --as-needed dropped a library of the import context
  std::string label;
  std::string words() const;
};

// --- near misses and stand-ins (trace/suggest.cpp, trace/stand_in.cpp) ----------------------------
struct StandInHidesReal {  // the SDK now defines the C function a stand-in declares
  std::string qualified, name, definer;
  std::string words() const;
};
struct RemoveStandIn {  // fix
  std::string qualified, soname, name;
  std::string words() const;
};
struct StandInSdkLacks {  // a stand-in for a C function the SDK lacks and CUDA has
  std::string scope, name, sdk, cuda;
  std::string library;      // the CUDA library exporting it ("" when only declared)
  std::string declared_in;  // the CUDA header declaring it
  std::string words() const;
};
struct DefineStandIn {  // fix
  std::string qualified, name;
  std::string words() const;
};
// Another definition of the same function: what differs.
struct AbiDrift {
  std::string library, library_name, demangled;  // library_name: its file name
  SuggestionReason reason = SuggestionReason::Signature;
  enum class Kind { StringAbi, Parameter, Headers } kind = Kind::Headers;
  bool caller_cxx11 = false, library_cxx11 = false;  // StringAbi
  std::string what, there, here;                     // Parameter: "parameter 2" or "the method", and its types
  std::string words() const;
};
struct RebuildForAbi {  // fix
  AbiDrift drift;
  std::string words() const;
};
struct OtherInstantiationsOnly {  // missing-instantiation
  std::string demangled;
  std::string library_name;  // the library with the other instantiations ("" when only the sources have them)
  struct Instance {
    std::string demangled, at;  // at: the source's file:line ("" for a loaded one)
  };
  std::vector<Instance> instances;  // up to 8
  size_t more = 0;                  // and this many others
  std::string definition;           // where the template is defined, file[:line] ("" when not known)
  std::string words() const;
};
struct AddExplicitInstantiation {  // fix
  std::string line;                // the instantiation to add
  std::string definition;          // the file that defines the template ("" when not known)
  bool compiled = false;           // that file is a translation unit
  std::string library_name;        // the library to rebuild ("" for none)
  std::string words() const;
};

// --- installed files (installed/missing_library.cpp, installed/provider.cpp) ----------------------
struct NoLoadedDefinition {  // no loaded object defines it (the host pass decides after tracing)
  std::string words() const;
};
struct WouldComeFrom {  // the missing library a symbol would have come from, and why that one
  std::string owner;
  enum class Basis { Version, OtherVersionDefines, OnlyMissing } basis = Basis::OnlyMissing;
  std::string version;      // Version: the version required from it
  std::string definer, at;  // OtherVersionDefines: that version's soname and path
  std::string needer;       // OnlyMissing: the file name of the object that needs it
  std::string words() const;
};
struct LibraryNotFound {  // headline
  std::string name;
  std::vector<std::string> needers;  // file names
  std::vector<LibraryCopy> others;   // other versions found
  std::string beside;                // the very library beside its needer, off its search path ("" for none)
  bool checked = false;              // `beside` is a file the run checks elsewhere (a JDK's lib/server/libjvm.so)
  std::string words() const;
};
struct InstallLibrary {  // fix of a missing library
  std::string name;
  std::vector<std::string> needers;  // file names
  std::string first_needer;          // the first needer's path
  std::string beside;                // the very library beside the first needer, or checked by the run ("" for none)
  bool checked = false;              // `beside` is a file the run checks elsewhere: loading it first is a way out
  // The needers by directory, in the needers' order: (directory, file names); each directory has its own $ORIGIN path.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_dir;
  std::optional<LibraryCopy> other;  // another version found
  std::string other_soname;
  std::string words() const;
};
struct ProviderLacks {                      // the loaded owner of its family lacks it
  std::string soname, library, torch_note;  // torch_note: ", torch 2.0 (version.py)" or ""
  size_t members = 0;
  std::string family;
  std::vector<std::string> same;           // definitions of the same name it has instead
  std::vector<std::string> members_shown;  // other members of the family it has
  std::string words() const;
};
struct InstallProviderBuiltAgainst {       // fix
  std::string soname, torch, holder, who;  // who: the loaded owner, with its version
  std::string words() const;
};
struct ProviderLacksMany {  // headline
  std::string holder, soname, who, path, torch;
  size_t symbols = 0;
  std::string words() const;
};

// --- the compiler (confirm/confirm.cpp, confirm/evidence.cpp) -------------------------------------
// Why an uncompiled source is a candidate for a symbol text matching could not place.
struct CandidateBasis {
  enum class Kind { Named, Declares, Includes, SpellsBeside, Beside } kind = Kind::Named;
  std::string what;            // Includes: the header; SpellsBeside: the word
  std::string phrase() const;  // "" for Named (text matching named it)
};
struct CompilerPlaced {  // compiling a left-out source defines it
  std::string file;
  std::string command_from;  // the file whose build command compiled it ("" when its own)
  CandidateBasis basis;
  std::string words() const;
};
struct OtherMangling {  // clause: compiling a file defines it only under another mangling
  std::string file, other;
  std::string words() const;
};
struct NeededByGivenBack {  // clause: a source the patch gives back needs it
  std::string words() const;
};
// The confirm pass's own lines (warnings of the run, not of a finding).
struct CompileFailed {  // a candidate did not compile: the compiler's first error (told once per file)
  std::string file, error;
  static constexpr WarningKind kWarning = WarningKind::CompileFailed;
  std::string subject() const { return file; }
  std::string words() const;
};
struct NoCompileDatabase {
  std::string build_dir;  // "" without --build-dir
  size_t files = 0;       // candidates left unconfirmed
  static constexpr WarningKind kWarning = WarningKind::NoCompileDatabase;
  std::string subject() const { return ""; }
  std::string words() const;
};
struct NoScratchDirectory {
  std::string under;
  static constexpr WarningKind kWarning = WarningKind::NoScratchDirectory;
  std::string subject() const { return ""; }
  std::string words() const;
};
struct ConfirmCost {  // what confirming cost, against the budget
  size_t files = 0, compiled = 0, cached = 0, failed = 0, unsaid = 0, skipped = 0;
  double compile_ms = 0;
  static constexpr WarningKind kWarning = WarningKind::ConfirmCost;
  std::string subject() const { return ""; }
  std::string words() const;
};
struct CompilerPlacedCount {  // what the compiler placed, and where
  size_t settled = 0, wanted = 0;
  std::vector<std::pair<std::string, size_t>> by_file;  // file -> symbols it defines, in file order
  static constexpr WarningKind kWarning = WarningKind::CompilerPlaced;
  std::string subject() const { return ""; }
  std::string words() const;
};

// --- the import context (pipeline/load.cpp) ---------------------------------------------------------
struct TorchNotFound {  // warning: a file needs torch, which the run's interpreter does not import
  std::string file;
  TorchImportReason reason = TorchImportReason::PackageImportsTorch;
  std::string evidence;  // what shows it (the package's __init__.py, the torch library it needs)
  std::string python;    // --python's interpreter ("" without)
  std::string host;      // the host interpreter whose site directories were searched
  static constexpr WarningKind kWarning = WarningKind::TorchNotFound;
  std::string subject() const { return file; }
  std::string words() const;
};
struct OtherEnvironment {         // warning: files installed in another environment than --python's interpreter's
  std::string environment;        // the venv or conda environment they are installed in (one warning for all of them)
  std::string interpreter;        // that environment's bin/python3
  std::string python;             // --python's interpreter (its executable)
  bool python_from_path = false;  // bare --python: they were checked as their environment imports them
  static constexpr WarningKind kWarning = WarningKind::OtherEnvironment;
  std::string subject() const { return environment; }
  std::string words() const;
};
struct LoadsOnlyInImport {  // warning: a file torch's import loads fails alone
  std::string file;
  std::vector<std::string> providers;  // what that import loads first and it does not link
  static constexpr WarningKind kWarning = WarningKind::LoadsOnlyInImport;
  std::string subject() const { return file; }
  std::string words() const;
};

// A warning of the run from its evidence: the struct names its kind and what it is about (the subject
// the report keeps one warning per, with its kind), so no site spells either.
template <class T>
Warning warning(const T& said) {
  return {T::kWarning, said.subject(), said.words()};
}

}  // namespace said

// One piece of evidence as the report keeps it: the pass's value, and its words (written by
// src/report). Not a variant of every kind: each kind is instantiated only where a pass says it, so a
// new kind rebuilds the units that use it, and no unit pays for the other ninety.
struct Said {
  virtual ~Said() = default;
  virtual std::string words() const = 0;
};
template <class T>
struct SaidAs final : Said {
  explicit SaidAs(T e) : evidence(std::move(e)) {}
  std::string words() const override { return evidence.words(); }
  T evidence;
};

// The evidence as the report keeps it.
template <class T>
SaidPtr saying(T evidence) {
  return std::make_shared<const SaidAs<T>>(std::move(evidence));
}
// `u`'s reason is now `evidence` (what earlier passes said of it is replaced).
inline void say(UnresolvedSymbol& u, SaidPtr evidence) {
  u.why = std::move(evidence);
  u.why_also.clear();
}
template <class T>
void say(UnresolvedSymbol& u, T evidence) {
  say(u, saying(std::move(evidence)));
}
// The fix of a finding a shared cause explains: the cause's own, its evidence shared (not its words).
inline Fix cause_fix(const Cause& c, FixKind kind, std::optional<std::string> library = std::nullopt) {
  return Fix{.kind = kind,
             .cmake_file = std::nullopt,
             .list = std::nullopt,
             .entry = std::nullopt,
             .library = std::move(library),
             .why = c.fix_why};
}
// A clause added to `u`'s reason (its words begin with their joint: "; ...", " (...)").
template <class T>
void also(UnresolvedSymbol& u, T evidence) {
  u.why_also.push_back(saying(std::move(evidence)));
}
// Whether `u`'s reason has a clause of kind T.
template <class T>
bool says_also(const UnresolvedSymbol& u) {
  for (const auto& a : u.why_also)
    if (dynamic_cast<const SaidAs<T>*>(a.get())) return true;
  return false;
}

namespace report {

// The sentence `s` states.
std::string words(const Said& s);
// Writes every sentence of the report from its evidence: each finding's reason and fix, each cause's
// headline and fix. A sentence without evidence (a saved report read back) stays as it is.
void write_sentences(Report& report);
void write_sentences(UnresolvedSymbol& u);
// Why a file is checked after the import of torch, as one clause ("torch/__init__.py imports it").
std::string torch_reason(TorchImportReason reason, const std::string& evidence);
// The fix of a load failure glibc gives for `kind`, naming `facts`.
std::string failure_fix(loader::FailureKind kind, const loader::FailureFacts& facts);
// The message of a load failure of `kind`: glibc's words (Python's for an import), naming `facts`. A
// PackageImport's is the failing module's own (dlopen_error).
std::string failure_message(loader::FailureKind kind, const loader::FailureFacts& facts);
// What dlerror() says when `target`'s load fails, from `report`'s findings (their messages written): the
// first missing library, else the first undefined symbol, else the first other failure.
std::string dlopen_error(const Report& report, const LibraryReport& target);

}  // namespace report
}  // namespace mlc
