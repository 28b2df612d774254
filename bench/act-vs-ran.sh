#!/usr/bin/env bash
# act-vs-ran.sh: what a campaign's selection method costs (issue 52 item 5).
# Runs ACT and RAN side by side, alternating, on the same campaign and
# budget, and prints each run's simulations per second of wall time and
# per CPU-second and regions at k=16 per CPU-second (the campaign process and its worker processes: GNU
# time's user+sys, which counts reaped children), its finding groups and
# where ACT's simulations went (its steps). A campaign whose conditions
# fire often (examples/make-run.yaml: cubic-aggressive) against the
# default one (no file: conditions seldom hit) says whether findings make
# ACT slow.
#
#   bench/act-vs-ran.sh [BUDGET [ROUNDS [CAMPAIGN...]]]
#   bench/act-vs-ran.sh 500 2 default examples/make-run.yaml
#
# "default" stands for `run` without a campaign file. Needs GNU time
# (/usr/bin/time) and jq. Exit 0, 2 bad arguments, 3 a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-500} rounds=${2:-2}
shift $(( $# >= 2 ? 2 : $# ))
camps=("$@")
[ ${#camps[@]} -gt 0 ] || camps=(default examples/make-run.yaml)
[[ $budget =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ ]] || { echo "act-vs-ran.sh: BUDGET and ROUNDS are integers" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "act-vs-ran.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
command -v jq >/dev/null || { echo "act-vs-ran.sh: needs jq" >&2; exit 2; }
mkdir -p .build out
go build -o .build/actfuzz ./cmd/actfuzz || exit 3
tmp=$(mktemp -d out/act-vs-ran.XXXXXX)
printf '%-28s %-4s %5s %8s %9s %9s %10s %8s %12s %6s %5s  %s\n' campaign meth round wall_s cpu_s sims/s sims/cpu_s k16 k16/cpu_s groups load steps
for r in $(seq 1 "$rounds"); do
	for camp in "${camps[@]}"; do
		for m in act ran; do
			out=$tmp/$(basename "$camp" .yaml)-$m-$r
			args=(run)
			[ "$camp" = default ] || args+=("$camp")
			args+=(--method "$m" --budget "$budget" --workers 1 --out "$out" --quiet --json)
			load=$(cut -d' ' -f1 /proc/loadavg)
			s=0
			/usr/bin/time -f '%e %U %S' -o "$out.time" .build/actfuzz "${args[@]}" >"$out.json" 2>"$out.err" || s=$?
			[ $s -le 1 ] || { echo "act-vs-ran.sh: $camp $m: exit $s" >&2; cat "$out.err" >&2; exit 3; }
			read -r wall user sys < <(tail -1 "$out.time") # GNU time writes an exit-status line first when it is not 0
			cpu=$(echo "$user + $sys" | bc -l)
			sims=$(jq '.report.sims' "$out.json")
			groups=$(jq '.findings | length' "$out.json")
			steps=$(jq -c '.report.step_sims' "$out.json")
			k16=$(jq '.report.regions["16"]' "$out.json")
			printf '%-28s %-4s %5s %8.1f %9.1f %9.1f %10.1f %8d %12.1f %6s %5s  %s\n' "$camp" "$m" "$r" "$wall" "$cpu" \
				"$(echo "$sims / $wall" | bc -l)" "$(echo "$sims / $cpu" | bc -l)" "$k16" "$(echo "$k16 / $cpu" | bc -l)" "$groups" "$load" "$steps"
		done
	done
done
echo "outputs: $tmp"
