# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe stat on a tracepoint fired by 4 threads; and trace with a filter on its field'
# 4 threads each fire tp:tick(0..99999): 400000 hits, counted exactly
# (without a filter, a count is a counter in each thread's ring, no
# record).  The sum the program prints is 4 * (0 + ... + 99999).  Then
# 4 threads fire tick(0..1999) traced with the filter i < 3: 12 events
# (3 per thread, sorted), 7988 filtered; sum 4 * (0 + ... + 1999).
prog=tpoints
engines='auto agent'
defs='tp:tick'
case_run() {
	dp_stat -- "$P" --threads 4 100000
	sed 's/^/> /' "$T/stdout" >"$T/stat"
	grep -E '^ +[0-9]+ +tp:tick$' "$T/stderr" | tr -s ' ' >>"$T/stat"
	summary_of "$T/stderr" >>"$T/stat"
	dp_trace --filter 'tick=i < 3' -- "$P" --threads 4 2000
}
case_result() {
	cat "$T/stat"
	sort_events=1 trace_result
}
expected() {
	cat <<'EOF2'
> tpoints: 4 threads, sum 19999800000
 400000 tp:tick
# dprobe: 400000 events, 0 filtered, 0 missed, 0 lost
EOF2
	for i in 0 0 0 0 1 1 1 1 2 2 2 2; do
		echo "tpoints tick: i=$i"
	done
	cat <<'EOF2'
> tpoints: 4 threads, sum 7996000
# dprobe: 12 events, 7988 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
