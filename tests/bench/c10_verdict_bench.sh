#!/usr/bin/env bash
# What the compiler's last word costs on PyTorch 1.13.1's tree (issue 16), beside verdict_bench.sh's panel:
# c10 built standalone with its own CMake file, minus a few sources, then musa-linkcheck and musa-stubgen on
# its libc10.so, text-only (--no-confirm) against the default run (which compiles what text cannot settle),
# cold (an empty cache directory) and warm (the same directory again), side by side with the ratios.
# Then what each context traces right: the build directory alone against --source-root (issue 26).
# Usage: c10_verdict_bench.sh BUILD_TREE_OF_MLC [RUNS]   (works under BUILD_TREE/bench-data/c10-verdict, kept
# for the next run: the sources and the c10 build are made once)
set -euo pipefail
mlc="$(cd "$1" && pwd)"; runs="${2:-3}"
linkcheck="$mlc/tools/musa-linkcheck"; stubgen="$mlc/tools/musa-stubgen"
work="$mlc/bench-data/c10-verdict"; tree="$work/pytorch-1.13.1"; build="$work/c10-build"
# Sources that others reference, removed as the panel removes them: a plain function (torchCheckFail,
# Exception.cpp), flags and functions written by macro families (C10_DEFINE_*, Logging.cpp), a class with
# virtual functions whose key function goes with its source (TensorImpl.cpp) and type ids written by
# CAFFE_KNOWN_TYPE (typeid.cpp).
removed=(util/Exception.cpp util/Logging.cpp core/TensorImpl.cpp util/typeid.cpp)

# 1. The sources: Debian's orig tarball (apt-get source --download-only pytorch), or the copy the tests or
#    tools/dev.sh already fetched into this build tree; extracted once.
mkdir -p "$work"
if [ ! -e "$work/.extracted" ]; then
  orig=$(ls "$mlc"/bench-data/pytorch_1.13.1*.orig.tar.* "$mlc"/hipify-data/pytorch_1.13.1*.orig.tar.* \
            "$work"/pytorch_1.13.1*.orig.tar.* 2>/dev/null | head -n 1 || true)
  if [ -z "$orig" ]; then
    (cd "$work" && apt-get source --download-only pytorch >/dev/null 2>&1) || true
    orig=$(ls "$work"/pytorch_1.13.1*.orig.tar.* 2>/dev/null | head -n 1 || true)
  fi
  if [ -z "$orig" ]; then
    echo "c10_verdict_bench: PyTorch 1.13.1's sources cannot be had (apt-get source --download-only pytorch" \
         "fetched nothing: is there a deb-src entry? bash tools/dev.sh test adds one); skipped"
    exit 0
  fi
  rm -rf "$tree"
  tar -C "$work" -xf "$orig"
  touch "$work/.extracted"
fi

# 2. c10 configured on its own (its CMake file needs fmt::fmt-header-only, which PyTorch's top level finds:
#    Debian's libfmt-dev provides it) with compile commands, the removed sources dropped from its glob, built.
if [ ! -e "$build/.built" ]; then
  cm="$tree/c10/CMakeLists.txt"
  [ -e "$cm.orig" ] || cp "$cm" "$cm.orig"
  awk -v list="${removed[*]}" '
    /^file\(GLOB C10_HEADERS/ { n = split(list, r, " "); for (i = 1; i <= n; ++i) print "list(REMOVE_ITEM C10_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/" r[i] ")" }
    { print }' "$cm.orig" > "$cm"
  printf 'find_package(fmt REQUIRED)\n' > "$work/find-fmt.cmake"
  rm -rf "$build"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$tree/c10" -B "$build" -G 'Unix Makefiles' -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_PROJECT_c10_INCLUDE="$work/find-fmt.cmake" "${launcher[@]}" >/dev/null
  cmake --build "$build" --target c10 -j "$(nproc)" >/dev/null
  touch "$build/.built"
fi
lib="$build/libc10.so"
mkdir -p "$work/no-sdk" "$work/stubs"
context=(--build-dir "$build" --source-root "$tree" --sdk-home "$work/no-sdk" --cuda-home '')

ms() {  # one run's wall time in milliseconds
  local s e
  s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N)
  echo $(( (e - s) / 1000000 ))
}
best() {  # the fastest of $runs runs; cold: the cache directory emptied before each
  local cold="$1" cache="$2" b=999999999 t; shift 2
  for _ in $(seq "$runs"); do
    [ "$cold" = 1 ] && { rm -rf "$cache"; mkdir -p "$cache"; }
    t=$(ms "$@" --cache-dir "$cache"); [ "$t" -lt "$b" ] && b=$t
  done
  echo "$b"
}
ratio() { awk "BEGIN{printf \"%.2f\", $1/($2?$2:1)}"; }

echo "c10 of PyTorch 1.13.1 without ${removed[*]}: $(nm -D --undefined-only "$lib" | grep -c ' U ') undefined symbols; best of $runs"
# MLC_C10_TIMES=0: the traced figures of section 3 only.
[ "${MLC_C10_TIMES:-1}" = 1 ] && printf '%-16s %-6s %10s %10s %8s\n' tool cache text-only default ratio
for tool in musa-linkcheck musa-stubgen; do
  [ "${MLC_C10_TIMES:-1}" = 1 ] || continue
  if [ "$tool" = musa-linkcheck ]; then cmd=("$linkcheck" "$lib" "${context[@]}" -q)
  else cmd=("$stubgen" "$lib" "${context[@]}" --out-cpp "$work/stubs/stubs.cpp" --out-header "$work/stubs/stubs.h"); fi
  text_cache="$work/cache-text"; default_cache="$work/cache-default"
  text_cold=$(best 1 "$text_cache" "${cmd[@]}" --no-confirm)
  default_cold=$(best 1 "$default_cache" "${cmd[@]}")
  text_warm=$(best 0 "$text_cache" "${cmd[@]}" --no-confirm)
  default_warm=$(best 0 "$default_cache" "${cmd[@]}")
  printf '%-16s %-6s %7s ms %7s ms %7sx\n' "$tool" cold "$text_cold" "$default_cold" "$(ratio "$default_cold" "$text_cold")"
  printf '%-16s %-6s %7s ms %7s ms %7sx\n' "$tool" warm "$text_warm" "$default_warm" "$(ratio "$default_warm" "$text_warm")"
  rm -rf "$text_cache" "$default_cache"
done
rm -rf "$work/stubs"

# 3. What each context traces (issue 26): the build directory alone, as a user's first command gives it,
#    against --source-root naming PyTorch's tree too. The truth is the compiler's: each removed source
#    compiled with a sibling's compile_commands.json command, and the symbols libc10.so leaves undefined
#    that its object defines. Right: missing-source with that file as the origin.
truth_dir="$work/truth"; rm -rf "$truth_dir"; mkdir -p "$truth_dir"
python3 - "$build" "$tree/c10" "$truth_dir" "${removed[@]}" > "$work/truth.txt" <<'PY'
import json, shlex, subprocess, sys, os
build, c10, out, removed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
db = json.load(open(os.path.join(build, "compile_commands.json")))
sibling = next(e for e in db if e["file"].endswith(".cpp"))
undefined = set(subprocess.run(["nm", "-D", "--undefined-only", os.path.join(build, "libc10.so")],
                               capture_output=True, text=True).stdout.split())
for rel in removed:
    src, obj = os.path.join(c10, rel), os.path.join(out, rel.replace("/", "_") + ".o")
    words = shlex.split(sibling["command"]) if "command" in sibling else sibling["arguments"]
    words = [w for w in words if w != sibling["file"]]
    i = words.index("-o"); words[i + 1] = obj
    words = [w for w in words if w != "-c"]
    subprocess.run(words + ["-c", src], cwd=sibling["directory"], check=True, capture_output=True)
    for line in subprocess.run(["nm", "-g", "--defined-only", obj], capture_output=True, text=True).stdout.splitlines():
        name = line.split()[-1]
        if name in undefined: print(name, src)
PY
echo
echo "traced right (missing-source in the removed file whose object defines it), of $(wc -l < "$work/truth.txt") symbols:"
for mode in alone source-root; do
  args=(--build-dir "$build" --sdk-home "$work/no-sdk" --cuda-home '' --cache-dir "$work/cache-$mode")
  [ "$mode" = source-root ] && args+=(--source-root "$tree")
  rm -rf "$work/cache-$mode"
  s=$(date +%s%N)
  "$linkcheck" "$lib" "${args[@]}" --format json -o "$work/report-$mode.json" >/dev/null 2>&1 || true
  e=$(date +%s%N)
  python3 - "$work/truth.txt" "$work/report-$mode.json" "$mode" "$(( (e - s) / 1000000 ))" <<'PY'
import json, os, sys
truth = {}
for line in open(sys.argv[1]):
    sym, f = line.split(); truth.setdefault(sym, set()).add(os.path.realpath(f))
report = json.load(open(sys.argv[2]))
got = {u["symbol"]: u for lib in report["libraries"] for u in lib["unresolved"]}
right = sum(1 for s, files in truth.items()
            if s in got and got[s]["classification"] == "missing-source"
            and os.path.realpath((got[s].get("origin") or {}).get("file") or "") in files)
label = "--build-dir alone" if sys.argv[3] == "alone" else "--build-dir --source-root"
print(f"  {label:26s} {right} of {len(truth)} ({100.0 * right / max(len(truth), 1):.1f}%), {sys.argv[4]} ms cold")
PY
  rm -rf "$work/cache-$mode"
done
