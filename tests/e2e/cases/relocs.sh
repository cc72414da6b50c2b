# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='probes on functions that start with a call, a jcc, a jmp: jump-optimised, output as untraced, an exception through a relocated call'
# relocs.cc: assembler functions that start with call rel32 (rl_call),
# call *ptr(%rip) (rl_callmem), test+je (rl_jcc), jmp rel32 (rl_tail, a
# tail call into rl_leaf), jmp rel8 (rl_jmp8), and a probe on a jl with
# the cmp's flags live (rl_jccmid+{insn:1}).  rl_run(x), x = 2, 0, 7:
# rl_call 3x+1, rl_callmem 3x+2, rl_jcc x ? x+10 : -1, rl_jccmid x < 5 ?
# x+200 : x+100, rl_tail 3x (rl_leaf returns into rl_run, so the return
# probe reports 3x there), rl_jmp8 x+7.  rl_guarded(i), i = 0..3:
# rl_callthrow(i) calls rl_throwpad first, whose call of rl_thrower is
# probed too (pad); odd i throws through both while rl_callthrow's call
# is on the stack, so the unwinder must find the return address the
# untraced call pushes: caught, and the return of rl_callthrow is
# abandoned (missed, 2).  Even i returns 10i+1.  33 + 10 events.
# On the in-process engine every probe must be jump-optimised (--profile
# lists how each is armed); the ptrace engine runs the same definitions
# with int3s, the output the same.
prog=relocs
needs=g++
opts=--profile
defs='p:call rl_call x=%di:s64
r:callr rl_call ret=$retval:s64
p:callmem rl_callmem x=%di:s64
r:callmemr rl_callmem ret=$retval:s64
p:jcc rl_jcc x=%di:s64
r:jccr rl_jcc ret=$retval:s64
p:jccmid rl_jccmid+{insn:rl_jccmid:1} x=%di:s64
p:tail rl_tail x=%di:s64
r:tailr rl_tail ret=$retval:s64
p:jmp8 rl_jmp8 x=%di:s64
r:jmp8r rl_jmp8 ret=$retval:s64
p:ct rl_callthrow x=%di:s64
r:ctr rl_callthrow ret=$retval:s64
p:pad rl_throwpad+{insn:rl_throwpad:1} x=%di:s64'
case_check() {
	[ "${DPROBE_ENGINE:-auto}" = ptrace ] && return 0
	_n=$(grep -c '^kprobes/[a-z0-9]* 0x[0-9a-f]* optimized$' "$T/stderr")
	[ "$_n" = 14 ] && return 0
	echo "$_n of 14 probes jump-optimised:"
	grep '^kprobes/' "$T/stderr"
	return 1
}
expected() {
	for x in 2 0 7; do
		ent() {
			echo "relocs $1: ($2+${3:-0x0}/{size:$2}) x=$x"
		}
		ret() {
			echo "relocs $1: ({retsite:rl_run:$2} <- $2) ret=$3"
		}
		jcc=-1
		[ $x != 0 ] && jcc=$((x + 10))
		mid=$((x + 100))
		[ $x -lt 5 ] && mid=$((x + 200))
		ent call rl_call; ret callr rl_call $((3 * x + 1))
		ent callmem rl_callmem; ret callmemr rl_callmem $((3 * x + 2))
		ent jcc rl_jcc; ret jccr rl_jcc $jcc
		ent jccmid rl_jccmid '{insn:rl_jccmid:1}'
		ent tail rl_tail; ret tailr rl_tail $((3 * x))
		ent jmp8 rl_jmp8; ret jmp8r rl_jmp8 $((x + 7))
	done
	for i in 0 1 2 3; do
		echo "relocs ct: (rl_callthrow+0x0/{size:rl_callthrow}) x=$i"
		echo "relocs pad: (rl_throwpad+{insn:rl_throwpad:1}/{size:rl_throwpad}) x=$i"
		[ $((i % 2)) = 0 ] &&
			echo "relocs ctr: ({retsite:rl_guarded:rl_callthrow} <- rl_callthrow) ret=$((10 * i + 1))"
	done
	cat <<'EOF2'
> relocs: x=2 call 7 callmem 8 jcc 12 jccmid 202 tail 6 jmp8 9
> relocs: x=0 call 1 callmem 2 jcc -1 jccmid 200 tail 0 jmp8 7
> relocs: x=7 call 22 callmem 23 jcc 17 jccmid 107 tail 21 jmp8 14
> relocs: round 0 returned 1
> relocs: round 1 caught odd
> relocs: round 2 returned 21
> relocs: round 3 caught odd
> relocs: total 222
# dprobe: 43 events, 0 filtered, 2 missed, 0 lost
# exit=0
EOF2
}
