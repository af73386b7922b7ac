// What the host program's own load provides: a Python extension module built
// without -lm still gets pow/fmod from the libm.so.6 that the python3 executable itself links. Such
// symbols are host-provided, like the Python C API, not unknown.
#pragma once

#include <string>
#include <vector>

#include "loader/loader.h"
#include "report/report.h"

namespace mlc::host {

// Among `unknown` (still unexplained after the host pass), the symbols referenced by an object that
// already gets the Python C API from its host (a "python3" host cause holds one of its symbols) and
// defined by `interpreter`'s own load (the executable and its DT_NEEDED closure, searched with
// `env` minus its --with objects) become host-provided under that cause, whose headline then counts
// them apart. The interpreter is only read, never run. Returns the symbols it did not explain.
// `traced` is the list given to trace::find_host_symbols, `unknown` what it returned.
std::vector<UnresolvedSymbol*> find_host_load_symbols(const std::vector<UnresolvedSymbol*>& traced,
                                                      const std::vector<UnresolvedSymbol*>& unknown,
                                                      const std::string& interpreter, const loader::LoaderEnv& env,
                                                      CauseList& causes);

}  // namespace mlc::host
