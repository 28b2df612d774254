#!/usr/bin/env bash
# bench/coord.sh [SIMS]: the coordinator with zero-cost workers (issue 52,
# item 1). act's BenchmarkCoordinatorReplay records the default campaign's
# worker results (SIMS simulations from simulation 0, default 320) once,
# checks that the recording run equals an in-process run, then replays the
# results to Run as fast as it takes them, checking that the replay
# reaches the same coverage and findings. It prints simulations per
# coordinator CPU second, one worker's simulations per CPU second, their
# ratio (worker cores one coordinator core feeds) and, from the replay's
# CPU profile, the split of the coordinator's CPU per simulation.
set -euo pipefail
cd "$(dirname "$0")/.."
SIMS=${1:-320}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "${KEEP:-}" ] && trap - EXIT && echo "profile in $tmp"
echo "load before: $(cat /proc/loadavg)"
COORD_PROFILE=$tmp/cpu.pprof COORD_SIMS=$SIMS go test -run '^$' -bench '^BenchmarkCoordinatorReplay$' -benchtime 3x \
	-o "$tmp/act.test" ./act/ | tee "$tmp/bench.txt" | grep -v '^ \|condition '
echo "load after: $(cat /proc/loadavg)"
# The profile covers the replays only (COORD_PROFILE). The verifier's
# replays of new findings run simulations on the coordinator, as with any
# Executor (verify.go); not with local workers: they are apart.
total() { go tool pprof -top -nodefraction=0 -edgefraction=0 "$@" "$tmp/act.test" "$tmp/cpu.pprof" 2>/dev/null |
	sed -n 's/^Showing nodes accounting for \([^,]*\),.*/\1/p'; }
sims=$(( SIMS * 3 ))
part() { # name, focus regexp
	t=$(total -focus="$2")
	printf '%-22s %10s  (%s)\n' "$1" "${t:-0}" "$2"
}
echo "coordinator CPU over $sims replayed simulations (profile samples):"
part all '.'
part selection 'selector\)\.nextBatch'
part merge 'AddBatches|AddNews|coverage\.\(\*merger'
part conditions/oracles 'addFinding|addFault|newGroup|writeFinding'
part verifier-replays 'verifier'
part checkpoint 'saveCheckpoint|writeStatus|writeOutputs|configLog'
part I/O 'fromMessage|UnmarshalBinary|newExternal'
part GC 'runtime\.gcBgMarkWorker'
