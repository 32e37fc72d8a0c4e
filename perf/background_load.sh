#!/usr/bin/env bash
# Strata's allreduce against the MPI library's on 2 ranks, on an idle machine and with one CPU-bound
# process per core at nice 19 in the background, in runs that alternate (idle, loaded, loaded with
# the old yield-early wait, idle, ...): strata-perf --impl strata,pmpi, each run interleaving the two
# implementations iteration by iteration. The third setting, STRATA_WAIT_SPIN_US=1, yields the core
# after about a microsecond, as the node team's waits did before they spun by time
# (kernels/common/bounded_wait.h): it shows what the spin policy is worth under load.
#
#   perf/background_load.sh BUILD_DIR [OUTDIR]        (BACKGROUND_REPEATS, default 5)
set -euo pipefail
build=$(cd "${1:?usage: background_load.sh BUILD_DIR [OUTDIR]}" && pwd)
out=${2:-$build/background_load}
mkdir -p "$out"
perf="$build/perf/strata-perf"
[ -x "$perf" ] || { echo "background_load: $perf is not built" >&2; exit 1; }
repeats=${BACKGROUND_REPEATS:-5}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

source "$(dirname "${BASH_SOURCE[0]}")/cpu_load.sh"
trap stop_load EXIT

run() {  # label k [env...]
  local label=$1 k=$2
  shift 2
  mpiexec -n 2 "$@" "$perf" --op allreduce --impl strata,pmpi -b 8 -e 16M -f 4 -n 40 -w 10 \
    --csv "$out/$label-run$k.csv" >"$out/$label-run$k.log" 2>&1 || { tail -n 20 "$out/$label-run$k.log" >&2; exit 1; }
}

echo "# 2-rank float allreduce, strata-perf --impl strata,pmpi: $(uname -n), $(nproc) cores, $(mpirun --version 2>&1 | head -1)"
echo "# background load: $(nproc) x 'nice -n 19 sh -c while :; do :; done'; $repeats runs of each setting, alternating"
for k in $(seq 1 "$repeats"); do
  run idle "$k"
  start_load
  run loaded "$k"
  run loaded-yield-early "$k" -x STRATA_WAIT_SPIN_US=1
  stop_load
done

python3 - "$out" "$repeats" <<'EOF'
import csv, statistics, sys
out, repeats = sys.argv[1], int(sys.argv[2])
labels = ["idle", "loaded", "loaded-yield-early"]
ratio = {}   # (label, size) -> [ratio per run]
for label in labels:
    for k in range(1, repeats + 1):
        t = {}
        with open(f"{out}/{label}-run{k}.csv") as f:
            for row in csv.DictReader(f):
                if row["inplace"] == "0":
                    t[(row["impl"], int(row["size_bytes"]))] = float(row["time_us"])
        for (impl, size), us in t.items():
            if impl == "strata" and ("pmpi", size) in t:
                ratio.setdefault((label, size), []).append(t[("pmpi", size)] / us)
sizes = sorted({s for (_, s) in ratio})
print("# ratio = MPI_Allreduce time / Strata time, medians over the runs (out of place); above 1: Strata is faster")
print(f"#  {'size(B)':>10}  " + "  ".join(f"{l:>20}" for l in labels))
for s in sizes:
    print(f"   {s:>10}  " + "  ".join(f"{statistics.median(ratio[(l, s)]):>19.2f}x" for l in labels))
worst = {l: min(statistics.median(ratio[(l, s)]) for s in sizes) for l in labels}
print("#  lowest: " + ", ".join(f"{l} {w:.2f}x" for l, w in worst.items()))
EOF
