#!/usr/bin/env bash
# talk.sh LABEL CMD...: runs a go build, vet or test command and says what
# it does at least every TALK_EVERY seconds (issue 51: a first build on
# empty caches was silent for 18 minutes). Its exit status is CMD's.
#
# build and vet (run with -v): module downloads counted against go.sum's
# modules ("go: downloading"), packages compiled counted, and one progress
# line every TALK_EVERY seconds; errors are printed as they come.
# test (run with -json): the package being tested and its running test,
# each package's ok/FAIL line, and the output of failed tests only.
set -o pipefail
label=$1; shift
# 8 s: a line at most every 10 s also when a loaded machine delays this loop
every=${TALK_EVERY:-8}
# Modules with a zip hash in go.sum: at most this many downloads.
mods=$(grep -v '/go.mod ' go.sum 2>/dev/null | awk '{print $1}' | sort -u | wc -l)
start=$SECONDS
# wait_for is how long to wait for a line: until the next progress line is due.
wait_for() { local w=$((every - (SECONDS - $1))); echo $((w < 1 ? 1 : w)); }
say() { echo "$label: $* ($((SECONDS - start)) s)"; }

# JSON string field of a go test -json event (the Output field unescaped).
field() {
	local re="\"$2\":\"(([^\"\\\\]|\\\\.)*)\""
	[[ $1 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"
}
unescape() { printf '%b' "$(sed -e 's/\\u003c/</g; s/\\u003e/>/g; s/\\u0026/\&/g; s/\\"/"/g' <<<"$1")"; }
# unescaped keeps the trailing newline that $(...) would strip.
unescaped() { local s; s=$(unescape "$1"; echo x); printf '%s' "${s%x}"; }

talk_build() {
	local line dl=0 pkgs=0 last="" said=$SECONDS
	while :; do
		if IFS= read -r -t "$(wait_for "$said")" line; then
			case $line in
			"go: downloading "*) dl=$((dl + 1)); last="downloaded ${line#go: downloading }";;
			*[[:space:]]* | "" | '#'* ) echo "$line";;  # errors and messages
			*) pkgs=$((pkgs + 1)); last="compiled $line";;
			esac
		else
			(($? > 128)) || break # end of input
		fi
		if ((SECONDS - said >= every)); then
			say "$dl of at most $mods modules downloaded, $pkgs packages compiled${last:+; last: $last}"
			said=$SECONDS
		fi
	done
	say "$dl modules downloaded, $pkgs packages compiled"
}

talk_test() {
	local line action pkg tst out running="" done=0 said=$SECONDS
	declare -A buf test
	while :; do
		if IFS= read -r -t "$(wait_for "$said")" line; then
			if [[ $line != '{'* ]]; then echo "$line"; continue; fi # build errors
			action=$(field "$line" Action); pkg=$(field "$line" Package); tst=$(field "$line" Test)
			case $action in
			start) running=$pkg; say "testing $pkg";;
			build-output) unescaped "$(field "$line" Output)";;
			run) test[$pkg]=$tst;;
			output)
				out=$(unescaped "$(field "$line" Output)"; echo x); out=${out%x}
				if [[ -z $tst ]]; then
					case $out in ok* | FAIL* | "---"* | panic* | *"[no test files]"* | *"build failed"*) printf '%s' "$out";; esac
				else
					buf[$pkg/$tst]+=$out
				fi;;
			fail) [[ -n $tst ]] && printf '%s' "${buf[$pkg/$tst]}"; unset "buf[$pkg/$tst]"; [[ -z $tst ]] && done=$((done + 1));;
			pass | skip) unset "buf[$pkg/$tst]"; [[ -z $tst ]] && done=$((done + 1));;
			esac
		else
			(($? > 128)) || break
		fi
		if ((SECONDS - said >= every)); then
			local now=${test[${running:-none}]}
			say "$done packages tested; testing ${running:-(compiling)}${now:+, running $now}"
			said=$SECONDS
		fi
	done
	say "$done packages tested"
}

case " $* " in
*" test "*) "$@" 2>&1 | talk_test;;
*) "$@" 2>&1 | talk_build;;
esac
