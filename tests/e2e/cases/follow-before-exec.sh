# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f: calls in vfork and posix_spawn children before their exec are the children'"'"'s events, not the parent'"'"'s'
# launch shared: the parent calls work(1); a vfork child calls work(2)
# from shared() while it borrows the parent's memory (and its thread's
# stack and TLS), then execl()s the program again (execve in libc),
# which calls work(3) in the same process; the parent, which waited,
# calls work(4); posix_spawn's child (glibc: a clone sharing the
# parent's memory) calls execve, and the program calls work(5); the
# parent calls work(6).  Probes: work's entry and return (a * 10 + 1,
# into say(), but work(2)'s into shared()), and libc's execve with the
# path (the program's own, run by its path: {bin}).  Processes are
# numbered by their first event: the parent [1], the vfork child [2]
# for work(2), its execve and work(3) (an exec keeps the pid), the
# posix_spawn child [3] for its execve and work(5).  Before its exec a
# child is a process of its own that only shares memory with its
# parent: its hits are its events, with its pid, as the ptrace engine
# (and the kernel's uprobes) report them; its comm is still "launch".
levels=O2	# process trees: the compiler level changes nothing there
prog=launch
# On the in-process engine the child runs on its parent's stack and
# thread memory until its exec: the agent tells it from the parent while
# the parent spawns (spawn.c) and records its hits into a ring claimed
# for the child's tid, so they are the child's.
defs='p:w {bin}:work a=%di:s64
r:wr {bin}:work ret=$retval:s64
p:ex libc.so.6:execve path=+0(%di):string'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- "$P" shared
}
sized_events() {
	numbered_events | sed 's/ (execve+0x0\/0x[0-9a-f]*) / (execve+0x0\/SIZE) /'
}
events_by=sized_events
case_check() {
	engine_check
}
expected() {
	for ap in 1:1 2:2 x:2 3:2 4:1 x:3 5:3 6:1; do
		a=${ap%:*}
		p=${ap#*:}
		if [ "$a" = x ]; then
			echo "[$p] launch ex: (execve+0x0/SIZE) path=\"{bin}\""
			continue
		fi
		site='{retsite:say:work}'
		[ "$a" = 2 ] && site='{retsite:shared:work}'
		echo "[$p] launch w: (work+0x0/{size:work}) a=$a"
		echo "[$p] launch wr: ($site <- work) ret=$((a * 10 + 1))"
	done
	cat <<'EOF2'
> launch: parent work(1) = 11
> launch: vexec work(3) = 31
> launch: vfork child ok
> launch: parent work(4) = 41
> launch: spawn work(5) = 51
> launch: posix_spawn child ok
> launch: parent work(6) = 61
# dprobe: 14 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
