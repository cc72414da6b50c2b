# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='in-process engine: attaches to a process that starts children without pause (posix_spawn, system, popen, vfork); every child exits 0, every byte comes back'
# spawner.c: one thread starting /bin/true in turn with posix_spawn(),
# posix_spawnp() with a mask and default actions, system(), popen() and
# vfork() + execve(), waiting for each; another calling tick().  dprobe
# attaches, traces 0.3 s and detaches, E2E_SPAWN_ROUNDS times (default
# 10), on the in-process engine.  glibc's posix_spawn() child (system()'s
# and popen()'s too) runs on the parent's memory with every signal
# blocked until its exec, and calls libc's sigprocmask(): the agent's
# int3 guard there, armed while dprobe is attached, killed it with
# SIGTRAP (nearly every child started during a session).  The guards on
# the mask functions are jumps now, which need no signal.
#
# Each round exits 0 and leaves the process alive; children are started
# meanwhile (at least 30 a round, 300 over the default rounds); at the end the program says
# every child of every way exited 0, and the code of the program and of
# every object it had loaded (libc, where the guards were) is what it was
# before the first attach.
prog=spawner
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
engines=auto
ROUNDS=${E2E_SPAWN_ROUNDS:-10}
defs='p:tk tick n=%di:u64'

case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	start_bg "$T/out" "$P" "$T/stop" ||
		{ echo "# spawner did not start" >>"$T/result"; return; }
	pid=$BG_PID
	t_wait_line "$T/out" '^spawner: counters ' 10 ||
		{ echo "# spawner did not say where its counters are" >>"$T/result"; return; }
	addrs=$(sed -n 's/^spawner: counters //p' "$T/out")
	record_cmd trace "$@" -o "$T/ev" --duration 0.3 -p "$pid"
	code_sums "$pid" >"$T/code0"
	# shellcheck disable=SC2086  # two addresses
	counters "$pid" $addrs >"$T/count0"
	r=0
	hit=0
	while [ $r -lt "$ROUNDS" ]; do
		t_timeout 30 "$DPROBE" trace "$@" -o "$T/ev" --duration 0.3 \
			-p "$pid" 2>"$T/err"
		rc=$?
		[ $rc = 0 ] || echo "round $r: exit=$rc: $(tail -n 1 "$T/err")" >>"$T/result"
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "round $r: the process is gone" >>"$T/result"
			break
		fi
		grep -q ' tk: (tick+0x0/' "$T/ev" && hit=$((hit + 1))
		r=$((r + 1))
	done
	echo "# $ROUNDS rounds" >>"$T/result"
	[ $hit -gt 0 ] || echo "no tk event in $ROUNDS rounds" >>"$T/result"
	# shellcheck disable=SC2086
	counters "$pid" $addrs >"$T/count1"
	if paste "$T/count0" "$T/count1" |
	    awk -v min=$((30 * ROUNDS)) 'NF != 2 || $2 <= $1 { bad = 1 } NR == 1 && $2 - $1 < min { bad = 1 }
		 END { exit bad + (NR != 2) }'; then
		echo "# children started and tick() called while attached" >>"$T/result"
	else
		echo "# too few: $(tr '\n' ' ' <"$T/count0")-> $(tr '\n' ' ' <"$T/count1")" >>"$T/result"
	fi
	# shellcheck disable=SC2046  # the paths of the objects it had
	code_sums "$pid" $(cut -d' ' -f2 "$T/code0" | sort -u) >"$T/code1"
	if [ -s "$T/code0" ] && cmp -s "$T/code0" "$T/code1"; then
		echo "# code as before the first attach" >>"$T/result"
	else
		echo "# code changed:" >>"$T/result"
		diff "$T/code0" "$T/code1" >>"$T/result"
	fi
	touch "$T/stop"
	wait "$pid"
	echo "# spawner exit=$?" >>"$T/result"
	grep -v '^spawner: counters ' "$T/out" | sed 's/^/> /' >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<EOF2
# $ROUNDS rounds
# children started and tick() called while attached
# code as before the first attach
# spawner exit=0
> spawner: ready
> spawner: ok (every child exited 0, every way ran)
EOF2
}
