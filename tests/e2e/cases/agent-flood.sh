# shellcheck shell=sh disable=SC2015,SC2016,SC2034  # A && B || C: C when either fails; defs hold literal $vars; the runner reads the settings
desc='in-process engine: another user flooding what it can see of the control channel; launch and attach still work'
# flood.c runs as nobody (setpriv) and keeps the queue of every unix
# socket whose name in /proc/net/unix mentions dprobe full of its own
# connections.  The channel used to be such a socket (an abstract name):
# the agent's connect() then waited behind the flood, the launch or
# attach failed after 10 s, and an injected agent's thread could stay
# stuck in connect().  Now it is a socket pair nobody else can reach.
# Meanwhile dprobe (agent engine) launches spin.c three times and
# attaches to a running spin three times: each run exits 0 with events
# within 15 s, and the programs finish with every result right.
prog=spin
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
engines='auto agent'
needs='root setpriv'
defs='p:sq square i=%di:s64'
# run_timed LABEL CMD...: runs CMD; notes its exit status if not 0, no
# events, or more than 15 s
run_timed() {
	_l=$1
	shift
	_t0=$(date +%s)
	"$@" 2>"$T/err"
	_rc=$?
	[ $_rc = 0 ] || echo "# $_l: exit=$_rc: $(tail -n 1 "$T/err")" >>"$T/result"
	grep -q ' sq: (square+0x0/' "$T/ev" || echo "# $_l: no events" >>"$T/result"
	[ $(($(date +%s) - _t0)) -le 15 ] || echo "# $_l: took more than 15 s" >>"$T/result"
}
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	# the flooder's files where nobody can reach them
	D=$(mktemp -d /tmp/dpflood.XXXXXX) && chmod 755 "$D" &&
		gcc -O2 -o "$D/flood" "$E2E/progs/flood.c" ||
		{ echo "# cannot build flood" >>"$T/result"; return; }
	start_bg "$T/fout" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$D/flood" "$D/stop" || echo "# flood did not start" >>"$T/result"
	fpid=$BG_PID
	for r in 1 2 3; do
		rm -f "$T/stopL"
		(sleep 2; touch "$T/stopL") &
		sleeper=$!
		run_timed "launch $r" timeout -k 5 30 "$DPROBE" trace --engine agent \
			"$@" --duration 1 -o "$T/ev" -- "$P" "$T/stopL" 2 nocode
		wait $sleeper
	done >"$T/out"
	start_bg "$T/sout" "$P" "$T/stopA" 2 || echo "# spin did not start" >>"$T/result"
	pid=$BG_PID
	for r in 1 2 3; do
		run_timed "attach $r" timeout -k 5 30 "$DPROBE" trace --engine agent \
			"$@" --duration 0.5 -o "$T/ev" -p "$pid"
	done
	touch "$T/stopA"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	kill -0 "$pid" 2>/dev/null && echo "# spin hangs" >>"$T/result" && kill -9 "$pid"
	wait "$pid"
	echo "# spin exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/sout" >>"$T/result"
	touch "$D/stop"
	wait "$fpid"
	rm -rf "$D"
	echo "# launches: $(grep -c 'spin: ok' "$T/out")" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# spin exit=0
> spin: ready
> spin: ok (2 threads, calls made)
# launches: 3
EOF2
}
