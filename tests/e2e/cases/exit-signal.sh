# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a command killed by a signal: dprobe exits with 128 + the signal'
# exitcode -6: work(6), then raise(SIGABRT) with the default action: the
# command dies of signal 6, dprobe's status is 128 + 6 = 134.  The same
# for SIGTERM (15 -> 143) and SIGKILL (9 -> 137).
prog=exitcode
defs='p:w work a=%di:s64'
case_run() {
	for s in 6 15 9; do
		dp_trace -- "$P" "-$s"
		trace_result >>"$T/all"
	done
}
case_result() {
	cat "$T/all"
}
expected() {
	for s in 6 15 9; do
		echo "exitcode w: (work+0x0/{size:work}) a=$s"
		echo "# dprobe: 1 events, 0 filtered, 0 missed, 0 lost"
		echo "# exit=$((128 + s))"
	done
}
