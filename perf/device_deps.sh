#!/usr/bin/env bash
# GoogleTest for perf/device_suite.sh on a GPU machine that has CUDA and CMake but no package
# registry: Debian's `googletest` package (GoogleTest's own sources, which the suite builds there).
# On a machine with Debian's registry, in the checkout's root:
#
#     perf/device_deps.sh fetch .deps          (.deps/ is not tracked; carry it to the GPU machine)
#
# MPI comes the same way from the relocatable Open MPI of the developers' tools (`.mpi/`, see the
# suite's header). On the GPU machine device_suite.sh unpacks .deps/*.deb under its build folder.
set -euo pipefail
[ "${1:-}" = fetch ] && [ -n "${2:-}" ] || { echo "usage: $0 fetch DIR" >&2; exit 2; }
dir=$2
mkdir -p "$dir"
(cd "$dir" && apt-get download googletest >/dev/null 2>&1) ||
  { apt-get update -qq && (cd "$dir" && apt-get download googletest); }
echo "fetched $(ls "$dir"/*.deb | wc -l) package(s) into $dir"
