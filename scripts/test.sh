#!/usr/bin/env bash
# Strata's test command: installs what is missing (Open MPI from Debian), configures, builds
# incrementally and runs every test through ctest. Exits non-zero on any failure.
#
#   scripts/test.sh              set up, build, run all tests
#   scripts/test.sh --no-test    set up and build only (scripts/demo.sh uses this)
#   scripts/test.sh -L unit      extra arguments go to ctest (here: only the unit tests)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

run_tests=1
ctest_args=()
for arg in "$@"; do
  case "$arg" in
    --no-test) run_tests=0 ;;
    *) ctest_args+=("$arg") ;;
  esac
done

log() { printf '[strata] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

# ---- 1. What the build needs --------------------------------------------------------------
missing=()
command -v mpicc >/dev/null && command -v mpiexec >/dev/null || missing+=(openmpi-bin libopenmpi-dev)
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v pkg-config >/dev/null || missing+=(pkg-config)
[ -e /usr/include/gtest/gtest.h ] || [ -e /usr/local/include/gtest/gtest.h ] || missing+=(libgtest-dev)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Open MPI refuses to run as root unless told; the tests and the demo run as whoever calls this.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# CUDA toolkit: optional; the build finds nvcc on PATH or in /usr/local/cuda.
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"

# ---- 2. Configure and build (incremental) -------------------------------------------------
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build/CMakeCache.txt ]; then
  log "configuring (preset 'default', build/)"
  cmake --preset default >/dev/null
fi
log "building with $jobs jobs"
cmake --build --preset default -j "$jobs"

[ "$run_tests" -eq 1 ] || exit 0

# ---- 3. Test ------------------------------------------------------------------------------
log "running the tests"
start=$(date +%s)
ctest --preset default -j "$jobs" "${ctest_args[@]}"
log "all tests passed in $(( $(date +%s) - start )) s"
