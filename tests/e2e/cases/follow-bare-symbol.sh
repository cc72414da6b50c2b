# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f with a plain symbol place ("job") across execs of other programs (sh): absent there, armed again in the program'
# follow-spawntree with the places written as plain symbols, as a user
# would write them for the program dprobe launches: "job" names the
# command's executable (spawntree).  The shells between the levels are
# images without it: there the probe is simply not present (a place
# not in an exec'd image is pending there), and tracing goes on; each
# node that execs spawntree again has it.  So the same 34 events as
# follow-spawntree (same tree, same order, processes [1] to [7]), the
# same output, exit 0.  On auto this must run on the in-process engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=spawntree
defs='p:job job id=%di:s64 n=%si:s64
r:jobr job ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- "$P"
}
case_result() {
	numbered_events
	sed 's/^/> /' "$T/stdout"
	summary_of "$T/stderr"
	echo "# exit=$(cat "$T/rc")"
}
case_check() {
	engine_check
}
# the nodes in the order they run: ID:LEVEL
spawntree_nodes='1:0 11:1 111:2 112:2 12:1 121:2 122:2'
expected() {
	p=0
	for node in $spawntree_nodes; do
		id=${node%:*}
		level=${node#*:}
		p=$((p + 1))
		n=1
		while [ $n -le $((level + 1)) ]; do
			echo "[$p] spawntree job: (job+0x0/{size:job}) id=$id n=$n"
			echo "[$p] spawntree jobr: ({retsite:do_jobs:job} <- job) ret=$((id * 10 + n))"
			n=$((n + 1))
		done
	done
	for node in $spawntree_nodes; do
		id=${node%:*}
		level=${node#*:}
		k=$((level + 1))
		# sum of id * 10 + n for n = 1..k
		echo "> spawntree: $id: $k jobs, sum $((id * 10 * k + k * (k + 1) / 2))"
		case $id in
		112) echo "> spawntree: 11: children ok" ;;
		122) echo "> spawntree: 12: children ok"
		     echo "> spawntree: 1: children ok" ;;
		esac
	done
	cat <<'EOF2'
# dprobe: 34 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
