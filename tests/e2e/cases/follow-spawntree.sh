# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f on a make-like tree: children and grandchildren run through sh -c, 3 levels, every call in order'
# spawntree.c: the root (id 1, level 0) runs "sh -c 'SELF 1 11'" and
# then 12 (fork + exec of /bin/sh); each of those runs one
# "sh -c 'SELF 2 X1 && SELF 2 X2'" (posix_spawn), so the processes
# that call job() are 1, 11, 111, 112, 12, 121, 122, in that order
# (every parent waits for its child), with shells between the levels.
# A node at level L calls job(ID, n) for n = 1..L+1 from do_jobs(),
# which returns ID * 10 + n: 17 calls, 34 events.  The places name the
# program by its path ({bin}:job): the shells are images without it
# (follow-bare-symbol: the plain symbol "job").  Processes numbered by
# their first event: each node is a process of its own, [1] to [7] in
# that order.  Every node prints its count and sum (of ID * 10 + n),
# the inner ones "children ok" once their children are done.  On auto
# this must run on the in-process engine (the preload carries through
# every shell).
levels=O2	# process trees: the compiler level changes nothing there
prog=spawntree
defs='p:job {bin}:job id=%di:s64 n=%si:s64
r:jobr {bin}:job ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- "$P"
}
events_by=numbered_events
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
