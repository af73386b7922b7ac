// The binding phase of glibc's ld.so with LD_BIND_NOW (what `ldd -r` reports): every symbol a
// dynamic relocation names is looked up in the global scope, in load order, with glibc's matching
// rules (dl-lookup.c check_match / do_lookup_x), and every version requirement is checked
// (dl-version.c). The result is the raw evidence; classification happens later.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loader/loader.h"

namespace mlc::loader {

// Why no definition matched, as far as the loader can tell.
enum class Miss {
  NoDefinition,      // no object in scope has a usable definition of that name
  WrongVersion,      // a definition exists, but not of the required version
  HiddenVersion,     // only hidden (non-default, '@') versions exist for an unversioned reference
  HiddenVisibility,  // only STV_HIDDEN/STV_INTERNAL or local definitions exist
  LibraryMissing,    // the required version's file was not found at all
};

struct UnresolvedRef {
  int object = -1;          // the referencing object (index into Process::objects)
  size_t symbol_index = 0;  // its .dynsym index
  std::string_view name;
  std::string_view version;       // required version, empty when unversioned
  std::string_view version_file;  // the file the version is required from
  Miss miss = Miss::NoDefinition;
  std::vector<int> near_definitions;  // objects holding a definition that did not match (wrong version...)
};

struct MissingVersion {
  int object = -1;  // the requiring object
  std::string version;
  std::string file;
  int provider = -1;  // the loaded object that lacks it
  bool weak = false;  // VER_FLG_WEAK: glibc only warns
};

struct BindOutcome {
  std::vector<UnresolvedRef> unresolved;
  std::vector<MissingVersion> missing_versions;
  // Failures of the binding phase that are no unresolved name: check_match's and
  // _dl_check_map_versions's assertions, a copy relocation against protected data that forbids it,
  // initial-exec TLS past the static surplus or bound to data without a TLS block.
  std::vector<LoadFailure> failures;
};

// Checks the given objects (indexes into process.objects) against the whole global scope, and the
// relocations of the process that bind more than a name (relocation_checks.cpp): the main program's
// copy relocations (R_X86_64_COPY, looked up past the program itself) and the initial-exec TLS of
// what each dlopen maps (R_X86_64_TPOFF64, in glibc's static TLS surplus: LoaderEnv's tunables).
// `kept` (when given): the look-ups of a process an earlier run bound, the same files in the same places, are
// its answer (loader/kept_bindings.h), and this run's are kept.
class KeptBindings;
BindOutcome bind(const Process& process, const std::vector<int>& checked, const LoaderEnv& env = {},
                 const KeptBindings* kept = nullptr);

// One reference followed to its definition (musa-linkcheck explain): the reference `referencing`
// makes to `name` (an undefined global or weak .dynsym entry; -1 when it makes none) and the object
// whose definition ld.so's look-up picks for it, walking the referencing object's scope (lookup_scope
// of its load, as bind() does) with bind()'s matching rules (-1 when none matches: then bind()
// reports it unresolved).
struct OneBinding {
  int referencing = -1;
  bool weak = false;  // a weak reference: never an error, even unbound
  int provider = -1;
};
OneBinding bind_one(const Process& process, int referencing, std::string_view name);

}  // namespace mlc::loader
