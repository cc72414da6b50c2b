#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The stack tracer's cost per traced call, against the function tracer's
# on the same program in the same run: bench/fgraph_bench.c (13 calls a
# round over five small functions, the loop timed by the program).
#
#   sh bench/stacktracer.sh [DPROBE]        (DPROBE default: build/dprobe)
#
# Rows, each the median of BENCH_REPEATS (default 3) runs of N rounds
# (BENCH_N, default 200000: 2.6 M calls), every function traced on entry:
#   base  the program untraced (-O2)
#   fn    dprobe record --tracer function, --buffer-size for every record
#         (the entry probe and a record a call)
#   fnd   the same with the default buffer (1 MiB a thread): the records
#         the reader cannot keep up with are lost, and cost less
#   st    dprobe trace --tracer stack: the entry probe and the stack
#         check (the thread's stack top less %sp against the process's
#         deepest, one compare), a record only when the deepest grows
# For each: ns per call, the overhead per call over base, the events
# (st's: the new deepest stacks, a handful), and st's overhead as a
# fraction of fn's.
set -u

here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
case $DPROBE in /*) ;; *) DPROBE=$(pwd)/$DPROBE ;; esac
N=${BENCH_N:-200000}
REPEATS=${BENCH_REPEATS:-3}
CALLS=$((N * 13))

tmp=$(mktemp -d /tmp/dpstbench.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
gcc -g -O2 -o "$tmp/fb" "$here/fgraph_bench.c" || exit 2
echo "machine: $(nproc) CPUs, $(uname -r); $N rounds ($CALLS calls)," \
	"median of $REPEATS"
big=$((CALLS * 40 / 1048576 + 1))M

# run ID -> "loop_ns events" of one run
run() {
	case $1 in
	base) "$tmp/fb" "$N" >"$tmp/out"; echo "$(cut -d' ' -f1 "$tmp/out") 0"
		return ;;
	fn) rm -f "$tmp/rec.dat"
		set -- record --tracer function --buffer-size "$big" \
			-o "$tmp/rec.dat" ;;
	fnd) rm -f "$tmp/rec.dat"
		set -- record --tracer function -o "$tmp/rec.dat" ;;
	st) set -- trace --tracer stack -o "$tmp/table" ;;
	esac
	"$DPROBE" "$@" --engine agent -- "$tmp/fb" "$N" >"$tmp/out" \
		2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
	ev=$(sed -n 's/^dprobe: \([0-9]*\) events, .*/\1/p' "$tmp/err")
	echo "$(cut -d' ' -f1 "$tmp/out") $ev"
}

: >"$tmp/rows"
for id in base fn fnd st; do
	: >"$tmp/samples"
	for _ in $(seq "$REPEATS"); do
		run "$id" >>"$tmp/samples" || exit 1
	done
	echo "$id $(sort -n -k1 "$tmp/samples" |
		sed -n "$(( (REPEATS + 1) / 2 ))p")" >>"$tmp/rows"
done

echo
echo "| id | case | ns/call | overhead ns/call | events |"
echo "| --- | --- | ---: | ---: | ---: |"
awk -v calls="$CALLS" '
	{ ns[$1] = $2; ev[$1] = $3; order[NR] = $1 }
	END {
		name["base"] = "untraced (-O2)"
		name["fn"] = "dprobe record --tracer function (every record kept)"
		name["fnd"] = "the same, default buffer (records lost)"
		name["st"] = "dprobe trace --tracer stack"
		for (i = 1; i <= NR; i++) {
			id = order[i]
			ovh[id] = (ns[id] - ns["base"]) / calls
			printf "| %s | %s | %.1f | %s | %d |\n", id, name[id],
				ns[id] / calls,
				id == "base" ? "-" : sprintf("%.1f", ovh[id]), ev[id]
		}
		if (ovh["fn"] > 0 && ovh["fnd"] > 0)
			printf "\nstack tracer / function tracer, overhead per " \
				"call: %.2f (every record kept), %.2f (default " \
				"buffer)\n", ovh["st"] / ovh["fn"],
				ovh["st"] / ovh["fnd"]
	}' "$tmp/rows"
echo
echo "the deepest stack (st's last run):"
cat "$tmp/table"
