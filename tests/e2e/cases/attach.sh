# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-p PID: attach to a running process; dprobe ends when it exits, with status 0'
# waiter.c waits for a file before calling work(1)..work(5) (work(i) =
# i * i, returned into calls()).  The test starts it, attaches, waits
# until work's first byte in the process is an int3 (the probe is armed;
# read from /proc/PID/mem), then creates the file.  Five entries and five
# returns; dprobe exits when the process does, with status 0 (-p).
prog=waiter
defs='p:w work i=%di:s64
r:wr work ret=$retval:s64'
case_run() {
	start_bg "$T/stdout" "$P" "$T/go" 5 || { echo "waiter did not start" >"$T/why"; exit 1; }
	pid=$BG_PID
	record_cmd trace -p "$pid"
	_e=$(defs_eargs)
	eval "set -- $_e"
	timeout -k 5 "$TMO" "$DPROBE" trace "$@" -o "$T/events" -p "$pid" \
		2>"$T/stderr" &
	dp=$!
	wait_armed "$pid" "$P" work || echo "# the probe was never armed" >>"$T/notes"
	touch "$T/go"
	wait "$pid"
	echo "# target exit=$?" >>"$T/notes"
	wait "$dp"
	echo $? >"$T/rc"
}
case_result() {
	trace_result
	cat "$T/notes"
}
expected() {
	for i in 1 2 3 4 5; do
		echo "waiter w: (work+0x0/{size:work}) i=$i"
		echo "waiter wr: ({retsite:calls:work} <- work) ret=$((i * i))"
	done
	cat <<'EOF2'
> waiter: ready
> waiter: phase 1 done, sum 55
# dprobe: 10 events, 0 filtered, 0 missed, 0 lost
# exit=0
# target exit=0
EOF2
}
