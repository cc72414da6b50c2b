# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a kprobe on a tracepoint'"'"'s nop, placed before the program'"'"'s constructors run: both fire, whatever the order'
# tpoints --once 3 calls tick_once(0..2), whose first instruction at -O2
# is the nop of its trace_tick(i) (GCC puts the call in tick_once.cold).
# dprobe registers its probes before the program's constructors hand
# their jump table to libdprobe, so the kprobe's int3 is on the nop when
# the tracepoint's sites are enabled: the jmp goes under the kprobe, which
# runs first (its int3 is the first byte), then the tracepoint.  Both
# orders of -e give the same events: for each i, w then tick.
prog=tpoints
engines='auto agent'
levels=O2
case_run() {
	: >"$T/runs"
	for order in 1 2; do
		if [ $order = 1 ]; then
			defs='tp:tick
p:w tick_once i=%di:s32'
		else
			defs='p:w tick_once i=%di:s32
tp:tick'
		fi
		dp_trace -- "$P" --once 3
		trace_result >>"$T/runs"
	done
}
case_result() {
	cat "$T/runs"
}
case_check() {
	# the premise: tick_once starts with the 5-byte nop
	disasm "$P" tick_once | head -n 1 | grep -q '^0	nop' && return 0
	echo "tick_once does not start with the nop:"
	disasm "$P" tick_once
	return 1
}
expected() {
	for order in 1 2; do
		for i in 0 1 2; do
			echo "tpoints w: (tick_once+0x0/{size:tick_once}) i=$i"
			echo "tpoints tick: i=$i"
		done
		cat <<'EOF2'
> tpoints: sum 3
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
	done
}
