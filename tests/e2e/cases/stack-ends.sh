# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--stack: ordinary stacks (main thread, a thread, qsort's callback, a signal handler, deeper than kept) carry no [bad frame], frame pointers and DWARF"
# stackends.c calls leaf five times: from middle in the main thread and
# in a thread, from qsort's comparison, from a SIGUSR1 handler, and 41
# calls deep.  Each stack ends where it naturally ends (the C library's
# start code and a thread's start, where frame pointers stop at %rbp 0
# or at code that keeps none; a signal frame; the deepest stack kept,
# 32 frames), never with the bad-frame mark.  At -O0 the program keeps
# frame pointers, at -O2 not: neither is marked.  Each stack is
# summarised here by how it ends: "end" or "[bad frame]".
prog=stackends
defs='p:lf leaf x=%di
r:lr leaf $retval'
opts=-g
events_by=stack_ends
# the events, each stack as one line saying how it ends
stack_ends() {
	norm_trace <"$T/events" | awk '
		/^BADLINE:  => / { last = substr($0, 14); next }
		{ if (last != "") print " ends: " (last == "[bad frame]" ? last : "end")
		  last = ""; print }
		END { if (last != "") print " ends: " (last == "[bad frame]" ? last : "end") }'
}
# leaf's argument and its caller, call by call
calls="2:middle 4:middle 3:cmp 10:on_usr1 0:deep"
expected() {
	for c in $calls; do
		x=${c%%:*}
		echo "stackends lf: (leaf+0x0/{size:leaf}) x=0x$(printf %x "$x")"
		echo "stackends <user stack trace>"
		echo " ends: end"
		echo "stackends lr: ({retsite:${c#*:}:leaf} <- leaf) arg1=0x$(printf %x $((x + 1)))"
		echo "stackends <user stack trace>"
		echo " ends: end"
	done
	echo "> stackends: ok"
	echo "# dprobe: 10 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
}
# the same with --call-graph dwarf, where the CFI tells the outermost
# frame: the main thread's stacks end at _start, the thread's at its
# clone, the deep one at the 32 frames kept
case_check() {
	"$DPROBE" trace --call-graph dwarf -e 'p:lf leaf' -e 'r:lr leaf' \
		-o "$T/dwarf" -- "$P" >"$T/dwarf.out" 2>"$T/dwarf.err" ||
		{ echo "dwarf run failed"; cat "$T/dwarf.err"; return 1; }
	ends=$(awk '/^ => / { last = $2; next }
		/<user stack trace>/ { if (last != "") print last; last = "" }
		END { if (last != "") print last }' "$T/dwarf" |
		sed -E 's/\+0x.*//' | tr '\n' ' ')
	echo "$ends" | grep -Eq '^(_start ){2}((__)?clone3? ){2}(_start ){4}(deep ){2}$' ||
		{ echo "dwarf: stacks end at: $ends"; cat "$T/dwarf"; return 1; }
}
