# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='hist triggers kept in the process (in-process engine): every hit counted, four threads at once, a ring too small for records'
# threads 4 100000: thread t calls tick(t) 100000 times, all four at
# once.  The trigger's keys and value are numbers of a fixed-size
# record, so the agent adds each hit into a table shared with dprobe
# instead of writing a record (src/event/agg.h): with a ring of 4 KiB,
# far too small for 400000 records, the histogram still counts every
# call, 100000 per thread, and t summed per key is t * 100000.  The
# same trigger with DPROBE_AGG=0 has records made, and the ring loses
# most of them: its histogram counts what came, the summary the rest
# (hits + lost = 400000).  64 threads at once are more than the 31
# tables of threads' own: the rest share table 0, and every hit counts.
prog=threads
levels=O2
engines='auto agent'
args='4 100000'
defs='p:tk tick t=%di:s64'
opts="--buffer-size 4096 --trigger tk=hist:keys=t:vals=hitcount,t:sort=t"
events_by=raw_events
raw_events() { cat "$T/events"; }
expected() {
	cat <<'EOF2'
kprobes/tk/hist:
# event histogram
#
# trigger info: hist:keys=t:vals=hitcount,t:sort=t:size=2048 [active]
#

{ t:          0 } hitcount:     100000  t:          0
{ t:          1 } hitcount:     100000  t:     100000
{ t:          2 } hitcount:     100000  t:     200000
{ t:          3 } hitcount:     100000  t:     300000

Totals:
    Hits: 400000
    Entries: 4
    Dropped: 0
> threads: 4 x 100000 calls, total 1000000
# dprobe: 400000 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
case_check() {
	DPROBE_AGG=0 "$DPROBE" trace -e 'p:tk tick t=%di:s64' --buffer-size 4096 \
		--trigger 'tk=hist:keys=t' -- "$P" 4 100000 \
		>"$T/rec.out" 2>"$T/rec.err" || { cat "$T/rec.err"; return 1; }
	hits=$(sed -n 's/^    Hits: //p' "$T/rec.out")
	lost=$(sed -n 's/^dprobe: [0-9]* events, 0 filtered, 0 missed, \([0-9]*\) lost$/\1/p' "$T/rec.err")
	[ -n "$hits" ] && [ -n "$lost" ] &&
		[ $((hits + lost)) -eq 400000 ] || {
		echo "records' way: $hits hits, $lost lost"
		cat "$T/rec.out" "$T/rec.err"; return 1; }
	"$DPROBE" trace -e 'p:tk tick t=%di:s64' --buffer-size 4096 \
		--trigger 'tk=hist:keys=t' -- "$P" 64 5000 \
		>"$T/many.out" 2>"$T/many.err" || { cat "$T/many.err"; return 1; }
	grep -q '^    Hits: 320000$' "$T/many.out" &&
		grep -q '^    Entries: 64$' "$T/many.out" || {
		echo "64 threads:"; cat "$T/many.out" "$T/many.err"; return 1; }
}
