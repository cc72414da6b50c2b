# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a probe on every instruction of asm_mix: push, RIP-relative lea, jcc, call, jmp, pop, ret'
# insns.c: asm_mix's 15 instructions (K = 0..14) are
#   0 push %rbx   1 mov %rdi,%rbx   2 lea asm_data(%rip),%rax
#   3 mov (%rax),%rax   4 test %rbx,%rbx   5 jz 12   6 add %rbx,%rax
#   7 push %rax   8 call asm_leaf   9 pop %rdx   10 add %rdx,%rax
#   11 jmp 13   12 neg %rax   13 pop %rbx   14 ret
# main calls asm_mix(1), asm_mix(0), asm_mix(5).  %di = x throughout
# (asm_leaf does not touch it).  For x != 0 the probes hit in the order
# 0..11, then asm_leaf, 13, 14, with %ax = 1000 at 4..6 (asm_data), 1000+x
# at 7 and 8 (and on the stack top at 8 and 9: the push), 3x at 9 and 10
# (asm_leaf's result), 1000+4x at 11, 13, 14.  For x = 0: 0..5, then 12
# with %ax = 1000, then 13, 14 with -1000.  If a displaced instruction ran
# wrong (RIP-relative operand not fixed up, call/jmp/push not emulated),
# the program's own results (printed, 1004 -1000 1020) would differ.
prog=insns
kdiff=yes
defs='p:m0 asm_mix+{insn:asm_mix:0} x=%di:s64
p:m1 asm_mix+{insn:asm_mix:1} x=%di:s64
p:m2 asm_mix+{insn:asm_mix:2} x=%di:s64 bx=%bx:s64
p:m3 asm_mix+{insn:asm_mix:3} x=%di:s64
p:m4 asm_mix+{insn:asm_mix:4} x=%di:s64 ax=%ax:s64
p:m5 asm_mix+{insn:asm_mix:5} x=%di:s64 ax=%ax:s64
p:m6 asm_mix+{insn:asm_mix:6} x=%di:s64 ax=%ax:s64
p:m7 asm_mix+{insn:asm_mix:7} x=%di:s64 ax=%ax:s64
p:m8 asm_mix+{insn:asm_mix:8} x=%di:s64 ax=%ax:s64 top=+0(%sp):s64
p:m9 asm_mix+{insn:asm_mix:9} x=%di:s64 ax=%ax:s64 top=+0(%sp):s64
p:m10 asm_mix+{insn:asm_mix:10} x=%di:s64 ax=%ax:s64 dx=%dx:s64
p:m11 asm_mix+{insn:asm_mix:11} x=%di:s64 ax=%ax:s64
p:m12 asm_mix+{insn:asm_mix:12} x=%di:s64 ax=%ax:s64
p:m13 asm_mix+{insn:asm_mix:13} x=%di:s64 ax=%ax:s64
p:m14 asm_mix+{insn:asm_mix:14} x=%di:s64 ax=%ax:s64
p:leaf asm_leaf x=%di:s64'
expected() {
	for x in 1 0 5; do
		at() {
			printf 'insns m%s: (asm_mix+{insn:asm_mix:%s}/{size:asm_mix}) x=%s%s\n' \
				"$1" "$1" "$x" "${2:-}"
		}
		at 0; at 1; at 2 " bx=$x"; at 3
		at 4 " ax=1000"; at 5 " ax=1000"
		if [ "$x" = 0 ]; then
			at 12 " ax=1000"
			at 13 " ax=-1000"; at 14 " ax=-1000"
			continue
		fi
		at 6 " ax=1000"
		at 7 " ax=$((1000 + x))"
		at 8 " ax=$((1000 + x)) top=$((1000 + x))"
		printf 'insns leaf: (asm_leaf+0x0/{size:asm_leaf}) x=%s\n' "$x"
		at 9 " ax=$((3 * x)) top=$((1000 + x))"
		at 10 " ax=$((3 * x)) dx=$((1000 + x))"
		at 11 " ax=$((1000 + 4 * x))"
		at 13 " ax=$((1000 + 4 * x))"
		at 14 " ax=$((1000 + 4 * x))"
	done
	cat <<'EOF2'
> insns: asm_mix(1) = 1004
> insns: asm_mix(0) = -1000
> insns: asm_mix(5) = 1020
> insns: asm_add(3, 4) = 23
> insns: asm_riprd() = 1000
> insns: total 1042
# dprobe: 39 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
