# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='PATH:OFFSET(REF): the counter goes up at attach, down at detach, and a fork child counts only if followed'
# semaphore.c's counter ("semaphore", in .probes) as refctr.sh, where
# the kernel's behaviour is checked; here what the kernel has no
# equivalent for.
#   1. -p: the program prints the counter it starts with (0), dprobe
#      attaches (work's first byte becomes an int3: armed, so the counter
#      was incremented just before), work(1) sees 1; SIGINT to dprobe,
#      which detaches and exits 0; then work(2) sees 0 again.  One event.
#   2. "semaphore fork" without -f: work(1) and work(3) in the parent see
#      1; the fork child inherits the count with the memory, but its
#      probes are taken out when dprobe lets it go, and the count with
#      them: its work(2) sees 0 and is no event.
#   3. the same with -f: the child keeps its probe and its count, as
#      under the kernel (which traces every process): 1, 1, 1 and three
#      events.
# Built without PIE: the place prints work's link-time address.
prog=semaphore
variant=nopie
defs='p:w {bin}:{off:work}({off:semaphore}) i=%di:s64'
# wait_line FILE TEXT: wait (10 s at most) until FILE holds TEXT.
wait_line() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		[ $_i -ge 1000 ] && return 1
		_i=$((_i + 1))
		sleep 0.01
	done
}
# shellcheck disable=SC2120  # "$@" is the -e list it sets itself
attach_run() {
	start_bg "$T/stdout" "$P" "$T/go1" "$T/go2" ||
		{ echo "semaphore did not start" >"$T/why"; return 1; }
	pid=$BG_PID
	_e=$(defs_eargs)
	eval "set -- $_e"
	record_cmd trace "$@" -p "$pid"
	# not under timeout(1), which would SIGKILL a dprobe still exiting
	# 5 s after the SIGINT it passes on (a loaded machine, ASan)
	"$DPROBE" trace "$@" -o "$T/events" -p "$pid" 2>"$T/stderr" &
	dp=$!
	wait_armed "$pid" "$P" work || echo "# the probe was never armed" >>"$T/notes"
	touch "$T/go1"
	wait_line "$T/stdout" 'work(1)' || echo "# work(1) was not called" >>"$T/notes"
	kill -INT "$dp"
	_i=0
	while kill -0 "$dp" 2>/dev/null && [ $_i -lt "$((TMO * 10))" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	if kill -0 "$dp" 2>/dev/null; then
		echo "# dprobe still running $TMO s after SIGINT" >>"$T/notes"
		kill -9 "$dp"
	fi
	wait "$dp"
	echo $? >"$T/rc"
	touch "$T/go2"
	wait "$pid"
	echo "# target exit=$?" >>"$T/notes"
}
case_run() {
	: >"$T/notes"
	: >"$T/runs.events"
	: >"$T/runs.out"
	for run in attach fork fork-f; do
		case $run in
		attach)
			# shellcheck disable=SC2119
			attach_run
			;;
		fork) dp_trace -- "$P" fork ;;
		fork-f) dp_trace -f -- "$P" fork ;;
		esac
		norm_trace <"$T/events" >>"$T/runs.events"
		sed 's/^/> /' "$T/stdout" >>"$T/runs.out"
		summary_of "$T/stderr" >>"$T/notes"
		echo "# exit=$(cat "$T/rc")" >>"$T/notes"
	done
}
case_result() {
	cat "$T/runs.events" "$T/runs.out" "$T/notes"
}
expected() {
	cat <<'EOF2'
semaphore w: ({vaddr:work}) i=1
semaphore w: ({vaddr:work}) i=1
semaphore w: ({vaddr:work}) i=3
semaphore w: ({vaddr:work}) i=1
semaphore w: ({vaddr:work}) i=2
semaphore w: ({vaddr:work}) i=3
> semaphore: ready sem=0
> semaphore: work(1) sem=1
> semaphore: work(2) sem=0
> semaphore: work(1) sem=1
> semaphore: work(2) sem=0
> semaphore: work(3) sem=1
> semaphore: work(1) sem=1
> semaphore: work(2) sem=1
> semaphore: work(3) sem=1
# target exit=0
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=0
# dprobe: 2 events, 0 filtered, 0 missed, 0 lost
# exit=0
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
