#!/usr/bin/env bash
# Strata's demo: the same set-up as scripts/test.sh, then strata-perf on 8 local MPI ranks
# arranged as 2 virtual nodes of 4, host memory, allreduce from 8 B to 64 MiB, Strata against the
# MPI library's own MPI_Allreduce in the same run. Prints the nccl-tests-style tables, the
# comparison and the footer, and writes CSV to build/demo/allreduce.csv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/test.sh --no-test
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p build/demo
oversubscribe=()
mpiexec --version 2>/dev/null | grep -qE "Open MPI|OpenRTE" && oversubscribe=(--oversubscribe)
export STRATA_RANKS_PER_NODE=4
exec mpiexec -n 8 "${oversubscribe[@]}" build/perf/strata-perf \
  -b 8 -e 64M -f 2 -n 20 -w 5 --op allreduce --impl strata,mpi --mem host \
  --csv build/demo/allreduce.csv "$@"
