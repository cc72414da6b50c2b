# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f and statically linked children (fork+execv, system, posix_spawn): traced on every engine, the agent handing them to the ptrace engine'
# launch static ST, ST the same program linked with -static (see
# launch.c): the parent calls work(1); a fork child execv()s ST for
# work(2); system() runs sh -c, which execs ST for work(3); posix_spawn
# starts ST for work(4) (glibc's child execs where the agent does not
# see it: ST waits until a tracer has it, at most 5 s); the parent
# calls work(5).  Every child is waited for, so the calls come in that
# order; returns into say() (a * 10 + 1).  The places name each file:
# w/wr the dynamic program, ws/wsr the static one.  Processes numbered
# by first event: the parent [1], then [2], [3], [4], one per child.
# The in-process engine cannot be in a static program: with -f it hands
# each one to the ptrace engine, before the exec where the agent sees
# it (execv, and sh's execve) and as soon as its image is gone where it
# does not (posix_spawn), and says so on stderr; the events are the
# same on every engine.  On auto the session runs on the in-process
# engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=launch
defs='p:w {bin}:work a=%di:s64
r:wr {bin}:work ret=$retval:s64
p:ws {bin@S}:work a=%di:s64
r:wsr {bin@S}:work ret=$retval:s64'
case_run() {
	S=$(build_prog launch static) || { echo 125 >"$T/rc"; return 1; }
	DPROBE_VERBOSE=1 dp_trace -f -- "$P" static "$S"
}
events_by=numbered_events
case_check() {
	engine_check || return 1
	[ "${DPROBE_ENGINE:-auto}" = ptrace ] && return 0
	n=$(grep -c 'traced by the ptrace engine' "$T/stderr")
	[ "$n" = 3 ] && return 0
	echo "the in-process engine handed $n static children to the ptrace engine, not 3"
	return 1
}
expected() {
	echo "[1] launch w: (work+0x0/{size:work}) a=1"
	echo "[1] launch wr: ({retsite:say:work} <- work) ret=11"
	for p in 2 3 4; do
		echo "[$p] launch ws: (work+0x0/{size@S:work}) a=$p"
		echo "[$p] launch wsr: ({retsite@S:say:work} <- work) ret=${p}1"
	done
	echo "[1] launch w: (work+0x0/{size:work}) a=5"
	echo "[1] launch wr: ({retsite:say:work} <- work) ret=51"
	cat <<'EOF2'
> launch: parent work(1) = 11
> launch: static work(2) = 21
> launch: fork child ok
> launch: system work(3) = 31
> launch: system child ok
> launch: late work(4) = 41
> launch: posix_spawn child ok
> launch: parent work(5) = 51
# dprobe: 10 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
