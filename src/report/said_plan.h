// The sentences of musa-stubgen's plan (src/stubgen/): what it refuses and why, what it warns of, its
// notes, and each CMake or setup.py edit's purpose. The plan keeps these values; their words live in
// src/report/words_plan.cpp. Only the stubgen units include this header.
#pragma once

#include <cstddef>
#include <string>

#include "report/report.h"
#include "report/said.h"

namespace mlc::said::plan {

// --- what cannot be stubbed, and how the stubs behave (stubgen/stubgen.cpp) -------------------------
struct ThreadLocalUnstubbable {  // refused
  std::string words() const;
};
struct DataOfUnknownSize {  // refused: no DWARF size, and a guessed one corrupts memory
  std::string words() const;
};
struct KernelReturnUnknown {  // refused: the kernel's generated declaration was not found
  std::string words() const;
};
struct ThrowInstead {  // note: --style return-error, yet these return no error code
  size_t stubs = 0;
  std::string first;
  std::string words() const;
};

// --- the stub file (stubgen/merge.cpp) ----------------------------------------------------------------
struct AddStub {  // an edit's purpose
  std::string demangled;
  std::string words() const;
};
struct HandEditedKept {  // warning: a stub a person edited is kept as they wrote it
  std::string file, key;
  bool unneeded = false;  // kept although no symbol needs it now (--prune)
  std::string words() const;
};
struct RegionNeverClosed {  // error: the generated region's end marker is missing
  std::string begin_marker;
  std::string words() const;
};
struct StubNeverClosed {  // error: a stub's end marker is missing
  std::string key;
  std::string words() const;
};

// --- where the stubs go (stubgen/stubgen.cpp) ------------------------------------------------------
struct StubsUnlisted {  // warning: no list of the target takes the stub file
  std::string library, target, out_cpp;
  size_t symbols = 0;
  std::string words() const;
};
struct StubsCovered {  // note: a glob of the build takes the stub file already
  std::string library;
  ListNote covered;
  std::string words() const;
};
struct NoTargetBuilds {  // refused: a link edit, but no CMake target builds the library
  std::string library, detail;
  std::string words() const;
};
struct NoCMakeFileForTarget {  // refused: a link edit, but no CMake file defines the target
  std::string target, detail;
  std::string words() const;
};
struct NotFixable {  // refused: neither a stub nor a CMake edit is what this class asks for
  Classification classification = Classification::Unknown;
  std::string reason;
  std::string detail;       // the fix's detail, "" when none
  bool stub_asked = false;  // --stub names the class
  std::string words() const;
};
struct AwaitingRebuild {  // note: sources the build compiles since the library was built
  size_t symbols = 0;
  std::string first, library;
  std::string words() const;
};

// --- the CMake and setup.py edits (stubgen/cmake_patch.cpp) -------------------------------------------
struct ExtensionSources {  // "the sources of Extension('name')"
  std::string kind, name;
  std::string words() const;
};
struct AddEntry {  // an edit's purpose: an entry added to a list (a CMake list, or an extension's sources)
  std::string entry, list;
  std::string words() const;
};
struct LinkWith {  // an edit's purpose: a library added to a target's link
  std::string target, entry;
  std::string words() const;
};
struct ListNotInFile {  // refused
  std::string list, file;
  std::string words() const;
};
struct NoExtensionBuilds {  // refused
  std::string file, library;
  std::string words() const;
};
struct AlreadyInExtension {  // warning
  std::string entry, extension, file;
  size_t line = 0;
  std::string words() const;
};
struct ExtensionListNotLiteral {  // refused: the sources are an expression no edit can extend
  std::string extension, file, not_literal, entry;
  size_t line = 0;
  std::string words() const;
};
struct AlreadyListed {  // warning: a second --apply, or a person's edit
  std::string entry, list, file;
  std::string predating_library;  // the library older than the CMake file ("" when not known to be)
  std::string words() const;
};
struct ListDoesNotReach {  // refused: listed, yet the library built after the file does not compile it
  std::string entry, list, file, library;
  std::string words() const;
};
struct NoLinkPlace {  // refused
  std::string target, file;
  std::string words() const;
};
struct RegexAlsoExcludes {  // refused: dropping the regex would compile files kept out on purpose
  std::string file, variable, regex, cmake_file, first_other;
  size_t line = 0, others = 0;
  std::string words() const;
};
struct RemovingCall {  // note: the whole list(FILTER|REMOVE_ITEM) call goes
  bool filter = false;
  std::string variable, regex, where;
  size_t sources = 0;
  std::string words() const;
};
struct DroppingEntry {  // note: one entry of list(REMOVE_ITEM) goes
  std::string entry, variable, where;
  std::string words() const;
};
struct AddBreaksConfigure {  // refused: the configure fails with the entry
  std::string entry, list, file, failure;
  std::string words() const;
};
struct AddDoesNotCompile {  // refused: the configure succeeds, yet the target does not compile the file
  std::string entry, list, file, source, target;
  std::string words() const;
};

}  // namespace mlc::said::plan
