# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='SDT probes of a program built with <sys/sdt.h>: semaphores, argument specs, $argN'
# sdt.c fires e2e:start(g_counter), e2e:args(i, -5e9(i+1), -300-i,
# 200+i, name) and e2e:glob(g_counter, -i) for i = 0..2, each only while
# its semaphore is held (the program counts what fired: 6 when args and
# glob are traced; start is not, so it never fires); g_counter goes
# 1000, 1001, 1003.  The argument specs carry
# the sizes and signs of the C types: -4@ int, -8@ long, -2@ short, 1@
# unsigned char, 8@ pointer; at -O0 they are stack slots (-20(%rbp)), at
# -O2 registers.  A second run traces e2e:start alone, whose argument
# at -O2 is g_counter(%rip): memory read through the file offset of the
# global (@+OFFS); it sees g_counter before each call adds i: 1000,
# 1000, 1001.  The first
# definition names the probe as its place and reads a string through
# $arg5; the second takes the probe's arguments as arg1..argN.  The place
# prints the site's run-time address (SITE here).
prog=sdt
kdiff=yes
defs='p:sargs sdt_e2e:args name=+0($arg5):string i=$arg1 big=$arg2 s=$arg3 c=$arg4
sdt_e2e:glob'
case_run() {
	dp_trace -- "$P"
	trace_result >"$T/first"
	defs='sdt_e2e:start'
	dp_trace -- "$P"
}
case_result() {
	{
		cat "$T/first"
		trace_result
	} | sed 's/: (0x[0-9a-f]*) /: (SITE) /'
}
expected() {
	names="zero one two"
	g=1000
	for i in 0 1 2; do
		set -- $names
		shift "$i"
		g=$((g + i))
		echo "sdt sargs: (SITE) name=\"$1\" i=$i big=$((-5000000000 * (i + 1))) s=$((-300 - i)) c=$((200 + i))"
		echo "sdt glob: (SITE) arg1=$g arg2=$((-i))"
	done
	cat <<'EOF2'
> sdt: fired 6
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
sdt start: (SITE) arg1=1000
sdt start: (SITE) arg1=1000
sdt start: (SITE) arg1=1001
> sdt: fired 3
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
