// musa-stubgen's core: from a linkcheck report, plan signature-accurate stubs (merged into
// unimplemented_functions.cpp/.h without touching what a person wrote) and CMake patches (a source
// list entry for each missing source, a link for each unlinked library). Planning reads and computes
// only; the tool decides whether to print, write a diff, or apply.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "report/render.h"
#include "report/report.h"
#include "trace/trace.h"

namespace mlc::stubgen {

enum class Style { Throw, Abort, ReturnError };

struct StubOptions {
  Style style = Style::Throw;
  std::string out_cpp = "unimplemented_functions.cpp";
  std::string out_header = "unimplemented_functions.h";
  // The stub runtime's header (stubs/musa_stubs.h) to copy beside the stubs, under the backend's
  // names (backend::stub_runtime_text): "" to skip.
  std::string runtime_header;
  std::string ns;  // enclosing namespace for C++ stubs whose own namespace cannot be used
  std::set<Classification> classes = {Classification::SdkDeclaredOnly, Classification::CudaOnly,
                                      Classification::UnimplementedKernel};  // which classifications get stubs
  std::optional<int> version_guard;  // wrap stubs in #if defined(V) && (V < N), V the backend's version_macro
  bool prune = false;
  std::optional<bool> c10;  // C10_THROW_ERROR available; default: c10/util/Exception.h in a source root
  std::string relative_to;  // paths in diffs are relative to this directory (the project's source dir)
  // --out-cpp not named: the stub files go beside the sources of the library's target (its source
  // directory, which the build model knows), where the list that takes them reads them, not into the
  // directory the tool runs in.
  bool beside_target = false;
};

// One thing an edit does ("add X to LIST", "link T with Y", "a stub for f") and the (mangled)
// symbols it fixes.
struct EditPurpose {
  std::string what;
  std::vector<std::string> symbols;
};

// One file's new content; `before` is empty with `created` for a new file.
struct FileEdit {
  std::string path;
  std::string before;
  std::string after;
  bool created = false;
  std::vector<EditPurpose> purposes;  // the stub files share theirs: each needs the others
  bool changed() const { return before != after || created; }
};

struct Refusal {
  std::string symbol;  // demangled
  std::string reason;
};

// Where a stub's signature came from, in the order they are tried (docs/stubgen.md): the SDK's
// header, CUDA's with names mapped, the demangled name, an asm label for a name C++ cannot spell; a
// kernel's generated header; a variable's size from the referencing library's DWARF.
enum class SignatureSource { SdkHeader, CudaHeader, Demangled, AsmLabel, GeneratedHeader, DwarfSize };
const char* to_string(SignatureSource s);

struct StubInfo {
  std::string mangled;
  SignatureSource signature_source = SignatureSource::Demangled;
  std::string declaration;  // as emitted
};

struct Plan {
  std::vector<StubInfo> stubs;        // stubs this run needs
  std::vector<FileEdit> stub_files;   // unimplemented_functions.cpp/.h (and the runtime header)
  std::vector<FileEdit> cmake_files;  // patched CMakeLists.txt files
  std::vector<Refusal> refused;       // neither stubbed nor patched, with the reason
  // Symbols (mangled) the patch leaves unresolved whatever it compiles: their source is listed
  // already, in a list the build of their library does not compile from (a library newer than the
  // CMake file), their entry has no list to go into, or their stub file no source list to take it.
  std::vector<std::string> unreached;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;   // what a CMake edit other than an added entry does, and why
  std::vector<InputError> errors;   // e.g. a stub file whose generated region is broken
  bool stub_files_complete = true;  // false when one of them could not be planned (its error is above)
};

Plan plan(const Report& report, const trace::TraceContext& ctx, const StubOptions& options);

// With beside_target, the stub files' paths in the source directory of the target that builds the
// report's first library, when the build model knows it (their names kept); otherwise left as given.
void place_beside_target(StubOptions& options, const trace::TraceContext& ctx, const Report& report);

// A unified diff of all changed files, paths relative to options.relative_to.
std::string diff_of(const Plan& plan, const StubOptions& options, bool include_stubs, bool include_cmake);

// Writes every changed file atomically; the first error stops nothing else.
std::vector<InputError> apply(const Plan& plan, bool include_stubs, bool include_cmake);

// The plan's file edits as SARIF fixes (musa-linkcheck --format sarif): one edit for the stub files
// together, attached to every stubbed symbol, and one per patched CMake file, attached to the symbols
// its additions fix; each is the set of line replacements that turns the files into what apply()
// writes, and its description says first what in it fixes that symbol. A file whose text is not
// valid UTF-8 gets no fix (SARIF content is text). An edit whose copies in all its results would
// pass `repeat_budget` bytes is given to its first result only.
std::vector<SymbolFix> sarif_fixes(const Plan& plan, const Report& report, size_t repeat_budget = 8u << 20);

}  // namespace mlc::stubgen
