# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--trigger: variables across events, onmatch() into a synthetic event, onmax().save()"
# fib 6 (hist.sh): 25 entries and returns on one thread.  The entry
# sets ts0 for the thread's pid; a return reads it once: only a return
# right after an entry, a leaf's (fib(1) 8 times, fib(0) 5 times),
# finds it set, the others count for nothing, as in the kernel.  Each
# match makes a record of the synthetic event fl with the latency and
# the value returned: by ret, 5 zeros and 8 ones.  The pid, the
# latencies and the value saved at the largest one vary.
prog=fib
args='6 1'
defs='p:fe fib n=%di:s64
r20:fr fib $retval
s:fl u64 lat; u64 ret'
opts='--trigger fe=hist:keys=common_pid:ts0=common_timestamp --trigger fr=hist:keys=common_pid:lat=common_timestamp-$ts0:onmax($lat).save(arg1):onmatch(kprobes.fe).trace(fl,$lat,arg1) --trigger fl=hist:keys=ret:sort=ret'
events_by=vars_events
vars_events() {
	sed -e 's/^{ common_pid: *[0-9][0-9]* }/{ common_pid: PID }/' \
	    -e 's/max: *[0-9]*  arg1: *[0-9]*/max: N  arg1: N/' "$T/events"
}
expected() {
	cat <<'EOF2'
kprobes/fe/hist:
# event histogram
#
# trigger info: hist:keys=common_pid:vals=hitcount:ts0=common_timestamp:sort=hitcount:size=2048:clock=global [active]
#

{ common_pid: PID } hitcount:         25

Totals:
    Hits: 25
    Entries: 1
    Dropped: 0

kprobes/fr/hist:
# event histogram
#
# trigger info: hist:keys=common_pid:vals=hitcount:lat=common_timestamp-$ts0:sort=hitcount:size=2048:clock=global:onmax($lat).save(arg1):onmatch(kprobes.fe).trace(fl,$lat,arg1) [active]
#

{ common_pid: PID } hitcount:         13
	max: N  arg1: N

Totals:
    Hits: 13
    Entries: 1
    Dropped: 0

synthetic/fl/hist:
# event histogram
#
# trigger info: hist:keys=ret:vals=hitcount:sort=ret:size=2048 [active]
#

{ ret:          0 } hitcount:          5
{ ret:          1 } hitcount:          8

Totals:
    Hits: 13
    Entries: 2
    Dropped: 0
> fib: fib(6) = 8, 25 calls
# dprobe: 50 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
case_check() {
	# without a trigger on it the synthetic event is printed, through
	# its filter: the 8 leaves that returned 1
	"$DPROBE" trace -e 'p:fe fib n=%di:s64' -e 'r20:fr fib $retval' \
		-e 's:fl u64 lat; u64 ret' \
		--trigger 'fe=hist:keys=common_pid:ts0=common_timestamp' \
		--trigger 'fr=hist:keys=common_pid:lat=common_timestamp-$ts0:onmatch(kprobes.fe).fl($lat,arg1)' \
		--filter 'fl=ret == 1' -- "$P" 6 1 >"$T/fl.out" 2>"$T/fl.err" || {
		cat "$T/fl.err"; return 1; }
	[ "$(grep -c ' fl: lat=[0-9]* ret=1$' "$T/fl.out")" = 8 ] &&
		! grep -q ' fl: .*ret=0' "$T/fl.out" || {
		cat "$T/fl.out" "$T/fl.err"; return 1; }
	# a reference to no variable: the kernel's two error_log entries
	! "$DPROBE" trace -e 'p:fe fib n=%di:s64' \
		--trigger 'fe=hist:keys=common_pid:x=$nosuch' -- "$P" 1 \
		>/dev/null 2>"$T/bad.err" &&
		grep -q "error: Couldn't find variable" "$T/bad.err" &&
		grep -q "error: Couldn't find field" "$T/bad.err" || {
		cat "$T/bad.err"; return 1; }
}
