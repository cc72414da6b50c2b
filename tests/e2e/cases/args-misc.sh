# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='$comm, immediates, globals by symbol'
# take_nothing() runs in the process "args" (comm = the file's name):
# $comm and $COMM are "args".  Immediates: \123 = 0x7b (x64 default),
# \-5:s32 = -5, \0x10:u8 = 16, \255:s8 = -1, \-1:u64 = 2^64 - 1.
# Globals: g_magic = 0x12345678, g_text = "global text" (its first six
# chars as char[6]).
prog=args
kdiff=yes
defs='p:misc take_nothing comm=$comm COMM=$COMM:string i1=\123 i2=\-5:s32 i3=\0x10:u8 i4=\255:s8 i5=\-1:u64
p:globals take_ints magic=@g_magic:x64 m32=@g_magic:u32 text=@g_text:string tc=@g_text:char[6]'
expected() {
	cat <<'EOF2'
args globals: (take_ints+0x0/{size:take_ints}) magic=0x12345678 m32=305419896 text="global text" tc={'g','l','o','b','a','l'}
args misc: (take_nothing+0x0/{size:take_nothing}) comm="args" COMM="args" i1=0x7b i2=-5 i3=16 i4=-1 i5=18446744073709551615
> args: ok
# dprobe: 2 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
