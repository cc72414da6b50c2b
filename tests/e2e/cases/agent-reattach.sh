# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='in-process engine: attach to a running 4-thread process and detach, 60 times'
# spin.c (see kill-dprobe): 4 threads calling square() and twice() until
# a stop file appears, checking every result and, at the end, their
# code.  dprobe attaches with the agent engine (injected the first time,
# found loaded after), traces for a tenth of a second and detaches, 60
# times (E2E_REATTACH_ROUNDS): each round exits 0 with events, and the
# program ends with every result right and its code intact.
prog=spin
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
engines='auto agent'
ROUNDS=${E2E_REATTACH_ROUNDS:-60}
defs='p:sq square i=%di:s64
r:tr twice ret=$retval:s64'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	start_bg "$T/out" "$P" "$T/stop" 4 || { echo "# spin did not start" >>"$T/result"; return; }
	pid=$BG_PID
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		"$DPROBE" trace --engine agent "$@" -o "$T/ev" --duration 0.1 \
			-p "$pid" 2>"$T/err"
		rc=$?
		[ $rc = 0 ] || echo "round $r: exit=$rc: $(tail -n 1 "$T/err")" >>"$T/result"
		grep -q ' sq: (square+0x0/' "$T/ev" ||
			echo "round $r: no sq event" >>"$T/result"
		grep -q ' tr: (' "$T/ev" ||
			echo "round $r: no tr event" >>"$T/result"
		r=$((r + 1))
	done
	echo "# $ROUNDS rounds" >>"$T/result"
	touch "$T/stop"
	wait "$pid"
	echo "# spin exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<EOF2
# $ROUNDS rounds
# spin exit=0
> spin: ready
> spin: ok (4 threads, calls made)
EOF2
}
