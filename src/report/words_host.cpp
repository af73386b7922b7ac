// The sentences of the host's passes (src/host's evidence): what the interpreter that loads an
// extension defines, or lacks.
#include <string>

#include "report/said.h"

namespace mlc::said {

std::string DefinedByHostLoad::words() const {
  return "defined by " + soname + " (" + path + "), which the python3 executable " + interpreter +
         " loads itself: the extension gets it from its host's process, as it gets the Python C API";
}
std::string HostApiAndOwnLibraries::words() const {
  std::string libs;
  for (const auto& l : libraries) libs += (libs.empty() ? "" : ", ") + l;
  return with_commas(api) + " symbol" + (api == 1 ? "" : "s") + " of the Python C API and " + with_commas(own) +
         " of the interpreter's own " + libs +
         " come from the Python interpreter that loads this extension (python3), not from a library it links";
}
std::string ApiNotInInterpreter::words() const {
  return std::to_string(symbols) + " symbol" + (symbols == 1 ? "" : "s") + " of the Python C API " +
         (symbols == 1 ? "is" : "are") + " not in " + interpreter + " (" + python +
         "), the interpreter that loads this extension" +
         (!tag.empty()     ? ": it was built for Python " + newest + " (its name's tag " + tag + ")"
          : newest.empty() ? ": it was built for another Python"
                           : ": it was built for a newer Python (" + newest + " added " + example + ")");
}
std::string BuildAgainstPython::words() const {
  if (!tag.empty())
    return "reinstall or rebuild it for " + python +
           ", the interpreter that imports it, or check it with --python=EXE "
           "for the Python " +
           newest + " it was built for";
  return "build it against " + python + "'s headers, or check it with --python=EXE for the Python it was built for" +
         (newest.empty() ? std::string() : " (" + newest + " or later)");
}
std::string InterpreterTooOld::words() const {
  return "this interpreter is too old: Python " + added + " added it, and " + interpreter + " is " + python;
}
std::string InterpreterLacks::words() const { return interpreter + " (" + python + ") does not define it"; }
std::string ModuleDoesNotLink::words() const {
  return "; this module does not link " + label +
         " (--as-needed drops a library none of whose definitions the link used)";
}

}  // namespace mlc::said
