#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dprobe's kernel engine on kernel functions (--kernel), against the kernel
# itself, in one qemu boot of Debian 12's kernel (boot.sh):
#
#   sh tests/qemu/kernel-engine.sh DPROBE
#
# In the guest:
#   1. DPROBE trace --kernel with the seed's two definitions on
#      `cat /etc/hostname`;
#   2. the same definitions written by hand to kprobe_events, enabled for
#      that one process (set_event_pid) while it runs the same command, and
#      the kernel's own `trace` read;
#   3. DPROBE list --kernel 'sched:*' and available_events;
#   4. DPROBE trace --kernel ending on an error (a definition the kernel
#      refuses) and on Ctrl-C; then what is left in tracefs after all of
#      DPROBE's runs: no dprobe* instance, group or event line may remain;
#   5. DPROBE trace --kernel --trigger with three hist triggers (two on
#      one event), and the same triggers written to the kernel's
#      `trigger` files in step 2: the `hist` files must be the kernel's
#      byte for byte (but the pid an execname key shows); a trigger
#      naming no field must get the kernel's error_log entry.  (The
#      guest's kernel is 6.1: no .percent, .graph or nohitcount yet.)
#   6. DPROBE trace --kernel --trigger with variables: a timestamp on
#      myprobe, a latency on myretprobe keyed the same with an
#      onmax().save() and an onmatch() into a synthetic event defined by
#      -e 's:...', whose own hist trigger counts it; the same in the
#      kernel's files: the hist files must be the kernel's but for the
#      pids, latencies and saved fds; and a reference to no variable
#      must get the kernel's error.
# On the host the two traces are compared event by event: the event name
# and argument values (the values check), and the place in parentheses
# (the place check); the pid, CPU, flags and time columns are not
# compared.
# Then the tracepoint lists, the leftovers and DPROBE's exit status.
#
# Skips when DPROBE has no --kernel, or when boot.sh cannot fetch the guest
# kernel (no network).  Env: DPROBE_RESULTS (appends "qemu P F S"),
# QEMU_KEEP=DIR (keeps what the guest wrote), DPROBE_QEMU_CACHE (boot.sh).
set -u

here=$(cd "$(dirname "$0")" && pwd)

name=kernel-engine
# shellcheck source=tests/qemu/lib.sh
. "$here/lib.sh"

check() {
	if [ "$2" = 0 ]; then
		t_pass "$1"
	else
		t_fail "$1"
	fi
}

if [ $# -ne 1 ]; then
	echo "usage: $0 DPROBE" >&2
	exit 2
fi
case $1 in
/*) dprobe=$1 ;;
*) dprobe=$(pwd)/$1 ;;
esac
if [ ! -x "$dprobe" ]; then
	echo "qemu kernel-engine: $dprobe is not an executable" >&2
	t_add 0 1 0
	t_end
	exit 1
fi
"$dprobe" trace --help 2>&1 | grep -q -- --kernel ||
	t_skip_all "$dprobe trace has no --kernel option yet"
for tool in qemu-system-x86_64 cpio xz; do
	command -v $tool >/dev/null 2>&1 || t_skip_all "$tool not found (mk/deps.sh --test)"
done

scratch dpq-keng
echo dprobe-guest >"$tmp/hostname"
guest_dprobe=$(realpath "$dprobe")

# Unquoted here-document: only DPROBE is substituted, the rest is escaped.
cat >"$tmp/payload.sh" <<EOF
T=/sys/kernel/tracing
P1='p:myprobe do_sys_openat2 dfd=%di:s32 filename=+0(%si):string'
P2='r:myretprobe do_sys_openat2 \$retval'
H1='hist:keys=filename,dfd.hex:vals=hitcount:sort=filename'
H2='hist:keys=arg1.buckets=4:vals=hitcount:sort=arg1.descending'
H3='hist:keys=common_pid.execname:vals=hitcount'
BAD='hist:keys=dfd:vals=hitcount,nosuch'
S1='oplat int pid; u64 lat'
V1='hist:keys=common_pid:ts0=common_timestamp.usecs'
V2='hist:keys=common_pid:lat=common_timestamp.usecs-\$ts0:onmax(\$lat).save(arg1):onmatch(kprobes.myprobe).trace(oplat,common_pid,\$lat)'
V3='hist:keys=pid:vals=hitcount:sort=pid'
BADV='hist:keys=common_pid:x=\$nosuch'
cd /host || exit 1

# 6. dprobe's variables, actions and synthetic event
$guest_dprobe trace --kernel -e "\$P1" -e "\$P2" -e "s:\$S1" \
	--trigger "myprobe=\$V1" --trigger "myretprobe=\$V2" \
	--trigger "synthetic/oplat=\$V3" \
	-- cat /etc/hostname >dprobe.vhist 2>dprobe.vhist.err
$guest_dprobe trace --kernel -e "\$P1" --trigger "myprobe=\$BADV" \
	-- cat /etc/hostname >/dev/null 2>dprobe.vhisterr

# 5. dprobe's hist triggers
$guest_dprobe trace --kernel -e "\$P1" -e "\$P2" --trigger "myprobe=\$H1" \
	--trigger "myretprobe=\$H2" --trigger "myprobe=\$H3" \
	-- cat /etc/hostname >dprobe.hist 2>dprobe.hist.err
$guest_dprobe trace --kernel -e "\$P1" --trigger "myprobe=\$BAD" \
	-- cat /etc/hostname >/dev/null 2>dprobe.histerr

# 1. dprobe
$guest_dprobe trace --kernel -e "\$P1" -e "\$P2" -- cat /etc/hostname \\
	>dprobe.out 2>dprobe.err
echo \$? >dprobe.rc

# 4. the ways out other than the command's end: an error while creating
# (the second definition names no kernel function) and Ctrl-C
$guest_dprobe trace --kernel -e "\$P1" -e 'p:bad no_such_function_xyz' \
	-- cat /etc/hostname >error.out 2>&1
echo \$? >error.rc
# (after a stop dprobe waits for the command, as after Ctrl-C at a
# terminal, which would have stopped it too: a short one)
$guest_dprobe trace --kernel -e "\$P1" -- sleep 2 >sigint.out 2>&1 &
pid=\$!
sleep 1
kill -INT \$pid
wait \$pid
echo \$? >sigint.rc
# and what they all left, before anything else touches tracefs
{
	ls \$T/instances | grep '^dprobe'
	ls \$T/events | grep '^dprobe'
	grep dprobe \$T/kprobe_events \$T/uprobe_events \$T/dynamic_events
} >leftovers.txt 2>&1

# 3. kernel tracepoints
$guest_dprobe list --kernel 'sched:*' >list.out 2>list.err
echo \$? >list.rc
grep '^sched:' \$T/available_events >available.sched

# 2. the kernel, by hand, on the same command
echo "\$P1" >\$T/kprobe_events || exit 1
echo "\$P2" >>\$T/kprobe_events || exit 1
: >\$T/trace
# The command's process stops itself before its exec; the events are
# enabled for its pid alone (set_event_pid) while it is stopped, so
# only the command is traced, not this shell.
sh -c 'kill -STOP \$\$; exec cat /etc/hostname' >kernel.cmdout &
pid=\$!
until grep -q '^[0-9]* ([^)]*) T' /proc/\$pid/stat 2>/dev/null; do :; done
echo \$pid >\$T/set_event_pid
echo "\$H1" >\$T/events/kprobes/myprobe/trigger
echo "\$H2" >\$T/events/kprobes/myretprobe/trigger
echo "\$H3" >>\$T/events/kprobes/myprobe/trigger
: >\$T/error_log
echo "\$BAD" >>\$T/events/kprobes/myprobe/trigger
sed 's/^\[[^]]*\] //' \$T/error_log >kernel.histerr
echo 1 >\$T/events/kprobes/myprobe/enable
echo 1 >\$T/events/kprobes/myretprobe/enable
kill -CONT \$pid
wait \$pid
# the histograms while only the command's pid is let through: with a
# trigger, a disabled event stays soft-enabled for it
{ echo kprobes/myprobe/hist:; cat \$T/events/kprobes/myprobe/hist
  echo; echo kprobes/myretprobe/hist:; cat \$T/events/kprobes/myretprobe/hist
} >kernel.hist
echo "!\$H1" >\$T/events/kprobes/myprobe/trigger
echo "!\$H2" >\$T/events/kprobes/myretprobe/trigger
echo "!\$H3" >\$T/events/kprobes/myprobe/trigger
echo 0 >\$T/events/kprobes/enable

echo >\$T/set_event_pid
cat \$T/trace >kernel.trace
# 6. the kernel's variables, actions and synthetic event, on the same
# command (its pid alone let through again); after the trace is read:
# a trigger with common_timestamp sets the clock, which empties it
echo "\$S1" >>\$T/synthetic_events
sh -c 'kill -STOP \$\$; exec cat /etc/hostname' >/dev/null &
pid=\$!
until grep -q '^[0-9]* ([^)]*) T' /proc/\$pid/stat 2>/dev/null; do :; done
echo \$pid >\$T/set_event_pid
echo "\$V1" >>\$T/events/kprobes/myprobe/trigger
echo "\$V2" >>\$T/events/kprobes/myretprobe/trigger
cat \$T/error_log >kernel.vlog
echo "\$V3" >>\$T/events/synthetic/oplat/trigger
: >\$T/error_log
echo "\$BADV" >>\$T/events/kprobes/myprobe/trigger
sed 's/^\[[^]]*\] //' \$T/error_log >kernel.vhisterr
kill -CONT \$pid
wait \$pid
{ echo kprobes/myprobe/hist:; cat \$T/events/kprobes/myprobe/hist
  echo; echo kprobes/myretprobe/hist:; cat \$T/events/kprobes/myretprobe/hist
  echo; echo synthetic/oplat/hist:; cat \$T/events/synthetic/oplat/hist
} >kernel.vhist
echo "!\$V3" >>\$T/events/synthetic/oplat/trigger
echo "!\$V2" >>\$T/events/kprobes/myretprobe/trigger
echo "!\$V1" >>\$T/events/kprobes/myprobe/trigger
echo "!oplat" >>\$T/synthetic_events
echo >\$T/set_event_pid
: >\$T/kprobe_events
EOF
sh "$here/boot.sh" -b "$dprobe" -a "$tmp/hostname:/etc/hostname" -9 "$share" \
	"$tmp/payload.sh" >"$tmp/guest.out" 2>"$tmp/guest.err"
rc=$?
if [ $rc = 77 ]; then
	t_skip_all "$(sed 's/^boot.sh: //' "$tmp/guest.err" | head -1)"
fi
if [ $rc != 0 ] || [ ! -s "$share/kernel.trace" ]; then
	echo "qemu kernel-engine: the guest run failed (exit $rc):" >&2
	cat "$tmp/guest.out" "$tmp/guest.err" >&2
	t_add 0 1 0
	t_end
	exit 1
fi
cd "$share" || exit 2

# "EVENT: (PLACE) ARGS" of the myprobe/myretprobe lines of the command.
events() {
	sed -n 's/^.* \(my\(ret\)\{0,1\}probe\): \(.*\)$/\1: \3/p' "$1"
}
# "EVENT: ARGS" (the place dropped) / "EVENT: (PLACE)".
values() { sed 's/^\([a-z]*\): ([^)]*) */\1: /'; }
places() { sed 's/^\([a-z]*: ([^)]*)\).*/\1/'; }

check "dprobe trace --kernel exits 0 ($(cat dprobe.rc))" \
	"$([ "$(cat dprobe.rc)" = 0 ] && echo 0 || echo 1)"
[ "$(cat dprobe.rc)" = 0 ] || sed 's/^/  dprobe: /' dprobe.err | head -10
events kernel.trace >kernel.events
events dprobe.out >dprobe.events
if [ ! -s kernel.events ]; then
	echo "  the kernel traced nothing:"
	sed 's/^/  /' kernel.trace | tail -5
fi
values <kernel.events >kernel.values
values <dprobe.events >dprobe.values
if [ -s kernel.values ] && cmp -s kernel.values dprobe.values; then
	check "event values equal the kernel's ($(wc -l <kernel.values) events)" 0
else
	check "event values equal the kernel's" 1
	diff kernel.values dprobe.values | sed 's/^/  /' | head -20
fi
places <kernel.events >kernel.places
places <dprobe.events >dprobe.places
if cmp -s kernel.places dprobe.places; then
	check "event places equal the kernel's" 0
else
	check "event places equal the kernel's" 1
	diff kernel.places dprobe.places | sed 's/^/  /' | head -20
fi

# dprobe list prints "GROUP:NAME  [Tracepoint event]": the names must be
# exactly the kernel's.
awk '{ print $1 }' list.out | sort >list.names
sort available.sched >available.names
if [ "$(cat list.rc)" = 0 ] && [ -s available.names ] &&
   cmp -s list.names available.names; then
	check "dprobe list --kernel 'sched:*' = available_events ($(wc -l <list.names))" 0
else
	check "dprobe list --kernel 'sched:*' = available_events (exit $(cat list.rc))" 1
	diff available.names list.names | sed 's/^/  /' | head -10
	sed 's/^/  dprobe: /' list.err | head -5
fi

if [ "$(cat error.rc)" != 0 ] && [ "$(cat error.rc)" != 127 ]; then
	check "a definition the kernel refuses fails the run ($(cat error.rc))" 0
else
	check "a definition the kernel refuses fails the run ($(cat error.rc))" 1
	sed 's/^/  /' error.out | head -5
fi
if grep -q '^[0-9]' sigint.rc && [ -s sigint.out ]; then
	check "Ctrl-C ends the run (exit $(cat sigint.rc))" 0
else
	check "Ctrl-C ends the run" 1
fi
# the histograms: dprobe prints the hist files after its events
# (the pid of the command is not the same in the two runs)
sed -n '/^kprobes\/myprobe\/hist:$/,$p' dprobe.hist |
	sed 's/^\({ common_pid: cat *\[\) *[0-9]*\]/\1PID]/' >dprobe.hists
sed -i 's/^\({ common_pid: cat *\[\) *[0-9]*\]/\1PID]/' kernel.hist
if [ -s kernel.hist ] && grep -q '^{' kernel.hist &&
   cmp -s kernel.hist dprobe.hists; then
	check "hist triggers: the kernel's hist files ($(grep -c '^{' kernel.hist) entries)" 0
else
	check "hist triggers: the kernel's hist files" 1
	diff kernel.hist dprobe.hists | sed 's/^/  /' | head -30
	sed 's/^/  dprobe: /' dprobe.hist.err | head -5
fi
if [ -s kernel.histerr ] && cmp -s kernel.histerr dprobe.histerr; then
	check "a bad hist trigger: the kernel's error" 0
else
	check "a bad hist trigger: the kernel's error" 1
	diff kernel.histerr dprobe.histerr | sed 's/^/  /' | head -10
fi
# variables: the pids, latencies and saved fds vary from run to run
vnorm() {
	sed -e 's/^\({ \(common_\)\{0,1\}pid: *\)[0-9][0-9]*/\1PID/' \
	    -e 's/max: *[0-9]*  arg1: *[0-9]*/max: N  arg1: N/'
}
sed -n '/^kprobes\/myprobe\/hist:$/,$p' dprobe.vhist | vnorm >dprobe.vhists
vnorm <kernel.vhist >kernel.vhists
if [ -s kernel.vhists ] && grep -q '^{ pid' kernel.vhists &&
   cmp -s kernel.vhists dprobe.vhists; then
	check "hist variables, onmax().save(), onmatch() into a synthetic event: the kernel's hist files" 0
else
	check "hist variables, onmax().save(), onmatch() into a synthetic event: the kernel's hist files" 1
	diff kernel.vhists dprobe.vhists | sed 's/^/  /' | head -40
	sed 's/^/  dprobe: /' dprobe.vhist.err | head -5
fi
if [ -s kernel.vhisterr ] && cmp -s kernel.vhisterr dprobe.vhisterr; then
	check "a reference to no variable: the kernel's error" 0
else
	check "a reference to no variable: the kernel's error" 1
	diff kernel.vhisterr dprobe.vhisterr | sed 's/^/  /' | head -10
fi
if [ -s leftovers.txt ]; then
	check "nothing of dprobe left in tracefs" 1
	sed 's/^/  left: /' leftovers.txt | head -10
else
	check "nothing of dprobe left in tracefs" 0
fi

t_end
