# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='in-process engine: a target that writes its ring after the detach; dprobe ends within 5 s of SIGINT'
# scribble.c: the main thread calls tick() until a stop file appears; a
# second thread maps its own copy of the agent's ring set and commits
# well-formed records into a ring as fast as it can, before and after
# dprobe lets go.  dprobe attaches (agent engine, -p) and gets SIGINT
# once the probe is armed and the scribbler writes: it detaches, reads
# what the rings held at that moment and exits 0.  Its last read used
# to follow the scribbler for ever (and ignored further SIGINTs).  The
# probe's bytes must be back, and the program ends normally.  The
# events themselves are not checked (the scribbler makes them up).
# Then the same program launched by dprobe: after the first SIGINT dprobe
# detaches and waits for its command, which runs on; a second SIGINT
# ends dprobe within 5 s (the program stays, restored, and finishes).
prog=scribble
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
engines='auto agent'
# it opens the rings' memfd through /proc/self/map_files
needs=root
# scribble.c includes the ring's producer code: build it here, -I src
build_prog() {
	_out=$BUILD/$LEVEL/scribble-ring
	mkdir -p "$BUILD/$LEVEL" &&
		gcc -g -O2 -Wall -pthread -I"$E2E/../../src" -o "$_out.$$" \
			"$E2E/progs/scribble.c" && mv -f "$_out.$$" "$_out" &&
		echo "$_out"
}
# wait_line FILE TEXT: up to 10 s for TEXT in FILE
wait_line() {
	_i=0
	while ! grep -q "$2" "$1" && [ $_i -lt 1000 ]; do
		sleep 0.01
		_i=$((_i + 1))
	done
	grep -q "$2" "$1"
}
# stop_dprobe PID: SIGINT, and 5 s for dprobe to end (noted if not)
stop_dprobe() {
	kill -INT "$1"
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -0 "$1" 2>/dev/null || return 0
	echo "# dprobe still runs 5 s after SIGINT" >>"$T/result"
	return 1
}
# finish PID STOPFILE OUT LABEL: the code back, then the program's end
finish() {
	if wait_restored "$1" "$P" tick; then
		echo "# $4: code restored" >>"$T/result"
	else
		echo "# $4: code NOT restored" >>"$T/result"
	fi
	touch "$2"
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 1000 ]; do
		sleep 0.01
		_i=$((_i + 1))
	done
	sed 's/^/> /' "$3" >>"$T/result"
}
case_run() {
	: >"$T/result"
	# attached
	start_bg "$T/out1" "$P" "$T/stop1" || { echo "# scribble did not start" >>"$T/result"; return; }
	pid=$BG_PID
	"$DPROBE" trace --engine agent -e 'p:tk tick' -o "$T/ev1" -p "$pid" \
		2>"$T/err1" &
	dp=$!
	wait_armed "$pid" "$P" tick || echo "# -p: never armed" >>"$T/result"
	wait_line "$T/out1" 'scribble: writing' || echo "# -p: no scribbling" >>"$T/result"
	sleep 1
	stop_dprobe $dp || kill -9 $dp
	wait $dp
	echo "# -p: dprobe exit=$?" >>"$T/result"
	finish "$pid" "$T/stop1" "$T/out1" -p
	wait "$pid"
	echo "# -p: scribble exit=$?" >>"$T/result"
	# launched: the first SIGINT detaches, the second ends the wait
	"$DPROBE" trace --engine agent -e 'p:tk tick' -o "$T/ev2" -- \
		"$P" "$T/stop2" >"$T/out2" 2>"$T/err2" &
	dp=$!
	wait_line "$T/out2" 'scribble: writing' || echo "# launch: no scribbling" >>"$T/result"
	pid=$(pgrep -n -P $dp)
	sleep 1
	kill -INT $dp
	wait_restored "$pid" "$P" tick || echo "# launch: not detached" >>"$T/result"
	stop_dprobe $dp || kill -9 $dp
	wait $dp
	finish "$pid" "$T/stop2" "$T/out2" launch
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# -p: dprobe exit=0
# -p: code restored
> scribble: ready
> scribble: writing
> scribble: done
# -p: scribble exit=0
# launch: code restored
> scribble: ready
> scribble: writing
> scribble: done
EOF2
}
