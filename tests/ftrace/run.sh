#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own ftrace selftests against `dprobe mount` (issue 15):
# ftracetest of the installed Linux source (Debian's linux-source-6.12,
# /usr/src/linux-source-*.tar.xz; its tools/testing/selftests/ftrace is
# extracted once into BUILD/ftrace/), run unmodified on the 00basic/,
# event/, instances/, kprobe/, dynevent/, trigger/,
# trigger/inter-event/ and ftrace/ test folders against a mount served for
# tests/ftrace/target.c, whose functions carry the names the tests probe.
#
#   sh tests/ftrace/run.sh DPROBE [TEST.tc...]
#
# ftracetest finds its tracing directory in /proc/mounts ("tracefs" in
# the line, the dprobe mount's fsname "dprobe-tracefs"): it runs in a
# mount namespace of its own where the kernel's tracefs is unmounted and
# the dprobe mount sits in its place, /sys/kernel/tracing (the eprobe
# test cds there).  The mount's kernel lane reads the kernel's tracefs
# in a namespace of its own.  The tests run on two mounts, with and
# without the syscall events (see run_group below).  Each test is one
# line: PASS for ftracetest's PASS and XFAIL, FAIL for FAIL (the log
# follows), SKIP with the reason for UNSUPPORTED, UNRESOLVED and
# UNTESTED (what the test needs that dprobe does not serve yet), and
# SKIP with what it needs for the tests that need the kernel itself
# (kernel_only(): not run).  Then the counts.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/../lib.sh"
DPROBE=$(realpath -m "${1:?usage: run.sh DPROBE [TEST.tc...]}")
shift
BUILD=$(dirname "$DPROBE")
t_begin ftrace
t_require root unshare fusermount3 tar xz cc
[ -c /dev/fuse ] || t_skip_all "no /dev/fuse (the fuse module is not loaded)"
SRC=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -n "$SRC" ] || t_skip_all "no /usr/src/linux-source-*.tar.xz (apt-get install linux-source-6.12)"

# the selftests, once per source tarball: from its last xz blocks
# (extract.py: the tarball is compressed in blocks, and the selftests are
# near its end), else tar decompresses it all (~12 s of CPU)
FT=$BUILD/ftrace/$(basename "$SRC" .tar.xz)
FTPAT='*/tools/testing/selftests/ftrace/*'
if [ ! -x "$FT/ftracetest" ]; then
	rm -rf "$BUILD/ftrace.tmp" && mkdir -p "$BUILD/ftrace.tmp" &&
		{ { command -v python3 >/dev/null 2>&1 &&
			python3 "$HERE/extract.py" "$SRC" "$BUILD/ftrace.tmp" "$FTPAT" &&
			[ -x "$BUILD/ftrace.tmp"/*/tools/testing/selftests/ftrace/ftracetest ]; } ||
		  { rm -rf "$BUILD/ftrace.tmp" && mkdir -p "$BUILD/ftrace.tmp" &&
			tar -xJf "$SRC" -C "$BUILD/ftrace.tmp" --wildcards "$FTPAT"; }; } &&
		mkdir -p "$BUILD/ftrace" && rm -rf "$FT" &&
		mv "$BUILD/ftrace.tmp"/*/tools/testing/selftests/ftrace "$FT" ||
		t_skip_all "cannot extract the ftrace selftests from $SRC"
	rm -rf "$BUILD/ftrace.tmp"
fi
TARGET=$BUILD/ftrace/target
if [ ! -x "$TARGET" ] || [ "$HERE/target.c" -nt "$TARGET" ]; then
	cc -O0 -g -I"$HERE/../../include" -o "$TARGET" "$HERE/target.c" \
		-L"$BUILD" -ldprobe -Wl,-rpath,"$BUILD" ||
		t_skip_all "cannot build target.c"
fi

t_scratch dpftrace
T_KEEP=${FTRACE_KEEP:-0}
W=$T_DIR
# Of the ftrace/ folder, the tests dprobe serves (the others need
# a function profiler, the stack tracer's sysctl, set_ftrace_pid or the kernel:
# sh tests/ftrace/run.sh DPROBE test.d/ftrace/*.tc runs them all, as
# skips); named here so that make test does not spend its time on skips.
FTRACE_TESTS="test.d/ftrace/fgraph-filter.tc test.d/ftrace/func-filter-glob.tc
test.d/ftrace/func_cpumask.tc test.d/ftrace/func_hotplug.tc
test.d/ftrace/func_set_ftrace_file.tc test.d/ftrace/func_traceonoff_triggers.tc
test.d/ftrace/func-filter-stacktrace.tc test.d/ftrace/func_event_triggers.tc"
if [ $# -gt 0 ]; then
	ALL=$*
else
	ALL=$(cd "$FT" && ls test.d/00basic/*.tc test.d/event/*.tc \
		test.d/instances/*.tc test.d/kprobe/*.tc test.d/dynevent/*.tc \
		test.d/trigger/*.tc test.d/trigger/inter-event/*.tc \
		$FTRACE_TESTS)
fi

# Tests that need the kernel itself, not only its tracefs files: not
# run, each counted as skipped with what it needs.
kernel_only() {
	case $1 in
	*/add_remove_uprobe.tc)
		echo "a uprobe on /bin/sh hit by the test's own shell: the" \
			"kernel's uprobes are system-wide, a dprobe mount" \
			"serves one process tree" ;;
	*/kprobe_eventname.tc)
		echo "probes a function it picks from /proc/kallsyms (the" \
			"kernel's .isra. clones)" ;;
	*/kprobe_opt_types.tc)
		echo "reads /proc/sys/debug/kprobes-optimization, the" \
			"kernel's kprobe optimizer" ;;
	*/multiple_kprobes.tc)
		echo "probes 256 functions listed in /proc/kallsyms" ;;
	*/probepoint.tc)
		echo "probes addresses read from /proc/kallsyms" ;;
	*/kprobe_args_symbol.tc)
		echo "reads the kernel's linux_proc_banner, found in" \
			"/proc/kallsyms, and compares it with /proc/version" ;;
	*/kprobe_module.tc | */add_remove_tprobe_module.tc)
		echo "loads a kernel module (modprobe) and probes it" ;;
	*/mount_options.tc | */test_ownership.tc)
		echo "remounts the kernel's tracefs with its gid= option and" \
			"checks the owners of its files and eventfs' inodes" ;;
	*/func_mod_trace.tc)
		echo "loads a kernel module (modprobe) and traces its" \
			"functions" ;;
	*/func_stack_tracer.tc | */fgraph-filter-stack.tc)
		echo "switches the stack tracer with the kernel's sysctl" \
			"/proc/sys/kernel/stack_tracer_enabled (the mount's" \
			"stack_tracer_enabled file stands for it) and forks" \
			"the test shell for the kernel's deepest stacks" ;;
	*/tracing-error-log.tc)
		echo "the kernel's signal:signal_generate event, whose" \
			"filter it writes" ;;
	*/fgraph-retval.tc)
		echo "the kernel's proc_reg_write, called by its shell's" \
			"write to /proc/interrupts, and return values" \
			"printed again when funcgraph-retval-hex changes" \
			"after the trace (the kernel formats when read)" ;;
	*/trace_printk.tc)
		echo "loads the trace-printk kernel module (modprobe) and" \
			"looks for its trace_printk() lines" ;;
	*/trigger-hist.tc | */trigger-multihist.tc | */trigger-hist-mod.tc)
		echo "histograms of the test shell's own forks (its comm" \
			"and pid as keys; the target's kmem:kmalloc would" \
			"do for the rest) and of the kernel's raw_syscalls" \
			"events" ;;
	*/trigger-field-variable-support.tc | \
	*/trigger-inter-event-combined-hist.tc | \
	*/trigger-onmatch-action-hist.tc | */trigger-onmax-action-hist.tc | \
	*/trigger-onmatch-onmax-action-hist.tc | \
	*/trigger-trace-action-hist.tc)
		echo "the kernel's sched_waking, sched_wakeup and sched_switch" \
			"of a ping it runs (comm \"ping\"), another process" \
			"than the served tree" ;;
	*/trigger-onchange-action-hist.tc | */trigger-snapshot-action-hist.tc)
		echo "the kernel's sched_waking of a ping it runs twice, the" \
			"second under nice -n 1, and the prio change between" ;;
	*/trigger-synthetic-event-dynstring.tc)
		echo "the kernel's sched_process_exec and sched_process_exit" \
			"of a ping it runs" ;;
	*/trigger-trace-marker-synthetic-kernel.tc)
		echo "the kernel's sched_waking of the test shell itself" \
			"(woken from its sleep 1), its pid matched with" \
			"the trace_marker write's common_pid" ;;
	*) return 1 ;;
	esac
}
# Tests that need what dprobe does not have yet: not run, each counted
# as skipped with what it needs.
not_yet() {
	case $1 in
	*/event-pid.tc | */event-no-pid.tc)
		echo "set_event_pid, set_event_notrace_pid and" \
			"options/event-fork (events by pid)" ;;
	*) return 1 ;;
	esac
}
CASES=
: >"$W/kernel-only"
for c in $ALL; do
	if why=$(kernel_only "$c"); then
		d=$(sed -n 's/^# description: //p' "$FT/$c")
		printf '%s\t%s\n' "${d:-$c}" "needs the kernel itself: $why" \
			>>"$W/kernel-only"
	elif why=$(not_yet "$c"); then
		d=$(sed -n 's/^# description: //p' "$FT/$c")
		printf '%s\t%s\n' "${d:-$c}" "needs $why" >>"$W/kernel-only"
	else
		CASES="$CASES $c"
	fi
done

# inside the namespace: the target, the mount at /sys/kernel/tracing,
# ftracetest
cat >"$W/inner.sh" <<'INNER'
set -u
W=$1 DPROBE=$2 TARGET=$3 FT=$4 SYSCALLS=$5
shift 5
# every mount of this private namespace's copy that ftracetest could
# take for its tracefs: the kernel's, wherever a stage mounted one, and
# another stage's dprobe mount (fsname dprobe-tracefs), which stays
# mounted and served outside this namespace
for _ in $(seq 1 16); do
	d=$(awk '/tracefs/ { print $2; exit }' /proc/mounts)
	[ -n "$d" ] || break
	umount "$d" 2>/dev/null || umount -l "$d" 2>/dev/null || break
done
grep -q tracefs /proc/mounts && { echo "a tracefs stays mounted:" \
	"$(grep tracefs /proc/mounts | head -n 3 | tr '\n' ' ')" >"$W/why"; exit 3; }
T=/sys/kernel/tracing
[ -d $T ] || { echo "no $T to mount on" >"$W/why"; exit 3; }
"$TARGET" >"$W/target.out" 2>&1 &
tpid=$!
"$DPROBE" mount $T --syscalls "$SYSCALLS" -p "$tpid" >"$W/mount.out" 2>&1 &
mpid=$!
for _ in $(seq 1 100); do
	[ -e $T/kprobe_events ] && break
	sleep 0.05
done
if [ ! -e $T/kprobe_events ]; then
	echo "the mount did not come up: $(cat "$W/mount.out")" >"$W/why"
	kill "$tpid" "$mpid" 2>/dev/null
	exit 3
fi
(cd "$FT" && ./ftracetest -l "$W/logs" "$@" >"$W/ftracetest.out" 2>&1)
# the target first: its working directory may be in the mount (the
# chdir the eprobe test watches), which then could not be unmounted
kill "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null
fusermount3 -u $T 2>/dev/null || kill "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null
exit 0
INNER

# run_cases DIR SYSCALLS CASE...: ftracetest on those cases, a mount
# (its --syscalls SYSCALLS) and a target of their own, into DIR/results
# as "RESULT<TAB>N<TAB>description" lines.
run_cases() {
	_dir=$1
	_sys=$2
	shift 2
	mkdir -p "$_dir"
	: >"$_dir/results"
	[ $# -gt 0 ] || return 0
	unshare -m --propagation private sh "$W/inner.sh" "$_dir" "$DPROBE" \
		"$TARGET" "$FT" "$_sys" "$@"
	if [ $? = 3 ]; then
		t_skip_all "$(cat "$_dir/why")"
	fi
	# "[n] description<TAB>[RESULT]" lines
	awk '/^\[[0-9]+\] .*\[[A-Z]+\]$/ {
		r = $NF; gsub(/[][]/, "", r)
		n = $1; gsub(/[][]/, "", n)
		d = $0; sub(/^\[[0-9]+\] /, "", d)
		sub(/[ \t]*\[[A-Z]+\]$/, "", d)
		print r "\t" n "\t" d }' "$_dir/ftracetest.out" >"$_dir/results"
	[ -s "$_dir/results" ] || t_fail ftracetest \
		"no results: $(tail -n 3 "$_dir/ftracetest.out")"
}

# the N-th word of CASE...
nth() {
	_n=$1
	shift
	eval "echo \${$_n}"
}

# case_of N CASE...: the test file of result N of a run of CASE...: the
# cases in order, then those ftracetest runs again inside an instance
# ("# flags: instance"), in order
case_of() {
	_n=$1
	shift
	if [ "$_n" -le $# ]; then
		nth "$_n" "$@"
		return
	fi
	_n=$((_n - $#))
	for _c in "$@"; do
		grep -q '^#[[:space:]]*flags:.*instance' "$FT/$_c" || continue
		_n=$((_n - 1))
		[ "$_n" = 0 ] && { echo "$_c"; return; }
	done
}

# run_group DIR SYSCALLS CASE...: the cases on one mount, a failed one
# once more, alone with a fresh mount (a test that greps the trace right
# after enabling an event depends on the target calling the function in
# between, which a loaded machine may not do in time): its second
# result, found by its description, counts.  One line per test.
run_group() {
	_gdir=$1
	_gsys=$2
	shift 2
	run_cases "$_gdir" "$_gsys" "$@"
	_again=
	while IFS="$(printf '\t')" read -r r n d; do
		[ "$r" = FAIL ] || continue
		c=$(case_of "$n" "$@")
		case " $_again " in *" $c "*) ;; *) _again="$_again $c" ;; esac
	done <"$_gdir/results"
	# shellcheck disable=SC2086
	run_cases "$_gdir/again" "$_gsys" $_again
	while IFS="$(printf '\t')" read -r r n d; do
		dir=$_gdir
		if [ "$r" = FAIL ]; then
			dir=$_gdir/again
			line=$(awk -F '\t' -v d="$d" '$3 == d { print; exit }' \
				"$_gdir/again/results")
			r=$(echo "$line" | cut -f1)
			n=$(echo "$line" | cut -f2)
			[ -n "$r" ] || r=FAIL
			[ "$r" = PASS ] && d="$d (passed on its second run)"
		fi
		case $r in
		PASS | XFAIL) t_pass "$d" ;;
		FAIL)
			t_fail "$d"
			tail -n 20 "$dir/logs/$n"-* 2>/dev/null | sed 's/^/    /'
			;;
		*) t_skip "$d" "$r" ;;
		esac
	done <"$_gdir/results"
}

# The tests that use the syscall events run on a mount that serves
# them (the kernel's, 700-odd events); the others on a mount without
# them, --syscalls none.  The tests are the same either way, but
# ftracetest resets every event's trigger and filter file before and
# after each test (initialize_ftrace), and 700 events more make that
# some 4,000 more files read per test, each a few FUSE requests: about
# a second of CPU time a test on these virtual machines, 100 times over.
SYS=
NOSYS=
for c in $CASES; do
	if grep -q -e 'syscalls' -e 'sys_enter' "$FT/$c"; then
		SYS="$SYS $c"
	else
		NOSYS="$NOSYS $c"
	fi
done
# shellcheck disable=SC2086  # one word per test
run_group "$W/nosys" none $NOSYS
# shellcheck disable=SC2086
run_group "$W/sys" auto $SYS
while IFS="$(printf '\t')" read -r d why; do
	t_skip "$d" "$why"
done <"$W/kernel-only"
t_end
