// The installed environment, as an import meets it: which other versions of a missing library are
// on the machine (and where each came from), and which loaded library a symbol belongs to when that
// library lacks it (the object was built against another version of it). Files are only read.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "build/model.h"
#include "loader/binding.h"
#include "loader/loader.h"
#include "report/report.h"
#include "trace/finding.h"

namespace mlc::installed {

// A directory off the loader's search path where other versions of a library may sit, and what it
// is (Sdk, Home with its glob "/usr/local/musa*" or "/usr/local/cuda*", Conda, Venv). The tools fill
// these (from --sdk-home, $CONDA_PREFIX, $VIRTUAL_ENV, globs of the usual places): the core reads no
// environment.
struct Place {
  std::string dir;
  loader::FoundHow how = loader::FoundHow::Sdk;
  std::string home = "";  // FoundHow::Home: the glob ("/usr/local/musa*"), which the report shows
};

// Pass (before origin tracing): one `missing-library` cause per DT_NEEDED name that was found
// nowhere, naming every other version of it found beside its needer, among the files the run checks
// (`checked`: the inputs, named or found in a directory given), on the search path, in ld.so.cache, in
// `places`, each with where it came from. The needed entries of the checked libraries (`libs`, by object index)
// are linked to it, and so is every unresolved symbol that the missing library would have provided
// (one that another version of it defines, or any, when it is the referencing object's only missing
// library, or when the reference names it through its version): they are not traced further.
void find_missing_libraries(const loader::Process& process, std::map<int, LibraryReport>& libs,
                            std::vector<trace::SymbolFinding>& symbols, const std::vector<Place>& places,
                            const std::vector<std::string>& checked, const loader::LoaderEnv& env, CauseList& causes);

// Pass (after suggestions): a symbol still unknown, or an abi-mismatch short of a cxx11-ABI split,
// whose namespace or class a loaded library owns (it defines most of that class's members, or most
// of the namespace, or - for a C name - most names of its prefix family such as PVRSRV*), is
// `provider-mismatch`: the object was built against another version of that library. The reason
// names the library, its version (soname; for torch's libraries the torch package's version.py
// beside them), and the closest definitions it has; the fix gives both ways out. An abi-mismatch is
// turned only when the owner's version is known. Two or more symbols one object misses from the same
// owner are one Cause (kind provider-mismatch) in `causes`: one headline, one fix.
// An owner that `build` itself makes (a sibling library of the same build: abseil's
// libabsl_strings_internal beside libabsl_strings) is another version of nothing: it must define the
// same name with another signature (the same symbol, drifted) before a C++ symbol is called its mismatch.
void find_provider_mismatch(const loader::Process& process, std::vector<trace::SymbolFinding>& symbols,
                            CauseList& causes, const build::Model* build = nullptr);

// The version a library file carries in its name or soname ("libtorch_cpu.so.1.13" -> "1.13"), or "".
std::string soname_version(const std::string& name);

}  // namespace mlc::installed
