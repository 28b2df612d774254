#!/usr/bin/env bash
# bench/load.sh N SECONDS: N busy processes for at most SECONDS, the load an
# overnight campaign shares its machine with (builds, other campaigns).
# Prints its own PID; ends its processes (by PID, its own only) when
# SECONDS pass or when it is sent TERM or INT.
#
# With sched_autogroup on (/proc/sys/kernel/sched_autogroup_enabled, the
# default of many distributions) the kernel shares CPU between sessions
# first, then between the processes of a session: the load falls on the
# processes of the session this script runs in (make's, a script's), and
# a process started from another terminal or with setsid sees less of it.
set -u
n=${1:?N processes} secs=${2:?SECONDS}
pids=()
stop() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; exit 0; }
trap stop TERM INT EXIT
for _ in $(seq "$n"); do
  # A shell loop: no dependency, one full core each while it runs.
  ( trap 'exit 0' TERM; end=$((SECONDS + secs)); while [ $SECONDS -lt $end ]; do :; done ) &
  pids+=($!)
done
sleep "$secs" & pids+=($!)
wait "${pids[-1]}"
