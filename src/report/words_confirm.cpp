// The sentences of the compiler's pass (src/confirm's evidence): what compiling a left-out source
// showed.
#include <string>

#include "report/said.h"

namespace mlc::said {

std::string CandidateBasis::phrase() const {
  switch (kind) {
    case Kind::Named: return "";
    case Kind::Declares: return "it declares it";
    case Kind::Includes: return "it includes " + what;
    case Kind::SpellsBeside: return "it spells " + what + " and is beside the library's sources";
    case Kind::Beside: return "it is an uncompiled source beside the library's sources";
  }
  return "";
}

std::string CompilerPlaced::words() const {
  std::string out = "compiling " + file + " defines it";
  if (!command_from.empty()) out += " (with the build's command for " + command_from + ")";
  if (basis.kind != CandidateBasis::Kind::Named)
    out += "; text matching could not place it, the compiler did: " + basis.phrase();
  return out;
}
std::string OtherMangling::words() const {
  return "; compiling " + file + " defines it only under another mangling: " + other;
}
std::string NeededByGivenBack::words() const { return " (needed by a source this patch gives back)"; }

}  // namespace mlc::said
