# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='probes at offsets inside functions; a RIP-relative load; return values'
# asm_add(3, 4): instruction 0 mov %rdi,%rax, 1 add %rsi,%rax,
# 2 lea 0x10(%rax),%rax, 3 ret.  Before instruction 1 %ax = a = 3, before
# 2 it is a + b = 7, before 3 (the ret) 23, which is also $retval.
# asm_riprd() is one RIP-relative load of asm_data (1000): a probe on it
# must not change what it loads ($retval 1000, printed 1000).
# work(i, "abc") for i = 0..3, probed at its second instruction (where
# that is depends on -O; the offset comes from objdump): 4 hits.  The
# return probes report where main called them.
prog=insns
kdiff=yes
defs='p:add1 asm_add+{insn:asm_add:1} ax=%ax:s64 b=%si:s64
p:add2 asm_add+{insn:asm_add:2} ax=%ax:s64
p:add3 asm_add+{insn:asm_add:3} ax=%ax:s64
r:addret asm_add ret=$retval:s64
p:rip asm_riprd
r:ripret asm_riprd ret=$retval:s64
p:w1 work+{insn:work:1} comm=$comm'
expected() {
	cat <<'EOF2'
insns add1: (asm_add+{insn:asm_add:1}/{size:asm_add}) ax=3 b=4
insns add2: (asm_add+{insn:asm_add:2}/{size:asm_add}) ax=7
insns add3: (asm_add+{insn:asm_add:3}/{size:asm_add}) ax=23
insns addret: ({retsite:main:asm_add} <- asm_add) ret=23
insns rip: (asm_riprd+0x0/{size:asm_riprd})
insns ripret: ({retsite:main:asm_riprd} <- asm_riprd) ret=1000
insns w1: (work+{insn:work:1}/{size:work}) comm="insns"
insns w1: (work+{insn:work:1}/{size:work}) comm="insns"
insns w1: (work+{insn:work:1}/{size:work}) comm="insns"
insns w1: (work+{insn:work:1}/{size:work}) comm="insns"
> insns: asm_mix(1) = 1004
> insns: asm_mix(0) = -1000
> insns: asm_mix(5) = 1020
> insns: asm_add(3, 4) = 23
> insns: asm_riprd() = 1000
> insns: total 1042
# dprobe: 10 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
