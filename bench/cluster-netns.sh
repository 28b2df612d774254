#!/usr/bin/env bash
# bench/cluster-netns.sh: a cluster on four hosts of its own network (root:
# Linux network namespaces joined by a bridge, each with its own address
# and TCP stack; one machine's cores): the NATS server (`make nats`) on
# 10.77.0.1, the coordinator on 10.77.0.2, a worker host of PROCS slots on
# 10.77.0.3 and the PARTS store processes on 10.77.0.4. It runs CAMPAIGN
# (examples/make-run.yaml: CUBIC and Reno with the paper's three
# conditions) to BUDGET simulations with `--store-parts PARTS`, then the
# same campaign locally with the same lag, and checks that the two cover
# the same regions at every k and write the same seed files; it reports
# both rates (the cluster's processes share this machine's cores).
#
#   sudo bench/cluster-netns.sh
#   BUDGET=2000 PARTS=3 bench/cluster-netns.sh
#
# The namespaces (afz-*) and the bridge (afzbr0) are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
CAMPAIGN=${CAMPAIGN:-examples/make-run.yaml}
BUDGET=${BUDGET:-1000}
LAG=${LAG:-8}
PROCS=${PROCS:-2}
PARTS=${PARTS:-2}
NATS=${NATS:-$(go env GOPATH)/bin/nats-server}
[ -x "$NATS" ] || { echo "bench/cluster-netns.sh: no $NATS: run make nats" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench/cluster-netns.sh: needs root (ip netns)" >&2; exit 2; }
if [ -z "${BIN:-}" ]; then
  make --no-print-directory build >/dev/null
  BIN=$PWD/bin/actfuzz
fi
tmp=$(mktemp -d)
hosts=(nats coord host store)
pids=()
cleanup() {
  local st=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for h in "${hosts[@]}"; do ip netns del "afz-$h" 2>/dev/null || true; done
  ip link del afzbr0 2>/dev/null || true
  if [ "$st" -ne 0 ]; then echo "bench/cluster-netns.sh: failed ($st); logs kept in $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
ip link add afzbr0 type bridge
ip link set afzbr0 up
i=1
for h in "${hosts[@]}"; do
  ip netns add "afz-$h"
  ip link add "afz-$h-br" type veth peer name "afz-$h-ns"
  ip link set "afz-$h-br" master afzbr0 up
  ip link set "afz-$h-ns" netns "afz-$h"
  ip -n "afz-$h" addr add "10.77.0.$i/24" dev "afz-$h-ns"
  ip -n "afz-$h" link set "afz-$h-ns" up
  ip -n "afz-$h" link set lo up
  i=$((i + 1))
done
# on HOST CMD…: CMD on host HOST (`on … &` is the command's own process,
# so that cleanup's kill reaches it).
on() { local h=$1; shift; exec ip netns exec "afz-$h" "$@"; }
URL=nats://10.77.0.1:4222
printf 'listen: 10.77.0.1:4222\nmax_payload: 8MB\njetstream { store_dir: "%s/js" }\n' "$tmp" >"$tmp/nats.conf"
(on nats "$NATS" -c "$tmp/nats.conf" >"$tmp/nats.log" 2>&1) & pids+=($!)
for _ in $(seq 50); do (on coord bash -c '(exec 3<>/dev/tcp/10.77.0.1/4222)') 2>/dev/null && break; sleep 0.1; done
echo "# $(date -u +%FT%TZ) $(uptime)"
echo "# $CAMPAIGN, budget $BUDGET, lag $LAG, one host of --procs $PROCS, store parts $PARTS, $(nproc) cores"
(on host "$BIN" worker --nats "$URL" --procs "$PROCS" --quiet 2>"$tmp/host.log") & pids+=($!)
for j in $(seq 0 $((PARTS - 1))); do
  (on store "$BIN" store --nats "$URL" --part "$j" --quiet 2>"$tmp/store-$j.log") & pids+=($!)
done
start=$(date +%s.%N)
(on coord "$BIN" run "$CAMPAIGN" --budget "$BUDGET" --lag "$LAG" --nats "$URL" --store-parts "$PARTS" \
  --quiet --json --out "$tmp/cluster" >"$tmp/cluster.json" 2>"$tmp/coord.log") || [ $? -le 1 ]
end=$(date +%s.%N)
printf 'cluster (4 network hosts): %.1f sims/s\n' "$(echo "$BUDGET/($end - $start)" | bc -l)"
start=$(date +%s.%N)
"$BIN" run "$CAMPAIGN" --budget "$BUDGET" --lag "$LAG" --workers "$PROCS" --quiet --json --out "$tmp/local" >"$tmp/local.json" 2>"$tmp/local.log" || [ $? -le 1 ]
end=$(date +%s.%N)
printf 'local (%d isolated workers): %.1f sims/s\n' "$PROCS" "$(echo "$BUDGET/($end - $start)" | bc -l)"
regions() { grep -A30 '"regions"' "$1" | head -30; }
if [ "$(regions "$tmp/cluster.json")" != "$(regions "$tmp/local.json")" ]; then
  echo "bench/cluster-netns.sh: the cluster covered other regions than the local run" >&2
  exit 1
fi
if ! diff -r "$tmp/cluster/findings" "$tmp/local/findings" >/dev/null 2>&1; then
  echo "bench/cluster-netns.sh: the cluster's seed files differ from the local run's" >&2
  exit 1
fi
echo "same regions at every k and the same seed files as the local run ($(find "$tmp/local/findings" -name '*.json' 2>/dev/null | wc -l) seeds)"
