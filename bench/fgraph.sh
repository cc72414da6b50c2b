#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The function_graph tracer's cost per call, against uftrace's, on one
# call-heavy program: bench/fgraph_bench.c (13 calls a round over five
# small functions, the loop timed by the program itself).
#
#   sh bench/fgraph.sh [DPROBE]        (DPROBE default: build/dprobe)
#
# Rows, each the median of BENCH_REPEATS (default 3) runs of N rounds
# (BENCH_N, default 200000: 2.6 M calls), every function traced on entry
# and return:
#   base   the program untraced (-O2); basen, basef: the -pg builds
#          below untraced (the entry nops; gprof's mcount)
#   dg     dprobe record --tracer function_graph, default buffer (1 MiB
#          a thread: records the reader could not keep up with are lost,
#          and counted)
#   dgb    the same with --buffer-size BENCH_BUFFER (default 8M: a
#          modest ring, not one the size of the whole trace, which would
#          measure the kernel faulting in fresh memory, not tracing)
#   dgf    dprobe, the -pg -mfentry -mnop-mcount build: the probes go on
#          the compiler's entry nops (--buffer-size BENCH_BUFFER)
#   ud     uftrace record -P . (dynamic patching, the -O2 build)
#   up     uftrace record of the -pg build (mcount)
# For each: the loop's ns per call, the overhead per call over base (for
# the -pg build, over that build untraced), the events kept and lost
# (medians), and in how many runs every record was kept: dprobe's rows
# keep every record only where lost is 0 in every run.
# Then two real programs, each run whole (BENCH_REAL=0 skips them):
# SQLite from Debian's libsqlite3.a (bench/fgraph_sqlite.c: every one of
# its functions has a symbol) building a table and querying it, and
# python3.11 running a small script (its ~1,500 exported functions):
# the wall time untraced, under dprobe record --tracer function_graph
# (--buffer-size BENCH_BUFFER, the records it lost in its last run
# printed) and under uftrace record -P .; the calls are dprobe's events
# kept / 2 (fewer than made when it lost some), the overhead per call
# the difference in wall time over them (arming included: what a user
# waits for).
# uftrace keeps every record (it waits for its writer).  The CPU's
# clock features are printed first: the agent's cost per hit depends on
# them.
set -u

here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
case $DPROBE in /*) ;; *) DPROBE=$(pwd)/$DPROBE ;; esac
N=${BENCH_N:-200000}
REPEATS=${BENCH_REPEATS:-3}
CALLS=$((N * 13))

tmp=$(mktemp -d /tmp/dpfgbench.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
src=$here/fgraph_bench.c
gcc -g -O2 -o "$tmp/fb" "$src" || exit 2
# -mnop-mcount needs code that is not position-independent
gcc -g -O2 -pg -mfentry -mnop-mcount -fno-pie -no-pie -o "$tmp/fb-fentry" \
	"$src" || exit 2
gcc -g -O2 -pg -o "$tmp/fb-pg" "$src" || exit 2

lib=$(dirname "$DPROBE")
if gcc -O2 -o "$tmp/agent_clock" "$here/agent_clock.c" -ldl 2>/dev/null; then
	"$tmp/agent_clock" "$lib/libdprobe.so" 2>&1
fi
echo "cpu flags: $(grep -o -w -E 'rdtscp|rdpid|constant_tsc' /proc/cpuinfo |
	sort -u | tr '\n' ' ')"
echo "machine: $(nproc) CPUs, $(uname -r); $N rounds ($CALLS calls)," \
	"median of $REPEATS"
have_uftrace=1
command -v uftrace >/dev/null 2>&1 || have_uftrace=0
buf=${BENCH_BUFFER:-8M}

# run ID -> "loop_ns events lost" of one run
run() {
	rm -rf "$tmp/rec.dat" "$tmp/ufd"
	case $1 in
	base) "$tmp/fb" "$N" >"$tmp/out"; echo "$(cut -d' ' -f1 "$tmp/out") 0 0"
		return ;;
	basen) "$tmp/fb-fentry" "$N" >"$tmp/out"
		echo "$(cut -d' ' -f1 "$tmp/out") 0 0"; return ;;
	basef) (cd "$tmp" && "$tmp/fb-pg" "$N") >"$tmp/out" 2>/dev/null
		echo "$(cut -d' ' -f1 "$tmp/out") 0 0"; return ;;
	dg) set -- "$tmp/fb" ;;
	dgb) set -- --buffer-size "$buf" "$tmp/fb" ;;
	dgf) set -- --buffer-size "$buf" "$tmp/fb-fentry" ;;
	ud|up)
		[ "$1" = ud ] && set -- -P . "$tmp/fb" || set -- "$tmp/fb-pg"
		(cd "$tmp" && uftrace record -d "$tmp/ufd" "$@" "$N") \
			>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
		# an entry and an exit record a call, as dprobe counts
		echo "$(cut -d' ' -f1 "$tmp/out") $((CALLS * 2)) 0"
		return ;;
	esac
	bin=$(eval echo "\${$#}")
	opts=
	[ $# -gt 1 ] && opts="$1 $2"
	# shellcheck disable=SC2086  # opts is two words or none
	"$DPROBE" record --engine agent --tracer function_graph $opts \
		-o "$tmp/rec.dat" -- "$bin" "$N" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; return 1; }
	sum=$(sed -n 's/^dprobe: \([0-9]*\) events, 0 filtered, [0-9]* missed, \([0-9]*\) lost$/\1 \2/p' \
		"$tmp/err")
	echo "$(cut -d' ' -f1 "$tmp/out") $sum"
}

ids="base basen basef dg dgb dgf"
[ $have_uftrace = 1 ] && ids="$ids ud up"
: >"$tmp/rows"
for id in $ids; do
	: >"$tmp/samples"
	for _ in $(seq "$REPEATS"); do
		run "$id" >>"$tmp/samples" || exit 1
	done
	# each column's median, and the runs that lost nothing
	mid=$(( (REPEATS + 1) / 2 ))
	echo "$id $(cut -d' ' -f1 "$tmp/samples" | sort -n | sed -n "${mid}p")" \
		"$(cut -d' ' -f2 "$tmp/samples" | sort -n | sed -n "${mid}p")" \
		"$(cut -d' ' -f3 "$tmp/samples" | sort -n | sed -n "${mid}p")" \
		"$(awk '$3 == 0' "$tmp/samples" | wc -l)" >>"$tmp/rows"
done

echo
echo "| id | case | ns/call | overhead ns/call | events | lost | runs with none lost |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
awk -v calls="$CALLS" -v reps="$REPEATS" -v buf="$buf" '
	{ ns[$1] = $2; ev[$1] = $3; lost[$1] = $4; whole[$1] = $5
	  order[NR] = $1 }
	END {
		name["base"] = "untraced (-O2)"
		name["basen"] = "untraced, the -pg -mfentry -mnop-mcount build"
		name["basef"] = "untraced, the -pg build (gprof mcount)"
		name["dg"] = "dprobe record --tracer function_graph, default buffer"
		name["dgb"] = "dprobe, --buffer-size " buf
		name["dgf"] = "dprobe on the -pg -mfentry -mnop-mcount build, " \
			"--buffer-size " buf
		name["ud"] = "uftrace record -P . (dynamic)"
		name["up"] = "uftrace record, the -pg build"
		for (i = 1; i <= NR; i++) {
			id = order[i]
			b = id == "up" ? ns["basef"] : id == "dgf" ? ns["basen"] : ns["base"]
			ovh = (id ~ /^base/) ? "-" : sprintf("%.1f", (ns[id] - b) / calls)
			printf "| %s | %s | %.1f | %s | %d | %d | %s |\n", id,
				name[id], ns[id] / calls, ovh, ev[id], lost[id],
				id ~ /^(dg|dgb|dgf)$/ ? whole[id] "/" reps : "-"
		}
		# the ratio is said to keep every record only when it did
		if ("ud" in ns && "dgb" in ns) {
			kept = "every record kept in every run"
			if (whole["dgb"] != reps)
				kept = sprintf("dprobe lost records in %d of %d " \
					"runs, %d in the median",
					reps - whole["dgb"], reps, lost["dgb"])
			printf "\nuftrace -P . / dprobe --buffer-size %s: %.1fx " \
				"(%s)\n", buf,
				(ns["ud"] - ns["base"]) / (ns["dgb"] - ns["base"]), kept
		}
	}' "$tmp/rows"
[ $have_uftrace = 1 ] || echo "uftrace rows n/a: uftrace is not installed"

# ---- real programs ----------------------------------------------------------
[ "${BENCH_REAL:-1}" = 1 ] || exit 0
SQLITE_A=/usr/lib/x86_64-linux-gnu/libsqlite3.a
PY=/usr/bin/python3.11
SQL_N=${BENCH_SQL_N:-2000}
PY_SCRIPT='import json; print(len(json.dumps([{"k": i, "v": str(i)} for i in range(3000)])))'

wall() {	# CMD... -> seconds, the command's output to $tmp/out
	s=$(date +%s.%N)
	"$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
	e=$(date +%s.%N)
	echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }'
}

median3() {	# a run of CMD... REPEATS times -> the median seconds
	: >"$tmp/w"
	for _ in $(seq "$REPEATS"); do
		wall "$@" >>"$tmp/w" || return 1
	done
	sort -n "$tmp/w" | sed -n "$(( (REPEATS + 1) / 2 ))p"
}

real_rows() {	# NAME CMD...
	name=$1
	shift
	base=$(median3 "$@") || return 1
	rm -f "$tmp/r.dat"
	dp=$(median3 "$DPROBE" record --engine agent --tracer function_graph \
		--buffer-size "$buf" --force -o "$tmp/r.dat" -- "$@") || return 1
	ev=$(sed -n 's/^dprobe: \([0-9]*\) events, .*/\1/p' "$tmp/err")
	lost=$(sed -n 's/.*, \([0-9]*\) lost$/\1/p' "$tmp/err" | tail -n 1)
	uf=n/a
	if [ $have_uftrace = 1 ]; then
		rm -rf "$tmp/ufd"
		uf=$(cd "$tmp" && median3 uftrace record -d "$tmp/ufd" -P . "$@") ||
			uf=n/a
	fi
	awk -v n="$name" -v b="$base" -v d="$dp" -v u="$uf" -v ev="$ev" \
		-v lost="$lost" 'BEGIN {
		calls = ev / 2
		printf "| %s | %d | %.3f | %.3f | %.0f | %d | %s | %s |\n", n,
			calls, b, d, (d - b) * 1e9 / calls, lost, u,
			u == "n/a" ? "n/a" : sprintf("%.0f", (u - b) * 1e9 / calls)
	}'
}

echo
echo "| program | calls | untraced s | dprobe s | dprobe ns/call | dprobe lost (last run) | uftrace -P . s | uftrace ns/call |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
if [ -f "$SQLITE_A" ] &&
	gcc -g -O2 -o "$tmp/fsq" "$here/fgraph_sqlite.c" "$SQLITE_A" -lm \
		2>/dev/null; then
	real_rows "sqlite ($SQL_N rows)" "$tmp/fsq" "$SQL_N"
else
	echo "| sqlite | n/a: no $SQLITE_A (libsqlite3-dev) |"
fi
if [ -x "$PY" ]; then
	real_rows "python3.11 script" "$PY" -c "$PY_SCRIPT"
else
	echo "| python3.11 | n/a: no $PY |"
fi
