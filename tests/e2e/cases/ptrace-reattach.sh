# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='ptrace engine: attach to a running 2-thread process and detach, 30 times; its mappings end as they began'
# spin.c: 2 threads calling square() and twice() until a stop file
# appears, checking every result, and at the end their code bytes.  The
# ptrace engine maps a page of slots near the code (square's first
# instruction is a %rip-relative store, run out of line) and a trampoline
# page for the return probe; every detach must unmap them (a `dprobe
# mount` re-arms by detaching and attaching again).  Each round traces
# for 0.5 s (so threads are stopped at breakpoints, in slots and inside
# twice() with its return address hijacked when the detach comes), exits
# 0 with entry events and says nothing on stderr but its summary, and
# return events come (0.5 s: under make test's load an attach
# may take most of 0.2 s before the first hit).
# /proc/PID/maps read before the first round and after the last must be
# the same lines (so the same count), and spin must end with every result
# right and its code intact.
prog=spin
levels=O2
engines='ptrace'
ROUNDS=${E2E_REATTACH_ROUNDS:-30}
defs='p:sq square i=%di:s64
r:tr twice ret=$retval:s64'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	start_bg "$T/out" "$P" "$T/stop" 2 || { echo "# spin did not start" >>"$T/result"; return; }
	pid=$BG_PID
	cat "/proc/$pid/maps" >"$T/maps.before"
	r=0 ntr=0
	while [ $r -lt "$ROUNDS" ]; do
		record_cmd trace --engine ptrace "$@" -o "$T/ev" --duration 0.5 -p "$pid"
		timeout -k 5 "$TMO" "$DPROBE" trace --engine ptrace "$@" \
			-o "$T/ev" --duration 0.5 -p "$pid" 2>"$T/err"
		rc=$?
		[ $rc = 0 ] || echo "round $r: exit=$rc" >>"$T/result"
		grep -v '^dprobe: [0-9]* events, ' "$T/err" | sed "s/^/round $r: /" >>"$T/result"
		grep -q ' sq: (square+0x0/' "$T/ev" ||
			echo "round $r: no sq event" >>"$T/result"
		grep -q ' tr: (' "$T/ev" && ntr=$((ntr + 1))
		r=$((r + 1))
	done
	# a round may end before any return of twice() is seen (slow
	# machines, sanitizers): return events are required, not in each round
	[ "$ntr" -gt 0 ] || echo "# no tr event in any round" >>"$T/result"
	cat "/proc/$pid/maps" >"$T/maps.after"
	{
		echo "# $ROUNDS rounds"
		echo "# mappings: $(wc -l <"$T/maps.before") before, $(wc -l <"$T/maps.after") after"
		diff "$T/maps.before" "$T/maps.after" | grep '^[<>]' | sed 's/^/# maps: /'
	} >>"$T/result"
	touch "$T/stop"
	wait "$pid"
	echo "# spin exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	n=$(wc -l <"$T/maps.before")
	cat <<EOF2
# $ROUNDS rounds
# mappings: $n before, $n after
# spin exit=0
> spin: ready
> spin: ok (2 threads, calls made)
EOF2
}
