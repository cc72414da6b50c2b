#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The agent's hit path makes no system call per hit, whatever clock it
# stamps records with (but the few madvise calls that map a ring's pages
# ahead in its first lap: no_prefault below): `dprobe trace --engine agent` with an entry and a return
# probe on work(), called N times by tests/agent/hit_syscalls.c, which
# counts its own system calls during the loop (seccomp user
# notifications).  Each clock the agent can choose is forced in turn with
# DPROBE_AGENT_CLOCK (src/engine/agent/clock.h), so every CPU runs every
# path it has (a check whose path the agent did not take here, as its
# dprobe_agent_clock() line shows, is skipped); a run with every fast
# path taken away must count two clock_gettime and two getcpu calls per
# call of work() (the counter works).  The records' times must lie within CLOCK_MONOTONIC as the
# target read it around the loop, also in a time namespace whose
# monotonic clock reads a few seconds.  A target that made rdtsc fault
# (PR_SET_TSC, as rr does) before the agent loaded gets no TSC path.  And
# vdso.c, built into tests/agent/vdso_lookup.c, finds the vDSO's time
# functions, refuses one that touches SIMD registers, and accepts rdpid
# and endbr64 (code, and a vDSO copy patched with them).
#
#   sh tests/agent/hit_syscalls.sh BUILD_DIR
#
# TAP lines for tests/agent/run.sh.
set -u
B=$(cd "${1:?usage: hit_syscalls.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
N=${HIT_SYSCALLS_CALLS:-10000}
DEFS="p:clk work a=%di:s32"
RDEFS="r:clkret work ret=\$retval:s64"
tmp=$(mktemp -d /tmp/dprobe-hitsys.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0

tap() {		# ok|not|skip what [why]
	n=$((n + 1))
	case $1 in
	ok) echo "ok $n - $2" ;;
	skip) echo "ok $n - $2 # SKIP $3" ;;
	*) echo "not ok $n - $2${3:+: $3}" ;;
	esac
}

if ! ${CC:-cc} -O2 -pthread -o "$tmp/target" "$here/hit_syscalls.c" -ldl; then
	tap not "build hit_syscalls.c"
	echo "1..$n"
	exit 1
fi

# trace [PREFIX...]: the target under dprobe; its report in $tmp/out,
# the records in $tmp/trace, dprobe's messages in $tmp/err
trace() {
	"$@" timeout 60 "$B/dprobe" trace --engine agent -e "$DEFS" \
		-e "$RDEFS" -o "$tmp/trace" -- "$tmp/target" "$N" \
		>"$tmp/out" 2>"$tmp/err"
	_rc=$?
	no_prefault
	return $_rc
}

# The agent maps a ring's pages ahead of its records in the ring's first
# lap, one madvise (28) per 256 KiB (events.c, prefault()): at most 4
# for the default 1 MiB ring, whatever the number of hits.  Those are
# taken out of the loop's count; any more would be per hit.
no_prefault() {
	awk '$1 == "loop" {
		out = ""; n = $2
		for (i = 3; i <= NF; i++) {
			split($i, f, ":")
			if (f[1] == 28 && f[2] <= 4) { n -= f[2]; continue }
			out = out " " $i
		}
		print "loop " n out; next
	}
	{ print }' "$tmp/out" >"$tmp/out.n" && mv "$tmp/out.n" "$tmp/out"
}

# stamps_inside: every record after the first call's two lies in the
# target's [T0, T1], give or take 50 ms (the TSC's conversion)
stamps_inside() {
	awk -v w="$(awk '$1 == "mono" { print $2, $3 }' "$tmp/out")" '
	BEGIN { split(w, m, " "); lo = m[1] - 0.05; hi = m[2] + 0.05 }
	{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i + 0; break }
		if (++k <= 2) next
		if (t < lo || t > hi) { printf "%s outside [%s]", t, w; exit 1 }
	}' "$tmp/trace"
}

# check WHAT CLOCK WANT [PREFIX...]: no system call in the loop, the
# times right.  WANT, an extended regular expression, is the start of
# the agent clock that CLOCK forces (empty: any); where the target's
# dprobe_agent_clock() line says another path ran, the check is skipped,
# not passed.  With no_tsc=1 a TSC path is a failure, not a skip.
no_tsc=
check() {
	what=$1 clk=$2 want=$3
	shift 3
	export DPROBE_AGENT_CLOCK="$clk"
	trace "$@"
	rc=$?
	unset DPROBE_AGENT_CLOCK
	clock=$(sed -n 's/^clock //p' "$tmp/out")
	[ -n "$clock" ] && echo "# $what: agent clock: $clock"
	if grep -q 'seccomp user notification' "$tmp/err"; then
		tap skip "$what" "$(grep seccomp "$tmp/err")"
		return
	fi
	loop=$(awk '$1 == "loop" { print $2 }' "$tmp/out")
	if [ $rc -ne 0 ] || [ -z "$loop" ] ||
	   ! grep -q "^dprobe: $((2 * N + 2)) events, 0 filtered, 0 missed, 0 lost\$" "$tmp/err"; then
		tap not "$what" "exit $rc: $(tail -n 2 "$tmp/err" | tr '\n' ' ')"
	elif [ -n "$no_tsc" ] && case $clock in tsc*|rdtscp*) true ;; *) false ;; esac; then
		tap not "$what" "the agent chose $clock"
	elif [ -n "$want" ] && [ -z "$clock" ]; then
		tap not "$what" "the target printed no agent clock"
	elif [ -n "$want" ] && ! echo "$clock" | grep -Eq "^($want)"; then
		tap skip "$what" "the agent cannot take this path here: $clock"
	elif [ "$loop" != 0 ] && [ "$(awk '$1 == "vdso" { print $2 }' "$tmp/out")" != 0 ] &&
	     [ "$(awk '$1 == "loop" { print $3 }' "$tmp/out")" = "228:$((2 * N))" ]; then
		tap skip "$what" "the vDSO's clock_gettime enters the kernel here"
	elif [ "$loop" != 0 ]; then
		tap not "$what" "$(grep '^loop' "$tmp/out") system calls (nr:count) in $N calls"
	elif ! why=$(stamps_inside); then
		tap not "$what" "record times: $why"
	else
		tap ok "$what: no system call in $((2 * N)) hits, times right"
	fi
}

check "the CPU's own clock" "" ""
check "rdtsc without rdtscp or rdpid" "no-rdtscp,no-rdpid" \
	"tsc \+ (rseq cpu_id|vdso getcpu) "
check "vdso clock_gettime, rseq cpu_id" "no-tsc" "vdso clock_gettime \+ rseq cpu_id "
check "vdso clock_gettime and getcpu" "no-tsc,no-rseq" \
	"vdso clock_gettime \+ vdso getcpu "
check "int3 probes (DPROBE_NOOPT=1)" "" "" env DPROBE_NOOPT=1
# rdtsc faults (rr's PR_SET_TSC), set before the agent loaded: no TSC
# path, not even the vDSO's clock_gettime (which reads the TSC where the
# clocksource is tsc or kvm-clock): system calls, and the target lives
# through its hits with every record there
what="PR_TSC_SIGSEGV before the agent loaded"
rc=0
if ! env HIT_SYSCALLS_NOTSC=1 "$tmp/target" 1 >/dev/null 2>&1; then
	rc=skip
else
	trace env HIT_SYSCALLS_NOTSC=1
	rc=$?
fi
clock=$(sed -n 's/^clock //p' "$tmp/out")
[ -n "$clock" ] && [ $rc != skip ] && echo "# $what: agent clock: $clock"
if [ $rc = skip ]; then
	tap skip "$what" "the target faults on its own here (its clock_gettime reads the TSC in the vDSO)"
elif [ $rc -ne 0 ] ||
   ! grep -q "^dprobe: $((2 * N + 2)) events, 0 filtered, 0 missed, 0 lost\$" "$tmp/err"; then
	tap not "$what" "exit $rc: $(tail -n 2 "$tmp/err" | tr '\n' ' ')"
elif ! case $clock in "clock_gettime syscall"*) true ;; *) false ;; esac; then
	tap not "$what" "the agent chose $clock"
elif ! why=$(stamps_inside); then
	tap not "$what" "record times: $why"
else
	tap ok "$what: the clock_gettime system call, $((2 * N)) hits, times right"
fi

# the counter counts: with every fast path gone, two of each per call
what="system calls counted where the agent makes them"
DPROBE_AGENT_CLOCK=no-tsc,no-rseq,no-vdso trace
want="loop $((4 * N)) 228:$((2 * N)) 309:$((2 * N))"
if grep -q 'seccomp user notification' "$tmp/err"; then
	tap skip "$what" "$(grep seccomp "$tmp/err")"
elif [ "$(grep '^loop' "$tmp/out")" = "$want" ]; then
	tap ok "$what ($want)"
else
	tap not "$what" "want \"$want\", got \"$(grep '^loop' "$tmp/out")\" $(tail -n 1 "$tmp/err")"
fi

# the vDSO lookup: the time functions found, SIMD code refused
what="vdso.c: clock_gettime and getcpu found, getrandom (SSE) refused"
if ! ${CC:-cc} -O2 -I"$here/../../include" -I"$here/../../src" \
	-o "$tmp/vdso_lookup" "$here/vdso_lookup.c" \
	"$here/../../src/engine/agent/vdso.c" -lZydis 2>"$tmp/cc"; then
	tap not "$what" "does not build: $(head -n 3 "$tmp/cc" | tr '\n' ' ')"
else
	"$tmp/vdso_lookup" >"$tmp/vdso"
	got=$(awk '$1 == "found" { printf "%s=%s ", $2, $3 }' "$tmp/vdso")
	if ! grep -q '^named __vdso_clock_gettime yes$' "$tmp/vdso"; then
		tap skip "$what" "this kernel's vDSO has no __vdso_clock_gettime"
	elif [ "$got" != "__vdso_clock_gettime=yes __vdso_getcpu=yes __vdso_getrandom=no " ]; then
		tap not "$what" "$got"
	elif grep -q '^named __vdso_getrandom yes$' "$tmp/vdso"; then
		tap ok "$what"
	else
		tap ok "$what (this vDSO has no getrandom)"
	fi
	# what a kernel with rdpid or IBT puts there passes, SSE not
	# ("accept WHAT GOT WANT [why]"), on any machine
	awk '$1 == "accept"' "$tmp/vdso" >"$tmp/accept"
	[ -s "$tmp/accept" ] || tap not "vdso.c: rdpid and endbr64 accepted" "no output"
	while read -r _ w got want why; do
		case $want in yes) say="accepted" ;; *) say="refused" ;; esac
		if [ "$got" = "$want" ]; then
			tap ok "vdso.c: $w $say"
		elif [ "$got" = skip ]; then
			tap skip "vdso.c: $w $say" "$why"
		else
			tap not "vdso.c: $w $say" "it was not"
		fi
	done <"$tmp/accept"
fi

# a time namespace whose CLOCK_MONOTONIC reads about 2 s
up=$(awk '{ printf "%d", $1 }' /proc/uptime)
if [ "$(id -u)" != 0 ]; then
	why="not root"
elif [ "$up" -lt 4 ]; then
	why="up less than 4 s"
elif ! unshare --time --monotonic=-$((up - 2)) true 2>/dev/null; then
	why="unshare --time does not work here"
else
	why=
fi
for c in "" "no-tsc"; do
	what="in a time namespace: ${c:-the CPU's own clock}"
	if [ -n "$why" ]; then
		tap skip "$what" "$why"
	else
		check "$what" "$c" "${c:+vdso clock_gettime }" \
			unshare --time --monotonic=-$((up - 2))
	fi
done
echo "1..$n"
