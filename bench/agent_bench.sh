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

SAMPLES=$B/bench/samples
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

run_once() {	# mode n
	"$BIN" "$1" "$2"
}

cat >"$B/bench/names" <<'EOF2'
base	baseline, no probe
kprobe	int3 kprobe, empty pre_handler
post	int3 kprobe, empty pre and post handlers
kretprobe	int3 kretprobe (entry + trampoline), empty handler
floor	floor: function-pointer hook writing a 32-byte record
opt	optimised kprobe, empty pre_handler
optrec	optimised kprobe, pre_handler writing the record
optsimd	the same without KPROBE_FLAG_NOSIMD (SIMD state saved)
optret	optimised kretprobe: entry and return handlers each writing the record
optrets	the same, instances from the thread's return stack (KPROBE_FLAG_RP_THREAD)
EOF2
echo "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats, ~${SECONDS_PER_RUN} s per run" >&2
for m in base floor opt optrec optsimd optret optrets kprobe post kretprobe; do
	case $m in base) pilot=10000000 ;; *) pilot=20000 ;; esac
	echo "$m $(measure $pilot "$m")"
done | table "$B/bench/names" base floor "opt optrec optsimd optret optrets"
rm -f "$SAMPLES" "$B/bench/names"
