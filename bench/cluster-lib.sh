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
# loaded; the check of the index against the parts runs on goroutines of
# its own.
loading='act\.loadCheckpoint|LoadParts|coverage\.Split|checkPooledRegions'

# profile_seconds BIN PROFILE FOCUS [IGNORE]: the profile's seconds of the
# samples under frames matching FOCUS, less those under IGNORE (default:
# the resume's loading).
profile_seconds() {
  go tool pprof -top -nodefraction=0 -focus "$3" -ignore "${4:-$loading}" "$1" "$2" 2>/dev/null |
    awk '/Showing nodes accounting for/{v=$5; sub(/,$/,"",v); if (v ~ /ms$/) {sub(/ms$/,"",v); v/=1000} else sub(/s$/,"",v); print v; f=1} END{if(!f) print 0}'
}
