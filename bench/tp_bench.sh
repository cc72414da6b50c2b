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

SAMPLES=$B/bench/tp_samples
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

run_once() {	# binary mode n
	"$B/bench/$1" "$2" "$3"
}

cat >"$B/bench/tp_names" <<'EOF2'
tp_bench:base	baseline, no tracepoint
tp_bench:floor	floor: function-pointer hook writing a 32-byte record
tp_bench:disabled	disabled tracepoint (nop)
tp_bench_nojl:disabled	disabled tracepoint, fallback (load and branch)
tp_bench:empty	enabled, empty probe (the dispatch alone)
tp_bench:enabled	enabled, probe writing the record (jmp)
tp_bench_nojl:enabled	enabled, probe writing the record, fallback
EOF2
echo "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats, ~${SECONDS_PER_RUN} s per run" >&2
for c in tp_bench:base tp_bench:floor tp_bench:disabled tp_bench_nojl:disabled \
	 tp_bench:empty tp_bench:enabled tp_bench_nojl:enabled; do
	echo "$c $(measure 10000000 "${c%%:*}" "${c#*:}")"
done | table "$B/bench/tp_names" tp_bench:base tp_bench:floor \
	"tp_bench:enabled tp_bench_nojl:enabled"
rm -f "$SAMPLES" "$B/bench/tp_names"
