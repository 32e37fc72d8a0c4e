#!/usr/bin/env bash
# perf/fidelity.sh --reprice on rounds made up here: every row priced again by strata-model from its
# round's calibration file (one node of 2 for 2x1, 2 nodes of 4 for 8x4), out of place and in place,
# the stored prices thrown away; the tuner's choice the algorithm strata-model marks out of place,
# timed by that algorithm's own rows; and a directory without rounds, or a round not stored, refused.
#   tests/fidelity_reprice_check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
root=$1
export STRATA_BUILD=$2
model=$STRATA_BUILD/perf/strata-model
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
fail() { echo "fidelity --reprice: $*"; status=1; }

# A machine of its own, not the defaults: node and flat levels far apart, and a copy within a rank
# that costs something (what a call in place leaves out).
cat > "$dir/calibration_2x1_1.machine" <<'MACHINE'
node.alpha 1e-6
node.beta 1e-10
node.gamma 2e-10
flat.alpha 5e-6
flat.beta 4e-10
flat.gamma 2e-10
flat.beta@1048576 4e-10
flat.gamma@1048576 2e-10
flat.copy@1048576 1e-10
MACHINE
cp "$dir/calibration_2x1_1.machine" "$dir/calibration_8x4_1.machine"
header=impl,op,algo,ranks,size_bytes,count,type,redop,root,inplace,time_us,algbw_gbs,busbw_gbs,wrong,model_us,requested,pass_times_us
# Every algorithm strata-model prices, out of place and in place, timed at 1.25 times its price (so
# every error is -20%), each stored with a price of 1 us that the re-pricing must replace; auto rows
# naming the slowest.
for shape in 2x1 8x4; do
  case $shape in 2x1) args=(--nodes 1 --ppn 2) ranks=2 ;; 8x4) args=(--nodes 2 --ppn 4) ranks=8 ;; esac
  for ip in 0 1; do
    "$model" --machine "$dir/calibration_${shape}_1.machine" "${args[@]}" --op allgather -b 64K -e 1M -f 16 --algo all \
      --in-place $ip --simulate off --csv "$dir/expected_${shape}_$ip.csv" > /dev/null
  done
  python3 - "$dir/expected_${shape}_0.csv" "$dir/expected_${shape}_1.csv" "$ranks" "$header" > "$dir/measured_${shape}_1.csv" <<'PY'
import csv, sys
header = sys.argv[4]
print(header)
for ip, path in (("0", sys.argv[1]), ("1", sys.argv[2])):
    rows = list(csv.DictReader(open(path)))
    for y in rows:
        b = int(y["size_bytes"]); t = 1.25 * float(y["formula_us"])
        print(f"strata,allgather,{y['algorithm']},{sys.argv[3]},{b},{b // 4},float,none,-1,{ip},{t},0,0,0,1.0,{y['algorithm']},{t}")
    for b in sorted({int(y["size_bytes"]) for y in rows}):
        slowest = max((y for y in rows if int(y["size_bytes"]) == b), key=lambda y: float(y["formula_us"]))
        print(f"strata,allgather,{slowest['algorithm']},{sys.argv[3]},{b},{b // 4},float,none,-1,{ip},1,0,0,0,1.0,auto,1")
PY
done
report=$("$root/perf/fidelity.sh" "$dir" 1 --reprice) || fail "exited $?"
for shape in 2x1 8x4; do
  python3 - "$dir/expected_${shape}_0.csv" "$dir/expected_${shape}_1.csv" "$dir/repriced/measured_${shape}_1.csv" <<'PY' || fail "$shape: rows not as strata-model prices them"
import csv, sys
expected = {ip: list(csv.DictReader(open(p))) for ip, p in (("0", sys.argv[1]), ("1", sys.argv[2]))}
got = list(csv.DictReader(open(sys.argv[3])))
price = {(y["size_bytes"], y["algorithm"], ip): float(y["formula_us"]) for ip, ys in expected.items() for y in ys}
chosen = {y["size_bytes"]: y["algorithm"] for y in expected["0"] if y["chosen"] == "1"}
bad = []
named = [x for x in got if x["requested"] != "auto"]
auto = [x for x in got if x["requested"] == "auto"]
if len(named) != len(price): bad.append(f"{len(named)} named rows, {len(price)} priced")
for x in named:
    if abs(float(x["model_us"]) / price[(x["size_bytes"], x["algo"], x["inplace"])] - 1) > 1e-3:
        bad.append(f"{x['algo']} {x['size_bytes']} in place {x['inplace']}: {x['model_us']}")
if sorted((x["size_bytes"], x["inplace"]) for x in auto) != sorted((b, ip) for b in chosen for ip in ("0", "1")):
    bad.append("not one choice per size, out of place and in place")
for x in auto:
    want = chosen[x["size_bytes"]]
    key = (x["size_bytes"], want, x["inplace"])
    if x["algo"] != want or abs(float(x["time_us"]) / (1.25 * price[key]) - 1) > 1e-3 or abs(float(x["model_us"]) / price[key] - 1) > 1e-3:
        bad.append(f"choice at {x['size_bytes']} in place {x['inplace']}: {x['algo']} {x['time_us']} us, expected {want}")
# In place an allgather leaves its own block's copy out: some price there must be lower, or the two
# runs were one.
if not any(price[(b, a, "1")] < price[(b, a, "0")] for (b, a, ip) in price if ip == "0"):
    bad.append("no algorithm priced lower in place")
if bad: print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
done
# The two shapes share one machine file, so only the shape tells their prices apart: they must differ
# (else the checks above could not see the shapes swapped).
cmp -s <(cut -d, -f4-6 "$dir/expected_2x1_0.csv" | grep ",ring,") <(cut -d, -f4-6 "$dir/expected_8x4_0.csv" | grep ",ring,") &&
  fail "the ring priced alike on 2x1 and 8x4"
expect() { grep -qF -- "$1" <<<"$report" || fail "no line with '$1' in: $report"; }
expect "predicted within 15% of measured: 0 of 4 (median |error| 20.0%)"
expect "in place, the tuner's choice: predicted within 15% of measured in 0 of 4 (median |error| 20.0%)"
expect "priced again by"
if "$root/perf/fidelity.sh" "$dir/none" 1 --reprice > "$dir/err" 2>&1; then fail "a directory without rounds was accepted"; fi
grep -q "holds no stored rounds" "$dir/err" || fail "no reason given: $(cat "$dir/err")"
if "$root/perf/fidelity.sh" "$dir" 2 --reprice > "$dir/err" 2>&1; then fail "a round not stored was accepted"; fi
grep -q "round 2 of 2x1 is not stored" "$dir/err" || fail "no reason given: $(cat "$dir/err")"
echo "fidelity --reprice: allgather at 64 KiB and 1 MiB on 2x1 and 8x4, out of place and in place, 1 round:" \
  "$(($(wc -l < "$dir/repriced/measured_2x1_1.csv") + $(wc -l < "$dir/repriced/measured_8x4_1.csv") - 2)) rows re-priced" \
  "against strata-model (tolerance 0.1%), every time 1.25x its price; $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
