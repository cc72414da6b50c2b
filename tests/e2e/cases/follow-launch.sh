# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f follows vfork+exec, posix_spawn, system() and popen() children, each a process of its own'
# launch.c (no argument): the parent calls work(1); a vfork child execs
# the program again for work(2); posix_spawn runs it for work(3);
# system() and popen() run it through sh -c for work(4) and work(5);
# the parent calls work(6).  The parent waits for each child, so the
# calls come in that order, each an entry event and a return into say()
# (work(a) returns a * 10 + 1).  Every process is "launch" (the program
# is run by its path).
# The places are {bin}:work (PATH:SYM), not plain "work": the sh of
# system() and popen() is an image without it, where a PATH place is
# simply absent (follow-bare-symbol: a plain symbol).
# Processes are numbered by their first event: the parent [1], then one
# new process per child, [2] to [5]; the parent again at the end.  The
# output is the untraced program's (each child's line, popen's line as
# the parent read it back).  On auto this must run on the in-process
# engine (DPROBE_VERBOSE=1: dprobe says which engine it took).
levels=O2	# process trees: the compiler level changes nothing there
prog=launch
defs='p:w {bin}:work a=%di:s64
r:wr {bin}:work ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- "$P"
}
events_by=numbered_events
case_check() {
	engine_check
}
expected() {
	for ap in 1:1 2:2 3:3 4:4 5:5 6:1; do
		a=${ap%:*}
		p=${ap#*:}
		echo "[$p] launch w: (work+0x0/{size:work}) a=$a"
		echo "[$p] launch wr: ({retsite:say:work} <- work) ret=$((a * 10 + 1))"
	done
	cat <<'EOF2'
> launch: parent work(1) = 11
> launch: vfork work(2) = 21
> launch: vfork child ok
> launch: spawn work(3) = 31
> launch: posix_spawn child ok
> launch: system work(4) = 41
> launch: system child ok
> launch: popen gave: launch: popen work(5) = 51
> launch: popen child ok
> launch: parent work(6) = 61
# dprobe: 12 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
