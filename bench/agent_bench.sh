#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Per-hit cost of libdprobe's in-process int3 probes (bench/agent_bench.c)
# against the unprobed loop, in one run:
#
#   sh bench/agent_bench.sh [BUILD_DIR]     (default: build; `make agent-bench`)
#
# Each configuration runs BENCH_REPEATS (default 5) times with N chosen
# from a pilot run so that a run takes about BENCH_SECONDS (default 1)
# seconds; the median ns per call is kept, and ovh ns/hit is
# median(probed) - median(base).  Prints a Markdown table, then the
# ratios of the jump-optimised rows to the floor (a function-pointer hook
# writing the same 32-byte record), both over the baseline; the issue's
# targets are <= 2 for an entry probe, <= 3 for an entry+return pair.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:-$here/../build}" && pwd)
BIN=$B/bench/agent_bench
SECONDS_PER_RUN=${BENCH_SECONDS:-1}
REPEATS=${BENCH_REPEATS:-5}
[ -x "$BIN" ] || { echo "agent_bench: build it with make agent-bench" >&2; exit 2; }

run_once() {	# mode n -> ns per call
	out=$("$BIN" "$1" "$2") || return 1
	echo "$out" | awk '{ printf "%.3f\n", $1 / $2 }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

measure() {	# mode -> "N MIN MEDIAN"
	case $1 in base) pilot=10000000 ;; *) pilot=20000 ;; esac
	p=$(run_once "$1" $pilot) || { echo n/a; return; }
	n=$(awk -v p="$p" -v s="$SECONDS_PER_RUN" 'BEGIN {
		n = s * 1e9 / p; e = 1; while (n >= 100) { n /= 10; e *= 10 }
		printf "%d\n", int(n + 0.5) * e }')
	: >"$B/bench/samples"
	r=0
	while [ $r -lt "$REPEATS" ]; do
		run_once "$1" "$n" >>"$B/bench/samples" || { echo n/a; return; }
		r=$((r + 1))
	done
	echo "$n $(sort -n "$B/bench/samples" | head -n 1) $(median <"$B/bench/samples")"
}

echo "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats, ~${SECONDS_PER_RUN} s per run" >&2
for m in base floor opt optrec optsimd optret kprobe post kretprobe; do
	echo "$m $(measure $m)"
done | awk '
BEGIN {
	name["base"] = "baseline, no probe"
	name["kprobe"] = "int3 kprobe, empty pre_handler"
	name["post"] = "int3 kprobe, empty pre and post handlers"
	name["kretprobe"] = "int3 kretprobe (entry + trampoline), empty handler"
	name["floor"] = "floor: function-pointer hook writing a 32-byte record"
	name["opt"] = "optimised kprobe, empty pre_handler"
	name["optrec"] = "optimised kprobe, pre_handler writing the record"
	name["optsimd"] = "the same without KPROBE_FLAG_NOSIMD (SIMD state saved)"
	name["optret"] = "optimised kretprobe: entry and return handlers " \
		"each writing the record"
	print "| case | N | min ns/call | median ns/call | ovh ns/hit |"
	print "| --- | ---: | ---: | ---: | ---: |"
}
{
	if ($2 == "n/a") { printf "| %s | n/a | n/a | n/a | n/a |\n", name[$1]; next }
	if ($1 == "base") base = $4
	ovh = $1 == "base" ? "-" : sprintf("%.1f", $4 - base)
	o[$1] = $4 - base
	printf "| %s | %d | %.1f | %.1f | %s |\n", name[$1], $2, $3, $4, ovh
}
END {
	if (o["floor"] <= 0) exit
	print ""
	split("opt optrec optsimd optret", m, " ")
	for (i = 1; i <= 4; i++)
		if (m[i] in o)
			printf "%s / floor (over base): %.2f\n", m[i],
				o[m[i]] / o["floor"]
}'
rm -f "$B/bench/samples"
