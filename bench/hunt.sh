#!/usr/bin/env bash
# hunt.sh: a hunt, measured (issue 50 item 4). Runs a campaign of one
# congestion control on a subject with every oracle on for DURATION of
# wall time, triages its findings (actfuzz triage), and prints one block
# that the next change can be compared on: simulations, wall time,
# regions at k=16, root causes by class, and each group's first hit
# (simulation and wall time).
#
#   bench/hunt.sh SUBJECT CCA DURATION [extra run flags...]
#   bench/hunt.sh native cubic 10m
#   bench/hunt.sh gvisor reno 1h --workers 2
#
# Environment: OUT (default out/hunt-SUBJECT-CCA-UTCTIME; an existing
# campaign there is resumed), CAMPAIGN (a campaign file to run instead of
# the generated one, e.g. bench/hunts/linux-bbr.yaml: the kernel subject
# refuses the default P, whose bw reaches 10 Gbit/s; the quic subject refuses
# profiles: CAMPAIGN=bench/hunts/quic-reno.yaml), PROFILE (the campaign's profile:, default
# linux), RUNS (triage --runs, default 20), FIRST (first hits listed, 10). Needs jq. Exit: 0 done, 2 bad
# arguments, 3 the campaign or the triage failed.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: bench/hunt.sh SUBJECT CCA DURATION [run flags...]   (SUBJECT: native, ns3, gvisor, linux, quic; DURATION: 30m, 1h, …)" >&2; exit 2; }
[ $# -ge 3 ] || usage
subject=$1 cca=$2 duration=$3
shift 3
case $subject in native | ns3 | gvisor | linux | quic) ;; *) echo "hunt.sh: SUBJECT $subject: want native, ns3, gvisor, linux or quic" >&2; exit 2 ;; esac
[[ $cca =~ ^[A-Za-z0-9_.+-]+$ ]] || { echo "hunt.sh: CCA $cca: want a congestion control's name" >&2; exit 2; }
[[ $duration =~ ^[0-9]+(s|m|h)$ ]] || { echo "hunt.sh: DURATION $duration: want e.g. 30m or 1h" >&2; exit 2; }
command -v jq >/dev/null || { echo "hunt.sh: needs jq" >&2; exit 2; }
out=${OUT:-out/hunt-$subject-$cca-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p .build "$out"
go build -o .build/actfuzz ./cmd/actfuzz || exit 3
bin=.build/actfuzz
camp=$out.yaml
if [ -n "${CAMPAIGN:-}" ]; then
	[ -f "$CAMPAIGN" ] || { echo "hunt.sh: CAMPAIGN $CAMPAIGN: no such file" >&2; exit 2; }
	cp "$CAMPAIGN" "$camp"
else
	cat >"$camp" <<YAML
# bench/hunt.sh: $cca on $subject, every oracle, $duration of wall time.
ccai: [$cca]
profile: ${PROFILE:-linux}
oracles: all
budget: 100000000
YAML
fi
resume=()
[ -f "$out/campaign.yaml" ] && resume=(--resume)
echo "# hunt $subject $cca $duration: $out (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
rc=0
t0=$SECONDS
"$bin" run "$camp" --subject "$subject" --duration "$duration" --out "$out" "${resume[@]}" --json "$@" >"$out.run.json" || rc=$?
[ $rc -le 1 ] || { echo "hunt.sh: run exited $rc" >&2; exit 3; }
rc=0
t1=$SECONDS
"$bin" triage "$out" --runs "${RUNS:-20}" --json >"$out.triage.json" || rc=$?
[ $rc -le 1 ] || { echo "hunt.sh: triage exited $rc" >&2; exit 3; }
t2=$SECONDS
echo "subject $subject  cca $cca  duration $duration  dir $out  (campaign $((t1 - t0)) s, triage $((t2 - t1)) s of wall time)"
jq -r '.report | "sims \(.sims)  wall \(.wall_s | floor) s  regions at k=16: \(.regions["16"] // 0)  finding groups \(.findings)"' "$out.run.json"
echo "findings by class (groups, of which confirmed):"
jq -r '[.results // [] | group_by(.class)[] | {class: .[0].class, groups: length, confirmed: (map(select(.confirmed)) | length)}]
	| if length == 0 then "  none" else .[] | "  \(.class): \(.groups) groups, \(.confirmed) confirmed" end' "$out.triage.json"
echo "first hits (condition, sim, wall s, class; the first ${FIRST:-10} groups):"
jq -r --argjson n "${FIRST:-10}" '.results // [] | sort_by(.first_sim) | (.[:$n][] | "  \(.condition)  sim \(.first_sim)  \(.first_wall_s * 10 | floor / 10) s  \(.class)"), (if length > $n then "  … \(length - $n) more groups" else empty end)' "$out.triage.json"
echo "first hit of each condition (sim, wall s):"
jq -r '.results // [] | group_by(.condition)[] | min_by(.first_sim) | "  \(.condition)  sim \(.first_sim)  \(.first_wall_s * 10 | floor / 10) s"' "$out.triage.json"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
