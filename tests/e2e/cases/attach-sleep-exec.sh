# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-p -f on a sleeping process: its sleep is not cut short, and the program it execs is traced'
# sleeper.c sleeps 2 s (timed) while dprobe attaches with -f, then execs
# itself as "sleeper child", which calls work(7) (returns 71).  Attaching
# must leave the sleep whole: the in-process engine is injected by
# running dlopen() in the sleeping thread (its restart block does not
# survive that: the sleep is made again) and finds the other threads
# without signals where they are blocked (a handler ends a sleep with
# EINTR).  The exec'd program is traced: with ptrace by following the
# exec, with the agent because the attached agent put its preload in the
# environment execv() passes on.  One event, from the child image.
prog=sleeper
levels=O2
defs='p:w work a=%di:s64'
case_run() {
	start_bg "$T/stdout" "$P" || { echo "sleeper did not start" >"$T/stdout"; echo 1 >"$T/rc"; return; }
	pid=$BG_PID
	_e=$(defs_eargs)
	eval "set -- $_e"
	record_cmd trace "$@" -f -o "$T/events" -p "$pid"
	DPROBE_VERBOSE=1 timeout -k 5 "$TMO" "$DPROBE" trace "$@" -f -o "$T/events" -p "$pid" \
		2>"$T/stderr" </dev/null
	echo $? >"$T/rc"
	wait "$pid"
}
case_check() {
	engine_check
}
expected() {
	cat <<'EOF2'
sleeper w: (work+0x0/{size:work}) a=7
> sleeper: ready
> sleeper: slept in full
> sleeper: child work(7) = 71
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
