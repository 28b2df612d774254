#!/usr/bin/env bash
# bench/cluster-aged.sh PARTS: bench/cluster.sh's campaign (CUBIC and Reno,
# the paper's P and S) on one host of one process, to FIRST simulations
# (3000), then `run --resume --budget THEN` (6000): the coordinator's CPU
# per simulation of the older stretch (with PARTS store parts, or a whole
# store for 0), and its CPU profile in /tmp/aged-PARTS.pprof (the resume's
# one-time loading is in it; the script reports it apart).
# EXTRA is added to the campaign file: EXTRA='bytes: 1000000' makes the
# simulations 15 times shorter, so that the campaign ages within minutes.
# PROCS (1) is the host's worker processes. SUBJECT (native) is what runs
# the simulations (ns3 needs `make ns3`). SAVE=DIR keeps the campaign
# at FIRST simulations for bench/cluster-resume.sh.
#
# Side by side, from the same resumed stretch, it reports the simulations'
# CPU per simulation (the host's worker processes: the CPU of the host's
# children, reaped or alive, from /proc) and, from the profile, the
# coordinator's selection (act.(*selector).nextBatch; next before) and merge (the coverage
# merger, and the store's Add* it runs under) per simulation, and their
# share of a simulation: the issue's "merge and selection ≤ 1% of a
# simulation's"; and the coordinator's garbage collections.
#
#   bench/cluster-aged.sh 0; bench/cluster-aged.sh 2
#   EXTRA='bytes: 1000000' FIRST=20000 THEN=30000 bench/cluster-aged.sh 2
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/cluster-lib.sh
PARTS=${1:-0}
if [ -z "${BIN:-}" ]; then
	make --no-print-directory build >/dev/null
	BIN=$PWD/bin/actfuzz
fi
NATS=${NATS:-$(go env GOPATH)/bin/nats-server}
[ -x "$NATS" ] || { echo "bench/cluster-aged.sh: no $NATS: run make nats" >&2; exit 2; }
tmp=$(mktemp -d)
PORT=$((15222+PARTS))
pids=()
# On failure the directory is kept (logs, checkpoint and JetStream store:
# a failure at scale takes long to repeat), and the last lines of the
# runs' logs are printed.
cleanup() {
  local st=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  drop_cgroup
  if [ "$st" -ne 0 ]; then
    for f in "$tmp"/a.log "$tmp"/b.log; do [ -f "$f" ] && { echo "== $f" >&2; grep -v '^gc [0-9]' "$f" | tail -5 >&2; }; done
    echo "bench/cluster-aged.sh: failed ($st); logs kept in $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
start_nats "$tmp" "$PORT"
URL=nats://127.0.0.1:$PORT
FIRST=${FIRST:-3000}
THEN=${THEN:-6000}
printf 'ccai: [cubic, reno]\nwindow: 500\n%s\n' "${EXTRA:-}" >"$tmp/bench.yaml"
cpu_cgroup
"${in_cgroup[@]}" "$BIN" worker --nats "$URL" --procs "${PROCS:-1}" --quiet 2>"$tmp/host.log" & pids+=($!)
host=$!
parts=()
if [ "$PARTS" -gt 0 ]; then
  parts=(--store-parts "$PARTS")
  for j in $(seq 0 $((PARTS-1))); do "$BIN" store --nats "$URL" --part "$j" --quiet 2>"$tmp/store-$j.log" & pids+=($!); done
fi
"$BIN" run "$tmp/bench.yaml" --subject "${SUBJECT:-native}" --budget "$FIRST" --lag 8 --nats "$URL" "${parts[@]}" --quiet --json --out "$tmp/out" >"$tmp/a.json" 2>"$tmp/a.log" || [ $? -le 1 ]
# SAVE=DIR keeps the campaign at FIRST (its output directory, checkpoint
# included, and its campaign file) for bench/cluster-resume.sh.
if [ -n "${SAVE:-}" ]; then
  mkdir -p "$SAVE" && rm -rf "$SAVE/out" && cp -a "$tmp/out" "$SAVE/out" && cp "$tmp/bench.yaml" "$SAVE/bench.yaml"
  echo "saved the campaign at $FIRST simulations in $SAVE"
fi
s=$(date +%s.%N)
sims0=$(children_cpu "$host")
GODEBUG=gctrace=1 /usr/bin/time -f 'cpu %U %S' -o "$tmp/b.time" "$BIN" run "$tmp/bench.yaml" --subject "${SUBJECT:-native}" --budget "$THEN" --resume --lag 8 --nats "$URL" "${parts[@]}" --quiet --json --out "$tmp/out" --cpuprofile /tmp/aged-$PARTS.pprof >"$tmp/b.json" 2>"$tmp/b.log" || [ $? -le 1 ]
e=$(date +%s.%N)
sims1=$(children_cpu "$host")
cpu=$(awk '/^cpu /{print $2+$3}' "$tmp/b.time")
echo "parts=$PARTS resumed $FIRST→$THEN: wall $(echo "$e-$s" | bc -l | cut -c1-6) s, coordinator $(echo "$cpu*1000/($THEN-$FIRST)" | bc -l | cut -c1-5) ms CPU/sim"
# The coordinator's garbage collections (GODEBUG=gctrace=1 on its stderr):
# how many, and the heap after the last (MB).
gcs=$(grep -c '^gc [0-9]' "$tmp/b.log" || true)
heap=$(grep '^gc [0-9]' "$tmp/b.log" | tail -1 | grep -o '[0-9]*->[0-9]*->[0-9]* MB' | sed 's/.*->//; s/ MB//')
echo "parts=$PARTS: coordinator $gcs garbage collections, heap ${heap:-?} MB after the last"
# focused: the profile's seconds of the samples under frames matching $1
# (less the resume's loading, unless $2 is given: the frames to ignore).
focused() { profile_seconds "$BIN" "/tmp/aged-$PARTS.pprof" "$@"; }
n=$((THEN-FIRST))
simms=$(echo "($sims1-$sims0)*1000/$n" | bc -l)
sel=$(echo "$(focused 'act\.\(\*selector\)\.next(Batch)?$')*1000/$n" | bc -l)
mer=$(echo "$(focused 'coverage\.\(\*merger\)|coverage\.\(\*Store\)\.Add')*1000/$n" | bc -l)
load=$(focused "$loading" '^$')
total=$(go tool pprof -top "$BIN" "/tmp/aged-$PARTS.pprof" 2>/dev/null | awk '/Total samples/{for (i = 1; i < NF; i++) if ($i == "=") v = $(i+1); if (v ~ /ms$/) {sub(/ms$/,"",v); v/=1000} else sub(/s$/,"",v); print v}')
echo "parts=$PARTS: the resume's loading $load s of the $total s profiled; the rest $(echo "($total-$load)*1000/$n" | bc -l | cut -c1-5) ms/sim"
# The states the stretch found (regions at k = 1 in run's JSON, before and
# after): what the coordinator's merge costs grow with.
states() { grep -o '"1": *[0-9]*' "$1" | head -1 | grep -o '[0-9]*$'; }
s0=$(states "$tmp/a.json") s1=$(states "$tmp/b.json")
echo "parts=$PARTS: states $s0 → $s1, $(echo "($s1-$s0)/$n" | bc -l | cut -c1-7) new a simulation"
printf 'parts=%s: simulations %.2f ms CPU/sim (worker processes); coordinator selection %.3f + merge %.3f = %.3f ms/sim (profile), %.2f%% of a simulation\n' \
  "$PARTS" "$simms" "$sel" "$mer" "$(echo "$sel+$mer" | bc -l)" "$(echo "($sel+$mer)*100/$simms" | bc -l)"
