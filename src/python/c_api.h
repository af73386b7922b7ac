// The Python C API an interpreter lacks: an extension built against a newer Python's headers references
// functions its interpreter does not export (PyLong_AsInt under Python 3.11). Said with the interpreter's
// version and the version that added the function, not as a missing --python.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace mlc::python {

// The CPython version ("3.13") whose limited API added `name`, for the functions and data added from 3.10
// on (CPython's Misc/stable_abi.toml); nullopt for other names.
std::optional<std::string> python_api_added(const std::string& name);

// The interpreter a set of extensions was checked inside (it was their process's main program).
struct HostInterpreter {
  std::string path;
  std::string version;              // "3.11" or "3.11.2"; "" when unknown
  std::vector<std::string> hosted;  // the objects it hosted (their findings' referencing libraries)
  // What the hosted extension module's name says it was built for, when that is another Python than this
  // interpreter ("cpython-311", "3.11"; extension_tag): the evidence, rather than which names each
  // Python added.
  std::string built_for_tag = "", built_for = "";
};

// Among `unknown`, the Python C API names referenced by an object the interpreter hosted: it does not
// define them (they are unresolved in its process). One Host cause naming the interpreter and its version,
// each symbol version-mismatch with the version that added it where known. Returns the rest.
std::vector<UnresolvedSymbol*> find_api_the_interpreter_lacks(const std::vector<UnresolvedSymbol*>& unknown,
                                                              const HostInterpreter& host, CauseList& causes);

}  // namespace mlc::python
