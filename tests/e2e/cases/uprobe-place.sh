# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='PATH:OFFSET places print as uprobes; @+OFFS; the default group uprobes'
# args.c built without PIE, so link-time addresses are run-time ones.
# A PATH:OFFSET place at take_ints' file offset prints "(0x<address>)"
# (spec 6.3), its return "(<return address in main> <- <take_ints>)".
# take_ints returns -7 ^ 0x1122334455667788 ^ 255 ^ LONG_MIN ^ 0 ^
# LONG_MAX: LONG_MIN ^ LONG_MAX = -1, -7 ^ -1 = 6, 6 ^ 255 = 0xf9, so
# 0x1122334455667788 ^ 0xf9 = 0x1122334455667771.  @+OFFS reads at the
# probe's load bias + OFFS: {foffs:SYM} is SYM's address minus (text
# segment address - its file offset).  A probe at an offset inside the
# function (its third instruction; registers there depend on -O, so it
# reads $comm) prints that address.
prog=args
variant=nopie
kdiff=yes
defs='p:up {bin}:{off:take_ints} a=%di:s64 magic=@+{foffs:g_magic}:x64 text=@+{foffs:g_text}:string
r:upret {bin}:{off:take_ints} ret=$retval:x64
p:upin {bin}:{insnoff:take_rec:2} c=$comm'
expected() {
	cat <<'EOF2'
args up: ({vaddr:take_ints}) a=-7 magic=0x12345678 text="global text"
args upret: ({retaddr:main:take_ints} <- {vaddr:take_ints}) ret=0x1122334455667771
args upin: ({insnva:take_rec:2}) c="args"
> args: ok
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
