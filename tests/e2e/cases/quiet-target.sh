# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--quiet-target: the command'"'"'s stdout and stderr gone, only dprobe'"'"'s output left'
# Without -o, events go to dprobe's stdout, which the command shares:
# noisy's "to stdout" line lands among the events and its "to stderr"
# beside dprobe's summary.  With --quiet-target both go to /dev/null
# (in the child each engine forks), the event and the summary stay.
# One level: what is checked does not depend on the compiler's.
prog=noisy
levels=O0
stdout_events=1
defs='p:w work a=%di:s64'
case_run() {
	dp_trace -- "$P" &&
		mv "$T/stdout" "$T/stdout.loud" && mv "$T/stderr" "$T/stderr.loud" &&
		dp_trace --quiet-target -- "$P"
}
case_result() {
	for run in loud quiet; do
		f=$T/stdout s=$T/stderr
		[ $run = loud ] && f=$T/stdout.loud s=$T/stderr.loud
		echo "# $run: events $(grep -c ' w: ' "$f"), noisy on stdout" \
			"$(grep -c '^noisy: to stdout' "$f"), on stderr" \
			"$(grep -c '^noisy: to stderr' "$s"), summaries" \
			"$(grep -c '^dprobe: 1 events' "$s")"
	done
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
# loud: events 1, noisy on stdout 1, on stderr 1, summaries 1
# quiet: events 1, noisy on stdout 0, on stderr 0, summaries 1
# exit=0
EOF2
}
