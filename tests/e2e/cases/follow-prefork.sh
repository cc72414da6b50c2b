# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f on a pre-forking server: 4 workers at once, each hit count exact, each worker one process'
# prefork.c: the parent calls handle(0) once, then forks 4 workers that
# start together; worker k calls handle(k) 1000 * k times (from
# worker()), so 1 + 1000 * (1 + 2 + 3 + 4) = 10001 entries and as many
# returns (handle(k) returns k: into main for k = 0, into worker
# otherwise): 20002 events, none lost (each fork child has rings of its
# own on the in-process engine).  The workers run at the same time, so
# the events are counted, not listed: each distinct line with its count
# ("LINE xN"), in the order of k, the entry before the return.  Then the
# processes: the values of k each one's events carry ("# one process:
# k=K"), one line per process: every worker's events come from one
# process of its own, and the parent's from another.  The output is
# the parent's only, in worker order.  On auto this must run on the
# in-process engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=prefork
defs='p:req handle k=%di:s64
r:reqr handle ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- "$P"
}
case_result() {
	norm_trace <"$T/events" | awk '
		{ n[$0]++ }
		END { for (l in n) { k = l; sub(/.*=/, "", k); print k "\t" l " x" n[l] } }' |
		LC_ALL=C sort -t "$(printf '\t')" -k1,1n -k2 | cut -f2-
	awk '{ t = substr($0, 18); sub(/ .*/, "", t); k = $NF; sub(/.*=/, "", k)
		if (!(t in ks)) ks[t] = k
		else if (index(" " ks[t] " ", " " k " ") == 0) ks[t] = ks[t] " " k }
		END { for (t in ks) print "# one process: k=" ks[t] }' "$T/events" |
		LC_ALL=C sort
	sed 's/^/> /' "$T/stdout"
	summary_of "$T/stderr"
	echo "# exit=$(cat "$T/rc")"
}
case_check() {
	engine_check
}
expected() {
	echo "prefork req: (handle+0x0/{size:handle}) k=0 x1"
	echo "prefork reqr: ({retsite:main:handle} <- handle) ret=0 x1"
	for k in 1 2 3 4; do
		echo "prefork req: (handle+0x0/{size:handle}) k=$k x$((1000 * k))"
		echo "prefork reqr: ({retsite:worker:handle} <- handle) ret=$k x$((1000 * k))"
	done
	for k in 0 1 2 3 4; do
		echo "# one process: k=$k"
	done
	cat <<'EOF2'
> prefork: 4 workers
> prefork: worker 1: ok
> prefork: worker 2: ok
> prefork: worker 3: ok
> prefork: worker 4: ok
# dprobe: 20002 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
