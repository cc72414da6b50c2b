# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='MAXACTIVE: r3 on fib(6) misses the returns of calls made while 3 are pending; --profile'
# A return probe keeps at most MAXACTIVE (here 3) pending instances; a
# call made while all are in use is a miss and its return is not
# reported (kernel kretprobe semantics).  The awk below walks fib(6)'s
# call tree keeping that count: of its 25 calls, the three levels nearest
# the top get an instance (fib(6); fib(5), fib(4); their four children:
# 7), every deeper call finds 3 pending and is a miss (18).  7 return
# events, 18 misses.  --profile prints the kprobe_profile line
# "  %-44s %15lu %15lu" (event, hits, misses).  For a return probe the
# kernel counts a hit in kretprobe_dispatcher, the handler that runs at
# the return (trace_kprobe.c: raw_cpu_inc(*tk->nhit)), and a miss when no
# instance was free at the entry (rp.nmissed): hits 7, misses 18.
prog=fib
args=6
opts=--profile
defs='r3:fr fib ret=$retval:s64'
case_result() {
	trace_result
	grep -E '^  [^ ]+ +[0-9]+ +[0-9]+$' "$T/stderr" | sed 's/^/# profile:/'
}
expected() {
	awk 'function f(n, site,   s, k, has) {
		has = 0
		if (pending < 3) { pending++; has = 1 } else missed++
		s = n
		if (n >= 2) {
			s = 0
			for (k = 1; k <= 2; k++)
				s += f(n - k, "{retsite:fib:fib}")
		}
		if (has) {
			printf "fib fr: (%s <- fib) ret=%d\n", site, s
			pending--; hits++
		}
		return s
	}
	BEGIN {
		f(6, "{retsite:main:fib}")
		print "> fib: fib(6) = 8, 25 calls"
		printf "# dprobe: %d events, 0 filtered, %d missed, 0 lost\n", hits, missed
		print "# exit=0"
		printf "# profile:  %-44s %15s %15s\n", "fr", hits, missed
	}'
}
