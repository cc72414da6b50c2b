# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='bitfield types on registers and memory'
# Bitfield b<W>@<O>/<C>: fetch C bits, value = bits O..O+W-1, unsigned.
#   %si = 0x1122334455667788: b4@4/16 of 0x7788 = 0x8 = 8;
#     b8@56/64 = 0x11 = 17; b3@0/8 of 0x88 = 0; b4@4/8 of 0x88 = 8
#   %di = -7: b1@63/64 = the sign bit = 1; b32@0/32 = 4294967289
#   %r9 = LONG_MAX: b63@0/64 = 9223372036854775807
#   take_rec's %di = &rec1, rec1.bits (+8) = 0xbeef = 1011 1110 1110 1111:
#     b4@4/16 = 0xe = 14, b1@15/16 = 1, b12@4/16 = 0xbee = 3054;
#     b4@0/8[2]: bytes 0xef, 0xbe (little endian) -> {15,14}
#     b2@6/8 of byte +56 (0x11 = 0001 0001) = 0
#     b5@0/8 of byte +59 (0xff) = 31
prog=args
kdiff=yes
defs='p:bf_reg take_ints a=%si:b4@4/16 b=%si:b8@56/64 c=%si:b3@0/8 d=%si:b4@4/8 sign=%di:b1@63/64 low=%di:b32@0/32 big=%r9:b63@0/64
p:bf_mem take_rec e=+8(%di):b4@4/16 top=+8(%di):b1@15/16 mid=+8(%di):b12@4/16 arr=+8(%di):b4@0/8[2] z=+56(%di):b2@6/8 f=+59(%di):b5@0/8'
expected() {
	cat <<'EOF2'
args bf_reg: (take_ints+0x0/{size:take_ints}) a=8 b=17 c=0 d=8 sign=1 low=4294967289 big=9223372036854775807
args bf_mem: (take_rec+0x0/{size:take_rec}) e=14 top=1 mid=3054 arr={15,14} z=0 f=31
> args: ok
# dprobe: 2 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
