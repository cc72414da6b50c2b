# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='in-process engine: dprobe killed with SIGKILL; the agent takes every probe out and the program runs on'
# spin.c: 4 threads call square() and twice() (which calls square())
# until a stop file appears, checking every result, then spin compares
# the functions' first bytes with the ones it saw at the start.  dprobe
# (the agent engine) attaches to it, or launches it, and is killed with
# SIGKILL once the probes are armed (a byte of square/twice differs from
# the file's: the jmp of an optimised probe or an int3).  The agent
# sees its channel close and removes every probe: the bytes become the
# file's again within seconds, the program finishes with every result
# right and its code intact.  dprobe's events up to the kill are not
# checked (a SIGKILLed dprobe writes what it wrote).
prog=spin
levels=O2
engines='auto agent'
defs='p:sq square i=%di:s64
r:sqr square ret=$retval:s64
p:tw twice i=%di:s64'
restored() {
	if wait_restored "$1" "$P" square && wait_restored "$1" "$P" twice; then
		echo "# $2: code restored after the kill" >>"$T/result"
	else
		echo "# $2: code NOT restored" >>"$T/result"
	fi
}
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	# attached to a running process
	start_bg "$T/out1" "$P" "$T/stop1" 4 || { echo "# spin did not start" >>"$T/result"; return; }
	pid=$BG_PID
	"$DPROBE" trace --engine agent "$@" -o "$T/ev1" -p "$pid" 2>"$T/err1" &
	dp=$!
	wait_armed "$pid" "$P" square || echo "# -p: never armed" >>"$T/result"
	sleep 0.1
	kill -9 $dp
	wait $dp 2>/dev/null
	restored "$pid" -p
	touch "$T/stop1"
	wait "$pid"
	echo "# -p: spin exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out1" >>"$T/result"
	# a command dprobe launched: it keeps running as an orphan
	"$DPROBE" trace --engine agent "$@" -o "$T/ev2" -- "$P" "$T/stop2" 4 nocode \
		>"$T/out2" 2>"$T/err2" &
	dp=$!
	i=0
	while [ ! -s "$T/out2" ] && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	pid=$(pgrep -n -P $dp)
	wait_armed "$pid" "$P" square || echo "# launch: never armed" >>"$T/result"
	sleep 0.1
	kill -9 $dp
	wait $dp 2>/dev/null
	restored "$pid" launch
	touch "$T/stop2"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	sed 's/^/> /' "$T/out2" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# -p: code restored after the kill
# -p: spin exit=0
> spin: ready
> spin: ok (4 threads, calls made)
# launch: code restored after the kill
> spin: ready
> spin: ok (4 threads, calls made)
EOF2
}
