#!/usr/bin/env bash
# Runs one libFuzzer target for a few seconds from a fresh corpus of seed files, in its own work
# directory under the build tree. A crash or a leak fails the test; its input is kept in
# WORK/findings/ to become a regression test (tests/fuzz/regressions/TARGET/).
# RANDOM_SEED is libFuzzer's -seed: the suite passes a fixed one, so that the mutations CI tries are
# the same ones a developer's run tried first (a slower machine runs a prefix of them); 0 is a new
# seed each run, for the long campaign.
#   run_fuzzer.sh FUZZER SECONDS RANDOM_SEED WORK SEED_FILE_OR_DIR...
set -uo pipefail
fuzzer=$1 seconds=$2 random_seed=$3 work=$4
shift 4
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
"$fuzzer" -max_total_time="$seconds" -seed="$random_seed" -timeout=20 -rss_limit_mb=4096 -max_len=262144 \
          -artifact_prefix="$work/findings/" -print_final_stats=1 corpus 2>fuzz.log
status=$?
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|ERROR|SUMMARY" fuzz.log
[ "$status" -eq 0 ] || tail -n 60 fuzz.log
rm -rf "$work/corpus"
exit "$status"
