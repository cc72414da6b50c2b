# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="syscalls: events without the kernel, from the ptrace engine's syscall stops, beside a probe"
# exitcode 3: work(3), then exit(3), which glibc makes exit_group(3):
# its entry is seen, its exit never happens; the one-threaded program
# never calls exit (the glob's other match).  The syscall events take the
# ptrace engine on auto; the agent pass is not run (an error there,
# tested below).
prog=exitcode
args=3
levels=O2
engines="auto ptrace"
defs='p:w work a=%di:s64
syscalls:sys_enter_exit*
syscalls:sys_exit_exit_group'
opts="--filter sys_enter_exit_group=error_code==3"
expected() {
	cat <<'EOF2'
exitcode w: (work+0x0/{size:work}) a=3
exitcode sys_exit_group(error_code: 3)
# dprobe: 2 events, 0 filtered, 0 missed, 0 lost
# exit=3
EOF2
}
case_check() {
	# a name no system call has, and the in-process engine named
	"$DPROBE" trace -e 'syscalls:sys_enter_nosuch' -- "$P" 1 2>"$T/err1"
	[ $? = 1 ] || { echo "syscalls:sys_enter_nosuch accepted"; return 1; }
	grep -q 'no syscall event has that name' "$T/err1" ||
		{ cat "$T/err1"; return 1; }
	"$DPROBE" trace --engine agent -e 'syscalls:sys_enter_exit_group' \
		-- "$P" 1 2>"$T/err2"
	[ $? = 1 ] || { echo "--engine agent accepted"; return 1; }
	grep -q 'made by the ptrace engine, not --engine agent' "$T/err2" ||
		{ cat "$T/err2"; return 1; }
}
