# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe stat counts entry and return hits'
# fib 12 5: fib(12) five times; fib(12) makes 2 * F(13) - 1 = 2 * 233 - 1
# = 465 calls, so 2325 entries and 2325 returns (the program prints the
# calls of all five).  Each count line is
# "<count> <group>:<event>" (symbol places default to group kprobes),
# then the elapsed time.  r20: the recursion is 12 deep, no miss.
prog=fib
args='12 5'
kdiff=yes
defs='p:fe fib
r20:fr fib'
case_run() {
	dp_stat -- "$P" 12 5
}
case_result() {
	stat_result
}
expected() {
	cat <<'EOF2'
> fib: fib(12) = 144, 2325 calls
# stat 2325 kprobes:fe
# stat 2325 kprobes:fr
# seconds time elapsed
# exit=0
EOF2
}
