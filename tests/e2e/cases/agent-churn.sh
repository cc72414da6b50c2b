# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='in-process engine: 40 attaches to a process whose threads come and go and block signals; it lives, goes on, and has every byte back'
# churn.c: a thread calling tick(), one creating and joining short-lived
# threads without pause (thread ids wrap; glibc runs a starting or ending
# thread with every signal blocked), one blocking every signal around a
# 50 us sleep with pthread_sigmask(), and main with every signal blocked,
# asleep.  dprobe attaches (injecting the agent the first time, finding
# it loaded after), traces 0.1 s and detaches, E2E_CHURN_ROUNDS times
# (default 40), on this pass's engine (DPROBE_ENGINE: the default, or
# agent).  dprobe once made the agent's calls on a thread with SIGTRAP
# blocked (main here, or one glibc was starting or ending), which met the
# agent's own int3 on libc's pthread_sigmask() there: the kernel reset
# the SIGTRAP action, the call was abandoned holding the agent's lock,
# later attaches hung and the next probe hit killed the process.  And
# since those guards come and go with the sessions, the thread blocking
# every signal must never meet one with SIGTRAP blocked: in its sleep
# when dprobe arrives (SIGTRAP is unblocked in every thread), nor inside
# pthread_sigmask() (it is stepped out first).
#
# Each round exits 0 and leaves the process alive.  At the end its three
# counters go on advancing; the code of the program and of every object
# it had loaded (libc, with the agent's guards on its signal functions,
# the loader) is what it was before the first attach, tick()'s first bytes
# too; /proc/PID/maps is what it was after the first round (the agent,
# its libraries and its slot pages stay, as the library is never
# unloaded, but nothing is added by later rounds); no descriptor of
# /proc/PID/mem is left in the process; and it ends with every call
# right and its code intact.
prog=churn
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
engines='auto agent'
ROUNDS=${E2E_CHURN_ROUNDS:-40}
defs='p:tk tick n=%di:u64'

case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	: >"$T/result"
	start_bg "$T/out" "$P" "$T/stop" ||
		{ echo "# churn did not start" >>"$T/result"; return; }
	pid=$BG_PID
	t_wait_line "$T/out" '^churn: counters ' 10 ||
		{ echo "# churn did not say where its counters are" >>"$T/result"; return; }
	addrs=$(sed -n 's/^churn: counters //p' "$T/out")
	record_cmd trace "$@" -o "$T/ev" --duration 0.1 -p "$pid"
	code_sums "$pid" >"$T/code0"
	tick=$(runtime_addr "$pid" "$P" tick)
	dd if="/proc/$pid/mem" bs=16 count=1 iflag=skip_bytes skip="$tick" \
		2>/dev/null | od -An -tx1 >"$T/tick0"
	r=0
	hit=0
	while [ $r -lt "$ROUNDS" ]; do
		t_timeout 30 "$DPROBE" trace "$@" -o "$T/ev" --duration 0.1 \
			-p "$pid" 2>"$T/err"
		rc=$?
		[ $rc = 0 ] || echo "round $r: exit=$rc: $(tail -n 1 "$T/err")" >>"$T/result"
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "round $r: the process is gone" >>"$T/result"
			break
		fi
		grep -q ' tk: (tick+0x0/' "$T/ev" && hit=$((hit + 1))
		[ $r = 0 ] && cp "/proc/$pid/maps" "$T/maps1"
		r=$((r + 1))
	done
	echo "# $ROUNDS rounds" >>"$T/result"
	[ $hit -gt 0 ] || echo "no tk event in $ROUNDS rounds" >>"$T/result"
	# shellcheck disable=SC2086  # three addresses
	counters "$pid" $addrs >"$T/count1"
	sleep 0.3
	# shellcheck disable=SC2086
	counters "$pid" $addrs >"$T/count2"
	if paste "$T/count1" "$T/count2" |
	    awk 'NF != 2 || $2 <= $1 { bad = 1 } END { exit bad + (NR != 3) }'; then
		echo "# alive, its counters advancing" >>"$T/result"
	else
		echo "# counters stuck: $(tr '\n' ' ' <"$T/count1")-> $(tr '\n' ' ' <"$T/count2")" >>"$T/result"
	fi
	# shellcheck disable=SC2046  # the paths of the objects it had
	code_sums "$pid" $(cut -d' ' -f2 "$T/code0" | sort -u) >"$T/code1"
	dd if="/proc/$pid/mem" bs=16 count=1 iflag=skip_bytes skip="$tick" \
		2>/dev/null | od -An -tx1 >"$T/tick1"
	if [ -s "$T/code0" ] && [ -s "$T/tick0" ] &&
	    cmp -s "$T/code0" "$T/code1" && cmp -s "$T/tick0" "$T/tick1"; then
		echo "# code as before the first attach" >>"$T/result"
	else
		echo "# code changed:" >>"$T/result"
		diff "$T/code0" "$T/code1" >>"$T/result"
		diff "$T/tick0" "$T/tick1" >>"$T/result"
	fi
	# (a copy: cmp takes a /proc file's size, 0, for its length)
	cp "/proc/$pid/maps" "$T/maps2"
	if [ -s "$T/maps1" ] && cmp -s "$T/maps1" "$T/maps2"; then
		echo "# maps as after the first round" >>"$T/result"
	else
		echo "# maps changed:" >>"$T/result"
		diff "$T/maps1" "$T/maps2" >>"$T/result"
	fi
	n=$(ls -l "/proc/$pid/fd" | grep -c '/mem$')
	echo "# /proc/PID/mem descriptors left: $n" >>"$T/result"
	touch "$T/stop"
	wait "$pid"
	echo "# churn exit=$?" >>"$T/result"
	grep -v '^churn: counters ' "$T/out" | sed 's/^/> /' >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<EOF2
# $ROUNDS rounds
# alive, its counters advancing
# code as before the first attach
# maps as after the first round
# /proc/PID/mem descriptors left: 0
# churn exit=0
> churn: ready
> churn: ok (every thread ran)
EOF2
}
