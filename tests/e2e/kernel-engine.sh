#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2016  # definitions hold literal $names
#
# The kernel engine (--engine kernel, --kernel, dprobe cleanup) on the host
# kernel's tracefs.
#
#   sh tests/e2e/kernel-engine.sh DPROBE
#
# The same definitions through --engine kernel and through the default
# engine give the same events on the same programs (run under `setarch
# -R`, so run-time addresses repeat; comm-pid, cpu and time are not
# compared): trace text and JSON, a filter, stat counts, -p, -f, return
# probes, strings and SDT probes with (REF) semaphores.  Then the ways
# out: a definition the kernel refuses (its error_log text, exit 1), no
# root, no tracefs, Ctrl-C, kill -9 followed by `dprobe cleanup`; kernel
# tracepoints and --kernel probes.  After every case, no instance
# dprobe.PID and no group dprobePID_* of a dead PID may remain.
#
# Needs root, tracefs with uprobe_events and instances: prints "SKIP:
# kernel-engine: REASON" otherwise.  Appends "kernel-engine P F S" to
# $DPROBE_RESULTS when it is set.
set -u

TFS=/sys/kernel/tracing

[ $# -eq 1 ] || { echo "usage: $0 DPROBE" >&2; exit 2; }
case $1 in
/*) DPROBE=$1 ;;
*) DPROBE=$(pwd)/$1 ;;
esac
E2E=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$E2E/../.." && pwd)
BDIR=$(cd "$(dirname "$DPROBE")" && pwd)
WORK_EX=$BDIR/examples/work
# the e2e programs, built (or found up to date) as run.sh builds them;
# E2E_BUILD: a folder of copies of its own (the kernel's uprobes patch
# the file's pages, which every process running that file then sees)
BUILD=${E2E_BUILD:-$BDIR/tests/e2e}
LEVEL=O2
O2=$BUILD/$LEVEL
TMO=${E2E_TIMEOUT:-60}
export E2E DPROBE BUILD LEVEL TMO
# shellcheck source=tests/e2e/lib.sh
. "$E2E/lib.sh"
t_begin kernel-engine

t_require root tracefs instances setarch
[ -x "$DPROBE" ] || t_skip_all "$DPROBE is not built"
[ -x "$WORK_EX" ] || t_skip_all "$WORK_EX is not built (make run)"
for p in forkexec waiter sdt spin args libc stack lat; do
	build_prog_real "$p" >/dev/null || t_skip_all "cannot build $p"
done

# the background programs ($T_BG) are killed at exit, then what their
# tracing left is removed
T_KEEP=failed
T_AT_EXIT='"$DPROBE" cleanup >/dev/null 2>&1'
t_scratch dp-kengine
T=$T_DIR

# Instances and groups of dprobe PIDs that are not running: what a run
# must never leave behind.
leftovers() {
	for _i in "$TFS"/instances/dprobe.*; do
		[ -d "$_i" ] || continue
		kill -0 "${_i##*dprobe.}" 2>/dev/null || echo "instance $_i"
	done
	for _f in uprobe_events kprobe_events; do
		[ -r "$TFS/$_f" ] || continue
		sed -n -E 's|^[pr][0-9]*:dprobe([0-9]+)_([^/ ]*)/([^ ]*) .*|\1 \2/\3|p' \
			"$TFS/$_f" | while read -r _pid _ev; do
			kill -0 "$_pid" 2>/dev/null || echo "$_f: dprobe${_pid}_$_ev"
		done
	done
}

# result NAME: the case's verdict from $T/why, then the leftovers check.
result() {
	if [ -z "$(leftovers)" ]; then :; else
		echo "left in tracefs: $(leftovers | tr '\n' ' ')" >>"$T/why"
	fi
	if [ -s "$T/why" ]; then
		t_fail "$1"
		sed 's/^/    /' "$T/why"
	else
		t_pass "$1"
	fi
	: >"$T/why"
	# a failed case's leftovers must not fail the next ones
	"$DPROBE" cleanup >/dev/null 2>&1
}

why() {
	echo "$*" >>"$T/why"
}

# Trace lines without comm-pid, cpu, flags and time.
norm() {
	sed -E 's/^ *.*-[0-9]+ +\[[0-9]+\] +[^ ]+ +[0-9]+\.[0-9]+: //'
}

# The trace lines (normalised, in their order), then the program's own
# lines (in theirs): dprobe shows events while the program runs, so how
# the two interleave on one stdout is a matter of timing.
TRACE_PREFIX='^ *.*-[0-9]+ +\[[0-9]+\] +[^ ]+ +[0-9]+\.[0-9]+: '
apart() {
	_in=$(cat)
	printf '%s\n' "$_in" | grep -E "$TRACE_PREFIX" | norm
	printf '%s\n' "$_in" | grep -vE "$TRACE_PREFIX" | grep -v '^$'
}

# JSON lines without time, cpu, pid and tgid, then the program's own
# lines apart (their interleaving with the events is timing, as above).
norm_json() {
	_in=$(cat)
	printf '%s\n' "$_in" | grep '^{' |
		sed -E 's/"ts":[0-9.]+,"cpu":[0-9]+,"pid":[0-9]+,"tgid":[0-9]+,//'
	printf '%s\n' "$_in" | grep -v '^{' | grep -v '^$'
}

# dp ENGINE NAME ARGS...: dprobe with ENGINE ("kernel" or "default"),
# events to $T/NAME.ENGINE, stderr to $T/NAME.ENGINE.err, status in rc.
dp() {
	_eng=$1
	_name=$2
	shift 2
	if [ "$_eng" = kernel ]; then
		_sub=$1
		shift
		set -- "$_sub" --engine kernel "$@"
	fi
	t_timeout "$TMO" setarch -R "$DPROBE" "$@" \
		>"$T/$_name.$_eng" 2>"$T/$_name.$_eng.err" </dev/null
	rc=$?
}

# same NAME ARGS...: both engines, the same events (and exit status).
same() {
	_n=$1
	shift
	dp default "$_n" "$@"
	_rcd=$rc
	dp kernel "$_n" "$@"
	[ "$rc" = "$_rcd" ] ||
		why "exit status: kernel $rc, default $_rcd ($(head -c 300 "$T/$_n.kernel.err"))"
	apart <"$T/$_n.default" >"$T/$_n.d"
	apart <"$T/$_n.kernel" >"$T/$_n.k"
	if [ -n "${SORT:-}" ]; then
		LC_ALL=C sort -o "$T/$_n.d" "$T/$_n.d"
		LC_ALL=C sort -o "$T/$_n.k" "$T/$_n.k"
	fi
	[ -s "$T/$_n.d" ] || why "the default engine saw no event"
	diff -u "$T/$_n.d" "$T/$_n.k" >"$T/$_n.diff" ||
		{ why "kernel engine vs default engine:"; head -n 30 "$T/$_n.diff" >>"$T/why"; }
}

: >"$T/why"
# leftovers of earlier runs are not this run's to answer for
"$DPROBE" cleanup >/dev/null 2>&1

WP=$ROOT/examples/work.probes

# ---- the same events ---------------------------------------------------------

same work trace -e "@$WP" -- "$WORK_EX"
grep -q 'myretprobe: (run_job+0x24/0x39 <- work) arg1=0x3' "$T/work.k" ||
	why "no return probe line"
grep -q 'myprobe: (work+0x0/0x24) a=1 name="passwd"' "$T/work.k" ||
	why "no string argument"
result "trace, return probe, strings: work.probes"

# uprobe_events has no @SYM and no :symbol: dprobe writes @+FOFFS and
# :x64, and prints the values as the other engines do
same syms trace -e 'p:globals take_ints magic=@g_magic:x64 m32=@g_magic:u32 text=@g_text:string tc=@g_text:char[6]' \
	-e 'p:sym take_many ra=$stack0:symbol ra2=+0($stack):symbol ip=%ip:symbol' \
	-- "$O2/args"
grep -q 'text="global text"' "$T/syms.k" || why "no @g_text string"
grep -q 'ip=take_many+0x0/' "$T/syms.k" || why "no :symbol value"
result "@SYM as @+FOFFS, :symbol as :x64"

# probes in libc only: the return addresses in the program print as
# symbols although the short program is gone before its records are read
# (a hidden entry probe tells where it was loaded), and the hidden probe's
# own records are not shown
same libc trace -e 'p:ge libc.so.6:getenv name=+0(%di):string' \
	-e 'r:geret libc.so.6:getenv' -- "$O2/libc"
grep -q 'geret: (main+0x[0-9a-f]*/0x[0-9a-f]* <- getenv)' "$T/libc.k" ||
	why "no main+OFF return address: $(head -n 2 "$T/libc.k")"
grep -q '__entry' "$T/libc.k" && why "the hidden entry probe was printed"
result "run-time addresses of the program after it exited"

# the counts of kprobe_profile come from the kernel's uprobe_profile
dp kernel profile trace --profile -e "@$WP" -- "$WORK_EX"
grep -Eq '^  myprobe +3 +0$' "$T/profile.kernel.err" ||
	why "no profile line: $(cat "$T/profile.kernel.err")"
result "--profile (uprobe_profile's hits)"

dp default json trace --json -e "@$WP" -- "$WORK_EX"
norm_json <"$T/json.default" >"$T/json.d"
dp kernel json trace --json -e "@$WP" -- "$WORK_EX"
norm_json <"$T/json.kernel" >"$T/json.k"
[ -s "$T/json.d" ] || why "no JSON from the default engine"
diff -u "$T/json.d" "$T/json.k" >"$T/json.diff" ||
	{ why "JSON differs:"; head -n 20 "$T/json.diff" >>"$T/why"; }
result "--json"

same filter trace -e "@$WP" --filter 'myprobe=a > 0 && name != "hosts"' \
	--filter 'job=id == 2' -- "$WORK_EX"
# myprobe keeps a=1 of 0..2, job keeps id=2: 5 events, 4 filtered
grep -q 'dprobe: 5 events, 4 filtered' "$T/filter.kernel.err" ||
	why "summary: $(tail -n 1 "$T/filter.kernel.err")"
result "--filter (user-space, as the other engines)"

dp default stat stat -e "@$WP" --filter 'myprobe=a >= 1' -- "$WORK_EX"
dp kernel stat stat -e "@$WP" --filter 'myprobe=a >= 1' -- "$WORK_EX"
for e in default kernel; do
	grep -E '^ +[0-9]+ +[a-z]+:[a-z]+$' "$T/stat.$e.err" >"$T/stat.$e.n"
done
[ -s "$T/stat.default.n" ] || why "no counts"
diff -u "$T/stat.default.n" "$T/stat.kernel.n" >>"$T/why" || why "counts differ"
grep -q '^ *2 *kprobes:myprobe$' "$T/stat.kernel.n" || why "myprobe: not 2"
result "stat"

SORT=1 same forkf trace -f -e 'p:w work a=%di:s64' -e 'r:wr work $retval:s64' \
	-- "$O2/forkexec"
[ "$(grep -c '^w:' "$T/forkf.k")" = 6 ] || why "-f: not 6 entries"
result "-f: fork, vfork and exec children, return probes"

same fork trace -e 'p:w work a=%di:s64' -- "$O2/forkexec"
[ "$(grep -c '^w:' "$T/fork.k")" = 3 ] || why "without -f: not the parent's 3"
result "without -f: the command only"

# SDT probes gated by semaphores: (REF) lines; a string through $arg5
same sdt trace -e sdt_e2e:start -e sdt_e2e:args \
	-e 'p:nm sdt_e2e:args name=+0($arg5):string' -- "$O2/sdt"
grep -q 'nm: (0x[0-9a-f]*) name="two"' "$T/sdt.k" || why "no string from \$arg5"
grep -q 'sdt: fired 6' "$T/sdt.kernel.err" "$T/sdt.kernel" ||
	why "the semaphores were not raised by the kernel"
result "SDT probes with (REF) semaphores, a string"

# started OUT [SECS] after "t_start_bg OUT PROG ...": $_w is PROG,
# killed at the end, and has printed "ready" (waited for 5 s or SECS).
started() {
	_w=$T_PID
	t_wait_line "$1" ready "${2:-5}"
}

# -p: the same waiter run under each engine in turn
attach_run() {
	rm -f "$T/go"
	t_start_bg "$T/waiter.out" "$O2/waiter" "$T/go" 3
	started "$T/waiter.out"
	_eng=$1
	set --
	[ "$_eng" = kernel ] && set -- --engine kernel
	t_timeout "$TMO" "$DPROBE" trace "$@" -e 'p:w work i=%di:s64' \
		-e 'r:wr work ret=$retval:s64' -p "$_w" \
		>"$T/attach.$_eng" 2>"$T/attach.$_eng.err" &
	_d=$!
	# armed: the kernel engine's instance exists, or the others say so
	sleep 1
	touch "$T/go"
	wait "$_w"
	wait "$_d"
	rc=$?
}
attach_run default
attach_run kernel
[ "$rc" = 0 ] || why "exit status $rc"
norm <"$T/attach.default" >"$T/attach.d"
norm <"$T/attach.kernel" >"$T/attach.k"
[ "$(grep -c '^w:' "$T/attach.k")" = 3 ] || why "not 3 entries"
diff -u "$T/attach.d" "$T/attach.k" >>"$T/why" || why "-p: differs"
result "-p attach"

# Everything the kernel holds at the end is read: the command's burst is
# written while dprobe is stopped, far more than one reading round's pages
rm -f "$T/go"
t_start_bg "$T/burst.out" "$O2/waiter" "$T/go" 30000
started "$T/burst.out"
"$DPROBE" trace --engine kernel -e 'p:w work i=%di:s64' -p "$_w" \
	>"$T/burst" 2>"$T/burst.err" &
_d=$!
for _i in $(seq 100); do
	[ -d "$TFS/instances/dprobe.$_d" ] && break
	sleep 0.05
done
sleep 0.5
kill -STOP "$_d"
touch "$T/go"
wait "$_w"
kill -CONT "$_d"
wait "$_d"
rc=$?
[ "$rc" = 0 ] || why "exit status $rc"
[ "$(grep -c '^ *waiter-.* w: ' "$T/burst")" = 30000 ] ||
	why "not 30000 events: $(grep -c ' w: ' "$T/burst") ($(tail -n 1 "$T/burst.err"))"
result "the buffers are read to their end when the command is gone"

# Two threads on two CPUs: the records come out in time order, across
# reading rounds too
rm -f "$T/stop"
t_start_bg "$T/spin.out" "$O2/spin" "$T/stop" 2
started "$T/spin.out"
"$DPROBE" trace --engine kernel -e 'p:sq square i=%di:s64' -p "$_w" \
	>"$T/order" 2>"$T/order.err" &
_d=$!
sleep 3
kill -INT "$_d"
wait "$_d"
rc=$?
touch "$T/stop"
wait "$_w"
[ "$rc" = 0 ] || why "exit status $rc"
[ "$(grep -c ' sq: ' "$T/order")" -gt 1000 ] || why "few events: $(tail -n 1 "$T/order.err")"
_inv=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
		t = substr($i, 1, length($i) - 1)
		if (n++ && t + 0 < prev + 0) bad++
		prev = t } } END { print bad + 0 }' "$T/order")
[ "$_inv" = 0 ] || why "$_inv records before an earlier one"
result "records in time order across CPUs"

# -p of a process with many threads: every thread id whole in
# set_event_pid (a list cut short names a stranger, or nobody)
if command -v python3 >/dev/null 2>&1; then
	t_start_bg "$T/many.out" python3 -c '
import threading, time, sys
threading.stack_size(65536)
ev = threading.Event()
for _ in range(1500):
	threading.Thread(target=ev.wait, daemon=True).start()
print("ready", flush=True)
time.sleep(60)'
	started "$T/many.out" 10
	"$DPROBE" trace --engine kernel -e "p:w $WORK_EX:work" -p "$_w" \
		>"$T/many" 2>"$T/many.err" &
	_d=$!
	for _i in $(seq 100); do
		[ -s "$TFS/instances/dprobe.$_d/set_event_pid" ] && break
		sleep 0.05
	done
	sleep 0.3
	tr ' ' '\n' <"$TFS/instances/dprobe.$_d/set_event_pid" | grep . |
		LC_ALL=C sort >"$T/many.set"
	ls "/proc/$_w/task" | LC_ALL=C sort >"$T/many.task"
	diff "$T/many.task" "$T/many.set" >"$T/many.diff" ||
		why "set_event_pid is not the $(wc -l <"$T/many.task") threads: $(head -c 200 "$T/many.diff")"
	kill -INT "$_d"
	wait "$_d"
	kill "$_w" 2>/dev/null
	wait "$_w" 2>/dev/null
	result "-p of 1500 threads: each in set_event_pid"
else
	t_skip "-p of 1500 threads" "no python3"
fi

# A pid namespace gives a new dprobe the pid of a dead one (pid 1 here):
# its leftovers are removed, not taken for the live run's own.  And a
# live run's instance there (its pid is not a dprobe's out here) is left
# untouched by `dprobe cleanup`: the kernel refuses to remove an
# instance whose files are open, and nothing is switched off before.
# Processes cannot be followed from there (the kernel's pids are not the
# namespace's): one sentence; system-wide tracing works.
if command -v unshare >/dev/null 2>&1 && unshare -pf --mount-proc true 2>/dev/null; then
	unshare -pf --mount-proc "$DPROBE" trace --engine kernel \
		-e "p:w $WORK_EX:work" -- "$WORK_EX" >"$T/ns0.out" 2>&1
	rc=$?
	[ "$rc" = 1 ] || why "-- CMD in a pid namespace: exit status $rc"
	grep -q 'cannot follow processes from inside a pid namespace' \
		"$T/ns0.out" || why "pid namespace: $(head -c 300 "$T/ns0.out")"
	unshare -pf --mount-proc "$DPROBE" trace --kernel \
		-e sched:sched_process_exec >"$T/ns1.out" 2>&1 &
	_u=$!
	for _i in $(seq 100); do
		[ -e "$TFS/instances/dprobe.1/tracing_on" ] && break
		sleep 0.05
	done
	sleep 0.3
	_d=$(pgrep -P "$_u")
	T_BG="$T_BG $_d"
	"$DPROBE" cleanup >"$T/ns.clean" 2>&1
	[ "$(cat "$TFS/instances/dprobe.1/tracing_on" 2>&1)" = 1 ] ||
		why "cleanup switched a live run's instance off"
	grep -q 'dprobe.1' "$T/ns.clean" && why "cleanup: $(cat "$T/ns.clean")"
	kill -9 "$_d"
	wait "$_u" 2>/dev/null
	[ -d "$TFS/instances/dprobe.1" ] || why "kill -9 left nothing behind?"
	unshare -pf --mount-proc "$DPROBE" trace --kernel \
		-e sched:sched_process_exec --duration 0.5 >"$T/ns2.out" 2>&1
	rc=$?
	[ "$rc" = 0 ] || why "second run as pid 1: exit status $rc: $(head -c 300 "$T/ns2.out")"
	[ ! -d "$TFS/instances/dprobe.1" ] || why "instances/dprobe.1 left"
	result "pid namespace: no -- CMD; a dead run's leftovers under our pid go, a live one's stay"
else
	t_skip "pid reuse" "unshare -p not available"
fi

# ---- ways out ------------------------------------------------------------------

# uprobes know no function entry: $argN is refused (dprobe takes it at
# a symbol's entry)
dp kernel refuse trace -e 'p:s work a=$arg1' -- "$WORK_EX"
[ "$rc" = 1 ] || why "exit status $rc, not 1"
grep -q 'trace_uprobe: error: \$arg\* can be used only on function entry or exit' "$T/refuse.kernel.err" ||
	why "no error_log text: $(cat "$T/refuse.kernel.err")"
grep -q '  Command: p:dprobe[0-9]*_kprobes/s .*a=\$arg1' "$T/refuse.kernel.err" ||
	why "no Command line"
[ ! -s "$T/refuse.kernel" ] || why "events printed"
result "a definition the kernel refuses: its error_log, exit 1"

# Places the kernel's uprobes cannot probe (a lock prefix; a VEX opcode
# byte its one-byte table marks bad; a cs prefix) are refused before
# anything is written, naming the instruction: the kernel itself would
# refuse them silently at the command's exec (no event, no word), or
# with "Unknown error 524" for -p.  A probe next to them works.
cat >"$T/lockp.c" <<'EOF_C'
#include <stdio.h>
long counter;
long locked(long x);
long plain(long x);
void vexop(void);
void csnop(void);
__asm__(".text\n"
	".globl locked\n.type locked,@function\nlocked:\n"
	"\tlock addq $1, counter(%rip)\n\tmov %rdi, %rax\n\tret\n"
	".size locked,.-locked\n"
	".globl plain\n.type plain,@function\nplain:\n"
	"\tmov %rdi, %rax\n\tret\n.size plain,.-plain\n"
	".globl vexop\n.type vexop,@function\nvexop:\n"
	"\tvpxor %xmm0, %xmm0, %xmm0\n\tret\n.size vexop,.-vexop\n"
	".globl csnop\n.type csnop,@function\ncsnop:\n"
	"\t.byte 0x2e,0x66,0x0f,0x1f,0x84,0,0,0,0,0\n\tret\n"
	".size csnop,.-csnop\n"
	".globl sysc\n.type sysc,@function\nsysc:\n"
	"\tmov $39, %eax\n\tsyscall\n\tret\n.size sysc,.-sysc\n");
long sysc(void);
#include <unistd.h>
int main(int argc, char **argv)
{
	long s = 0;

	(void)argv;
	if (argc > 1) {		/* for -p: mapped, waiting */
		printf("ready\n");
		fflush(stdout);
		pause();
	}
	for (int i = 0; i < 3; i++) {
		s += locked(i) + plain(i);
		vexop();
		csnop();
		s += sysc() > 0;
	}
	printf("lockp: %ld %ld\n", s, counter);
	return 0;
}
EOF_C
if cc -O2 -o "$T/lockp" "$T/lockp.c" 2>"$T/lockp.cc"; then
	dp kernel lock trace -e 'p:l locked' -- "$T/lockp"
	[ "$rc" = 1 ] || why "lock: exit status $rc, not 1"
	grep -q "kprobes/l: the kernel cannot probe locked ($T/lockp:0x[0-9a-f]*): 'lock addq \$0x01, .*(%rip)' (f0 48 83 05 [0-9a-f ]*): the kernel's uprobes refuse lock-prefixed instructions" \
		"$T/lock.kernel.err" || why "lock: $(cat "$T/lock.kernel.err")"
	[ ! -s "$T/lock.kernel" ] || why "lock: the command ran"
	dp kernel vex trace -e 'p:v vexop' -e 'p:p plain' -- "$T/lockp"
	[ "$rc" = 1 ] || why "vex: exit status $rc, not 1"
	grep -q "'vpxor %xmm0, %xmm0, %xmm0' (c5 f9 ef c0): .*VEX.*(0xef)" \
		"$T/vex.kernel.err" || why "vex: $(cat "$T/vex.kernel.err")"
	dp kernel csnop trace -e 'p:c csnop' -- "$T/lockp"
	[ "$rc" = 1 ] || why "cs: exit status $rc, not 1"
	grep -q "(2e 66 0f 1f 84 00 00 00 00 00): .*es/cs/ss/ds prefix" \
		"$T/csnop.kernel.err" || why "cs: $(cat "$T/csnop.kernel.err")"
	# the kernel takes syscall, but the process dies (SIGSEGV) at its hit
	dp kernel sysc trace -e 'p:s sysc+5' -- "$T/lockp"
	[ "$rc" = 1 ] || why "syscall: exit status $rc, not 1"
	grep -q "'syscall' (0f 05): .*dies with SIGSEGV" "$T/sysc.kernel.err" ||
		why "syscall: $(cat "$T/sysc.kernel.err")"
	dp kernel plain trace -e 'p:p plain' -- "$T/lockp"
	[ "$rc" = 0 ] || why "plain: exit status $rc"
	[ "$(grep -c ' p: (plain+0x0/' "$T/plain.kernel")" = 3 ] ||
		why "plain: not 3 events: $(tail -n 1 "$T/plain.kernel.err")"
	# -p of a process that maps it: the kernel would say ENOTSUPP (524)
	# at enable
	t_start_bg "$T/lockw.out" "$T/lockp" wait
	started "$T/lockw.out"
	t_timeout "$TMO" "$DPROBE" trace --engine kernel -e "p:l locked" \
		-p "$_w" >"$T/lockw" 2>"$T/lockw.err"
	rc=$?
	kill "$_w" 2>/dev/null
	[ "$rc" = 1 ] || why "-p: exit status $rc"
	grep -q "Unknown error" "$T/lockw.err" && why "-p: $(cat "$T/lockw.err")"
	grep -q "refuse lock-prefixed instructions" "$T/lockw.err" ||
		why "-p: $(cat "$T/lockw.err")"
	result "places the kernel cannot probe: refused up front, the instruction named"
else
	t_skip "places the kernel cannot probe" "cc failed: $(head -c 200 "$T/lockp.cc")"
fi

# Threads that are gone (joined) before their records are read: their
# tgid comes from the kernel (record-tgid, saved_tgids), not /proc, so
# they count as the command's.  The kernel records a tgid when the
# thread is switched out, long before the run ends (an unknown tgid is
# looked up again each round), so every record is delivered: none lost
if build_prog_real threads >/dev/null; then
	dp kernel shortthr trace -e 'p:t tick t=%di:s64' -- "$O2/threads" 64 1
	[ "$rc" = 0 ] || why "exit status $rc"
	_n=$(grep -c ' t: (tick+0x0/' "$T/shortthr.kernel")
	_lost=$(sed -n 's/^dprobe: .* \([0-9]*\) lost$/\1/p' "$T/shortthr.kernel.err")
	[ "$_n" = 64 ] && [ "${_lost:-x}" = 0 ] ||
		why "64 threads: $_n records, ${_lost:-?} lost ($(tail -n 1 "$T/shortthr.kernel.err"))"
	grep -q "^dprobe: $_n events" "$T/shortthr.kernel.err" ||
		why "summary: $(tail -n 1 "$T/shortthr.kernel.err")"
	result "64 short-lived threads: every record delivered"
else
	t_skip "short-lived threads" "cannot build threads"
fi

# longjmp() past pending return probes: the kernel drops them silently;
# dprobe counts them (a hidden entry probe per return probe) as missed,
# as the default engine does: 12 of outer, 12 of inner, 6 of deeper
if build_prog_real jmp >/dev/null; then
	dp default jmp trace -e 'r:ro outer $retval' -e 'r:ri inner' \
		-e 'r:rd deeper' -- "$O2/jmp"
	dp kernel jmp trace -e 'r:ro outer $retval' -e 'r:ri inner' \
		-e 'r:rd deeper' -- "$O2/jmp"
	[ "$rc" = 0 ] || why "exit status $rc"
	grep -q '^dprobe: 24 events, 0 filtered, 30 missed, 0 lost$' \
		"$T/jmp.kernel.err" || why "summary: $(tail -n 1 "$T/jmp.kernel.err")"
	[ "$(tail -n 1 "$T/jmp.default.err")" = "$(tail -n 1 "$T/jmp.kernel.err")" ] ||
		why "default engine: $(tail -n 1 "$T/jmp.default.err")"
	dp kernel jmpstat stat -e 'r:ro outer $retval' -e 'r:ri inner' \
		-e 'r:rd deeper' -e 'p:o outer' -- "$O2/jmp"
	grep -q ' 30 missed' "$T/jmpstat.kernel.err" ||
		why "stat: $(tail -n 1 "$T/jmpstat.kernel.err")"
	# returns that all come, in recursion: nothing missed
	build_prog_real fib >/dev/null || why "cannot build fib"
	dp kernel nojmp stat -e 'r:rf fib' -- "$O2/fib" 10
	grep -q ' 0 missed' "$T/nojmp.kernel.err" ||
		why "fib: $(tail -n 1 "$T/nojmp.kernel.err")"
	result "returns skipped by longjmp() count as missed"
else
	t_skip "longjmp" "cannot build jmp"
fi

# ---- user stacks, latency --------------------------------------------------

# --stack: the kernel's user_stack entries after the records.  The kernel
# walks from the registers: at leaf's first instruction it lacks the
# direct caller (middle) that the other engines read at [sp], and keeps
# 8 frames; so its frames are theirs without the second, to main
ustack_syms() {
	sed -n 's/.*"event":"lf".*"stack":\[\(.*\)\].*/\1/p' "$1" |
		awk '{ n = split($0, f, /"sym":"/); s = ""
		       for (i = 2; i <= n; i++) {
			       a = f[i]; sub(/".*/, "", a); s = s " " a
			       if (a ~ /^main\+/) break
		       }
		       print s }'
}
dp default ustack trace --json --stack=lf -e 'p:lf leaf' -e 'p:ot other' \
	-- "$O2/stack" 2
dp kernel ustack trace --json --stack=lf -e 'p:lf leaf' -e 'p:ot other' \
	-- "$O2/stack" 2
ustack_syms "$T/ustack.default" |
	awk '{ s = $1; for (i = 3; i <= NF; i++) s = s " " $i; print s }' >"$T/us.d"
ustack_syms "$T/ustack.kernel" | sed 's/^ //' >"$T/us.k"
[ "$(grep -c '^leaf+0x0/[^ ]* outer+[^ ]* main+' "$T/us.k")" = 2 ] ||
	why "kernel engine stacks: $(cat "$T/us.k") ($(head -c 300 "$T/ustack.kernel.err"))"
diff -u "$T/us.d" "$T/us.k" >>"$T/why" || why "frames differ from the default engine's"
grep '"event":"ot"' "$T/ustack.kernel" | grep -q '"stack":\[' &&
	why "a stack on ot, which --stack did not name"
dp kernel ufold trace --format folded -e 'p:lf leaf' -- "$O2/stack" 3
grep -Eq '(^|;)main;outer;leaf 3$' "$T/ufold.kernel" ||
	why "folded: $(cat "$T/ufold.kernel")"
dp kernel uflame trace --flamegraph "$T/k.svg" -e 'p:lf leaf' -- "$O2/stack" 3
grep -q '<title>leaf (3 samples' "$T/k.svg" 2>/dev/null ||
	why "no leaf frame in --flamegraph's SVG"
result "--stack: the kernel's <user stack trace>, folded, --flamegraph"

# dprobe latency: entry and return paired by the stack pointer, across
# recursion (rec: 4 nested calls of 3 to 12 ms) and longjmp (jumper: 4
# calls never return, 4 take microseconds)
dp kernel lrec latency rec -- "$O2/lat"
[ "$rc" = 0 ] || why "rec: exit status $rc: $(head -c 300 "$T/lrec.kernel.err")"
grep -q '^count 4, min ' "$T/lrec.kernel" || why "rec: $(cat "$T/lrec.kernel")"
sed -n 's/^{ lat: ~ 2^\([0-9]*\) *} hitcount: *\([0-9]*\) .*/\1 \2/p' \
	"$T/lrec.kernel" | awk '$1 >= 24 { n += $2 } END { exit n < 2 }' ||
	why "rec: fewer than 2 calls over 8.39 ms"
dp kernel ljmp latency jumper -- "$O2/lat"
grep -q '^count 4, min ' "$T/ljmp.kernel" || why "jumper: $(cat "$T/ljmp.kernel")"
grep -q '^dprobe latency: 4 calls never returned' "$T/ljmp.kernel.err" ||
	why "jumper: $(cat "$T/ljmp.kernel.err")"
result "dprobe latency --engine kernel: recursion, longjmp"

if command -v setpriv >/dev/null 2>&1; then
	cp "$WORK_EX" "$T/work" && chmod 755 "$T" "$T/work"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$DPROBE" trace \
		--engine kernel -e 'p:w work' -- "$T/work" >"$T/nr.out" 2>&1
	rc=$?
	[ "$rc" = 1 ] || why "exit status $rc"
	grep -q 'the kernel engine needs root' "$T/nr.out" ||
		why "message: $(cat "$T/nr.out")"
	result "not root"
else
	t_skip "not root" "setpriv not found"
fi

DPROBE_TRACEFS=/nonexistent-dir "$DPROBE" trace --engine kernel -e 'p:w work' \
	-- "$WORK_EX" >"$T/ntf.out" 2>&1
rc=$?
[ "$rc" = 1 ] || why "exit status $rc"
grep -q 'no tracefs at /nonexistent-dir' "$T/ntf.out" || why "$(cat "$T/ntf.out")"
result "DPROBE_TRACEFS=/nonexistent-dir"

# stop signals while events flow
ticks() {
	t_start_bg "$T/ticks.out" "$O2/waiter" --ticks 100000 5
	# attach to the program, not to the shell that is about to exec it
	started "$T/ticks.out"
	"$DPROBE" trace --engine kernel -e 'p:w work i=%di:s64' -p "$_w" \
		>"$T/sig.out" 2>"$T/sig.err" &
	_d=$!
	for _i in $(seq 100); do
		[ -d "$TFS/instances/dprobe.$_d" ] && break
		sleep 0.05
	done
	sleep 0.5
}
for sig in INT TERM HUP; do
	ticks
	[ -d "$TFS/instances/dprobe.$_d" ] || why "no instance while running"
	kill -"$sig" "$_d"
	wait "$_d"
	rc=$?
	kill "$_w" 2>/dev/null
	[ "$rc" = 0 ] || why "exit status $rc"
	grep -q '^dprobe: [1-9][0-9]* events' "$T/sig.err" ||
		why "summary: $(tail -n 2 "$T/sig.err")"
	result "SIG$sig mid-run removes everything"
done

ticks
kill -9 "$_d"
wait "$_d" 2>/dev/null
kill "$_w" 2>/dev/null
[ -d "$TFS/instances/dprobe.$_d" ] || why "kill -9 left nothing to clean?"
"$DPROBE" cleanup >"$T/clean.out" 2>&1
rc=$?
[ "$rc" = 0 ] || why "cleanup: exit status $rc"
grep -q "^removed instance instances/dprobe.$_d$" "$T/clean.out" ||
	why "cleanup said: $(cat "$T/clean.out")"
grep -q "^removed uprobe event dprobe${_d}_kprobes/w$" "$T/clean.out" ||
	why "cleanup: no event line"
"$DPROBE" cleanup >"$T/clean2.out" 2>&1
grep -q 'nothing to remove' "$T/clean2.out" || why "second cleanup: $(cat "$T/clean2.out")"
result "kill -9, then dprobe cleanup"

# ---- --kernel ------------------------------------------------------------------

dp kernel ktp trace --kernel -e sched:sched_process_exec -- /bin/true
[ "$rc" = 0 ] || why "exit status $rc: $(cat "$T/ktp.kernel.err")"
grep -q 'sched_process_exec: filename="/bin/true" pid=[0-9]* old_pid=[0-9]*$' \
	"$T/ktp.kernel" || why "line: $(cat "$T/ktp.kernel")"
result "--kernel: a kernel tracepoint, its format's fields"

# on --engine kernel a GROUP:NAME that is no SDT probe is the kernel's,
# next to a uprobe of the program
dp kernel ktp2 trace --engine kernel -e sched:sched_process_exec \
	-e 'p:w work a=%di:s32' -- "$WORK_EX"
[ "$rc" = 0 ] || why "exit status $rc: $(cat "$T/ktp2.kernel.err")"
grep -q 'sched_process_exec: filename=".*/work" pid=' "$T/ktp2.kernel" ||
	why "no exec line: $(cat "$T/ktp2.kernel")"
[ "$(grep -c ' w: (work+0x0/' "$T/ktp2.kernel")" = 3 ] || why "not 3 w: lines"
result "--engine kernel: GROUP:NAME is a kernel tracepoint"

# --filter on a tracepoint's fields (known once its format is read), run in
# user space as for probe events; a bad one is the kernel's filter error
dp kernel ktpf trace -f --kernel -e sched:sched_process_exec \
	--filter 'sched_process_exec=filename ~ "*/true"' -- \
	sh -c '/bin/true; /bin/echo x >/dev/null'
grep -q 'filename="/bin/true"' "$T/ktpf.kernel" || why "no /bin/true line"
grep -q 'filename="/bin/echo"' "$T/ktpf.kernel" && why "/bin/echo not filtered"
grep -q ' 2 filtered' "$T/ktpf.kernel.err" ||
	why "summary: $(tail -n 1 "$T/ktpf.kernel.err")"
dp kernel ktpbad trace --kernel -e sched:sched_process_exec \
	--filter 'sched:sched_process_exec=nosuch == 1' -- /bin/true
[ "$rc" = 1 ] || why "bad filter: exit status $rc"
grep -q 'error: Field not found' "$T/ktpbad.kernel.err" ||
	why "bad filter: $(cat "$T/ktpbad.kernel.err")"
result "--filter on a kernel tracepoint"

"$DPROBE" list --kernel 'sched:sched_process_e*' >"$T/list.out" 2>&1
grep -q '^sched:sched_process_exec  *\[Tracepoint event\]$' "$T/list.out" ||
	why "list: $(cat "$T/list.out")"
result "list --kernel"

dp kernel kp trace --kernel -e 'p:myprobe do_sys_openat2 dfd=%di:s32' -- /bin/true
if [ -e $TFS/kprobe_events ]; then
	[ "$rc" = 0 ] || why "exit status $rc: $(cat "$T/kp.kernel.err")"
	grep -q 'myprobe: (do_sys_openat2+0x0/' "$T/kp.kernel" || why "no kprobe line"
else
	[ "$rc" = 1 ] || why "exit status $rc"
	grep -q 'this kernel has no kprobe_events' "$T/kp.kernel.err" ||
		why "message: $(cat "$T/kp.kernel.err")"
fi
result "--kernel: kprobe_events (or the sentence saying it is missing)"

# ---- kill -9 of dprobe: the program runs on unchanged ----------------------------

# spin: 4 threads call square() and twice() without pause, checking every
# result, until a stop file appears; then it compares the functions' first
# bytes with the ones it saw at its start: "ok" and exit 0 only if all is
# well.  Attached with --engine kernel (entry and return probes on both),
# dprobe is killed with SIGKILL while the hits come.  The uprobes are the
# kernel's: spin runs on through them, and they go with `dprobe cleanup`
# (the code is the file's again); spin then ends with every result right,
# its code intact, exit status 0.
kill9_target_survives() {
	_sp=$O2/spin
	t_start_bg "$T/k9.out" "$_sp" "$T/k9.stop" 4
	_s=$T_PID
	t_wait_line "$T/k9.out" '' 10
	"$DPROBE" trace --engine kernel -e 'p:sq square i=%di:s64' \
		-e 'r:sqr square ret=$retval:s64' -e 'p:tw twice i=%di:s64' \
		-e 'r:twr twice ret=$retval:s64' -o "$T/k9.ev" -p "$_s" \
		2>"$T/k9.err" </dev/null &
	_d=$!
	{ wait_armed "$_s" "$_sp" square && wait_armed "$_s" "$_sp" twice; } ||
		why "never armed: $(head -c 300 "$T/k9.err")"
	sleep 0.3
	kill -9 "$_d"
	wait "$_d" 2>/dev/null
	kill -0 "$_s" 2>/dev/null || why "spin died with dprobe"
	"$DPROBE" cleanup >"$T/k9.clean" 2>&1
	{ kill -0 "$_s" 2>/dev/null && wait_restored "$_s" "$_sp" square &&
		wait_restored "$_s" "$_sp" twice; } ||
		why "code not the file's after dprobe cleanup: $(cat "$T/k9.clean")"
	touch "$T/k9.stop"
	wait "$_s"
	_rc=$?
	[ "$_rc" = 0 ] || why "spin: exit status $_rc"
	grep -qx 'spin: ok (4 threads, calls made)' "$T/k9.out" ||
		why "spin said: $(cat "$T/k9.out")"
	result "kill -9 of dprobe -p: the program runs on, unchanged once cleaned up"
}
kill9_target_survives

t_end
