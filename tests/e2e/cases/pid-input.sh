# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-p: a process named twice is traced once; a zombie is refused as one'
# waiter.c waits for a file before calling work(1)..work(3).  Given as
# -p PID,PID (and again as -p PID), it is attached once: three events,
# exit status 0, nothing on stderr but the summary.  (Before, the second
# attach of the same process failed and dprobe said it had "exited".)
# A zombie (a child that exited under a parent that never waits: `sh -c
# 'true & exec sleep'`) has no code to probe: exit status 1 and a message
# that says it is a zombie.
prog=waiter
defs='p:w work i=%di:s64'
case_run() {
	: >"$T/notes"
	start_bg "$T/stdout" "$P" "$T/go" 3 || { echo "waiter did not start" >"$T/why"; exit 1; }
	pid=$BG_PID
	_e=$(defs_eargs)
	eval "set -- $_e"
	record_cmd trace "$@" -o "$T/events" -p "$pid,$pid" -p "$pid"
	timeout -k 5 "$TMO" "$DPROBE" trace "$@" -o "$T/events" \
		-p "$pid,$pid" -p "$pid" 2>"$T/stderr" &
	dp=$!
	wait_armed "$pid" "$P" work || echo "# the probe was never armed" >>"$T/notes"
	touch "$T/go"
	wait "$pid"
	echo "# target exit=$?" >>"$T/notes"
	wait "$dp"
	echo $? >"$T/rc"
	grep -v '^dprobe: [0-9]* events, ' "$T/stderr" | sed 's/^/# stderr: /' >>"$T/notes"
	# a zombie
	sh -c 'true & exec sleep 30' &
	zp=$!
	i=0
	while :; do
		z=$(pgrep -P $zp)
		[ -n "$z" ] && [ "$(sed 's/.*) //' "/proc/$z/stat" | cut -c1)" = Z ] && break
		[ $i -ge 500 ] && { echo "# no zombie made" >>"$T/notes"; break; }
		sleep 0.01
		i=$((i + 1))
	done
	"$DPROBE" trace "$@" -o "$T/zevents" -p "$z" >"$T/zout" 2>"$T/zerr" </dev/null
	rc=$?
	msg=no
	grep -q "process $z is a zombie" "$T/zerr" && msg=yes
	echo "# zombie: exit=$rc message=$msg" >>"$T/notes"
	kill $zp
	wait $zp 2>/dev/null
}
case_result() {
	trace_result
	cat "$T/notes"
}
expected() {
	for i in 1 2 3; do
		echo "waiter w: (work+0x0/{size:work}) i=$i"
	done
	cat <<'EOF2'
> waiter: ready
> waiter: phase 1 done, sum 14
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
# target exit=0
# zombie: exit=1 message=yes
EOF2
}
