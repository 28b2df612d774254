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
echo "load before: $(cat /proc/loadavg)"
COORD_SIMS=$SIMS go test -run '^$' -bench '^BenchmarkCoordinatorReplay$' -benchtime 3x \
	-cpuprofile "$tmp/cpu.pprof" -o "$tmp/act.test" ./act/ | tee "$tmp/bench.txt" | grep -v '^ \|condition '
echo "load after: $(cat /proc/loadavg)"
# The profile covers the recording too: only the replay's Run is kept
# (focus on the replayer's campaign: Run called from the benchmark loop
# after the recording; the recording's simulations are the worker's).
total() { go tool pprof -top -nodefraction=0 -edgefraction=0 "$@" "$tmp/act.test" "$tmp/cpu.pprof" 2>/dev/null |
	sed -n 's/^Showing nodes accounting for \([^,]*\),.*/\1/p'; }
sims=$(( SIMS * 3 ))
ign='resultRecorder|\(\*worker\)\.run|Runner\)\.Run'
part() { # name, focus regexp
	t=$(total -focus="$2" -ignore="$ign")
	printf '%-22s %10s  (%s)\n' "$1" "${t:-0}" "$2"
}
echo "coordinator CPU over $sims replayed simulations (profile samples; the recording's workers ignored):"
part all 'act\.Run$'
part selection 'selector\)\.nextBatch'
part merge 'AddBatches|AddNews|coverage\.\(\*merger'
part conditions/oracles 'verifier|addFinding|addFault|newGroup|writeFinding'
part checkpoint 'saveCheckpoint|writeStatus|writeOutputs|configLog'
part I/O 'fromMessage|UnmarshalBinary|newExternal'
part GC 'runtime\.gcBgMarkWorker'
