# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='longjmp past frames with pending return probes'
# jmp.c: rounds i = 0..24.  Even i (but 12): outer(i) -> inner(i) both
# return: entries oe, ie, then ir (i*10, into outer) and or (i*10+1, into
# main).  Odd i: inner longjmps: only oe and ie, the two pending returns
# are abandoned.  Round 12: deeper(5) .. deeper(0), then longjmp: six
# entries, no return.  Twelve abandoned frames of outer and of inner
# exceed the default MAXACTIVE (10): unless stale instances are dropped,
# the last even rounds would lose their return events, so the return
# events of rounds 14..24 check that.  Each abandoned pending return is
# counted as missed (docs/dprobe-trace.md: "pending returns that never
# came back"): 12 odd rounds x 2 + 6 deeper frames = 30.
prog=jmp
kdiff=yes
defs='p:oe outer i=%di:s64
r:or outer ret=$retval:s64
p:ie inner i=%di:s64
r:ir inner ret=$retval:s64
p:de deeper d=%di:s64
r:dr deeper ret=$retval:s64'
expected() {
	i=0
	while [ $i -lt 25 ]; do
		if [ $i = 12 ]; then
			for d in 5 4 3 2 1 0; do
				echo "jmp de: (deeper+0x0/{size:deeper}) d=$d"
			done
		else
			echo "jmp oe: (outer+0x0/{size:outer}) i=$i"
			echo "jmp ie: (inner+0x0/{size:inner}) i=$i"
			if [ $((i % 2)) = 0 ]; then
				echo "jmp ir: ({retsite:outer:inner} <- inner) ret=$((i * 10))"
				echo "jmp or: ({retsite:main:outer} <- outer) ret=$((i * 10 + 1))"
			fi
		fi
		i=$((i + 1))
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
	# 12 even rounds x 4 + 12 odd x 2 + 6
	echo "> jmp: total 1696"
	echo "# dprobe: 78 events, 0 filtered, 30 missed, 0 lost"
	echo "# exit=0"
}
