# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='$stackN and $stack: arguments passed on the stack'
# take_many(1, 2, 3, 4, 5, 6, -7, 0x7fffffff00000000): the first six in
# %di %si %dx %cx %r8 %r9; at entry $stack0 is the return address,
# $stack1 the 7th argument (-7) and $stack2 the 8th
# (0x7fffffff00000000 = 9223372032559808512).  +8($stack) and
# +16($stack) read the same words.  The return value is the sum,
# 14 + 0x7fffffff00000000 = 9223372032559808526, returned into main.
prog=args
kdiff=yes
defs='p:many take_many a1=%di:s64 a6=%r9:s64 a7=$stack1:s64 a8=$stack2:s64 a8x=$stack2:x64 a7b=+8($stack):s64 a8b=+16($stack):x64 a8lo=$stack2:u32
r:manyret take_many ret=$retval:s64'
expected() {
	cat <<'EOF2'
args many: (take_many+0x0/{size:take_many}) a1=1 a6=6 a7=-7 a8=9223372032559808512 a8x=0x7fffffff00000000 a7b=-7 a8b=0x7fffffff00000000 a8lo=0
args manyret: ({retsite:main:take_many} <- take_many) ret=9223372032559808526
> args: ok
# dprobe: 2 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
