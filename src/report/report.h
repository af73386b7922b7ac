// The findings model: what the pipeline concluded about each analysed library, independent of
// how it is rendered. Field names follow docs/contract.md's JSON report.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "loader/failure_kind.h"
#include "loader/found_how.h"
#include "report/sealed.h"

namespace mlc {

// A pass's typed evidence for one sentence of the report (src/report/said.h); the report writes the
// sentence from it (report::write_sentences), no pass writes text.
struct Said;
using SaidPtr = std::shared_ptr<const Said>;

enum class Classification {
  MissingSource,
  UnlinkedLibrary,
  SdkDeclaredOnly,
  CudaOnly,
  AbiMismatch,
  VersionMismatch,
  Hidden,
  Shadowed,
  MissingLibrary,
  StaticArchive,
  MissingInstantiation,  // other instantiations of the template exist, not this one
  ProviderMismatch,      // the loaded library that owns its namespace lacks it: built against another version
  HostProvided,          // the host program that loads the library defines it (Python C API, Perl XS)
  Unported,              // a CUDA API the port still calls; the porting map names its counterpart
  UnimplementedKernel,   // a kernel a torchgen backend yaml lists, which no source implements
  Unknown,               // stays last: all_classifications() runs up to it
};
// Every classification, in the enum's order (SARIF rule indexes, docs, tests).
std::vector<Classification> all_classifications();

// What kind of symbol a reference names (JSON `type`). An undefined reference has no type of its own
// in .dynsym; the referencing library's DWARF can tell a variable.
enum class SymbolType { Func, Object, Tls, NoType };

// What the origin of a symbol is (JSON `origin.kind`).
enum class OriginKind { Definition, ExplicitInstantiation, Declaration, Library };

// What a fix does (JSON `fix.kind`).
enum class FixKind { AddSource, LinkLibrary, Stub, RebuildAbi, AddInstantiation, ExportSymbol, UseLibrary, None };

// Each kind's name in the JSON report (docs/contract.md), and back: the one table of each is the
// switch in to_string (the compiler checks it covers every value); from_string searches it up to the
// enum's last value (new values go before that one) and is empty for a name it does not hold.
const char* to_string(Classification c);
const char* to_string(SymbolType t);
const char* to_string(OriginKind k);
const char* to_string(FixKind k);
template <typename Kind>
std::optional<Kind> from_string(std::string_view name);
template <>
std::optional<Classification> from_string(std::string_view name);
template <>
std::optional<SymbolType> from_string(std::string_view name);
template <>
std::optional<OriginKind> from_string(std::string_view name);
template <>
std::optional<FixKind> from_string(std::string_view name);

// A count as the headlines write it: 12,345.
std::string with_commas(size_t n);

struct Reference {
  std::string library;
  std::optional<std::string> function;
  std::optional<std::string> file;
  std::optional<int> line;
};

struct Origin {
  std::string file;
  std::optional<int> line;
  OriginKind kind = OriginKind::Definition;
  std::optional<std::string> library;
  std::optional<std::string> ported_from;
};

struct Counterpart {
  std::string name;
  std::optional<std::string> library;
};

// Why a near miss may be what was meant (JSON `suggestions[].reason`): the other std::string ABI,
// a parameter by value against by reference, const drift, another signature, another instantiation,
// another namespace, the C function of that name; source-signature: a declaration in the sources with
// other parameters (no evidence of ABI drift, which needs a binary).
enum class SuggestionReason { Cxx11Abi, ByValue, Const, Signature, Instantiation, Namespace, ExternC, SourceSignature };
const char* to_string(SuggestionReason r);

struct Suggestion {
  std::string symbol;
  std::string demangled;
  std::string library;
  SuggestionReason reason = SuggestionReason::Signature;
};

struct Fix {
  FixKind kind = FixKind::None;
  std::optional<std::string> cmake_file;
  std::optional<std::string> list;
  std::optional<std::string> entry;
  std::optional<std::string> library;
  Sealed<std::string> detail = {};  // written by the report from `why` (or read from a saved report)
  SaidPtr why = nullptr;
};

// The passes that give evidence about a finding, lowest rank first (src/verdict decides between
// them): a claim of a later pass outranks any claim of an earlier one, whatever order they ran in, and
// within one pass the last claim stands. docs/design.md's "Evidence order" says why each pass
// outranks those above it.
enum class EvidencePass {
  Loader,          // the binding's Miss (classify_loader_miss)
  Unexported,      // a definition only in some object's .symtab
  Shadow,          // a stale copy picked first (trace::find_shadowing)
  MissingLibrary,  // a needed library found nowhere (installed::find_missing_libraries)
  Trace,           // the tracer's decision tree (trace::trace_symbol)
  Compiler,        // what the real compiler placed (confirm::confirm_symbols)
  HostApi,         // the C API the hosting interpreter lacks
  Host,            // a host program's API (Python, Perl)
  HostLoad,        // the hosting interpreter's own load defines it
  NearMiss,        // another definition of the same entity (trace::suggest, suggest_in_import_context)
  Provider,        // the loaded library owning its name lacks it (installed::find_provider_mismatch)
};
const char* to_string(EvidencePass p);

// What a claim stands on: the finding's sentence, definition and fix as its pass left them (closed when the
// next claim is made, or at the resolve).
struct ClaimEvidence {
  SaidPtr why;
  std::optional<Origin> origin;
  std::optional<Fix> fix;
};

// What one pass concluded about a finding, with its evidence: the winning claim is taken whole.
struct Claim {
  EvidencePass by = EvidencePass::Loader;
  Classification is = Classification::Unknown;
  std::optional<ClaimEvidence> evidence = std::nullopt;
};

// What a run warns of: worth knowing, not failing (JSON `warnings`: their words).
enum class WarningKind {
  ListedTwice,        // a source list names a file twice
  SearchCutShort,     // a source tree's walk stopped at its limit
  TorchNotFound,      // a file needs torch, which the run's interpreter does not import
  LoadsOnlyInImport,  // a file binds only in torch's import scope
  OtherEnvironment,   // a file installed in another environment than --python's interpreter
  NoCompileDatabase,  // --confirm without compile_commands.json
  NoScratchDirectory,
  CompileFailed,  // a candidate source did not compile
  ConfirmCost,    // what confirming compiled
  CompilerPlaced  // what the compiler placed where
};
// One warning: its kind, what it concerns (a file or directory; "" for a summary of the run) and its words
// (src/report/said.h). The same kind about the same file is one warning, whatever its words (the closure,
// the plan's proof and the link check compile the same files); a summary is one by its words.
struct Warning {
  WarningKind kind = WarningKind::ListedTwice;
  std::string about;
  std::string text;
  bool same_as(const Warning& o) const {
    return kind == o.kind && about == o.about && (!about.empty() || text == o.text);
  }
};
// Keeps the first of each warning (same_as), in order.
void drop_repeated(std::vector<Warning>& warnings);

// How strongly a reference binds (JSON `binding`): a weak one may stay unresolved at run time.
enum class ReferenceBinding { Global, Weak };
const char* to_string(ReferenceBinding b);
template <>
std::optional<ReferenceBinding> from_string(std::string_view name);

struct UnresolvedSymbol {
  std::string symbol;
  std::string demangled;
  std::optional<std::string> version;
  SymbolType type = SymbolType::NoType;
  // A variable's byte size as the referencing library's DWARF declares it (what a data stub must
  // reserve); unknown for a function, or without debug information.
  std::optional<uint64_t> size = std::nullopt;
  ReferenceBinding binding = ReferenceBinding::Global;
  std::vector<Reference> referenced_by;
  // Decided by verdict::resolve from `claims` (or read from a saved report); the passes only claim.
  Sealed<Classification, Classification::Unknown> classification = {};
  std::vector<Claim> claims = {};      // the passes' evidence, in the order they ran; not reported
  Sealed<std::string> reason = {};     // one sentence, written by the report from `why` and `why_also`
  SaidPtr why = nullptr;               // the evidence the reason states (the last pass to say it)
  std::vector<SaidPtr> why_also = {};  // clauses later passes add to it
  std::optional<Origin> origin;
  std::optional<Counterpart> counterpart;
  std::vector<Suggestion> suggestions;
  std::optional<Fix> fix;
  bool baselined = false;                           // listed in the --baseline file: reported, not failing
  std::optional<std::string> cause = std::nullopt;  // id of the Report::causes entry that explains it
};

// The package a library file belongs to, as known offline (dpkg's database, a Python dist-info
// RECORD, conda-meta, an SDK's version file).
enum class OwnerKind { Dpkg, Python, Conda, Sdk };
// JSON `owner.kind`, and the site index's cache file (src/environment/site_index.cpp) both ways.
const char* to_string(OwnerKind k);
template <>
std::optional<OwnerKind> from_string(std::string_view name);

struct PackageOwner {
  OwnerKind kind = OwnerKind::Dpkg;
  std::string name;
  std::string version;
};

struct SearchStep {
  std::string path;
  loader::FoundHow how = loader::FoundHow::Direct;
  loader::SearchOutcome outcome;
};

struct NeededLibrary {
  std::string name;
  std::optional<std::string> path;
  // A file of that name the search met and glibc refuses (loader::FailureKind::BadCandidate, NoOpen):
  // the library is not missing, its load fails there (told as a load failure).
  std::optional<std::string> refused = std::nullopt;
  loader::FoundHow how = loader::FoundHow::Direct;  // how `path` was found (when it was)
  std::vector<std::string> searched;                // directories (or cache files) considered, in order
  std::vector<SearchStep> search;                   // the same, with each candidate path and its outcome
  bool baselined = false;
  std::optional<std::string> cause = std::nullopt;   // a missing-library cause: told under its headline
  std::optional<PackageOwner> owner = std::nullopt;  // who installed the file found, where known
};

struct MissingVersionFinding {
  std::string version;
  std::string file;
  std::optional<std::string> provider;
  bool baselined = false;
  std::optional<std::string> cause = std::nullopt;  // id of the Report::causes entry that explains it
};

// A load glibc fails for another reason than a missing library, symbol or version
// (loader::FailureKind): a refused candidate, DF_1_NOOPEN, static TLS, an assertion...
struct LoadFailureFinding {
  loader::FailureKind kind = loader::FailureKind::BadCandidate;
  std::string file;                  // the file it concerns (absolute)
  Sealed<std::string> message = {};  // glibc's words (or Python's), written by the report from `kind` and `facts`
  std::optional<std::string> symbol = std::nullopt;
  Sealed<std::string> fix = {};  // what to do, written by the report from `facts` (or read from a saved report)
  bool baselined = false;
  std::optional<loader::FailureFacts> facts = std::nullopt;
};

// A copy of a library and how the loader (or the tool) found it.
struct LibraryCopy {
  std::string path;
  loader::FoundHow how = loader::FoundHow::Direct;
  std::string home = "";  // FoundHow::Home: the glob of the homes it was found under ("/usr/local/musa*")
};
// A copy's `how` as the report shows it: the FoundHow's name, or for a home the glob it was found by.
std::string shown_how(const LibraryCopy& copy);

// One cause shared by many findings, told once: a stale copy picked before the right one
// (shadowed, version-mismatch), symbols the host process provides (host), or a needed library that
// is nowhere (missing-library: `others` are the other versions of it that were found).
// provider-mismatch: the loaded owner of a namespace lacks what an object was built against.
enum class CauseKind { Shadowed, VersionMismatch, ProviderMismatch, Host, MissingLibrary };
const char* to_string(CauseKind k);  // JSON `causes[].kind`

struct Cause {
  std::string id;
  CauseKind kind = CauseKind::Shadowed;
  Sealed<std::string> headline = {};  // one sentence naming the cause, written by the report from `headline_why`
  std::string library;                // the soname concerned, or the host ("python3", "perl")
  std::optional<LibraryCopy> picked, other;
  std::vector<std::string> missing_versions;
  size_t symbols = 0;                  // unresolved symbols it explains
  Sealed<std::string> fix = {};        // written by the report from `fix_why`
  std::vector<LibraryCopy> others;     // missing-library: other versions found, and where (how)
  std::vector<std::string> needed_by;  // missing-library: the objects whose DT_NEEDED names it
  // host: of `symbols`, those the host program's own libraries define (libm's pow for python3), and
  // those libraries' sonames (src/host).
  size_t from_host_load = 0;
  std::vector<std::string> host_libraries;
  SaidPtr headline_why = nullptr, fix_why = nullptr;  // the evidence `headline` and `fix` state
};

// The run's shared causes, in the order they were found. One counter issues every id and never goes
// back, so a cause that is dropped later (reclaim_own_build, explain) never lends its id to the next.
class CauseList {
 public:
  Cause& add(Cause cause);  // gives `cause` the next id
  template <class Pred>
  size_t erase_if(Pred pred) {
    return std::erase_if(causes_, pred);
  }
  auto begin() { return causes_.begin(); }
  auto end() { return causes_.end(); }
  auto begin() const { return causes_.begin(); }
  auto end() const { return causes_.end(); }
  size_t size() const { return causes_.size(); }
  bool empty() const { return causes_.empty(); }

 private:
  std::vector<Cause> causes_;
  size_t issued_ = 0;
};

// A name a library looks up at run time (a string literal given to dlopen or dlsym) that the
// environment does not satisfy: a warning unless the run makes it fatal (--fail-on runtime).
enum class LookupKind {
  Dlopen,  // the library is not found
  Dlsym,   // the library found lacks the entry point
};
const char* to_string(LookupKind k);  // JSON `runtime_lookups[].kind`

struct RuntimeLookup {
  std::string library;  // the object holding the string literal
  LookupKind kind = LookupKind::Dlopen;
  std::string name;                     // the soname, or the entry point
  std::optional<std::string> provider;  // for dlsym: the library dlopen would load
  std::string provider_name;            // for dlsym: its soname as the literal spells it
  std::vector<std::string> searched;    // for dlopen: every path considered
  // A GPU driver (libcuda.so.1, libmusa.so.*, libamdhip64.so.*): the run-time look-up that decides
  // whether the stack works at all. Every other look-up is optional (a plugin, a vendor extension).
  bool driver = false;
};

// The Python environment a run checked against (--python): the interpreter and the torch it imports.
struct PythonContext {
  std::string interpreter;  // as named
  std::string executable;   // what it resolved to (sys.executable)
  std::string version;
  std::optional<std::string> torch_path, torch_version;
  std::optional<PackageOwner> torch_owner;
};

// Why a library was checked: named by the user, brought in by loading a target, or loaded before
// the targets (--with/--python or their dependencies; checked only with --closure).
enum class LibraryRole { Target, Dependency, Preloaded };
// JSON `libraries[].role`; read back by read_json, whose stubs go into the targets alone.
const char* to_string(LibraryRole r);
template <>
std::optional<LibraryRole> from_string(std::string_view name);

// The import of torch a file's process does before it loads the file (src/python/import_plan.h), and why
// the tool took it to come first: a module its package runs first imports torch (evidence: that module,
// relative to its site directory), its DT_NEEDED names torch's libraries (evidence: the soname), or it is
// part of torch itself (evidence: torch/__init__.py). src/python's import plan decides it.
enum class TorchImportReason { PackageImportsTorch, NeedsTorchLibraries, PartOfTorch };
const char* to_string(TorchImportReason r);  // JSON `libraries[].imported_after.reason`

struct ImportedAfter {
  std::string torch;                   // the torch package directory
  std::optional<std::string> version;  // torch's version, where known
  TorchImportReason reason = TorchImportReason::PackageImportsTorch;
  std::string evidence;
};

struct LibraryReport {
  std::string path;
  std::string soname;
  LibraryRole role = LibraryRole::Target;
  std::optional<std::string> loaded_by;  // the target whose load brought it in (dependencies)
  bool python_extension = false;         // exports PyInit_<module>: Python imports it
  // An executable (ET_EXEC, or DF_1_PIE): checked as the program's start (ldd -r), not as a dlopen,
  // which glibc refuses for it (src/loader/program.h).
  bool program = false;
  // A named file found by walking a named directory, not named itself: a program found so is
  // counted apart from what imports load (program_apart).
  bool found_in_directory = false;
  bool in_sdk = false;  // under --sdk-home
  std::vector<NeededLibrary> needed;
  std::vector<MissingVersionFinding> missing_versions;
  std::vector<UnresolvedSymbol> unresolved;
  std::vector<LoadFailureFinding> load_failures;     // the load fails there for another reason
  std::optional<PackageOwner> owner = std::nullopt;  // who installed this file, where known
  // The Python interpreter that is the main program of its process (its C API binds the file's Py*
  // names): --python's for every file, else the host a file Python hosts gets (src/python/hosting.h).
  std::optional<std::string> host = std::nullopt;
  bool needs_python_api = false;  // hosted as a library of modules: not a module, yet it needs the C API
  std::optional<ImportedAfter> imported_after = std::nullopt;  // checked as loaded after `import torch`
  // A plugin checked as loaded into the program that loads it (and exports what it uses): that program.
  std::optional<std::string> plugin_of = std::nullopt;
  // A named file: every other object its load brings in, the import of torch it does first included, by
  // path. In a run over many files a dependency is reported once, under the first file that loads it; this
  // is how each later file that loads it still fails with it. Not rendered.
  std::vector<std::string> load_objects = {};
  size_t missing_libraries() const;
};

// Whether a named file's load is part-made of `lib`: itself, a dependency it brings in, or a library of
// the import of torch it does first.
bool part_of_load(const LibraryReport& target, const LibraryReport& lib);
// Whether loading the named file would fail (a finding, not baselined, in any part of its load).
bool load_fails(const struct Report& report, const LibraryReport& target);
// A program found by walking a named directory: no import runs it, so whether it starts is told apart
// from what the directory's imports load, and fails the run only with --fail-on ...,programs.
bool program_apart(const LibraryReport& target);

struct Report {
  std::vector<LibraryReport> libraries;
  std::vector<InputError> errors;  // unusable inputs; the other inputs are still reported
  std::vector<Warning> warnings;   // worth knowing, not failing (e.g. a source listed twice)
  std::vector<std::string>
      notes;         // what the run did that a person should know (it ran cmake): the tools say them on stderr
  CauseList causes;  // shared causes, linked from findings by id
  std::vector<RuntimeLookup> runtime_lookups;  // dlopen/dlsym names not satisfied (warnings by default)
  bool runtime_lookups_fatal = false;          // --fail-on runtime: they fail the run
  bool programs_fatal = false;  // --fail-on programs: a program found in a directory that would not start fails it
  std::optional<PythonContext> python;  // --python: the environment checked against
  std::string interpreter;              // --python: the interpreter loaded first ("" without)
  // --with libraries given without :global or :local that were loaded with RTLD_LOCAL before an extension
  // module, as Python's import loads torch's libraries (what the text report says once).
  std::vector<std::string> with_as_import = {};
  size_t unresolved_count() const;
  size_t missing_library_count() const;
  size_t missing_version_count() const;
  size_t load_failure_count() const;
  std::map<std::string, size_t> by_classification() const;
};

}  // namespace mlc
