#!/usr/bin/env bash
# Generates a DWARF-heavy shared library for bench_dwarf: TUS translation units of FUNCS functions
# each, every unit including one generated header of template instances whose type DIEs are repeated
# in each unit's debug info (the units use one struct that holds them all).
# A few functions in three units call functions (and read a variable) that are declared but defined
# nowhere, and a fourth unit's data points at another undefined variable (a table its code reads) and
# at an undefined virtual function (a vtable), so the library has a few unresolved symbols for
# musa-linkcheck to locate by file:line. The three calling units are compiled -O1 -g (GCC emits DWARF
# call sites only when optimising), the others -O0 -g.
# Compiling 300 MB of debug information takes minutes of CPU, so by default only unit 0 and the four
# referencing units are compiled; every other unit is a copy of unit 0's object with its symbols
# renamed (objcopy --redefine-syms: u000_f* becomes u017_f*): a compile unit of the same DWARF, code
# and relocations as if compiled from its own source, whose debug names say unit 0. FULL_COMPILE=1
# compiles every unit from its own source instead (about 5 minutes on 2 idle cores).
# Writes OUT/libdwarfheavy.so (with DWARF) and OUT/libdwarfheavy-stripped.so (strip --strip-debug);
# the sources and objects stay under OUT/src (removed unless KEEP_SOURCES=1).
# Usage: gen_dwarf_heavy.sh OUT [TUS=210] [FUNCS=240] [DEPTH=700]
set -euo pipefail
out="$1"; tus="${2:-210}"; funcs="${3:-240}"; depth="${4:-700}"
cxx="${CXX:-c++}"
lib="$out/libdwarfheavy.so"; stripped="$out/libdwarfheavy-stripped.so"; stamp="$out/params"
params="v6 $tus $funcs $depth ${FULL_COMPILE:-0} $("$cxx" --version | head -1)"
summary() {
  local debug
  debug=$(readelf -SW "$lib" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 ~ /^\.debug_/ { print $5 }' |
    while read -r h; do echo $((16#$h)); done | awk '{ s += $1 } END { printf "%.1f", s / 1048576 }')
  echo "generated: $lib: $(($(stat -c %s "$lib") / 1048576)) MB, .debug_* sections $debug MB," \
    "$(nm "$lib" | grep -c ' T ') functions, $tus units; stripped copy $(($(stat -c %s "$stripped") / 1024)) KB"
}
if [ -f "$lib" ] && [ -f "$stripped" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$params" ]; then summary; exit 0; fi
src="$out/src"
rm -rf "$src" "$lib" "$stripped"; mkdir -p "$src"
[ "${KEEP_SOURCES:-0}" = 1 ] || trap 'rm -rf "$src"' EXIT

# The header: a struct template instantiated as 8 chains of DEPTH types (each instance a struct with
# a dozen members, an enum and two member functions), as template-heavy C++ headers do: every unit
# that includes it repeats all those type DIEs in its own debug info.
cat > "$src/heavy_types.h" <<HEADER
#pragma once
namespace heavy {
template <int N, typename T> struct Node {
  int id; double weight; const char* name; unsigned long flags[4]; float scale; short kind; T value;
  Node<N - 1, T> prev; const Node<N / 2, T>* parent;
  enum State { Idle, Busy, Done } state;
  int get(int x) const;
  void set(const Node& other, T v);
};
template <typename T> struct Node<0, T> { int id; };
struct Everything {
  Node<$depth, int> a; Node<$depth, double> b; Node<$depth, long> c; Node<$depth, char> d;
  Node<$depth, short> e; Node<$depth, float> f; Node<$depth, unsigned> g; Node<$depth, bool> h;
};
}  // namespace heavy
HEADER

referencing() { [ "$1" = 7 ] || [ "$1" = $((tus / 2)) ] || [ "$1" = $((tus - 3)) ]; }

# Unit t's function i reads the structure and calls the unit's previous function (a call site in the
# DWARF). Names have a fixed width (u007_f0003) so that a copy's symbols can be renamed in place.
unit_source() {
  local t=$1 u
  u=$(printf 'u%03d' "$t")
  echo '#include "heavy_types.h"'
  echo 'namespace heavy {'
  if referencing "$t"; then
    echo 'int missing_function(int);'
    echo "int missing_in_unit_$t(const Everything*);"
    echo 'extern int missing_counter;'
  fi
  if ((t == tus / 3)); then
    echo 'extern int missing_table_entry;'
    echo "int* table_$u[] = {&missing_table_entry};"
    echo "int ${u}_table_entry() { return *table_$u[0]; }"
    echo 'struct Widget { virtual ~Widget(); virtual int missing_virtual(int); int w = 0; };'
    echo 'Widget::~Widget() {}'
    echo "Widget* ${u}_make_widget() { return new Widget; }"
  fi
  echo "int ${u}_f0000(const Everything* s, int x) { return s->a.id + x; }"
  for ((i = 1; i < funcs; i++)); do
    printf 'int %s_f%04d(const Everything* s, int x) {\n' "$u" "$i"
    echo "  int v = s->b.prev.id + static_cast<int>(s->c.weight) * x;"
    printf '  v += %s_f%04d(s, v ^ %d);\n' "$u" $((i - 1)) "$i"
    case "$t:$i" in
      7:3 | $((tus / 2)):11 | $((tus - 3)):5)
        echo "  v += missing_function(v) + missing_counter;"
        echo "  v += missing_in_unit_$t(s);"
        ;;
    esac
    echo "  return v;"
    echo "}"
  done
  echo '}  // namespace heavy'
}

compiled=()
for ((t = 0; t < tus; t++)); do
  if [ "${FULL_COMPILE:-0}" = 1 ] || ((t == 0 || t == tus / 3)) || referencing "$t"; then
    unit_source "$t" > "$src/unit$t.cpp"
    compiled+=("$t")
  fi
done
for t in "${compiled[@]}"; do
  if referencing "$t"; then echo "-O1 $src/unit$t"; else echo "-O0 $src/unit$t"; fi
done | xargs -P "$(nproc)" -L 1 sh -c '"$0" "$1" -g -fPIC -w -c "$2.cpp" -o "$2.o"' "$cxx"
nm --defined-only "$src/unit0.o" | awk '$3 ~ /u000_f/ { print $3 }' > "$src/unit0.syms"
objs=()
for ((t = 0; t < tus; t++)); do
  if [ ! -f "$src/unit$t.o" ]; then
    u=$(printf 'u%03d' "$t")
    sed "s/.*/& &/; s/u000_f\([0-9]*\)\([^ ]*\)$/${u}_f\1\2/" "$src/unit0.syms" > "$src/unit$t.syms"
    objcopy --redefine-syms="$src/unit$t.syms" "$src/unit0.o" "$src/unit$t.o"
  fi
  objs+=("$src/unit$t.o")
done
"$cxx" -shared -o "$lib" "${objs[@]}"
strip --strip-debug -o "$stripped" "$lib"
echo "$params" > "$stamp"
summary
