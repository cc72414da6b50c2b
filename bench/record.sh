#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dprobe record's rate and loss: bench/loop.c calls work(a, b) N times
# as fast as it can with `p work a=%di:s32 b=%si:s64` on it, recorded
# with `dprobe record --engine agent` into a trace.dat.
#
#   sh bench/record.sh [DPROBE]        (DPROBE default: build/dprobe)
#
# Rows, each the median of BENCH_REPEATS (default 3) runs of N calls
# (BENCH_N, default 5000000):
#   r2    the default buffer (--buffer-size as trace's: 1 MiB a thread)
#   r2z   the same with --compress (trace.dat version 7, zstd chunks)
#   r2b   --buffer-size large enough for every record (N * 32 bytes,
#         twice): lost must be 0
#   t2    `dprobe trace -o /dev/null` (text) on the same loop, default
#         buffer: what formatting as they come keeps
# For each: the loop's ns per call while recorded, events kept and lost
# (events + lost must be N: every hit made a record), the sustained rate
# (events kept / the loop's time, M events/s), and the file's bytes per
# event.  Then, where tracefs and trace-cmd are there, the same probe on
# the kernel's uprobes recorded by `dprobe record --engine kernel` and by
# trace-cmd (`trace-cmd extract` of an instance; N / 50 calls): each
# file's bytes per event, its header included (trace-cmd 3 compresses
# its file with zstd; dprobe's is compressed with --compress only).
# The CPU's clock features are printed first: the agent's cost per hit
# depends on them.
set -u

here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
case $DPROBE in /*) ;; *) DPROBE=$(pwd)/$DPROBE ;; esac
N=${BENCH_N:-5000000}
REPEATS=${BENCH_REPEATS:-3}
DEF='p:bench work a=%di:s32 b=%si:s64'

tmp=$(mktemp -d /tmp/dprecbench.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
gcc -g -O2 -o "$tmp/loop" "$here/loop.c" || exit 2

lib=$(dirname "$DPROBE")
if gcc -O2 -o "$tmp/agent_clock" "$here/agent_clock.c" -ldl 2>/dev/null; then
	"$tmp/agent_clock" "$lib/libdprobe.so" 2>&1
fi
echo "cpu flags: $(grep -o -w -E 'rdtscp|rdpid|constant_tsc' /proc/cpuinfo |
	sort -u | tr '\n' ' ')"
echo "machine: $(nproc) CPUs, $(uname -r); N=$N, median of $REPEATS"

# run ID -> "loop_ns events lost bytes" of one run
run() {
	rm -f "$tmp/rec.dat"
	case $1 in
	r2) set -- record --engine agent -o "$tmp/rec.dat" ;;
	r2z) set -- record --engine agent --compress -o "$tmp/rec.dat" ;;
	r2b) set -- record --engine agent -o "$tmp/rec.dat" \
		--buffer-size $((N * 64 / 1048576 + 1))M ;;
	t2) set -- trace --engine agent -o /dev/null ;;
	esac
	"$DPROBE" "$@" -e "$DEF" -- "$tmp/loop" "$N" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; return 1; }
	sum=$(sed -n 's/^dprobe: \([0-9]*\) events, 0 filtered, 0 missed, \([0-9]*\) lost$/\1 \2/p' \
		"$tmp/err")
	set -- $sum
	if [ $(($1 + $2)) != "$N" ]; then
		echo "bench: events + lost is not $N: $(tail -n 1 "$tmp/err")" >&2
		return 1
	fi
	bytes=0
	[ -f "$tmp/rec.dat" ] && bytes=$(stat -c %s "$tmp/rec.dat")
	echo "$(cut -d' ' -f1 "$tmp/out") $1 $2 $bytes"
}

median_of() {	# column
	sort -n -k"$1" "$tmp/samples" | awk -v c="$1" \
		'{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

echo
echo "| id | case | loop ns/call | events | lost | M events/s kept | bytes/event |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
for id in r2 r2z r2b t2; do
	: >"$tmp/samples"
	for _ in $(seq "$REPEATS"); do
		run "$id" >>"$tmp/samples" || exit 1
	done
	# the median run by its loop time, whole
	row=$(sort -n -k1 "$tmp/samples" | sed -n "$(( (REPEATS + 1) / 2 ))p")
	set -- $row
	case $id in
	r2) name="dprobe record (agent), default buffer" ;;
	r2z) name="dprobe record --compress (agent), default buffer" ;;
	r2b) name="dprobe record (agent), --buffer-size for every record" ;;
	t2) name="dprobe trace -o /dev/null (agent, text), default buffer" ;;
	esac
	awk -v id="$id" -v name="$name" -v ns="$1" -v ev="$2" -v lost="$3" \
		-v b="$4" -v n="$N" 'BEGIN {
		printf "| %s | %s | %.1f | %d | %d | %.2f | %s |\n", id, name,
			ns / n, ev, lost, ev / (ns / 1e3),
			(b > 0 ? sprintf("%.1f", b / ev) : "-") }'
	if [ "$id" = r2b ] && [ "$3" != 0 ]; then
		echo "bench: r2b lost $3 records with the buffer for all" >&2
		exit 1
	fi
done

# The kernel engine's recording and trace-cmd's, of the same uprobe.
TRACEFS=/sys/kernel/tracing
kn=$((N / 50))
if [ "$(id -u)" != 0 ] || [ ! -w $TRACEFS/uprobe_events ] ||
	! command -v trace-cmd >/dev/null 2>&1; then
	echo
	echo "kernel rows n/a: needs root, tracefs and trace-cmd"
	exit 0
fi
"$DPROBE" record --engine kernel -o "$tmp/k.dat" -e "$DEF" -- \
	"$tmp/loop" "$kn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
kev=$(sed -n 's/^dprobe: \([0-9]*\) events, .*/\1/p' "$tmp/err")
"$DPROBE" record --engine kernel --compress -o "$tmp/kz.dat" -e "$DEF" -- \
	"$tmp/loop" "$kn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
kzev=$(sed -n 's/^dprobe: \([0-9]*\) events, .*/\1/p' "$tmp/err")
# work's file offset: its address in the executable LOAD segment, less
# that segment's address, plus its offset
off=$(nm "$tmp/loop" | awk '$3 == "work" { print $1 }')
seg=$(readelf -lW "$tmp/loop" | awk '$1 == "LOAD" && / R E / { print $2, $3; exit }')
foff=$(printf '0x%x' $((0x$off - ${seg#* } + ${seg% *})))
grp=dprecbench$$
echo "p:$grp/work $tmp/loop:$foff a=%di:s32 b=%si:s64" >>$TRACEFS/uprobe_events
# trace-cmd record wants the function tracer, which a kernel without
# kprobes lacks: the events are enabled in an instance of their own, the
# loop run, and `trace-cmd extract` writes the instance's buffer (made
# large enough for every event) into its trace.dat.
inst=$TRACEFS/instances/$grp
mkdir "$inst" && echo $((kn * 64 / 1024 + 1024)) >"$inst/buffer_size_kb" &&
	echo 1 >"$inst/events/$grp/work/enable" && "$tmp/loop" "$kn" >/dev/null &&
	echo 0 >"$inst/events/$grp/work/enable" &&
	(cd "$tmp" && trace-cmd extract -B "$grp" -o "$tmp/tc.dat" >/dev/null 2>&1)
rmdir "$inst" 2>/dev/null
echo "-:$grp/work" >>$TRACEFS/uprobe_events
[ -f "$tmp/tc.dat" ] || { echo "bench: trace-cmd extract wrote nothing" >&2; exit 1; }
tev=$(trace-cmd report "$tmp/tc.dat" 2>/dev/null | grep -c ' work: ')
echo
echo "| recording (kernel uprobe, $kn calls) | events | bytes | bytes/event |"
echo "| --- | ---: | ---: | ---: |"
for f in k kz tc; do
	b=$(stat -c %s "$tmp/$f.dat")
	case $f in
	k) e=$kev name="dprobe record --engine kernel" ;;
	kz) e=$kzev name="dprobe record --engine kernel --compress" ;;
	tc) e=$tev name="trace-cmd extract" ;;
	esac
	awk -v name="$name" -v e="$e" -v b="$b" 'BEGIN {
		printf "| %s | %d | %d | %.1f |\n", name, e, b, (e ? b / e : 0) }'
done
