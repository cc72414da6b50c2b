# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--tracer function_graph with 1005 calls of one function in flight over five threads: every return seen (a return stack per thread, no pool per function)'
# deeprec.c: main and four workers each recurse 200 deep into down()
# and meet at a barrier at the bottom.  Every call is seen entering and
# returning: 1000 "down() {" with their "}", 5 leaves "down();", no
# call missed.  A pool of return instances per function (r10, or the r64
# the tracer had) would miss most of them.  The ptrace engine keeps the
# kernel's uretprobe limit, 64 calls in flight per thread: not run there.
prog=deeprec
timestamps=no
engines='auto agent'
levels=O2
opts='--tracer function_graph --filter-func down'
case_result() {
	echo "# down() {: $(grep -c 'down() {$' "$T/events")"
	echo "# down();: $(grep -c 'down();$' "$T/events")"
	echo "# }: $(grep -c '| *}$' "$T/events")"
	sed 's/^/> /' "$T/stdout"
	summary_of "$T/stderr"
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
# down() {: 1000
# down();: 5
# }: 1000
> deeprec: 1000
# dprobe: 2010 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
