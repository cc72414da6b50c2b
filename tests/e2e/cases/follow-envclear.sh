# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f and children exec'"'"'d with an empty environment (execve, env -i): they run intact and are traced on every engine'
# launch env: the parent calls work(1); a fork child calls work(2),
# then execve()s the program with an empty environment, which calls
# work(3) (same process); the parent calls work(4); a fork child execs
# "env -i SELF child envi 5", env(1) execs the program with an empty
# environment for work(5); the parent calls work(6).  The parent waits
# for each child, so the calls come in that order; returns into say()
# (a * 10 + 1).  Processes numbered by first event: parent [1], the
# first fork child [2] (work(2) and work(3)); the second child [3]
# (work(5)).
# An empty environment drops the LD_PRELOAD that brings the agent back
# after an exec: before those two execs (the program's execve, env's
# execvp) the agent hands the process to the ptrace engine, which
# places the probes in the new image before it runs, and dprobe says so
# once each.  The ptrace engine follows every exec itself.  On auto
# this must run on the in-process engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=launch
defs='p:w {bin}:work a=%di:s64
r:wr {bin}:work ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- "$P" env
}
events_by=numbered_events
case_check() {
	engine_check || return 1
	[ "${DPROBE_ENGINE:-auto}" = ptrace ] && return 0
	n=$(grep -c 'an environment without the agent.s LD_PRELOAD: traced by the ptrace engine$' "$T/stderr")
	[ "$n" = 2 ] && return 0
	echo "the in-process engine handed $n empty-environment execs to the ptrace engine, not 2"
	return 1
}
expected() {
	for ap in 1:1 2:2 3:2 4:1 5:3 6:1; do
		a=${ap%:*}
		p=${ap#*:}
		echo "[$p] launch w: (work+0x0/{size:work}) a=$a"
		echo "[$p] launch wr: ({retsite:say:work} <- work) ret=$((a * 10 + 1))"
	done
	cat <<'EOF2'
> launch: parent work(1) = 11
> launch: fork work(2) = 21
> launch: noenv work(3) = 31 (empty environment)
> launch: fork child ok
> launch: parent work(4) = 41
> launch: envi work(5) = 51 (empty environment)
> launch: env -i child ok
> launch: parent work(6) = 61
# dprobe: 12 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
