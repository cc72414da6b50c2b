# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--profile and SIGUSR1: the kprobe_profile table while tracing and at exit'
# waiter go1 3 go2 4: 3 calls of work after go1, 4 more after go2.
# After phase 1 the test sends SIGUSR1 to dprobe, which prints the
# kprobe_profile line "  %-44s %15lu %15lu" (event, hits, misses) for w:
# 3 hits; at exit (--profile) 7.  The return probe wr (r2: MAXACTIVE 2,
# calls are not nested, so no miss) counts returns: 3, then 7.
prog=waiter
levels=O2
defs='p:w work i=%di:s64
r2:wr work'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	record_cmd trace "$@" --profile -o "$T/events" -- "$P" "$T/go1" 3 "$T/go2" 4
	"$DPROBE" trace "$@" --profile -o "$T/events" -- "$P" "$T/go1" 3 \
		"$T/go2" 4 >"$T/stdout" 2>"$T/stderr" &
	dp=$!
	i=0
	until grep -q ready "$T/stdout" 2>/dev/null || [ $i -ge 1000 ]; do
		sleep 0.01; i=$((i + 1))
	done
	touch "$T/go1"
	i=0
	until grep -q 'phase 1 done' "$T/stdout" 2>/dev/null || [ $i -ge 1000 ]; do
		sleep 0.01; i=$((i + 1))
	done
	kill -USR1 $dp
	i=0
	until grep -q '^  wr ' "$T/stderr" 2>/dev/null || [ $i -ge 1000 ]; do
		sleep 0.01; i=$((i + 1))
	done
	cp "$T/stderr" "$T/stderr.usr1"
	touch "$T/go2"
	wait $dp
	echo $? >"$T/rc"
}
case_result() {
	grep -E '^  [^ ]+ +[0-9]+ +[0-9]+$' "$T/stderr.usr1" | sed 's/^/# usr1:/'
	trace_result
	grep -E '^  [^ ]+ +[0-9]+ +[0-9]+$' "$T/stderr" | sed 's/^/# all:/'
}
expected() {
	printf '# usr1:  %-44s %15s %15s\n' w 3 0 wr 3 0
	for i in 1 2 3 4 5 6 7; do
		echo "waiter w: (work+0x0/{size:work}) i=$i"
		echo "waiter wr: ({retsite:calls:work} <- work)"
	done
	cat <<'EOF2'
> waiter: ready
> waiter: phase 1 done, sum 14
> waiter: phase 2 done, sum 140
# dprobe: 14 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
	printf '# all:  %-44s %15s %15s\n' w 3 0 wr 3 0 w 7 0 wr 7 0
}
