#!/usr/bin/env bash
# Runs the real-code panel (tests/realcode: Debian source packages built minus seeded sources) and prints
# its per-project table: symbols whose truth the compiler gave, how many the tracer got right, and
# whether one musa-stubgen --apply restored the build. With -v, every miss as well; with --no-run, the
# table of the last run. --set cmake|heldout|branches runs a panel outside the suite (docs/benchmarks.md):
# issue 38's CMake constructs, the held-out projects, or issue 48's branch and header-list projects; --time adds each tool call's wall time and peak RSS.
#   usage: bash tools/realcode-panel.sh [-v] [--no-run] [--set NAME] [--time]   (BUILD_DIR defaults to build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
verbose="" rerun=yes set="" time=0
while (($# > 0)); do
  case "$1" in
    -v) verbose=-v ;;
    --no-run) rerun="" ;;
    --set) set=${2:?--set needs a name}; shift ;;
    --time) time=1 ;;
    *) echo "usage: bash tools/realcode-panel.sh [-v] [--no-run] [--set cmake|heldout|branches] [--time]" >&2; exit 2 ;;
  esac
  shift
done

results="$BUILD_DIR/realcode/results${set:+-$set}"
if [ -n "$rerun" ]; then
  cmake --build "$BUILD_DIR" --target realcode_test musa-linkcheck musa-stubgen -j "$(nproc)" >/dev/null
  rm -rf "$results"
  if [ -z "$set" ]; then
    MLC_REALCODE_TIME=$time ctest --test-dir "$BUILD_DIR" -R 'RealCode/Panel' -j 2 >/dev/null || true
  else
    # The extra panels are not registered with ctest: the test program runs them one after the other.
    (cd "$BUILD_DIR/tests" && MLC_REALCODE_SET=$set MLC_REALCODE_TIME=$time ./realcode_test \
      --gtest_filter='RealCode/Panel.*' >/dev/null) || true
  fi
fi

total=0 total_right=0 total_back=0 total_placed=0 total_headers=0
printf '| %-18s | %7s | %5s | %6s | %-62s | %-14s |\n' project symbols right '%' 'after one --apply' 'placed (hdrs)'
printf '|%s|%s|%s|%s|%s|%s|\n' '--------------------' '---------' '-------' '--------' '----------------------------------------------------------------' '----------------'
for f in "$results"/*.txt; do
  [ -e "$f" ] || { echo "no results: did the panel skip? ctest --test-dir $BUILD_DIR -R RealCode -V" >&2; exit 1; }
  head=$(head -n 1 "$f")
  # "<name>: removed ...; N symbols, R right (P%); apply: ..."
  name=${head%%:*}
  n=$(sed -E 's/.*; ([0-9]+) symbols, .*/\1/' <<<"$head")
  r=$(sed -E 's/.* symbols, ([0-9]+) right .*/\1/' <<<"$head")
  p=$(sed -E 's/.* right \(([0-9.]+)%\).*/\1/' <<<"$head")
  a=$(sed -E 's/.*; apply: stubgen exit ([0-9]+), rebuild ([A-Za-z]+), ([0-9]+) traced symbols left undefined, second apply ([^;]*).*/stubgen exit \1, rebuild \2, \3 left, 2nd apply: \4/' <<<"$head")
  a=${a/changes nothing/no change}
  # "...; placed P of B put back (H in header lists)": the put-back sources in the command they left
  placed=$(sed -nE 's/.*; placed ([0-9]+) of ([0-9]+) put back \(([0-9]+) in header lists\).*/\1 \2 \3/p' <<<"$head")
  read -r pl pb ph <<<"${placed:-0 0 0}"
  printf '| %-18s | %7s | %5s | %6s | %-62s | %-14s |\n' "$name" "$n" "$r" "$p" "${a:0:62}" "$pl/$pb ($ph)"
  total=$((total + n)) total_right=$((total_right + r))
  total_back=$((total_back + pb)) total_placed=$((total_placed + pl)) total_headers=$((total_headers + ph))
done
if ((total > 0)); then
  printf '| %-18s | %7s | %5s | %6s | %-62s | %-14s |\n' total "$total" "$total_right" \
    "$(awk -v r="$total_right" -v n="$total" 'BEGIN { printf "%.1f", 100 * r / n }')" '' \
    "$total_placed/$total_back ($total_headers)"
fi
if [ "$verbose" = -v ]; then
  for f in "$results"/*.txt; do echo; cat "$f"; done
fi
