#!/usr/bin/env bash
# ns3-models.sh: the ns-3.37 hunt of docs/hunts/2026-11-28-ns3-models.md.
# One campaign per ns-3 model, run one after the other for PER of wall
# time each, every oracle on, under nice -n 19. A campaign's ccai: list
# is its flows (one ccai per flow), so a single campaign listing all 17
# models would be one 17-flow scenario (and over max_flows), not a hunt
# of each: one campaign per model gives each the same wall-time share.
#
#   bench/hunts/ns3-models.sh OUTROOT [PER] [model...]
#   bench/hunts/ns3-models.sh out/hunt-ns3 70s
#
# An existing campaign under OUTROOT/MODEL is resumed (--resume). The
# per-model yaml is OUTROOT/MODEL.yaml. Triage separately:
#   for d in OUTROOT/*/; do .build/actfuzz triage "$d" --minimize-runs 40; done
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: bench/hunts/ns3-models.sh OUTROOT [PER] [model...]" >&2; exit 2; }
root=$1 per=${2:-210s}
shift $(($# >= 2 ? 2 : 1))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(bbr bic cubic dctcp highspeed htcp hybla illinois ledbat lp newreno reno scalable vegas veno westwood yeah)
[[ $per =~ ^[0-9]+(s|m|h)$ ]] || { echo "ns3-models.sh: PER $per: want e.g. 70s or 3m" >&2; exit 2; }
mkdir -p .build "$root"
go build -o .build/actfuzz ./cmd/actfuzz || exit 3
for m in "${models[@]}"; do
	camp=$root/$m.yaml
	cat >"$camp" <<YAML
# bench/hunts/ns3-models.sh: ns-3.37 model $m, every oracle, $per of wall time.
ccai: [$m]
profile: linux
oracles: all
budget: 100000000
YAML
	resume=()
	[ -f "$root/$m/campaign.yaml" ] && resume=(--resume)
	echo "# $(date -u +%H:%M:%S) ns3 $m $per (load $(cut -d' ' -f1-3 /proc/loadavg))"
	rc=0
	nice -n 19 .build/actfuzz run "$camp" --subject ns3 --duration "$per" --workers 1 --out "$root/$m" "${resume[@]}" --json >"$root/$m.run.json" || rc=$?
	echo "#   $m exit $rc"
	[ $rc -le 1 ] || echo "ns3-models.sh: $m: run exited $rc" >&2
done
echo "# $(date -u +%H:%M:%S) done (load $(cut -d' ' -f1-3 /proc/loadavg))"
