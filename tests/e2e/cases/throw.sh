# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='C++ exceptions thrown through frames with pending return probes'
# throw.cc: rounds i = 0..5: main -> middle(i) -> thrower(i).  Odd i:
# thrower throws, the unwinder walks through thrower's and middle's
# frames, whose return addresses a return probe has replaced; the
# program must catch the exception as it does untraced ("caught odd"),
# and the two returns are never reported.  Even i: thrower returns i*10
# (into middle), middle i*10+1 (into main).  6 x 2 entries + 3 x 2
# returns; the 3 x 2 returns the exceptions abandon count as missed
# (docs/dprobe-trace.md).
# The functions are named by their mangled names, as in the ELF symbol
# table (long middle(long) is _Z6middlel), and shown so (--no-demangle:
# dwarf-cxx covers readable names).
# No kernel comparison: with uprobe_events return probes on these two
# functions (Linux 6.18) the first throw ends in std::terminate, because
# the unwinder finds the kernel's return trampoline where the return
# address was.
prog=throw
needs=g++
kdiff=no
defs='p:me _Z6middlel i=%di:s64
r:mr _Z6middlel ret=$retval:s64
p:te _Z7throwerl i=%di:s64
r:tr _Z7throwerl ret=$retval:s64'
opts=--no-demangle
expected() {
	for i in 0 1 2 3 4 5; do
		echo "throw me: (_Z6middlel+0x0/{size:_Z6middlel}) i=$i"
		echo "throw te: (_Z7throwerl+0x0/{size:_Z7throwerl}) i=$i"
		if [ $((i % 2)) = 0 ]; then
			echo "throw tr: ({retsite:_Z6middlel:_Z7throwerl} <- _Z7throwerl) ret=$((i * 10))"
			echo "throw mr: ({retsite:main:_Z6middlel} <- _Z6middlel) ret=$((i * 10 + 1))"
		fi
	done
	for i in 0 1 2 3 4 5; do
		if [ $((i % 2)) = 0 ]; then
			echo "> throw: round $i returned"
		else
			echo "> throw: round $i caught odd"
		fi
	done
	echo "> throw: total 363"
	echo "# dprobe: 18 events, 0 filtered, 6 missed, 0 lost"
	echo "# exit=0"
}
