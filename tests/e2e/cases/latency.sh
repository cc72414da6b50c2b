# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe latency: entry-to-return times per thread, across recursion and longjmp, in the right log2 buckets'
# progs/lat.c.  Durations are checked from below (a sleep never ends
# early) with room above for a loaded machine; counts are exact.
#  - nap: 5 calls of 3 ms in main, then 3 in a second thread: with
#    --by tid two histograms, 5 and 3 calls (most first), none under
#    2^22 (2.1-4.19 ms; a loaded machine may put some above).
#  - rec(3): 4 nested calls of at least 3, 6, 9 and 12 ms: at least 3
#    above 4.19 ms (buckets from 2^23) and 2 above 8.39 ms (from 2^24),
#    none under 2.1 ms.  Pairing a return with the wrong entry breaks
#    these bounds.
#  - jumper: 8 rounds, the 4 odd ones sleep 40 ms and longjmp out; the 4
#    calls that return take microseconds, so (allowing one preempted
#    call) at most one may reach 2^26 (33.5 ms and more), which every
#    return paired with a call left by longjmp would; the 4 calls that
#    never returned are said on stderr.
#    With --by comm: one histogram, the program's.
#  - --filter on a fetch argument of PLACE: 'ms > 3' keeps no call, and
#    'ms == 3' all 8, in microseconds (--us): none under 2^12 (3000 us
#    is in 2^12).
#  - where the calls were paired (DPROBE_VERBOSE=1): timed in the process
#    on the agent (auto picks it for this program), by dprobe on ptrace
#    and wherever --filter needs the entry's fields.
prog=lat
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
defs=''

# lat_run NAME LATENCY-ARGS...: one run, its outputs as $T/NAME.*
lat_run() {
	_n=$1
	shift
	record_cmd latency "$@" -- "$P"
	t_timeout "$TMO" "$DPROBE" latency "$@" -- "$P" \
		>"$T/$_n.out" 2>"$T/$_n.err" </dev/null
	echo $? >"$T/$_n.rc"
}

case_run() {
	lat_run nap nap --by tid
	DPROBE_VERBOSE=1 lat_run rec rec
	lat_run jumper jumper --by comm
	lat_run none 'nap ms=%di:s64' --filter 'ms > 3'
	DPROBE_VERBOSE=1 lat_run us 'nap ms=%di:s64' --filter 'ms == 3' --us
}

# the hitcounts of NAME's histograms as "EXP COUNT" lines
buckets() {
	sed -n 's/^{ lat: ~ 2^\([0-9]*\) *} hitcount: *\([0-9]*\) .*/\1 \2/p' \
		"$T/$1.out"
}

case_result() {
	echo "nap: exit $(cat "$T/nap.rc"), $(grep -c '^# latency of nap in nanoseconds, tid=[0-9]*$' "$T/nap.out") histograms"
	echo "nap: counts $(sed -n 's/^count \([0-9]*\), min .*, avg .*, max .*/\1/p' "$T/nap.out" | tr '\n' ' ')"
	buckets nap | awk '$1 < 22 { bad = bad " 2^" $1 } END { print "nap: under 2^22:" (bad ? bad : " none") }'
	buckets rec | awk '{ n += $2 } $1 >= 23 { a += $2 } $1 >= 24 { b += $2 } $1 < 22 { c += $2 }
		END { print "rec: " n " calls, " (a >= 3 ? "3 or more" : a) " over 4.19 ms, " \
			(b >= 2 ? "2 or more" : b) " over 8.39 ms, " c + 0 " under 2.1 ms" }'
	echo "rec: exit $(cat "$T/rec.rc")"
	sed -n 's/^dprobe latency: \(.* calls timed .*\)/rec: \1/p' "$T/rec.err"
	grep '^# latency' "$T/jumper.out"
	buckets jumper | awk '{ n += $2 } $1 >= 26 { s += $2 } END { print "jumper: " n " calls, " (s < 2 ? "at most 1" : s) " of 33.5 ms or more" }'
	grep '^dprobe latency: ' "$T/jumper.err"
	echo "jumper: exit $(cat "$T/jumper.rc")"
	grep -v "^lat: " "$T/none.out"
	echo "none: exit $(cat "$T/none.rc")"
	grep '^# latency' "$T/us.out"
	buckets us | awk '{ n += $2 } $1 < 12 { s += $2 } END { print "us: " n " calls, " s + 0 " under 2^12" }'
	echo "us: exit $(cat "$T/us.rc")"
	sed -n 's/^dprobe latency: \(.* calls timed .*\)/us: \1/p' "$T/us.err"
}

expected() {
	case ${DPROBE_ENGINE:-auto} in
	ptrace) timed='0 calls timed in the process, 4 paired by dprobe' ;;
	*) timed='4 calls timed in the process, 0 paired by dprobe' ;;
	esac
	cat <<EOF2
nap: exit 0, 2 histograms
nap: counts 5 3 
nap: under 2^22: none
rec: 4 calls, 3 or more over 4.19 ms, 2 or more over 8.39 ms, 0 under 2.1 ms
rec: exit 0
rec: $timed
# latency of jumper in nanoseconds, comm=lat
jumper: 4 calls, at most 1 of 33.5 ms or more
dprobe latency: 4 calls never returned (longjmp, exception, thread exit, or still running at the end): not counted
jumper: exit 0
# latency of nap ms=%di:s64: no call returned
none: exit 0
# latency of nap ms=%di:s64 in microseconds
us: 8 calls, 0 under 2^12
us: exit 0
us: 0 calls timed in the process, 8 paired by dprobe
EOF2
}
