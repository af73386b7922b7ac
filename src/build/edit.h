// Edits to a build's own files, where the build model says a source or a library is written: an
// entry added to a source list in the list's own style, a library linked to a target, a removal's
// entry (or the whole removal) taken out. Planned on the parse the model was read from (a file the
// model did not read is parsed here, once); each edit is an insertion or a cut at a byte offset, and
// finish() gives each edited file's text before and after. The provider (CMake) implements it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "build/model.h"

namespace mlc::build {

enum class EditOutcome {
  Added,       // the edit is planned
  Present,     // the entry is already there (by spelling, or by the file it names)
  NoPlace,     // no list of that name, or no target to link, in that file
  Unreadable,  // the file could not be read or parsed (said once, in errors() or in the model's errors)
};

struct FileEdit {
  std::string file, before, after;
};

class Editor {
 public:
  // `build` may be null (no build directory): then each file is read alone, in its own scope.
  Editor(const Model* build, std::string library_helper);
  ~Editor();
  Editor(const Editor&) = delete;
  Editor& operator=(const Editor&) = delete;

  // `entry` into the list named `list` written in `file`. Of several commands writing it, only those
  // the configure took count, and the entry goes beside its nearest siblings: those of `source`, the
  // absolute file the entry names, when the caller knows it (else the file `entry` spells).
  EditOutcome add_source(const std::string& file, const std::string& list, const std::string& entry,
                         const std::string& source = "");
  // `entry` to what `target` links: appended to its link command, else a new one after the command
  // creating it.
  EditOutcome add_link(const std::string& file, const std::string& target, const std::string& entry);
  // The whole removal command, with its line.
  EditOutcome remove_command(const SourceList& removal);
  // One entry of a removal command.
  EditOutcome remove_entry(const SourceList& removal, const ListEntry& entry);

  // The files edited, in path order.
  std::vector<FileEdit> finish() const;
  // Files this editor had to read itself and could not.
  const std::vector<InputError>& errors() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// What the build system says of edited build files before they are written, asked on a copy of the
// tree (the sources and the build untouched): whether it configures, and which (target, file) the
// edits meant to add it does not compile. `ran` is false when it was not asked (not allowed, or no
// build tree): nothing is known then.
struct EditCheck {
  bool ran = false;
  std::string failure;  // the configure's first error, when it failed
  std::vector<std::pair<std::string, std::string>> not_compiled;
};
EditCheck check_edits(const Model& build, const std::vector<FileEdit>& edits,
                      const std::vector<std::pair<std::string, std::string>>& wanted, unsigned timeout_seconds = 600);

// How the build names an SDK library when linking it: CMake, the IMPORTED target of the SDK's package
// (lib/cmake/*/*.cmake) whose name ends in `link_name` (MUSA::mublas for mublas), if any.
std::optional<std::string> imported_target(const std::string& sdk_home, const std::string& link_name);

}  // namespace mlc::build
