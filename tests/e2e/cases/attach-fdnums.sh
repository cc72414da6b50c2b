# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='attached, detached, launched: the program'"'"'s open() always gets the lowest free descriptor number'
# fdnums.c: 4 threads calling square() and twice(), and one thread that
# opens /dev/null and closes it without pause, checking that every
# open() returns the lowest free number, as it does untraced: the
# kernel's uprobes take no descriptor in the traced process.  A tracer
# that makes one there even for an instant (a socket, a descriptor it
# receives, a /proc or ELF file it reads while it registers probes) and
# then moves or closes it, makes an open() of that moment return the
# next number.  The agent makes what it keeps in the program's table
# while no thread of the program can open anything, and its control
# thread works in a table of its own.  dprobe attaches and detaches
# E2E_FDNUMS_ROUNDS times (default 5) with -p, as many with -p -f (the
# hub), then runs it launched (detached after 1.5 s); each run
# exits 0, with events, and the program ends with every number right.
prog=fdnums
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
ROUNDS=${E2E_FDNUMS_ROUNDS:-5}
defs='p:sq square i=%di:s64
r:tr twice ret=$retval:s64'
# fd_rounds PID FLAGS...: attach and detach $ROUNDS times; events in
# one round at least (a loaded machine may not run a probed call within
# the tenth of a second of another)
fd_rounds() {
	_pid=$1
	shift
	_r=0
	_hit=0
	while [ $_r -lt "$ROUNDS" ]; do
		"$DPROBE" trace "$@" -o "$T/ev" --duration 0.1 -p "$_pid" 2>"$T/err"
		_rc=$?
		[ $_rc = 0 ] || echo "$*: round $_r: exit=$_rc: $(tail -n 1 "$T/err")" >>"$T/result"
		grep -q ' sq: (square+0x0/' "$T/ev" && _hit=$((_hit + 1))
		_r=$((_r + 1))
	done
	[ $_hit -gt 0 ] || echo "$*: no sq event in $ROUNDS rounds" >>"$T/result"
}
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	start_bg "$T/out" "$P" "$T/stop" 4 || { echo "# fdnums did not start" >>"$T/result"; return; }
	pid=$BG_PID
	record_cmd trace "$@" -o "$T/ev" --duration 0.1 -p "$pid"
	fd_rounds "$pid" "$@"
	fd_rounds "$pid" -f "$@"
	echo "# $ROUNDS rounds, twice" >>"$T/result"
	touch "$T/stop"
	wait "$pid"
	echo "# -p: fdnums exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out" >>"$T/result"
	# launched: the handshake before main(), the rest while it runs;
	# dprobe detaches after a second and a half (time for a hit on a
	# loaded machine, ptrace engine too) and waits for it to exit
	rm -f "$T/stop"
	"$DPROBE" trace "$@" -o "$T/ev2" --duration 1.5 -- "$P" "$T/stop" 4 \
		>"$T/out2" 2>"$T/err2" &
	dp=$!
	t_wait_line "$T/out2" '' 10
	sleep 2
	touch "$T/stop"
	wait $dp
	echo "# launch: dprobe exit=$?" >>"$T/result"
	grep -q ' sq: (square+0x0/' "$T/ev2" ||
		echo "launch: no sq event" >>"$T/result"
	sed 's/^/> /' "$T/out2" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<EOF2
# $ROUNDS rounds, twice
# -p: fdnums exit=0
> fdnums: ready
> fdnums: ok (4 threads, calls made, every open at the lowest free number)
# launch: dprobe exit=0
> fdnums: ready
> fdnums: ok (4 threads, calls made, every open at the lowest free number)
EOF2
}
