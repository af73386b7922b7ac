#!/usr/bin/env bash
# Speed and memory on the stacks users run (issue 25 item 5), against the peer, side by side: each
# figure is linkcheck_bench's median of RUNS runs, the tool and `ldd -r` alternating.
#   - CUDA's libcublas.so.13 (its libcublasLt is 540 MB): default and --closure against ldd -r;
#   - Debian's libtorch_cpu.so.1.13 (a 284-library closure): default and --closure against ldd -r;
#   - a replica of a CUDA torch wheel's layout (wheel_layout.sh: 39 libraries, 16-directory RPATHs, built
#     here), whose searches are the device venv's: default and --closure against ldd -r;
#   - the tree /usr/local/cuda/lib64 (the tool given the directory) against an ldd -r loop over its files.
# Peak RSS: linkcheck_bench's (wait4), and /usr/bin/time -v's "Maximum resident set size" for one run of
# each when /usr/bin/time is installed.
# With BEFORE (another musa-linkcheck, e.g. a Release build of the previous commit), the same figures
# for it and a comparison of the JSON reports on every input: the verdicts must be identical.
# Usage: runtime_bench.sh RELEASE_BUILD_TREE [RUNS] [BEFORE_MUSA_LINKCHECK]
# Not a test: it prints ratios for docs/benchmarks.md. Build Release first:
#   cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel --target musa-linkcheck linkcheck_bench
set -uo pipefail
build="$1"; runs="${2:-7}"; before="${3:-}"
tool="$build/tools/musa-linkcheck"; bench="$build/tests/linkcheck_bench"
[ -x "$tool" ] && [ -x "$bench" ] || { echo "runtime_bench: build musa-linkcheck and linkcheck_bench in $build first" >&2; exit 2; }
cublas=$(find -L /usr/local/cuda/ -name 'libcublas.so.13' -type f 2>/dev/null | head -n1)
cuda_lib=$(dirname "${cublas:-/usr/local/cuda/lib64/x}")
torch=/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start, $(date -u +%FT%TZ)"
peak() {  # /usr/bin/time -v's peak RSS of one run, in MB
  [ -x /usr/bin/time ] || { echo "?"; return; }
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident set size/ {printf "%.1f", $6 / 1024}'
}
figures() {  # $1: musa-linkcheck
  local t="$1"
  for lib in ${cublas:+"$cublas"} "$torch" ${wheel:+"$wheel"}; do
    [ -r "$lib" ] || { echo "skipped: $lib is absent"; continue; }
    "$bench" "$t" "$lib" "$runs"
    echo "  /usr/bin/time -v peak RSS: default $(peak "$t" -q "$lib") MB, --closure $(peak "$t" -q --closure "$lib") MB, ldd -r $(peak ldd -r "$lib") MB"
  done
  if [ -n "$cublas" ]; then
    "$bench" --tree "$t" "$cuda_lib" "$runs"
    echo "  /usr/bin/time -v peak RSS: musa-linkcheck DIR $(peak "$t" -q --cuda-home '' --sdk-home '' "$cuda_lib") MB"
  fi
}
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
wheel=$(bash "$(dirname "$0")/wheel_layout.sh" "$scratch/wheel") || { echo "skipped: the wheel replica (cc failed)"; wheel=""; }
echo "== musa-linkcheck: $tool (warm: the literal cache in the default cache directory)"
figures "$tool"
# Cold: the literal cache, the kept look-ups, relocations and bindings removed before each run (the other caches, dpkg's
# index, stay warm), through a shell wrapper whose sh and rm are counted against the tool.
cache="$scratch/cache"; mkdir -p "$cache"
"$tool" -q --cache-dir "$cache" "$torch" >/dev/null 2>&1
printf '#!/bin/sh\nrm -rf "%s/runtime-literals.tsv" "%s/runtime-lookups" "%s/relocations" "%s/bindings"\nexec "%s" --cache-dir "%s" "$@"\n' \
  "$cache" "$cache" "$cache" "$cache" "$tool" "$cache" >"$scratch/cold"
chmod +x "$scratch/cold"
echo "== musa-linkcheck, cold (nothing kept: every .rodata of an object that imports dlopen read, every relocation, every look-up)"
figures "$scratch/cold"
[ -n "$before" ] || exit 0
echo "== before: $before"
figures "$before"
echo "== verdicts (JSON reports, before against after)"
status=0
compare() {  # a label, then the arguments
  local label="$1"; shift
  "$before" --format json "$@" >"$scratch/before.json" 2>/dev/null
  "$tool" --format json "$@" >"$scratch/after.json" 2>/dev/null
  if cmp -s "$scratch/before.json" "$scratch/after.json"; then echo "identical: $label"
  else echo "DIFFERENT: $label"; diff "$scratch/before.json" "$scratch/after.json" | head -n 20; status=1; fi
}
for lib in ${cublas:+"$cublas"} "$torch" ${wheel:+"$wheel"}; do
  [ -r "$lib" ] || continue
  compare "$lib" "$lib"; compare "--closure $lib" --closure "$lib"; compare "--runtime $lib" --runtime "$lib"
done
[ -n "$cublas" ] && compare "$cuda_lib" --cuda-home '' --sdk-home '' "$cuda_lib"
exit "$status"
