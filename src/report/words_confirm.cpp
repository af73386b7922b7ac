// The sentences of the compiler's pass (src/confirm's evidence): what compiling a left-out source
// showed.
#include <cmath>
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

std::string CompileFailed::words() const { return "--confirm: compiling " + file + " failed: " + error; }
std::string NoCompileDatabase::words() const {
  return "--confirm: no compile_commands.json in " + (build_dir.empty() ? std::string("(no --build-dir)") : build_dir) +
         "; " + std::to_string(files) + " candidate file(s) left unconfirmed";
}
std::string NoScratchDirectory::words() const { return "--confirm: cannot create a scratch directory under " + under; }
std::string ConfirmCost::words() const {
  std::string line = "--confirm: " + std::to_string(files) + " candidate file(s): " + std::to_string(compiled) +
                     " compiled, " + std::to_string(cached) + " from cache, " + std::to_string(failed) + " failed" +
                     (unsaid ? " (" + std::to_string(unsaid) + " not the answer: --verbose shows why)" : "") + ", " +
                     std::to_string(skipped) + " skipped (budget or no command)";
  if (compiled > 0) {
    line += "; " + std::to_string(std::llround(compile_ms)) + " ms compiling, " +
            std::to_string(std::llround(compile_ms / static_cast<double>(compiled))) + " ms per compiled file";
  }
  return line;
}
std::string CompilerPlacedCount::words() const {
  std::string placed = "--confirm: the compiler placed " + std::to_string(settled) + " of " + std::to_string(wanted) +
                       " unsettled symbol(s)";
  size_t shown = 0;
  for (const auto& [file, n] : by_file) {
    placed += (shown ? ", " : ": ") + file + " (" + std::to_string(n) + ")";
    if (++shown == 8 && by_file.size() > 8) {
      placed += ", and " + std::to_string(by_file.size() - 8) + " more file(s)";
      break;
    }
  }
  return placed;
}

}  // namespace mlc::said
