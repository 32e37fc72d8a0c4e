#!/usr/bin/env bash
# mpi4py's own collective tests through the MPI face: a test suite nobody on this project wrote,
# run with and without libstrata_mpi.so preloaded on 1, 2, 3, 4, 5 and 8 ranks (virtual node shapes
# on 4 and 8). Both runs must pass, and the face's counts must show Strata served the collectives
# the tests call.
#
#   tests/mpi4py/mpi4py_suite.sh BUILD_DIR        (scripts/test.sh runs it after ctest)
#
# mpi4py is built once per machine from its source package (PyPI), against the system's Open MPI,
# into ${STRATA_CACHE:-~/.cache/strata}/mpi4py-VERSION; later runs reuse it. Its extension is one
# Cython-generated C file that takes some 6 minutes to optimise on 2 cores and 35 s to compile at -O0;
# the tests time nothing and the interpreter dominates their run, so it is built at -O0.
#
# The test files: test_cco_buf (every buffer collective: types, ops, sizes, roots, in place),
# test_cco_vec (the v-variants, with counts and displacements), test_cco_obj (the pickle-based
# object collectives, which move bytes through MPI_Bcast, MPI_Gather(v), MPI_Scatter(v),
# MPI_Allgather(v) and MPI_Alltoall(v)) and test_cco_buf_inter (intercommunicators: the face must
# pass them to MPI unchanged). The nonblocking, persistent and neighbourhood collectives are not
# intercepted, so their files would test nothing of the face.
set -euo pipefail
build=$(cd "${1:?usage: mpi4py_suite.sh BUILD_DIR}" && pwd)
face="$build/src/libstrata_mpi.so"
[ -f "$face" ] || { echo "mpi4py_suite: $face not built" >&2; exit 1; }

version=4.1.2
sha256=56860286dc45f20e8821e93cb06669e30462348bf866f685553fa4b712d58d02
url=https://files.pythonhosted.org/packages/75/83/231445bbcf7ef10864746c244ff2d82000011449b79275642c5d4ed8c8f4/mpi4py-$version.tar.gz
cache="${STRATA_CACHE:-$HOME/.cache/strata}/mpi4py-$version"
python=/usr/bin/python3  # Debian's, with its venv and headers (scripts/test.sh installs them)
log() { printf '[mpi4py] %s\n' "$*"; }

if [ ! -f "$cache/.built" ]; then
  log "building mpi4py $version from source into $cache (once per machine)"
  rm -rf "$cache" && mkdir -p "$cache"
  "$python" - "$url" "$sha256" "$cache/mpi4py.tar.gz" <<'EOF'
import hashlib, sys, urllib.request
url, digest, out = sys.argv[1:]
data = urllib.request.urlopen(url, timeout=120).read()
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit("mpi4py source package: sha256 mismatch")
open(out, "wb").write(data)
EOF
  tar -xzf "$cache/mpi4py.tar.gz" -C "$cache"
  "$python" -m venv "$cache/venv"
  MPICC=mpicc CFLAGS="-O0 -g0" "$cache/venv/bin/pip" install --quiet --no-binary mpi4py "$cache/mpi4py-$version"
  touch "$cache/.built"
fi
py="$cache/venv/bin/python"
tests="$cache/mpi4py-$version/test"

# The preload takes effect only if mpi4py calls MPI's collectives through the dynamic linker.
ext=$("$py" -c 'import mpi4py.MPI as m; print(m.__file__)')
imports=$(nm -D --undefined-only "$ext")  # captured first: grep -q closing a pipe early fails under pipefail
for sym in MPI_Allreduce MPI_Bcast MPI_Alltoallv; do
  if ! grep -qw "$sym" <<<"$imports"; then
    echo "mpi4py_suite: $ext does not import $sym dynamically: LD_PRELOAD would not reach it" >&2
    exit 1
  fi
done

files=(test_cco_buf test_cco_vec test_cco_obj test_cco_buf_inter)
served="allreduce bcast reduce allgather allgatherv reduce_scatter_block reduce_scatter alltoall alltoallv gather gatherv scatter scatterv scan exscan barrier"
status=0
for spec in 1: 2: 3: 4:2 5: 8:3,5; do
  np=${spec%%:*} shape=${spec#*:}
  env=(-x OMPI_ALLOW_RUN_AS_ROOT=1 -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  [ -n "$shape" ] && env+=(-x STRATA_RANKS_PER_NODE="$shape")
  run() {  # label, extra mpiexec arguments...
    local label=$1 out
    shift
    out=$(mktemp)
    if ! (cd "$tests" && timeout 600 mpiexec -n "$np" --oversubscribe "${env[@]}" "$@" "$py" main.py -q "${files[@]}") \
      >"$out" 2>&1; then
      tail -n 40 "$out" >&2
      log "FAILED: $np ranks ${shape:+(nodes $shape) }$label"
      status=1
    else
      log "passed: $np ranks ${shape:+(nodes $shape) }$label"
    fi
    cat "$out" >"$cache/last-$np-$label.log"
    rm -f "$out"
  }
  run without-face
  run face -x LD_PRELOAD="$face" -x STRATA_MPI_NATIVE=0 -x STRATA_DEBUG=INFO
  log "$(grep -c 'served by Strata' "$cache/last-$np-face.log" || true) counts; rank 0:"
  grep '\[strata-mpi\] rank 0 ' "$cache/last-$np-face.log" | sed 's/^/    /' || true
  for c in $served; do
    if ! grep -Eq "\[strata-mpi\] rank [0-9]+ $c: [1-9][0-9]* served" "$cache/last-$np-face.log"; then
      log "FAILED: on $np ranks Strata served no $c call"
      status=1
    fi
  done
done
exit $status
