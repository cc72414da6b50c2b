# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a filter on the comm of a thread'
# As threads-comm without the return probe, filtered on comm ==
# "worker-2": thread 2's 50 calls are kept, the other 150 filtered out.
prog=threads
kdiff=yes
defs='p:tick tick t=%di:s64'
case_run() {
	dp_trace --filter 'tick=comm == "worker-2"' -- "$P" 4 50 named
}
expected() {
	i=0
	while [ $i -lt 50 ]; do
		echo "worker-2 tick: (tick+0x0/{size:tick}) t=2"
		i=$((i + 1))
	done
	cat <<'EOF2'
> threads: 4 x 50 calls, total 500
# dprobe: 50 events, 150 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
