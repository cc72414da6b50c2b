# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='threads: $comm and the comm column are the thread names; new threads are traced'
# threads.c with "named": 4 threads named worker-0..3 (before their
# first call), each calls tick(t) 50 times: 200 events, 50 per thread,
# with t matching the name.  Threads run concurrently, so the events
# are sorted.  tick returns t + 1 into worker().
prog=threads
kdiff=yes
sort_events=1
args='4 50 named'
defs='p:tick tick t=%di:s64 comm=$comm
r:tickret tick ret=$retval:s64'
expected() {
	for t in 0 1 2 3; do
		i=0
		while [ $i -lt 50 ]; do
			echo "worker-$t tick: (tick+0x0/{size:tick}) t=$t comm=\"worker-$t\""
			echo "worker-$t tickret: ({retsite:worker:tick} <- tick) ret=$((t + 1))"
			i=$((i + 1))
		done
	done
	cat <<'EOF2'
> threads: 4 x 50 calls, total 500
# dprobe: 400 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
