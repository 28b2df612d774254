#!/usr/bin/env bash
# pkt-kernel.sh: run actfuzz's kernel-finding reproducers (packetdrill
# scripts under testdata/packetdrill/findings, or the ones named) on the
# running kernel, each RUNS times in its own network namespace, and say how
# often each held: a real kernel is not deterministic (issue 50).
#
#   bench/pkt-kernel.sh [RUNS] [SCRIPT.pkt ...]      (make pkt-findings)
#
# A script passes when the kernel behaves as the finding says (its
# %{ assert }% blocks pin the behaviour); docs/bugs/linux-*.md say what the
# RFC-conformant behaviour would be. The scripts start with the suite's
# ../common/defaults.sh, so each runs with cwd = the suite copy's
# tcp/fast_recovery directory. Exit 0 when every script held every run, 1
# when one did not, 2 bad setup (as packetdrill-baseline.sh).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PACKETDRILL=${PACKETDRILL:-bin/packetdrill}
PACKETDRILL_SRC=${PACKETDRILL_SRC:-../shared/packetdrill}
TIMEOUT=${TIMEOUT:-120}
CONGCTL=${CONGCTL-cubic}
SUITE=${SUITE:-.build/packetdrill-suite}
LOGDIR=${LOGDIR:-out/pkt-kernel-$(date -u +%Y%m%dT%H%M%SZ)}
die() { echo "pkt-kernel: $*" >&2; exit 2; }
# shellcheck source=bench/packetdrill-lib.sh
. bench/packetdrill-lib.sh

RUNS=10
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then RUNS=$1; shift; fi
[ "$RUNS" -ge 1 ] || die "RUNS must be at least 1"
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(testdata/packetdrill/findings/*.pkt)
for s in "${scripts[@]}"; do [ -f "$s" ] || die "no script $s"; done

pd_check_setup
pd_prepare_suite
pd_make_shim
mkdir -p "$LOGDIR"
dir=$SUITE/gtests/net/tcp/fast_recovery
echo "pkt-kernel: ${#scripts[@]} scripts x $RUNS runs on $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); logs in $LOGDIR"
all=0
for s in "${scripts[@]}"; do
	held=0
	name=$(basename "$s" .pkt)
	for r in $(seq 1 "$RUNS"); do
		if pd_run "$dir" "$(realpath "$s")" ipv4 "$LOGDIR/$name.$r.log"; then
			held=$((held + 1))
		fi
	done
	echo "$s: held $held/$RUNS"
	[ "$held" -eq "$RUNS" ] || all=1
done
exit $all
