# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='strings, user strings, nested dereferences, faults'
# take_rec(&rec1, "hello world", &out1, NULL):
#   +0(%si):string, :ustring and +u0(%si):string all read "hello world";
#   char[5] of it {'h','e','l','l','o'}; +6(%si):string = "world"
#   rec1.out (+48) = &out1; out1.in (+0) = &in1; in1.name (+16) =
#   "inner name": +0(+16(+0(+48(%di)))):string
#   in1.v = -42: +0(+0(+48(%di))):s64; out1.in->w through %dx = &out1:
#   +8(+0(%dx)) = 0x0123456789abcdef; out1.pad +8(%dx) = 7
#   %cx = NULL: a string read there faults -> (fault); a number whose
#   final read faults is 0 (spec 3.6)
prog=args
kdiff=yes
sort_events=1
defs='p:strs take_rec s=+0(%si):string us=+0(%si):ustring uu=+u0(%si):string sc=+0(%si):char[5] tail=+6(%si):string
p:nested take_rec deep=+0(+16(+0(+48(%di)))):string v=+0(+0(+48(%di))):s64 w=+8(+0(%dx)) pad=+8(%dx):s64
p:faults take_rec nul=+0(%cx):string nulx=+0(%cx):x64 nul8=+8(%cx):u8'
expected() {
	cat <<'EOF2'
args strs: (take_rec+0x0/{size:take_rec}) s="hello world" us="hello world" uu="hello world" sc={'h','e','l','l','o'} tail="world"
args nested: (take_rec+0x0/{size:take_rec}) deep="inner name" v=-42 w=0x123456789abcdef pad=7
args faults: (take_rec+0x0/{size:take_rec}) nul=(fault) nulx=0x0 nul8=0
> args: ok
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
