#!/usr/bin/env bash
# The GPU suite, for a machine with a CUDA device, the CUDA toolkit and CMake. Everything else it
# brings along: Open MPI from `.mpi/` (the developers' relocatable Open MPI: `source .mpi/env.sh`
# is done here when .mpi/ exists) and GoogleTest from `.deps/` (perf/device_deps.sh), built here;
# Ninja when present, else Makefiles. NCCL (the baseline) from the toolkit, NCCL_HOME, or the
# image's Python package nvidia-nccl. Writes logs and tables into OUTDIR, and OUTDIR/suite.tgz
# with all of them.
#
#   perf/device_suite.sh OUTDIR [build|test|bench|sanitize|all]     (default all)
#
# `all` runs each phase in its own process group and ends it, with everything it started, at its
# limit in seconds (STRATA_SUITE_LIMITS, default "build=150 test=260 bench=90 sanitize=70": ten
# minutes, inside a 15-minute lease with the machine's start), so a lease of a few minutes gets
# every phase's results even where one phase hangs (the sixth lease: build 91 s, test 235 s before
# the watchdog tests' 2 s timeouts in ten configurations, sanitize clean inside 50 s). `build` is
# incremental.
set -uo pipefail
usage="usage: perf/device_suite.sh OUTDIR [build|test|bench|sanitize|all]"
out=${1:?$usage}
phase=${2:-all}
script=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# shellcheck disable=SC1091
[ -f .mpi/env.sh ] && source .mpi/env.sh
# NCCL: where neither the toolkit nor NCCL_HOME has it, the image's Python package may.
if [ -z "${NCCL_HOME:-}" ] && ! ls /usr/local/cuda/include/nccl.h >/dev/null 2>&1; then
  nccl_py=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null ||
            python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null) &&
    [ -f "$nccl_py/include/nccl.h" ] && export NCCL_HOME=$nccl_py
fi
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
  log "built for sm_$arch in $(( $(date +%s) - start )) s ($(grep -o 'NCCL baseline [A-Z]*' "$out/configure.log"))"
}

phase_test() {
  # Every rank shares the GPU. The short tests four at a time; the MPI matrix's (up to minutes each)
  # last, so a phase ended at its limit has the others' results, and on 8 of the cores (ctest keeps
  # the ranks of the tests at once within -j): at -j 4 its 1, 2, 3, 8 and 4-rank tests ran nearly one
  # after another and the fifth did not finish inside the fourth session's 167 s. Its 8-rank test
  # (27 s) first and alone, since it needs all 8 places: after the others it started at the
  # fifth session's limit, behind the 2-rank test's 120 s.
  local part rc=0 jobs
  for part in "-E matrix" "-R matrix_np8" "-R matrix -E matrix_np8"; do
    jobs=4
    [ "$part" != "-E matrix" ] && jobs=8
    # shellcheck disable=SC2086
    (cd "$build" && ctest -L gpu $part -j $jobs --output-on-failure --timeout 300 >> "$out/gpu_tests.log" 2>&1) || rc=1
  done
  if [ $rc -eq 0 ]; then
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
  # Allreduce on device buffers, 2 and 4 ranks on the one GPU. Up to 64 MiB: the MPI baseline's
  # 256 MiB rows (0.1-0.5 s a call through the host) kept the phase from reaching the sweep below.
  for np in 2 4; do
    mpiexec -n $np $perf --mem device --op allreduce --impl strata,mpi,nccl -b 1M -e 64M -f 4 -n 10 -w 3 \
        --csv "$out/allreduce_np$np.csv" > "$out/allreduce_np$np.txt" 2>&1 || status=1
    grep -E "^#  allreduce|bound|not run" "$out/allreduce_np$np.txt" | tee -a "$out/summary.txt"
  done
  # Staged lanes: 2 virtual nodes on one GPU, non-CUDA-aware MPI.
  STRATA_RANKS_PER_NODE=1 STRATA_CUDA_AWARE_MPI=0 mpiexec -n 2 $perf --mem device --op allreduce --impl strata,mpi \
      -b 1M -e 64M -f 4 -n 10 -w 3 > "$out/staged_2nodes.txt" 2>&1 || status=1
  grep -E "^#  allreduce" "$out/staged_2nodes.txt" | tee -a "$out/summary.txt"
  # The other bandwidth collectives on device buffers, 4 ranks on the one GPU.
  mpiexec -n 4 $perf --mem device --op allgather,reducescatter,broadcast --impl strata,mpi,nccl -b 1M -e 64M -f 4 \
      -n 10 -w 3 --csv "$out/others_np4.csv" > "$out/others_np4.txt" 2>&1 || status=1
  grep -E "^#  (allgather|reducescatter|broadcast)|bound|not run" "$out/others_np4.txt" | tee -a "$out/summary.txt"
}

# compute-sanitizer (memcheck, racecheck) over the kernels' tests and 2 ranks' collectives on device
# buffers: out-of-bounds and misaligned accesses, shared-memory races, on the real driver. The
# kernels' case matrix is sampled (every 37th case: each type, op, input count, length and
# alignment still reached) so the phase fits its default limit: the whole matrix takes 70-80 s
# under each tool on an H200 (fifth session, clean). The three runs go at once (the cores and the
# GPU have room for four sanitized processes), each with the whole phase less a margin
# (STRATA_SANITIZE_EACH seconds overrides); the logs name every test as it starts and how long it
# took, and a run ended at its limit says in which test. The death test is left out: its kernel
# traps on purpose, which the sanitizer reports as an error, and under the sanitizer its child
# stalls (the fourth session's runs with it never reached a summary).
phase_sanitize() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null) ||
    { log "no compute-sanitizer"; return 0; }
  local t=$build/tests/gpu each=${STRATA_SANITIZE_EACH:-$(( $(limit_of sanitize) - 10 ))}
  run_sanitizer() {  # NAME COMMAND...: one run of at most $each s, its verdict from the summary line
    local name=$1; shift
    local start=$SECONDS
    timeout -k 5 "$each" "$@" > "$out/sanitize_$name.log" 2>&1
    local rc=$? summary
    summary=$(grep -hE "(ERROR|RACECHECK) SUMMARY" "$out/sanitize_$name.log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      log "sanitizer $name: stopped at $each s in $(grep -h '\[ RUN' "$out/sanitize_$name.log" | tail -1 | sed 's/.*RUN *\] *//'), $(grep -c '\[       OK' "$out/sanitize_$name.log") tests done, ${summary:-no summary}"
    else
      log "sanitizer $name: exit $rc in $(( SECONDS - start )) s, ${summary:-no summary}"
    fi
    return $rc
  }
  local pids=()
  STRATA_TEST_SAMPLE=37 run_sanitizer memcheck_kernels "$cs" --tool memcheck --error-exitcode 3 \
      "$t/strata_gpu_kernel_tests" --gtest_filter=-*DeathTest* & pids+=($!)
  STRATA_TEST_SAMPLE=37 run_sanitizer racecheck_kernels "$cs" --tool racecheck --error-exitcode 3 \
      "$t/strata_gpu_kernel_tests" --gtest_filter=-*DeathTest* & pids+=($!)
  STRATA_TEST_SHAPE=0 run_sanitizer memcheck_collectives_np2 mpiexec -n 2 "$cs" --tool memcheck --error-exitcode 3 \
      "$t/strata_gpu_collectives_test" & pids+=($!)
  local pid
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
}

# Each phase of `all` in its own process group, ended with everything it started at its limit.
run_limited() {  # PHASE SECONDS
  local p=$1 limit=$2 pid watch rc
  setsid "$script" "$out" "$p" &
  pid=$!
  (  # the watchdog: holds no output open, and takes its timer with it when it is ended
    exec >/dev/null 2>&1
    sleep "$limit" & timer=$!
    trap 'kill $timer; exit 0' TERM
    wait $timer
    if kill -0 "$pid"; then
      log "$p: stopped at its limit of $limit s"; kill -TERM -- -"$pid"; sleep 5; kill -KILL -- -"$pid"
    fi ) &
  watch=$!
  wait "$pid"; rc=$?
  kill "$watch" 2>/dev/null; wait "$watch" 2>/dev/null
  return $rc
}
limit_of() {  # PHASE: its limit from STRATA_SUITE_LIMITS
  local kv
  for kv in ${STRATA_SUITE_LIMITS:-build=150 test=260 bench=90 sanitize=70}; do
    [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }
  done
  echo 600
}

start=$(date +%s)
case "$phase" in
  build) phase_build || exit 1 ;;
  test) phase_test ;;
  bench) phase_bench ;;
  sanitize) phase_sanitize ;;
  all)
    if run_limited build "$(limit_of build)"; then
      for p in test bench sanitize; do run_limited "$p" "$(limit_of "$p")" || status=1; done
    else
      status=1
    fi ;;
  *) echo "unknown phase $phase (build, test, bench, sanitize, all)" >&2; exit 2 ;;
esac
log "$phase done in $(( $(date +%s) - start )) s, status $status"
[ "$phase" = all ] && tar czf "/tmp/suite.$$.tgz" -C "$out" --exclude suite.tgz . && mv "/tmp/suite.$$.tgz" "$out/suite.tgz"
exit $status
