#!/usr/bin/env bash
# bench/scale.sh [SECONDS] [W...]: a campaign's scaling against the
# physical limit (issue 52, item 4). For each W (default 1 2), side by
# side in time:
#   limit:    W independent loops of `actfuzz sim` (the default campaign's
#             typical configuration: CUBIC, the default environment and
#             bytes, seeds 1, 2, …) for SECONDS (default 30): simulations
#             per second summed over the loops;
#   campaign: `actfuzz run --duration SECONDS --workers W` on the default
#             campaign (isolated workers, as by default): its status.json
#             sims / wall_s;
# and their ratio (goal ≥ 0.9). A sim process starts a program for each
# simulation: that start-up is counted against the limit, which makes the
# limit lower and the ratio higher than a loop inside one process; the
# script also prints one sim's start-to-end time for that.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
shift || true
WS=("$@")
[ $# -eq 0 ] && WS=(1 2)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/actfuzz" ./cmd/actfuzz
BIN=$tmp/actfuzz
limit() { # W: sims per second of W sim loops over SECS
	local w=$1 end=$((SECONDS + SECS)) pids=()
	for i in $(seq "$w"); do
		(n=0; s=$i; while [ $SECONDS -lt $end ]; do "$BIN" sim --seed $s >/dev/null; n=$((n+1)); s=$((s+w)); done; echo $n >"$tmp/limit-$w-$i") &
		pids+=($!)
	done
	wait "${pids[@]}"
	cat "$tmp"/limit-"$w"-* | awk -v t="$SECS" '{n+=$1} END {printf "%.2f", n/t}'
}
campaign() { # W: the default campaign's sims per second with W workers
	local w=$1 out=$tmp/run-$1
	# A run ended by --duration before its budget exits 1 (not done).
	"$BIN" run --quiet --duration "${SECS}s" --workers "$w" --out "$out" >/dev/null 2>"$tmp/run-$w.log" || true
	[ -s "$out/status.json" ] || { cat "$tmp/run-$w.log" >&2; exit 3; }
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%.2f" % (s["sims"]/s["wall_s"]))' "$out/status.json"
}
printf 'W  limit(sims/s)  campaign(sims/s)  ratio  load\n'
for w in "${WS[@]}"; do
	l=$(limit "$w")
	c=$(campaign "$w")
	printf '%s  %s  %s  %s  %s\n' "$w" "$l" "$c" "$(awk -v a="$c" -v b="$l" 'BEGIN {printf "%.2f", a/b}')" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
