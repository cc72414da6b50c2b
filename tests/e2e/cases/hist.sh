# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--trigger: hist triggers aggregate entry and return events into the kernel's hist text"
# fib 6: fib(6) calls fib(k) F(7-k) times for k >= 1 (1, 1, 2, 3, 5, 8
# for k = 6..1) and fib(0) 5 times: 25 calls.  By n: those counts; by
# n in buckets of 4: 21 calls with n <= 3, 4 with n >= 4.  The returned
# values fib(k) (0 five times, 1 thirteen, 2 three, 3 two, 5 once, 8
# once) by log2 (as the kernel rounds up to a power of two, 0 and 1 in
# 2^0): 18, 3, 2 and 2.  The events aggregated are not printed; the
# hist files come at the end, the two triggers of fe in one.
prog=fib
args='6 1'
defs='p:fe fib n=%di:s64
r20:fr fib $retval'
opts="--trigger fe=hist:keys=n:sort=n --trigger fe=hist:keys=n.buckets=4:vals=hitcount,hitcount.percent:sort=n --trigger fr=hist:keys=arg1.log2:sort=arg1"
events_by=raw_events
raw_events() { cat "$T/events"; }
expected() {
	cat <<'EOF2'
kprobes/fe/hist:
# event histogram
#
# trigger info: hist:keys=n:vals=hitcount:sort=n:size=2048 [active]
#

{ n:          0 } hitcount:          5
{ n:          1 } hitcount:          8
{ n:          2 } hitcount:          5
{ n:          3 } hitcount:          3
{ n:          4 } hitcount:          2
{ n:          5 } hitcount:          1
{ n:          6 } hitcount:          1

Totals:
    Hits: 25
    Entries: 7
    Dropped: 0


# event histogram
#
# trigger info: hist:keys=n.buckets=4:vals=hitcount,hitcount.percent:sort=n.buckets=4:size=2048 [active]
#

{ n: ~ 0-3 } hitcount:         21  hitcount (%):  84.00
{ n: ~ 4-7 } hitcount:          4  hitcount (%):  16.00

Totals:
    Hits: 25
    Entries: 2
    Dropped: 0

kprobes/fr/hist:
# event histogram
#
# trigger info: hist:keys=arg1.log2:vals=hitcount:sort=arg1.log2:size=2048 [active]
#

{ arg1: ~ 2^0  } hitcount:         18
{ arg1: ~ 2^1  } hitcount:          3
{ arg1: ~ 2^2  } hitcount:          2
{ arg1: ~ 2^3  } hitcount:          2

Totals:
    Hits: 25
    Entries: 4
    Dropped: 0
> fib: fib(6) = 8, 25 calls
# dprobe: 50 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
case_check() {
	# dprobe stat with a trigger: records are made for it, no line
	# printed, the count and the histogram both there
	"$DPROBE" stat -e 'p:fe fib n=%di:s64' --trigger 'hist:keys=n.log2' \
		-- "$P" 6 1 >"$T/stat.out" 2>"$T/stat.err" || {
		cat "$T/stat.err"; return 1; }
	grep -q '^    Hits: 25$' "$T/stat.out" &&
		grep -q '25 *kprobes:fe' "$T/stat.err" &&
		! grep -q ' fe: ' "$T/stat.out" || {
		cat "$T/stat.out" "$T/stat.err"; return 1; }
}
