# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-p PID: a tracepoint probe that cannot be unregistered at detach stays silent, also for the next dprobe'
# tpoints --spoil fires tp:tick(0..2) once GOFILE exists, then spoils
# the version of tick's struct dp_tracepoint, so that libdprobe refuses
# every unregister from it (as for a corrupt or unmapped descriptor),
# and fires tp:tick(3..5) once GOFILE.2 exists.  A first dprobe enables
# tp:tick and is interrupted after the first three ticks: the agent
# cannot take its probe off the tracepoint (the key stays 1), so the
# probe may still be called; it must then record nothing, and its data
# must stay valid.  A second dprobe attaches with tp:ints, which records
# into new rings: the last three ticks must not show up there (nor kill
# the program).  The program ends normally with the sum 0 + ... + 5.
# It runs with glibc's malloc filling freed memory, so that a probe whose
# data had been freed would find garbage rather than its old values.
prog=tpoints
engines='auto agent'
key_byte() {	# PID SYM -> the low byte of SYM's probe count (offset 680)
	_a=$(runtime_addr "$1" "$P" "$2") || return 1
	peek "$1" $((_a + 680))
}
wait_key() {	# PID SYM BYTE
	i=0
	while [ "$(key_byte "$1" "$2")" != "$3" ] && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
}
case_run() {
	: >"$T/notes"
	# freed memory filled with 0xa5 (no thread cache, where it is not):
	# a probe whose data was freed would read it
	start_bg "$T/stdout" env GLIBC_TUNABLES=glibc.malloc.tcache_count=0 \
		MALLOC_PERTURB_=165 "$P" --spoil "$T/go" 3 ||
		{ echo "tpoints did not start" >"$T/why"; exit 1; }
	pid=$BG_PID
	record_cmd trace -p "$pid"
	timeout -k 5 "$TMO" "$DPROBE" trace -e tp:tick -o "$T/events1" \
		-p "$pid" 2>"$T/stderr1" &
	dp=$!
	wait_key "$pid" __dp_tracepoint_tick 01
	touch "$T/go"
	i=0
	while [ "$(grep -c tick: "$T/events1")" -lt 3 ] && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	while ! grep -q spoiled "$T/stdout" && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	kill -INT "$dp"
	wait "$dp"
	echo "# first dprobe exit=$?" >>"$T/notes"
	echo "# tick after detach: $(key_byte "$pid" __dp_tracepoint_tick)" >>"$T/notes"
	timeout -k 5 "$TMO" "$DPROBE" trace -e tp:ints -o "$T/events2" \
		-p "$pid" 2>"$T/stderr2" &
	dp=$!
	wait_key "$pid" __dp_tracepoint_ints 01
	touch "$T/go.2"
	wait "$pid"
	echo "# target exit=$?" >>"$T/notes"
	wait "$dp"
	echo "# second dprobe exit=$?" >>"$T/notes"
}
case_result() {
	norm_trace <"$T/events1"
	echo "# then"
	norm_trace <"$T/events2"
	sed 's/^/> /' "$T/stdout"
	summary_of "$T/stderr1"
	summary_of "$T/stderr2"
	cat "$T/notes"
}
expected() {
	cat <<'EOF2'
tpoints tick: i=0
tpoints tick: i=1
tpoints tick: i=2
# then
> tpoints: ready
> tpoints: spoiled
> tpoints: sum 15
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# dprobe: 0 events, 0 filtered, 0 missed, 0 lost
# first dprobe exit=0
# tick after detach: 01
# target exit=0
# second dprobe exit=0
EOF2
}
