#!/usr/bin/env bash
# The default campaign for a night (or less), sampled every 30 s.
#   bench/overnight.sh DURATION [OUT] [-- extra actfuzz run flags]
# e.g. bench/overnight.sh 60m, bench/overnight.sh 8h out/night -- --memory 1GB
#
# Runs `actfuzz run` on the paper's default campaign (no campaign file) with
# an unbounded budget for DURATION, and every 30 s appends to OUT/samples.csv:
# elapsed seconds, RSS of the campaign process and of its whole process tree
# (isolated workers included), simulations, sims/s over the last interval,
# the store's bytes and pooled states, visits, the regions at k = 1, 16 and
# 128, and where the store keeps exact sets and pools. At the end it plots
# OUT/samples.png and prints the last sample, the peak of the memory figures
# (bounded by the campaign's budget) and a power-law extrapolation of
# simulations and regions to 8 hours (bench/overnightplot). Needs only Go.
# ACTFUZZ_BIN=path runs that binary instead of building bin/actfuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:?usage: bench/overnight.sh DURATION [OUT] [-- flags]}
shift
out=out/overnight-$(date -u +%Y%m%dT%H%M%SZ)
if [ $# -gt 0 ] && [ "$1" != "--" ]; then out=$1; shift; fi
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
[ -n "${ACTFUZZ_BIN:-}" ] || make --no-print-directory build >/dev/null
go build -o bin/overnightplot ./bench/overnightplot
csv=$out/samples.csv
echo "elapsed_s,rss_mb,tree_rss_mb,sims,sims_per_s,store_mb,pooled_states,visits,regions_k1,regions_k16,regions_k128,exact_from_k,pools_at_k" > "$csv"

"${ACTFUZZ_BIN:-bin/actfuzz}" run --duration "$dur" --budget 1000000000 --quiet --out "$out/campaign" "$@" > "$out/run.txt" 2> "$out/run.err" &
pid=$!
trap 'kill $pid 2>/dev/null || true' INT TERM

# rss PID: resident set of one process in MB (0 once it is gone).
rss() { awk '/^VmRSS:/ {printf "%.1f", $2/1024; f=1} END {if (!f) printf "0"}' /proc/"$1"/status 2>/dev/null || echo 0; }
# tree_rss PID: the process and all its descendants.
tree_rss() {
	local total=0 p
	for p in $1 $(pgrep -P "$1" 2>/dev/null || true); do
		total=$(awk -v a="$total" -v b="$(rss "$p")" 'BEGIN {printf "%.1f", a+b}')
	done
	echo "$total"
}
start=$(date +%s)
lastsims=0
lastt=$start
while kill -0 $pid 2>/dev/null; do
	sleep 30
	kill -0 $pid 2>/dev/null || break
	now=$(date +%s)
	st=$out/campaign/status.json
	[ -f "$st" ] || continue
	r=$(rss $pid) tr=$(tree_rss $pid)
	[ "$r" != 0 ] || break # the campaign ended during the interval
	bin/overnightplot sample "$st" "$((now - start))" "$r" "$tr" "$lastsims" "$((now - lastt))" >> "$csv"
	lastsims=$(tail -1 "$csv" | cut -d, -f4)
	lastt=$now
done
wait $pid || true
bin/overnightplot "$csv" "$out/samples.png"
echo "samples: $csv, plot: $out/samples.png, campaign: $out/campaign"
