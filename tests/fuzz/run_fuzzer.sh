#!/usr/bin/env bash
# Runs one libFuzzer target for a few seconds from a fresh corpus of seed files, in its own work
# directory under the build tree. A crash fails the test; its input is kept in WORK/findings/ to
# become a regression test (tests/fuzz/regressions/TARGET/).
#   run_fuzzer.sh FUZZER SECONDS WORK SEED_FILE_OR_DIR...
set -uo pipefail
fuzzer=$1 seconds=$2 work=$3
shift 3
rm -rf "$work/corpus"
mkdir -p "$work/corpus" "$work/findings"
n=0
for seed in "$@"; do
  while IFS= read -r -d '' f; do
    n=$((n + 1))
    cp "$f" "$work/corpus/seed-$n"
  done < <(find "$seed" -type f -size -4M -print0 2>/dev/null)
done
echo "$(basename "$fuzzer"): $n seed files, ${seconds}s"
cd "$work" || exit 2
"$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=262144 \
          -artifact_prefix="$work/findings/" -print_final_stats=1 corpus 2>fuzz.log
status=$?
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|ERROR|SUMMARY" fuzz.log
[ "$status" -eq 0 ] || tail -n 60 fuzz.log
rm -rf "$work/corpus"
exit "$status"
