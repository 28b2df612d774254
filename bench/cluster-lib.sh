# bench/cluster-lib.sh: what the cluster benches share (sourced by
# cluster.sh, cluster-aged.sh and cluster-resume.sh; not run).

# start_nats DIR PORT: a nats-server ($NATS) listening on 127.0.0.1:PORT,
# JetStream in DIR/js, its log DIR/nats.log; its pid is appended to pids.
# It returns once the server accepts connections (at most 5 s).
start_nats() {
  printf 'listen: 127.0.0.1:%s\nmax_payload: 8MB\njetstream { store_dir: "%s/js" }\n' "$2" "$1" >"$1/nats.conf"
  "$NATS" -c "$1/nats.conf" >"$1/nats.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$2") 2>/dev/null && break; sleep 0.1; done
}

# loading: the frames of a resume's one-time loading: the checkpoint read,
# the store split (a checkpoint of another part count) and the parts
# loaded. Two steps run on goroutines of their own and are named apart:
# the index's check against the parts, and a slim index's states rebuilt
# from the parts' keys (coverage/slim.go).
loading='act\.loadCheckpoint|LoadParts|coverage\.Split|checkPooledRegions|slimFromKeys'

# profile_seconds BIN PROFILE FOCUS [IGNORE]: the profile's seconds of the
# samples under frames matching FOCUS, less those under IGNORE (default:
# the resume's loading).
profile_seconds() {
  go tool pprof -top -nodefraction=0 -focus "$3" -ignore "${4:-$loading}" "$1" "$2" 2>/dev/null |
    awk '/Showing nodes accounting for/{v=$5; sub(/,$/,"",v); if (v ~ /ms$/) {sub(/ms$/,"",v); v/=1000} else sub(/s$/,"",v); print v; f=1} END{if(!f) print 0}'
}

# children_cpu PID: the CPU seconds of a worker host's descendants: its
# worker processes and what they start (ns-3's driver, a child of its
# worker process). If cpu_cgroup put the host in a cgroup, that cgroup's
# usage: every process that was ever in it, whoever reaped it. Else, from
# /proc, of each process its reaped children (cutime, cstime) and of each
# alive one its own (utime, stime); that misses a driver whose worker
# process was killed before it reaped it (its CPU reaches no parent),
# which ns-3 campaigns showed as a negative figure.
children_cpu() {
  if [ -n "${cpu_group:-}" ]; then
    awk '$1 == "usage_usec" {print $2/1e6}' "$cpu_group/cpu.stat"
    return
  fi
  local f
  read -ra f <"/proc/$1/stat"
  echo "$((f[15] + f[16] + $(alive_ticks "$1"))) $(getconf CLK_TCK)" | awk '{print $1/$2}'
}
alive_ticks() {
  local t=0 f c
  for c in $(ps -o pid= --ppid "$1"); do
    read -ra f <"/proc/$c/stat" 2>/dev/null || continue
    t=$((t + f[13] + f[14] + f[15] + f[16] + $(alive_ticks "$c")))
  done
  echo "$t"
}

# cpu_cgroup: makes a cgroup v2 for a worker host, if this machine lets
# us (root), sets cpu_group to it (for children_cpu) and in_cgroup to the
# words that start a command in it: `"${in_cgroup[@]}" "$BIN" worker … &`
# (the command moves itself in before it starts, so every process it
# starts is in the cgroup; $! is still its pid). drop_cgroup removes the
# cgroup once its processes are gone.
cpu_cgroup() {
  local root d
  cpu_group= in_cgroup=()
  root=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
  d=$root/actfuzz-bench-$$-$RANDOM
  [ -n "$root" ] && mkdir "$d" 2>/dev/null || return 0
  cpu_group=$d
  # shellcheck disable=SC2016 # $$ and $@ are the inner shell's
  in_cgroup=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cpu_group")
}
drop_cgroup() {
  [ -n "${cpu_group:-}" ] || return 0
  for _ in $(seq 50); do rmdir "$cpu_group" 2>/dev/null && break; sleep 0.1; done
  cpu_group=
}
