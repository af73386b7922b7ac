#!/bin/bash
# The project's own C++ (src/, tools/, the test programs) is as .clang-format writes it: clang-format
# --dry-run --Werror names each line that is not. Fixtures, stubs/ and tests/golden are inputs whose lines
# the tests cite, kept as written.
set -euo pipefail
root=$1
command -v clang-format >/dev/null || { echo "clang-format is not installed (tools/dev.sh's test packages)" >&2; exit 1; }
cd "$root"
mapfile -t files < <(find src tools tests/unit tests/fuzz tests/oracle tests/realcode tests/bench -type f \
                       \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) | sort)
((${#files[@]} > 100)) || { echo "only ${#files[@]} C++ files under $root: not the project's tree" >&2; exit 1; }
clang-format --dry-run --Werror "${files[@]}"
echo "${#files[@]} files as .clang-format writes them"
