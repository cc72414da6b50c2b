#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Per-hit cost of a probe with --stack against the same probe without,
# on the in-process engine, in one run:
#
#   sh bench/stack.sh [DPROBE]        (default: build/dprobe)
#
# bench/stack_loop.c (frame pointers) calls work(a, b, s) N times from
# BENCH_DEPTH (default 10) nested calls: a stack of about DEPTH + 3
# frames, with 16 KiB of main's stack above them (so that the dwarf rows
# copy all they ask for).  Rows, each `dprobe trace --engine agent --overwrite -o
# /dev/null` (every hit writes its record; events + lost must be N):
#
#   b0  no probe
#   n2  p work a=%di:s32 b=%si:s64          (registers only: the fast path)
#   g2  n2 with --stack                     (the fetch program + the walk)
#   n3  p work a=%di:s32 c=+0(%dx):u8       (the fetch program)
#   g3  n3 with --stack                     (+ the walk alone)
#   d2  n2 with --call-graph dwarf          (registers + 8 KiB of stack
#                                            copied into the record)
#   k2  n2 with --call-graph dwarf,1024     (the same, 1 KiB)
#   d3  n3 with --call-graph dwarf
#
# The dwarf rows time the hit path only (the copy): dprobe unwinds each
# record it reads later, in its own process, and with --overwrite the
# records it does not get to are overwritten, counted as lost.
#
# ovh ns/hit = median(probed) - median(b0), medians of BENCH_REPEATS
# (default 5) runs of about BENCH_SECONDS (default 1) s; then the ratios
# g2/n2 and g3/n3 of those overheads (also from the fastest runs, which
# other load disturbs least), the frames a hit records, and the
# CPU features of the run (the agent's clock line, bench/agent_clock.c,
# and the flags that matter to it).  With BENCH_BASE=OTHER_DPROBE, n2
# and n3 also run on that dprobe (b-n2, b-n3): a probe without --stack
# before and after a change, in the same run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
case $DPROBE in /*) ;; *) DPROBE=$(pwd)/$DPROBE ;; esac
BASE=${BENCH_BASE:-}
SECONDS_PER_RUN=${BENCH_SECONDS:-1}
REPEATS=${BENCH_REPEATS:-5}
DEPTH=${BENCH_DEPTH:-10}

tmp=$(mktemp -d /tmp/dpstack.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
SAMPLES=$tmp/samples	# bench/lib.sh's measure()
LOOP=$tmp/stack_loop
gcc -O2 -fno-omit-frame-pointer -o "$LOOP" "$here/stack_loop.c" || exit 2

defs() {
	case $1 in
	*n2 | g2 | d2 | k2) echo "p:bench work a=%di:s32 b=%si:s64" ;;
	*n3 | g3 | d3) echo "p:bench work a=%di:s32 c=+0(%dx):u8" ;;
	esac
}

# run_once ID N -> "<ns> <N>"
run_once() {
	id=$1 n=$2
	if [ "$id" = b0 ]; then
		"$LOOP" "$n" "$DEPTH" 16384
		return
	fi
	dp=$DPROBE stk=
	case $id in b-*) dp=$BASE ;; esac
	case $id in
	g*) stk=--stack ;;
	d*) stk="--call-graph dwarf" ;;
	k*) stk="--call-graph dwarf,1024" ;;
	esac
	# shellcheck disable=SC2086  # $stk: an option or nothing
	out=$("$dp" trace --engine agent --overwrite -o /dev/null $stk \
		-e "$(defs "$id")" -- "$LOOP" "$n" "$DEPTH" 16384 2>"$tmp/err") ||
		{ cat "$tmp/err" >&2; return 1; }
	got=$(sed -n 's/^dprobe: \([0-9]*\) events, 0 filtered, 0 missed, \([0-9]*\) lost$/\1 \2/p' \
		"$tmp/err" | awk '{ print $1 + $2 }')
	[ "$got" = "$n" ] ||
		{ echo "stack bench: $id: $n hits expected: $(tail -n 1 "$tmp/err")" >&2; return 1; }
	echo "$out"
}

# shellcheck source=bench/lib.sh
. "$here/lib.sh"

ids="b0 n2 g2 d2 k2 n3 g3 d3"
[ -n "$BASE" ] && ids="$ids b-n2 b-n3"
cat >"$tmp/names" <<EOF2
b0	baseline, no probe (work() under $DEPTH nested calls)
n2	p work a=%di:s32 b=%si:s64 (registers: the fast path)
g2	n2 with --stack
n3	p work a=%di:s32 c=+0(%dx):u8 (fetch program)
g3	n3 with --stack
d2	n2 with --call-graph dwarf (8 KiB copied)
k2	n2 with --call-graph dwarf,1024 (1 KiB copied)
d3	n3 with --call-graph dwarf (8 KiB copied)
b-n2	n2 on BENCH_BASE ($BASE)
b-n3	n3 on BENCH_BASE ($BASE)
EOF2
echo "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats, ~${SECONDS_PER_RUN} s per run" >&2
for id in $ids; do
	case $id in b0) pilot=20000000 ;; *) pilot=1000000 ;; esac
	echo "$id $(measure $pilot "$id")"
done >"$tmp/results"
table "$tmp/names" b0 none "" <"$tmp/results"
echo
awk '{ m[$1] = $4; mn[$1] = $3 } END {
	b = m["b0"]
	if (m["n2"] > b && m["g2"] != "")
		printf "g2 / n2 (over base): %.2f\n", (m["g2"] - b) / (m["n2"] - b)
	if (m["n3"] > b && m["g3"] != "")
		printf "g3 / n3 (over base): %.2f\n", (m["g3"] - b) / (m["n3"] - b)
	if (m["n2"] > b && m["d2"] != "")
		printf "d2 / n2 (over base): %.2f\n", (m["d2"] - b) / (m["n2"] - b)
	if (m["g2"] > b && m["d2"] != "")
		printf "d2 / g2 (over base): %.2f\n", (m["d2"] - b) / (m["g2"] - b)
	if (m["n2"] > b && m["k2"] != "")
		printf "k2 / n2 (over base): %.2f\n", (m["k2"] - b) / (m["n2"] - b)
	if (m["b-n2"] != "" && m["b-n2"] > b)
		printf "n2 / b-n2 (over base): %.2f\n", (m["n2"] - b) / (m["b-n2"] - b)
	if (m["b-n3"] != "" && m["b-n3"] > b)
		printf "n3 / b-n3 (over base): %.2f\n", (m["n3"] - b) / (m["b-n3"] - b)
	# the same from the fastest runs, less disturbed by other load
	b = mn["b0"]
	if (mn["n2"] > b && mn["g2"] != "")
		printf "min: g2 / n2 %.2f", (mn["g2"] - b) / (mn["n2"] - b)
	if (mn["n3"] > b && mn["g3"] != "")
		printf ", g3 / n3 %.2f", (mn["g3"] - b) / (mn["n3"] - b)
	if (mn["b-n2"] != "" && mn["b-n2"] > b)
		printf ", n2 / b-n2 %.2f", (mn["n2"] - b) / (mn["b-n2"] - b)
	if (mn["b-n3"] != "" && mn["b-n3"] > b)
		printf ", n3 / b-n3 %.2f", (mn["n3"] - b) / (mn["b-n3"] - b)
	print ""
}' "$tmp/results"
# the frames one hit records
"$DPROBE" trace --engine agent --json --stack -e "$(defs g2)" \
	-- "$LOOP" 1 "$DEPTH" 16384 2>/dev/null |
	awk -F '"ip":' '/"stack"/ { print "frames per hit: " NF - 2; exit }'
"$DPROBE" trace --engine agent --json --call-graph dwarf -e "$(defs d2)" \
	-- "$LOOP" 1 "$DEPTH" 16384 2>/dev/null |
	awk -F '"ip":' '/"stack"/ { print "frames per hit (dwarf): " NF - 2; exit }'
# what the agent's hit path runs on here
lib=$(dirname "$DPROBE")
if [ -f "$lib/libdprobe.so" ] &&
	gcc -O2 -o "$tmp/agent_clock" "$here/agent_clock.c" -ldl; then
	"$tmp/agent_clock" "$lib/libdprobe.so" 2>&1
fi
printf 'cpu: %s\n' "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
printf 'cpu flags:'
for f in constant_tsc nonstop_tsc tsc_known_freq rdtscp rdpid fsgsbase \
	xsave xsaves avx avx2 avx512f hypervisor; do
	grep -qw "$f" /proc/cpuinfo && printf ' %s' "$f"
done
echo
