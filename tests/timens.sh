#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
#   sh tests/timens.sh CMD [ARG...]
#
# Runs a test runner in a new time namespace whose CLOCK_MONOTONIC and
# CLOCK_BOOTTIME read about $TIMENS_SECONDS (default 5) seconds, as on a
# machine booted a moment ago: trace lines then print their seconds in
# the kernel's padded "%5lu" column ("    5.123456"), and every expected
# output must still match.  The runner's result lines in $DPROBE_RESULTS
# are renamed "timens-NAME".  Without the rights or the tools for a time
# namespace it prints the reason and records a skip.
set -u
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARG...]" >&2; exit 2; }
want=${TIMENS_SECONDS:-5}
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
t_begin timens
T_SELF="time namespace"

# CLOCK_MONOTONIC now, in whole seconds: /proc/timer_list's "now at"
# (nanoseconds) where it can be read, else the boot clock of /proc/uptime
# (the monotonic clock is never ahead of it).
mono_secs() {
	_ns=$(sed -n 's/^now at \([0-9]*\) nsecs$/\1/p' /proc/timer_list 2>/dev/null | head -n 1)
	if [ -n "$_ns" ]; then
		echo $((_ns / 1000000000))
	else
		cut -d. -f1 /proc/uptime
	fi
}

command -v unshare >/dev/null 2>&1 || t_skip_all "unshare (util-linux) not found"
t_require root
[ -e /proc/self/ns/time ] || t_skip_all "this kernel has no time namespaces"
mono=$(mono_secs)
boot=$(cut -d. -f1 /proc/uptime)
# Shift both clocks back so that they read about $want seconds; on a
# machine up for less than that there is nothing to shift.
off_m=$((mono > want ? mono - want : 0))
off_b=$((boot > want ? boot - want : 0))
unshare --time --monotonic=-$off_m --boottime=-$off_b true 2>/dev/null ||
	t_skip_all "unshare --time refused: $(unshare --time true 2>&1 | head -n 1)"

t_scratch dprobe-timens
tmp=$T_DIR/results
: >"$tmp"
echo "time namespace: monotonic clock moved back by $off_m s, boot clock by $off_b s"
DPROBE_RESULTS=$tmp unshare --time --monotonic=-$off_m --boottime=-$off_b \
	sh -c 'echo "time namespace: uptime reads $(cut -d" " -f1 /proc/uptime) s"; exec "$@"' \
	sh "$@"
rc=$?
[ -z "$T_RESULTS" ] || sed 's/^/timens-/' "$tmp" >>"$T_RESULTS"
exit $rc
