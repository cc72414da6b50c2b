# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='integer fetch types on registers at function entry'
# args.c calls take_ints(-7, 0x1122334455667788, 255, LONG_MIN, 0,
# LONG_MAX): %di = 0xfffffffffffffff9, %si = 0x1122334455667788,
# %dx = 0xff, %cx = 0x8000000000000000, %r8 = 0, %r9 = 0x7fffffffffffffff.
# A TYPE keeps the low bytes of the register and prints them:
#   %di  u8 0xf9 = 249, u16 0xfff9 = 65529, u32 0xfffffff9 = 4294967289,
#        u64 = 2^64 - 7 = 18446744073709551609, s8..s64 = -7,
#        x8..x64 = the low bytes in hex without padding, no type = x64
#   %si  u8/s8 0x88 = 136/-120, u16/s16 0x7788 = 30600, u32/s32
#        0x55667788 = 1432778632, u64/s64 = 1234605616436508552
#   %dx  s8 0xff = -1, s16 0x00ff = 255
#   %cx  s64 = -9223372036854775808, u64 = 9223372036854775808, s32 0
#   %r8  0 in every type
#   %r9  s64 = 9223372036854775807, s32/u32 of 0xffffffff = -1/4294967295
# Four events on one address: their order is not part of the contract
# (the kernel runs the most recently enabled first), so events are sorted.
prog=args
kdiff=yes
sort_events=1
defs='p:ints_di take_ints u8=%di:u8 u16=%di:u16 u32=%di:u32 u64=%di:u64 s8=%di:s8 s16=%di:s16 s32=%di:s32 s64=%di:s64 x8=%di:x8 x16=%di:x16 x32=%di:x32 x64=%di:x64 dflt=%di
p:ints_si take_ints u8=%si:u8 s8=%si:s8 u16=%si:u16 s16=%si:s16 u32=%si:u32 s32=%si:s32 u64=%si:u64 s64=%si:s64 x8=%si:x8 x16=%si:x16 x32=%si:x32 x64=%si:x64
p:ints_dxcx take_ints s8=%dx:s8 u8=%dx:u8 s16=%dx:s16 x16=%dx:x16 s64=%cx:s64 u64=%cx:u64 x64=%cx:x64 s32=%cx:s32 x32=%cx:x32
p:ints_r8r9 take_ints z8=%r8:s8 z64=%r8:u64 zx=%r8 s64=%r9:s64 s32=%r9:s32 u32=%r9:u32 x16=%r9:x16 x64=%r9:x64'
expected() {
	cat <<'EOF2'
args ints_di: (take_ints+0x0/{size:take_ints}) u8=249 u16=65529 u32=4294967289 u64=18446744073709551609 s8=-7 s16=-7 s32=-7 s64=-7 x8=0xf9 x16=0xfff9 x32=0xfffffff9 x64=0xfffffffffffffff9 dflt=0xfffffffffffffff9
args ints_si: (take_ints+0x0/{size:take_ints}) u8=136 s8=-120 u16=30600 s16=30600 u32=1432778632 s32=1432778632 u64=1234605616436508552 s64=1234605616436508552 x8=0x88 x16=0x7788 x32=0x55667788 x64=0x1122334455667788
args ints_dxcx: (take_ints+0x0/{size:take_ints}) s8=-1 u8=255 s16=255 x16=0xff s64=-9223372036854775808 u64=9223372036854775808 x64=0x8000000000000000 s32=0 x32=0x0
args ints_r8r9: (take_ints+0x0/{size:take_ints}) z8=0 z64=0 zx=0x0 s64=9223372036854775807 s32=-1 u32=4294967295 x16=0xffff x64=0x7fffffffffffffff
> args: ok
# dprobe: 4 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
