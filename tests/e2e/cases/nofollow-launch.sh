# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='without -f: vfork+exec, posix_spawn, system() and popen() children run intact and record nothing'
# launch.c (no argument, see follow-launch): the parent calls work(1)
# and work(6), its children work(2) to work(5).  Without -f only the
# parent's two calls are events (returns into say(), a * 10 + 1).  The
# children inherit the parent's environment (and with it the in-process
# engine's LD_PRELOAD, which the agent must take out of it) and run the
# same program; none may record anything, and each must print its line
# as untraced.  On auto this runs on the in-process engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=launch
defs='p:w work a=%di:s64
r:wr work ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -- "$P"
}
case_check() {
	engine_check
}
expected() {
	for a in 1 6; do
		echo "launch w: (work+0x0/{size:work}) a=$a"
		echo "launch wr: ({retsite:say:work} <- work) ret=$((a * 10 + 1))"
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
# dprobe: 4 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
