#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Per-hit overhead of a probe: the kernel's uprobe_events, dprobe's two
# engines and the in-process floor, on the same loop, in the same run.
#
#   sh bench/run.sh [DPROBE]        (DPROBE default: build/dprobe)
#
# bench/loop.c calls work(a, b, s) N times and times only its loop.  For
# each configuration N is chosen from a short pilot run so that one run
# takes about BENCH_SECONDS (default 2) seconds; the run is repeated
# BENCH_REPEATS (default 5) times and the median ns per call is kept.
# ovh ns/hit = median(probed) - median(unprobed baseline): the cost of one
# call of work() with the probe(s) on it.
#
#   b0  baseline, no probe
#   f0  the floor: each call preceded by a hook through a function pointer
#       writing a 32-byte record (rdtsc, ip, two args) to a thread-local
#       ring (bench/floor.h)
#   k2  uprobe_events  p work  a=%di:s32 b=%si:s64
#   k3  k2 + s=+0(%dx):string
#   k4  k2 + r work ret=$retval:s64 (entry + return on each call)
#   e2s k2's probe through `dprobe stat --engine kernel` (uprobe_events in
#       its private instance, every record read back from trace_pipe_raw)
#   a2, a3, a4  the same definitions with `dprobe trace --engine agent
#       --overwrite -o /dev/null` (in-process, jump-optimised): every hit
#       writes its record into the thread's ring while dprobe reads and
#       formats what it can; events + lost must be N
#   a2s a2 with `dprobe stat --engine agent` (hits counted, no records)
#   a2h a2 with `--trigger 'hist:keys=a.log2:vals=b'`: the histogram kept
#       in the process (src/event/agg.h), no record made; its Hits must
#       be N
#   bt2h bpftrace on the kernel's uprobe, the same aggregation in its
#       terms: @h = hist(arg0); @s = sum(arg1) (n/a without bpftrace,
#       `apt-get install bpftrace`, or root); @s must be the loop's sum
#   a2hr a2h with DPROBE_AGG=0: records made for the histogram (ring
#       of 1 MiB, --overwrite), dprobe aggregating what it reads;
#       events + lost must be N
#   a2l `dprobe latency work --engine agent`: each call timed in the
#       process (the entry stamps the return instance, the return adds
#       the duration's log2 bucket, sum, max and min to the thread's
#       table), no record made; the histogram's count must be N and the
#       entries and returns counted 2N
#   a2lr a2l with DPROBE_AGG=0, latency's way before: entry and return
#       recorded (rings of 16 MiB, no --overwrite), paired by dprobe;
#       events + lost must be 2N (a lost record costs less than a made
#       one: a full ring flatters this row)
#   a2n a2 written by name, `p:bench work a b` (the debug information
#       types a as s32 and b as s64: the same definition as a2's)
#   a2f a2 with the loop started through `sh -c` with -f (the agent
#       follows sh's fork and the exec; the probe is PATH:work)
#   w0  the loop in 4 forked workers (loop N workers): ns per call per
#       worker, in each worker's CPU time
#   a2w w0 traced with -f: each worker records into rings of its own
#   l0  dlopen + a call + dlclose of a small library, M times (dl_bench.c)
#   l2  l0 with a probe on the library's function (pending until it is
#       loaded, armed before dlopen() returns, dropped by dlclose()): ovh
#       is the time from dlopen() to armed plus the drop, per cycle
# ovh is against b0, but a2w's against w0 and l2's against l0.
#   a2i a2 with jump optimisation off (DPROBE_NOOPT=1): the int3 path
#   d2, d3, d4  the same definitions with `dprobe trace --engine ptrace
#       -o /dev/null`
#   t0  b0 with an application tracepoint in work(), not enabled
#       (bench:hit(a, b), include/dprobe/tracepoint.h: a 5-byte nop)
#   t2  t0's tracepoint enabled by `dprobe trace -e bench:hit --overwrite
#       -o /dev/null`: a record of its two integer fields per call
#   t2s t0's tracepoint counted by `dprobe stat -e bench:hit`
#   d2p d2 with dprobe and the loop pinned to one CPU (taskset -c 0): a
#       ptrace stop wakes the tracer, and a wake-up on another CPU costs
#       far more than on the same one on this kind of VM
#
# Kernel rows: the definitions are PATH:OFFSET probes on a private copy of
# the loop (a uprobe is armed on the inode for every process), in the
# group "dpbench", enabled only in a private instance
# (instances/dpbench-PID); everything is removed afterwards, also on
# failure or a signal.  Without root or tracefs they print "n/a", as do
# the dprobe rows until `dprobe trace` works.  Every run's hit count is
# checked (uprobe_profile, dprobe's summary line) against N.
# Prints a Markdown table, then the clock the agent stamps its records
# with and the CPU features it was chosen from (bench/agent_clock.c): the
# a* and t* rows depend on it.  Only sh, awk and the C compiler are needed.
# Then, without BENCH_IDS and unless BENCH_ARM=0, bench/arm.sh's table:
# arming and disarming every function of programs of 1,000 to 50,000.
set -u

here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
case $DPROBE in /*) ;; *) DPROBE=$(pwd)/$DPROBE ;; esac
SECONDS_PER_RUN=${BENCH_SECONDS:-2}
REPEATS=${BENCH_REPEATS:-5}
TRACEFS=/sys/kernel/tracing
GROUP=dpbench

tmp=$(mktemp -d /tmp/dpbench.XXXXXX) || exit 2
SAMPLES=$tmp/samples
INST=$TRACEFS/instances/dpbench-$$
kernel=0

kclean() {
	if [ -d "$INST" ]; then
		echo 0 >"$INST/events/$GROUP/enable" 2>/dev/null
		rmdir "$INST" 2>/dev/null
	fi
	if [ $kernel = 1 ] && grep -q "^[pr]:$GROUP/" $TRACEFS/uprobe_events; then
		echo "-:$GROUP/" >>$TRACEFS/uprobe_events
	fi
}
cleanup() {
	trap - EXIT HUP INT PIPE TERM
	kclean
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

gcc -g -O2 -o "$tmp/loop" "$here/loop.c" || exit 2
LOOP=$tmp/loop
gcc -O2 -o "$tmp/dl_bench" "$here/dl_bench.c" -ldl || exit 2
gcc -O2 -shared -fPIC -DBENCH_DL_LIB -o "$tmp/libbenchdl.so" \
	"$here/dl_bench.c" || exit 2
# the same loop with a tracepoint, linked with dprobe's libdprobe.so
lib=$(dirname "$DPROBE")
TPLOOP=
if [ -f "$lib/libdprobe.so" ] &&
	gcc -O2 -DBENCH_TP -I"$here/../include" -o "$tmp/tploop" "$here/loop.c" \
		-L"$lib" -ldprobe -Wl,-rpath,"$lib"; then
	TPLOOP=$tmp/tploop
fi
# which clock the agent's hit path uses here (src/engine/agent/clock.h)
agent_clock="agent clock: unknown (no libdprobe.so next to dprobe)"
if [ -f "$lib/libdprobe.so" ] &&
	gcc -O2 -o "$tmp/agent_clock" "$here/agent_clock.c" -ldl; then
	agent_clock=$("$tmp/agent_clock" "$lib/libdprobe.so" 2>&1)
fi

# ---- the kernel --------------------------------------------------------
why_no_kernel=
if [ "$(id -u)" != 0 ]; then
	why_no_kernel="not root"
else
	if [ ! -e $TRACEFS/uprobe_events ] && [ -d $TRACEFS ]; then
		mount -t tracefs nodev $TRACEFS 2>/dev/null
	fi
	if [ ! -e $TRACEFS/uprobe_events ] || [ ! -d $TRACEFS/instances ]; then
		why_no_kernel="no tracefs with uprobe_events and instances"
	fi
fi
if [ -z "$why_no_kernel" ]; then
	exec 9>/tmp/dpbench.lock
	if flock -w 600 9; then
		kernel=1
		# leftovers of a killed run (we hold the lock)
		for i in "$TRACEFS"/instances/dpbench-*; do
			[ -d "$i" ] || continue
			echo 0 >"$i/events/$GROUP/enable" 2>/dev/null
			rmdir "$i" 2>/dev/null
		done
		kclean
	else
		why_no_kernel="another run holds /tmp/dpbench.lock"
	fi
fi

# The file offset of work() in the copy.
va=$(nm "$LOOP" | awk '$3 == "work" { print $1 }')
off=$(readelf -lW "$LOOP" | awk '$1 == "LOAD" { print $2, $3, $5 }' |
	while read -r o v fs; do
		if [ $((0x$va >= v && 0x$va < v + fs)) = 1 ]; then
			printf '0x%x\n' $((0x$va - v + o))
		fi
	done)

ENTRY2='a=%di:s32 b=%si:s64'
STR='s=+0(%dx):string'
# shellcheck disable=SC2016  # $retval is the probe language's
RET='ret=$retval:s64'

# defs ID -> the definitions of a configuration (kernel form with K).
defs() {
	case $1 in
	k2) echo "p:$GROUP/bench $LOOP:$off $ENTRY2" ;;
	k3) echo "p:$GROUP/bench $LOOP:$off $ENTRY2 $STR" ;;
	k4) echo "p:$GROUP/bench $LOOP:$off $ENTRY2"
	    echo "r:$GROUP/benchret $LOOP:$off $RET" ;;
	d2 | d2p | a2 | a2s | a2h | a2hr | a2i | a2w | e2s) echo "p:bench work $ENTRY2" ;;
	a2n) echo "p:bench work a b" ;;
	a2f) echo "p:bench $LOOP:work $ENTRY2" ;;
	l2) echo "p:bench libbenchdl.so:dlwork a=%di:s64" ;;
	d3 | a3) echo "p:bench work $ENTRY2 $STR" ;;
	d4 | a4) echo "p:bench work $ENTRY2"
	    echo "r:benchret work $RET" ;;
	t2 | t2s) echo "bench:hit" ;;
	esac
}

# hits_per_call ID
hits_per_call() {
	case $1 in k4 | d4 | a4 | a2l | a2lr) echo 2 ;; *) echo 1 ;; esac
}

# run_once ID N -> "<ns for the loop> <N>" on stdout, or fails (reason
# on stderr); lib.sh's measure turns that into ns per call.
run_once() {
	id=$1
	n=$2
	case $id in
	b0)
		out=$("$LOOP" "$n") || return 1
		;;
	f0)
		out=$("$LOOP" "$n" floor) || return 1
		;;
	t0)
		out=$("$TPLOOP" "$n") || return 1
		;;
	w0)
		out=$("$LOOP" "$n" workers) || return 1
		;;
	l0)
		out=$("$tmp/dl_bench" "$tmp/libbenchdl.so" "$n") || return 1
		;;
	bt2h)
		bpftrace -e "uprobe:$LOOP:work { @h = hist(arg0); @s = sum(arg1); }" \
			-c "$LOOP $n" >"$tmp/bt" 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; return 1; }
		out=$(grep -E '^[0-9]+ [0-9]+ [0-9]+$' "$tmp/bt" | head -n 1)
		# work(i, 3 * i): b summed over the loop
		want=$(awk -v n="$n" 'BEGIN { printf "%.0f", 3 * n * (n - 1) / 2 }')
		grep -q "^@s: $want\$" "$tmp/bt" || {
			echo "bench: bt2h: @s is not $want: $(grep '^@s' "$tmp/bt")" >&2
			return 1; }
		;;
	a2l | a2lr)
		agg=
		[ "$id" = a2lr ] && agg=0
		DPROBE_AGG=$agg "$DPROBE" latency work --engine agent -- \
			"$LOOP" "$n" >"$tmp/lat" 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; return 1; }
		# the loop's line, then the histogram
		out=$(grep -E '^[0-9]+ [0-9]+' "$tmp/lat" | head -n 1)
		want=$((2 * n))
		got=$(sed -n 's/^dprobe: \([0-9]*\) events, 0 filtered, 0 missed, \([0-9]*\) lost$/\1 \2/p' \
			"$tmp/err" | awk '{ print $1 + $2 }')
		if [ "$got" != "$want" ]; then
			echo "bench: $id: expected $want hits, got: $(tail -n 1 "$tmp/err")" >&2
			return 1
		fi
		if [ "$id" = a2l ] && ! grep -q "^count $n, " "$tmp/lat"; then
			echo "bench: a2l: not $n calls in the histogram" >&2
			return 1
		fi
		;;
	k*)
		mkdir "$INST" || return 1
		defs "$id" | while IFS= read -r l; do
			printf '%s\n' "$l" >>$TRACEFS/uprobe_events || exit 1
		done || { echo "bench: the kernel refused $(defs "$id")" >&2; kclean; return 1; }
		echo 1 >"$INST/events/$GROUP/enable"
		out=$("$LOOP" "$n")
		echo 0 >"$INST/events/$GROUP/enable"
		hits=$(awk -v d="$LOOP" '$1 == d && $2 == "bench" { print $3 }' \
			$TRACEFS/uprobe_profile)
		kclean
		if [ "$hits" != "$n" ]; then
			echo "bench: $id: $hits uprobe hits for $n calls" >&2
			return 1
		fi
		;;
	d* | a* | t* | e* | l2)
		set --
		while IFS= read -r l; do
			set -- "$@" -e "$l"
		done <<EOF
$(defs "$id")
EOF
		pin= cmd="trace -o /dev/null" engine=ptrace
		[ "$id" = d2p ] && pin="taskset -c 0"
		case $id in a* | t* | l2) engine=agent ;; e*) engine=kernel ;; esac
		case $id in
		t*) set -- "$@" -- "$TPLOOP" "$n" ;;
		a2f) cmd="$cmd -f"; set -- "$@" -- sh -c "$LOOP $n" ;;
		a2w) cmd="$cmd -f"; set -- "$@" -- "$LOOP" "$n" workers ;;
		l2) set -- "$@" -- "$tmp/dl_bench" "$tmp/libbenchdl.so" "$n" ;;
		*) set -- "$@" -- "$LOOP" "$n" ;;
		esac
		# every hit writes its record; dprobe reads and formats them
		# far slower than they are made (as a trace_pipe reader
		# would), so the ring (1 MiB, --overwrite) keeps the newest:
		# the producer's steady state, records lost to the reader
		# counted and checked below
		case $id in a2 | a2n | a2f | a2w | a3 | a4 | t2 | a2hr) cmd="$cmd --overwrite" ;; esac
		case $id in a2s | t2s | e2s) cmd=stat ;; esac
		noopt= agg=
		[ "$id" = a2i ] && noopt=1
		[ "$id" = a2hr ] && agg=0
		case $id in
		a2h | a2hr) set -- --trigger 'hist:keys=a.log2:vals=b' "$@" ;;
		esac
		# shellcheck disable=SC2086  # $pin: a command prefix or nothing
		out=$(DPROBE_NOOPT=$noopt DPROBE_AGG=$agg $pin "$DPROBE" $cmd \
			--engine $engine "$@" 2>"$tmp/err") ||
			{ cat "$tmp/err" >&2; return 1; }
		want=$((n * $(hits_per_call "$id")))
		case $id in
		a2 | a2n | a2f | a2w | a3 | a4 | t2 | a2hr)	# events + lost: every hit made a record
			got=$(sed -n 's/^dprobe: \([0-9]*\) events, 0 filtered, 0 missed, \([0-9]*\) lost$/\1 \2/p' \
				"$tmp/err" | awk '{ print $1 + $2 }')
			[ "$got" = "$want" ] && want=ok ;;
		esac
		if [ "$want" != ok ] &&
			! grep -q "^dprobe: $want events, 0 filtered, 0 missed, 0 lost\$" \
			"$tmp/err"; then
			echo "bench: $id: expected $want events, got: $(tail -n 1 "$tmp/err")" >&2
			return 1
		fi
		;;
	esac
	echo "$out"
}

# shellcheck source=bench/lib.sh
. "$here/lib.sh"

# pilot ID -> the pilot run's N: short for the slow configurations
pilot() {
	case $1 in
	b0 | f0 | t0 | w0) echo 20000000 ;;
	l*) echo 100 ;;
	a* | t*) echo 1000000 ;;
	k* | e* | bt*) echo 3000 ;;
	*) echo 1000 ;;
	esac
}

dprobe_ok=1
"$DPROBE" trace --help >/dev/null 2>&1 || dprobe_ok=0

printf '%s\n' "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats, ~${SECONDS_PER_RUN} s per run" >&2
results=$tmp/results
: >"$results"
for id in ${BENCH_IDS:-b0 f0 a2 a2s a2h a2hr bt2h a2l a2lr a2n a2f a3 a4 a2i w0 a2w l0 l2 t0 t2 t2s k2 k3 k4 e2s d2 d3 d4 d2p}; do
	case $id in
	t*) [ -n "$TPLOOP" ] ||
		{ echo "$id n/a" >>"$results"; continue; } ;;
	esac
	case $id in
	d2p) command -v taskset >/dev/null 2>&1 ||
		{ echo "$id n/a" >>"$results"; continue; } ;;
	esac
	case $id in
	k*) [ $kernel = 1 ] || { echo "$id n/a" >>"$results"; continue; } ;;
	bt*) [ "$(id -u)" = 0 ] && command -v bpftrace >/dev/null 2>&1 ||
		{ echo "$id n/a" >>"$results"; continue; } ;;
	e*) [ $kernel = 1 ] && [ $dprobe_ok = 1 ] ||
		{ echo "$id n/a" >>"$results"; continue; } ;;
	d*) [ $dprobe_ok = 1 ] || { echo "$id n/a" >>"$results"; continue; } ;;
	esac
	echo "bench: $id..." >&2
	echo "$id $(measure "$(pilot "$id")" "$id")" >>"$results"
done

awk -v nok="$why_no_kernel" -v dok=$dprobe_ok -v clk="$agent_clock" '
BEGIN {
	name["b0"] = "baseline, no probe"
	name["f0"] = "floor: hook through a pointer, 32-byte record to a TLS ring"
	name["a2"] = "dprobe trace (agent): entry, a=%di:s32 b=%si:s64"
	name["a2s"] = "dprobe stat (agent): a2 counted"
	name["a2h"] = "a2 into a hist trigger (keys=a.log2:vals=b) kept in the process"
	name["bt2h"] = "bpftrace: @h = hist(arg0); @s = sum(arg1) on the same call"
	name["a2hr"] = "a2h the records way (DPROBE_AGG=0): dprobe aggregates what it reads"
	name["a2l"] = "dprobe latency work (agent): timed in the process, no record"
	name["a2lr"] = "a2l the records way (DPROBE_AGG=0): entry + return paired by dprobe"
	name["a2n"] = "a2 by name: p:bench work a b (DWARF: a=%di:s32 b=%si:s64)"
	name["a2f"] = "a2, the loop started by sh -c, -f (fork + exec followed)"
	name["w0"] = "baseline in 4 forked workers (ns per call per worker)"
	name["a2w"] = "a2 in the 4 workers of w0, -f (rings of their own)"
	name["l0"] = "dlopen + call + dlclose of a library (ns per cycle)"
	name["l2"] = "l0 with a probe on it: armed by dlopen, dropped by dlclose"
	name["a3"] = "dprobe trace (agent): a2 + s=+0(%dx):string"
	name["a4"] = "dprobe trace (agent): a2 + return ret=$retval:s64"
	name["a2i"] = "a2 not optimised (DPROBE_NOOPT=1): int3 in process"
	name["t0"] = "tracepoint bench:hit(a, b) in work(), not enabled"
	name["t2"] = "dprobe trace -e bench:hit: t0 enabled, both fields recorded"
	name["t2s"] = "dprobe stat -e bench:hit: t0 enabled, counted"
	name["k2"] = "uprobe_events: entry, a=%di:s32 b=%si:s64"
	name["k3"] = "uprobe_events: k2 + s=+0(%dx):string"
	name["k4"] = "uprobe_events: k2 + return ret=$retval:s64"
	name["e2s"] = "dprobe stat --engine kernel: the k2 probe, records read"
	name["d2"] = "dprobe trace (ptrace): entry, a=%di:s32 b=%si:s64"
	name["d3"] = "dprobe trace (ptrace): d2 + s=+0(%dx):string"
	name["d4"] = "dprobe trace (ptrace): d2 + return ret=$retval:s64"
	name["d2p"] = "d2, dprobe and the loop pinned to one CPU"
}
{ n[$1] = $2; mn[$1] = $3; md[$1] = $4; ids[++k] = $1 }
END {
	print "| id | case | N | min ns/call | median ns/call | ovh ns/hit | x floor | k2 / this |"
	print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	base = md["b0"]; k2 = md["k2"] - base; fl = md["f0"] - base
	okk2 = n["k2"] != "n/a" && n["k2"] != ""
	okfl = n["f0"] != "n/a" && n["f0"] != ""
	for (i = 1; i <= k; i++) {
		id = ids[i]
		if (n[id] == "n/a" || n[id] == "") {
			printf "| %s | %s | n/a | n/a | n/a | n/a | n/a | n/a |\n", id, name[id]
			continue
		}
		# the worker and dlopen rows against their own baselines
		b = id == "a2w" ? md["w0"] : id == "l2" ? md["l0"] : base
		o = md[id] - b
		own = id == "b0" || id == "w0" || id == "l0"
		ovh = own ? "-" : (o < 100 ? sprintf("%.1f", o) : sprintf("%.0f", o))
		x = own || !okfl ? "-" : sprintf("%.2f", o / fl)
		y = own || !okk2 || o <= 0 ? "-" : \
			(k2 / o < 10 ? sprintf("%.2f", k2 / o) : sprintf("%.0f", k2 / o))
		printf "| %s | %s | %d | %.1f | %.1f | %s | %s | %s |\n", id, name[id],
			n[id], mn[id], md[id], ovh, x, y
	}
	if (nok != "") print "\nkernel rows n/a: " nok
	if (!dok) print "\ndprobe rows n/a: dprobe trace is not built yet"
	print "\n" clk
}' "$results"

# Arming and disarming many locations (bench/arm.sh: 1,000 / 10,000 /
# 50,000 functions); BENCH_ARM=0 leaves it out.
if [ "${BENCH_ARM:-1}" != 0 ] && [ -z "${BENCH_IDS:-}" ]; then
	echo
	sh "$here/arm.sh" "$DPROBE"
fi
