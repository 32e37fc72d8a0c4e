#!/usr/bin/env bash
# Strata's demo: the same set-up as scripts/test.sh, then strata-perf on 8 local MPI ranks
# arranged as 2 virtual nodes of 4, host memory, float allreduce from 16 B to 64 MiB:
#   1. --calibrate measures the node, lane and flat levels and writes build/demo/topo.txt (the
#      cost parameters the tuner reads through STRATA_TOPO_FILE);
#   2. the benchmark then runs, interleaved at every size, strata's automatic choice ("auto"), a
#      flat algorithm over MPI (rabenseifner), the hierarchical full-lane composition (node
#      reduce-scatter, lane allreduce, node allgather) and the MPI library's own MPI_Allreduce.
# Prints the nccl-tests-style tables, the comparison (ratios and the model's error) and writes
# CSV to build/demo/allreduce.csv. Extra arguments go to strata-perf.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/test.sh --no-test
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p build/demo
oversubscribe=()
mpiexec --version 2>/dev/null | grep -qE "Open MPI|OpenRTE" && oversubscribe=(--oversubscribe)
export STRATA_RANKS_PER_NODE=4
exec mpiexec -n 8 "${oversubscribe[@]}" build/perf/strata-perf \
  --calibrate build/demo/topo.txt \
  -b 16 -e 64M -f 4 -n 20 -w 5 --op allreduce --mem host \
  --impl strata,mpi --algo auto,rabenseifner,fulllane \
  --csv build/demo/allreduce.csv "$@"
