#!/usr/bin/env bash
# False-positive campaigns of the oracle library (issue 46): for each CCA,
# a campaign of BUDGET simulations with profile linux, no conditions of its
# own (so every oracle that applies to the CCA and subject is on), and
# the default parameter and state tables. Every hit must be explained in
# the oracle's doc (docs/oracles.md) or fixed.
#
#   bench/oracle-fp.sh SUBJECT BUDGET OUT CCA...
#   bench/oracle-fp.sh native 2000 /tmp/fp reno cubic bbr
#
# Writes OUT/CCA/ (the campaign) and prints one line per CCA: wall time,
# simulations, and per oracle its groups and hits (from findings.md).
# DCTCP runs with ECN on (RFC 8257 needs it; without marks it is Reno).
# EXTRA=FILE appends FILE's YAML to every campaign: the kernel subject
# needs a P its emulator holds (bench/oracle-fp-linux.yaml: that of
# examples/linux-undo.yaml).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 SUBJECT BUDGET OUT CCA..." >&2; exit 2; }
subject=$1 budget=$2 out=$3
shift 3
bin=${ACTFUZZ:-bin/actfuzz}
workers=${WORKERS:-2}
mkdir -p "$out"
for cca in "$@"; do
	dir=$out/$cca
	rm -rf "$dir"
	yaml=$out/$cca.yaml
	{
		echo "ccai: [$cca]"
		echo "profile: linux"
		echo "budget: $budget"
		if [ -n "${EXTRA:-}" ]; then
			cat "$EXTRA"
		elif [ "$cca" = dctcp ]; then
			echo "params:"
			echo "  ecn: {values: [on]}"
		fi
	} >"$yaml"
	start=$(date +%s)
	rc=0
	"$bin" run --subject "$subject" --workers "$workers" --quiet --out "$dir" "$yaml" >"$out/$cca.log" 2>&1 || rc=$?
	secs=$(($(date +%s) - start))
	hits=$(awk -F'|' '/^\| [a-z]/ && NF > 5 && $2 !~ /^ condition / { gsub(/ /, "", $2); gsub(/ /, "", $4); gsub(/ /, "", $5); printf "%s %s/%s; ", $2, $4, $5 }' "$dir/findings.md" 2>/dev/null || true)
	echo "$subject $cca rc=$rc ${secs}s load=$(cut -d' ' -f1-3 /proc/loadavg) ${hits:-no findings}"
done
