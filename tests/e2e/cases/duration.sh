# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--duration: detach SECS after the probes are armed; the process runs on, every byte restored'
# waiter --ticks 30 100 calls work(i) for i = 1..30, one every 100 ms
# (3 s).  Attached with -p and --duration 1, dprobe must leave after
# about a second (between 0.5 and 2.5 s is accepted) with status 0,
# having seen some of the calls, in order from i = 1 or later, with no
# gap; the process must finish its 30 calls (sum of squares 1..30 =
# 9455), and after the detach work's first byte in the process must be
# the byte in the file again (no int3 left behind).  The same with
# -- CMD: dprobe detaches after 1 s and waits for the command
# (docs/dprobe-trace.md), whose status it returns.
prog=waiter
levels=O2
defs='p:w work i=%di:s64'
check_events() {
	norm_trace <"$1" | awk -v what="$2" '
		{ if (!match($0, / i=[0-9]+$/)) { print "# " what ": bad line " $0; next }
		  i = substr($0, RSTART + 3) + 0
		  if (n && i != last + 1) print "# " what ": gap after i=" last
		  last = i; n++ }
		END { if (n < 3 || n > 25) print "# " what ": " n " events"
		      else print "# " what ": events ok" }'
}
case_run() {
	start_bg "$T/stdout" "$P" --ticks 30 100 || exit 1
	pid=$BG_PID
	_e=$(defs_eargs)
	eval "set -- $_e"
	t0=$(date +%s%N)
	timeout -k 5 "$TMO" "$DPROBE" trace "$@" --duration 1 -o "$T/events" \
		-p "$pid" 2>"$T/stderr"
	echo $? >"$T/rc"
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	{
		if [ $ms -ge 500 ] && [ $ms -le 2500 ]; then
			echo "# -p: detached in time"
		else
			echo "# -p: detached after $ms ms"
		fi
		check_events "$T/events" -p
		addr=$(runtime_addr "$pid" "$P" work)
		if [ "$(peek "$pid" "$addr")" = "$(file_byte "$P" work)" ]; then
			echo "# -p: code restored"
		else
			echo "# -p: work's first byte is $(peek "$pid" "$addr") after the detach"
		fi
		wait "$pid"
		echo "# -p: target exit=$?"
		sed 's/^/> /' "$T/stdout"
		summary_of "$T/stderr" | sed -E 's/[0-9]+ events/N events/'
		echo "# -p: exit=$(cat "$T/rc")"
		timeout -k 5 "$TMO" "$DPROBE" trace "$@" --duration 1 \
			-o "$T/events2" -- "$P" --ticks 20 100 >"$T/stdout2" 2>"$T/stderr2"
		echo "# cmd: exit=$?"
		check_events "$T/events2" cmd
		sed 's/^/> /' "$T/stdout2"
	} >"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# -p: detached in time
# -p: events ok
# -p: code restored
# -p: target exit=0
> waiter: ready
> waiter: 30 ticks, sum 9455
# dprobe: N events, 0 filtered, 0 missed, 0 lost
# -p: exit=0
# cmd: exit=0
# cmd: events ok
> waiter: ready
> waiter: 20 ticks, sum 2870
EOF2
}
