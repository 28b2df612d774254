#!/usr/bin/env bash
# bench/cluster-latency.sh MS…: a cluster whose worker host and store
# processes are MS milliseconds (each way) from the NATS server, as on
# other machines: they connect through toxiproxy (`make toxiproxy`; this
# machine's kernel has no netem), whose latency toxic delays every byte
# by MS in each direction; the coordinator and the server share a
# machine, unless COORD_MS is set: then the coordinator is COORD_MS ms
# from the server (each way) through a proxy of its own, as on a third
# machine. A request of the coordinator to a store part then takes
# 2×(MS+COORD_MS) more: the selector's pool requests (ACT Method 1 line 8,
# in steps 2 and 3) and each batch's merge of the parts wait for them.
#
# For each MS it runs the bench campaign (cluster.sh's, with 1 MB flows so
# that it reaches step 2 within minutes) to BUDGET simulations with PARTS
# store parts and one host of PROCS slots, and reports sims/s, the
# coordinator's CPU a simulation, and from its executor's statistics
# (the log line "cluster executor closed") the pool requests and the
# time they and the parts' merges kept Run waiting, per batch of 64.
# Every run must cover the same regions (latency changes no result).
#
#   bench/cluster-latency.sh 0 1 2
#   BIN=/tmp/actfuzz-old BUDGET=2000 bench/cluster-latency.sh 0 1
#   COORD_MS=1 bench/cluster-latency.sh 1
#
# Everything listens on 127.0.0.1 only and stops when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/cluster-lib.sh
[ $# -gt 0 ] || set -- 0 1
BUDGET=${BUDGET:-3000}
LAG=${LAG:-8}
PROCS=${PROCS:-2}
PARTS=${PARTS:-2}
PORT=${PORT:-16222}
NATS=${NATS:-$(go env GOPATH)/bin/nats-server}
TOXI=${TOXI:-$PWD/bin/toxiproxy/server}
[ -x "$NATS" ] || { echo "bench/cluster-latency.sh: no $NATS: run make nats" >&2; exit 2; }
[ -x "$TOXI" ] || { echo "bench/cluster-latency.sh: no $TOXI: run make toxiproxy" >&2; exit 2; }
if [ -z "${BIN:-}" ]; then
  make --no-print-directory build >/dev/null
  BIN=$PWD/bin/actfuzz
fi
tmp=$(mktemp -d)
pids=()
cleanup() {
  local st=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$st" -ne 0 ]; then echo "bench/cluster-latency.sh: failed ($st); logs kept in $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
start_nats "$tmp" "$PORT"
api=$((PORT + 1)) remote=$((PORT + 2)) coord=$((PORT + 3))
COORD_MS=${COORD_MS:-}
"$TOXI" -host 127.0.0.1 -port "$api" >"$tmp/toxiproxy.log" 2>&1 & pids+=($!)
toxi=$!
# proxy_cpu: the proxy's CPU seconds so far (it shares this machine's
# cores with the simulations: its cost is the emulation's, not the
# cluster's).
proxy_cpu() { local f; read -ra f <"/proc/$toxi/stat"; echo "$((f[13] + f[14])) $(getconf CLK_TCK)" | awk '{print $1/$2}'; }
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$api/version" >/dev/null && break; sleep 0.1; done
curl -sf -X POST "http://127.0.0.1:$api/proxies" \
  -d "{\"name\":\"remote\",\"listen\":\"127.0.0.1:$remote\",\"upstream\":\"127.0.0.1:$PORT\"}" >/dev/null
# set_latency PROXY MS: the proxy's delay, each way.
set_latency() {
  for dir in upstream downstream; do
    curl -sf -X DELETE "http://127.0.0.1:$api/proxies/$1/toxics/lat-$dir" >/dev/null 2>&1 || true
    [ "$2" -eq 0 ] && continue
    curl -sf -X POST "http://127.0.0.1:$api/proxies/$1/toxics" \
      -d "{\"name\":\"lat-$dir\",\"type\":\"latency\",\"stream\":\"$dir\",\"attributes\":{\"latency\":$2}}" >/dev/null
  done
}
URL=nats://127.0.0.1:$PORT
if [ -n "$COORD_MS" ]; then
  curl -sf -X POST "http://127.0.0.1:$api/proxies" \
    -d "{\"name\":\"coord\",\"listen\":\"127.0.0.1:$coord\",\"upstream\":\"127.0.0.1:$PORT\"}" >/dev/null
  set_latency coord "$COORD_MS"
  URL=nats://127.0.0.1:$coord
fi
RURL=nats://127.0.0.1:$remote
printf 'ccai: [cubic, reno]\nwindow: 500\nbytes: 1000000\n' >"$tmp/bench.yaml"
echo "# $(date -u +%FT%TZ) $(uptime)"
echo "# budget $BUDGET, lag $LAG, one host of --procs $PROCS, store parts $PARTS, $(nproc) cores; hosts and stores MS each way from the server, the coordinator ${COORD_MS:-0}"
printf '%-4s %8s %8s %12s %10s %14s %12s %14s %12s\n' ms wall_s sims/s coord_ms/sim pool_reqs pool_ms/batch part_merges merge_ms/batch proxy_cpu_s
# The time of a log value such as 1.234s or 567.8ms, in ms.
ms() { awk -v v="$1" 'BEGIN{ if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /µs$/) {sub(/µs$/,"",v); print v/1000} else if (v ~ /m[0-9.]+s$/) {split(v,a,"m"); sub(/s$/,"",a[2]); print a[1]*60000+a[2]*1000} else {sub(/s$/,"",v); print v*1000} }'; }
first=
for lat in "$@"; do
  set_latency remote "$lat"
  run=()
  "$BIN" worker --nats "$RURL" --procs "$PROCS" --quiet 2>"$tmp/host-$lat.log" & run+=($!)
  for j in $(seq 0 $((PARTS - 1))); do
    "$BIN" store --nats "$RURL" --part "$j" --quiet 2>"$tmp/store-$lat-$j.log" & run+=($!)
  done
  pids+=("${run[@]}")
  pcpu0=$(proxy_cpu)
  start=$(date +%s.%N)
  /usr/bin/time -f 'cpu %U %S' -o "$tmp/coord-$lat.time" "$BIN" run "$tmp/bench.yaml" --budget "$BUDGET" --lag "$LAG" \
    --nats "$URL" --store-parts "$PARTS" -v --json --out "$tmp/out-$lat" >"$tmp/out-$lat.json" 2>"$tmp/coord-$lat.log" || [ $? -le 1 ]
  end=$(date +%s.%N)
  pcpu=$(echo "$(proxy_cpu) - $pcpu0" | bc -l)
  for p in "${run[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${run[@]}"; do wait "$p" 2>/dev/null || true; done
  line=$(grep 'cluster executor closed' "$tmp/coord-$lat.log" || { echo "bench/cluster-latency.sh: no executor statistics in $tmp/coord-$lat.log" >&2; exit 1; })
  val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  batches=$(( (BUDGET + 63) / 64 ))
  wall=$(echo "$end - $start" | bc -l)
  cpu=$(awk '/^cpu /{print $2+$3}' "$tmp/coord-$lat.time")
  printf '%-4s %8.1f %8.1f %12.2f %10s %14.1f %12s %14.1f %12.1f\n' "$lat" "$wall" "$(echo "$BUDGET/$wall" | bc -l)" "$(echo "$cpu*1000/$BUDGET" | bc -l)" \
    "$(val pool_requests)" "$(echo "$(ms "$(val pool_wait)")/$batches" | bc -l)" "$(val part_merges)" "$(echo "$(ms "$(val part_merge_wait)")/$batches" | bc -l)" "$pcpu"
  regions=$(grep -A30 '"regions"' "$tmp/out-$lat.json" | head -30)
  if [ -z "$first" ]; then first=$regions; elif [ "$regions" != "$first" ]; then
    echo "bench/cluster-latency.sh: the run at $lat ms covered other regions than the first" >&2
    exit 1
  fi
done
echo "# $(date -u +%FT%TZ) $(uptime)"
echo "# pool_ms/batch: the selector's wait for the parts' pools; merge_ms/batch: Run's wait for the parts' merge; both per batch of 64 simulations"
