#!/usr/bin/env bash
# The MPI face against the MPI library, in one process: strata-perf under
# LD_PRELOAD=libstrata_mpi.so with --impl mpi,pmpi, where "mpi" calls MPI_Allreduce etc. (the face's,
# since it is preloaded) and "pmpi" calls PMPI_Allreduce etc. (always the MPI library's own). The
# two are interleaved iteration by iteration, so each ratio compares calls made microseconds apart.
# Allreduce, broadcast, allgather, alltoall and reduce-scatter, on 2 ranks (one node) and on 8 ranks
# as 2 virtual nodes of 4, each run REPEATS times (default 3); the ratio column is MPI's median
# time over the face's (above 1: the face is faster).
#
#   perf/face_bench.sh BUILD_DIR [OUTDIR]       (OUTDIR: logs and CSV, default BUILD_DIR/face_bench)
#
# Environment: FACE_BENCH_REPEATS, FACE_BENCH_MAXBYTES (default 16M), FACE_BENCH_NATIVE (default 1:
# the face may hand a call to the MPI library when its model expects that to be faster, as it does
# for a program; 0: Strata's own algorithms only).
set -euo pipefail
build=$(cd "${1:?usage: face_bench.sh BUILD_DIR [OUTDIR]}" && pwd)
out=${2:-$build/face_bench}
mkdir -p "$out"
perf="$build/perf/strata-perf"
face="$build/src/libstrata_mpi.so"
for f in "$perf" "$face"; do [ -e "$f" ] || { echo "face_bench: $f is not built" >&2; exit 1; }; done
repeats=${FACE_BENCH_REPEATS:-3}
maxbytes=${FACE_BENCH_MAXBYTES:-16M}
native=${FACE_BENCH_NATIVE:-1}
ops=allreduce,broadcast,allgather,alltoall,reducescatter
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

echo "# MPI face against the MPI library: $(uname -n), $(nproc) cores, $(mpirun --version 2>&1 | head -1)"
echo "# strata-perf --impl mpi,pmpi under LD_PRELOAD=$face (STRATA_MPI_NATIVE=$native), -b 8 -e $maxbytes -f 8,"
echo "# after strata-perf --calibrate on the same ranks (STRATA_TOPO_FILE)"
for spec in 2: 8:4; do
  np=${spec%%:*} shape=${spec#*:}
  env=(-x LD_PRELOAD="$face" -x STRATA_MPI_NATIVE="$native" -x STRATA_DEBUG=INFO)
  [ -n "$shape" ] && env+=(-x STRATA_RANKS_PER_NODE="$shape")
  label="np$np${shape:+-nodes$shape}"
  # Calibrate first (without the face): the face prices the MPI library's own collectives from the
  # times measured here and hands a call to it where that is expected to be faster.
  topo="$out/$label-topo.txt"
  mpiexec -n "$np" --oversubscribe ${shape:+-x STRATA_RANKS_PER_NODE="$shape"} "$perf" --calibrate "$topo" -b 0 -e 0 \
    >"$out/$label-calibration.log" 2>&1 || { tail -n 30 "$out/$label-calibration.log" >&2; exit 1; }
  env+=(-x STRATA_TOPO_FILE="$topo")
  for k in $(seq 1 "$repeats"); do
    log="$out/$label-run$k.log"
    mpiexec -n "$np" --oversubscribe "${env[@]}" "$perf" --op "$ops" --impl mpi,pmpi -b 8 -e "$maxbytes" -f 8 \
      -n 20 -w 5 --csv "$out/$label-run$k.csv" >"$log" 2>"$log.err" || {
      tail -n 30 "$log" "$log.err" >&2
      echo "face_bench: run $k on $np ranks failed" >&2
      exit 1
    }
  done
  echo "#"
  echo "# $np ranks${shape:+, nodes of $shape}: medians over $repeats runs of each run's median (out of place)"
  echo "# what the face did (rank 0, last run):"
  grep '\[strata-mpi\] rank 0 ' "$out/$label-run$repeats.log.err" | sed 's/^/#   /' || true
  # One row per (op, size): the face's and MPI's times, medians over the runs, and their ratio.
  python3 - "$out" "$label" "$repeats" <<'EOF'
import csv, statistics, sys
out, label, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
times = {}
for k in range(1, repeats + 1):
    with open(f"{out}/{label}-run{k}.csv") as f:
        for row in csv.DictReader(f):
            if row["inplace"] != "0" or float(row["time_us"]) <= 0:
                continue
            times.setdefault((row["op"], int(row["size_bytes"])), {}).setdefault(row["impl"], []).append(float(row["time_us"]))
print(f"#  {'op':<14} {'size(B)':>10}  {'face(us)':>10} {'mpi(us)':>10}  {'ratio':>6}   ratio per run")
for (op, size), t in sorted(times.items()):
    if "mpi" not in t or "pmpi" not in t:
        continue
    face, mpi = statistics.median(t["mpi"]), statistics.median(t["pmpi"])
    per_run = " ".join(f"{p / f:.2f}" for f, p in zip(t["mpi"], t["pmpi"]))
    print(f"   {op:<14} {size:>10}  {face:>10.2f} {mpi:>10.2f}  {mpi / face:>5.2f}x   {per_run}")
EOF
done
