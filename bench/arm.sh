#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Arming and disarming many probe locations on the in-process engine:
# a generated program of N small functions (N = 1,000 / 10,000 / 50,000,
# BENCH_SIZES), one probe on every function, attached with -p and
# detached.  The agent itself times both (DPROBE_VERBOSE=1 in the
# target's environment: "libdprobe: armed N locations in T ms (code pages
# K KiB, tables K KiB)", then "disarmed ..."), so dprobe's own start and
# symbol resolution are not counted.
#
#   sh bench/arm.sh [DPROBE]        (DPROBE default: build/dprobe)
#
# Rows, each the median of BENCH_REPEATS (default 3) attach/detach runs:
#   defs-N   N events, one probe each (p:g/fnI fnI)
#   one-N    one event with N probes (p:g/all fnI), the function tracer's
#            shape
# with ms to arm, ms to disarm, their growth per location (us), and the
# memory per armed location (the pages of slots and detours plus the
# agent's tables, over N).  Growth must be linear or better: the us per
# location must not rise with N.  The generated programs are compiled
# once (-O1; 50,000 functions take minutes) and kept in
# ${BENCH_CACHE:-/tmp/dprobe-arm-bench}.
set -u

here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
case $DPROBE in /*) ;; *) DPROBE=$(pwd)/$DPROBE ;; esac
REPEATS=${BENCH_REPEATS:-3}
SIZES=${BENCH_SIZES:-1000 10000 50000}
cache=${BENCH_CACHE:-/tmp/dprobe-arm-bench}
mkdir -p "$cache" || exit 2

echo "cpu flags: $(grep -o -w -E 'rdtscp|rdpid|constant_tsc' /proc/cpuinfo |
	sort -u | tr '\n' ' ')"
echo "machine: $(nproc) CPUs, $(uname -r); median of $REPEATS"

# prog N: the program with N functions (made once), its definitions
prog() {
	[ -x "$cache/many$1" ] && return 0
	awk -v n="$1" -v dir="$cache" 'BEGIN {
		c = dir "/many" n ".c"
		for (i = 0; i < n; i++)
			printf "__attribute__((noinline)) int fn%d(int x) " \
			       "{ __asm__ volatile(\"\"); return x * %d + %d; }\n",
			       i, i % 7 + 1, i > c
		printf "int (*const tab[])(int) = {\n" > c
		for (i = 0; i < n; i++) printf " fn%d,\n", i > c
		print "};\n#include <unistd.h>\n#include <stdio.h>" > c
		print "static int all(int s) { for (unsigned i = 0; i < " \
		      "sizeof(tab) / sizeof(tab[0]); i++) s += tab[i](s); " \
		      "return s; }" > c
		print "int main(void) { char b; int s = all(0);" > c
		print " printf(\"ready\\n\"); fflush(stdout);" > c
		print " while (read(0, &b, 1) == 1) s = all(s);" > c
		print " printf(\"%d\\n\", s); return 0; }" > c
		for (i = 0; i < n; i++) {
			printf "p:g/fn%d fn%d\n", i, i > (dir "/defs" n)
			printf "p:g/all fn%d\n", i > (dir "/one" n)
		}
	}' || return 1
	echo "compiling $1 functions (once)..." >&2
	nice -n 10 gcc -O1 -fno-omit-frame-pointer -o "$cache/many$1" \
		"$cache/many$1.c"
}

# once KIND N -> "arm_ms disarm_ms code_kib tables_kib arm_cpu_ms disarm_cpu_ms"
once() {
	log=$cache/log.$$
	fifo=$cache/in.$$
	rm -f "$fifo" && mkfifo "$fifo" || return 1
	DPROBE_VERBOSE=1 "$cache/many$2" <"$fifo" >/dev/null 2>"$log" &
	pid=$!
	exec 9>"$fifo"
	sleep 0.2
	"$DPROBE" trace -e "@$cache/$1$2" -o /dev/null --duration 0.5 \
		-p "$pid" 2>/dev/null
	exec 9>&-
	wait "$pid"
	rm -f "$fifo"
	awk '/libdprobe: armed/ { a = $6; c = $10; t = $13; ac = $16 }
	     /libdprobe: disarmed/ { d = $6; dc = $16 }
	     END { if (a == "" || d == "") exit 1
		   print a, d, c + 0, t + 0, ac + 0, dc + 0 }
	    ' "$log"
}

med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| case | ms to arm (cpu) | ms to disarm (cpu) | us/location arm (cpu) | us/location disarm (cpu) | bytes/location |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for n in $SIZES; do
	prog "$n" || { echo "| $n | n/a (build failed) |"; continue; }
	for kind in defs one; do
		: >"$cache/s.$$"
		r=0
		while [ $r -lt "$REPEATS" ]; do
			once $kind "$n" >>"$cache/s.$$" || break
			r=$((r + 1))
		done
		if [ $r -lt "$REPEATS" ]; then
			echo "| $kind-$n | n/a | n/a | | | |"
			continue
		fi
		a=$(cut -d' ' -f1 "$cache/s.$$" | med)
		d=$(cut -d' ' -f2 "$cache/s.$$" | med)
		ac=$(cut -d' ' -f5 "$cache/s.$$" | med)
		dc=$(cut -d' ' -f6 "$cache/s.$$" | med)
		m=$(tail -n 1 "$cache/s.$$" | awk '{ print ($3 + $4) * 1024 }')
		awk -v k="$kind-$n" -v n="$n" -v a="$a" -v d="$d" -v m="$m" \
		    -v ac="$ac" -v dc="$dc" 'BEGIN {
			printf "| %s | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.0f |\n",
			k, a, ac, d, dc, a * 1000 / n, ac * 1000 / n,
			d * 1000 / n, dc * 1000 / n, m / n }'
	done
done
rm -f "$cache/s.$$" "$cache/log.$$"
