#!/usr/bin/env bash
# strata-placement-probe (perf/placement_probe.cc), which perf/fidelity.sh runs beside its rounds:
# one sample is a round trip in ns, --watch prints "UNIX-SECONDS NS" lines for as long as asked, and
# what it cannot measure is refused with a reason and exit status 2, never a hang.
#   tests/placement_probe_check.sh BUILD_DIR
set -uo pipefail
probe=$1/perf/strata-placement-probe
status=0
fail() { echo "placement probe: $*"; status=1; }
refused() {  # EXPECTED-MESSAGE ARGS...: exit 2 and the message on stderr
  local want=$1 err rc
  shift
  err=$(timeout 10 "$probe" "$@" 2>&1 >/dev/null)
  rc=$?
  [ $rc = 2 ] && grep -qF -- "$want" <<<"$err" || fail "'$*': exit $rc, '$err' (expected 2 and '$want')"
}
refused "--cpus needs two different CPU numbers" --cpus 0,0
refused "--cpus needs two different CPU numbers" --cpus 1
refused "--watch needs a positive number" --watch 0
refused "--watch needs a positive number" --watch inf
refused "--trips needs a whole number from 1 to 1000000" --trips 0.5
refused "--bursts needs a whole number from 1 to 1000000" --bursts 1e9
refused "unknown argument --frobnicate" --frobnicate
refused "--cpus needs CPU numbers below" --cpus 0,5000
if [ "$(nproc)" -ge 2 ]; then
  # Pinned to one CPU there is nothing to measure between (taskset: the affinity it inherits).
  if command -v taskset >/dev/null; then
    err=$(timeout 10 taskset -c 0 "$probe" 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] && grep -qF "may run on one CPU only" <<<"$err" || fail "on one CPU: exit $rc, '$err'"
  fi
  refused "cannot run on CPU 1000" --cpus 0,1000
  refused "cannot run on CPU 1000" --cpus 1000,0
  one=$(timeout 30 "$probe") || fail "one sample: exit $?"
  [[ $one =~ ^[0-9]+$ ]] && [ "$one" -gt 0 ] || fail "one sample: '$one' is not a positive round trip in ns"
  # About 1.2 s at 250 ms: 4 to 6 lines, each a Unix time within a minute of now and a round trip.
  lines=$(timeout 30 "$probe" --watch 1.2) || fail "--watch: exit $?"
  n=$(wc -l <<<"$lines")
  [ "$n" -ge 4 ] && [ "$n" -le 6 ] || fail "--watch 1.2: $n lines, expected 4-6: $lines"
  now=$(date +%s)
  awk -v now="$now" 'NF != 2 || $1 < now - 60 || $1 > now + 1 || $2 <= 0 { bad = 1 } END { exit bad }' <<<"$lines" ||
    fail "--watch lines are not 'UNIX-SECONDS NS' with a positive round trip: $lines"
  # Between samples the probe sleeps, its threads blocked: a partner thread that yielded in a loop
  # kept its CPU busy and moved the processes it watched (fid51). Its threads' states, read 8
  # times 300 ms apart while it watches at 1 s intervals (a sample's bursts take a few ms): a
  # thread found running or runnable in most of them is busy between samples.
  "$probe" --watch 4 --interval 1000 > /dev/null &
  pid=$!
  (sleep 30; kill "$pid") > /dev/null 2>&1 &  # bounded: a probe that outlives its 4 s is stopped
  watchdog=$!
  sleep 0.5
  busy=0
  for _ in 1 2 3 4 5 6 7 8; do
    sleep 0.3
    r=$(cat /proc/$pid/task/*/stat 2>/dev/null | awk '{ sub(/^.*\) /, ""); if ($1 == "R") n++ } END { print n + 0 }')
    [ "$r" = 0 ] || busy=$((busy + 1))
  done
  wait $pid || fail "--watch 4 --interval 1000: exit $?"
  pkill -P $watchdog 2>/dev/null; kill $watchdog 2>/dev/null
  [ $busy -le 4 ] || fail "a thread ran between samples in $busy of 8 readings (expected asleep)"
  checked="a sample of $one ns, $n samples watched, asleep between samples in $((8 - busy)) of 8 readings, and 11 refusals"
else
  refused "may run on one CPU only"
  checked="the refusals on a machine of one CPU"
fi
echo "placement probe: $checked; $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
