#!/usr/bin/env bash
# strata-model against an independent network simulator: the library's flat algorithms (one rank
# per node, lanes only) run under SimGrid's SMPI on a simulated cluster, and strata-model predicts
# the same calls for the same platform parameters. Prints one table per network and a summary.
#
#   perf/smpi_compare.sh [OUTDIR]        (default out/smpi; RANKS="64 256 1024" to choose scales)
#
# What runs: strata-flat-timing (perf/flat_timing.cc), built with SimGrid's smpicxx in
# build-smpi/, executes every rank's real plan on the library's plan executor; SMPI simulates the
# messages (its clock is MPI_Wtime; one call per size, no warm-up: the simulation is deterministic)
# and checks nothing about the plans, while the tool checks every
# output against its expected sums. strata-model (from build/, or STRATA_BUILD) times the same
# plans with its own plan-level simulation and prices them with the closed forms.
#
# The platform: N hosts, each with a private full-duplex link (LINK_BW bytes/s, LINK_LAT s each
# way) into a switch, so a message crosses two links: alpha = 2 LINK_LAT, beta = 1 / LINK_BW,
# and the link is the NIC every message of its host shares. Four networks:
#   ideal     SMPI's per-size latency and bandwidth corrections off (factors 1, no cross traffic):
#             what strata-model assumes (NIC contention only, eager up to 64 KiB on both sides)
#   rendezvous  ideal, every message a rendezvous on both sides (SMPI's detached sends off, the
#             model's machine.eager_bytes 0): eager sends complete at once, so a rank's sends in
#             flight together share its link in SMPI, where the model sends them one after another
#   smpi      SMPI's default corrections, fitted by its authors on a real cluster (latency up to
#             11.6x for large messages, bandwidth 0.34-1.09x by size) and cross traffic on
#   tapered   ideal, behind a shared backbone of N x LINK_BW / 4 (4:1 oversubscribed core): the
#             model's machine.core_bandwidth (64 and 256 ranks: a shared link makes SMPI slow)
# Local reductions and copies cost nothing on either side (smpi/simulate-computation off, gamma 0):
# this compares the network models, not the hosts.
#
# SimGrid comes from Debian (libsimgrid-dev); the script installs it when it is missing and it can.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
out=${1:-out/smpi}
mkdir -p "$out"
out=$(cd "$out" && pwd)
RANKS=${RANKS:-"64 256 1024"}
LINK_BW=${LINK_BW:-12.5e9}   # 100 Gb/s
LINK_LAT=${LINK_LAT:-0.5e-6}
EAGER=65536                  # SMPI's smpi/send-is-detached-thresh and the model's machine.eager_bytes
build=${STRATA_BUILD:-build}
log() { printf '[smpi-compare] %s\n' "$*" | tee -a "$out/summary.txt"; }
: > "$out/summary.txt"

if ! command -v smpicxx > /dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    log "installing SimGrid (libsimgrid-dev)"
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsimgrid-dev; } \
      > "$out/apt.log" 2>&1 || { log "apt-get failed (see apt.log)"; exit 1; }
  else
    log "smpicxx not found: install SimGrid (Debian: libsimgrid-dev)"
    exit 1
  fi
fi
log "SimGrid $(dpkg-query -W -f='${Version}' libsimgrid-dev 2>/dev/null || echo '?')"

# The tool under SMPI: the library's layers compiled by smpicxx (host memory only, static).
cmake -S . -B build-smpi -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx -DMPI_C_COMPILER=smpicc \
      -DSTRATA_ENABLE_CUDA=OFF -DSTRATA_ENABLE_NCCL=OFF -DSTRATA_BUILD_TESTS=OFF -DBUILD_SHARED_LIBS=OFF \
      > "$out/build.log" 2>&1 &&
  cmake --build build-smpi -j "$(nproc)" --target strata-flat-timing >> "$out/build.log" 2>&1 ||
  { log "build-smpi FAILED (see build.log)"; exit 1; }
if [ ! -x "$build/perf/strata-model" ]; then
  cmake -S . -B "$build" > "$out/model-build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target strata-model >> "$out/model-build.log" 2>&1 ||
    { log "strata-model build FAILED (see model-build.log)"; exit 1; }
fi

# The tapered network's backbone: bytes/s all messages between hosts share (0 on the others).
core_bw() {  # N NETWORK
  if [ "$2" = tapered ]; then awk -v b="$LINK_BW" -v n="$1" 'BEGIN { printf "%.6g", n * b / 4 }'; else echo 0; fi
}

# The machine file: the same link as the platform, as strata-model and the plans' builders read it.
machine_file() {  # N EAGER_BYTES NETWORK
  local beta alpha
  beta=$(awk -v b="$LINK_BW" 'BEGIN { printf "%.6e", 1 / b }')
  alpha=$(awk -v l="$LINK_LAT" 'BEGIN { printf "%.6e", 2 * l }')
  cat <<EOF
# The SMPI comparison's cluster (perf/smpi_compare.sh): $1 hosts, one rank each, one link per host.
machine.nodes $1
machine.ranks_per_node 1
machine.nics_per_node 1
machine.nic_bandwidth $LINK_BW
machine.eager_bytes $2
machine.core_bandwidth $(core_bw "$1" "$3")
EOF
  local level
  for level in flat lane; do
    printf '%s.alpha %s\n%s.beta %s\n%s.gamma 0\n' "$level" "$alpha" "$level" "$beta" "$level"
  done
  printf 'node.alpha 0\nnode.beta 0\nnode.gamma 0\n'
}

platform_file() {  # N NETWORK
  local bb=""
  if [ "$2" = tapered ]; then
    bb=" bb_bw=\"$(core_bw "$1" "$2")Bps\" bb_lat=\"0s\" bb_sharing_policy=\"SHARED\""
  fi
  cat <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix="" radical="0-$(($1 - 1))" speed="1Gf" bw="${LINK_BW}Bps" lat="${LINK_LAT}s"
           sharing_policy="SPLITDUPLEX"$bb/>
</platform>
EOF
}

eager_of() { if [ "$1" = rendezvous ]; then echo 0; else echo "$EAGER"; fi; }

smpi_cfg() {  # NETWORK
  # Waits block in MPI (--block-in-mpi), so no injected test/probe delays are needed to move time.
  local cfg="--cfg=smpi/simulate-computation:no --cfg=smpi/test:0 --cfg=smpi/iprobe:0"
  cfg+=" --cfg=smpi/send-is-detached-thresh:$(eager_of "$1")"
  [ "$1" = smpi ] || cfg+=" --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 --cfg=network/crosstraffic:0"
  echo "$cfg"
}

# Algorithms per collective and scale: every flat algorithm up to 256 ranks; from 1024 the trees
# and the ones with log p rounds (a ring's 2(p-1) rounds of p messages each take SMPI tens of
# minutes there: its time grew about as p^3 from 128 to 256 ranks on this VM).
algos() {  # OP N
  local scale=all
  [ "$2" -lt 1024 ] || scale=log
  case "$1:$scale" in
    allreduce:log) echo recursive_doubling,rabenseifner,circulant ;;
    allreduce:all) echo ring,recursive_doubling,rabenseifner,circulant ;;
    broadcast:log) echo binomial,two_tree,pipelined_tree ;;
    broadcast:all) echo binomial,two_tree,scatter_allgather,pipelined_tree,chain ;;
    allgather:log) echo recursive_doubling,bruck ;;
    allgather:all) echo ring,recursive_doubling,bruck ;;
    reducescatter:log) echo recursive_halving ;;
    reducescatter:all) echo ring,recursive_halving ;;
  esac
}

max_bytes() {  # N: every rank's buffers live in the one simulating process
  if [ "$1" -ge 1024 ]; then echo 512K; else echo 8M; fi
}

networks() {  # N
  if [ "$1" -le 256 ]; then echo "ideal rendezvous smpi tapered"; else echo "ideal rendezvous smpi"; fi
}

rows="$out/rows.csv"
echo "network,ranks,collective,algorithm,bytes,smpi_us,model_sim_us,model_formula_us" > "$rows"
for n in $RANKS; do
  seq -f "node-%g" 0 $((n - 1)) > "$out/hosts_$n"
  for net in $(networks "$n"); do
    machine="$out/cluster_${net}_$n.machine"
    machine_file "$n" "$(eager_of "$net")" "$net" > "$machine"
    platform_file "$n" "$net" > "$out/platform_${net}_$n.xml"
    for op in allreduce broadcast allgather reducescatter; do
      tag="${net}_${n}_$op"
      a=$(algos "$op" "$n")
      e=$(max_bytes "$n")
      start=$(date +%s)
      # A finished SMPI run of the same name is kept (FRESH=1 runs everything again): 256 and
      # 1024 ranks take minutes.
      if [ "${FRESH:-0}" = 1 ] || [ ! -s "$out/smpi_$tag.txt" ]; then
        # shellcheck disable=SC2046
        smpirun -np "$n" -platform "$out/platform_${net}_$n.xml" -hostfile "$out/hosts_$n" $(smpi_cfg "$net") \
          build-smpi/perf/strata-flat-timing --machine "$machine" --op "$op" --algo "$a" \
          -b 8 -e "$e" -f 16 -n 1 -w 0 --block-in-mpi --global-clock > "$out/smpi_$tag.partial" 2> "$out/smpi_$tag.log" ||
          { log "SMPI run $tag FAILED (see smpi_$tag.log)"; exit 1; }
        mv "$out/smpi_$tag.partial" "$out/smpi_$tag.txt"
      fi
      "$build/perf/strata-model" --machine "$machine" --op "$op" --algo "$a" -b 8 -e "$e" -f 16 \
        --simulate all --csv "$out/model_$tag.csv" > "$out/model_$tag.txt" 2>&1 ||
        { log "strata-model $tag FAILED (see model_$tag.txt)"; exit 1; }
      log "$tag: SMPI and strata-model done in $(( $(date +%s) - start )) s"
      python3 - "$out/smpi_$tag.txt" "$out/model_$tag.csv" "$out/model_$tag.txt" "$net" "$n" "$op" >> "$rows" <<'EOF'
import csv, sys
smpi_txt, model_csv, model_txt, net, n, op = sys.argv[1:]
model = {(int(r["size_bytes"]), r["algorithm"]): r for r in csv.DictReader(open(model_csv))}
# Sizes of fewer elements than ranks: the library's call is a no-op, and strata-model says so.
noop = {int(l.split()[0]) for l in open(model_txt) if "no element per rank" in l}
for line in open(smpi_txt):
    f = line.split()
    if len(f) != 4 or f[3] != "ok" or not f[0].isdigit() or int(f[0]) in noop:
        continue
    m = model.get((int(f[0]), f[1]))
    if m is None:
        sys.exit(f"strata-model has no prediction for {f[1]} at {f[0]} B")
    print(f"{net},{n},{op},{f[1]},{f[0]},{f[2]},{m['simulated_us']},{m['formula_us']}")
EOF
    done
  done
done

# The summary per network and scale, then every row: error = (strata-model's plan simulation -
# SMPI) / SMPI; the closed forms' error beside it.
python3 - "$rows" <<'EOF' | tee "$out/comparison.md"
import csv, statistics, sys
def size(b):
    b = int(b)
    for unit, k in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}iB"
    return f"{b} B"
rows = []
for r in csv.DictReader(open(sys.argv[1])):
    s, m, f = float(r["smpi_us"]), float(r["model_sim_us"]), float(r["model_formula_us"])
    if m == 0:  # nothing moves
        continue
    rows.append((r, s, m, f, (m - s) / s, (f - s) / s))
groups = {}
for row in rows:
    groups.setdefault((row[0]["network"], int(row[0]["ranks"])), []).append(row)
print("| network | ranks | rows | median \\|error\\| | within 20% | largest (where) | closed forms within 20% |")
print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
for (net, n), g in groups.items():
    worst = max(g, key=lambda row: abs(row[4]))
    print(f"| {net} | {n} | {len(g)} | {100 * statistics.median(abs(row[4]) for row in g):.1f}% | "
          f"{sum(abs(row[4]) <= 0.2 for row in g)} | {100 * worst[4]:+.0f}% ({worst[0]['algorithm']} "
          f"{worst[0]['collective']} {size(worst[0]['bytes'])}) | {sum(abs(row[5]) <= 0.2 for row in g)} |")
for net in dict.fromkeys(row[0]["network"] for row in rows):
    print(f"\n### network: {net}\n")
    print("| ranks | collective | algorithm | size | SMPI (us) | strata-model plans (us) | error | closed form (us) | error |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r, s, m, f, e, ef in rows:
        if r["network"] == net:
            print(f"| {r['ranks']} | {r['collective']} | {r['algorithm']} | {size(r['bytes'])} | {s:.1f} | {m:.1f} | "
                  f"{100 * e:+.1f}% | {f:.1f} | {100 * ef:+.1f}% |")
EOF
log "tables in $out/comparison.md"
