# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='in-process engine: 1,000 probe locations, a program that exits: every hit counted, no hang at exit'
# many.c: fn1000 .. fn1999, each called with x = 0, then 1, then 2 (three
# rounds over a table in order), then main prints the sum of
# x * 3 + N over every call and returns 0.  One entry probe on each
# function: 3,000 events, in the program's order, and at exit the agent
# sends its miss counts while dprobe still reads the rings.  dprobe used
# to stop reading the channel then: past about 260 locations the socket
# filled, the program hung in exit() and dprobe spun at 100% CPU.  The
# run must end well within the bound below (it takes about a second);
# `dprobe stat` counts the same 3,000 hits.
prog=many
engines='auto agent'
TMO=30
case_run() {
	# one definition per function, from a file (-e @FILE)
	awk 'BEGIN { for (i = 1000; i < 2000; i++)
			printf "p:f%d fn%d x=%%di:s64\n", i, i }' >"$T/many.probes"
	dp_trace --engine agent -e "@$T/many.probes" -- "$P"
	trace_result >"$T/result.trace"
	dp_stat --engine agent -e "@$T/many.probes" -- "$P"
	# the 1,000 counts, summed, and the program's line
	awk '$2 ~ /^kprobes:f1[0-9][0-9][0-9]$/ { n++; s += $1 }
	     END { print "# stat: " n " probes, " s " hits" }' "$T/stderr" \
		>"$T/result.stat"
	echo "# stat exit=$(cat "$T/rc")" >>"$T/result.stat"
}
case_result() {
	# the place part "(fnN+0x0/0xSIZE)" holds compiler facts: dropped
	values_only <"$T/result.trace"
	cat "$T/result.stat"
}
expected() {
	r=0
	while [ $r -lt 3 ]; do
		i=1000
		while [ $i -lt 2000 ]; do
			echo "many f$i: x=$r"
			i=$((i + 1))
		done
		r=$((r + 1))
	done
	awk 'BEGIN { for (r = 0; r < 3; r++) for (i = 1000; i < 2000; i++)
			s += r * 3 + i
		     printf "> many: sum %d\n", s }'
	echo "# dprobe: 3000 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
	echo "# stat: 1000 probes, 3000 hits"
	echo "# stat exit=0"
}
