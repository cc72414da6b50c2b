# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='8 threads x 100,000 calls: exactly 800,000 hits'
# threads.c: 8 threads, each calls tick(t) 100000 times, all started
# together at a barrier, so the calls overlap: 800000 hits, none lost
# (a breakpoint lifted to single-step in one thread would let the
# others run past it).  Total = 100000 * (1 + ... + 8) = 3600000.
prog=threads
kdiff=yes
TMO=${E2E_STAT_TIMEOUT:-300}
defs='p:tick tick'
case_run() {
	dp_stat -- "$P" 8 100000
}
case_result() {
	stat_result
}
expected() {
	cat <<'EOF2'
> threads: 8 x 100000 calls, total 3600000
# stat 800000 kprobes:tick
# seconds time elapsed
# exit=0
EOF2
}
