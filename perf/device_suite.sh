#!/usr/bin/env bash
# The GPU suite, for a machine with a CUDA device, the CUDA toolkit and CMake (Open MPI on PATH,
# e.g. from unpacked Debian packages: `source .mpi/env.sh` first). Builds, runs the GPU tests with
# 1, 2 and 4 ranks on one GPU and with 2 virtual nodes, then the benchmarks, writing logs and
# tables into OUTDIR. Meant to finish within 10 minutes on an H100.
#
#   perf/device_suite.sh OUTDIR
set -uo pipefail
out=${1:?usage: perf/device_suite.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
log() { printf '[device-suite] %s\n' "$*" | tee -a "$out/summary.txt"; }
status=0

nvidia-smi -L > "$out/gpu.txt" 2>&1 || true
log "GPU: $(head -1 "$out/gpu.txt")"

# ---- Build (all cores; one architecture: the device's own) ----------------------------------
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
arch=${arch:-90}
start=$(date +%s)
if ! { cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_ENABLE_CUDA=ON \
         -DSTRATA_CUDA_ARCHITECTURES="$arch" > "$out/configure.log" 2>&1 &&
       cmake --build build-device -j "$(nproc)" > "$out/build.log" 2>&1; }; then
  log "build FAILED (see build.log)"; tail -30 "$out/build.log"; exit 1
fi
log "built for sm_$arch in $(( $(date +%s) - start )) s"

# ---- GPU tests ---------------------------------------------------------------------------------
if (cd build-device && ctest -L gpu --output-on-failure --timeout 300 > "$out/gpu_tests.log" 2>&1); then
  log "GPU tests passed: $(grep -c 'Passed' "$out/gpu_tests.log") tests"
else
  log "GPU tests FAILED (see gpu_tests.log)"; status=1
fi
grep -E "Passed|Failed|Skipped|\*\*\*" "$out/gpu_tests.log" | tee -a "$out/summary.txt"

perf=build-device/perf/strata-perf
kb=build-device/perf/strata-kernel-bench

# ---- Kernel bandwidth against cudaMemcpy -------------------------------------------------------
$kb --bytes 256M --inputs 2,3,4,8 --types float,bfloat16 > "$out/kernels.txt" 2>&1 || status=1
cat "$out/kernels.txt" | tee -a "$out/summary.txt"

# ---- Allreduce on device buffers, 2 and 4 ranks on the one GPU ---------------------------------
for np in 2 4; do
  mpiexec -n $np $perf --mem device --op allreduce --impl strata,mpi,nccl -b 1M -e 256M -f 4 -n 10 -w 3 \
      --csv "$out/allreduce_np$np.csv" > "$out/allreduce_np$np.txt" 2>&1 || status=1
  grep -E "^#  allreduce|bound|not run" "$out/allreduce_np$np.txt" | tee -a "$out/summary.txt"
done

# ---- Staged lanes: 2 virtual nodes on one GPU, non-CUDA-aware MPI ------------------------------
STRATA_RANKS_PER_NODE=1 STRATA_CUDA_AWARE_MPI=0 mpiexec -n 2 $perf --mem device --op allreduce --impl strata,mpi \
    -b 1M -e 64M -f 4 -n 10 -w 3 > "$out/staged_2nodes.txt" 2>&1 || status=1
grep -E "^#  allreduce" "$out/staged_2nodes.txt" | tee -a "$out/summary.txt"

log "done in $(( $(date +%s) - start )) s, status $status"
exit $status
