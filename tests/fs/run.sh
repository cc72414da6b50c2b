#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tests of `dprobe mount`: the seed documents' tracefs sessions replayed
# on a mount served for build/examples/fileserver, the files' contents
# compared with tests/fs/expected/NAME after normalisation (pids, CPUs,
# timestamps).
#
#   sh tests/fs/run.sh DPROBE [CASE...]
#
# One line per case: PASS, FAIL (with the difference) or SKIP with the
# reason; then "fs: N passed, N failed, N skipped", and "fs P F S" appended
# to $DPROBE_RESULTS when it is set.  FS_UPDATE=1 writes the expected
# files from what the mount gives (review them before keeping them);
# FS_KEEP=1 keeps the scratch directory.  Cases need root and /dev/fuse
# and skip without them.
set -u
# (probe definitions are written in single quotes on purpose)
# shellcheck disable=SC2016

if [ $# -lt 1 ]; then
	echo "usage: $0 DPROBE [CASE...]" >&2
	exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
case $1 in
/*) DPROBE=$1 ;;
*) DPROBE=$(pwd)/$1 ;;
esac
shift
FSRV=$(realpath -m "$(dirname "$DPROBE")/examples/fileserver")
TPEX=$(realpath -m "$(dirname "$DPROBE")/examples/tracepoint_example")
EXP=$HERE/expected
ALL="seed_kprobe seed_filp seed_vfs_read bad_defs filters trace_pipe \
uprobes set_event readers pid_attach killed live_switch tracepoints by_name \
dynevents exec eprobes eprobes_ptrace hist hist_vars hist_stacks triggers \
instances show tracer graph_opts stack fcmds"
CASES=${*:-$ALL}

# shellcheck source=tests/lib.sh
. "$HERE/../lib.sh"
t_begin fs

why_skip() {
	[ "$(id -u)" = 0 ] || { echo "needs root (ptrace and FUSE mounts)"; return; }
	command -v bash >/dev/null 2>&1 || { echo "needs bash (errno texts of failed writes)"; return; }
	[ -c /dev/fuse ] || { echo "no /dev/fuse (the fuse module is not loaded)"; return; }
	command -v fusermount3 >/dev/null 2>&1 || { echo "no fusermount3 (fuse3 package)"; return; }
	[ -x "$FSRV" ] || { echo "$FSRV is not built"; return; }
	"$DPROBE" help mount >/dev/null 2>&1 || echo "dprobe mount is not built"
}
reason=$(why_skip)
if [ -n "$reason" ]; then
	for c in $CASES; do
		t_skip "$c" "$reason"
	done
	t_end
	exit 0
fi

T_KEEP=failed
[ "${FS_KEEP:-0}" = 1 ] && T_KEEP=1
t_scratch dpfs
WORK=$T_DIR
MOUNT_OPTS=
MNT=$WORK/mnt
DP_PID=
# never leave a mount or a tracer behind, whatever failed
cleanup() {
	if [ -n "$DP_PID" ] && kill -0 "$DP_PID" 2>/dev/null; then
		kill -INT "$DP_PID" 2>/dev/null
		sleep 1
	fi
	leftovers
}
T_AT_EXIT=cleanup

# ---- helpers -----------------------------------------------------------------

# Whatever a case left behind: its mount (Ctrl-C, then an unmount), its
# servers (asked to quit), by the pids the case wrote down.
leftovers() {
	for _f in "$WORK/dp.pid" "$WORK/srv.pid"; do
		[ -f "$_f" ] || continue
		_p=$(cat "$_f")
		rm -f "$_f"
		kill -0 "$_p" 2>/dev/null || continue
		if [ "$_f" = "$WORK/dp.pid" ]; then
			kill -INT "$_p"
			sleep 1
		fi
	done
	mountpoint -q "$MNT" 2>/dev/null && fusermount3 -u "$MNT"
	_quit=
	for _f in "$WORK"/req*; do
		[ -p "$_f" ] && timeout 1 sh -c "echo quit >'$_f'" 2>/dev/null &&
			_quit=1
	done
	# a server that took a quit: a moment to read it before its pipe goes
	[ -z "$_quit" ] || sleep 0.1
	rm -f "$WORK"/req*
}

# Replace what changes from run to run: pid, CPU, timestamp, the
# process id in the fileserver's own lines.
norm() {
	sed -e 's/-[0-9]\{1,\} *\[[0-9]\{3\}\] /-PID [CPU] /' \
	    -e 's/  *[0-9]\{1,\}\.[0-9]\{6\}: / TS: /' \
	    -e 's/#P:[0-9]*/#P:N/' \
	    -e "s|$FSRV|FILESERVER|g" \
	    -e 's/fileserver [0-9]* ready/fileserver PID ready/'
}

# Also the values a register gives at a probe (the seed's i386 registers
# on x86-64) and code offsets that change with the compiler.
norm_vals() {
	norm | sed -e 's/=0x[0-9a-f]*/=0xN/g' \
		   -e 's/+0x[0-9a-f]*\/0x[0-9a-f]*/+OFF\/SIZE/g'
}

# error_log without each entry's "[secs.micros] "
nolog_ts() {
	sed 's/^\[ *[0-9]*\.[0-9]\{6\}\] //'
}

# check NAME FILE: FILE against expected/NAME (FS_UPDATE=1: FILE becomes
# expected/NAME)
T_UPDATE=${FS_UPDATE:-0}
check() {
	[ "$T_UPDATE" = 1 ] && mkdir -p "$EXP"
	if ! t_check "$EXP/$1" "$2" >"$WORK/$1.diff" 2>&1; then
		echo "  $1 differs:" >>"$WORK/why"
		sed 's/^/    /' "$WORK/$1.diff" >>"$WORK/why"
		return 1
	fi
	return 0
}

# expect_fail ERRNO_TEXT CMD...: CMD fails and the shell says ERRNO_TEXT.
expect_fail() {
	_msg=$1
	shift
	if "$@" 2>"$WORK/sh.err"; then
		echo "  '$*' succeeded, expected: $_msg" >>"$WORK/why"
		return 1
	fi
	grep -q "$_msg" "$WORK/sh.err" || {
		echo "  '$*': expected '$_msg', got: $(cat "$WORK/sh.err")" >>"$WORK/why"
		return 1
	}
}

# w FILE TEXT / a FILE TEXT: the shell's '>' and '>>', through bash,
# whose echo names the errno of a failed write (dash's says "I/O error")
w() { bash -c 'echo "$1" >"$2"' w "$2" "$MNT/$1"; }
a() { bash -c 'echo "$1" >>"$2"' a "$2" "$MNT/$1"; }

# start_mount REQ [-p PID]: mount for a fileserver reading REQ, started
# by the mount or (-p) already running.
start_mount() {
	_req=$1
	shift
	mkdir -p "$MNT"
	# The descriptors the fileserver prints are in the expected files:
	# none may be taken by one this shell inherited (make's jobserver,
	# a caller's lock or log).
	# shellcheck disable=SC2086 # $MOUNT_OPTS: words
	if [ $# -gt 0 ]; then
		"$DPROBE" mount $MOUNT_OPTS "$MNT" "$@" >>"$WORK/out" \
			2>"$WORK/err" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	else
		"$DPROBE" mount $MOUNT_OPTS "$MNT" -- "$FSRV" "$_req" \
			>>"$WORK/out" 2>"$WORK/err" \
			3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	fi
	DP_PID=$!
	echo "$DP_PID" >"$WORK/dp.pid"
	# (polls of 10 ms: every case mounts, and waits for each request)
	for _i in $(seq 1 500); do
		[ -e "$MNT/kprobe_events" ] && return 0
		kill -0 "$DP_PID" 2>/dev/null || break
		sleep 0.01
	done
	echo "  the mount did not come up: $(cat "$WORK/err")" >>"$WORK/why"
	return 1
}

# stop_mount [SIGNAL]: Ctrl-C (default) or an unmount from outside; the
# mount must be gone and dprobe must have exited with status 0.
stop_mount() {
	if [ "${1:-INT}" = umount ]; then
		fusermount3 -u "$MNT"
	else
		kill -"${1:-INT}" "$DP_PID"
	fi
	_rc=0
	wait "$DP_PID" || _rc=$?
	DP_PID=
	if mountpoint -q "$MNT"; then
		echo "  $MNT still mounted" >>"$WORK/why"
		return 1
	fi
	[ "$_rc" = 0 ] || { echo "  dprobe mount exited with $_rc" >>"$WORK/why"; return 1; }
	# a sanitizer build says what went wrong on stderr
	if grep -q -e 'Sanitizer' -e 'runtime error' "$WORK/err"; then
		echo "  the sanitizers found errors" >>"$WORK/why"
		return 1
	fi
}

# req REQ LINE: one fileserver request, waiting for its answer.
req() {
	_n=$(wc -l <"$WORK/out")
	echo "$2" >"$1"
	for _i in $(seq 1 500); do
		[ "$(wc -l <"$WORK/out")" -gt "$_n" ] && return 0
		sleep 0.01
	done
	echo "  no answer to '$2'" >>"$WORK/why"
	return 1
}

# quit_server REQ: the server's last request; waits for the mount to end
# if it was started by it.
quit_server() {
	echo quit >"$1"
}

# func_off FUNC: FUNC's file offset in the fileserver (binutils' view).
func_off() {
	_a=$((0x$(nm "$FSRV" | awk -v f="$1" '$3 == f { print $1 }')))
	readelf -lW "$FSRV" | awk '$1 == "LOAD" { print $2, $3, $6 }' |
	while read -r _o _v _s; do
		if [ "$_a" -ge $((_v)) ] && [ "$_a" -lt $((_v + _s)) ]; then
			printf '0x%x\n' $((_a - _v + _o))
		fi
	done
}

trace_body() { grep -v '^#' "$MNT/trace"; }

# ---- cases -------------------------------------------------------------------

# Seed 000 (kprobetrace.rst), verbatim: define, format, enable, trace,
# profile, busy delete, disable and delete, clear.
case_seed_kprobe() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)'
	a kprobe_events 'r:myretprobe do_sys_open $retval'
	cat "$MNT/kprobe_events" >"$WORK/got.events"
	check seed_kprobe.events "$WORK/got.events" || return 1
	cat "$MNT/events/kprobes/myprobe/format" >"$WORK/got.format"
	"$DPROBE" format -x "$FSRV" \
		'p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)' \
		>"$WORK/want.format"
	# the same bytes as `dprobe format` of the same line
	cmp -s "$WORK/want.format" "$WORK/got.format" ||
		{ echo "  format differs from dprobe format" >>"$WORK/why"; return 1; }
	# (the kernel's syscall events are the kernel's list: not compared)
	(cd "$MNT/events" && find . | grep -v '^\./syscalls' | LC_ALL=C sort) \
		>"$WORK/got.tree"
	check seed_kprobe.tree "$WORK/got.tree" || return 1
	w events/kprobes/myprobe/enable 1
	w events/kprobes/myretprobe/enable 1
	req "$R" "open /etc/passwd" && req "$R" "read /etc/hostname" || return 1
	norm_vals <"$MNT/trace" >"$WORK/got.trace"
	check seed_kprobe.trace "$WORK/got.trace" || return 1
	cat "$MNT/kprobe_profile" >"$WORK/got.profile"
	check seed_kprobe.profile "$WORK/got.profile" || return 1
	echo >"$MNT/trace"
	norm <"$MNT/trace" >"$WORK/got.cleared"
	check seed_kprobe.cleared "$WORK/got.cleared" || return 1
	# enabled: the kernel's EBUSY, nothing changes
	expect_fail "busy" a kprobe_events '-:myprobe' || return 1
	expect_fail "busy" w kprobe_events '' || return 1
	# through a pipe: cmp compares the sizes of files first, and a tracefs
	# file has none
	# shellcheck disable=SC2002
	cat "$MNT/kprobe_events" | cmp -s "$WORK/got.events" - ||
		{ echo "  kprobe_events changed by a refused delete" >>"$WORK/why"; return 1; }
	w events/kprobes/myprobe/enable 0
	a kprobe_events '-:myprobe' || return 1
	cat "$MNT/kprobe_events" >"$WORK/got.events2"
	check seed_kprobe.events2 "$WORK/got.events2" || return 1
	w events/kprobes/enable 0
	echo >"$MNT/kprobe_events" || return 1
	[ ! -s "$MNT/kprobe_events" ] && [ ! -e "$MNT/events/kprobes" ] ||
		{ echo "  'echo > kprobe_events' left events" >>"$WORK/why"; return 1; }
	quit_server "$R"
	stop_mount umount || return 1
	norm <"$WORK/out" >"$WORK/got.out"
	check seed_kprobe.out "$WORK/got.out"
}

# Seed 002: do_filp_open with a double dereference of struct filename.
case_seed_filp() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:kprobes/myprobe do_filp_open dfd=+0(%di):u32 pathname=+0(+0(%si)):string'
	w events/kprobes/myprobe/enable 1
	req "$R" "open /etc/passwd" && req "$R" "read /etc/hostname" || return 1
	norm <"$MNT/trace" >"$WORK/got.trace"
	check seed_filp.trace "$WORK/got.trace" || return 1
	# the server ends: the files stay, the trace stays readable
	quit_server "$R"
	for _i in $(seq 1 100); do
		grep -q '^fileserver: bye' "$WORK/out" && break
		sleep 0.05
	done
	sleep 0.3
	norm <"$MNT/trace" >"$WORK/got.trace2"
	check seed_filp.trace "$WORK/got.trace2" || return 1
	w events/kprobes/myprobe/enable 0 || return 1
	w events/kprobes/myprobe/enable 1 || return 1
	cat "$MNT/kprobe_profile" >"$WORK/got.profile"
	check seed_filp.profile "$WORK/got.profile" || return 1
	# dynamic_events deletes with '!:' too
	w events/kprobes/myprobe/enable 0
	a dynamic_events '!:kprobes/myprobe' || return 1
	[ ! -s "$MNT/dynamic_events" ] ||
		{ echo "  '!:' did not delete" >>"$WORK/why"; return 1; }
	stop_mount
}

# Seed 004: event1 on vfs_read with default names, set_event, head trace.
case_seed_vfs_read() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:event1 vfs_read %ax $stack0'
	{
		cat "$MNT/kprobe_events"
		(cd "$MNT" && find events/kprobes/ | LC_ALL=C sort)
		cat "$MNT/events/kprobes/event1/id"
	} >"$WORK/got.events"
	check seed_vfs_read.events "$WORK/got.events" || return 1
	"$DPROBE" format -x "$FSRV" 'p:event1 vfs_read %ax $stack0' >"$WORK/want.format"
	# shellcheck disable=SC2002
	cat "$MNT/events/kprobes/event1/format" | cmp -s "$WORK/want.format" - ||
		{ echo "  format differs from dprobe format" >>"$WORK/why"; return 1; }
	w set_event kprobes:event1
	req "$R" "read /etc/hostname" || return 1
	{
		cat "$MNT/set_event"
		head -n 14 "$MNT/trace" | norm_vals
	} >"$WORK/got.trace"
	check seed_vfs_read.trace "$WORK/got.trace" || return 1
	# enabled: neither '>' nor '-:' may remove it
	expect_fail "busy" w kprobe_events '' || return 1
	expect_fail "busy" a kprobe_events '-:kprobes/event1' || return 1
	a set_event '!kprobes:event1'
	a kprobe_events '-:kprobes/event1' || return 1
	[ ! -s "$MNT/kprobe_events" ] ||
		{ echo "  event1 not deleted" >>"$WORK/why"; return 1; }
	quit_server "$R"
	stop_mount
}

# Rejected definitions: errno, and error_log as `dprobe check` prints it.
case_bad_defs() {
	R=$WORK/req
	start_mount "$R" || return 1
	: >"$WORK/want.log"
	for def in 'p:bad do_sys_open %foo' 'p:bad nosuchfunction' \
		   'r:bad do_sys_open+4' 'p:bad do_sys_open x=+0(%si):strin' \
		   'p:9bad do_sys_open'; do
		expect_fail "Invalid argument" a kprobe_events "$def" || return 1
		# the kernel's three lines: without dprobe's "  (...)" context
		"$DPROBE" check -x "$FSRV" "$def" 2>&1 | grep -v '^  (' >>"$WORK/want.log"
	done
	grep -q '^\[ *[0-9]*\.[0-9]\{6\}\] trace_kprobe: error: ' "$MNT/error_log" ||
		{ echo "  error_log entries lack the kernel's timestamp" >>"$WORK/why"; return 1; }
	nolog_ts <"$MNT/error_log" >"$WORK/got.log"
	cmp -s "$WORK/want.log" "$WORK/got.log" || {
		echo "  error_log differs from dprobe check:" >>"$WORK/why"
		diff -u "$WORK/want.log" "$WORK/got.log" | sed 's/^/    /' >>"$WORK/why"
		return 1
	}
	check bad_defs.log "$WORK/got.log" || return 1
	# the kernel's errnos without an entry: ENOENT, EEXIST
	expect_fail "No such file" a kprobe_events '-:nosuchevent' || return 1
	w kprobe_events 'p:dup do_sys_open'
	expect_fail "File exists" a kprobe_events 'p:dup do_sys_open' || return 1
	# a uprobe place is not kprobe_events' business
	expect_fail "Invalid argument" a kprobe_events "p:up $FSRV:$(func_off vfs_read)" || return 1
	echo >"$MNT/error_log"
	tail -n 3 "$MNT/error_log" >"$WORK/got.log2"
	check bad_defs.log2 "$WORK/got.log2" || return 1
	quit_server "$R"
	stop_mount
}

# Filters: event and group files, a bad filter's file text and log entry.
case_filters() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open dfd=%di:s32 path=+0(%si):string'
	a kprobe_events 'r:opret do_sys_open ret=$retval:s32'
	w events/kprobes/op/filter 'path ~ "*passwd"'
	w events/kprobes/enable 1
	req "$R" "open /etc/passwd" && req "$R" "open /etc/hostname" || return 1
	expect_fail "Invalid argument" w events/kprobes/op/filter 'nofield == 1' || return 1
	{
		trace_body | norm
		cat "$MNT/events/kprobes/op/filter"
		cat "$MNT/events/kprobes/filter"
		nolog_ts <"$MNT/error_log"
		cat "$MNT/events/kprobes/enable" "$MNT/events/enable"
		w events/kprobes/opret/enable 0
		cat "$MNT/events/kprobes/enable" "$MNT/events/enable"
	} >"$WORK/got.filter"
	check filters.out "$WORK/got.filter" || return 1
	expect_fail "Invalid argument" w events/kprobes/op/enable 2 || return 1
	expect_fail "Invalid argument" w events/kprobes/enable X || return 1
	quit_server "$R"
	stop_mount
}

# trace_pipe: a blocking, consuming read that a signal ends.
case_trace_pipe() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open path=+0(%si):string'
	w events/kprobes/op/enable 1
	_t0=$(date +%s)
	timeout 1 cat "$MNT/trace_pipe" >"$WORK/pipe0"
	_rc=$?
	[ "$_rc" = 124 ] && [ "$(($(date +%s) - _t0))" -lt 4 ] ||
		{ echo "  an empty trace_pipe did not block then end on a signal (rc $_rc)" >>"$WORK/why"; return 1; }
	timeout 5 cat "$MNT/trace_pipe" >"$WORK/pipe1" &
	_cat=$!
	# other requests are served while a reader waits
	cat "$MNT/kprobe_events" >/dev/null || return 1
	req "$R" "open /etc/passwd" && req "$R" "open /etc/hostname" || return 1
	sleep 0.5
	kill "$_cat" 2>/dev/null
	wait "$_cat" 2>/dev/null
	{
		norm <"$WORK/pipe1"
		echo "-- trace after the consuming read:"
		norm <"$MNT/trace" | grep -v '^#  '
	} >"$WORK/got.pipe"
	check trace_pipe.out "$WORK/got.pipe" || return 1
	# O_NONBLOCK on an empty buffer: EAGAIN at once
	expect_fail "Resource temporarily unavailable" \
		timeout 3 dd if="$MNT/trace_pipe" iflag=nonblock status=none || return 1
	quit_server "$R"
	stop_mount
}

# Many trace_pipe readers blocked at once: other requests and the
# readers' own interrupts are still served (libfuse's default of 10 worker
# threads hung the mount).  Then threads pread()ing one handle of a file:
# each gets the file's bytes (they raced on the handle's snapshot).
case_readers() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open'
	_rd=
	for _i in $(seq 1 12); do
		timeout 20 cat "$MNT/trace_pipe" >/dev/null 2>&1 &
		_rd="$_rd $!"
	done
	sleep 1
	timeout 5 cat "$MNT/kprobe_events" >/dev/null ||
		{ echo "  12 trace_pipe readers hung other requests" >>"$WORK/why"; return 1; }
	# shellcheck disable=SC2086
	kill $_rd 2>/dev/null
	_t0=$(date +%s)
	# shellcheck disable=SC2086
	wait $_rd 2>/dev/null
	[ "$(($(date +%s) - _t0))" -lt 5 ] ||
		{ echo "  blocked trace_pipe readers did not end on a signal" >>"$WORK/why"; return 1; }
	if command -v python3 >/dev/null 2>&1; then
		python3 - "$MNT/README" <<'PY' 2>>"$WORK/why" ||
import os, sys, threading
fd = os.open(sys.argv[1], os.O_RDONLY)
want = os.pread(fd, 1 << 16, 0)
bad = []
def run():
    for i in range(1500):
        off = i & 1
        if os.pread(fd, 1 << 16, off) != want[off:]:
            bad.append(i)
            return
t = [threading.Thread(target=run) for _ in range(4)]
for x in t: x.start()
for x in t: x.join()
sys.exit(1 if bad else 0)
PY
		{ echo "  concurrent preads of one handle gave wrong bytes" >>"$WORK/why"; return 1; }
	fi
	quit_server "$R"
	stop_mount
}

# uprobe_events with PATH:OFFSET, group enable, uprobe_profile.
case_uprobes() {
	R=$WORK/req
	start_mount "$R" || return 1
	off=$(func_off vfs_read)
	w uprobe_events "p:vr $FSRV:$off fd=%di:s32 count=%dx:u64"
	a uprobe_events "r:vrr $FSRV:$off ret=\$retval:s64"
	w kprobe_events 'p:op do_sys_open'
	w events/uprobes/enable 1
	req "$R" "read /etc/hostname" || return 1
	{
		cat "$MNT/uprobe_events"
		echo "-- dynamic_events:"
		cat "$MNT/dynamic_events"
		echo "-- available_events:"
		# the kernel's syscall events are there too, when it has them
		grep -v '^syscalls:' "$MNT/available_events"
		trace_body | norm_vals
		cat "$MNT/uprobe_profile"
	} | norm >"$WORK/got.up"
	check uprobes.out "$WORK/got.up" || return 1
	grep -qx 'vfs_read' "$MNT/available_filter_functions" &&
		grep -q '^malloc \[libc.so.6\]$' "$MNT/available_filter_functions" ||
		{ echo "  available_filter_functions lacks vfs_read or malloc [libc.so.6]" >>"$WORK/why"; return 1; }
	# '>' on uprobe_events while one is enabled: EBUSY; dynamic_events too
	expect_fail "busy" w uprobe_events '' || return 1
	w events/uprobes/enable 0
	echo >"$MNT/uprobe_events" || return 1
	norm <"$MNT/dynamic_events" >"$WORK/got.dyn"
	check uprobes.dyn "$WORK/got.dyn" || return 1
	quit_server "$R"
	stop_mount
}

# set_event: '>' replaces, '>>' adds, '!' removes, GROUP:* and bare names.
case_set_event() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:a do_sys_open'
	a kprobe_events 'p:b vfs_read'
	a kprobe_events 'p:grp/c do_filp_open'
	{
		w set_event 'kprobes:*'; echo "1:"; cat "$MNT/set_event"
		a set_event 'grp:c'; echo "2:"; cat "$MNT/set_event"
		a set_event '!kprobes:a'; echo "3:"; cat "$MNT/set_event"
		w set_event 'c'; echo "4:"; cat "$MNT/set_event"
		cat "$MNT/events/grp/c/enable" "$MNT/events/kprobes/a/enable"
	} >"$WORK/got.set"
	expect_fail "Invalid argument" a set_event 'kprobes:a*' || return 1
	expect_fail "Invalid argument" a set_event 'nosuch:event' || return 1
	check set_event.out "$WORK/got.set" || return 1
	w tracing_on 0
	req "$R" "open /etc/passwd" || return 1
	[ -z "$(trace_body)" ] || { echo "  recorded with tracing_on 0" >>"$WORK/why"; return 1; }
	w tracing_on 1
	w events/kprobes/b/trigger traceoff
	w events/kprobes/b/enable 1
	req "$R" "read /etc/hostname" || return 1
	{
		cat "$MNT/tracing_on" "$MNT/events/kprobes/b/trigger"
		trace_body | norm_vals
		cat "$MNT/buffer_size_kb"
	} >"$WORK/got.trig"
	check set_event.trig "$WORK/got.trig" || return 1
	# the kernel's errors: EINVAL, an error_log entry for a bad filter
	expect_fail "Invalid argument" a events/kprobes/b/trigger 'stacktrace:foo' || return 1
	expect_fail "Invalid argument" a events/kprobes/b/trigger 'traceon:unlimited' || return 1
	expect_fail "Invalid argument" a events/kprobes/b/trigger 'nosuch' || return 1
	expect_fail "Invalid argument" a events/kprobes/b/trigger 'traceon if nosuch == 1' || return 1
	expect_fail "File exists" a events/kprobes/b/trigger 'traceon' || return 1
	nolog_ts <"$MNT/error_log" >"$WORK/got.tlog"
	check set_event.log "$WORK/got.tlog" || return 1
	# a trigger makes its event busy, as in the kernel
	w events/kprobes/b/enable 0
	expect_fail "busy" a kprobe_events '-:kprobes/b' || return 1
	quit_server "$R"
	stop_mount
}

# A server of our own on the FIFO $R (for -p): $srv, killed at the end.
start_server() {
	R=$WORK/req2
	mkfifo "$R"
	"$FSRV" "$R" >>"$WORK/out" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	srv=$!
	echo "$srv" >"$WORK/srv.pid"
	sleep 0.2
}

# -p PID: attach to a running server; Ctrl-C detaches, unmounts and the
# server runs on with its code restored.
case_pid_attach() {
	start_server
	start_mount "$R" -p "$srv" || return 1
	w kprobe_events 'p:op do_sys_open path=+0(%si):string'
	w events/kprobes/op/enable 1
	req "$R" "open /etc/passwd" || return 1
	trace_body | norm >"$WORK/got.pid"
	check pid_attach.trace "$WORK/got.pid" || return 1
	stop_mount INT || return 1
	addr=$(nm "$FSRV" | awk '$3 == "do_sys_open" { print $1 }')
	off=$(func_off do_sys_open)
	dd if="/proc/$srv/mem" bs=1 skip=$((0x$addr)) count=32 2>/dev/null | od -An -tx1 >"$WORK/mem"
	dd if="$FSRV" bs=1 skip=$((off)) count=32 2>/dev/null | od -An -tx1 >"$WORK/file"
	cmp -s "$WORK/mem" "$WORK/file" ||
		{ echo "  do_sys_open's bytes were not restored" >>"$WORK/why"; return 1; }
	req "$R" "read /etc/hostname" || return 1
	tail -n 1 "$WORK/out" | grep -q '^read /etc/hostname: [0-9]* bytes$' ||
		{ echo "  the server did not answer normally after the detach" >>"$WORK/why"; return 1; }
	quit_server "$R"
	wait "$srv"
}

# SIGKILL to dprobe: the session child still detaches (it is told by
# PR_SET_PDEATHSIG); only the dead mount is left to unmount.
case_killed() {
	start_server
	start_mount "$R" -p "$srv" || return 1
	w kprobe_events 'p:op do_sys_open'
	w events/kprobes/op/enable 1
	kill -KILL "$DP_PID"
	wait "$DP_PID" 2>/dev/null
	fusermount3 -u "$MNT"
	addr=$(nm "$FSRV" | awk '$3 == "do_sys_open" { print $1 }')
	off=$(func_off do_sys_open)
	for _i in $(seq 1 50); do
		dd if="/proc/$srv/mem" bs=1 skip=$((0x$addr)) count=32 2>/dev/null | od -An -tx1 >"$WORK/mem"
		dd if="$FSRV" bs=1 skip=$((off)) count=32 2>/dev/null | od -An -tx1 >"$WORK/file"
		cmp -s "$WORK/mem" "$WORK/file" && break
		sleep 0.1
	done
	cmp -s "$WORK/mem" "$WORK/file" ||
		{ echo "  do_sys_open's bytes were not restored" >>"$WORK/why"; return 1; }
	req "$R" "open /etc/passwd" || return 1
	quit_server "$R"
	wait "$srv"
}

# Events switched while others run (the in-process engine): a return
# probe added on the function an entry probe is live on, then the entry
# probe switched off.  One session child for the whole case (it says
# which engine it runs once, DPROBE_VERBOSE): nothing detached or armed
# again, every request's events there: 1 a; 2 a and b; 3 b.
case_live_switch() {
	R=$WORK/req
	DPROBE_VERBOSE=1 start_mount "$R" || return 1
	w kprobe_events 'p:a do_sys_open'
	w events/kprobes/a/enable 1
	req "$R" "open /etc/passwd" || return 1
	a kprobe_events 'r:b do_sys_open ret=$retval'
	w events/kprobes/b/enable 1
	req "$R" "open /etc/passwd" || return 1
	w events/kprobes/a/enable 0
	req "$R" "open /etc/passwd" || return 1
	{
		trace_body | norm_vals
		cat "$MNT/kprobe_profile"
	} >"$WORK/got.live"
	check live_switch.out "$WORK/got.live" || return 1
	quit_server "$R"
	stop_mount || return 1
	n=$(grep -c '^dprobe: engine ' "$WORK/err")
	grep -q '^dprobe: engine agent' "$WORK/err" ||
		{ echo "  not on the in-process engine" >>"$WORK/why"; return 1; }
	[ "$n" = 1 ] ||
		{ echo "  $n session children: events were armed again" >>"$WORK/why"; return 1; }
}

# A target's application tracepoints are events of the mount from the
# start, as the kernel's are in tracefs: in events/, with the format
# `dprobe format` gives, in no *_events listing, untouched by clearing
# dynamic_events; enabling one records its hits (tracepoint_example
# calls take_order() in a loop, firing shop:order every time).
case_tracepoints() {
	[ -x "$TPEX" ] || { echo "  $TPEX is not built" >>"$WORK/why"; return 1; }
	"$TPEX" 2000000000 >/dev/null &
	tp=$!
	echo "$tp" >"$WORK/srv.pid"
	start_mount "$WORK/req" -p "$tp" || { kill "$tp"; return 1; }
	{
		ls "$MNT/events/shop"
		echo "dynamic_events:"; cat "$MNT/dynamic_events"
		echo "uprobe_events:"; cat "$MNT/uprobe_events"
	} >"$WORK/got.tp"
	w dynamic_events ''
	ls "$MNT/events/shop" >>"$WORK/got.tp"
	check tracepoints.out "$WORK/got.tp" || { kill "$tp"; return 1; }
	# the same bytes as `dprobe format`, but the ID (the order of making)
	"$DPROBE" format -x "$TPEX" shop:order | grep -v '^ID:' >"$WORK/want.format"
	grep -v '^ID:' "$MNT/events/shop/order/format" >"$WORK/got.format"
	cmp -s "$WORK/want.format" "$WORK/got.format" ||
		{ echo "  format differs from dprobe format" >>"$WORK/why"; kill "$tp"; return 1; }
	w events/shop/order/enable 1
	sleep 0.3
	w events/shop/order/enable 0
	grep -q ' order: ' "$MNT/trace" ||
		{ echo "  no shop:order event in trace" >>"$WORK/why"; kill "$tp"; return 1; }
	stop_mount || { kill "$tp"; return 1; }
	kill "$tp"
	wait "$tp" 2>/dev/null
	return 0
}

# The rest of the dynamic-events language, as the kernel's ftrace
# selftests use it: an fprobe pair (entry and exit, $argN named from the
# debug information, in dynamic_events only), synthetic events through
# both files (the kernel's format, busy while enabled, an error_log
# entry), a tracepoint probe reading the tracepoint's arguments by name,
# and the kernel's errors and carets for each kind.
case_dynevents() {
	R=$WORK/req
	start_mount "$R" || return 1
	a dynamic_events 'f:fe do_sys_open $arg2:string' || return 1
	a dynamic_events 'f do_sys_open%return $retval:s32 flags' || return 1
	a dynamic_events 's:lat u64 lat; pid_t pid; char comm[16]' || return 1
	a synthetic_events 'opened char[] path; int fd' || return 1
	{
		echo "dynamic_events:"; cat "$MNT/dynamic_events"
		echo "kprobe_events:"; cat "$MNT/kprobe_events"
		echo "synthetic_events:"; cat "$MNT/synthetic_events"
		(cd "$MNT" && find events/fprobes events/synthetic | LC_ALL=C sort)
		grep -v '^ID:' "$MNT/events/synthetic/lat/format"
		grep -v '^ID:' "$MNT/events/fprobes/do_sys_open__exit/format"
	} >"$WORK/got.defs"
	w events/fprobes/enable 1
	req "$R" "open /etc/hostname" || return 1
	w events/fprobes/enable 0
	grep ' fe: \| do_sys_open__exit: ' "$MNT/trace" | norm_vals >"$WORK/got.hits"
	cat "$WORK/got.hits" >>"$WORK/got.defs"
	# busy while enabled; deleted as written, with '!'
	w events/synthetic/lat/enable 1
	expect_fail "Device or resource busy" a synthetic_events '!lat' || return 1
	w events/synthetic/lat/enable 0
	a synthetic_events '!lat' || return 1
	a dynamic_events '!f:fe do_sys_open' || return 1
	a dynamic_events '-:synthetic/opened' || return 1
	echo "after deletes:" >>"$WORK/got.defs"
	cat "$MNT/dynamic_events" >>"$WORK/got.defs"
	echo >"$MNT/error_log"
	for def in 'f do_sys_open %ax' 'f10 do_sys_open' 'f do_sys_open%ret' \
		   'f do_sys_open $arg9' 't do_sys_open $retval' \
		   's:synthetic/x u64' 's:x u65 a'; do
		# a parameter the function does not have: the kernel's BTF
		# parser's ENOENT
		_e="Invalid argument"
		[ "$def" = 'f do_sys_open $arg9' ] && _e="No such file"
		expect_fail "$_e" a dynamic_events "$def" || return 1
	done
	# an fprobe has no offset: the kernel finds no such function
	expect_fail "No such file" a dynamic_events 'f do_sys_open+4' ||
		return 1
	nolog_ts <"$MNT/error_log" >>"$WORK/got.defs"
	check dynevents.out "$WORK/got.defs" || return 1
	quit_server "$R"
	stop_mount || return 1
	case_dynevents_tp
}

# An exec in the served process: definitions are checked against the
# program it runs now (the shell has no do_sys_open, the fileserver it
# becomes has), and its events are traced.
case_exec() {
	R=$WORK/req
	start_mount "$R" -- sh -c "until [ -e '$WORK/go' ]; do sleep 0.05; done
		exec '$FSRV' '$R'" || return 1
	expect_fail "Invalid argument" a kprobe_events 'p:op do_sys_open' ||
		return 1
	: >"$WORK/go"
	for _i in $(seq 1 100); do
		grep -q 'fileserver [0-9]* ready' "$WORK/out" && break
		sleep 0.05
	done
	a kprobe_events 'p:op do_sys_open dfd=%di:s32' || return 1
	w events/kprobes/op/enable 1
	req "$R" "open /etc/hostname" || return 1
	grep -q ' op: (do_sys_open+0x0/0x[0-9a-f]*) dfd=-100$' "$MNT/trace" ||
		{ echo "  no op event after the exec" >>"$WORK/why"; return 1; }
	quit_server "$R"
	stop_mount
}

# Event probes and the kernel's syscall events (the kernel lane): formats
# as the kernel's, an eprobe on a syscall reading the path the process
# passed, one on a kprobe event (both attached events armed for them
# only: none of their own lines), the syscall events' own lines as the
# kernel prints them, the attached event busy, errors in error_log.
case_eprobes() {
	R=$WORK/req
	start_mount "$R" || return 1
	if [ ! -d "$MNT/events/syscalls/sys_enter_openat" ]; then
		echo "no syscalls/ events in the mount (the kernel's tracefs:" \
			"$(grep 'syscalls' "$WORK/err" | head -n 1))" >"$WORK/skip"
		quit_server "$R"
		stop_mount
		return 1
	fi
	for e in sys_enter_openat sys_exit_openat; do
		k=/sys/kernel/tracing/events/syscalls/$e/format
		[ -r "$k" ] || continue
		grep -v '^ID:' "$k" >"$WORK/k.format"
		grep -v '^ID:' "$MNT/events/syscalls/$e/format" >"$WORK/m.format"
		cmp -s "$WORK/k.format" "$WORK/m.format" || {
			echo "  $e/format is not the kernel's:" >>"$WORK/why"
			diff "$WORK/k.format" "$WORK/m.format" >>"$WORK/why"
			return 1
		}
	done
	a dynamic_events 'e:opens syscalls/sys_enter_openat file=+0($filename):ustring flags=$flags:x32' || return 1
	a kprobe_events 'p:op do_sys_open dfd=%di:s32 flags=%dx:x32' || return 1
	a dynamic_events 'e:g/onop kprobes.op d=$dfd f=$flags c=$comm:string if dfd < 0' || return 1
	{
		cat "$MNT/dynamic_events"
		grep -v '^ID:' "$MNT/events/eprobes/opens/format"
		grep -c 'e\[:\[<group>/\]\[<event>\]\] <attached-group>.<attached-event> \[<args>\] \[if <filter>\]' "$MNT/README"
	} >"$WORK/got.ep"
	# the process's own probes first: the agent's openat calls when it
	# is loaded are the process's too, and would be seen
	w events/g/onop/enable 1
	w events/eprobes/opens/enable 1
	req "$R" "open /etc/hostname" || return 1
	w events/eprobes/opens/enable 0
	w events/g/onop/enable 0
	# two children write the buffer: each one's lines in its order (a
	# blocked open of the request fifo that a ptrace attach interrupted
	# is restarted: the same line again)
	for e in op onop opens sys_openat; do
		grep " $e[:(]" "$MNT/trace" | norm_vals |
			sed "s|$WORK|WORK|g" | uniq >>"$WORK/got.ep"
	done
	echo >"$MNT/trace"
	w events/syscalls/sys_enter_openat/enable 1
	w events/syscalls/sys_exit_openat/enable 1
	req "$R" "open /etc/hostname" || return 1
	w events/syscalls/sys_enter_openat/enable 0
	w events/syscalls/sys_exit_openat/enable 0
	grep ' sys_openat' "$MNT/trace" | norm |
		sed -e 's/filename: [0-9a-f]*/filename: ADDR/' \
		    -e 's/-> 0x[0-9a-f]*/-> 0xFD/' >>"$WORK/got.ep"
	# the kprobe event is busy while an event probe is on it
	expect_fail "Device or resource busy" a kprobe_events '-:kprobes/op' || return 1
	echo >"$MNT/error_log"
	expect_fail "Invalid argument" a dynamic_events 'e:x syscalls/sys_enter_openat a=$nofield' || return 1
	expect_fail "No such device" a dynamic_events 'e:x syscalls/sys_enter_nosuch' || return 1
	# an eprobe is dynamic_events' only: elsewhere no error_log entry
	expect_fail "Invalid argument" a kprobe_events 'e:x syscalls/sys_enter_openat' || return 1
	# %pd reads a struct dentry the fileserver's debug information lacks
	expect_fail "Invalid argument" a kprobe_events 'p:v do_sys_open n=$arg2:%pd' || return 1
	nolog_ts <"$MNT/error_log" >>"$WORK/got.ep"
	a dynamic_events '-:opens syscalls/sys_enter_openat' || return 1
	a dynamic_events '-:g/onop' || return 1
	a kprobe_events '-:kprobes/op' || return 1
	echo "after deletes: $(wc -l <"$MNT/dynamic_events")" >>"$WORK/got.ep"
	check "${EP_EXPECT:-eprobes.out}" "$WORK/got.ep" || return 1
	quit_server "$R"
	stop_mount
}

# The same session with events/syscalls/ served from the fileserver's
# syscall stops (the ptrace engine), as without root or the kernel's
# tracefs: the same formats (made from dprobe's table of system calls,
# checked against the kernel's), the same lines, and one more
# sys_enter_openat each time the events change: the ptrace engine is
# attached anew and interrupts the open of the request fifo the
# fileserver waits in, which the kernel then restarts (strace shows the
# same).
case_eprobes_ptrace() {
	MOUNT_OPTS="--syscalls ptrace"
	EP_EXPECT=eprobes_ptrace.out
	case_eprobes
	_rc=$?
	MOUNT_OPTS=
	EP_EXPECT=
	return $_rc
}

# Hist triggers: one on an event that is not enabled (soft: "0*", no
# Trigger commands: an enable_event with a count on an enabled event puts
# a disabled one in soft mode ("0*") and turns it on at the first hit
# ("1*"); a filtered stacktrace after its event's line; a counted
# traceoff after its own line (6.12's post trigger); the listing with the
# counts left; the kernel's errors; trace_marker's lines, the snapshot
# buffer swapped in, and trace_marker refused while tracing is off.
case_triggers() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open'
	a kprobe_events 'p:rd vfs_read'
	w events/kprobes/op/trigger 'enable_event:kprobes:rd:1' || return 1
	a events/kprobes/op/trigger 'stacktrace if common_pid > 0' || return 1
	a events/kprobes/rd/trigger 'traceoff:1 if common_pid > 0' || return 1
	expect_fail "File exists" a events/kprobes/op/trigger 'disable_event:kprobes:rd' || return 1
	expect_fail "Invalid argument" a events/kprobes/op/trigger 'enable_event:kprobes:nosuch' || return 1
	expect_fail "Invalid argument" a events/kprobes/op/trigger 'snapshot:x' || return 1
	expect_fail "busy" a kprobe_events '-:kprobes/rd' || return 1
	{
		echo "before:"
		cat "$MNT/events/kprobes/op/trigger" "$MNT/events/kprobes/rd/trigger"
		cat "$MNT/events/kprobes/op/enable" "$MNT/events/kprobes/rd/enable"
	} >"$WORK/got.trg"
	w events/kprobes/op/enable 1
	req "$R" "read /etc/hostname" || return 1
	{
		echo "after:"
		cat "$MNT/tracing_on"
		cat "$MNT/events/kprobes/op/trigger" "$MNT/events/kprobes/rd/trigger"
		cat "$MNT/events/kprobes/op/enable" "$MNT/events/kprobes/rd/enable"
		trace_body | norm_vals
	} >>"$WORK/got.trg"
	# gone: the triggers and soft mode; rd stays enabled (its soft bit)
	a events/kprobes/op/trigger '!enable_event:kprobes:rd:count=0' || return 1
	a events/kprobes/op/trigger '!stacktrace' || return 1
	a events/kprobes/rd/trigger '!traceoff' || return 1
	w events/kprobes/op/enable 0
	{
		echo "removed:"
		cat "$MNT/events/kprobes/op/enable" "$MNT/events/kprobes/rd/enable"
		cat "$MNT/events/kprobes/op/trigger"
	} >>"$WORK/got.trg"
	w events/kprobes/rd/enable 0
	# trace_marker, the snapshot
	w tracing_on 1
	w trace ''
	w trace_marker 'hello' || return 1
	w snapshot 1 || return 1
	w trace_marker 'world' || return 1
	{
		echo "marker:"
		sed 1d "$MNT/events/ftrace/print/format"
		norm <"$MNT/trace"
		norm <"$MNT/snapshot"
		w snapshot 0
		norm <"$MNT/snapshot"
	} >>"$WORK/got.trg"
	w tracing_on 0
	expect_fail "Bad file descriptor" w trace_marker 'off' || return 1
	w tracing_on 1
	check triggers.out "$WORK/got.trg" || return 1
	quit_server "$R"
	stop_mount
}

# trace line, every open counted), a second one on it and a paused one
# on the enabled return probe (its lines in the trace, counted only once
# continued), cleared; the hist files; the kernel's errors; the event busy
# until its triggers are gone, `>trigger` removing them all.
case_hist() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open dfd=%di:s32 path=+0(%si):string' || return 1
	a kprobe_events 'r:opret do_sys_open ret=$retval:s32' || return 1
	w events/kprobes/op/trigger 'hist:keys=path:vals=hitcount:sort=path' || return 1
	a events/kprobes/op/trigger 'hist:keys=dfd.hex:vals=hitcount.percent' || return 1
	a events/kprobes/opret/trigger 'hist:keys=ret.log2:pause' || return 1
	w events/kprobes/opret/enable 1 || return 1
	req "$R" "open /etc/passwd" && req "$R" "open /etc/hostname" || return 1
	a events/kprobes/opret/trigger 'hist:keys=ret.log2:cont' || return 1
	req "$R" "open /etc/passwd" && req "$R" "open /nonexistent" || return 1
	{
		cat "$MNT/events/kprobes/op/enable" "$MNT/events/kprobes/opret/enable"
		cat "$MNT/events/kprobes/op/trigger" "$MNT/events/kprobes/opret/trigger"
		sed "s|$WORK|WORK|" "$MNT/events/kprobes/op/hist"
		cat "$MNT/events/kprobes/opret/hist"
		trace_body | norm | sed 's/ret=-\{0,1\}[0-9]*/ret=FD/'
	} >"$WORK/got.hist"
	a events/kprobes/op/trigger 'hist:keys=path:vals=hitcount:sort=path:clear' || return 1
	grep Hits: "$MNT/events/kprobes/op/hist" >>"$WORK/got.hist"
	echo >"$MNT/error_log"
	expect_fail "Invalid argument" a events/kprobes/op/trigger 'hist:keys=nosuch' || return 1
	expect_fail "File exists" a events/kprobes/op/trigger 'hist:keys=path:sort=path' || return 1
	expect_fail "No such file or directory" a events/kprobes/op/trigger 'hist:keys=dfd:cont' || return 1
	expect_fail "Device or resource busy" a kprobe_events '-:op' || return 1
	a events/kprobes/op/trigger '!hist:keys=path:vals=hitcount:sort=path' || return 1
	# removing one that is not there: nothing, and no error (6.12)
	a events/kprobes/op/trigger '!hist:keys=path:sort=path' || return 1
	{
		nolog_ts <"$MNT/error_log"
		cat "$MNT/events/kprobes/op/trigger"
		w events/kprobes/op/trigger ''
		w events/kprobes/opret/enable 0
		w events/kprobes/opret/trigger ''
		cat "$MNT/events/kprobes/op/enable" "$MNT/events/kprobes/opret/enable"
		grep -c . "$MNT/events/kprobes/op/hist"
	} >>"$WORK/got.hist"
	a kprobe_events '-:op' || return 1
	check hist.out "$WORK/got.hist" || return 1
	quit_server "$R"
	stop_mount
}

# Variables, a reference matched on the key, onmatch() into a synthetic
# event that fires (its trace lines, its own hist trigger, its filter),
# onmax().save(), name= shared by two events' triggers, and what is busy:
# a trigger whose variable is read, the synthetic event generated.  PIDs,
# latencies and fds vary: only their shape is kept.
case_hist_vars() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open dfd=%di:s32 path=+0(%si):string' || return 1
	a kprobe_events 'r:opret do_sys_open ret=$retval:s32' || return 1
	w synthetic_events 'oplat int pid; u64 lat; s32 ret' || return 1
	w events/kprobes/op/trigger 'hist:keys=common_pid:ts0=common_timestamp.usecs' || return 1
	w events/kprobes/opret/trigger 'hist:keys=common_pid:lat=common_timestamp.usecs-$ts0:onmatch(kprobes.op).trace(oplat,common_pid,$lat,ret):onmax($lat).save(ret)' || return 1
	a events/kprobes/op/trigger 'hist:name=opens:keys=common_pid' || return 1
	a events/kprobes/opret/trigger 'hist:name=opens:keys=common_pid' || return 1
	w events/synthetic/oplat/trigger 'hist:keys=pid:vals=hitcount,lat:sort=pid' || return 1
	w events/synthetic/oplat/filter 'ret >= 0' || return 1
	w events/synthetic/oplat/enable 1 || return 1
	req "$R" "open /etc/passwd" && req "$R" "open /etc/hostname" || return 1
	req "$R" "open /nonexistent" || return 1
	{
		cat "$MNT/events/kprobes/op/trigger" "$MNT/events/kprobes/opret/trigger"
		cat "$MNT/events/synthetic/oplat/enable"
		for e in kprobes/op kprobes/opret synthetic/oplat; do
			sed -e 's/common_pid: *[0-9][0-9]*/common_pid: PID/' \
			    -e 's/pid: *[0-9]* }/pid: PID }/' \
			    -e 's/lat: *[0-9]*$/lat: N/' \
			    -e 's/max: *[0-9]*  ret: *[0-9]*/max: N  ret: FD/' \
				"$MNT/events/$e/hist"
		done
		trace_body | norm | sed -e 's/pid=[0-9]* lat=[0-9]* ret=[0-9]*/pid=PID lat=N ret=FD/'
	} >"$WORK/got.hist_vars"
	echo >"$MNT/error_log"
	expect_fail "Invalid argument" a events/kprobes/opret/trigger 'hist:keys=common_pid:x=$nosuch' || return 1
	expect_fail "Invalid argument" a events/kprobes/opret/trigger 'hist:keys=common_pid:y=common_timestamp-$ts0' || return 1
	expect_fail "Invalid argument" a events/kprobes/opret/trigger 'hist:keys=common_pid:onmatch(kprobes.op).trace(nosynth,$ts0)' || return 1
	expect_fail "Invalid argument" a events/kprobes/opret/trigger 'hist:keys=common_pid:onmatch(kprobes.op).oplat(common_pid)' || return 1
	expect_fail "Invalid argument" a events/kprobes/op/trigger 'hist:name=opens:keys=path' || return 1
	expect_fail "Device or resource busy" a events/kprobes/op/trigger '!hist:keys=common_pid:ts0=common_timestamp.usecs' || return 1
	expect_fail "Device or resource busy" a synthetic_events '!oplat' || return 1
	{
		nolog_ts <"$MNT/error_log"
		a events/kprobes/opret/trigger '!hist:keys=common_pid:lat=common_timestamp.usecs-$ts0:onmatch(kprobes.op).trace(oplat,common_pid,$lat,ret):onmax($lat).save(ret)'
		a events/kprobes/op/trigger '!hist:keys=common_pid:ts0=common_timestamp.usecs'
		cat "$MNT/events/kprobes/op/trigger" "$MNT/events/kprobes/opret/trigger"
	} >>"$WORK/got.hist_vars"
	w events/synthetic/oplat/enable 0 || return 1
	w events/synthetic/oplat/trigger '' || return 1
	w events/kprobes/op/trigger '' || return 1
	w events/kprobes/opret/trigger '' || return 1
	a synthetic_events '!oplat' || return 1
	check hist_vars.out "$WORK/got.hist_vars" || return 1
	quit_server "$R"
	stop_mount
}

# has FILE PATTERN WHAT: FILE (in the mount) has a line matching PATTERN.
has() {
	grep -q -- "$2" "$MNT/$1" && return 0
	echo "  $1: no $3:" >>"$WORK/why"
	sed 's/^/    /' "$MNT/$1" | head -n 30 >>"$WORK/why"
	return 1
}

# The user stack in the mount: a common_stacktrace key (the event's
# records carry it: do_sys_open's callers, one frame a line, "}" alone
# before the hitcount), the stacktrace trigger's <stack trace> entry of
# those frames, onmax().snapshot() (the buffer swapped into the
# snapshot, the hist file's details, a second one EBUSY), and a stack
# variable traced into a synthetic 'unsigned long[]' field (its lines as
# print_synth_event()'s; the synthetic event deleted once the trigger
# that generated it is cleared by `>`).
case_hist_stacks() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open dfd=%di:s32 path=+0(%si):string' || return 1
	a kprobe_events 'r:opret do_sys_open ret=$retval:s32' || return 1
	w events/kprobes/op/trigger 'hist:keys=common_stacktrace' || return 1
	a events/kprobes/op/trigger 'hist:keys=common_pid:x=dfd:onmax($x).snapshot()' || return 1
	expect_fail "Device or resource busy" a events/kprobes/op/trigger 'hist:keys=path:y=dfd:onchange($y).snapshot()' || return 1
	a events/kprobes/op/trigger 'stacktrace' || return 1
	# a stack variable into a synthetic 'unsigned long[]' field (the
	# kernel's trigger-synthetic-event-stack test, on do_sys_open)
	w synthetic_events 'opstk s32 ret; unsigned long[] stack' || return 1
	a events/kprobes/op/trigger 'hist:keys=common_pid:st=common_stacktrace  if dfd < 0' || return 1
	w events/kprobes/opret/trigger 'hist:keys=common_pid:s=$st:onmatch(kprobes.op).trace(opstk,ret,$s)' || return 1
	w events/synthetic/opstk/enable 1 || return 1
	w events/kprobes/op/enable 1 || return 1
	w trace_marker 'before' || return 1
	req "$R" "open /etc/passwd" && req "$R" "open /etc/hostname" || return 1
	has events/kprobes/op/hist '^{ common_stacktrace:$' "stack key" || return 1
	has events/kprobes/op/hist '^         do_sys_open+0x0/0x[0-9a-f]*$' "innermost frame" || return 1
	has events/kprobes/op/hist '^         main+0x[0-9a-f]*/0x[0-9a-f]*$' "caller frame" || return 1
	has events/kprobes/op/hist '^} hitcount: *2$' "stack entry" || return 1
	has events/kprobes/op/hist '^Snapshot taken (see tracing/snapshot).  Details:$' "snapshot details" || return 1
	has events/kprobes/op/hist '	triggering value { onmax($x) }: 18446744073709551516	triggered by event with key: { common_pid: *[0-9]* }$' "snapshot value" || return 1
	# the first hit took the snapshot (the second is no new maximum):
	# the marker's line is there; the hits and their <stack trace>
	# entries, the record's user stack, in the buffer
	has snapshot ' tracing_mark_write: before$' "marker line" || return 1
	has trace ' op: (do_sys_open+0x0/0x[0-9a-f]*) dfd=-100 path="/etc/hostname"' "second hit" || return 1
	has trace '^ => do_sys_open$' "stack entry" || return 1
	has trace '^ => serve_open$' "caller in the stack entry" || return 1
	has trace '^ => main$' "main in the stack entry" || return 1
	# print_synth_event()'s stack: "=> %pS" a frame, after no space
	has trace ' opstk: ret=[0-9]* stack=STACK:$' "stack field" || return 1
	has trace '^=> do_sys_open+0x0/0x[0-9a-f]*$' "first frame of the field" || return 1
	has trace '^=> main+0x[0-9a-f]*/0x[0-9a-f]*$' "main in the field" || return 1
	w events/synthetic/opstk/enable 0 || return 1
	w events/kprobes/opret/trigger '' || return 1
	a synthetic_events '!opstk' || return 1
	w events/kprobes/op/enable 0 || return 1
	w events/kprobes/op/trigger '' || return 1
	a events/kprobes/op/trigger '!stacktrace' || return 1
	a kprobe_events '-:op' || return 1
	a kprobe_events '-:opret' || return 1
	quit_server "$R"
	stop_mount
}

# A tracepoint probe by name on tracepoint_example's shop:order.
case_dynevents_tp() {
	[ -x "$TPEX" ] || { echo "  $TPEX is not built" >>"$WORK/why"; return 1; }
	"$TPEX" 2000000000 >/dev/null &
	tp=$!
	echo "$tp" >"$WORK/srv.pid"
	start_mount "$WORK/req" -p "$tp" || { kill "$tp"; return 1; }
	a dynamic_events 't:shopping/ord order item $arg1' ||
		{ kill "$tp"; return 1; }
	cat "$MNT/dynamic_events" >"$WORK/got.tprobe"
	w events/shopping/ord/enable 1
	sleep 0.3
	w events/shopping/ord/enable 0
	grep -m 1 ' ord: ' "$MNT/trace" | norm |
		sed -e 's/id=[0-9]*/id=N/' -e 's/item="[a-z]*"/item="ITEM"/' \
		>>"$WORK/got.tprobe"
	check dynevents.tp "$WORK/got.tprobe" || { kill "$tp"; return 1; }
	stop_mount || { kill "$tp"; return 1; }
	kill "$tp"
	wait "$tp" 2>/dev/null
	return 0
}

# Seed 002 written by name (docs/debuginfo.md): the kernel's BTF-argument
# syntax, translated through fileserver's debug information when the line
# is written; kprobe_events lists the arguments as written, as the kernel
# lists its BTF arguments, the events carry the same values as
# seed_filp's; a name the function does not have gets the
# kernel's error and error_log entry.
case_by_name() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:kprobes/byname do_filp_open dfd pathname->name flags' ||
		{ echo "  the definition by name was refused" >>"$WORK/why"; return 1; }
	cat "$MNT/kprobe_events" >"$WORK/got.events"
	echo 'p:kprobes/byname do_filp_open dfd=dfd arg2=pathname->name flags=flags' >"$WORK/want.events"
	cmp -s "$WORK/want.events" "$WORK/got.events" ||
		{ echo "  kprobe_events: $(cat "$WORK/got.events")" >>"$WORK/why"; return 1; }
	expect_fail "No such file" a kprobe_events 'p:kprobes/bad do_filp_open nosuch' || return 1
	grep -q 'This variable is not found at this probe point' "$MNT/error_log" ||
		{ echo "  error_log: $(cat "$MNT/error_log")" >>"$WORK/why"; return 1; }
	w events/kprobes/byname/enable 1
	req "$R" "open /etc/passwd" && req "$R" "read /etc/hostname" || return 1
	norm_vals <"$MNT/trace" | grep -v '^#' >"$WORK/got.trace"
	printf '%s\n' \
		'      fileserver-PID [CPU] ..... TS: byname: (do_filp_open+OFF/SIZE) dfd=-100 arg2="/etc/passwd" flags=0' \
		'      fileserver-PID [CPU] ..... TS: byname: (do_filp_open+OFF/SIZE) dfd=-100 arg2="/etc/hostname" flags=0' \
		>"$WORK/want.trace"
	diff -u "$WORK/want.trace" "$WORK/got.trace" >>"$WORK/why" || return 1
	quit_server "$R"
	stop_mount umount
}

# Instances: mkdir under instances/ makes one with buffers of its own and
# its own enable, filter and triggers for the top level's events; an
# event enabled in one goes to its buffer alone, a trigger there acts on
# its tracing_on alone; trace_marker and set_event of its own; the
# kernel's errors: EEXIST, ENAMETOOLONG, EPERM outside instances/,
# ENOENT, EBUSY for rmdir while one of its files is open and for deleting
# an event enabled in it; rmdir takes its state with it, and deleting an
# event once enabled in one clears its buffer.
case_instances() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:op do_sys_open path=+0(%si):string' || return 1
	a kprobe_events 'p:rd vfs_read' || return 1
	mkdir "$MNT/instances/foo" "$MNT/instances/bar" ||
		{ echo "  mkdir failed" >>"$WORK/why"; return 1; }
	expect_fail "File exists" mkdir "$MNT/instances/foo" || return 1
	# a name the VFS refuses, as for the kernel's tracefs
	expect_fail "File name too long" mkdir \
		"$MNT/instances/$(printf '%0256d' 0)" || return 1
	expect_fail "Operation not permitted" mkdir "$MNT/events/x" || return 1
	expect_fail "Operation not permitted" rmdir "$MNT/events" || return 1
	expect_fail "No such file" rmdir "$MNT/instances/nosuch" || return 1
	F=instances/foo B=instances/bar
	w events/kprobes/op/enable 1 || return 1
	w $F/events/kprobes/op/enable 1 || return 1
	w $F/events/kprobes/op/filter 'path ~ "*passwd"' || return 1
	w $B/events/kprobes/rd/enable 1 || return 1
	w $B/events/kprobes/op/trigger 'traceoff if path ~ "*hostname"' || return 1
	w $F/trace_marker 'in foo' || return 1
	req "$R" "read /etc/passwd" && req "$R" "open /etc/hostname" &&
		req "$R" "read /etc/passwd" || return 1
	{
		(cd "$MNT" && ls instances $F $F/events/kprobes/op)
		for d in . $F $B; do
			echo "$d:"
			cat "$MNT/$d/tracing_on" "$MNT/$d/set_event"
			cat "$MNT/$d/events/kprobes/op/enable" \
			    "$MNT/$d/events/kprobes/op/filter" \
			    "$MNT/$d/events/kprobes/rd/enable"
			# the first of rd's lines (one a read(2) of the server)
			grep -v '^#' "$MNT/$d/trace" | norm_vals |
				awk '/ rd: / && r++ { next } { print }'
		done
	} >"$WORK/got.inst"
	w events/kprobes/op/enable 0 || return 1
	expect_fail "Device or resource busy" a kprobe_events '-:op' || return 1
	expect_fail "Device or resource busy" a kprobe_events '-:rd' || return 1
	exec 3<"$MNT/$F/trace"
	expect_fail "Device or resource busy" rmdir "$MNT/$F" || return 1
	exec 3<&-
	rmdir "$MNT/$F" "$MNT/$B" || return 1
	a kprobe_events '-:op' || return 1
	a kprobe_events '-:rd' || return 1
	mkdir "$MNT/$F" || return 1
	{
		echo "again:"
		ls "$MNT/$F/events"
		cat "$MNT/$F/tracing_on"
		grep -vc '^#' "$MNT/$F/trace"
	} >>"$WORK/got.inst"
	# deleting an event once enabled in it clears its buffer
	w kprobe_events 'p:op do_sys_open' || return 1
	w $F/events/kprobes/op/enable 1 || return 1
	req "$R" "open /etc/passwd" || return 1
	w $F/events/kprobes/op/enable 0 || return 1
	grep -vc '^#' "$MNT/$F/trace" >>"$WORK/got.inst"
	a kprobe_events '-:op' || return 1
	grep -vc '^#' "$MNT/$F/trace" >>"$WORK/got.inst"
	rmdir "$MNT/$F" || return 1
	check instances.out "$WORK/got.inst" || return 1
	quit_server "$R"
	stop_mount
}

# ---- running -----------------------------------------------------------------

# events/GROUP/EVENT/show: what dprobe show prints for the event's probe,
# asked of the session child while the event is enabled, and "not
# armed" before and after.  The code is the process's own: its first
# instruction and the int3 or jmp that replaced it, what runs instead
# and where it goes back (offsets differ between compilers: normalised).
case_show() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:myprobe do_sys_open'
	cat "$MNT/events/kprobes/myprobe/show" >"$WORK/got.show"
	w events/kprobes/myprobe/enable 1
	req "$R" "open /etc/passwd" || return 1
	cat "$MNT/events/kprobes/myprobe/show" >"$WORK/got.live"
	w events/kprobes/myprobe/enable 0
	cat "$MNT/events/kprobes/myprobe/show" >>"$WORK/got.show"
	quit_server "$R"
	stop_mount umount || return 1
	check show.off "$WORK/got.show" || return 1
	# the header, the strategy's kind, each section once, the way back
	sed -n -e 's/^\(kprobes\/myprobe: do_sys_open+0x0\) (.* engine)$/\1/p' \
	    -e 's/^  strategy: \(optimized\|int3\).*/  strategy: STRATEGY/p' \
	    -e 's/^  \(original\|now\):$/  \1:/p' \
	    -e 's/^  \(detour\|out-of-line slot\) at 0x[0-9a-f]*:$/  AFTER:/p' \
	    -e 's/^  jumps back to do_sys_open+0x[1-9a-f][0-9a-f]*$/  jumps back to do_sys_open+OFF/p' \
	    "$WORK/got.live" >"$WORK/got.live.n"
	check show.live "$WORK/got.live.n"
}

# current_tracer: function_graph and function on the functions
# set_ftrace_filter selects, their lines in the trace (durations and the
# CPU column normalised), back to nop; bad names refused, as are a rule
# that selects nothing and a function tracer in an instance.  The
# tracer's events stay out of kprobe_events.
case_tracer() {
	R=$WORK/req
	start_mount "$R" || return 1
	{
		cat "$MNT/available_tracers" "$MNT/current_tracer"
		echo "-- filter:"
		cat "$MNT/set_ftrace_filter"
	} >"$WORK/got.tr"
	expect_fail "Invalid argument" w set_ftrace_filter 'no_such_fn*' || return 1
	expect_fail "Invalid argument" w current_tracer 'blk' || return 1
	w set_ftrace_filter 'do_sys_open' || return 1
	a set_ftrace_filter 'do_filp_open' || return 1
	cat "$MNT/set_ftrace_filter" >>"$WORK/got.tr"
	w current_tracer function_graph || return 1
	req "$R" "open /etc/passwd" || return 1
	{
		echo "-- function_graph:"
		sed -e 's/^ *[0-9]*) /N) /' \
		    -e 's/^N) [ +!#*@$]*[0-9.]* us *|/N) D |/' "$MNT/trace"
		echo "-- kprobe_events:"
		cat "$MNT/kprobe_events"
	} >>"$WORK/got.tr"
	w current_tracer function || return 1
	req "$R" "open /etc/passwd" || return 1
	{
		echo "-- function:"
		trace_body | norm
	} >>"$WORK/got.tr"
	mkdir "$MNT/instances/fi" || return 1
	expect_fail "Invalid argument" w instances/fi/current_tracer function ||
		return 1
	rmdir "$MNT/instances/fi"
	w current_tracer nop || return 1
	req "$R" "open /etc/passwd" || return 1
	{
		echo "-- nop:"
		cat "$MNT/current_tracer"
		trace_body | norm
	} >>"$WORK/got.tr"
	check tracer.out "$WORK/got.tr" || return 1
	quit_server "$R"
	stop_mount
}

# function_graph's files: set_graph_function and set_graph_notrace in
# set_ftrace_filter's words, max_graph_depth, trace_options and options/,
# their errors; what they change in the lines (duration and CPU columns
# turned off, so that the lines do not depend on the run); a library
# function named in set_graph_function is traced too.
fg_trace() {
	: >"$MNT/trace"
	req "$R" "open /etc/passwd" || return 1
	# its close is done once the next request is answered
	[ -z "${2:-}" ] || req "$R" "open /nonexistent" || return 1
	echo "$1"
	cat "$MNT/trace"
}

case_graph_opts() {
	R=$WORK/req
	start_mount "$R" || return 1
	{
		echo "-- nop:"
		cat "$MNT/trace_options" "$MNT/set_graph_function" \
		    "$MNT/set_graph_notrace" "$MNT/max_graph_depth"
		ls "$MNT/options"
	} >"$WORK/got.go"
	for bad in "w trace_options bogus" "w trace_options nofuncgraph-cpu" \
	    "w options/funcgraph-cpu 2" "w options/stacktrace 1" \
	    "w set_graph_function no_such_fn*" "a set_graph_notrace !serve_open" \
	    "w max_graph_depth -1" "w max_graph_depth x"; do
		# shellcheck disable=SC2086 # words
		expect_fail "Invalid argument" $bad || return 1
	done
	[ ! -e "$MNT/options/bogus" ] || return 1
	# a tracer's option file works while another tracer is current
	w options/funcgraph-cpu 0 || return 1
	w current_tracer function_graph || return 1
	w trace_options nofuncgraph-duration || return 1
	w set_graph_function 'serve_*' || return 1
	a set_graph_function '!serve_read' || return 1
	{
		echo "-- function_graph:"
		cat "$MNT/trace_options" "$MNT/options/funcgraph-cpu" \
		    "$MNT/set_graph_function"
		fg_trace "-- set_graph_function serve_*, !serve_read:" || return 1
		w set_graph_notrace 'do_filp_open:mod:fileserver' || return 1
		cat "$MNT/set_graph_notrace"
		fg_trace "-- set_graph_notrace do_filp_open:" || return 1
		: >"$MNT/set_graph_notrace"
		w max_graph_depth 1 || return 1
		cat "$MNT/max_graph_depth"
		fg_trace "-- max_graph_depth 1:" || return 1
		w max_graph_depth 0 || return 1
		w set_graph_function 'close:mod:libc' || return 1
		cat "$MNT/set_graph_function"
		fg_trace "-- set_graph_function close:mod:libc:" 2 || return 1
		: >"$MNT/set_graph_function"
		cat "$MNT/set_graph_function"
	} >>"$WORK/got.go" || return 1
	w options/print-parent 0 || return 1
	w current_tracer function || return 1
	{
		fg_trace "-- function, noprint-parent:" | norm
		cat "$MNT/trace_options"
	} >>"$WORK/got.go" || return 1
	w current_tracer nop || return 1
	# nooverwrite: a full buffer keeps its first lines (4 of these)
	: >"$MNT/trace"
	w buffer_size_kb 1 || return 1
	a trace_options nooverwrite || return 1
	pad=$(printf '%200s' '' | tr ' ' x)
	for i in 1 2 3 4 5 6; do
		echo "m$i $pad" >"$MNT/trace_marker"
	done
	w options/markers 0 || return 1
	expect_fail "Invalid argument" w trace_marker late || return 1
	mkdir "$MNT/instances/gi" || return 1
	{
		echo "-- nooverwrite: first m1 $(grep -c ': m1 x' "$MNT/trace")," \
			"last m6 $(grep -c ': m6 x' "$MNT/trace")"
		echo "-- instance:"
		cat "$MNT/instances/gi/trace_options"
		ls "$MNT/instances/gi/options"
	} >>"$WORK/got.go"
	rmdir "$MNT/instances/gi"
	check graph_opts.out "$WORK/got.go" || return 1
	quit_server "$R"
	stop_mount
}

# The stack tracer: its files before it runs (the kernel's text on how to
# start it), on over every function (the deepest stack: the open path),
# then on vfs_read alone after stack_max_size went back to 0 (the read
# path); off, the table stays.  Depths and sizes normalised (D S), the
# entries up to main (the C library's above it are not the test's); the
# first entry's depth is stack_max_size, and each size the difference
# of two depths.  Bad filters and numbers refused; its event stays out
# of kprobe_events.
stack_norm() {
	awk '
	/^ *[0-9]+\) / {
		if (done) next
		n = $1; sub(/\)$/, "", n)
		if (sprintf("%3d) %8d   %5d   %s", n, $2, $3, $4) != $0)
			print "BADLINE: " $0
		if (n > 0 && prev - $2 != psize) print "BADSIZE: " $0
		if (n == 0 && $2 != max) print "NOTMAX: " $0
		prev = $2; psize = $3
		loc = $4; sub(/\+0x[0-9a-f]+\/0x[0-9a-f]+$/, "+OFF", loc)
		if ($4 ~ /^[a-z_]+\+0x0\//) loc = $4
		sub(/\/0x[0-9a-f]+$/, "", loc)
		print n ") D S " loc
		if (loc ~ /^main\+/) done = 1
		next
	}
	/entries\)$/ { sub(/\([0-9]+ entries\)/, "(N entries)") }
	{ print }' max="$(cat "$MNT/stack_max_size")" "$MNT/stack_trace"
}
case_stack() {
	R=$WORK/req
	start_mount "$R" || return 1
	{
		for f in stack_tracer_enabled stack_max_size stack_trace_filter \
			stack_trace; do
			echo "-- $f:"
			cat "$MNT/$f"
		done
	} >"$WORK/got.st"
	expect_fail "Invalid argument" w stack_trace_filter 'no_such_fn*' ||
		return 1
	expect_fail "Invalid argument" w stack_max_size 'many' || return 1
	w stack_tracer_enabled 1 || return 1
	req "$R" "open /etc/passwd" || return 1
	{
		echo "-- on, all functions:"
		cat "$MNT/stack_tracer_enabled"
		stack_norm
	} >>"$WORK/got.st"
	w stack_trace_filter 'vfs_read' || return 1
	w stack_max_size 0 || return 1
	req "$R" "read /etc/passwd" || return 1
	{
		echo "-- vfs_read only:"
		cat "$MNT/stack_trace_filter"
		stack_norm
	} >>"$WORK/got.st"
	w stack_tracer_enabled 0 || return 1
	{
		echo "-- off:"
		cat "$MNT/stack_tracer_enabled"
		stack_norm
		echo "-- kprobe_events:"
		cat "$MNT/kprobe_events"
	} >>"$WORK/got.st"
	check stack.out "$WORK/got.st" || return 1
	quit_server "$R"
	stop_mount
}

# set_ftrace_filter's function commands, with no tracer current: their
# errors, the listing after the functions, a stack entry, an
# enable_event putting its event in soft mode, counts running out, `!`
# taking them off (ENODEV for a command on no function, EINVAL for a
# glob naming none of its functions), dump printing the buffer to the
# mount's stderr, consumed, and an instance's commands.
case_fcmds() {
	R=$WORK/req
	start_mount "$R" || return 1
	w kprobe_events 'p:rd vfs_read'
	for bad in do_sys_open:nosuch do_sys_open:traceoff:x \
	    do_sys_open:enable_event:kprobes:nosuch \
	    do_sys_open:enable_event:kprobes no_such_fn:traceon; do
		expect_fail "Invalid argument" a set_ftrace_filter "$bad" ||
			return 1
	done
	expect_fail "Invalid argument" a set_ftrace_notrace 'vfs_read:traceon' ||
		return 1
	expect_fail "No such device" a set_ftrace_filter '!vfs_read:traceon' ||
		return 1
	a set_ftrace_filter 'do_sys_open:stacktrace' || return 1
	a set_ftrace_filter 'do_sys_open:enable_event:kprobes:rd:1' || return 1
	a set_ftrace_filter 'do_filp_open:traceoff:1' || return 1
	a set_ftrace_filter 'vfs_read' || return 1
	expect_fail "Invalid argument" a set_ftrace_filter 'do_sys_open:stacktrace' ||
		return 1
	{
		echo "before:"
		cat "$MNT/set_ftrace_filter" "$MNT/events/kprobes/rd/enable"
	} >"$WORK/got.fc"
	req "$R" "open /etc/passwd" || return 1
	{
		echo "opened:"
		cat "$MNT/tracing_on" "$MNT/events/kprobes/rd/enable"
		trace_body | norm_vals
	} >>"$WORK/got.fc"
	w trace ''
	w tracing_on 1
	req "$R" "read /etc/hostname" || return 1
	req "$R" "open /etc/passwd" || return 1
	{
		echo "counts out:"
		cat "$MNT/tracing_on" "$MNT/set_ftrace_filter"
		trace_body | norm_vals
	} >>"$WORK/got.fc"
	expect_fail "Invalid argument" a set_ftrace_filter '!vfs*:stacktrace' ||
		return 1
	a set_ftrace_filter '!do_*:stacktrace' || return 1
	a set_ftrace_filter '!do_sys_open:enable_event:kprobes:rd:0' || return 1
	a set_ftrace_filter '!*:traceoff:0' || return 1
	w set_ftrace_filter 'do_filp_open:dump' || return 1
	{
		echo "removed:"
		cat "$MNT/set_ftrace_filter" "$MNT/events/kprobes/rd/enable"
	} >>"$WORK/got.fc"
	req "$R" "open /etc/passwd" || return 1
	{
		echo "dumped:"
		cat "$MNT/tracing_on" "$MNT/set_ftrace_filter"
		trace_body | norm_vals
		awk '/^Dumping/ { on = 1 } on { print }
		     on && /^-+$/ && ++n == 2 { exit }' "$WORK/err" | norm_vals
		# the probes are in no file
		grep -c -e fcmd -e '^f[0-9]' "$MNT/available_events"
		if [ -e "$MNT/events/fcmd" ]; then echo 1; else echo 0; fi
		grep -c '^ *f[0-9]' "$MNT/kprobe_profile"
	} >>"$WORK/got.fc"
	# an instance's commands act on it alone
	w tracing_on 1
	mkdir "$MNT/instances/i" || return 1
	w instances/i/set_ftrace_filter 'do_sys_open:traceoff' || return 1
	req "$R" "open /etc/passwd" || return 1
	{
		echo "instance:"
		cat "$MNT/instances/i/set_ftrace_filter" \
		    "$MNT/instances/i/tracing_on" "$MNT/tracing_on"
	} >>"$WORK/got.fc"
	rmdir "$MNT/instances/i" || return 1
	# the stacks' frames below main are the C library's
	sed -i '/=> __libc_start/d' "$WORK/got.fc"
	check fcmds.out "$WORK/got.fc" || return 1
	quit_server "$R"
	stop_mount
}

for c in $CASES; do
	rm -f "$WORK/why" "$WORK/out" "$WORK/err" "$WORK/req"
	: >"$WORK/out"
	mkfifo "$WORK/req"
	if ( "case_$c" ); then
		t_pass "$c"
	elif [ -f "$WORK/skip" ]; then
		t_skip "$c" "$(cat "$WORK/skip")"
		rm -f "$WORK/skip"
	else
		t_fail "$c"
		[ -f "$WORK/why" ] && cat "$WORK/why"
		[ -s "$WORK/err" ] && sed 's/^/  dprobe: /' "$WORK/err"
	fi
	leftovers
done
t_end
