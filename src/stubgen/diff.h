// Unified diffs of whole-file edits, in the form `git apply` and `patch -p1` accept.
#pragma once

#include <string>

namespace mlc::stubgen {

// "--- a/<path>" / "+++ b/<path>" with three lines of context; "" when the texts are equal.
// `before` empty and `created` true gives a new-file diff ("--- /dev/null").
std::string unified_diff(const std::string& path, const std::string& before, const std::string& after,
                         bool created = false);

}  // namespace mlc::stubgen
