# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='record killed with SIGKILL: its .part is made a recording by record --recover, which report and trace-cmd read; the program runs on'
# spin.c's 4 threads call square() and twice() until a stop file
# appears.  `dprobe record -p` on it is killed with SIGKILL once the
# probes are armed and hit: it never writes the trace.dat (an empty
# file is left) but its pages, spilled as they filled, are in
# rec.dat.part with what describes them.  `dprobe record --recover`
# makes rec.dat of them: `dprobe report` and trace-cmd list its events
# (how many depends on the machine: at least one), the .part is gone,
# and spin, its code restored, finishes its work with exit 0.  The
# in-process engine only: on the ptrace engine the tracer is a child
# that the kernel tells of the kill (PR_SET_PDEATHSIG) and that ends
# the recording itself, as after a Ctrl-C.
prog=spin
levels=O2
engines='auto agent'
needs=trace-cmd
defs='p:sq square i=%di:s64
r:sqr square ret=$retval:s64'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	start_bg "$T/out" "$P" "$T/stop" 4 ||
		{ echo "# spin did not start" >>"$T/result"; return; }
	pid=$BG_PID
	record_cmd record "$@" -o "$T/rec.dat" -p "$pid"
	"$DPROBE" record "$@" -o "$T/rec.dat" -p "$pid" 2>"$T/err" &
	dp=$!
	wait_armed "$pid" "$P" square || echo "# never armed" >>"$T/result"
	sleep 0.5
	kill -9 $dp
	wait $dp 2>/dev/null
	echo "# after the kill: rec.dat $(stat -c %s "$T/rec.dat") bytes, rec.dat.part $(test -s "$T/rec.dat.part" && echo there)" >>"$T/result"
	"$DPROBE" record --recover "$T/rec.dat.part" 2>"$T/recover.err"
	echo "# recover exit=$?, .part $(test -e "$T/rec.dat.part" && echo left || echo gone)" >>"$T/result"
	"$DPROBE" report "$T/rec.dat" >"$T/report" 2>"$T/report.err"
	# (the first event says "some": grep stops there, and trace-cmd, whose
	# status is not asserted, is not made to print a million more)
	echo "# report exit=$?, events: $(grep -m 1 -c -E ' sqr?: ' "$T/report" | sed 's/^[1-9][0-9]*$/some/')" >>"$T/result"
	echo "# trace-cmd: $(trace-cmd report "$T/rec.dat" 2>/dev/null | grep -m 1 -c -E ' sqr?: ' | sed 's/^[1-9][0-9]*$/some/')" >>"$T/result"
	wait_restored "$pid" "$P" square || echo "# code NOT restored" >>"$T/result"
	touch "$T/stop"
	wait "$pid"
	echo "# spin exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# after the kill: rec.dat 0 bytes, rec.dat.part there
# recover exit=0, .part gone
# report exit=0, events: some
# trace-cmd: some
# spin exit=0
> spin: ready
> spin: ok (4 threads, calls made)
EOF2
}
