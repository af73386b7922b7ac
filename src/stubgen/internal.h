// musa-stubgen's planning, phase by phase, for the files of src/stubgen/ only (stubgen.h is the public
// header): triage (stubgen.cpp) sorts each unresolved symbol into a stub, a CMake edit or a refusal;
// signatures.cpp writes each stub; merge.cpp merges them into the stub files; cmake_patch.cpp edits
// the CMake files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "build/model.h"
#include "common/hash.h"
#include "stubgen/stubgen.h"

namespace mlc::stubgen::detail {

// A generated block for one symbol, before its markers are added.
struct Block {
  std::string body;
  std::string uses;  // comma-separated SDK headers
};

// A source-list entry to add, a library to link, and a list(REMOVE_ITEM)/list(FILTER EXCLUDE) entry
// to drop: a file a glob of the target matches but that entry takes out goes back in (the whole call
// goes when it was its only entry).
struct ListAdd {
  std::string file, list, entry, symbol;
  std::string demangled, library;  // the symbol as a person reads it; the library that lacks it
  std::string source;              // the file the entry names (the symbol's origin), absolute
};
struct LinkAdd {
  std::string file, target, entry, symbol;
};
struct Drop {
  const build::SourceList* removal;
  const build::ListEntry* entry;
  std::string file;    // the source it gives back
  std::string symbol;  // demangled, for a refusal
};

// What triage decided: the stubs' blocks (by mangled name) and the CMake edits.
struct Triage {
  bool c10 = false;  // stubs throw with C10_THROW_ERROR
  std::map<std::string, Block> cpp_blocks, hdr_blocks;
  std::vector<ListAdd> list_adds;
  std::vector<LinkAdd> link_adds;
  std::vector<Drop> drops;
  // Per library (its path), the symbols stubbed for it (mangled, demangled): the stub file goes into
  // the build of each.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> stubbed_in;
  std::vector<std::string> thrown_instead;  // --style return-error: stubs returning no error code (demangled)
};

// --- signatures.cpp: the stubs themselves ---

// Whether C10_THROW_ERROR is there to throw with: the option, else c10/util/Exception.h in a source root.
bool c10_available(const trace::TraceContext& ctx, const StubOptions& o);

// A function's stub: its definition, its declaration when no SDK header has one, and what it is.
struct Stub {
  Block definition;
  std::optional<Block> declaration;
  StubInfo info;
  // --style return-error: why no stub is written (its error type has no "not supported" value, so the
  // only code it could return is 0, success); and whether it throws instead (it returns no error code).
  std::optional<std::string> refused = std::nullopt;
  bool throws_instead = false;
};
Stub function_stub(const UnresolvedSymbol& u, const trace::TraceContext& ctx, const StubOptions& o, bool c10);

// A kernel a torchgen backend yaml lists and no source implements: defined with its generated
// declaration's signature in the generated class, throwing "<op> is not implemented for <backend>".
// None when the generated declaration is not found (the demangled name has no return type).
std::optional<Stub> kernel_stub(const UnresolvedSymbol& u, const trace::TraceContext& ctx, const StubOptions& o);

// A data object's stub: `size` zero-filled bytes bound to the symbol by its assembler name.
Stub data_stub(const UnresolvedSymbol& u, uint64_t size, const std::string& library, const StubOptions& o,
               const backend::Backend& b);

// --- merge.cpp: the stub files ---

// The hash recorded in a stub's marker (an edited body no longer matches it), also naming data stubs:
// FNV-1a (common/hash.h) from the offset basis these names and markers were first written with (the
// reference's 14695981039346656037 without its last digit): stub files already written carry its
// values, and another basis would read every stub there as hand-edited and rename every data stub.
inline constexpr uint64_t kStubHashBasis = 1469598103934665603ull;
std::string stub_hash(std::string_view s);

// unimplemented_functions.cpp/.h (and the stub runtime's header, named for backend `b`) with this
// run's stubs merged in.
void plan_stub_files(const Report& report, const Triage& t, const StubOptions& o, const backend::Backend& b, Plan& p);

// --- cmake_patch.cpp: the CMake edits ---

void plan_cmake_edits(const Triage& t, const trace::TraceContext& ctx, Plan& p);

}  // namespace mlc::stubgen::detail
