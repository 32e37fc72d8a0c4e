#!/usr/bin/env bash
# The cost model's fidelity on this machine: calibrate, then measure what the tuner chose and every
# algorithm, on 2 ranks (one node) and on 8 ranks as 2 virtual nodes of 4, several rounds with the
# calibration and the measurements interleaved (the machine's speed drifts between rounds as much as
# the model errs, so one calibration against one later measurement judges the drift, not the
# model). Prints, per (shape, collective, size): the tuner's choice, its prediction against its
# measured time (the medians over the rounds of both), the same per round (each round's prediction,
# from its own calibration, against its own measurement; the median of those errors: where the
# machine runs in two states, calibration and measurement each catch one, and the medians of the
# rounds can pair a prediction of one with a time of the other), the spread of that time over the
# rounds (max / min - 1), and how far the choice is from the fastest algorithm measured (the
# medians over the rounds of each algorithm's time; and round by round: each round's choice against
# that round's fastest, the median over the rounds); and how
# often a round's time repeats the others' within 15% (what the machine allows any model), and the
# error where every round repeats the others (the cells the machine lets a 15% target judge). OUTDIR/fidelity_algorithms.md: the same for every
# algorithm asked by name. Beside the rounds, where the host placed the first two CPUs
# (strata-placement-probe, OUTDIR/placement.md): the tables again over the rounds whose calibration
# and measurement ran in one placement (OUTDIR/fidelity_held.md).
#
#   perf/fidelity.sh [OUTDIR] [ROUNDS] [--report] [--reprice] [--against OTHER] [--loaded]
#       (default out/fidelity, 3 rounds; --report: the tables again from OUTDIR's stored rounds;
#       --reprice: OUTDIR's stored rounds priced again by this build's strata-model, each from its
#       round's calibration file, into OUTDIR/repriced, and the tables of those: a change to the
#       formulas judged against measured rounds in seconds, where it leaves calibration's fits
#       alone (the tuner's choice is the one strata-model marks, timed by its own rows of the
#       round, out of place and in place);
#       --against OTHER: also how often this run's measured medians repeat those of an earlier
#       run stored in OTHER within 15%: how far the machine repeats itself from run to run;
#       --loaded: every round, calibration too, beside one CPU-bound process per core at nice 19,
#       perf/cpu_load.sh; OUTDIR/loaded says so and the report names it)
#
# Every figure is a median over the rounds, each round's figure the median of its 3 passes over
# the whole sweep (--passes: on the development VM the speed of 8 processes holds for seconds and
# then jumps by up to 2x, so one pass's calls catch one state), each pass's a median of 20 calls.
# Sizes 64 KiB - 16 MiB by 4x; allreduce, broadcast, allgather, reducescatter. Needs build/ (STRATA_BUILD)
# and mpiexec.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-out/fidelity}
rounds=${2:-3}
report_only=
reprice=
against=
loaded=
shift $(($# < 2 ? $# : 2))
while [ $# -gt 0 ]; do
  case $1 in
    --report) report_only=1 ;;
    --reprice) report_only=1 reprice=1 ;;
    --loaded) loaded=1 ;;
    --against) [ $# -ge 2 ] || { echo "fidelity: --against needs a directory" >&2; exit 2; }; against=$2; shift ;;
    *) echo "fidelity: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -z "$against" ] || ls "$against"/measured_*_1.csv > /dev/null 2>&1 ||
  { echo "fidelity: $against holds no stored rounds (measured_*_1.csv)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${STRATA_BUILD:-build}
perf="$build/perf/strata-perf"
[ -n "$report_only" ] || [ -x "$perf" ] || { echo "fidelity: $perf not built" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
ops=allreduce,broadcast,allgather,reducescatter
sweep=(-b 64K -e 16M -f 4 -n 20 -w 5 --passes 3 --impl strata --op "$ops")
probe_pid=
stop_probe() { [ -z "$probe_pid" ] || { kill "$probe_pid" 2>/dev/null || true; wait "$probe_pid" 2>/dev/null || true; probe_pid=; }; }
if [ -n "$loaded" ] && [ -z "$report_only" ]; then
  source perf/cpu_load.sh
  trap 'stop_load; stop_probe' EXIT
  start_load
  echo "$(nproc) x nice -n 19 sh -c 'while :; do :; done' beside every round" > "$out/loaded"
elif [ -z "$report_only" ]; then
  trap stop_probe EXIT
  rm -f "$out/loaded"
fi
# Where the host put the CPUs, all along (perf/placement_probe.cc: a cache line's round trip
# between the first two CPUs, sampled every 500 ms, 20 bursts of 200 trips, some 0.1-0.3% of their
# time): a hypervisor that moves the guest's CPUs moves every step between processes on different
# ones with them (the development VM: 1.3-1.5x at 1 MiB), and each round's windows
# (OUTDIR/windows.log: shape, round, start, end of calibration, end, in Unix seconds) say which
# placement its calibration and its measurement ran in.
probe="$build/perf/strata-placement-probe"
if [ -z "$report_only" ]; then
  rm -f "$out/placement.log" "$out/windows.log"
  if [ -x "$probe" ] && [ "$(nproc)" -ge 2 ]; then
    "$probe" --watch 86400 --interval 500 > "$out/placement.log" &
    probe_pid=$!
  else
    echo "fidelity: $probe not built or one CPU: the rounds' placement is not recorded" >&2
  fi
fi

for ((round = 1; round <= rounds && ${#report_only} == 0; ++round)); do
  for shape in 2x1 8x4; do   # ranks x ranks per node (2x1: one node of 2, the library's own grouping)
    np=${shape%x*}
    rpn=${shape#*x}
    env=()
    [ "$rpn" = 1 ] || env=(-x "STRATA_RANKS_PER_NODE=$rpn")
    # Calibration, then in the same processes the tuner's choice (auto) and every algorithm, one
    # after another (--sequential), each timed after its own warm-up. The same processes: on the
    # development VM a fresh process runs its first seconds slower (a 2-rank 4 MiB allgather took
    # 15-36% longer in a new process than calibration had measured in all 13 rounds of three runs,
    # and 5% longer when timed in the calibrating process right after it), so a separate run judged
    # the start-up, not the model. Interleaved iteration by iteration, each call would run in what
    # another algorithm had left behind (8 processes on 2 cores: a 4 MiB ring allreduce took
    # 13.3 ms among four algorithms, 7.7 ms alone; a 2-rank 1 MiB ring reduce-scatter 96 us against
    # 50 us), a regime neither calibration nor an application's repeated calls run in. The rounds
    # interleave what the machine's drift would bias.
    start=$(date +%s.%N)
    mpiexec -n "$np" "${env[@]}" "$perf" --calibrate "$out/calibration_${shape}_$round.machine" "${sweep[@]}" \
      --algo auto,all --sequential --csv "$out/measured_${shape}_$round.csv" > "$out/measured_${shape}_$round.txt" 2>&1
    echo "$shape $round $start $(stat -c %.3Y "$out/calibration_${shape}_$round.machine") $(date +%s.%N)" >> "$out/windows.log"
    echo "[fidelity] round $round, $np ranks ($shape): done" >&2
  done
done

[ -z "$loaded" ] || [ -n "$report_only" ] || stop_load
stop_probe

# Each round's placement: the probe's samples split into near and far at the geometric mean of
# their 5th and 95th percentiles where those are 2x apart or more (else one placement); a round is
# held where 95% of the samples of its calibration and its measurement together fall in one.
# OUTDIR/placement.md says so per round; OUTDIR/held_rounds lists the held ones ("shape round"),
# whose tables follow the others (fidelity_held.md): the model against the machine it calibrated.
rm -f "$out/held_rounds" "$out/placement.md"
if [ -s "$out/placement.log" ] && [ -s "$out/windows.log" ]; then
  python3 - "$out" <<'EOF' | tee "$out/placement.md"
import math, sys
out = sys.argv[1]
samples = []
for line in open(f"{out}/placement.log"):
    f = line.split()
    if len(f) == 2 and float(f[1]) > 0:
        samples.append((float(f[0]), float(f[1])))
ns = sorted(v for _, v in samples)
if not ns:
    sys.exit(print("placement: the probe took no sample"))
lo, hi = ns[int(0.05 * (len(ns) - 1))], ns[int(0.95 * (len(ns) - 1))]
split = math.sqrt(lo * hi) if hi >= 2 * lo else float("inf")
near = [v for v in ns if v <= split]
far = [v for v in ns if v > split]
def span(v):
    return f"{v[0]:.0f}-{v[-1]:.0f} ns (median {v[len(v) // 2]:.0f})" if v else "none"
print(f"placement: a cache line's round trip between the first two CPUs, {len(ns)} samples; "
      + (f"near {span(near)}, far {span(far)}, split at {split:.0f} ns" if far else f"one placement, {span(near)}"))
held = []
for line in open(f"{out}/windows.log"):
    shape, r, start, calEnd, end = line.split()
    start, calEnd, end = float(start), float(calEnd), float(end)
    def count(a, b):
        w = [v for t, v in samples if a <= t <= b]
        return sum(v <= split for v in w), sum(v > split for v in w)
    cn, cf = count(start, calEnd)
    mn, mf = count(calEnd, end)
    n, f = cn + mn, cf + mf
    keep = n + f > 0 and max(n, f) >= 0.95 * (n + f)
    where = ("near" if n >= f else "far") if keep else "both"
    if keep:
        held.append(f"{shape} {r}")
    print(f"  {shape} round {r}: calibration {cn} near, {cf} far; measurement {mn} near, {mf} far "
          f"({end - start:.0f} s): {'held, ' + where if keep else 'moved'}")
open(f"{out}/held_rounds", "w").write("".join(h + "\n" for h in held))
print(f"held in one placement: {len(held)} of the rounds' shapes")
EOF
fi

if [ -n "$reprice" ]; then
  model="$build/perf/strata-model"
  [ -x "$model" ] || { echo "fidelity: $model not built" >&2; exit 1; }
  ls "$out"/measured_*_1.csv > /dev/null 2>&1 || { echo "fidelity: $out holds no stored rounds" >&2; exit 2; }
  mkdir -p "$out/repriced"
  python3 - "$out" "$rounds" "$model" <<'EOF'
import csv, os, subprocess, sys, tempfile
out, rounds, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dest = f"{out}/repriced"
for r in range(1, rounds + 1):
    for shape in ("2x1", "8x4"):
        ranks, perNode = (int(v) for v in shape.split("x"))
        nodes, ppn = (1, ranks) if perNode == 1 else (ranks // perNode, perNode)  # 2x1: one node of 2
        cal, meas = f"{out}/calibration_{shape}_{r}.machine", f"{out}/measured_{shape}_{r}.csv"
        missing = [f for f in (cal, meas) if not os.path.exists(f)]
        if missing:
            sys.exit(f"fidelity: round {r} of {shape} is not stored: no {', '.join(missing)}")
        rows = list(csv.DictReader(open(meas)))
        named = {(x["op"], x["size_bytes"], x["algo"], x["inplace"]): x for x in rows if x["requested"] != "auto"}
        price, chosen = {}, {}
        for op in sorted({x["op"] for x in rows}):
            sizes = sorted({int(x["size_bytes"]) for x in rows if x["op"] == op})
            factor = sizes[1] // sizes[0] if len(sizes) > 1 else 2
            for inplace in ("0", "1"):  # in place: each call priced as made, the choice the out-of-place one
                with tempfile.NamedTemporaryFile(suffix=".csv") as tmp:
                    subprocess.run([model, "--machine", cal, "--nodes", str(nodes), "--ppn", str(ppn), "--op", op,
                                    "-b", str(sizes[0]), "-e", str(sizes[-1]), "-f", str(factor), "--algo", "all",
                                    "--in-place", inplace, "--simulate", "off", "--csv", tmp.name],
                                   check=True, stdout=subprocess.DEVNULL)
                    for y in csv.DictReader(open(tmp.name)):
                        price[(op, y["size_bytes"], y["algorithm"], inplace)] = float(y["formula_us"])
                        if y["chosen"] == "1" and inplace == "0":
                            chosen[(op, y["size_bytes"])] = y["algorithm"]
        repriced = [dict(x, model_us=f"{price[k]:.3f}") for k, x in named.items() if k in price]
        for (op, b), algo in chosen.items():
            if (op, b, algo, "0") not in named:  # the round did not time it: the cell has no choice in this round
                print(f"fidelity: round {r} of {shape}: strata-model chooses {algo} for {op} at {b} B, "
                      "which the round did not time", file=sys.stderr)
            for inplace in ("0", "1"):
                if (op, b, algo, inplace) in named:
                    repriced.append(dict(named[(op, b, algo, inplace)], requested="auto",
                                         model_us=f"{price[(op, b, algo, inplace)]:.3f}"))
        with open(f"{dest}/measured_{shape}_{r}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(repriced)
EOF
  echo "$(cd "$(dirname "$model")" && pwd)/strata-model from each round's calibration (the choice its mark, timed by its own rows)" > "$out/repriced/repriced"
  rm -f "$out/repriced/loaded" "$out/repriced/held_rounds"
  [ ! -e "$out/loaded" ] || cp "$out/loaded" "$out/repriced/loaded"
  [ ! -e "$out/held_rounds" ] || cp "$out/held_rounds" "$out/repriced/held_rounds"
  out="$out/repriced"
fi

# The tables of the tuner's choice: every round, or (a third argument) the rounds a file lists.
choice_report() {
python3 - "$@" <<'EOF'
import csv, os, statistics, sys
from collections import defaultdict
out, rounds = sys.argv[1], int(sys.argv[2])
chosenRounds = set(open(sys.argv[3]).read().splitlines()) if len(sys.argv) > 3 else None
def roundsOf(shape):
    return [r for r in range(1, rounds + 1) if chosenRounds is None or f"{shape} {r}" in chosenRounds]
def rows(kind, shape, r):  # kind auto: the tuner's choice; every: each algorithm asked by name
    return [x for x in csv.DictReader(open(f"{out}/measured_{shape}_{r}.csv"))
            if x["inplace"] == "0" and (x["requested"] == "auto") == (kind == "auto")]
def size(b):
    b = int(b)
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
print("| shape | collective | size | tuner's choice | predicted (us) | measured (us) | error | each round's error | rounds' spread | fastest measured | choice / fastest | each round's choice / fastest |")
print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
within15 = total = good = cells = 0
pairedGood = 0  # each round's choice against that round's fastest algorithm
errors = []
pairedWithin = 0  # each round's prediction (its own calibration) against its own measurement
pairedErrors = []
repeat = repeatTotal = 0  # the machine against itself: a round's time within 15% of the other rounds' median
steady = steadyWithin = 0  # cells whose every round repeats the others, and of those predicted within 15%
for shape, label in (("2x1", "2 ranks"), ("8x4", "2x4")):
    auto = defaultdict(list)   # (op, bytes) -> [(algo, model, time)] per round
    every = defaultdict(list)  # (op, bytes, algo) -> [time] per round
    roundChoice = defaultdict(list)  # (op, bytes) -> [the choice's time over the fastest's] per round
    for r in roundsOf(shape):
        chosen, timed = {}, defaultdict(dict)
        for x in rows("auto", shape, r):
            auto[(x["op"], int(x["size_bytes"]))].append((x["algo"], float(x["model_us"]), float(x["time_us"])))
            chosen[(x["op"], int(x["size_bytes"]))] = x["algo"]
        for x in rows("every", shape, r):
            every[(x["op"], int(x["size_bytes"]), x["algo"])].append(float(x["time_us"]))
            timed[(x["op"], int(x["size_bytes"]))][x["algo"]] = float(x["time_us"])
        for k, algo in chosen.items():
            if algo in timed[k]:
                roundChoice[k].append(timed[k][algo] / min(timed[k].values()))
    for (op, b), runs in sorted(auto.items()):
        algos = [a for a, _, _ in runs]
        # The most frequent choice; of several as frequent, the earliest round's (not a set's order,
        # which changes from one Python process to the next).
        choice = max(algos, key=lambda a: (algos.count(a), -algos.index(a)))
        model = statistics.median(m for _, m, _ in runs)
        times_r = [t for _, _, t in runs]
        time = statistics.median(times_r)
        spread = max(times_r) / min(times_r) - 1
        cellRepeats = len(times_r) > 1
        for k, t in enumerate(times_r):
            others = times_r[:k] + times_r[k + 1:]
            if others:
                repeatTotal += 1
                repeats = abs(t / statistics.median(others) - 1) <= 0.15
                repeat += repeats
                cellRepeats &= repeats
        err = model / time - 1
        paired = statistics.median(m / t - 1 for _, m, t in runs)
        pairedErrors.append(abs(paired))
        pairedWithin += abs(paired) <= 0.15
        steady += cellRepeats
        steadyWithin += cellRepeats and abs(err) <= 0.15
        errors.append(abs(err))
        total += 1
        within15 += abs(err) <= 0.15
        times = {a: statistics.median(t) for (o, bb, a), t in every.items() if o == op and bb == b}
        best = min(times, key=times.get)
        ratio = times.get(choice, float("nan")) / times[best]
        pairedRatio = statistics.median(roundChoice[(op, b)]) if roundChoice[(op, b)] else float("nan")
        cells += 1
        good += ratio <= 1.10
        pairedGood += pairedRatio <= 1.10
        print(f"| {label} | {op} | {size(b)} | {choice} | {model:.1f} | {time:.1f} | {100 * err:+.0f}% | {100 * paired:+.0f}% | "
              f"{100 * spread:.0f}% | {best} | {ratio:.2f} | {pairedRatio:.2f} |")
print(f"\npredicted within 15% of measured: {within15} of {total} (median |error| {100 * statistics.median(errors):.1f}%); "
      f"tuner's choice within 10% of the fastest: {good} of {cells}; " +
      (f"{rounds} interleaved rounds" if chosenRounds is None else
       "the rounds held in one placement: " + ", ".join(f"{label} {len(roundsOf(shape))} of {rounds}"
                                                        for shape, label in (("2x1", "2 ranks"), ("8x4", "2x4")))))
print(f"each round's prediction against that round's measurement (the median over the rounds of each round's error): "
      f"within 15% in {pairedWithin} of {total} (median |error| {100 * statistics.median(pairedErrors):.1f}%); "
      f"each round's choice within 10% of that round's fastest (the median over the rounds): {pairedGood} of {cells}")
if repeatTotal:
    print(f"the machine against itself: a round's measured time within 15% of the other rounds' median in "
          f"{repeat} of {repeatTotal} (cell, round) pairs; in the {steady} cells where every round repeats the "
          f"others within 15%, predicted within 15%: {steadyWithin} of {steady}")
# The same calls in place (strata-perf prices each as made: its formula without the copies it then
# leaves out), the tuner's choice of each round against its time.
inPlace = defaultdict(list)  # (shape, op, bytes) -> [(model, time)] per round
for shape in ("2x1", "8x4"):
    for r in roundsOf(shape):
        for x in csv.DictReader(open(f"{out}/measured_{shape}_{r}.csv")):
            if x["inplace"] == "1" and x["requested"] == "auto" and float(x["time_us"]) > 0:
                inPlace[(shape, x["op"], int(x["size_bytes"]))].append((float(x["model_us"]), float(x["time_us"])))
if os.path.exists(f"{out}/loaded"):
    print(f"under background load: {open(f'{out}/loaded').read().strip()}")
if os.path.isfile(f"{out}/repriced"):  # the marker of a re-priced copy (a run re-priced holds the directory)
    print(f"priced again by {open(f'{out}/repriced').read().strip()}")
if inPlace:
    byMedians = [statistics.median(m for m, _ in v) / statistics.median(t for _, t in v) - 1 for v in inPlace.values()]
    byRounds = [statistics.median(m / t - 1 for m, t in v) for v in inPlace.values()]
    print(f"in place, the tuner's choice: predicted within 15% of measured in {sum(abs(e) <= 0.15 for e in byMedians)} of "
          f"{len(byMedians)} (median |error| {100 * statistics.median(abs(e) for e in byMedians):.1f}%), round by round in "
          f"{sum(abs(e) <= 0.15 for e in byRounds)} (median {100 * statistics.median(abs(e) for e in byRounds):.1f}%)")
EOF
}
choice_report "$out" "$rounds" | tee "$out/fidelity.md"
rm -f "$out/fidelity_held.md"
if [ -s "$out/held_rounds" ]; then  # the same over the rounds held in one placement (above)
  choice_report "$out" "$rounds" "$out/held_rounds" > "$out/fidelity_held.md"
  echo
  echo "the rounds held in one placement alone ($out/fidelity_held.md):"
  grep -v '^|' "$out/fidelity_held.md" | sed '/^$/d'
fi

# Every algorithm asked by name, not only the tuner's choice: a candidate priced off can take the
# choice (or lose it) without the choice's own row showing it.
python3 - "$out" "$rounds" <<'EOF' > "$out/fidelity_algorithms.md"
import csv, statistics, sys
from collections import defaultdict
out, rounds = sys.argv[1], int(sys.argv[2])
def size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
print("| shape | collective | size | algorithm | predicted (us) | measured (us) | error | each round's error | rounds' spread |")
print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
summary = []
for shape, label in (("2x1", "2 ranks"), ("8x4", "2x4")):
    every = defaultdict(list)  # (op, bytes, algo) -> [(model, time)] per round
    for r in range(1, rounds + 1):
        for x in csv.DictReader(open(f"{out}/measured_{shape}_{r}.csv")):
            if x["inplace"] == "0" and x["requested"] != "auto":
                every[(x["op"], int(x["size_bytes"]), x["algo"])].append((float(x["model_us"]), float(x["time_us"])))
    within = pairedWithin = 0
    absErrors, pairedErrors = [], []
    for (op, b, algo), runs in sorted(every.items()):
        model = statistics.median(m for m, _ in runs)
        times = [t for _, t in runs]
        time = statistics.median(times)
        err = model / time - 1
        paired = statistics.median(m / t - 1 for m, t in runs)
        absErrors.append(abs(err))
        pairedErrors.append(abs(paired))
        within += abs(err) <= 0.15
        pairedWithin += abs(paired) <= 0.15
        print(f"| {label} | {op} | {size(b)} | {algo} | {model:.1f} | {time:.1f} | {100 * err:+.0f}% | {100 * paired:+.0f}% | "
              f"{100 * (max(times) / min(times) - 1):.0f}% |")
    if absErrors:
        summary.append(f"{label}: {within} of {len(absErrors)} within 15% (median |error| "
                       f"{100 * statistics.median(absErrors):.1f}%), each round against its own {pairedWithin} "
                       f"(median {100 * statistics.median(pairedErrors):.1f}%)")
print("\nevery algorithm, predicted within 15% of measured: " + "; ".join(summary))
EOF
tail -n 1 "$out/fidelity_algorithms.md"

# The machine against itself across runs: each cell's median over this run's rounds against the
# same cell's median over the other run's (as many rounds as it stored), the tuner's choice and
# every algorithm apart.
[ -z "$against" ] || python3 - "$out" "$rounds" "$against" <<'EOF' | tee "$out/fidelity_against.md"
import csv, glob, os, statistics, sys
from collections import defaultdict
out, rounds, other = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def medians(d, shape, n, auto):
    cells = defaultdict(list)
    for r in range(1, n + 1):
        for x in csv.DictReader(open(f"{d}/measured_{shape}_{r}.csv")):
            if x["inplace"] == "0" and (x["requested"] == "auto") == auto:
                cells[(x["op"], x["size_bytes"], "" if auto else x["algo"])].append(float(x["time_us"]))
    return {k: statistics.median(v) for k, v in cells.items()}
parts = []
for auto, what in ((True, "the tuner's choice"), (False, "every algorithm")):
    for shape, label in (("2x1", "2 ranks"), ("8x4", "2x4")):
        otherRounds = len(glob.glob(f"{other}/measured_{shape}_*.csv"))
        if otherRounds == 0:
            continue
        a, b = medians(out, shape, rounds, auto), medians(other, shape, otherRounds, auto)
        keys = [k for k in a if k in b]
        same = sum(abs(a[k] / b[k] - 1) <= 0.15 for k in keys)
        parts.append(f"{what}, {label}: {same} of {len(keys)}")
print(f"measured medians within 15% of those of {other}: " + "; ".join(parts))
EOF
