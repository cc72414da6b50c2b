# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f through a shell pipeline: sh -c "pipeline gen 5 | pipeline sq | cat", probes on PATH:step'
# dprobe launches sh (dash), which forks a process per stage; two of
# them exec pipeline.c.  The probes name the program by its path
# ({bin}:step), since the launched executable is sh; in sh and cat
# they are simply absent.  "pipeline gen 5" calls step(1, v) for
# v = 1..5, returning v; "pipeline sq" reads them and calls step(2, v),
# returning v * v; each return goes into emit().  cat prints the
# squares.  The two stages run at the same time, so their events
# interleave in any order, but within a process they come in the order
# of its calls: the result lists each process's events as one block
# ("-- process"), the blocks sorted (gen's, stage=1, first).  Every
# event is "pipeline" (the stages run the program by its path).  On
# auto this must run on the in-process engine (sh is dynamically
# linked: the preload carries through the shell to the stages).
levels=O2	# process trees: the compiler level changes nothing there
prog=pipeline
defs='p:s {bin}:step stage=%di:s64 v=%si:s64
r:sr {bin}:step ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- sh -c "'$P' gen 5 | '$P' sq | cat"
}
# the events of each thread in their order, one block per thread
by_process() {
	awk '{ t = substr($0, 18); sub(/ .*/, "", t); print t }' "$T/events" |
	sort -u | while read -r _t; do
		awk -v want="$_t" '{ t = substr($0, 18); sub(/ .*/, "", t) }
			t == want' "$T/events" | norm_trace |
			awk '{ printf "%s%s", (NR > 1 ? "\t" : ""), $0 } END { print "" }'
	done | LC_ALL=C sort | sed 's/^/-- process\t/' | tr '\t' '\n'
}
events_by=by_process
case_check() {
	engine_check
}
expected() {
	for stage in 1 2; do
		echo "-- process"
		for v in 1 2 3 4 5; do
			r=$v
			[ $stage = 2 ] && r=$((v * v))
			echo "pipeline s: (step+0x0/{size:step}) stage=$stage v=$v"
			echo "pipeline sr: ({retsite:emit:step} <- step) ret=$r"
		done
	done
	cat <<'EOF2'
> 1
> 4
> 9
> 16
> 25
# dprobe: 20 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
