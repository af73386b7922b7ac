// The words of musa-stubgen's plan (report/said_plan.h).
#include "report/said_plan.h"

namespace mlc::said::plan {
namespace {
std::string plural(size_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }
}  // namespace

std::string ThreadLocalUnstubbable::words() const { return "thread-local data cannot be stubbed safely"; }
std::string DataOfUnknownSize::words() const {
  return "a data object of unknown size: the referencing library's DWARF does not declare it, and a guessed size "
         "would corrupt memory";
}
std::string KernelReturnUnknown::words() const {
  return "its generated declaration (<Backend>NativeFunctions.h) was not found, so its return type is unknown: pass "
         "--build-dir of the build that generated it";
}
std::string ThrowInstead::words() const {
  return "--style return-error: " + plural(stubs, "stub") + " return" + (stubs == 1 ? "s" : "") + " no error code (" +
         first + (stubs > 1 ? " and " + std::to_string(stubs - 1) + " more" : "") +
         "): they throw, as with --style throw (when the stub runtime only warns, they return a value-initialized "
         "result)";
}

std::string AddStub::words() const { return "add a stub for " + demangled; }
std::string HandEditedKept::words() const {
  return file + ": kept the hand-edited stub " + key + (unneeded ? " although it is no longer needed" : "");
}
std::string RegionNeverClosed::words() const {
  return "the generated region opened by \"" + begin_marker + "\" is never closed";
}
std::string StubNeverClosed::words() const { return "stub " + key + " has no end marker"; }

std::string StubsUnlisted::words() const {
  return "no source list of " + (target.empty() ? library : "the target " + target) + " takes the stubs in " + out_cpp +
         ": add it to that target's sources, or the " + plural(symbols, "symbol") + " stubbed there stay unresolved";
}
std::string StubsCovered::words() const { return "the stubs for " + library + ": " + covered.words(); }
std::string NoTargetBuilds::words() const {
  return "no CMake target is known to build " + library + " (configure with a CMake File API codemodel query); " +
         detail;
}
std::string NoCMakeFileForTarget::words() const {
  return "no CMake file found that defines the target " + target + "; " + detail;
}
std::string NotFixable::words() const {
  const std::string cls = to_string(classification);
  std::string why = reason.empty() ? cls : cls + ": " + reason;
  if (classification == Classification::MissingSource)
    return why + (detail.empty() ? " (no CMake source list for it was found)" : "; " + detail);
  if (classification == Classification::Unported && !detail.empty())
    return why + "; " + detail + " (a stub would hide the missed rename; --stub unported stubs it anyway)";
  return why + " - not something a stub or a CMake patch fixes" +
         (stub_asked ? "" : " (pass --stub " + cls + " to stub it anyway)");
}
std::string AwaitingRebuild::words() const {
  return plural(symbols, "symbol") + " (" + first + (symbols > 1 ? " and more" : "") +
         ") defined in sources the build compiles since " + library +
         " was built: rebuild it first (cmake --build), then run again";
}

std::string ExtensionSources::words() const { return "the sources of " + kind + "('" + name + "')"; }
std::string AddEntry::words() const { return "add " + entry + " to " + list; }
std::string LinkWith::words() const { return "link " + target + " with " + entry; }
std::string ListNotInFile::words() const { return "the list " + list + " is not in " + file; }
std::string NoExtensionBuilds::words() const { return "no extension in " + file + " builds " + library; }
std::string AlreadyInExtension::words() const {
  return entry + " is already in " + extension + " (" + file + ":" + std::to_string(line) +
         "): not added again; rebuild the extension (python3 setup.py build_ext)";
}
std::string ExtensionListNotLiteral::words() const {
  return extension + " at " + file + ":" + std::to_string(line) + " is no list to edit (" + not_literal + "): add " +
         entry + " by hand";
}
std::string AlreadyListed::words() const {
  const std::string said = entry + " is already in " + list + " (" + file + "): not added again";
  return predating_library.empty() ? said : said + "; " + predating_library + " predates that file: rebuild it";
}
std::string ListDoesNotReach::words() const {
  return entry + " is already in " + list + " (" + file + "), yet " + library +
         ", built after that file, does not compile it: that list does not reach this configuration's build of the "
         "library (an if() branch not taken, or another target's list)";
}
std::string NoLinkPlace::words() const {
  return "no target_link_libraries() or add_library() for " + target + " in " + file;
}
std::string RegexAlsoExcludes::words() const {
  return std::string(to_string(Classification::MissingSource)) + ": " + file + " is excluded by list(FILTER " +
         variable + " EXCLUDE REGEX " + regex + ") at " + cmake_file + ":" + std::to_string(line) +
         ", which also excludes " + first_other + (others > 1 ? " and " + std::to_string(others - 1) + " more" : "") +
         ": narrow that regex by hand";
}
std::string RemovingCall::words() const {
  const std::string what =
      filter ? "list(FILTER " + variable + " EXCLUDE REGEX " + regex + ")" : "list(REMOVE_ITEM " + variable + " ...)";
  return "removing " + what + " at " + where + ": it takes out " + plural(sources, "source") + " the library needs";
}
std::string DroppingEntry::words() const {
  return "dropping " + entry + " from list(REMOVE_ITEM " + variable + " ...) at " + where +
         ": it takes out a source the library needs";
}
std::string AddBreaksConfigure::words() const {
  return "adding " + entry + " to " + list + " (" + file + ") leaves a build that does not configure: " + failure;
}
std::string AddDoesNotCompile::words() const {
  return "adding " + entry + " to " + list + " (" + file + ") does not make CMake compile " + source + " into " +
         target + ": that list does not reach the target in this configuration";
}

}  // namespace mlc::said::plan
