# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='recursion under entry and return probes: fib(10)'
# fib.c: fib(n) = n for n < 2, else fib(n-1) + fib(n-2), the two calls
# made in that order from fib's one call site; main calls fib(10) once.
# fib(10) makes 2 * F(11) - 1 = 177 calls, 354 events.  The expected
# sequence is the call tree walked depth first (the awk below is that
# recursion): an entry event with n, then the callee's events, then the
# return event with fib(n), returning into fib (after its one call) or,
# for the outermost call, into main.  The deepest chain is fib(10)..fib(1):
# 10 pending returns, within the default MAXACTIVE (10 on 2 CPUs), so no
# miss.
prog=fib
args=10
kdiff=yes
defs='p:fe fib n=%di:s64
r:fr fib ret=$retval:s64'
expected() {
	awk 'function f(n, site,   s, k) {
		printf "fib fe: (fib+0x0/{size:fib}) n=%d\n", n
		s = n
		if (n >= 2) {
			s = 0
			for (k = 1; k <= 2; k++)
				s += f(n - k, "{retsite:fib:fib}")
		}
		printf "fib fr: (%s <- fib) ret=%d\n", site, s
		return s
	}
	BEGIN { f(10, "{retsite:main:fib}") }'
	cat <<'EOF2'
> fib: fib(10) = 55, 177 calls
# dprobe: 354 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
