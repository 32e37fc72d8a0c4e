#!/bin/sh
# Runs an MPI program on NP ranks through the MPI face (LD_PRELOAD of libstrata_mpi.so), then checks
# that it exited 0, that the face destroyed every Strata communicator it made, and that it served the
# listed collectives (its STRATA_DEBUG=INFO counts, printed at MPI_Finalize, show at least one call
# served by Strata for each).
#   run_face_test.sh MPIEXEC NP FACE_LIB "COLLECTIVES" PROGRAM [ARGS...]
# FACE_LIB "none" runs the program without the face (the same program, the same results);
# COLLECTIVES "-" expects none.
set -u
mpiexec=$1 np=$2 face=$3 expect=$4
shift 4
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ "$face" = none ]; then
  "$mpiexec" -n "$np" --oversubscribe "$@" 2>"$log"
else
  "$mpiexec" -n "$np" --oversubscribe -x LD_PRELOAD="$face" -x STRATA_DEBUG=INFO "$@" 2>"$log"
fi
rc=$?
grep '\[strata-mpi\] rank 0 ' "$log" || true
if [ $rc -ne 0 ]; then
  cat "$log" >&2
  echo "run_face_test: the program failed (exit $rc)" >&2
  exit 1
fi
if grep -q '\[strata-mpi\] freeing an MPI communicator' "$log"; then
  cat "$log" >&2
  echo "run_face_test: the face failed to destroy a Strata communicator" >&2
  exit 1
fi
[ "$expect" = - ] && expect=""
for c in $expect; do
  if ! grep -Eq "\[strata-mpi\] rank [0-9]+ $c: [1-9][0-9]* served" "$log"; then
    echo "run_face_test: no $c call was served by Strata" >&2
    exit 1
  fi
done
exit 0
