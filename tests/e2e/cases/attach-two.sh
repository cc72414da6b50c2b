# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-p PID,PID: two processes at once'
# Two waiters (3 calls each: work(1..3) = 1, 4, 9); both armed before
# their go files exist.  Six events, the same three from each process
# (their order between processes is not fixed: sorted).
prog=waiter
sort_events=1
defs='p:w work i=%di:s64'
case_run() {
	start_bg "$T/out1" "$P" "$T/go1" 3 || exit 1
	p1=$BG_PID
	start_bg "$T/out2" "$P" "$T/go2" 3 || exit 1
	p2=$BG_PID
	_e=$(defs_eargs)
	eval "set -- $_e"
	record_cmd trace "$@" -p "$p1,$p2"
	timeout -k 5 "$TMO" "$DPROBE" trace "$@" -o "$T/events" -p "$p1,$p2" \
		2>"$T/stderr" &
	dp=$!
	wait_armed "$p1" "$P" work || echo "# not armed in the first" >>"$T/notes"
	wait_armed "$p2" "$P" work || echo "# not armed in the second" >>"$T/notes"
	touch "$T/go1" "$T/go2"
	wait "$p1"
	wait "$p2"
	wait "$dp"
	echo $? >"$T/rc"
	cat "$T/out1" "$T/out2" >"$T/stdout"
	: >>"$T/notes"
}
case_result() {
	trace_result
	cat "$T/notes"
}
expected() {
	for i in 1 2 3 1 2 3; do
		echo "waiter w: (work+0x0/{size:work}) i=$i"
	done
	cat <<'EOF2'
> waiter: ready
> waiter: phase 1 done, sum 14
> waiter: ready
> waiter: phase 1 done, sum 14
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
