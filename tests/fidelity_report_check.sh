#!/usr/bin/env bash
# perf/fidelity.sh --report on rounds made up here, where the right tables are known: the tuner's
# choice taken by the most rounds, of as many the earliest round's (the same on every run of the
# report), and each round's choice against that round's fastest apart from the medians' choice
# against the medians' fastest (a machine whose algorithms trade places from round to round can
# pass the one and fail the other).
#   tests/fidelity_report_check.sh SOURCE_DIR
set -euo pipefail
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
header=impl,op,algo,ranks,size_bytes,count,type,redop,root,inplace,time_us,algbw_gbs,busbw_gbs,wrong,model_us,requested,pass_times_us
row() {  # ALGO TIME_US MODEL_US REQUESTED [INPLACE]
  echo "strata,allreduce,$1,2,65536,16384,float,sum,-1,${5:-0},$2,0,0,0,$3,$4,$2"
}
# Round 1 chose b, round 2 a: a tie, so b (round 1's). By the medians of the two rounds a takes 15
# and b 11: b, the choice, is the fastest (1.00). Round by round the choice took 12 against a's 10
# (1.2) and then 20 against b's 10 (2.0): 1.6, the median, more than 10% from the fastest.
for shape in 2x1 8x4; do
  { echo "$header"; row b 12 11 auto; row a 10 10 a; row b 12 11 b; row b 10 11 auto 1; } > "$dir/measured_${shape}_1.csv"
  { echo "$header"; row a 20 16 auto; row a 20 16 a; row b 10 11 b; row a 20 13 auto 1; } > "$dir/measured_${shape}_2.csv"
done
# In place, the choice took 10 us priced 11 (+10%), then 20 priced 13 (-35%): by the medians 12
# against 15 (-20%); round by round the median of +10% and -35%, -12.5% (within 15%).
echo "2 x a spinner beside every round" > "$dir/loaded"  # what --loaded writes, the report names
status=0
for attempt in 1 2 3; do  # each run of the report is a new Python process, with its own hash seed
  report=$("$root/perf/fidelity.sh" "$dir" 2 --report)
  expect() {
    grep -qF -- "$1" <<<"$report" || { echo "fidelity report (run $attempt): no line with '$1' in:"; echo "$report"; status=1; }
  }
  expect "| 2 ranks | allreduce | 64 KiB | b | 13.5 | 16.0 | -16% | -14% | 67% | b | 1.00 | 1.60 |"
  expect "tuner's choice within 10% of the fastest: 2 of 2"
  expect "each round's choice within 10% of that round's fastest (the median over the rounds): 0 of 2"
  expect "under background load: 2 x a spinner beside every round"
  expect "in place, the tuner's choice: predicted within 15% of measured in 0 of 2 (median |error| 20.0%), round by round in 2 (median 12.5%)"
done
echo "fidelity --report: 2 made-up rounds of one allreduce cell, 3 runs of the report; $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
