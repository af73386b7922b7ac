#!/usr/bin/env bash
# --confirm's cost: a generated CMake project whose library calls N functions, each defined under
# #ifdef in two uncompiled sources (2N candidate files). Prints wall time of the plain run, the
# cold --confirm run (every candidate compiled) and the cached one, and ms per candidate file.
# Usage: confirm_bench.sh BUILD_TREE_OF_MLC [N]   (works under BUILD_TREE/confirm-bench, removed after)
set -euo pipefail
bin="$1/tools/musa-linkcheck"; n="${2:-10}"; w="$1/confirm-bench"
rm -rf "$w"; mkdir -p "$w/src"; trap 'rm -rf "$w"' EXIT
{ echo 'cmake_minimum_required(VERSION 3.16)'; echo 'project(b CXX)'; echo 'set(CMAKE_EXPORT_COMPILE_COMMANDS ON)'
  echo 'add_library(user SHARED user.cpp)'; echo 'target_compile_definitions(user PRIVATE USE_Y)'; } > "$w/src/CMakeLists.txt"
: > "$w/src/user.cpp"
for i in $(seq 0 $((n-1))); do
  echo "namespace ns { int f$i(int); } int u$i(int v) { return ns::f$i(v); }" >> "$w/src/user.cpp"
  printf '#include <vector>\n#include <string>\n#ifdef USE_X\nnamespace ns { int f%d(int x) { return x; } }\n#endif\n' $i > "$w/src/a$i.cpp"
  printf '#include <vector>\n#include <string>\n#ifdef USE_Y\nnamespace ns { int f%d(int x) { return x; } }\n#endif\n' $i > "$w/src/b$i.cpp"
done
cmake -S "$w/src" -B "$w/build" >/dev/null && cmake --build "$w/build" >/dev/null
args=(--build-dir "$w/build" --source-root "$w/src" --cache-dir "$w/cache" --cuda-home '' -q "$w/build/libuser.so")
t() { local s e; s=$(date +%s%N); "$bin" "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
t --no-confirm "${args[@]}" >/dev/null  # warm the source index cache
plain=$(t --no-confirm "${args[@]}"); cold=$(t "${args[@]}"); cached=$(t "${args[@]}")
files=$((2 * n))
echo "confirm_bench: $files candidate files, $(nproc) cores"
echo "  plain run          ${plain} ms"
echo "  --confirm cold     ${cold} ms  ($(( (cold - plain) / files )) ms/file over plain)"
echo "  --confirm cached   ${cached} ms  ($(( (cached - plain) * 1000 / files )) us/file over plain)"
