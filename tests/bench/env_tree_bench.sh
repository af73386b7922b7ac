#!/usr/bin/env bash
# A directory is an environment (issue 28 item 2): musa-linkcheck on several whole trees at once, against
# an `ldd -r` loop over the same ELF files, side by side, with both peak RSS figures (/usr/bin/time -v).
# Targets: the tool at most 0.3x the loop's wall time, peak RSS at most 500 MB. A benchmark, not a test:
# it prints figures and the ratio; the memory bound is checked here, not by a timed test.
# Usage: env_tree_bench.sh MUSA_LINKCHECK [RUNS] [DIR...]
#   default DIRs: /usr/lib/python3/dist-packages /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu
set -euo pipefail
tool="$1"; runs="${2:-3}"; shift $(( $# >= 2 ? 2 : 1 ))
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(/usr/lib/python3/dist-packages /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu)
existing=()
for d in "${dirs[@]}"; do [ -d "$d" ] && existing+=("$d"); done
[ ${#existing[@]} -gt 0 ] || { echo "benchmark skipped: none of ${dirs[*]} exists"; exit 0; }
[ -x /usr/bin/time ] || { echo "benchmark skipped: /usr/bin/time is absent (apt-get install time)"; exit 0; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mlc-envbench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# wall seconds and peak RSS (kB) of one command, from /usr/bin/time -v
measure() {
  /usr/bin/time -v -o "$scratch/time" "$@" >/dev/null 2>"$scratch/stderr" || true
  awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2, p, ":"); s=0; for (i=1;i<=n;i++) s=s*60+p[i]; w=s}
              /Maximum resident set size/ {r=$2} END {printf "%.3f %d\n", w, r}' "$scratch/time"
}
list="$scratch/files"
ours=("$tool" --cuda-home '' --sdk-home '' --no-cache --format json -o "$scratch/report.json" "${existing[@]}")
peer=(sh -c 'while IFS= read -r f; do ldd -r "$f"; done < "$1"' sh "$list")
# The files the tool checks, from its own JSON report (the named files: role "target"), so that the
# ldd -r loop runs over exactly the same ones; this first run also warms the page cache.
measure "${ours[@]}" >/dev/null
python3 -c 'import json, sys; [print(l["path"]) for l in json.load(open(sys.argv[1]))["libraries"] if l["role"] == "target"]' \
  "$scratch/report.json" > "$list"
n=$(wc -l < "$list")
measure "${peer[@]}" >/dev/null  # warm the page cache for the loop too
to=(); tp=(); ro=0; rp=0
for _ in $(seq "$runs"); do
  read -r w r < <(measure "${ours[@]}"); to+=("$w"); [ "$r" -gt "$ro" ] && ro=$r
  read -r w r < <(measure "${peer[@]}"); tp+=("$w"); [ "$r" -gt "$rp" ] && rp=$r
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mo=$(median "${to[@]}"); mp=$(median "${tp[@]}")
summary=$("$tool" --cuda-home '' --sdk-home '' --no-cache "${existing[@]}" 2>/dev/null | grep -E '^[0-9]+ of [0-9]+ files would fail to load' || true)
echo "trees: ${existing[*]}: $n ELF files ($runs runs each, alternating; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-28s median %8.2f s  peak RSS %7.1f MB\n' "musa-linkcheck DIR..." "$mo" "$(awk "BEGIN{print $ro/1024}")"
printf '%-28s median %8.2f s  peak RSS %7.1f MB\n' "ldd -r, once per file" "$mp" "$(awk "BEGIN{print $rp/1024}")"
printf 'ratio (musa-linkcheck / ldd -r loop): %.3fx (target <= 0.3x); peak RSS %s (target <= 500 MB)\n' \
  "$(awk "BEGIN{print $mo/($mp>0?$mp:1)}")" "$(awk "BEGIN{print ($ro/1024 <= 500) ? \"within\" : \"OVER\"}")"
echo "report: $summary"
