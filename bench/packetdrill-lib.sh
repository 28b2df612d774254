# packetdrill-lib.sh: what bench/packetdrill-baseline.sh and
# bench/pkt-kernel.sh share to run packetdrill scripts on the running kernel,
# each in its own network and mount namespace so the host is untouched
# (docs/packetdrill.md). Sourced; the caller sets PACKETDRILL,
# PACKETDRILL_SRC, SUITE, CONGCTL, TIMEOUT, ROOT and defines die.

# pd_check_setup: root, a TUN device, packetdrill and the tools the suite
# needs; dies (exit 2) naming what is missing. Sets PACKETDRILL to its
# absolute path and REAL_IP.
pd_check_setup() {
	[ -x "$PACKETDRILL" ] || die "no packetdrill at $PACKETDRILL: run \`make packetdrill\` first (it builds bin/packetdrill from $PACKETDRILL_SRC)"
	[ "$(id -u)" = 0 ] || die "needs root (packetdrill makes a TUN device and sets sysctls in its namespace)"
	[ -c /dev/net/tun ] || die "no /dev/net/tun"
	[ -d "$PACKETDRILL_SRC/gtests/net/tcp" ] || die "no suite at $PACKETDRILL_SRC/gtests/net/tcp (set PACKETDRILL_SRC)"
	for c in unshare ip tc timeout; do command -v "$c" >/dev/null || die "needs $c"; done
	# The suite's scripts run ethtool (mtu_probe, nagle) and python3 (set_sysctls.py).
	for c in ethtool python3; do command -v "$c" >/dev/null || die "needs $c (\`make packetdrill\` installs ethtool)"; done
	PACKETDRILL=$(realpath "$PACKETDRILL")
	REAL_IP=$(command -v ip)
}

# pd_prepare_suite: a fresh copy of the suite in SUITE.
pd_prepare_suite() {
	# The suite is run from a fresh copy because the shared source is read-only
	# input: shipped without symlinks, tcp/common/defaults.sh is a text file
	# holding its link's target (../../common/defaults.sh), which every script
	# runs; the copy makes it the symlink upstream has again.
	rm -rf "$SUITE"; mkdir -p "$SUITE"
	cp -R "$PACKETDRILL_SRC/gtests" "$SUITE/"
	chmod -R u+w "$SUITE"
	while IFS= read -r f; do
		t=$(head -c 200 "$f")
		case $t in *$'\n'*|'') continue ;; esac
		if [ -f "$(dirname "$f")/$t" ]; then rm "$f"; ln -s "$t" "$f"; fi
	done < <(find "$SUITE/gtests" -type f -size -200c ! -name '*.pkt' ! -perm -u+x)
}

# pd_make_shim: sets SHIM to a directory whose `ip` adds congctl CONGCTL to
# the routes packetdrill installs, when CONGCTL is not allowed in a new
# namespace (empty SHIM otherwise).
pd_make_shim() {
	SHIM=
	if [ -n "$CONGCTL" ]; then
		allowed=$(unshare -n cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
		if ! grep -qw -- "$CONGCTL" <<<"$allowed"; then
			grep -qw -- "$CONGCTL" /proc/sys/net/ipv4/tcp_available_congestion_control ||
				die "congestion control $CONGCTL not available on this kernel"
			SHIM=$ROOT/$SUITE/shim
			mkdir -p "$SHIM"
			cat >"$SHIM/ip" <<-EOF
	#!/usr/bin/env bash
	# Written by bench/packetdrill-lib.sh: routes get congctl $CONGCTL.
	case " \$* " in
	*" congctl "*) ;;
	*" route add "*|*" route change "*|*" route replace "*) exec $REAL_IP "\$@" congctl $CONGCTL ;;
	esac
	exec $REAL_IP "\$@"
	EOF
			chmod +x "$SHIM/ip"
		fi
	fi
}

# pd_variant_args VARIANT: run_all.py's flags for that IP variant.
pd_variant_args() {
	case $1 in
	ipv4) echo "--ip_version=ipv4 --local_ip=192.168.0.1 --gateway_ip=192.168.0.1 --netmask_ip=255.255.0.0 --remote_ip=192.0.2.1 -D TFO_COOKIE=3021b9d889017eeb -D CODE=host_unreachable -D CMSG_LEVEL_IP=SOL_IP -D CMSG_TYPE_RECVERR=IP_RECVERR" ;;
	ipv4-mapped-ipv6) echo "--ip_version=ipv4-mapped-ipv6 --local_ip=192.168.0.1 --gateway_ip=192.168.0.1 --netmask_ip=255.255.0.0 --remote_ip=192.0.2.1 -D TFO_COOKIE=3021b9d889017eeb -D CODE=host_unreachable -D CMSG_LEVEL_IP=SOL_IPV6 -D CMSG_TYPE_RECVERR=IPV6_RECVERR" ;;
	ipv6) echo "--ip_version=ipv6 --mtu=1520 --local_ip=fd3d:0a0b:17d6::1 --gateway_ip=fd3d:0a0b:17d6:8888::1 --remote_ip=fd3d:fa7b:d17d::1 -D TFO_COOKIE=c1d1e9742a47a9bc -D CMSG_LEVEL_IP=SOL_IPV6 -D CMSG_TYPE_RECVERR=IPV6_RECVERR" ;;
	esac
}

# pd_run DIR SCRIPT VARIANT LOG [EXTRA]: one packetdrill run of SCRIPT
# with cwd DIR, in a new network and mount namespace (which end with it: nothing to clean up), lo up and a
# private /tmp (set_sysctls.py writes its restore scripts there). timeout
# ends the run, which is packetdrill itself after unshare and bash exec.
pd_run() {
	local dir=$1 script=$2 variant=$3 log=$4 extra=${5:-} rc=0
	# shellcheck disable=SC2046 # pd_variant_args is a word list by design
	(cd "$dir" && PATH=${SHIM:+$SHIM:}$PATH timeout -k 5 "$TIMEOUT" \
		unshare -n -m --propagation private bash -c \
		'mount -t tmpfs tmpfs /tmp && ip link set lo up && exec "$@"' packetdrill \
		"$PACKETDRILL" --send_omit_free $(pd_variant_args "$variant") $extra "$script") \
		>"$log" 2>&1 </dev/null || rc=$?
	return $rc
}

