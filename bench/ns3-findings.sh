#!/usr/bin/env bash
# ns3-findings.sh: build and run actfuzz's standalone ns-3 reproducers
# (testdata/ns3/findings/*.cc, or the ones named) against the installed
# ns-3 (`make ns3` installs Debian's libns3-dev, ns-3.37). Each scenario
# is plain ns-3 (no actfuzz code) and exits 1 when it shows its finding, 0
# when it does not (a fixed ns-3), 2 when it did not reproduce its setup;
# docs/bugs/ns3-*.md describe each. Prints one line per scenario; exit 0
# when every scenario showed its finding, 1 otherwise, 2 bad setup.
#
#   bench/ns3-findings.sh [SCENARIO.cc ...]      (make ns3-findings)
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CXX:-g++}
NS3_LIBS=${NS3_LIBS:--lns3-core -lns3-network -lns3-internet -lns3-point-to-point -lns3-applications -lns3-traffic-control}
OUT=${OUT:-.build/ns3-findings}
[ -f /usr/include/ns3/core-module.h ] || [ -n "${NS3_INC:-}" ] || { echo "ns3-findings: no ns-3 headers: run \`make ns3\`" >&2; exit 2; }
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(testdata/ns3/findings/*.cc)
mkdir -p "$OUT"
all=0
for s in "${scenarios[@]}"; do
	[ -f "$s" ] || { echo "ns3-findings: no scenario $s" >&2; exit 2; }
	name=$(basename "$s" .cc)
	# shellcheck disable=SC2086 # NS3_LIBS and NS3_INC are word lists
	$CXX -std=c++17 -O2 ${NS3_INC:-} "$s" $NS3_LIBS -o "$OUT/$name" || { echo "ns3-findings: $s does not build" >&2; exit 2; }
	rc=0
	"$OUT/$name" >"$OUT/$name.log" 2>&1 || rc=$?
	case $rc in
	1) echo "$s: finding shown: $(grep -m1 '^FINDING' "$OUT/$name.log")" ;;
	0) echo "$s: not shown (a fixed ns-3?): $(tail -1 "$OUT/$name.log")"; all=1 ;;
	*) echo "$s: setup not reproduced (exit $rc): $(tail -1 "$OUT/$name.log")"; all=1 ;;
	esac
done
exit $all
