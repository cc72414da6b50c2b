#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What a disabled tracepoint costs, in instructions: callgrind counts the
# instructions of tp_cost's with_tp() (a trace_cost() site, no probe) and
# without_tp() (the same function without it), each called N times.  The
# difference per call must be at most 3 with the jump label (the 5-byte
# nop, plus what the compiler adds around the out-of-line call); the
# load-and-branch fallback (tp_cost_nojl) is reported, bounded at 6.
#
#   sh tests/agent/tp_callgrind.sh BUILD_DIR
#
# TAP lines for tests/agent/run.sh; skips when valgrind is not installed.
set -u
B=$(cd "${1:?usage: tp_callgrind.sh BUILD_DIR}" && pwd)
N=${TP_COST_CALLS:-200000}
tmp=$(mktemp -d /tmp/dprobe-tpcg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0

if ! command -v valgrind >/dev/null 2>&1 ||
   ! command -v callgrind_annotate >/dev/null 2>&1; then
	echo "ok 1 - disabled tracepoint cost # SKIP valgrind is not installed"
	echo "1..1"
	exit 0
fi

# per_call PROGRAM -> "WITH WITHOUT" instructions per call, or nothing
per_call() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
		"$1" "$N" >"$tmp/stdout" 2>"$tmp/stderr" || return 1
	callgrind_annotate --inclusive=no --threshold=100 "$tmp/cg" |
	tr -d , | awk -v n="$N" '
		$NF ~ /^\[/ && $(NF - 1) ~ /:with_tp$/ { w = $1 }
		$NF ~ /^\[/ && $(NF - 1) ~ /:without_tp$/ { wo = $1 }
		END { if (w != "" && wo != "") printf "%.2f %.2f\n", w / n, wo / n }'
}

check() {	# program mode max
	n=$((n + 1))
	r=$(per_call "$B/tests/agent/$1")
	if [ -z "$r" ]; then
		echo "not ok $n - disabled tracepoint ($2): no counts from callgrind"
		sed 's/^/# /' "$tmp/stderr" | tail -n 5
		return
	fi
	set -- $r "$2" "$3"
	d=$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }')
	echo "# $3: $1 instructions per call with the site, $2 without"
	what="disabled tracepoint ($3): $d instructions per call over none"
	if awk -v d="$d" -v m="$4" 'BEGIN { exit !(d <= m) }'; then
		echo "ok $n - $what (at most $4)"
	else
		echo "not ok $n - $what (more than $4)"
	fi
}

check tp_cost "jump label" 3
check tp_cost_nojl "load and branch" 6
echo "1..$n"
