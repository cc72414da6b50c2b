# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--filter on an argument: n > 2 && n != 4'
# fib(6)'s 25 calls have n = 6 once, 5 once, 4 twice, 3 three times, 2
# five, 1 eight, 0 five times.  The filter keeps n in {6, 5, 3}: 5
# events, in call order (the awk walks the tree), 20 filtered out.
prog=fib
args=6
opts='--filter fe=n>2&&n!=4'
kdiff=yes
defs='p:fe fib n=%di:s64'
expected() {
	awk 'function f(n,   k) {
		if (n > 2 && n != 4)
			printf "fib fe: (fib+0x0/{size:fib}) n=%d\n", n
		if (n >= 2)
			for (k = 1; k <= 2; k++)
				f(n - k)
	}
	BEGIN { f(6) }'
	cat <<'EOF2'
> fib: fib(6) = 8, 25 calls
# dprobe: 5 events, 20 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
