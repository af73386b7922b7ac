#!/usr/bin/env bash
# The CMake step on libssh (issue 38): its CMakeLists.txt grows libssh_SRCS with set(X ${X} ...) in a
# score of if() blocks, which the reader that evaluated both branches of each if() doubled every time
# (10 GB for musa-linkcheck, 18 GB for musa-stubgen, std::bad_alloc under 8 GB). Side by side, RUNS
# times each, alternating: BEFORE's reader (a build tree of an older checkout, or none), this tree's
# reader without CMake (the fallback: --no-reconfigure), and this tree asking CMake for its File API
# reply (a configure of the existing tree, then the spans its backtraces lead to). Each run starts from
# the build tree as configured, its reply removed. Peak RSS is wait4's ru_maxrss (/usr/bin/time -v);
# BEFORE runs under an address-space cap (CAP_GB, default 8), as the issue's measure did.
#   usage: bash tests/bench/cmake_step_bench.sh BUILD [RUNS] [BEFORE_SOURCE_TREE BEFORE_BUILD]
set -euo pipefail
build=$(realpath "$1") runs=${2:-3} before_src=${3:-} before_build=${4:-}
cap_gb=${CAP_GB:-8}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work="$build/bench-data/cmake-step"
mkdir -p "$work"

# libssh's Debian sources, configured once (no File API query), the library built once.
if [ ! -d "$work/libssh-build" ]; then
  (cd "$work" && apt-get source libssh >/dev/null 2>&1) || { echo "apt-get source libssh failed (deb-src?)" >&2; exit 1; }
  src=$(ls -d "$work"/libssh-*/ | head -n 1)
  cmake -S "$src" -B "$work/libssh-build" -DWITH_GSSAPI=OFF -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  cmake --build "$work/libssh-build" -j "$(nproc)" >/dev/null 2>&1
fi

# The bench program against this tree, and against BEFORE's.
compile() {  # compile SRC_TREE CORE_LIB OUT [DEFINES]
  c++ -std=c++20 -O2 ${4:-} -I "$1/src" "$here/tests/bench/cmake_step_bench.cpp" "$2" -ltbb -lelf -ldw -liberty -lfmt \
    -o "$3"
}
cmake --build "$build" --target mlc_core >/dev/null
compile "$here" "$build/src/libmlc_core.a" "$work/after" -DMLC_BENCH_CAN_ASK
if [ -n "$before_src" ]; then
  cmake --build "$before_build" --target mlc_core >/dev/null
  compile "$before_src" "$before_build/src/libmlc_core.a" "$work/before"
fi

one() {  # one NAME PROGRAM ARGS...: the configured tree without a reply (in place: CMake refuses a copied
  # cache), the program under time -v
  local name=$1; shift
  rm -rf "$work/libssh-build/.cmake"
  local limit=""
  [ "$name" = before ] && limit="prlimit --as=$((cap_gb << 30))"
  local out rc=0
  out=$( { /usr/bin/time -v $limit "$@" "$work/libssh-build" ${ASK:-} ; } 2>&1 ) || rc=$?
  local wall rss line
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' <<<"$out")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' <<<"$out")
  line=$(grep -m1 ' ms, peak RSS' <<<"$out" || grep -m1 -i 'bad_alloc\|what()' <<<"$out" || echo "exit $rc")
  printf '%-9s wall %-8s peak RSS %7.1f MB  exit %-3s %s\n' "$name" "$wall" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "$rc" "$line"
}
for ((r = 1; r <= runs; ++r)); do
  [ -n "$before_src" ] && one before "$work/before"
  one fallback "$work/after"
  ASK=ask one ask "$work/after"
done
