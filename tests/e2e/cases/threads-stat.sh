# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='8 threads x 100,000 calls (25,000 on ptrace): every hit counted'
# threads.c: 8 threads, each calls tick(t) N times, all started
# together at a barrier, so the calls overlap: 8 N hits, none lost
# (a breakpoint lifted to single-step in one thread would let the
# others run past it).  Total = N * (1 + ... + 8) = 36 N.  The ptrace
# engine makes 25,000 calls a thread, not 100,000: two context switches
# a hit make 800,000 hits 20 s of both CPUs, and 200,000 overlap as well.
prog=threads
kdiff=yes
TMO=${E2E_STAT_TIMEOUT:-300}
defs='p:tick tick'
CALLS=100000
[ "${DPROBE_ENGINE:-auto}" = ptrace ] && CALLS=25000
case_run() {
	dp_stat -- "$P" 8 "$CALLS"
}
case_result() {
	stat_result
}
expected() {
	cat <<EOF2
> threads: 8 x $CALLS calls, total $((CALLS * 36))
# stat $((CALLS * 8)) kprobes:tick
# seconds time elapsed
# exit=0
EOF2
}
