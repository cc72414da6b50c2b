#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Per-hit cost of `dprobe latency` against `dprobe stat` and no tracing,
# on the in-process engine, on the loop of bench/run.sh, in one run.
#
#   sh bench/oneliner.sh [DPROBE]        (DPROBE default: build/dprobe)
#
# bench/loop.c calls work(a, b, s) N times and times only its loop; N is
# chosen from a pilot run for about BENCH_SECONDS (default 2) seconds per
# run, each configuration is run BENCH_REPEATS (default 5) times and the
# median ns per call kept; ovh = that median - the untraced median.
#
#   b0  the loop, untraced
#   s1  dprobe stat -e 'p:bench work': the entry counted (no record)
#   s2  dprobe stat -e 'p:bench work' -e 'r:benchret work': entry and
#       return counted
#   l1  dprobe latency work: each call timed in the process (the return
#       instance keeps the entry's stamp, the return adds the duration
#       to the thread's table), the entry counted; no record (events =
#       2N)
#   l1r l1 with DPROBE_AGG=0: entry and return each record the stack
#       pointer (and the time), dprobe pairs them per thread and adds
#       the duration to a dp_hist; every hit's record made (events +
#       lost = 2N: a ring that is full drops the newest, counted)
#   c1  dprobe count -e 'p:bench work a=%di:s32' --by a: an entry record
#       aggregated by a field
#
# Then the ratios of the overheads in this run, the agent's clock and the
# CPU features it is chosen from.
set -u

here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
case $DPROBE in /*) ;; *) DPROBE=$(pwd)/$DPROBE ;; esac
SECONDS_PER_RUN=${BENCH_SECONDS:-2}
REPEATS=${BENCH_REPEATS:-5}

tmp=$(mktemp -d /tmp/dpbench-ol.XXXXXX) || exit 2
SAMPLES=$tmp/samples
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

gcc -g -O2 -o "$tmp/loop" "$here/loop.c" || exit 2
LOOP=$tmp/loop
lib=$(dirname "$DPROBE")
agent_clock="agent clock: unknown (no libdprobe.so next to dprobe)"
if [ -f "$lib/libdprobe.so" ] &&
	gcc -O2 -o "$tmp/agent_clock" "$here/agent_clock.c" -ldl; then
	agent_clock=$("$tmp/agent_clock" "$lib/libdprobe.so" 2>&1)
fi

# run_once ID N -> "<ns for the loop> <N>", or fails with the reason
run_once() {
	id=$1
	n=$2
	case $id in
	b0) out=$("$LOOP" "$n") || return 1; echo "$out"; return ;;
	s1) set -- stat -e 'p:bench work' ;;
	s2) set -- stat -e 'p:bench work' -e 'r:benchret work' ;;
	l1 | l1r) set -- latency work ;;
	c1) set -- count -e 'p:bench work a=%di:s32' --by a ;;
	esac
	agg=
	[ "$id" = l1r ] && agg=0
	DPROBE_AGG=$agg "$DPROBE" "$@" --engine agent -- "$LOOP" "$n" \
		>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
	case $id in
	l1 | l1r | s2) want=$((2 * n)) ;;
	*) want=$n ;;
	esac
	# every hit made a record or was counted: events + lost
	got=$(sed -n 's/^dprobe: \([0-9]*\) events, 0 filtered, 0 missed, \([0-9]*\) lost$/\1 \2/p' \
		"$tmp/err" | awk '{ print $1 + $2 }')
	if [ "$got" != "$want" ]; then
		echo "bench: $id: $want hits expected: $(tail -n 1 "$tmp/err")" >&2
		return 1
	fi
	# the loop's line: "<ns> <N> <sum>"
	grep -m 1 -E '^[0-9]+ [0-9]+ -?[0-9]+$' "$tmp/out"
}

# shellcheck source=bench/lib.sh
. "$here/lib.sh"

printf '%s\n' "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats, ~${SECONDS_PER_RUN} s per run" >&2
results=$tmp/results
: >"$results"
for id in ${BENCH_IDS:-b0 s1 s2 l1 l1r c1}; do
	case $id in b0) pilot=20000000 ;; *) pilot=1000000 ;; esac
	echo "bench: $id..." >&2
	echo "$id $(measure "$pilot" "$id")" >>"$results"
done

awk '
BEGIN {
	name["b0"] = "loop, untraced"
	name["s1"] = "dprobe stat: entry counted"
	name["s2"] = "dprobe stat: entry + return counted"
	name["l1"] = "dprobe latency: calls timed and aggregated in the process"
	name["l1r"] = "l1 the records way (DPROBE_AGG=0): paired by dprobe"
	name["c1"] = "dprobe count --by a: entry record aggregated"
	print "| id | case | N | min ns/call | median ns/call | ovh ns/call |"
	print "| --- | --- | ---: | ---: | ---: | ---: |"
}
$2 == "n/a" { printf "| %s | %s | n/a | n/a | n/a | n/a |\n", $1, name[$1]; next }
{
	if ($1 == "b0") base = $4
	o[$1] = $4 - base
	printf "| %s | %s | %d | %.1f | %.1f | %s |\n", $1, name[$1], $2, $3, $4,
		$1 == "b0" ? "-" : sprintf("%.1f", $4 - base)
}
END {
	print ""
	if (o["s2"] > 0 && "l1" in o)
		printf "latency / stat (entry + return): %.2f\n", o["l1"] / o["s2"]
	if (o["s1"] > 0 && "l1" in o)
		printf "latency / stat (entry): %.2f\n", o["l1"] / o["s1"]
	if (o["l1"] > 0 && "l1r" in o)
		printf "latency records way / in the process: %.2f\n", o["l1r"] / o["l1"]
	if (o["s1"] > 0 && "c1" in o)
		printf "count / stat (entry): %.2f\n", o["c1"] / o["s1"]
}' "$results"
echo
echo "$agent_clock"
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "CPU features: $(grep -m 1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
	grep -xE 'constant_tsc|nonstop_tsc|rdtscp|rdpid|tsc_known_freq|invariant_tsc' |
	tr '\n' ' ')"
