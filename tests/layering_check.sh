#!/usr/bin/env bash
# Checks DESIGN.md's layering: a folder may include only the folders it may use.
#   kernels: nothing above | intra_node, inter_node: kernels | hierarchy: intra_node, inter_node, kernels
set -euo pipefail
root=$1
status=0
check() {  # FOLDER ALLOWED_PREFIXES...
  local folder=$1
  shift
  local pattern
  pattern=$(printf '%s/|' "$@")
  pattern="^(${pattern%|})"
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    if ! [[ $inc =~ $pattern ]]; then
      echo "layering: $file includes $inc (allowed: $*)"
      status=1
    fi
  done < <(grep -rHE '^#include "' "$root/$folder" --include='*.h' --include='*.cc' --include='*.cu' --include='*.cuh' || true)
}
check kernels kernels
check intra_node intra_node kernels
check inter_node inter_node kernels
check hierarchy hierarchy intra_node inter_node kernels
[ $status -eq 0 ] && echo "layering OK"
exit $status
