# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-p PID: a tracepoint enabled in a running process, then disabled on Ctrl-C'
# tpoints --wait fires tp:tick(0..4) once GOFILE exists and tp:tick(5..9)
# once GOFILE.2 does.  dprobe attaches; the tracepoint's probe count (the
# key of struct dp_tracepoint, at offset 680) becomes non-zero in the
# process; the first five ticks are traced; dprobe is interrupted; the
# count is zero again and the tracepoint's nops are back, so the last
# five ticks are not traced and the program ends with the same sum
# (0 + ... + 9 = 45).
prog=tpoints
engines='auto agent'
defs='tp:tick'
key_byte() {	# PID -> the low byte of tp:tick's probe count
	_a=$(runtime_addr "$1" "$P" __dp_tracepoint_tick) || return 1
	peek "$1" $((_a + 680))
}
case_run() {
	start_bg "$T/stdout" "$P" --wait "$T/go" 5 ||
		{ echo "tpoints did not start" >"$T/why"; exit 1; }
	pid=$BG_PID
	record_cmd trace -p "$pid"
	timeout -k 5 "$TMO" "$DPROBE" trace -e tp:tick -o "$T/events" -p "$pid" \
		2>"$T/stderr" &
	dp=$!
	i=0
	while [ "$(key_byte "$pid")" != 01 ] && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	echo "# enabled: $(key_byte "$pid")" >>"$T/notes"
	touch "$T/go"
	i=0
	while [ "$(grep -c tick: "$T/events")" -lt 5 ] && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	kill -INT "$dp"
	wait "$dp"
	echo $? >"$T/rc"
	echo "# after detach: $(key_byte "$pid")" >>"$T/notes"
	touch "$T/go.2"
	wait "$pid"
	echo "# target exit=$?" >>"$T/notes"
}
case_result() {
	trace_result
	cat "$T/notes"
}
expected() {
	for i in 0 1 2 3 4; do
		echo "tpoints tick: i=$i"
	done
	cat <<'EOF2'
> tpoints: ready
> tpoints: sum 45
# dprobe: 5 events, 0 filtered, 0 missed, 0 lost
# exit=0
# enabled: 01
# after detach: 00
# target exit=0
EOF2
}
