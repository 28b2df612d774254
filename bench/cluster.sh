#!/usr/bin/env bash
# bench/cluster.sh N…: a cluster on this machine, started as users would
# (docs/cluster.md): the nats-server binary (`make nats`),
# N worker hosts `actfuzz worker --nats URL --procs PROCS` (default 1) and one coordinator
# `actfuzz run CAMPAIGN --nats URL`. For each N it reports sims/s and the
# coordinator's CPU per simulation, and once the CPU per simulation of a
# local in-process run (one worker): the cost of a simulation itself.
#
#   bench/cluster.sh 1 2 4
#   CAMPAIGN=examples/make-run.yaml BUDGET=512 LAG=8 bench/cluster.sh 1 2
#   BIN=/tmp/actfuzz-main bench/cluster.sh 1 2 4   # another build (before/after)
#   PROCS=2 bench/cluster.sh 1                      # one host of two slots
#   PROFILE=/tmp/prof bench/cluster.sh 1            # CPU profiles: /tmp/prof/coord-N.pprof, host-N-I.pprof (the host process, not its workers) and store-N-J.pprof
#   KEEP=/tmp/logs bench/cluster.sh 1               # keep the logs, at level debug: /tmp/logs/{host-N-i,coord-N,nats}.log
#   PARTS=2 bench/cluster.sh 1 2                    # the store in 2 parts: `run --store-parts 2`, 2 `actfuzz store` processes
#
# The default campaign is examples/make-run.yaml (CUBIC and Reno, the
# paper's P and S) without its conditions: a finding costs the coordinator
# a replay of its seed (trace and plot), once per finding group, which is
# not a cost per simulation.
#
# Everything listens on 127.0.0.1 only and stops when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/cluster-lib.sh
[ $# -gt 0 ] || set -- 1 2
CAMPAIGN=${CAMPAIGN:-}
BUDGET=${BUDGET:-384}
LAG=${LAG:-8}
PROCS=${PROCS:-1}
PARTS=${PARTS:-0}
PORT=${PORT:-14222}
NATS=${NATS:-$(go env GOPATH)/bin/nats-server}
[ -x "$NATS" ] || { echo "bench/cluster.sh: no $NATS: run make nats" >&2; exit 2; }
if [ -z "${BIN:-}" ]; then
	make --no-print-directory build >/dev/null
	BIN=$PWD/bin/actfuzz
fi
PROFILE=${PROFILE:-}
KEEP=${KEEP:-}
# With KEEP the hosts and the coordinator log at level debug (each chunk
# fetched and settled, each result redelivered), and their logs outlive
# the run.
debug=()
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	debug=(--debug)
fi
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "$KEEP" ]; then cp "$tmp"/*.log "$KEEP"/ 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
start_nats "$tmp" "$PORT"
URL=nats://127.0.0.1:$PORT
if [ -z "$CAMPAIGN" ]; then
	CAMPAIGN=$tmp/bench.yaml
	printf 'ccai: [cubic, reno]\nwindow: 500\n' >"$CAMPAIGN"
fi

cpu() { # the user+system seconds /usr/bin/time wrote to $1
	awk '/^cpu /{print $2+$3}' "$1"
}

echo "# $(date -u +%FT%TZ) $(uptime)"
echo "# campaign $CAMPAIGN, budget $BUDGET, lag $LAG, --procs $PROCS per host, store parts $PARTS, $(nproc) cores"
/usr/bin/time -f 'cpu %U %S' -o "$tmp/local.time" "$BIN" run "$CAMPAIGN" --budget "$BUDGET" --lag "$LAG" \
	--isolate=false --workers 1 --quiet --json --out "$tmp/local" >"$tmp/local.json" || [ $? -le 1 ]
local_cpu=$(cpu "$tmp/local.time")
printf 'local, 1 in-process worker: %.2f ms CPU per simulation\n' "$(echo "$local_cpu*1000/$BUDGET" | bc -l)"
printf '%-6s %8s %8s %18s %18s %10s %18s\n' hosts wall_s sims/s coord_ms_cpu/sim hosts_ms_cpu/sim share stores_ms_cpu/sim
for n in "$@"; do
	hp=()
	for i in $(seq "$n"); do
		# /usr/bin/time counts the host and its worker processes.
		hprof=()
		[ -z "$PROFILE" ] || { mkdir -p "$PROFILE"; hprof=(--cpuprofile "$PROFILE/host-$n-$i.pprof"); }
		/usr/bin/time -f 'cpu %U %S' -o "$tmp/host-$n-$i.time" "$BIN" worker --nats "$URL" --procs "$PROCS" --quiet "${debug[@]}" "${hprof[@]}" 2>"$tmp/host-$n-$i.log" &
		hp+=($!)
		pids+=($!)
	done
	sp=()
	parts=()
	if [ "$PARTS" -gt 0 ]; then
		parts=(--store-parts "$PARTS")
		for j in $(seq 0 $((PARTS - 1))); do
			sprof=()
			[ -z "$PROFILE" ] || { mkdir -p "$PROFILE"; sprof=(--cpuprofile "$PROFILE/store-$n-$j.pprof"); }
			/usr/bin/time -f 'cpu %U %S' -o "$tmp/store-$n-$j.time" "$BIN" store --nats "$URL" --part "$j" --quiet "${debug[@]}" "${sprof[@]}" 2>"$tmp/store-$n-$j.log" &
			sp+=($!)
			pids+=($!)
		done
	fi
	prof=()
	if [ -n "$PROFILE" ]; then
		mkdir -p "$PROFILE"
		prof=(--cpuprofile "$PROFILE/coord-$n.pprof")
	fi
	# Not 2>/dev/stderr: that would truncate a file the script's own
	# stderr goes to.
	clog=$tmp/coord-$n.log
	start=$(date +%s.%N)
	/usr/bin/time -f 'cpu %U %S' -o "$tmp/coord-$n.time" "$BIN" run "$CAMPAIGN" --budget "$BUDGET" --lag "$LAG" \
		--nats "$URL" "${parts[@]}" --quiet "${debug[@]}" --json --out "$tmp/cluster-$n" "${prof[@]}" >"$tmp/cluster-$n.json" 2>"$clog" || [ $? -le 1 ]
	end=$(date +%s.%N)
	[ -n "$KEEP" ] || cat "$clog" >&2
	# The hosts leave on SIGINT (GNU time passes it on to none: signal
	# each host, the child of its time process, by its PID).
	for p in "${hp[@]}" "${sp[@]}"; do
		# shellcheck disable=SC2046 # one PID a word
		kill -INT $(ps -o pid= --ppid "$p") 2>/dev/null || true
	done
	scpu=0
	for j in $(seq 0 $((PARTS - 1))); do
		wait "${sp[$j]}" 2>/dev/null || true
		scpu=$(echo "$scpu + $(cpu "$tmp/store-$n-$j.time")" | bc -l)
	done
	wcpu=0
	for i in $(seq "$n"); do
		wait "${hp[$((i - 1))]}" 2>/dev/null || true
		wcpu=$(echo "$wcpu + $(cpu "$tmp/host-$n-$i.time")" | bc -l)
	done
	wall=$(echo "$end - $start" | bc -l)
	ccpu=$(cpu "$tmp/coord-$n.time")
	printf '%-6s %8.1f %8.1f %18.2f %18.2f %9.1f%% %18.2f\n' "$n" "$wall" "$(echo "$BUDGET/$wall" | bc -l)" \
		"$(echo "$ccpu*1000/$BUDGET" | bc -l)" "$(echo "$wcpu*1000/$BUDGET" | bc -l)" "$(echo "100*$ccpu/$wcpu" | bc -l)" \
		"$(echo "$scpu*1000/$BUDGET" | bc -l)"
	# Same campaign, same lag: the same regions as the local run.
	if ! cmp -s <(grep -A30 '"regions"' "$tmp/local.json" | head -30) <(grep -A30 '"regions"' "$tmp/cluster-$n.json" | head -30); then
		echo "bench/cluster.sh: the cluster run with $n hosts covered other regions than the local run" >&2
		exit 1
	fi
done
echo "# $(date -u +%FT%TZ) $(uptime)"
echo "# hosts_ms_cpu/sim: the worker hosts and their worker processes; share: the coordinator's CPU over the hosts' (1% feeds 100 cores)"
echo "# stores_ms_cpu/sim: the store processes (PARTS), summed"
