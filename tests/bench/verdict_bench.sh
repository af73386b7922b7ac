#!/usr/bin/env bash
# What the compiler's last word costs (issue 16): for each project of the real-code panel (run it first:
# it leaves BUILD/realcode/<project>/broken-build and bench.args), the text-only run (--no-confirm)
# against the default run, which compiles what text could not settle: cold (no compile results cached)
# and warm (cached), side by side, with the ratio to the text-only run. The source index cache is warm
# in every run, so the ratios weigh compiling alone.
# Usage: verdict_bench.sh BUILD_TREE_OF_MLC [RUNS]
set -euo pipefail
bin="$1/tools/musa-linkcheck"; runs="${2:-3}"; panel="${MLC_REALCODE_DIR:-$1/realcode}"
ms() { local s e; s=$(date +%s%N); eval "\"$bin\" $1 -q" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
best() {  # the fastest of $runs runs (cold: the compile results removed before each)
  local args="$1" cold="$2" cache="$3" b=999999999 t
  for _ in $(seq "$runs"); do
    [ "$cold" = 1 ] && rm -f "$cache"/confirm-*.syms
    t=$(ms "$args"); [ "$t" -lt "$b" ] && b=$t
  done
  echo "$b"
}
printf '%-18s %10s %12s %8s %12s %8s\n' project text-only default-cold ratio default-warm ratio
tot_text=0; tot_cold=0; tot_warm=0
for f in "$panel"/*/bench.args; do
  [ -f "$f" ] || continue
  d=$(dirname "$f"); name=$(basename "$d"); cache="$d/bench-cache"
  rm -rf "$cache"; mkdir -p "$cache"
  args="$(cat "$f") --cache-dir '$cache'"
  ms "$args --no-confirm" >/dev/null  # the source index cache, for every run below
  text=$(best "$args --no-confirm" 0 "$cache")
  cold=$(best "$args" 1 "$cache")
  warm=$(best "$args" 0 "$cache")
  tot_text=$((tot_text + text)); tot_cold=$((tot_cold + cold)); tot_warm=$((tot_warm + warm))
  printf '%-18s %8s ms %9s ms %7sx %9s ms %7sx\n' "$name" "$text" "$cold" \
    "$(awk "BEGIN{printf \"%.2f\", $cold/($text?$text:1)}")" "$warm" "$(awk "BEGIN{printf \"%.2f\", $warm/($text?$text:1)}")"
  rm -rf "$cache"
done
printf '%-18s %8s ms %9s ms %7sx %9s ms %7sx\n' total "$tot_text" "$tot_cold" \
  "$(awk "BEGIN{printf \"%.2f\", $tot_cold/($tot_text?$tot_text:1)}")" "$tot_warm" \
  "$(awk "BEGIN{printf \"%.2f\", $tot_warm/($tot_text?$tot_text:1)}")"
