# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='without -f: calls in vfork and posix_spawn children before their exec are not events'
# launch shared (see follow-before-exec): the parent calls work(1),
# work(4) and work(6); a vfork child calls work(2) and execve in the
# parent's memory, posix_spawn's child calls execve there too, and the
# programs they exec call work(3) and work(5).  Without -f only the
# parent's calls are events (returns into say(), a * 10 + 1); the
# parent itself never calls execve.  A child is another process, not
# followed, even while it runs on the parent's probed code and memory.
levels=O2	# process trees: the compiler level changes nothing there
prog=launch
# On the in-process engine the child runs on the parent's stack and
# thread memory: the agent tells them apart while the parent spawns
# (spawn.c).
defs='p:w work a=%di:s64
r:wr work ret=$retval:s64
p:ex libc.so.6:execve path=+0(%di):string'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -- "$P" shared
}
case_check() {
	engine_check
}
expected() {
	for a in 1 4 6; do
		echo "launch w: (work+0x0/{size:work}) a=$a"
		echo "launch wr: ({retsite:say:work} <- work) ret=$((a * 10 + 1))"
	done
	cat <<'EOF2'
> launch: parent work(1) = 11
> launch: vexec work(3) = 31
> launch: vfork child ok
> launch: parent work(4) = 41
> launch: spawn work(5) = 51
> launch: posix_spawn child ok
> launch: parent work(6) = 61
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
