# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='longjmp: a return probe only on the outer frame (the longjmp comes from an unprobed callee)'
# jmp.c as in jmp.sh, with a return probe on outer only.  In the odd
# rounds inner (not probed) longjmps back to main, abandoning outer's
# frame with its return address replaced; the next round calls outer
# from the same place, at the same stack depth.  Each even round but 12
# must give exactly one return event, i * 10 + 1: 12 events.  The 12
# abandoned returns (odd rounds 1..23) are missed and must never be
# reported, not when the next call at the same stack pointer returns,
# nor later.
prog=jmp
kdiff=yes
defs='r:or outer ret=$retval:s64'
expected() {
	for i in 0 2 4 6 8 10 14 16 18 20 22 24; do
		echo "jmp or: ({retsite:main:outer} <- outer) ret=$((i * 10 + 1))"
	done
	i=0
	while [ $i -lt 25 ]; do
		if [ $i = 12 ]; then
			echo "> jmp: round 12 longjmp 100"
		elif [ $((i % 2)) = 1 ]; then
			echo "> jmp: round $i longjmp $i"
		else
			echo "> jmp: round $i returned"
		fi
		i=$((i + 1))
	done
	echo "> jmp: total 1696"
	echo "# dprobe: 12 events, 0 filtered, 12 missed, 0 lost"
	echo "# exit=0"
}
