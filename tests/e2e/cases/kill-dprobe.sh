# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe killed with SIGKILL mid-run, on each engine: the program finishes its work unchanged, every probe byte back'
# spin.c: 4 threads call square() and twice() (which calls square())
# without pause, checking every result, until a stop file appears; then
# spin compares the functions' first bytes with the ones it saw at its
# start and prints "ok" and exits 0 only if all is well.  Entry and
# return probes on both functions, so at any moment threads are stopped
# at an int3 (ptrace engine), running a displaced instruction out of line
# or inside a call whose return address was replaced.  dprobe, attached
# (-p) or launching the program, is killed with SIGKILL once the probes
# are armed and hit.
# ptrace engine: the tracer is a child of the process killed; the kernel
# tells it (PR_SET_PDEATHSIG) and it detaches as after a Ctrl-C.  Before
# that design, the threads stopped at an int3 resumed with their SIGTRAP
# and spin died of it (exit 133).  In-process engine: the agent sees its
# channel close and takes its probes out.
# Both ways: the code becomes the file's again within seconds, spin ends
# with every result right, its code intact, exit status 0.  With a
# launched spin (its copy of the code is taken after the probes are
# armed: "nocode"), the bytes are compared from outside only.
prog=spin
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
defs='p:sq square i=%di:s64
r:sqr square ret=$retval:s64
p:tw twice i=%di:s64
r:twr twice ret=$retval:s64'

# descendant PID FILE -> the pid of a descendant of PID running FILE
descendant() {
	for _c in $(pgrep -P "$1"); do
		if [ "$(readlink "/proc/$_c/exe")" = "$2" ]; then
			echo "$_c"
			return 0
		fi
		descendant "$_c" "$2" && return 0
	done
	return 1
}
# gone PID: wait (10 s at most) until PID has exited (reaped or a zombie)
gone() {
	_i=0
	while [ $_i -lt 1000 ]; do
		_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
		case $_st in '' | Z | X) return 0 ;; esac
		sleep 0.01
		_i=$((_i + 1))
	done
	return 1
}
restored() {
	if kill -0 "$1" 2>/dev/null && wait_restored "$1" "$P" square &&
		wait_restored "$1" "$P" twice; then
		echo "# $2: code restored after the kill" >>"$T/result"
	else
		echo "# $2: code NOT restored" >>"$T/result"
	fi
}
# armed PID WHAT: both functions probed, then hits for a while
armed() {
	{ wait_armed "$1" "$P" square && wait_armed "$1" "$P" twice; } ||
		echo "# $2: never armed" >>"$T/result"
	sleep 0.3
}
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	# attached to a running process
	start_bg "$T/out1" "$P" "$T/stop1" 4 || { echo "# spin did not start" >>"$T/result"; return; }
	pid=$BG_PID
	record_cmd trace "$@" -o "$T/ev1" -p "$pid"
	"$DPROBE" trace "$@" -o "$T/ev1" -p "$pid" 2>"$T/err1" &
	dp=$!
	armed "$pid" -p
	kill -9 $dp
	wait $dp 2>/dev/null
	restored "$pid" -p
	touch "$T/stop1"
	wait "$pid"
	echo "# -p: spin exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out1" >>"$T/result"
	# a command dprobe launched: it runs on as an orphan
	"$DPROBE" trace "$@" -o "$T/ev2" -- "$P" "$T/stop2" 4 nocode \
		>"$T/out2" 2>"$T/err2" &
	dp=$!
	i=0
	while [ ! -s "$T/out2" ] && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	pid=$(descendant $dp "$P") || { echo "# launch: spin not found" >>"$T/result"; return; }
	armed "$pid" launch
	kill -9 $dp
	wait $dp 2>/dev/null
	restored "$pid" launch
	touch "$T/stop2"
	gone "$pid" || echo "# launch: spin still running" >>"$T/result"
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
