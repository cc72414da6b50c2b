# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='memory fetches: struct fields, arrays, chars, string arrays'
# take_rec(&rec1, "hello world", &out1, NULL); rec1 in args.c:
#   +0 tag "record": as string "record"; char 'r'; char[3] {'r','e','c'};
#      x8[4] the bytes of "reco" = {0x72,0x65,0x63,0x6f}
#   +8 bits 0xbeef; +10 neg -5 (s16), as u16 65531
#   +12 u32s {1,4294967295}; as s32[2] {1,-1}; as x64 (both, little
#      endian) 0xffffffff00000001
#   +24 names: string[3] reads three pointers -> {"alpha","beta","gamma"};
#      +0(+24(%di)) is the string the first points to, "alpha", and
#      +0(+32(%di)) the second, "beta" (for a string type the last
#      dereference reads the string AT its address)
#   +56 bytes {0x11,0x22,0x33,0xff}: u8[4] {17,34,51,255}, s8[4]
#      {17,34,51,-1}, u16[2] {0x2211,0xff33} = {8721,65331}
prog=args
kdiff=yes
defs='p:mem take_rec tag=+0(%di):string c=+0(%di):char cs=+0(%di):char[3] tx=+0(%di):x8[4] bits=+8(%di):x16 neg=+10(%di):s16 negu=+10(%di):u16
p:arrays take_rec u32s=+12(%di):u32[2] s32s=+12(%di):s32[2] both=+12(%di):x64 names=+24(%di):string[3] first=+0(+24(%di)):string second=+0(+32(%di)):string
p:bytes take_rec u8s=+56(%di):u8[4] s8s=+56(%di):s8[4] u16s=+56(%di):u16[2] one=+58(%di):x8[1]'
sort_events=1
expected() {
	cat <<'EOF2'
args mem: (take_rec+0x0/{size:take_rec}) tag="record" c='r' cs={'r','e','c'} tx={0x72,0x65,0x63,0x6f} bits=0xbeef neg=-5 negu=65531
args arrays: (take_rec+0x0/{size:take_rec}) u32s={1,4294967295} s32s={1,-1} both=0xffffffff00000001 names={"alpha","beta","gamma"} first="alpha" second="beta"
args bytes: (take_rec+0x0/{size:take_rec}) u8s={17,34,51,255} s8s={17,34,51,-1} u16s={8721,65331} one={0x33}
> args: ok
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
