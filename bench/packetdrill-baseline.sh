#!/usr/bin/env bash
# packetdrill-baseline.sh: run Linux's packetdrill suite (gtests/net/tcp of
# PACKETDRILL_SRC) on the running kernel and write the baseline: which
# scripts this kernel passes, and for each that it does not, why
# (docs/packetdrill.md). Issue 49, item 1.
#
#   bench/packetdrill-baseline.sh [TOPIC_OR_SCRIPT ...]
#
# With no argument every script runs and the baseline is rewritten:
# testdata/packetdrill/linux-baseline.tsv and docs/packetdrill-baseline.md.
# With arguments (paths under gtests/net/tcp, e.g. `slow_start` or
# `sack/sack-shift-sacked-7-3-4-8-9-fack.pkt`) only those run and the
# tables go to the log directory, so a partial run never clobbers the
# baseline. Needs root, /dev/net/tun, unshare(1), ip and tc.
#
# Each run is upstream's (run_all.py): the same packetdrill flags per IP
# variant, cwd = the script's directory, its own network namespace (here
# with a private /tmp too), so what defaults.sh and set_sysctls.py set
# touches only that namespace. The host's TCP sysctls are compared before
# and after; a difference is reported and exits 3.
#
# Exit: 0 done (whatever passed), 2 bad setup (packetdrill missing: run
# `make packetdrill`; not root; no suite), 3 the host's sysctls changed.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PACKETDRILL=${PACKETDRILL:-bin/packetdrill}
PACKETDRILL_SRC=${PACKETDRILL_SRC:-../shared/packetdrill}
# Per-run limit; upstream's run_all.py allows 180 s. The slowest script
# here takes a few seconds, so 120 s only ends a hung run.
TIMEOUT=${TIMEOUT:-120}
# Attempts for a failing script: a timing flake passes on a later attempt.
ATTEMPTS=${ATTEMPTS:-3}
# A script failing every attempt with a timing error is run once more
# with this tolerance (upstream's default is 4000 us): if it passes, the
# kernel behaves as scripted and only the machine's timing was off.
SLOW_TOLERANCE_USECS=${SLOW_TOLERANCE_USECS:-20000}
# The IP variants, as run_all.py: *v4.pkt only over IPv4, *v6.pkt only IPv6.
VARIANTS=${VARIANTS:-ipv4 ipv4-mapped-ipv6 ipv6}
# The congestion control the scripts expect (defaults.sh sets cubic); see
# the congctl shim below. Empty: leave the namespace's default alone.
CONGCTL=${CONGCTL-cubic}
LOGDIR=${LOGDIR:-out/packetdrill-baseline-$(date -u +%Y%m%dT%H%M%SZ)}
SUITE=${SUITE:-.build/packetdrill-suite}
BASELINE_TSV=testdata/packetdrill/linux-baseline.tsv
BASELINE_MD=docs/packetdrill-baseline.md
REASONS=testdata/packetdrill/reasons.tsv

die() { echo "packetdrill-baseline: $*" >&2; exit 2; }

[ -x "$PACKETDRILL" ] || die "no packetdrill at $PACKETDRILL: run \`make packetdrill\` first (it builds bin/packetdrill from $PACKETDRILL_SRC)"
[ "$(id -u)" = 0 ] || die "needs root (packetdrill makes a TUN device and sets sysctls in its namespace)"
[ -c /dev/net/tun ] || die "no /dev/net/tun"
[ -d "$PACKETDRILL_SRC/gtests/net/tcp" ] || die "no suite at $PACKETDRILL_SRC/gtests/net/tcp (set PACKETDRILL_SRC)"
for c in unshare ip tc timeout; do command -v "$c" >/dev/null || die "needs $c"; done
PACKETDRILL=$(realpath "$PACKETDRILL")
REAL_IP=$(command -v ip)

# The suite is run from a fresh copy because the shared source is read-only
# input: shipped without symlinks, tcp/common/defaults.sh is a text file
# holding its link's target (../../common/defaults.sh), which every script
# runs; the copy makes it the symlink upstream has again.
rm -rf "$SUITE"; mkdir -p "$SUITE" "$LOGDIR"
cp -R "$PACKETDRILL_SRC/gtests" "$SUITE/"
chmod -R u+w "$SUITE"
while IFS= read -r f; do
	t=$(head -c 200 "$f")
	case $t in *$'\n'*|'') continue ;; esac
	if [ -f "$(dirname "$f")/$t" ]; then rm "$f"; ln -s "$t" "$f"; fi
done < <(find "$SUITE/gtests" -type f -size -200c ! -name '*.pkt' ! -perm -u+x)
TCPDIR=$SUITE/gtests/net/tcp

# The congctl shim. defaults.sh sets net.ipv4.tcp_congestion_control=cubic,
# but a namespace other than the host's may only pick a congestion control
# in the host's tcp_allowed_congestion_control (EPERM otherwise), and a new
# namespace starts with the host's default. When CONGCTL is not allowed,
# the scripts would silently run under the host's default (bbr here, which
# paces and fails slow start's timing). Changing the host's allowed list is
# not ours to do; instead an `ip` first on PATH adds `congctl cubic` to the
# routes packetdrill (and mtu_probe's `ip route change`) installs in the
# namespace: a route's congestion control is not restricted, and no script
# picks one itself (none uses TCP_CONGESTION).
SHIM=
if [ -n "$CONGCTL" ]; then
	allowed=$(unshare -n cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
	if ! grep -qw -- "$CONGCTL" <<<"$allowed"; then
		grep -qw -- "$CONGCTL" /proc/sys/net/ipv4/tcp_available_congestion_control ||
			die "congestion control $CONGCTL not available on this kernel"
		SHIM=$ROOT/$SUITE/shim
		mkdir -p "$SHIM"
		cat >"$SHIM/ip" <<EOF
#!/usr/bin/env bash
# Written by bench/packetdrill-baseline.sh: routes get congctl $CONGCTL.
case " \$* " in
*" congctl "*) ;;
*" route add "*|*" route change "*|*" route replace "*) exec $REAL_IP "\$@" congctl $CONGCTL ;;
esac
exec $REAL_IP "\$@"
EOF
		chmod +x "$SHIM/ip"
	fi
fi

# CC-relevant: the script checks what congestion control decides or reacts
# to (cwnd/ssthresh growth, loss detection and recovery, ECN, what limits
# sending). Whole topics, then single scripts of other topics that assert
# tcpi_snd_cwnd or tcpi_ca_state.
cc_relevant() {
	case $1 in
	slow_start/*|fast_recovery/*|fast_retransmit/*|limited_transmit/*|sack/*|ecn/*|mtu_probe/*) echo yes ;;
	tcp_info/tcp-info-rwnd-limited.pkt|tcp_info/tcp-info-sndbuf-limited.pkt) echo yes ;;
	fastopen/server/client-ack-dropped-then-recovery-ms-timestamps.pkt) echo yes ;;
	*) echo no ;;
	esac
}

# The host's TCP and core sysctls, to show the namespaces left them alone.
host_sysctls() {
	for f in /proc/sys/net/ipv4/tcp_* /proc/sys/net/core/*; do
		[ -f "$f" ] && [ -r "$f" ] && printf '%s=%s\n' "$f" "$(tr '\t\n' '  ' <"$f" 2>/dev/null)"
	done 2>/dev/null || true
}
host_sysctls >"$LOGDIR/host-sysctls.before"

# variant_args VARIANT: run_all.py's flags for that IP variant.
variant_args() {
	case $1 in
	ipv4) echo "--ip_version=ipv4 --local_ip=192.168.0.1 --gateway_ip=192.168.0.1 --netmask_ip=255.255.0.0 --remote_ip=192.0.2.1 -D TFO_COOKIE=3021b9d889017eeb -D CODE=host_unreachable -D CMSG_LEVEL_IP=SOL_IP -D CMSG_TYPE_RECVERR=IP_RECVERR" ;;
	ipv4-mapped-ipv6) echo "--ip_version=ipv4-mapped-ipv6 --local_ip=192.168.0.1 --gateway_ip=192.168.0.1 --netmask_ip=255.255.0.0 --remote_ip=192.0.2.1 -D TFO_COOKIE=3021b9d889017eeb -D CODE=host_unreachable -D CMSG_LEVEL_IP=SOL_IPV6 -D CMSG_TYPE_RECVERR=IPV6_RECVERR" ;;
	ipv6) echo "--ip_version=ipv6 --mtu=1520 --local_ip=fd3d:0a0b:17d6::1 --gateway_ip=fd3d:0a0b:17d6:8888::1 --remote_ip=fd3d:fa7b:d17d::1 -D TFO_COOKIE=c1d1e9742a47a9bc -D CMSG_LEVEL_IP=SOL_IPV6 -D CMSG_TYPE_RECVERR=IPV6_RECVERR" ;;
	esac
}

# run_one REL VARIANT LOG [EXTRA]: one packetdrill run in a new network and
# mount namespace (which end with it: nothing to clean up), lo up and a
# private /tmp (set_sysctls.py writes its restore scripts there). timeout
# ends the run, which is packetdrill itself after unshare and bash exec.
run_one() {
	local rel=$1 variant=$2 log=$3 extra=${4:-} rc=0
	local dir; dir=$TCPDIR/$(dirname "$rel")
	# shellcheck disable=SC2046 # variant_args is a word list by design
	(cd "$dir" && PATH=${SHIM:+$SHIM:}$PATH timeout -k 5 "$TIMEOUT" \
		unshare -n -m --propagation private bash -c \
		'mount -t tmpfs tmpfs /tmp && ip link set lo up && exec "$@"' packetdrill \
		"$PACKETDRILL" --send_omit_free $(variant_args "$variant") $extra "$(basename "$rel")") \
		>"$log" 2>&1 </dev/null || rc=$?
	return $rc
}

# first_error LOG: the line saying why a run failed, on one line.
first_error() {
	local e
	e=$(grep -m1 -E 'error|assert|Assertion|failed|Unknown|unknown|No such|not permitted|invalid|Invalid' "$1" |
		grep -v '^sysctl: setting key "net.ipv4.tcp_congestion_control"' || true)
	[ -n "$e" ] || e=$(grep -v '^sysctl: setting key "net.ipv4.tcp_congestion_control"' "$1" | head -1)
	tr '\t' ' ' <<<"${e:-no output}" | cut -c1-300
}

mapfile -t all < <(cd "$TCPDIR" && find . -name '*.pkt' | sed 's|^\./||' | sort)
if [ $# -gt 0 ]; then
	scripts=()
	for a in "$@"; do
		a=${a#gtests/net/tcp/}; a=${a%/}
		for s in "${all[@]}"; do case $s in "$a"|"$a"/*) scripts+=("$s") ;; esac; done
	done
	[ ${#scripts[@]} -gt 0 ] || die "no script matches $*"
	out_tsv=$LOGDIR/linux-baseline.tsv out_md=$LOGDIR/packetdrill-baseline.md
else
	scripts=("${all[@]}")
	out_tsv=$BASELINE_TSV out_md=$BASELINE_MD
fi

start=$(date -u +%s)
load_before=$(cat /proc/loadavg)
echo "packetdrill-baseline: ${#scripts[@]} scripts on $(uname -r), variants: $VARIANTS; logs in $LOGDIR${SHIM:+; congctl shim: $CONGCTL}"
results=$LOGDIR/results.tsv
: >"$results"
for rel in "${scripts[@]}"; do
	vres=() status=pass err=
	for v in $VARIANTS; do
		case $v in ipv6) [[ $rel == *v4.pkt ]] && continue ;; *) [[ $rel == *v6.pkt ]] && continue ;; esac
		base=$LOGDIR/logs/${rel%.pkt}.$v
		mkdir -p "$(dirname "$base")"
		r=fail passes=0 tries=0 lastrc=0
		for ((i = 1; i <= ATTEMPTS; i++)); do
			tries=$i rc=0
			run_one "$rel" "$v" "$base.$i.log" || rc=$?
			if [ $rc -eq 0 ]; then passes=$((passes + 1)); break; fi
			lastrc=$rc
		done
		if [ $passes -gt 0 ] && [ "$tries" -eq 1 ]; then r=pass
		elif [ $passes -gt 0 ]; then r=flaky
		elif [ "$lastrc" -eq 124 ] || [ "$lastrc" -eq 137 ]; then r=timeout
		elif grep -q 'timing error' "$base.$ATTEMPTS.log" &&
			run_one "$rel" "$v" "$base.slow.log" "--tolerance_usecs=$SLOW_TOLERANCE_USECS"; then r=timing
		fi
		[ $passes -gt 0 ] || [ -n "$err" ] || err="$v: $(first_error "$base.$ATTEMPTS.log")"
		vres+=("$v=$r")
		# The script's status is its worst variant's.
		case $r in
		fail|timeout) status=fail ;;
		timing) [ $status = fail ] || status=timing ;;
		flaky) [ $status != pass ] || status=flaky ;;
		esac
		echo "  $r  $rel ($v, $tries attempt(s))"
	done
	printf '%s\t%s\t%s\t%s\t%s\n' "$rel" "$(cc_relevant "$rel")" "$status" "$(IFS=,; echo "${vres[*]}")" "$err" >>"$results"
done
elapsed=$(($(date -u +%s) - start))
load_after=$(cat /proc/loadavg)

host_sysctls >"$LOGDIR/host-sysctls.after"
sysctl_changed=0
if ! diff -u "$LOGDIR/host-sysctls.before" "$LOGDIR/host-sysctls.after" >"$LOGDIR/host-sysctls.diff"; then
	sysctl_changed=1
	echo "packetdrill-baseline: the host's sysctls changed during the run (see $LOGDIR/host-sysctls.diff)" >&2
fi

# The tables: the results, with the reason established for each script
# that does not pass (testdata/packetdrill/reasons.tsv, path<TAB>reason,
# written by reading the script and its error output).
pd_commit=$(sed -n 's/.*commit \([0-9a-f]\{7,40\}\).*/\1/p' "$PACKETDRILL_SRC/SOURCE.md" 2>/dev/null | head -1)
mkdir -p "$(dirname "$out_tsv")" "$(dirname "$out_md")"
reasons=/dev/null; [ -f "$REASONS" ] && reasons=$REASONS
{
	echo "# packetdrill baseline: Linux's gtests/net/tcp on the running kernel (bench/packetdrill-baseline.sh, docs/packetdrill.md)"
	echo "# kernel: $(uname -r)"
	echo "# packetdrill: ${pd_commit:-unknown} (github.com/google/packetdrill, from $PACKETDRILL_SRC/SOURCE.md)"
	echo "# variants: $VARIANTS; attempts: $ATTEMPTS; timeout: ${TIMEOUT}s; slow tolerance: ${SLOW_TOLERANCE_USECS}us; congctl: ${SHIM:+route $CONGCTL ($CONGCTL is not in the host tcp_allowed_congestion_control)}${SHIM:-namespace default}"
	echo "# run: $(date -u +%Y-%m-%dT%H:%MZ), ${elapsed}s, loadavg before: $load_before, after: $load_after"
	echo "# status: pass (first attempt, every variant) | flaky (passed on a later attempt) | timing (passes only with the slow tolerance) | fail"
	printf 'path\tcc_relevant\tstatus\tvariants\treason\tfirst_error\n'
	awk -F'\t' 'NR==FNR { if ($0 !~ /^#/ && NF >= 2) r[$1] = $2; next }
		{ reason = ($3 == "pass") ? "" : (($1 in r) ? r[$1] : "not yet established");
		  printf "%s\t%s\t%s\t%s\t%s\t%s\n", $1, $2, $3, $4, reason, $5 }' "$reasons" "$results"
} >"$out_tsv"

count() { awk -F'\t' -v cc="$1" -v st="$2" '!/^#/ && $1 != "path" && (cc == "" || $2 == cc) && (st == "" || $3 ~ "^(" st ")$") { n++ } END { print n + 0 }' "$out_tsv"; }
{
	echo "# packetdrill baseline on Linux $(uname -r)"
	echo
	echo "Generated by \`bench/packetdrill-baseline.sh\` (see [packetdrill.md](packetdrill.md)); the machine-readable table is"
	echo "\`$BASELINE_TSV\`. packetdrill ${pd_commit:-unknown}; variants $VARIANTS; $ATTEMPTS attempts per failing"
	echo "variant; run $(date -u +%Y-%m-%dT%H:%MZ) in ${elapsed} s, loadavg before \`$load_before\`, after \`$load_after\`."
	echo
	echo "| | scripts | pass | flaky | timing | fail |"
	echo "|---|---|---|---|---|---|"
	for cc in "" yes; do
		echo "| ${cc:+CC-relevant}${cc:-all} | $(count "$cc" "") | $(count "$cc" pass) | $(count "$cc" flaky) | $(count "$cc" timing) | $(count "$cc" fail) |"
	done
	echo
	echo "## Scripts that do not pass"
	echo
	echo "| script | CC | status | variants | reason |"
	echo "|---|---|---|---|---|"
	awk -F'\t' '!/^#/ && $1 != "path" && $3 != "pass" { gsub(/\|/, "\\|", $5); printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$out_tsv"
	echo
	echo "## Scripts that pass"
	echo
	awk -F'\t' '!/^#/ && $1 != "path" && $3 == "pass" { printf "- %s%s\n", $1, ($2 == "yes") ? " (CC)" : "" }' "$out_tsv"
} >"$out_md"

echo "packetdrill-baseline: $(count "" "") scripts: $(count "" pass) pass, $(count "" flaky) flaky, $(count "" timing) timing, $(count "" fail) fail;" \
	"CC-relevant $(count yes ""): $(count yes pass) pass, $(count yes flaky) flaky, $(count yes timing) timing, $(count yes fail) fail; ${elapsed}s"
echo "packetdrill-baseline: $out_tsv, $out_md"
[ $sysctl_changed -eq 0 ] || exit 3
