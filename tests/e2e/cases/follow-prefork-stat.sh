# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe stat -f on a pre-forking server: per-worker counts through one filtered event per worker'
# prefork.c (see follow-prefork): handle(0) once in the parent, then
# worker k (1..4, all at once) calls handle(k) 1000 * k times.  Five
# events on handle's entry: "all" unfiltered, 10001 hits; w1..w4 keep
# k == 1..4, so 1000, 2000, 3000, 4000, the count of worker k alone.
# dprobe stat prints one count per event (after its filter), in the
# order of -e.  The summary: 10001 + 10000 events kept, and every hit
# of w1..w4 that its filter dropped, 4 * 10001 - 10000 = 30004.  On
# auto this must run on the in-process engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=prefork
defs='p:all handle
p:w1 handle k=%di:s64
p:w2 handle k=%di:s64
p:w3 handle k=%di:s64
p:w4 handle k=%di:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_stat -f --filter 'w1=k == 1' --filter 'w2=k == 2' \
		--filter 'w3=k == 3' --filter 'w4=k == 4' -- "$P"
}
case_result() {
	stat_result
	summary_of "$T/stderr"
}
case_check() {
	engine_check
}
expected() {
	cat <<'EOF2'
> prefork: 4 workers
> prefork: worker 1: ok
> prefork: worker 2: ok
> prefork: worker 3: ok
> prefork: worker 4: ok
# stat 10001 kprobes:all
# stat 1000 kprobes:w1
# stat 2000 kprobes:w2
# stat 3000 kprobes:w3
# stat 4000 kprobes:w4
# seconds time elapsed
# exit=0
# dprobe: 20001 events, 30004 filtered, 0 missed, 0 lost
EOF2
}
