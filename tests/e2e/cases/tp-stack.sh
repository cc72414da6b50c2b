# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--stack on an application tracepoint: the user stack from the function that fired it, as the kernel's stacks of its tracepoints start"
# tpoints --once 2 calls tick_once(0) and tick_once(1), each firing
# tick.  The stack starts in tick_once (the return from the
# tracepoint's out-of-line call there), then main: libdprobe's probe
# and the tracepoint's own __dp_tp_call_tick are not in it.  The walk
# follows frame pointers: at -O0 only (at -O2 tick_once has none, and
# its first instruction must stay the tracepoint's nop, tp-kprobe).
prog=tpoints
engines='auto agent'
levels=O0
defs='tp:tick'
args='--once 2'
opts=-g
events_by=stack_events
# each frame as " => NAME", down to main
stack_events() {
	norm_trace <"$T/events" | awk '
		/^BADLINE:  => / {
			if (cut)
				next
			f = substr($0, 14); sub(/\+0x.*/, "", f)
			print " => " f
			if (f == "main")
				cut = 1
			next
		}
		{ cut = 0; print }'
}
expected() {
	for i in 0 1; do
		echo "tpoints tick: i=$i"
		echo "tpoints <user stack trace>"
		echo " => tick_once"
		echo " => main"
	done
	echo "> tpoints: sum 1"
	echo "# dprobe: 2 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
}
