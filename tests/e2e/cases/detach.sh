# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='SIGINT to dprobe at a random moment, 50 times: the busy target finishes correctly'
# busy.c: 4 threads x 1,000,000 calls of mix() -> step(), entry and
# return probes on both, so at any moment threads are stopped at a
# breakpoint, running a displaced instruction out of line, or inside a
# function whose return address is a trampoline.  Each round: start
# busy, attach with -p, wait 0-300 ms, let the threads go, wait 0-300 ms,
# SIGINT.  dprobe must exit 0 (-p) within the timeout, and busy must
# still compute every sum right ("sum ok": no call lost, repeated or
# given a wrong register or return value), find its code bytes as they
# were ("code intact") and exit 0.  Traced, 8 million hits take far
# longer than 300 ms, so the interrupt always lands in the middle; once
# detached the rest runs at full speed.  Failures are counted by kind.
prog=busy
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
ROUNDS=${E2E_DETACH_ROUNDS:-50}
defs='p:mix mix t=%di:s64 i=%si:s64
r:mixret mix ret=$retval:s64
p:step step t=%di:s64
r:stepret step ret=$retval:s64'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/rounds"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		go=$T/go.$r
		out=$T/busy.$r
		start_bg "$out" "$P" "$go" 4 1000000 "$T/done.$r" ||
			{ echo "round $r: busy did not start" >>"$T/rounds"; r=$((r + 1)); continue; }
		pid=$BG_PID
		"$DPROBE" trace "$@" -o /dev/null -p "$pid" 2>"$T/stderr.$r" &
		dp=$!
		sleep "0.$(printf %03d "$(rand 300)")"
		touch "$go"
		sleep "0.$(printf %03d "$(rand 300)")"
		kill -INT $dp
		# dprobe must be gone within 30 s of the signal
		if ! t_wait_gone $dp 30; then
			echo "round $r: dprobe still running 30 s after SIGINT" >>"$T/rounds"
			kill -9 $dp
		fi
		wait $dp
		drc=$?
		touch "$T/done.$r"
		[ $drc = 0 ] || echo "round $r: dprobe exit=$drc" >>"$T/rounds"
		if ! t_wait_gone "$pid" 30; then
			{
				echo "round $r: busy still running 30 s after the detach"
				grep -E '^(State|TracerPid)' "/proc/$pid/status" | tr '\n' ' '
				echo
			} >>"$T/rounds"
			kill -9 "$pid"
		fi
		wait "$pid"
		brc=$?
		[ $brc = 0 ] || echo "round $r: busy exit=$brc" >>"$T/rounds"
		n=$(grep -c 'sum ok' "$out")
		[ "$n" = 4 ] || echo "round $r: $n of 4 sums ok: $(grep -v 'sum ok' "$out" | tr '\n' ' ')" >>"$T/rounds"
		grep -q 'code intact' "$out" || echo "round $r: $(grep CHANGED "$out" | tr '\n' ' ')" >>"$T/rounds"
		r=$((r + 1))
	done
}
case_result() {
	cat "$T/rounds"
	echo "# $ROUNDS rounds"
}
expected() {
	echo "# $ROUNDS rounds"
}
