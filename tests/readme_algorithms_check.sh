#!/usr/bin/env bash
# The README's table of algorithms and their cost formulas, and the legend under it, are what
# `strata-perf --algorithms` prints from the registry (each algorithm's formula text next to its
# code): a formula changed in the code and not in the README fails here.
#   tests/readme_algorithms_check.sh SOURCE_DIR STRATA_PERF
set -euo pipefail
root=$1
perf=$2
table() { sed -n '/^| collective | algorithm | level | cost |$/,/^a: alpha (per message)/p'; }
readme=$(table < "$root/README.md")
printed=$("$perf" --algorithms | table)
[ -n "$printed" ] || { echo "strata-perf --algorithms printed no table" >&2; exit 1; }
if [ "$readme" != "$printed" ]; then
  echo "README.md's algorithm table differs from strata-perf --algorithms (README <, tool >):" >&2
  diff <(echo "$readme") <(echo "$printed") >&2 || true
  exit 1
fi
echo "README.md's algorithm table: $(echo "$readme" | grep -c '^| [a-z]') rows, as strata-perf --algorithms prints them"
