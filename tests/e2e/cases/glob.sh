# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='globs over function names: an event per match with the kernel'"'"'s name, one multi-probe event, errors'
# many.c calls fn1000 .. fn1999 three times each, with x = 0, 1, 2, in
# that order.  'p:g/ fn100?' matches fn1000 .. fn1009: ten events named
# as the kernel names a probe given no name (p_fn1000_0), 30 hits.
# 'r:g/ret fn199*' is one event with a return probe on each of
# fn1990 .. fn1999: 30 hits of g/ret.  A glob that matches nothing is
# an error naming the glob, with nothing run; so is a library that the
# program does not load.
prog=many
levels=O2
sort_events=1
case_run() {
	dp_trace -e 'p:g/ fn100? x=%di:s64' -e 'r:g/ret fn199*' -- "$P" || return
	trace_result >"$T/result.trace"
	"$DPROBE" trace -e 'p:g/ nosuch_fn*' -- "$P" >"$T/out" 2>"$T/err"
	echo "# no match: exit=$? ran=$(grep -c sum "$T/out")" \
		"said=$(grep -c 'nosuch_fn\*: no function of many matches' "$T/err")" \
		>"$T/result.err"
	"$DPROBE" trace -e 'p:g/ libnosuch.so:f*' -- "$P" >"$T/out" 2>"$T/err"
	echo "# no file: exit=$? said=$(grep -c 'libnosuch.so: no such file' "$T/err")" \
		>>"$T/result.err"
}
case_result() {
	values_only <"$T/result.trace" | sed "s/^many ret: .*/many ret:/"
	cat "$T/result.err"
}
expected() {
	{
		for r in 0 1 2; do
			i=1000
			while [ $i -lt 1010 ]; do
				echo "many p_fn${i}_0: x=$r"
				i=$((i + 1))
			done
			i=1990
			while [ $i -lt 2000 ]; do
				echo "many ret:"
				i=$((i + 1))
			done
		done
		awk 'BEGIN { for (r = 0; r < 3; r++) for (i = 1000; i < 2000; i++)
				s += r * 3 + i
			     printf "> many: sum %d\n", s }'
		echo "# dprobe: 60 events, 0 filtered, 0 missed, 0 lost"
		echo "# exit=0"
	} | LC_ALL=C sort
	echo "# no match: exit=1 ran=0 said=1"
	echo "# no file: exit=1 said=1"
}
