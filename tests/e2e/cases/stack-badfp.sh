# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--stack: a frame pointer that is none where main keeps one (unmapped, unaligned, a kernel address, below the stack pointer) ends the walk with [bad frame]; the program runs on"
# stackbad.c calls leaf(5) four times, each with %rbp not a frame
# pointer, from main, which keeps frame pointers.  At leaf's entry the
# stack is leaf, then main (the return address at [sp]); the walk from
# %rbp must stop at once and mark it: 1 MiB above the stack pointer is
# past the stack's top (the read faults and is recovered, or refused by
# the tracer's read), 4 KiB + 4 is not aligned, the kernel address is
# more than 16 MiB above the stack pointer, and the last is below it.
# The mark is a frame of its own, " => [bad frame]" (README, --stack).
# The program must end as it does without dprobe.
prog=stackbad
defs='p:lf leaf x=%di'
opts=-g
events_by=stack_events
stack_events() {
	norm_trace <"$T/events" |
		sed -E 's/^BADLINE:  => ([^+]*)(\+.*)?$/ => \1/'
}
expected() {
	for i in 1 2 3 4; do
		echo "stackbad lf: (leaf+0x0/{size:leaf}) x=0x5"
		echo "stackbad <user stack trace>"
		echo " => leaf"
		echo " => main"
		echo " => [bad frame]"
	done
	echo "> stackbad: ok 6"
	echo "# dprobe: 4 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
}
# --call-graph dwarf: main's CFA is %rbp + 16 at its calls, so the CFI
# asks for main's return address at a bad place: unaligned, a kernel
# address, below the stack pointer are bad frames.  1 MiB above is one
# only when the copy of the stack reached the stack's top; a copy cut at
# its size (8 KiB) says nothing past its end, which is no mark.  The
# folded stacks carry the mark as the root frame.
case_check() {
	"$DPROBE" trace --call-graph dwarf --format folded -e 'p:lf leaf' \
		-o "$T/dwarf" -- "$P" >"$T/dwarf.out" 2>"$T/dwarf.err" ||
		{ echo "dwarf run failed"; cat "$T/dwarf.err"; return 1; }
	grep -qx 'stackbad: ok 6' "$T/dwarf.out" ||
		{ echo "dwarf: the program did not end well"; cat "$T/dwarf.out"; return 1; }
	n=$(sed -n 's/^\[bad frame\];main;leaf \([0-9]*\)$/\1/p' "$T/dwarf")
	m=$(sed -n 's/^main;leaf \([0-9]*\)$/\1/p' "$T/dwarf")
	if [ "${n:-0}" -lt 3 ] || [ $((${n:-0} + ${m:-0})) -ne 4 ] ||
	   [ "$(grep -c . "$T/dwarf")" -gt 2 ]; then
		echo "dwarf: 3 or 4 stacks [bad frame];main;leaf expected"
		cat "$T/dwarf"; return 1
	fi
}
