# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f and children exec'"'"'d with an empty environment (execve, env -i): they run intact; traced on ptrace, out of the in-process engine'"'"'s reach'
# launch env: the parent calls work(1); a fork child calls work(2),
# then execve()s the program with an empty environment, which calls
# work(3) (same process); the parent calls work(4); a fork child execs
# "env -i SELF child envi 5", env(1) execs the program with an empty
# environment for work(5); the parent calls work(6).  The parent waits
# for each child, so the calls come in that order; returns into say()
# (a * 10 + 1).  Processes numbered by first event: parent [1], the
# first fork child [2] (work(2) and, if traced, work(3)); the second
# child [3] (work(5), if traced).
# The engines differ on work(3) and work(5), and only there: the
# in-process engine follows an exec through LD_PRELOAD, which an empty
# environment drops, so the agent cannot come back in those two
# images: they run untraced.  The ptrace engine follows every exec.
# So the compared result leaves work(3) and work(5) out (and the
# summary); what holds on both: every other event, and the output of
# every process, intact (the empty-environment children say so).
# case_check then asserts each engine's side: on ptrace work(3) in [2]
# and work(5) in [3], 12 events; on the in-process engine (auto) none of
# them, 8 events.  On auto this must run on the in-process engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=launch
defs='p:w {bin}:work a=%di:s64
r:wr {bin}:work ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -f -- "$P" env
}
# the events of the children exec'd without an environment
envclear_only='( a=[35]| ret=[35]1)$'
case_result() {
	numbered_events | grep -Ev "$envclear_only"
	sed 's/^/> /' "$T/stdout"
	echo "# exit=$(cat "$T/rc")"
}
case_check() {
	engine_check || return 1
	numbered_events | grep -E "$envclear_only" >"$T/envclear.got"
	if [ "${DPROBE_ENGINE:-auto}" = ptrace ]; then
		n=12
		subst >"$T/envclear.exp" <<'EOF2'
[2] launch w: (work+0x0/{size:work}) a=3
[2] launch wr: ({retsite:say:work} <- work) ret=31
[3] launch w: (work+0x0/{size:work}) a=5
[3] launch wr: ({retsite:say:work} <- work) ret=51
EOF2
	else
		n=8
		: >"$T/envclear.exp"
	fi
	echo "# dprobe: $n events, 0 filtered, 0 missed, 0 lost" >>"$T/envclear.exp"
	summary_of "$T/stderr" >>"$T/envclear.got"
	diff -u "$T/envclear.exp" "$T/envclear.got" || {
		echo "the empty-environment children's events (and the summary) are not this engine's"
		return 1
	}
}
expected() {
	for ap in 1:1 2:2 4:1 6:1; do
		a=${ap%:*}
		p=${ap#*:}
		echo "[$p] launch w: (work+0x0/{size:work}) a=$a"
		echo "[$p] launch wr: ({retsite:say:work} <- work) ret=$((a * 10 + 1))"
	done
	cat <<'EOF2'
> launch: parent work(1) = 11
> launch: fork work(2) = 21
> launch: noenv work(3) = 31 (empty environment)
> launch: fork child ok
> launch: parent work(4) = 41
> launch: envi work(5) = 51 (empty environment)
> launch: env -i child ok
> launch: parent work(6) = 61
# exit=0
EOF2
}
