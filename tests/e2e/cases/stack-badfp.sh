# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--stack: a frame pointer that is none (unmapped, unaligned, a kernel address) ends the walk; the program runs on"
# stackbad.c calls leaf(5) three times, each with %rbp not a frame
# pointer.  At leaf's entry the stack is leaf, then main (the return
# address at [sp]); the walk from %rbp must stop at once: 1 MiB above
# the stack pointer is past the stack's top (the read faults and is
# recovered, or refused by the tracer's read), 4 KiB + 4 is not aligned,
# the kernel address is more than 16 MiB above the stack pointer.  The
# program must end as it does without dprobe.
prog=stackbad
defs='p:lf leaf x=%di'
opts=-g
events_by=stack_events
stack_events() {
	norm_trace <"$T/events" | sed -E 's/^BADLINE:  => ([^+]*)\+.*/ => \1/'
}
expected() {
	for i in 1 2 3; do
		echo "stackbad lf: (leaf+0x0/{size:leaf}) x=0x5"
		echo "stackbad <user stack trace>"
		echo " => leaf"
		echo " => main"
	done
	echo "> stackbad: ok 6"
	echo "# dprobe: 3 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
}
