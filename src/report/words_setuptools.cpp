// The words of the setup.py fixes: an entry for an extension's sources, inline or in the variable
// that holds them, and what to write by hand when they are a glob or os.path.join(...) calls.
#include <string>

#include "report/said.h"

namespace mlc::said {

std::string AddToExtension::words() const {
  const std::string list = variable.empty() ? "" : variable + " (" + variable_at + "), ";
  return "add " + entry + " to " + list + "the sources of " + extension +
         (by_hand ? " (" + not_literal + ": edit it by hand)" : "");
}
std::string GlobMisses::words() const {
  return "add " + entry + " to the sources of " + extension + ": " + glob +
         " does not match it; write sources=" + glob + " + [\"" + entry + "\"]";
}
// The glob takes the file in at the next build: the module was built before the file was there (or
// before the glob was), so the rebuild is the fix, not an entry.
std::string GlobCovers::words() const {
  return entry + " is already in the sources of " + extension + " through " + glob +
         ": the module was built before it; rebuild it (python3 setup.py build_ext --force)";
}
std::string AddJoinEntry::words() const {
  return "add " + expression + " to the sources of " + extension + " (its entries are calls: edit it by hand)";
}
std::string SiblingModuleDefines::words() const {
  return "defined in " + file + ", which " + module +
         " compiles; an extension module is no library to link, so the source belongs in this module's sources";
}

}  // namespace mlc::said
