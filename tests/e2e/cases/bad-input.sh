# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='bad input: clear message, non-zero exit, the command not started, nothing armed'
# Each line of the result is one attempt: its exit status and whether
# dprobe's message says what is wrong; for -- CMD attempts, also whether
# the command ran (it must not: the definitions are checked first).
#   unknown symbol            exit 1, the kernel's "Invalid probed address
#                             or symbol" (BAD_PROBE_ADDR)
#   asm_add+1                 exit 1, "Probe point is not an instruction
#                             boundary" (asm_add starts with a 3-byte mov)
#   PATH:OFFSET past the code exit 1
#   no such pid               exit 1, the pid in the message
#   not executable / not ELF  exit non-zero, command not run
#   no such command           exit 127 (docs/dprobe-trace.md)
#   pid already traced        exit 1; the first tracer keeps working: the
#                             waiter's 3 calls are its events
prog=insns
case_run() {
	W=$(build_prog waiter) || exit 1
	: >"$T/result"
	try() {
		what=$1
		pat=$2
		shift 2
		"$DPROBE" trace -o "$T/ev" "$@" >"$T/out" 2>"$T/err" </dev/null
		rc=$?
		msg=no
		grep -q -e "$pat" "$T/err" && msg=yes
		ran=no
		[ -s "$T/out" ] && ran=yes
		echo "# $what: exit=$rc message=$msg ran=$ran" >>"$T/result"
	}
	try 'unknown symbol' 'Invalid probed address or symbol' \
		-e 'p:x no_such_function_here' -- "$P"
	try 'inside an instruction' 'not an instruction boundary' \
		-e 'p:x asm_add+1' -- "$P"
	try 'offset past the code' 'error' \
		-e "p:x $P:0x7fffff00" -- "$P"
	try 'no such pid' '999999999' -e 'p:x work' -p 999999999
	printf 'not a program\n' >"$T/text"
	chmod +x "$T/text"
	try 'not ELF' 'text' -e "p:x work" -- "$T/text"
	try 'no such command' 'no-such-command' -e 'p:x work' -- "$T/no-such-command"
	# a process another dprobe traces
	start_bg "$T/wout" "$W" "$T/go" 3 || exit 1
	pid=$BG_PID
	"$DPROBE" trace -e 'p:w work i=%di:s64' -o "$T/first" -p "$pid" \
		2>"$T/first.err" &
	dp=$!
	wait_armed "$pid" "$W" work || echo "# the first tracer never armed" >>"$T/result"
	"$DPROBE" trace -e 'p:w2 work' -o "$T/second" -p "$pid" >"$T/out" 2>"$T/err"
	rc=$?
	msg=no
	grep -q -i -e 'trace' -e 'attach' -e 'permit' "$T/err" && msg=yes
	echo "# already traced: exit=$rc message=$msg" >>"$T/result"
	touch "$T/go"
	wait "$pid"
	echo "# waiter exit=$?" >>"$T/result"
	wait $dp
	echo "# first tracer exit=$?" >>"$T/result"
	norm_trace <"$T/first" >>"$T/result"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
# unknown symbol: exit=1 message=yes ran=no
# inside an instruction: exit=1 message=yes ran=no
# offset past the code: exit=1 message=yes ran=no
# no such pid: exit=1 message=yes ran=no
# not ELF: exit=1 message=yes ran=no
# no such command: exit=127 message=yes ran=no
# already traced: exit=1 message=yes
# waiter exit=0
# first tracer exit=0
waiter w: (work+0x0/{size@W:work}) i=1
waiter w: (work+0x0/{size@W:work}) i=2
waiter w: (work+0x0/{size@W:work}) i=3
EOF2
}
