#!/usr/bin/env bash
# bench/cluster-resume.sh SAVED BIN... : builds side by side on one aged
# campaign, without running its first stretch again. SAVED is a campaign
# kept by `SAVE=DIR bench/cluster-aged.sh PARTS` (its output directory and
# campaign file). Each run resumes a copy of it on a fresh nats-server, with
# PARTS (2) store processes and a host of PROCS (2) worker processes, to
# THEN (the saved simulations + 5,000) simulations, and reports the
# coordinator's selection, merge (and the tables' rehash within it) and
# checkpoints from its profile, less the resume's loading, and its CPU,
# maxrss and minor faults by `time`. The builds run one after the other,
# ROUNDS (2) times, so that this machine's drift falls on all of them:
#
#   SAVE=/var/tmp/aged FIRST=25000 THEN=25000 bench/cluster-aged.sh 2
#   bench/cluster-resume.sh /var/tmp/aged /tmp/actfuzz-old bin/actfuzz
#
# KEEP=DIR keeps each run's coordinator profile as DIR/TAG.pprof (for
# `go tool pprof BIN DIR/TAG.pprof`).
#
# The resumed campaign is deterministic: every build that keeps results
# does the same work, so the figures compare the builds' costs.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/cluster-lib.sh
[ $# -ge 2 ] || { echo "usage: bench/cluster-resume.sh SAVED BIN..." >&2; exit 2; }
SAVED=$1
shift
[ -f "$SAVED/bench.yaml" ] && [ -f "$SAVED/out/status.json" ] || { echo "bench/cluster-resume.sh: $SAVED: no bench.yaml or out/status.json (SAVE=$SAVED bench/cluster-aged.sh keeps them)" >&2; exit 2; }
for b in "$@"; do [ -x "$b" ] || { echo "bench/cluster-resume.sh: $b: not an executable" >&2; exit 2; }; done
NATS=${NATS:-$(go env GOPATH)/bin/nats-server}
[ -x "$NATS" ] || { echo "bench/cluster-resume.sh: no $NATS: run make nats" >&2; exit 2; }
PARTS=${PARTS:-2}
FIRST=$(grep -o '"sims": *[0-9]*' "$SAVED/out/status.json" | grep -o '[0-9]*$')
THEN=${THEN:-$((FIRST + 5000))}
n=$((THEN - FIRST))
[ "$n" -gt 0 ] || { echo "bench/cluster-resume.sh: THEN=$THEN is not above the saved $FIRST simulations" >&2; exit 2; }
PORT=15390
pids=()
tmp=$(mktemp -d)
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  drop_cgroup
  rm -rf "$tmp"
}
trap cleanup EXIT
# resume BIN TAG: one run.
resume() {
  local bin=$1 tag=$2 d="$tmp/$2"
  mkdir -p "$d"
  start_nats "$d" "$PORT"
  local url=nats://127.0.0.1:$PORT
  cp -a "$SAVED/out" "$d/out"
  for j in $(seq 0 $((PARTS - 1))); do "$bin" store --nats "$url" --part "$j" --quiet 2>"$d/store-$j.log" & pids+=($!); done
  cpu_cgroup
  "${in_cgroup[@]}" "$bin" worker --nats "$url" --procs "${PROCS:-2}" --quiet 2>"$d/host.log" & pids+=($!)
  local host=$! sims0 sims1
  sims0=$(children_cpu "$host")
  /usr/bin/time -f '%U %S %M %R' -o "$d/time" "$bin" run "$SAVED/bench.yaml" --budget "$THEN" --resume --lag 8 --nats "$url" \
    --store-parts "$PARTS" --quiet --json --out "$d/out" --cpuprofile "$d/cpu.pprof" >"$d/b.json" 2>"$d/b.log" || [ $? -le 1 ] ||
    { echo "$tag: run failed; its log:" >&2; tail -5 "$d/b.log" >&2; return 1; }
  sims1=$(children_cpu "$host")
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  drop_cgroup
  local sel mer reh ck
  sel=$(profile_seconds "$bin" "$d/cpu.pprof" 'act\.\(\*selector\)\.next(Batch)?$')
  mer=$(profile_seconds "$bin" "$d/cpu.pprof" 'coverage\.\(\*merger\)|coverage\.\(\*Store\)\.Add')
  reh=$(profile_seconds "$bin" "$d/cpu.pprof" 'coverage\.\(\*table\)\.rehash')
  ck=$(profile_seconds "$bin" "$d/cpu.pprof" 'act\.saveCheckpoint$')
  # The figures are time's last line (before them it says when run exits 1).
  read -r u sy rss flt < <(tail -1 "$d/time")
  local simms
  simms=$(echo "($sims1-$sims0)*1000/$n" | bc -l)
  printf '%-8s %-28s %8.3f %8.2f %8.2f %8.2f %10.2f %8.1f %8.2f %10d %8.2f %7.2f%%\n' "$tag" "$(basename "$bin")" \
    "$(echo "($sel+$mer)*1000/$n" | bc -l)" "$sel" "$mer" "$reh" "$ck" "$(echo "$u+$sy" | bc -l)" "$(echo "$rss/1048576" | bc -l)" "$flt" \
    "$simms" "$(echo "($sel+$mer)*100000/$n/$simms" | bc -l)"
  [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$d/cpu.pprof" "$KEEP/$tag.pprof"; }
  rm -rf "$d"
}
echo "resuming $SAVED at $FIRST simulations to $THEN, $PARTS store parts, ${PROCS:-2} worker processes"
printf '%-8s %-28s %8s %8s %8s %8s %10s %8s %8s %10s %8s %8s\n' run build 'sel+mer' 'sel s' 'merge s' 'rehash s' 'ckpt s' 'cpu s' 'rss GB' 'minflt' 'sim ms' 'share'
echo "(sel+mer: selection and merge, ms a simulation; cpu: the coordinator's, loading included;"
echo " sim: the worker processes' CPU a simulation, the resume's wait included; share: sel+mer of sim)"
for r in $(seq "${ROUNDS:-2}"); do
  i=0
  for b in "$@"; do
    i=$((i + 1))
    resume "$b" "r$r.b$i"
  done
done
