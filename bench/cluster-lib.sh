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
# worker process that lives as long as it). Of each process its reaped
# children (cutime, cstime), and of each alive one its own (utime, stime).
children_cpu() {
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
