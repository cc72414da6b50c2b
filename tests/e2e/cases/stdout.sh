# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='without -o, events stream to stdout; the summary goes to stderr'
# exitcode 0 prints nothing itself, so dprobe's stdout is exactly the
# event line; the summary line is on stderr only.
prog=exitcode
args=0
stdout_events=1
defs='p:w work a=%di:s64'
case_result() {
	norm_trace <"$T/stdout"
	summary_of "$T/stderr"
	grep -c '^dprobe: .* events' "$T/stdout" | sed 's/^/# summaries on stdout: /'
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
exitcode w: (work+0x0/{size:work}) a=0
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# summaries on stdout: 0
# exit=0
EOF2
}
