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
#   dgb    the same with BENCH_KEEP (default --blocking: a full ring
#          waits for the reader, every record is kept, as uftrace's
#          are; "--buffer-size 8M" measures a bigger ring instead, not
#          one the size of the whole trace, which would measure the
#          kernel faulting in fresh memory, not tracing)
#   dgf    dprobe, the -pg -mfentry -mnop-mcount build: the probes go on
#          the compiler's entry nops (BENCH_KEEP)
#   ud     uftrace record -P . (dynamic patching, the -O2 build)
#   up     uftrace record of the -pg build (mcount)
# For each: the loop's ns per call, the overhead per call over base (for
# the -pg build, over that build untraced), the events kept and lost
# (medians), and in how many runs every record was kept: dprobe's rows
# keep every record only where lost is 0 in every run.
# Then two real programs, each run whole (BENCH_REAL=0 skips them):
# SQLite from Debian's libsqlite3.a (bench/fgraph_sqlite.c: every one of
# its functions has a symbol) building a table of BENCH_SQL_N rows
# (default 20000) and querying it, and python3.11 encoding a list of
# BENCH_PY_N dicts (default 30000) to JSON (its ~1,500 exported
# functions): the wall time untraced, under dprobe record --tracer
# function_graph (BENCH_KEEP, the records it lost in its
# last run printed) and under uftrace record -P ., each at size 0 and at
# the size.  Size 0 is the fixed cost (start, arming, the program's own
# start, writing the files: what a user waits for whatever the program
# does); the cost per call is the difference between the two sizes'
# times, less the untraced difference, over the calls the bigger size
# makes more, each tool's own: dprobe's records (kept and lost) / 2,
# the calls in uftrace's report (it also hooks the PLT calls into
# libraries, and skips functions it cannot patch).
# Before each run, outside its time, the last run's files are removed
# and the dirty pages written out (sync): otherwise a run shares the two
# CPUs with the kernel's writeback of the hundreds of MB written before
# it, and the rows move by more than the tools differ.
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
keep=${BENCH_KEEP:---blocking}

# run ID -> "loop_ns events lost" of one run
# shellcheck disable=SC2086  # BENCH_KEEP is words
run() {
	rm -rf "$tmp/rec.dat" "$tmp/ufd" "$tmp/ufd.old"
	sync
	case $1 in
	base) "$tmp/fb" "$N" >"$tmp/out"; echo "$(cut -d' ' -f1 "$tmp/out") 0 0"
		return ;;
	basen) "$tmp/fb-fentry" "$N" >"$tmp/out"
		echo "$(cut -d' ' -f1 "$tmp/out") 0 0"; return ;;
	basef) (cd "$tmp" && "$tmp/fb-pg" "$N") >"$tmp/out" 2>/dev/null
		echo "$(cut -d' ' -f1 "$tmp/out") 0 0"; return ;;
	dg) set -- "$tmp/fb" ;;
	dgb) set -- $keep "$tmp/fb" ;;
	dgf) set -- $keep "$tmp/fb-fentry" ;;
	ud|up)
		[ "$1" = ud ] && set -- -P . "$tmp/fb" || set -- "$tmp/fb-pg"
		(cd "$tmp" && uftrace record -d "$tmp/ufd" "$@" "$N") \
			>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
		# an entry and an exit record a call, as dprobe counts
		echo "$(cut -d' ' -f1 "$tmp/out") $((CALLS * 2)) 0"
		return ;;
	esac
	opts=
	while [ $# -gt 1 ]; do
		opts="$opts $1"
		shift
	done
	bin=$1
	# shellcheck disable=SC2086  # opts is words
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
awk -v calls="$CALLS" -v reps="$REPEATS" -v buf="$keep" '
	{ ns[$1] = $2; ev[$1] = $3; lost[$1] = $4; whole[$1] = $5
	  order[NR] = $1 }
	END {
		name["base"] = "untraced (-O2)"
		name["basen"] = "untraced, the -pg -mfentry -mnop-mcount build"
		name["basef"] = "untraced, the -pg build (gprof mcount)"
		name["dg"] = "dprobe record --tracer function_graph, default buffer"
		name["dgb"] = "dprobe, " buf
		name["dgf"] = "dprobe on the -pg -mfentry -mnop-mcount build, " \
			buf
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
			printf "\nuftrace -P . / dprobe %s: %.1fx " \
				"(%s)\n", buf,
				(ns["ud"] - ns["base"]) / (ns["dgb"] - ns["base"]), kept
		}
	}' "$tmp/rows"
[ $have_uftrace = 1 ] || echo "uftrace rows n/a: uftrace is not installed"

# ---- real programs ----------------------------------------------------------
[ "${BENCH_REAL:-1}" = 1 ] || exit 0
SQLITE_A=/usr/lib/x86_64-linux-gnu/libsqlite3.a
PY=/usr/bin/python3.11
SQL_N=${BENCH_SQL_N:-20000}
PY_N=${BENCH_PY_N:-30000}
PY_SCRIPT='import json, sys
print(len(json.dumps([{"k": i, "v": str(i)} for i in range(int(sys.argv[1]))])))'

wall() {	# CMD... -> seconds, the command's output to $tmp/out
	s=$(date +%s.%N)
	"$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
	e=$(date +%s.%N)
	echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }'
}

# Before each timed run, outside its time: the last run's files removed
# (uftrace moves an old directory aside and dprobe --force replaces an
# old file: a deletion of hundreds of MB either way) and the dirty pages
# of the runs before written out, so that no run shares the CPUs with
# the kernel's writeback of another's.
fresh() {
	rm -rf "$tmp/r.dat" "$tmp/ufd" "$tmp/ufd.old"
	sync
}

median3() {	# a run of CMD... REPEATS times -> the median seconds
	: >"$tmp/w"
	for _ in $(seq "$REPEATS"); do
		fresh
		wall "$@" >>"$tmp/w" || return 1
	done
	sort -n "$tmp/w" | sed -n "$(( (REPEATS + 1) / 2 ))p"
}

# dprobe's events in its last run (-> $ev) and records lost (-> $lost)
dp_counts() {
	ev=$(sed -n 's/^dprobe: \([0-9]*\) events, .*/\1/p' "$tmp/err")
	lost=$(sed -n 's/.*, \([0-9]*\) lost$/\1/p' "$tmp/err" | tail -n 1)
}

dp_run() {	# CMD... under dprobe record --tracer function_graph
	# shellcheck disable=SC2086  # BENCH_KEEP is words
	median3 "$DPROBE" record --engine agent --tracer function_graph \
		$keep --force -o "$tmp/r.dat" -- "$@"
}

uf_run() {	# CMD... under uftrace record -P .
	(cd "$tmp" && median3 uftrace record -d "$tmp/ufd" -P . "$@")
}

# the calls uftrace recorded in its last run: not dprobe's, as it also
# hooks the PLT calls into libraries and skips what it cannot patch
uf_calls() {
	uftrace report -d "$tmp/ufd" --no-pager -f call 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ { s += $1 } END { print s + 0 }'
}

real_rows() {	# NAME SIZE CMD...: CMD with 0 and SIZE as its last argument
	name=$1
	size=$2
	shift 2
	b0=$(median3 "$@" 0) && bn=$(median3 "$@" "$size") || return 1
	d0=$(dp_run "$@" 0) || return 1
	dp_counts
	ev0=$ev
	lost0=$lost
	dn=$(dp_run "$@" "$size") || return 1
	dp_counts
	u0=n/a
	un=n/a
	uc0=0
	ucn=0
	if [ $have_uftrace = 1 ]; then
		u0=$(uf_run "$@" 0) && uc0=$(uf_calls) &&
			un=$(uf_run "$@" "$size") && ucn=$(uf_calls) || u0=n/a
	fi
	# dprobe's calls: the records it made (kept or lost) / 2
	awk -v n="$name" -v b0="$b0" -v bn="$bn" -v d0="$d0" -v dn="$dn" \
		-v u0="$u0" -v un="$un" -v ev="$ev" -v ev0="$ev0" \
		-v lost="$lost" -v lost0="$lost0" -v uc0="$uc0" -v ucn="$ucn" \
		'BEGIN {
		calls = (ev + lost - ev0 - lost0) / 2
		printf "| %s | %.3f | %d | %.3f (%.3f) | %.0f | %d | ", n, bn,
			calls, dn, d0, ((dn - d0) - (bn - b0)) * 1e9 / calls,
			lost
		if (u0 == "n/a" || ucn <= uc0)
			print "n/a | n/a | n/a |"
		else
			printf "%d | %.3f (%.3f) | %.0f |\n", ucn - uc0, un, u0,
				((un - u0) - (bn - b0)) * 1e9 / (ucn - uc0)
	}'
}

echo
echo "| program | untraced s | dprobe calls | dprobe s (size 0) | dprobe ns/call | dprobe lost (last run) | uftrace calls | uftrace -P . s (size 0) | uftrace ns/call |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
if [ -f "$SQLITE_A" ] &&
	gcc -g -O2 -o "$tmp/fsq" "$here/fgraph_sqlite.c" "$SQLITE_A" -lm \
		2>/dev/null; then
	real_rows "sqlite ($SQL_N rows)" "$SQL_N" "$tmp/fsq"
else
	echo "| sqlite | n/a: no $SQLITE_A (libsqlite3-dev) |"
fi
if [ -x "$PY" ]; then
	real_rows "python3.11 json ($PY_N dicts)" "$PY_N" "$PY" -c "$PY_SCRIPT"
else
	echo "| python3.11 | n/a: no $PY |"
fi
