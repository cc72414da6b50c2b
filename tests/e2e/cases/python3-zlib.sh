# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="a Debian program: python3's zlib.compress through libz.so.1"
# zlib.compress(data, 7) in CPython 3.11 calls deflateInit2(&zst, level,
# DEFLATED, wbits, DEF_MEM_LEVEL, Z_DEFAULT_STRATEGY) with wbits =
# MAX_WBITS: deflateInit2_(strm, 7, 8, 15, 8, 0, version, size), the six
# first in %di %si %dx %cx %r8 %r9; the version string (ZLIB_VERSION,
# "1.2.13" for Debian 12's zlib1g) is the 7th argument, on the stack.
# Nothing else in that python run initialises a deflate stream.
levels=O2
LIBZ=/lib/x86_64-linux-gnu/libz.so.1
case_run() {
	[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3" >"$T/skip"; exit 2; }
	[ -e "$LIBZ" ] || { echo "no $LIBZ" >"$T/skip"; exit 2; }
	dp_trace -e 'p:di libz.so.1:deflateInit2_ level=%si:s32 method=%dx:s32 wbits=%cx:s32 mem=%r8:s32 strat=%r9:s32 ver=+0($stack1):string' \
		-- /usr/bin/python3 -c 'import zlib; print(len(zlib.decompress(zlib.compress(b"x" * 1000, 7))))'
}
expected() {
	cat <<'EOF2'
python3 di: (deflateInit2_+0x0/{size@LIBZ:deflateInit2_}) level=7 method=8 wbits=15 mem=8 strat=0 ver="1.2.13"
> 1000
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
