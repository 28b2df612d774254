#!/usr/bin/env bash
# bench/soak.sh DURATION BUDGET: the default campaign (examples/make-run.yaml)
# with a budget of BUDGET simulations, run under load (bench/load.sh) and
# killed with kill -9 at random moments, resumed each time, until it ends;
# then another with the next seed, and so on until DURATION (seconds, or
# with an s, m or h suffix) has passed (the last one runs to its end).
# Then each campaign again, unloaded and without kills, and each pair
# compared: findings (every group's condition, hits, first simulation,
# flow, time and seed file) and regions at every k. A campaign's result
# depends only on its seed and budget, never on kills, resumes, load or
# timing: any difference is a failure (exit 1).
#
# Campaigns in a row, not one sized to last DURATION: how many simulations
# an hour holds under load is not known in advance (at load 50 on 2 cores
# a campaign checkpointed nothing in its first 350 s; at load 10 it ran
# 4.6 a second), and a budget changes a campaign's course (warm-up,
# window), so it cannot be raised on a resume.
#
#   bench/soak.sh 1h 2000      # the issue's soak (issue 47 item 6)
#   bench/soak.sh 2m 500       # a quick check of this script
#
# Environment: LOAD_PER_CORE (8) busy processes per core, KILL_MIN and
# KILL_MAX (45, 300) seconds between kills (and never before the run
# killed has checkpointed simulations of its own), WORKERS (2), SEED (20261128,
# the first campaign's), OUT (a new directory under /tmp; kept), ACTFUZZ
# (bin/actfuzz). Needs python3 to read the JSON. Prints one line per kill
# and a summary; ends only its own processes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: bench/soak.sh DURATION BUDGET" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/soak.sh: needs python3" >&2; exit 2; }
secs() {
  case $1 in
    *h) echo $((${1%h} * 3600)) ;; *m) echo $((${1%m} * 60)) ;; *s) echo "${1%s}" ;;
    *[!0-9]*|'') echo "bench/soak.sh: DURATION $1: want seconds or a number with s, m or h" >&2; exit 2 ;;
    *) echo "$1" ;;
  esac
}
duration=$(secs "$1")
budget=$2
bin=${ACTFUZZ:-bin/actfuzz}
[ -x "$bin" ] || { echo "bench/soak.sh: no $bin: run make build" >&2; exit 2; }
per_core=${LOAD_PER_CORE:-8}
kill_min=${KILL_MIN:-45} kill_max=${KILL_MAX:-300}
workers=${WORKERS:-2}
seed=${SEED:-20261128}
out=${OUT:-$(mktemp -d /tmp/soak.XXXXXX)}
mkdir -p "$out"
# campaign N: its file, and its output directories under soaked/ and
# reference/.
campaign_file() {
  local f=$out/campaign-$1.yaml
  { grep -v '^ *budget:\|^ *seed:' examples/make-run.yaml; echo "budget: $budget"; echo "seed: $((seed + $1))"; } >"$f"
  echo "$f"
}

load_pid= run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill -9 "$run_pid" 2>/dev/null || true
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

sims() { grep -o '"sims": *[0-9]*' "$1/status.json" 2>/dev/null | grep -o '[0-9]*$' || echo 0; }

bench/load.sh $((per_core * $(nproc))) $((duration * 3 + 600)) >/dev/null & load_pid=$!
start=$SECONDS kills=0 n=0
echo "soak: $out: campaigns of $budget simulations under $((per_core * $(nproc))) busy processes for at least $duration s, kill -9 every $kill_min–$kill_max s"
# soak_one N: campaign N under load, killed and resumed until it ends.
soak_one() {
  local campaign dir flag=() rc wait_s before
  campaign=$(campaign_file "$1") dir=$out/soaked/$1
  while :; do
    "$bin" run --quiet --workers "$workers" --out "$dir" "${flag[@]}" "$campaign" >>"$out/soaked-$1.log" 2>&1 & run_pid=$!
    flag=(--resume)
    wait_s=$((kill_min + RANDOM % (kill_max - kill_min + 1)))
    before=$(sims "$dir")
    for _ in $(seq "$wait_s"); do kill -0 "$run_pid" 2>/dev/null || break; sleep 1; done
    # Not before this run checkpointed something new: a kill before the
    # first checkpoint of each run makes no progress at all (at load 48
    # a first batch took longer than 400 s), and the soak would never end.
    while kill -0 "$run_pid" 2>/dev/null && [ "$(sims "$dir")" -le "$before" ]; do sleep 5; done
    if ! kill -0 "$run_pid" 2>/dev/null; then
      rc=0; wait "$run_pid" || rc=$?
      run_pid=
      [ "$rc" -le 1 ] || { echo "soak: campaign $1 exited $rc (see $out/soaked-$1.log)" >&2; exit 1; }
      return
    fi
    kill -9 "$run_pid"; wait "$run_pid" 2>/dev/null || true; run_pid=
    kills=$((kills + 1))
    echo "soak: kill -9 #$kills at $((SECONDS - start)) s, campaign $1: $(sims "$dir") simulations checkpointed; load $(cut -d' ' -f1 /proc/loadavg)"
  done
}
while [ $((SECONDS - start)) -lt "$duration" ]; do
  soak_one "$n"
  echo "soak: campaign $n (seed $((seed + n))) ended at $((SECONDS - start)) s"
  n=$((n + 1))
done
took=$((SECONDS - start))
kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; load_pid=
echo "soak: $n campaigns of $budget simulations in $took s under load, $kills kills and resumes; the references, unloaded"
summary() {
  python3 - "$1" <<'PY'
import json, sys
d = sys.argv[1]
st = json.load(open(d + "/status.json"))
f = json.load(open(d + "/findings.json"))
rows = []
for c in f["conditions"]:
    rows.append("%s hits %s" % (c["condition"], c["hits"]))
    for g in c["groups"]:
        rows.append("%s group first_sim %s hits %s flow %s at_s %.9f seed %s" % (
            c["condition"], g["first_sim"], g["hits"], g["flow"], g["at_s"], g["seed"].rsplit("/", 1)[-1]))
print("sims", st["sims"])
print("regions", json.dumps(st["regions"], sort_keys=True))
for r in sorted(rows):
    print("group", r)
PY
}
bad=0
for i in $(seq 0 $((n - 1))); do
  ref=$out/reference/$i t0=$SECONDS rc=0
  "$bin" run --quiet --workers "$workers" --out "$ref" "$out/campaign-$i.yaml" >"$out/reference-$i.log" 2>&1 || rc=$?
  [ "$rc" -le 1 ] || { echo "soak: reference $i exited $rc (see $out/reference-$i.log)" >&2; exit 1; }
  summary "$out/soaked/$i" >"$out/soaked-$i.summary"
  summary "$ref" >"$out/reference-$i.summary"
  if diff "$out/reference-$i.summary" "$out/soaked-$i.summary" >"$out/diff-$i.txt"; then
    echo "soak: campaign $i (seed $((seed + i))): same findings and regions as unloaded ($(grep -c ' group ' "$out/soaked-$i.summary") finding groups; regions $(grep '^regions' "$out/soaked-$i.summary" | cut -c9-200)); the reference took $((SECONDS - t0)) s"
  else
    echo "soak: campaign $i (seed $((seed + i))): DIFFERENT from the unloaded run:"; cat "$out/diff-$i.txt"; bad=$((bad + 1))
  fi
done
[ "$bad" -eq 0 ] || { echo "soak: $bad of $n campaigns differ" >&2; exit 1; }
echo "soak: all $n campaigns ($((n * budget)) simulations, $took s under load, $kills kills) equal their unloaded runs"
