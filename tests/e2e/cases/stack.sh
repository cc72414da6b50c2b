# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--stack: the user stack at each hit, as ftrace's <user stack trace>; --format folded; events not named have none"
# stack.c: main calls outer(i), outer middle, middle leaf(2 * (i + 1)),
# leaf returns its argument + 1; then main calls other(i).  Run with 2:
# leaf(2) returns 3, leaf(4) returns 5.  The stack at leaf's entry is
# leaf, then the return addresses in middle (read at [sp]: leaf has
# made no frame yet), outer and main (the frame-pointer chain); at its
# return the same (the function, then where it returned to).  The
# frames past main are the C library's start code, built without frame
# pointers: they are cut off here (the kernel-reference case compares
# them).  other's probe is not named by --stack: no stack after it.
prog=stack
args=2
defs='p:lf leaf x=%di
r:lr leaf $retval
p:ot other'
opts="--stack=lf,kprobes/lr"
events_by=stack_events
# the trace lines normalised; each frame as " => NAME", down to main
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
chain() {
	printf '%s\n' "stack <user stack trace>" " => leaf" " => middle" \
		" => outer" " => main"
}
expected() {
	for i in 0 1; do
		echo "stack lf: (leaf+0x0/{size:leaf}) x=0x$((2 * i + 2))"
		chain
		echo "stack lr: ({retsite:middle:leaf} <- leaf) arg1=0x$((2 * i + 3))"
		chain
		echo "stack ot: (other+0x0/{size:other})"
	done
	echo "> stack: ok 2"
	echo "# dprobe: 6 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
}
# folded: one line for leaf's stack, root first, counted (3 calls); the
# frames below main (the C library's) may differ by system, not the end
case_check() {
	"$DPROBE" trace --format folded -e 'p:lf leaf' -e 'p:ot other' \
		--stack=lf -o "$T/folded" -- "$P" 3 >/dev/null 2>"$T/folded.err" ||
		{ echo "folded run failed"; cat "$T/folded.err"; return 1; }
	n=$(grep -c . "$T/folded")
	[ "$n" = 1 ] || { echo "folded: $n lines, 1 expected"; cat "$T/folded"; return 1; }
	grep -Eq '^([^ ]+;)?main;outer;middle;leaf 3$' "$T/folded" ||
		{ echo "folded: unexpected line"; cat "$T/folded"; return 1; }
	# --format folded without --stack: every event's stack
	"$DPROBE" trace --format folded -e 'p:lf leaf' -e 'p:ot other' \
		-o "$T/folded2" -- "$P" 2 >/dev/null 2>"$T/folded2.err" ||
		{ echo "folded run failed"; cat "$T/folded2.err"; return 1; }
	if ! grep -Eq '^([^ ]+;)?main;other 2$' "$T/folded2" ||
	   ! grep -Eq '^([^ ]+;)?main;outer;middle;leaf 2$' "$T/folded2"; then
		echo "folded (all events): unexpected"; cat "$T/folded2"; return 1
	fi
	# JSON: the stack array on the named event only
	"$DPROBE" trace --json -e 'p:lf leaf' -e 'p:ot other' --stack=lf \
		-o "$T/json" -- "$P" 1 >/dev/null 2>&1 || { echo "json run failed"; return 1; }
	grep '"event":"lf"' "$T/json" | grep -Eq '"stack":\[\{"ip":"0x[0-9a-f]+","sym":"leaf\+0x0/0x[0-9a-f]+"\},\{"ip":"0x[0-9a-f]+","sym":"middle\+' ||
		{ echo "json: no stack on lf"; cat "$T/json"; return 1; }
	! grep '"event":"ot"' "$T/json" | grep -q '"stack":\[' ||
		{ echo "json: a stack on ot"; cat "$T/json"; return 1; }
	# an unknown event name is refused
	! "$DPROBE" trace -e 'p:lf leaf' --stack=nosuch -- "$P" 1 >/dev/null 2>&1 ||
		{ echo "--stack=nosuch accepted"; return 1; }
}
