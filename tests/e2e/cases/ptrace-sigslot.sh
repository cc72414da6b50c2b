# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='ptrace engine: detach while a signal handler interrupted a slot: the slot page stays, the program survives'
# sigslot.c: the main thread calls hop() (first instruction: a
# %rip-relative store, run from a slot) while another thread sends it
# SIGUSR1.  When the tracer resumes the thread into the slot with the
# signal pending, the handler sees an interrupted %rip outside the
# program's code, creates the "held" file and waits for "release".
# dprobe is then interrupted: its detach must find the slot address in
# the handler's frame on the stack and keep the page (one line saying
# why; the maps gain that page and nothing else), for the handler returns
# into the slot once released, and the program must end with every
# result right.  An engine that unmapped the page would make it crash.
prog=sigslot
levels=O2
engines='ptrace'
defs='p:h hop i=%di:s64'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	rm -f "$T/held" "$T/release"
	start_bg "$T/out" "$P" "$T/held" "$T/release" ||
		{ echo "# sigslot did not start" >>"$T/result"; return; }
	pid=$BG_PID
	cat "/proc/$pid/maps" >"$T/maps.before"
	record_cmd trace --engine ptrace "$@" -o "$T/ev" -p "$pid"
	timeout -k 5 "$TMO" "$DPROBE" trace --engine ptrace "$@" -o "$T/ev" \
		-p "$pid" 2>"$T/err" &
	dp=$!
	i=0
	while [ ! -e "$T/held" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$T/held" ] || echo "# the handler never interrupted a slot" >>"$T/result"
	kill -INT $dp
	wait $dp
	echo "# exit=$?" >>"$T/result"
	sed -e '/^dprobe: [0-9]* events, /d' \
	    -e 's/process [0-9]*:/process PID:/' -e 's/thread [0-9]*/thread TID/' \
	    -e 's/ at 0x[0-9a-f]*$/ at ADDR/' "$T/err" >>"$T/result"
	cat "/proc/$pid/maps" >"$T/maps.after"
	diff "$T/maps.before" "$T/maps.after" | grep '^[<>]' |
		sed -e 's/^> [0-9a-f]*-[0-9a-f]* /> ADDR /' -e 's/^/# maps: /' >>"$T/result"
	touch "$T/release"
	wait "$pid"
	echo "# sigslot exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# exit=0
dprobe: process PID: 1 of 1 page(s) of slots left mapped: thread TID has a pointer to it on its stack at ADDR
# maps: > ADDR r-xp 00000000 00:00 0 
# sigslot exit=0
> sigslot: ready
> sigslot: ok
EOF2
}
