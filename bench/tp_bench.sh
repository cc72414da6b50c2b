#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Per-call cost of an application tracepoint (bench/tp_bench.c) on one
# loop, in one run: no tracepoint, a disabled one (the patched nop, and
# the load-and-branch fallback), an enabled one with an empty probe (the
# dispatch alone) and with a probe that writes the floor's 32-byte record
# into a thread-local ring, and the floor itself (a function-pointer hook
# writing the same record).
#
#   sh bench/tp_bench.sh [BUILD_DIR]     (default: build; `make tp-bench`)
#
# Each case runs BENCH_REPEATS (default 5) times with N chosen from a
# pilot run so that a run takes about BENCH_SECONDS (default 1) seconds;
# the median ns per call is kept, and ovh ns/call is median(case) -
# median(base).  Prints a Markdown table, then the enabled rows' ratios
# to the floor, both over the baseline (the issue aims at the floor).
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:-$here/../build}" && pwd)
SECONDS_PER_RUN=${BENCH_SECONDS:-1}
REPEATS=${BENCH_REPEATS:-5}
for b in tp_bench tp_bench_nojl; do
	[ -x "$B/bench/$b" ] || { echo "tp_bench: build it with make tp-bench" >&2; exit 2; }
done

run_once() {	# binary mode n -> ns per call
	out=$("$B/bench/$1" "$2" "$3") || return 1
	echo "$out" | awk '{ printf "%.3f\n", $1 / $2 }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

measure() {	# binary mode -> "N MIN MEDIAN"
	p=$(run_once "$1" "$2" 10000000) || { echo n/a; return; }
	n=$(awk -v p="$p" -v s="$SECONDS_PER_RUN" 'BEGIN {
		n = s * 1e9 / p; e = 1; while (n >= 100) { n /= 10; e *= 10 }
		printf "%d\n", int(n + 0.5) * e }')
	: >"$B/bench/tp_samples"
	r=0
	while [ $r -lt "$REPEATS" ]; do
		run_once "$1" "$2" "$n" >>"$B/bench/tp_samples" || { echo n/a; return; }
		r=$((r + 1))
	done
	echo "$n $(sort -n "$B/bench/tp_samples" | head -n 1) $(median <"$B/bench/tp_samples")"
}

echo "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats, ~${SECONDS_PER_RUN} s per run" >&2
for c in tp_bench:base tp_bench:floor tp_bench:disabled tp_bench_nojl:disabled \
	 tp_bench:empty tp_bench:enabled tp_bench_nojl:enabled; do
	echo "$c $(measure "${c%%:*}" "${c#*:}")"
done | awk '
BEGIN {
	name["tp_bench:base"] = "baseline, no tracepoint"
	name["tp_bench:floor"] = "floor: function-pointer hook writing a 32-byte record"
	name["tp_bench:disabled"] = "disabled tracepoint (nop)"
	name["tp_bench_nojl:disabled"] = "disabled tracepoint, fallback (load and branch)"
	name["tp_bench:empty"] = "enabled, empty probe (the dispatch alone)"
	name["tp_bench:enabled"] = "enabled, probe writing the record (jmp)"
	name["tp_bench_nojl:enabled"] = "enabled, probe writing the record, fallback"
	print "| case | N | min ns/call | median ns/call | ovh ns/call |"
	print "| --- | ---: | ---: | ---: | ---: |"
}
{
	if ($2 == "n/a") { printf "| %s | n/a | n/a | n/a | n/a |\n", name[$1]; next }
	if ($1 == "tp_bench:base") base = $4
	ovh = $1 == "tp_bench:base" ? "-" : sprintf("%.1f", $4 - base)
	o[$1] = $4 - base
	printf "| %s | %d | %.1f | %.1f | %s |\n", name[$1], $2, $3, $4, ovh
}
END {
	if (o["tp_bench:floor"] <= 0) exit
	print ""
	split("tp_bench:enabled tp_bench_nojl:enabled", m, " ")
	for (i = 1; i <= 2; i++)
		if (m[i] in o)
			printf "%s / floor (over base): %.2f\n", m[i],
				o[m[i]] / o["tp_bench:floor"]
}'
rm -f "$B/bench/tp_samples"
