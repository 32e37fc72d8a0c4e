#!/usr/bin/env bash
# Installs Strata into a scratch prefix and builds the example applications against it, as an
# outside user would (CMake package and pkg-config), then runs them on 1 to 8 ranks with real and
# virtual node shapes (every collective, exact results). Arguments: BUILD_DIR SOURCE_DIR MPIEXEC [MPIEXEC_EXTRA_FLAGS...]
set -euo pipefail
build=$1 src=$2 mpiexec=$3
shift 3
extra=("$@")
prefix="$build/install-test/prefix"
rm -rf "$build/install-test"
cmake --install "$build" --prefix "$prefix" >/dev/null

# A static library (BUILD_SHARED_LIBS=OFF) links its private dependencies into the application, and
# a sanitized build (preset asan) its sanitizer runtimes: the outside project gets the same flags.
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
shared=$(cache BUILD_SHARED_LIBS)
flags=$(cache CMAKE_CXX_FLAGS)
case "$shared" in OFF|FALSE|0|NO) static=1 ;; *) static=0 ;; esac
echo "== installed $( [ $static = 1 ] && echo static || echo shared ) libstrata${flags:+ (flags: $flags)}"

echo "== CMake package: find_package(MPI) + find_package(strata)"
CFLAGS="$flags" CXXFLAGS="$flags" LDFLAGS="$flags" \
  cmake -S "$src/examples" -B "$build/install-test/examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/install-test/examples" >/dev/null

echo "== pkg-config: mpicc app.c \$(pkg-config --cflags --libs strata) (no rpath: LD_LIBRARY_PATH finds it)"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig:${PKG_CONFIG_PATH:-}"
if command -v pkg-config >/dev/null; then
  pcflags=(--cflags --libs)
  [ $static = 1 ] && pcflags+=(--static)
  # shellcheck disable=SC2086
  mpicc -O2 $flags -o "$build/install-test/random_collectives_pc" "$src/examples/random_collectives.c" \
        $(pkg-config "${pcflags[@]}" strata) -lm
  libdir=$(pkg-config --variable=libdir strata)
  LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$mpiexec" -n 2 "${extra[@]}" -x LD_LIBRARY_PATH "$build/install-test/random_collectives_pc" 50
else
  echo "(pkg-config not installed: skipped)"
fi

app="$build/install-test/examples/random_collectives"
run() {  # run NP SHAPE ITERATIONS
  if [ "$2" = discover ]; then unset STRATA_RANKS_PER_NODE; else export STRATA_RANKS_PER_NODE=$2; fi
  "$mpiexec" -n "$1" "${extra[@]}" "$app" "$3" "$((1000 + $1))"
}
run 1 discover 200
run 2 discover 200
run 3 1 200
run 4 2 200
run 5 3 150
run 8 4 150      # 2x4
run 8 2 120      # 4x2
run 8 3,5 150    # irregular 3+5
run 8 1 100      # 8x1
run 8 8 120      # 1x8
unset STRATA_RANKS_PER_NODE
"$mpiexec" -n 3 "${extra[@]}" "$build/install-test/examples/hello_allreduce"

# Device buffers: the application's own cudaMalloc, cudaMemcpyAsync and stream, against CUDA's
# runtime or the installed CUDA simulator (then on one and on two simulated GPUs).
dev="$build/install-test/examples/random_collectives_device"
if [ -x "$dev" ]; then
  echo "== device buffers: $dev"
  run_dev() {  # run_dev NP SHAPE ITERATIONS DEVICES
    if [ "$2" = discover ]; then unset STRATA_RANKS_PER_NODE; else export STRATA_RANKS_PER_NODE=$2; fi
    CUDA_SIM_DEVICES=$4 "$mpiexec" -n "$1" "${extra[@]}" -x CUDA_SIM_DEVICES "$dev" "$3" "$((2000 + $1))"
  }
  run_dev 1 discover 60 1
  run_dev 2 discover 60 2
  run_dev 3 1 50 1
  run_dev 4 2 50 2
  run_dev 8 4 30 2      # 2x4
  run_dev 8 3,5 30 1    # irregular 3+5
  unset STRATA_RANKS_PER_NODE
else
  echo "(no CUDA runtime in the installed package's build: device buffers skipped)"
fi
echo "== the installed package works"
