#!/usr/bin/env bash
# Prints a directory holding cuobjdump and nvdisasm (what tests/compiler/check_kernels.py runs):
# the CUDA toolkit's when it has them, else NVIDIA's packages of the two tools from the Python
# registry (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm; their sha256 checked), unpacked once per
# machine into ${STRATA_CACHE:-~/.cache/strata}/cuda-tools-VERSION. The toolkit here (13.0) ships
# neither; 13.2 is the oldest release on the registry and reads 13.0's device code.
set -euo pipefail
toolkit=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
if [ -x "$toolkit/cuobjdump" ] && [ -x "$toolkit/nvdisasm" ]; then
  echo "$toolkit"
  exit 0
fi

version=13.2.51
declare -A sha256=(
  [cuobjdump]=95c69d3ddf0c2c1f535ec44c3433a66aeee19f588d9d22f73356e20b25f12b50
  [nvdisasm]=5a7acf77c55d6d2911ed6155d4d5bc156ffadf9df7a68a89b0c1155f4b13688c
)
cache="${STRATA_CACHE:-$HOME/.cache/strata}/cuda-tools-$version"
if [ ! -f "$cache/.fetched" ]; then
  rm -rf "$cache" && mkdir -p "$cache/wheels" "$cache/bin"
  for tool in cuobjdump nvdisasm; do
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
      --python-version 3.11 -d "$cache/wheels" "nvidia-cuda-$tool==$version" >&2
    wheel=$(ls "$cache"/wheels/nvidia_cuda_"$tool"-*.whl)
    echo "${sha256[$tool]}  $wheel" | sha256sum --check --quiet >&2
    python3 - "$wheel" "$tool" "$cache/bin/$tool" <<'EOF'
import sys, zipfile
wheel, tool, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/bin/" + tool))
    open(out, "wb").write(z.read(name))
EOF
    chmod +x "$cache/bin/$tool"
  done
  rm -rf "$cache/wheels"
  touch "$cache/.fetched"
fi
echo "$cache/bin"
