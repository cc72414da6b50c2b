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
# median(probed) - median(base).  Prints a Markdown table.
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
for m in base kprobe post kretprobe; do
	echo "$m $(measure $m)"
done | awk '
BEGIN {
	name["base"] = "baseline, no probe"
	name["kprobe"] = "int3 kprobe, empty pre_handler"
	name["post"] = "int3 kprobe, empty pre and post handlers"
	name["kretprobe"] = "int3 kretprobe (entry + trampoline), empty handler"
	print "| case | N | min ns/call | median ns/call | ovh ns/hit |"
	print "| --- | ---: | ---: | ---: | ---: |"
}
{
	if ($2 == "n/a") { printf "| %s | n/a | n/a | n/a | n/a |\n", name[$1]; next }
	if ($1 == "base") base = $4
	ovh = $1 == "base" ? "-" : sprintf("%.0f", $4 - base)
	printf "| %s | %d | %.1f | %.1f | %s |\n", name[$1], $2, $3, $4, ovh
}'
rm -f "$B/bench/samples"
