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
# mpi4py's test suite through the MPI face (tests/mpi4py) builds mpi4py with Debian's Python.
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
ls /usr/include/python3*/Python.h >/dev/null 2>&1 || missing+=(python3-dev)
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
# With a GPU the device tier runs on it; without one, the same CUDA sources are built against the
# CUDA simulator (tests/cuda_sim) and the device tier runs there.
jobs=$(nproc 2>/dev/null || echo 2)
have_nvcc=0
command -v nvcc >/dev/null && have_nvcc=1
sim=OFF
if [ "$have_nvcc" -eq 1 ] && ! { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }; then sim=ON; fi
if [ ! -f build/CMakeCache.txt ]; then
  log "configuring (preset 'default', build/, CUDA simulator $sim)"
  cmake --preset default -DSTRATA_CUDA_SIM=$sim >/dev/null
else
  cmake build -DSTRATA_CUDA_SIM=$sim >/dev/null
fi
log "building with $jobs jobs"
cmake --build --preset default -j "$jobs"

# The build a GPU user gets: the same sources through nvcc for STRATA_CUDA_ARCHITECTURES, so the
# simulated and the real build stay green together (compiled here, run where there is a GPU).
if [ "$sim" = ON ] && [ "${STRATA_SKIP_NVCC_BUILD:-0}" != 1 ]; then
  if [ ! -f build-cuda/CMakeCache.txt ]; then
    log "configuring the nvcc build (build-cuda/)"
    cmake --preset default -B build-cuda -DSTRATA_CUDA_SIM=OFF -DSTRATA_BUILD_PERF=OFF >/dev/null
  fi
  log "building the library and the GPU tests with nvcc"
  cmake --build build-cuda -j "$jobs" --target strata strata_gpu_kernel_tests strata_gpu_collectives_test
  nvcc_built=1
fi

[ "$run_tests" -eq 1 ] || exit 0

# ---- 3. Test ------------------------------------------------------------------------------
log "running the tests"
start=$(date +%s)
ctest --preset default -j "$jobs" "${ctest_args[@]}"
log "ctest passed in $(( $(date +%s) - start )) s"

# ---- 3b. What the compiler made of the kernels ---------------------------------------------------
# Registers, spills, resident blocks and the width of the vector loops' loads and stores, read from
# the nvcc build's objects (tests/compiler; cuobjdump and nvdisasm fetched once from the Python
# registry when the toolkit lacks them). Only in a full run.
if [ ${#ctest_args[@]} -eq 0 ] && [ "${nvcc_built:-0}" = 1 ]; then
  log "checking the compiled kernels (build-cuda/)"
  ctest --test-dir build-cuda -L compiler --output-on-failure
fi

# ---- 4. A third-party suite through the MPI face -------------------------------------------
# mpi4py's collective tests with and without libstrata_mpi.so (built once per machine, then
# reused). Only in a full run; STRATA_SKIP_MPI4PY=1 skips it.
if [ ${#ctest_args[@]} -eq 0 ] && [ "${STRATA_SKIP_MPI4PY:-0}" != 1 ]; then
  log "running mpi4py's collective tests through the MPI face"
  tests/mpi4py/mpi4py_suite.sh build
fi
# ---- 5. The sanitizer tier ------------------------------------------------------------------
# AddressSanitizer and UndefinedBehaviorSanitizer (preset asan: a static library without the CUDA
# path, so this also installs and links a static libstrata from outside) over the unit tests and a
# subset of the MPI matrix; any report fails the run. Only in a full run; STRATA_SKIP_SANITIZERS=1
# skips it.
if [ ${#ctest_args[@]} -eq 0 ] && [ "${STRATA_SKIP_SANITIZERS:-0}" != 1 ]; then
  log "the sanitizer tier (build-asan/)"
  [ -f build-asan/CMakeCache.txt ] || cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs" --target strata strata_unit_tests strata_mpi_collectives_test \
        strata_mpi_negative_test
  ctest --preset asan -L sanitizer -j "$jobs"
fi
log "all tests passed in $(( $(date +%s) - start )) s"
