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
# Where the CPUs were (the probe's samples every 0.5 s: 100 ns near, 400 far, one burst that never
# completed) and each round's windows: 2x1 round 1 all near, 8x4 round 2 all far (held); 8x4 round 1
# and 2x1 round 2 moved between the two. The held rounds' table then has one round per shape.
awk 'BEGIN { for (t = 1000; t <= 1080; t += 0.5) printf "%.3f %d\n", t, (t < 1025 || (t >= 1045 && t < 1060)) ? 100 : 400;
             print "1030.250 -1" }' > "$dir/placement.log"
printf '%s\n' "2x1 1 1000 1010 1020" "8x4 1 1020 1030 1040" "2x1 2 1040 1050 1060" "8x4 2 1060 1070 1080" > "$dir/windows.log"
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
  expect "near 100-100 ns (median 100), far 400-400 ns (median 400), split at 200 ns"
  expect "2x1 round 1: calibration 21 near, 0 far; measurement 21 near, 0 far (20 s): held, near"
  expect "8x4 round 1: calibration 10 near, 11 far; measurement 0 near, 21 far (20 s): moved"
  expect "2x1 round 2: calibration 11 near, 10 far; measurement 20 near, 1 far (20 s): moved"
  expect "8x4 round 2: calibration 0 near, 21 far; measurement 0 near, 21 far (20 s): held, far"
  expect "held in one placement: 2 of the rounds' shapes"
  expect "the rounds held in one placement: 2 ranks 1 of 2, 2x4 1 of 2"
  held=$(cat "$dir/fidelity_held.md")
  # 2 ranks: round 1 alone (b chosen, 12 us priced 11; a the fastest at 10); 2x4: round 2 alone.
  for line in "| 2 ranks | allreduce | 64 KiB | b | 11.0 | 12.0 | -8% | -8% | 0% | a | 1.20 | 1.20 |" \
              "| 2x4 | allreduce | 64 KiB | a | 16.0 | 20.0 | -20% | -20% | 0% | b | 2.00 | 2.00 |"; do
    grep -qF -- "$line" <<<"$held" || { echo "fidelity_held.md (run $attempt): no line '$line' in:"; echo "$held"; status=1; }
  done
done
echo "fidelity --report: 2 made-up rounds of one allreduce cell and the rounds' placements, 3 runs of the report;" \
  "$([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
