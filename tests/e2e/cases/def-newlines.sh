# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-e with newlines: each line is a definition of its own, as in a write to kprobe_events'
# The kernel's kprobe_events takes each line of a write as a command.
# One -e holding an entry and a return probe of work() (two lines) arms
# both: waiter --ticks 3 0 calls work(1..3) from main (work(i) = i * i),
# so three entries and three returns.  Then one -e whose second line is
# bad (%foo is no register): the kernel's error for that line, its caret
# under %foo, exit status 1, and the program is not run.
prog=waiter
defs=
TWO='p:w work i=%di:s64
r:wr work ret=$retval:s64'
BAD='p:w work i=%di:s64
p:b work %foo'
case_run() {
	record_cmd trace -e "$TWO" -o "$T/events" -- "$P" --ticks 3 0
	timeout -k 5 "$TMO" "$DPROBE" trace -e "$TWO" -o "$T/events" \
		-- "$P" --ticks 3 0 >"$T/stdout" 2>"$T/stderr" </dev/null
	echo $? >"$T/rc"
	timeout -k 5 "$TMO" "$DPROBE" trace -e "$BAD" -o "$T/bad.events" \
		-- "$P" --ticks 3 0 >"$T/bad.out" 2>"$T/bad.err" </dev/null
	echo "# bad line: exit=$?" >"$T/notes"
	sed 's/^/# err: /' "$T/bad.err" >>"$T/notes"
	[ -s "$T/bad.out" ] && echo "# bad line: the program ran" >>"$T/notes"
}
case_result() {
	trace_result
	cat "$T/notes"
}
expected() {
	for i in 1 2 3; do
		echo "waiter w: (work+0x0/{size:work}) i=$i"
		echo "waiter wr: ({retsite:main:work} <- work) ret=$((i * i))"
	done
	cat <<'EOF2'
> waiter: ready
> waiter: 3 ticks, sum 14
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
# bad line: exit=1
# err: trace_kprobe: error: Invalid register name
# err:   Command: p:b work %foo
# err:                     ^
EOF2
}
