// Unified diffs of whole-file edits, in the form `git apply` and `patch -p1` accept.
#pragma once

#include <string>
#include <vector>

namespace mlc::stubgen {

// "--- a/<path>" / "+++ b/<path>" with three lines of context ("--- <path>" / "+++ <path>" for an
// absolute path: a file outside the project); "" when the texts are equal.
// `before` empty and `created` true gives a new-file diff ("--- /dev/null").
std::string unified_diff(const std::string& path, const std::string& before, const std::string& after,
                         bool created = false);

// One replacement of whole lines: lines [first, first + count) of `before` (0-based, each with its
// newline) give way to `inserted`; count 0 inserts before line `first`.
struct LineHunk {
  size_t first = 0;
  size_t count = 0;
  std::string inserted;
};
// The replacements turning `before` into `after`, in file order, each in `before`'s line numbers
// (applying them from the last to the first gives `after` byte for byte); none when the texts are equal.
std::vector<LineHunk> line_hunks(const std::string& before, const std::string& after);

}  // namespace mlc::stubgen
