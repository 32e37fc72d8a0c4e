#!/usr/bin/env bash
# The GPU suite, for a machine with a CUDA device, the CUDA toolkit and CMake. Everything else it
# brings along: Open MPI from `.mpi/` (the developers' relocatable Open MPI: `source .mpi/env.sh`
# is done here when .mpi/ exists) and GoogleTest from `.deps/` (perf/device_deps.sh), built here;
# Ninja when present, else Makefiles. Writes logs and tables into OUTDIR.
#
#   perf/device_suite.sh OUTDIR [build|test|bench|all]     (default all)
#
# Each phase ends well inside 10 minutes on an H100 node's host; run them as separate commands
# where one command is limited to 10 minutes. `build` is incremental.
set -uo pipefail
out=${1:?usage: perf/device_suite.sh OUTDIR [build|test|bench|all]}
phase=${2:-all}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# shellcheck disable=SC1091
[ -f .mpi/env.sh ] && source .mpi/env.sh
log() { printf '[device-suite] %s\n' "$*" | tee -a "$out/summary.txt"; }
status=0
build=build-device

phase_build() {
  nvidia-smi -L > "$out/gpu.txt" 2>&1 || true
  log "GPU: $(head -1 "$out/gpu.txt")"
  command -v mpiexec >/dev/null || { log "no mpiexec: prepare .mpi/ (see this script's header)"; return 1; }
  # GoogleTest: the system's, or built from the carried Debian package's sources.
  local gtest_args=()
  if [ ! -e /usr/include/gtest/gtest.h ] && [ ! -e /usr/local/include/gtest/gtest.h ]; then
    local deb
    deb=$(ls .deps/googletest_*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || { log "no GoogleTest: run perf/device_deps.sh fetch .deps where a registry is reachable"; return 1; }
    if [ ! -f "$build/gtest-install/lib/cmake/GTest/GTestConfig.cmake" ]; then
      mkdir -p "$build/gtest-src" && dpkg -x "$deb" "$build/gtest-src"
      cmake -S "$build/gtest-src/usr/src/googletest" -B "$build/gtest-build" -DCMAKE_BUILD_TYPE=Release \
            -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX="$PWD/$build/gtest-install" > "$out/gtest.log" 2>&1 &&
        cmake --build "$build/gtest-build" -j "$(nproc)" --target install >> "$out/gtest.log" 2>&1 ||
        { log "GoogleTest build FAILED (see gtest.log)"; return 1; }
    fi
    gtest_args=(-DGTest_DIR="$PWD/$build/gtest-install/lib/cmake/GTest")
  fi
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # One architecture: the device's own.
  local arch
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
  arch=${arch:-90}
  local start
  start=$(date +%s)
  if ! { cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSTRATA_ENABLE_CUDA=ON \
           -DSTRATA_CUDA_SIM=OFF -DSTRATA_CUDA_ARCHITECTURES="$arch" "${gtest_args[@]}" > "$out/configure.log" 2>&1 &&
         cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1; }; then
    log "build FAILED (see build.log)"; tail -30 "$out/build.log"; return 1
  fi
  log "built for sm_$arch in $(( $(date +%s) - start )) s"
}

phase_test() {
  if (cd "$build" && ctest -L gpu --output-on-failure --timeout 300 > "$out/gpu_tests.log" 2>&1); then
    log "GPU tests passed: $(grep -c 'Passed' "$out/gpu_tests.log") tests"
  else
    log "GPU tests FAILED (see gpu_tests.log)"; status=1
  fi
  grep -E "Passed|Failed|Skipped|\*\*\*" "$out/gpu_tests.log" | tee -a "$out/summary.txt"
}

phase_bench() {
  local perf=$build/perf/strata-perf kb=$build/perf/strata-kernel-bench
  # Kernel bandwidth against cudaMemcpy.
  $kb --bytes 256M --inputs 2,3,4,8 --types float,bfloat16 > "$out/kernels.txt" 2>&1 || status=1
  tee -a "$out/summary.txt" < "$out/kernels.txt"
  # Allreduce on device buffers, 2 and 4 ranks on the one GPU.
  for np in 2 4; do
    mpiexec -n $np $perf --mem device --op allreduce --impl strata,mpi,nccl -b 1M -e 256M -f 4 -n 10 -w 3 \
        --csv "$out/allreduce_np$np.csv" > "$out/allreduce_np$np.txt" 2>&1 || status=1
    grep -E "^#  allreduce|bound|not run" "$out/allreduce_np$np.txt" | tee -a "$out/summary.txt"
  done
  # Staged lanes: 2 virtual nodes on one GPU, non-CUDA-aware MPI.
  STRATA_RANKS_PER_NODE=1 STRATA_CUDA_AWARE_MPI=0 mpiexec -n 2 $perf --mem device --op allreduce --impl strata,mpi \
      -b 1M -e 64M -f 4 -n 10 -w 3 > "$out/staged_2nodes.txt" 2>&1 || status=1
  grep -E "^#  allreduce" "$out/staged_2nodes.txt" | tee -a "$out/summary.txt"
}

start=$(date +%s)
case "$phase" in
  build) phase_build || exit 1 ;;
  test) phase_test ;;
  bench) phase_bench ;;
  all) phase_build || exit 1; phase_test; phase_bench ;;
  *) echo "unknown phase $phase (build, test, bench, all)" >&2; exit 2 ;;
esac
log "$phase done in $(( $(date +%s) - start )) s, status $status"
exit $status
