#!/usr/bin/env bash
# bench/cluster-chaos.sh: a cluster campaign on this machine under a
# schedule of failures, then the same campaign run locally: the two must
# cover the same regions at every k and write the same seed files, byte
# for byte (issue 15: "kill -9 one remote worker process mid-batch", "kill
# the coordinator mid-campaign, --resume", "a server restart mid-campaign",
# here together, at random, on real processes started as users would).
#
# The cluster: a nats-server (`make nats`; JetStream on files), HOSTS
# worker hosts of PROCS slots and, with PARTS > 0, PARTS store processes
# and one standby for each part. Every EVERY seconds (on average) one
# action, drawn with bash's $RANDOM seeded by SEED:
#
#   host     kill -9 a worker host (its chunks come again after AckWait);
#            a new one starts at once
#   stop     SIGSTOP a worker host for 5–25 s, then SIGCONT
#   store    kill -9 the store process that holds a part's lease, its
#            standby takes over; a new standby starts
#   server   restart the nats-server (SIGTERM, then the same config)
#   kill9    kill -9 the nats-server, then start it again (JetStream's
#            files as the process left them; not a machine's crash, which
#            loses what was not synced: sync_interval, 2 min by default)
#   coord    kill -9 the coordinator; it starts again with --resume (which
#            starts afresh when no checkpoint was written yet)
#
#   bench/cluster-chaos.sh
#   BUDGET=20000 EVERY=30 SEED=7 bench/cluster-chaos.sh
#   ACTIONS="host coord" bench/cluster-chaos.sh
#   ACTIONS= BUDGET=60000 RSS=/tmp/rss.tsv bench/cluster-chaos.sh   # a soak
#   STRICT=1 LOGS=-v KEEP=1 bench/cluster-chaos.sh   # no exit 3, logs kept
#
# RSS=FILE samples every 10 s the resident memory (kB) of each process by
# its role (coord, host-I, store-J-N, nats) into FILE, one line a sample:
# a long run shows what grows.
# It prints each action with its time, a stall (no simulation merged for
# STALL, 120, seconds), then the cluster's wall time, the actions taken,
# the longest time without a merge, and the comparison. Logs are kept in a directory it names
# when it fails (KEEP=1: always). A coordinator that exits 3 is resumed and
# counted (exit3=N in the summary); with STRICT=1 the script stops there
# (exit 3): the failures above are all to be waited out.
# It ends the processes it started, by their PIDs, and no other.
# Exit status: 0 same results, 1 other results, 2 bad input, 3 a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
CAMPAIGN=${CAMPAIGN:-examples/make-run.yaml}
BUDGET=${BUDGET:-6000}
LAG=${LAG:-8}
HOSTS=${HOSTS:-2}
PROCS=${PROCS:-1}
PARTS=${PARTS:-2}
EVERY=${EVERY:-20}
SEED=${SEED:-1}
ACTIONS=${ACTIONS-host stop store server kill9 coord}
PORT=${PORT:-14290}
# LOGS: how much the cluster's processes log into their files (-v, --debug).
LOGS=${LOGS:---quiet}
NATS=${NATS:-$(go env GOPATH)/bin/nats-server}
[ -x "$NATS" ] || { echo "bench/cluster-chaos.sh: no $NATS: run make nats" >&2; exit 2; }
for a in $ACTIONS; do
  case $a in host | stop | store | server | kill9 | coord) ;; *) echo "bench/cluster-chaos.sh: ACTIONS: unknown action $a (host, stop, store, server, kill9, coord)" >&2; exit 2 ;; esac
done
[ "$PARTS" -gt 0 ] || ACTIONS=${ACTIONS//store/}
if [ -z "${BIN:-}" ]; then
  make --no-print-directory build >/dev/null
  BIN=$PWD/bin/actfuzz
fi
RANDOM=$SEED
tmp=$(mktemp -d)
out=$tmp/cluster
URL=nats://127.0.0.1:$PORT
declare -A host_pid store_pids store_role
nats_pid= coord_pid=
# started: every process this script started (servers, hosts, store
# processes, coordinators), helpers: its background subshells (a host's
# SIGCONT after a stop). cleanup ends these, by PID, and nothing else.
started=() helpers=()
status=3
# ours PID: PID is still a process this script started, not a PID the
# system gave to another process since (its command line names this
# run's server URL or directory).
ours() { { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qF -e "$URL" -e "$tmp"; }
cleanup() {
  local p alive running
  # A helper still running (a job of this shell: not a PID reused since),
  # its sleep first, then the helper.
  running=" $(jobs -rp | tr '\n' ' ') "
  for p in ${helpers[@]+"${helpers[@]}"}; do
    [[ $running == *" $p "* ]] || continue
    # shellcheck disable=SC2046 # one PID a word
    kill $(ps -o pid= --ppid "$p") "$p" 2>/dev/null || true
  done
  for p in ${started[@]+"${started[@]}"}; do
    ours "$p" || continue
    kill -CONT "$p" 2>/dev/null || true
    kill "$p" 2>/dev/null || true
  done
  # Most were disowned, and wait does not wait for them: wait until they
  # are gone before their logs go (one left would join the next run on
  # this port), then kill -9 what is left of them.
  for _ in $(seq 50); do
    alive=
    for p in ${started[@]+"${started[@]}"}; do ours "$p" && alive=1 && break; done
    [ -n "$alive" ] || break
    sleep 0.1
  done
  for p in ${started[@]+"${started[@]}"}; do
    if ours "$p"; then kill -9 "$p" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
  if [ "$status" -ne 0 ] || [ -n "${KEEP:-}" ]; then echo "bench/cluster-chaos.sh: logs in $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
say() { printf '%s %s\n' "$(date -u +%T)" "$*"; }
printf 'listen: 127.0.0.1:%s\nmax_payload: 8MB\njetstream { store_dir: "%s/js" }\n' "$PORT" "$tmp" >"$tmp/nats.conf"
start_nats() {
  "$NATS" -c "$tmp/nats.conf" >>"$tmp/nats.log" 2>&1 &
  nats_pid=$!
  started+=("$!")
  disown # no "Killed" line from bash when an action kills it
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && return 0; sleep 0.1; done
  echo "bench/cluster-chaos.sh: the nats-server did not start; its log: $tmp/nats.log" >&2
  exit 3
}
hosts_started=0
start_host() {
  hosts_started=$((hosts_started + 1))
  "$BIN" worker --nats "$URL" --procs "$PROCS" "$LOGS" 2>>"$tmp/host-$hosts_started.log" &
  host_pid[$1]=$!
  started+=("$!")
  disown
}
stores_started=0
start_store() {
  stores_started=$((stores_started + 1))
  "$BIN" store --nats "$URL" --part "$1" "$LOGS" 2>>"$tmp/store-$1-$stores_started.log" &
  store_pids[$1]="${store_pids[$1]:-} $!"
  started+=("$!")
  store_role[$!]=store-$1-$stores_started
  disown
}
coord_runs=0
start_coord() {
  local resume=()
  # A run killed before its first checkpoint left its --out: --resume
  # starts it afresh.
  [ "$coord_runs" -gt 0 ] && resume=(--resume)
  coord_runs=$((coord_runs + 1))
  "$BIN" run "$CAMPAIGN" --budget "$BUDGET" --lag "$LAG" --nats "$URL" --store-parts "$PARTS" \
    "${resume[@]}" "$LOGS" --json --out "$out" >"$tmp/cluster.json" 2>>"$tmp/coord-$coord_runs.log" &
  coord_pid=$!
  started+=("$!")
  say "coordinator started${resume:+ with --resume}"
}
# holder J: the oldest live store process of part J, which holds its lease
# unless it has just died (the first started takes the lease; a standby
# takes over when the holder is gone).
holder() {
  local p
  for p in ${store_pids[$1]}; do
    kill -0 "$p" 2>/dev/null && { echo "$p"; return; }
  done
}

echo "# $(date -u +%FT%TZ) $(uptime)"
echo "# $CAMPAIGN, budget $BUDGET, lag $LAG, $HOSTS hosts of --procs $PROCS, store parts $PARTS, an action every ~${EVERY}s of: $ACTIONS (SEED=$SEED), $(nproc) cores"
start_nats
for i in $(seq "$HOSTS"); do start_host "$i"; done
for j in $(seq 0 $((PARTS - 1))); do start_store "$j"; start_store "$j"; done
begin=$(date +%s)
start_coord
# rss_sample: one line of RSS (kB) by role.
rss_of() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
rss_sample() {
  local line p i
  line="$(date -u +%T) sims=$(grep -o '"sims": *[0-9]*' "$out/status.json" 2>/dev/null | grep -o '[0-9]*$' || echo 0)"
  line+=" coord=$(rss_of "$coord_pid") nats=$(rss_of "$nats_pid")"
  for i in "${!host_pid[@]}"; do
    p=${host_pid[$i]}
    # A host's worker processes are its children.
    line+=" host-$i=$(rss_of "$p")+$(for c in $(ps -o pid= --ppid "$p"); do rss_of "$c"; done | awk '{s+=$1} END{print s+0}')"
  done
  for p in "${!store_role[@]}"; do kill -0 "$p" 2>/dev/null && line+=" ${store_role[$p]}=$(rss_of "$p")"; done
  echo "$line" >>"$RSS"
}
next_rss=0
# Progress: the simulations merged, which the coordinator's status.json
# gives every 5 s while it merges (a resume sets them back to its
# checkpoint's). A campaign whose count has not changed for STALL seconds
# is said to stall, once a stall; the summary gives the longest time
# without a change (its start included). `kill -QUIT` of the coordinator prints its goroutines'
# stacks into its log (and ends it: its exit 2 ends the script).
STALL=${STALL:-120}
last_sims= last_change=$(date +%s) longest_stall=0 stall_said=
watch_progress() {
  local sims now
  sims=$(grep -o '"sims": *[0-9]*' "$out/status.json" 2>/dev/null | grep -o '[0-9]*$' || true)
  now=$(date +%s)
  if [ "$sims" != "$last_sims" ]; then
    last_sims=$sims last_change=$now stall_said=
    return
  fi
  if [ $((now - last_change)) -gt "$longest_stall" ]; then longest_stall=$((now - last_change)); fi
  if [ -z "$stall_said" ] && [ $((now - last_change)) -ge "$STALL" ]; then
    say "no simulation merged for ${STALL}s: a stall (kill -QUIT $coord_pid prints the coordinator's stacks into $tmp/coord-$coord_runs.log)"
    stall_said=1
  fi
}
declare -A done_count
acts=($ACTIONS)
[ ${#acts[@]} -gt 0 ] || EVERY=3600
while :; do
  # Sleep EVERY/2 to 3·EVERY/2 seconds, watching the coordinator.
  wake=$(($(date +%s) + EVERY / 2 + RANDOM % (EVERY + 1)))
  while [ "$(date +%s)" -lt "$wake" ] && kill -0 "$coord_pid" 2>/dev/null; do
    if [ -n "${RSS:-}" ] && [ "$(date +%s)" -ge "$next_rss" ]; then rss_sample; next_rss=$(($(date +%s) + 10)); fi
    watch_progress
    sleep 0.5
  done
  if ! kill -0 "$coord_pid" 2>/dev/null; then
    rc=0
    wait "$coord_pid" || rc=$?
    [ "$rc" -le 1 ] && break
    # A coordinator that exits 3 (an I/O error: a server it lost?) is
    # resumed and counted (exit3=N in the summary); STRICT=1 stops there.
    say "coordinator exited $rc; its log: $tmp/coord-$coord_runs.log"
    tail -3 "$tmp/coord-$coord_runs.log" | sed 's/^/    /'
    if [ "${STRICT:-}" ] || [ "$rc" -eq 2 ]; then exit 3; fi
    done_count[exit$rc]=$((${done_count[exit$rc]:-0} + 1))
    start_coord
    continue
  fi
  [ ${#acts[@]} -gt 0 ] || continue
  a=${acts[RANDOM % ${#acts[@]}]}
  done_count[$a]=$((${done_count[$a]:-0} + 1))
  case $a in
    host)
      i=$((RANDOM % HOSTS + 1))
      kill -9 "${host_pid[$i]}" 2>/dev/null || true
      say "host $i: kill -9"
      start_host "$i"
      ;;
    stop)
      i=$((RANDOM % HOSTS + 1))
      d=$((5 + RANDOM % 21))
      say "host $i: stopped for ${d}s"
      kill -STOP "${host_pid[$i]}" 2>/dev/null || true
      p=${host_pid[$i]}
      (sleep "$d" && ours "$p" && kill -CONT "$p" 2>/dev/null) &
      helpers+=("$!")
      ;;
    store)
      j=$((RANDOM % PARTS))
      p=$(holder "$j")
      if [ -n "$p" ]; then
        kill -9 "$p" 2>/dev/null || true
        store_pids[$j]=${store_pids[$j]/ $p/}
        say "store part $j: kill -9 of process $p"
      fi
      start_store "$j"
      ;;
    server)
      kill "$nats_pid" 2>/dev/null || true
      while kill -0 "$nats_pid" 2>/dev/null; do sleep 0.1; done
      say "nats-server restarted"
      start_nats
      ;;
    kill9)
      kill -9 "$nats_pid" 2>/dev/null || true
      while kill -0 "$nats_pid" 2>/dev/null; do sleep 0.1; done
      say "nats-server: kill -9, started again"
      start_nats
      ;;
    coord)
      kill -9 "$coord_pid" 2>/dev/null || true
      wait "$coord_pid" 2>/dev/null || true # bash says "Killed" here
      say "coordinator: kill -9"
      start_coord
      ;;
  esac
done
end=$(date +%s)
summary=
for k in "${!done_count[@]}"; do summary+=" $k=${done_count[$k]}"; done
say "cluster done: $BUDGET simulations in $((end - begin)) s, coordinator runs $coord_runs, actions:$summary; longest time without a merge ${longest_stall}s"
"$BIN" run "$CAMPAIGN" --budget "$BUDGET" --lag "$LAG" --workers "$((HOSTS * PROCS))" --quiet --json --out "$tmp/local" \
  >"$tmp/local.json" 2>"$tmp/local.log" || [ $? -le 1 ] || { echo "bench/cluster-chaos.sh: the local run failed; $tmp/local.log" >&2; exit 3; }
say "local run done"
regions() { grep -A30 '"regions"' "$1" | head -30; }
status=1
if [ "$(regions "$tmp/cluster.json")" != "$(regions "$tmp/local.json")" ]; then
  echo "bench/cluster-chaos.sh: the cluster covered other regions than the local run" >&2
  diff <(regions "$tmp/cluster.json") <(regions "$tmp/local.json") | head -20 >&2
  exit 1
fi
if ! diff -r "$out/findings" "$tmp/local/findings" >"$tmp/findings.diff" 2>&1; then
  echo "bench/cluster-chaos.sh: the cluster's seed files differ from the local run's ($tmp/findings.diff)" >&2
  exit 1
fi
status=0
echo "same regions at every k and the same seed files as the local run ($(find "$tmp/local/findings" -name '*.json' 2>/dev/null | wc -l) seeds)"
