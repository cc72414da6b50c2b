# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='ptrace engine: no free spot below a non-PIE program: the slot page goes above it, never on page 0'
# lowspots.c (non-PIE: code at 0x400000) takes the 1 MiB-aligned spots
# 0x100000..0x300000 with PROT_NONE pages before it says "ready", then
# calls tick() until a stop file appears.  tick's first instruction is
# a %rip-relative store, run out of line from a slot page within rel32
# reach.  The engine's walk down finds no room and must go up: attaching
# succeeds with events (it used to map page 0 in a root process, take
# the address 0 for a failure and stop with "Cannot allocate memory"),
# the page is gone after the detach (the maps are as before), and the
# program ends with every result right.
prog=lowspots
variant=nopie
levels=O2
engines='ptrace'
defs='p:t tick i=%di:s64'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	start_bg "$T/out" "$P" "$T/stop" || { echo "# lowspots did not start" >>"$T/result"; return; }
	pid=$BG_PID
	cat "/proc/$pid/maps" >"$T/maps.before"
	record_cmd trace --engine ptrace "$@" -o "$T/ev" --duration 0.3 -p "$pid"
	timeout -k 5 "$TMO" "$DPROBE" trace --engine ptrace "$@" -o "$T/ev" \
		--duration 0.3 -p "$pid" 2>"$T/err"
	echo "# exit=$?" >>"$T/result"
	grep -v '^dprobe: [0-9]* events, ' "$T/err" >>"$T/result"
	grep -q ' t: (tick+0x0/' "$T/ev" || echo "# no t event" >>"$T/result"
	cat "/proc/$pid/maps" >"$T/maps.after"
	diff "$T/maps.before" "$T/maps.after" | grep '^[<>]' | sed 's/^/# maps: /' >>"$T/result"
	touch "$T/stop"
	wait "$pid"
	echo "# lowspots exit=$?" >>"$T/result"
	sed 's/^/> /' "$T/out" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# exit=0
# lowspots exit=0
> lowspots: ready (3 spots taken)
> lowspots: ok
EOF2
}
