# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='MOD:SYM in libc, by soname and by path'
# libc.c calls getenv("E2E_VAR") (set to e2e-value) and
# getenv("E2E_UNSET"), in that order, from main (through the PLT, the
# first and second call in main's code); then strtol("12345", ., 10),
# strtol("-0x1f", ., 16), and atoi("77"), which is strtol("77", 0, 10)
# inside libc.  Nothing else calls them (glibc's start-up reads its
# environment without getenv).  getenv returns the value's address:
# "e2e-value", then NULL ((fault)).  strtol has aliases at its address
# (strtoll, strtoq, strtoimax): whichever name is printed is accepted.
prog=libc
kdiff=yes
syslibs=libc.so.6
LIBC=/lib/x86_64-linux-gnu/libc.so.6
defs='p:ge libc.so.6:getenv name=+0(%di):string
r:geret libc.so.6:getenv val=+0($retval):string
p:st /lib/x86_64-linux-gnu/libc.so.6:strtol s=+0(%di):string base=%dx:s32'
case_run() {
	E2E_VAR=e2e-value dp_trace -- "$P"
}
case_result() {
	trace_result | sed -E 's/ st: \(strto(l|ll|q|imax)\+/ st: (strtol+/'
}
expected() {
	cat <<'EOF2'
libc ge: (getenv+0x0/{size@LIBC:getenv}) name="E2E_VAR"
libc geret: ({retsite:main:getenv@plt:1} <- getenv) val="e2e-value"
libc ge: (getenv+0x0/{size@LIBC:getenv}) name="E2E_UNSET"
libc geret: ({retsite:main:getenv@plt:2} <- getenv) val=(fault)
libc st: (strtol+0x0/{size@LIBC:strtol}) s="12345" base=10
libc st: (strtol+0x0/{size@LIBC:strtol}) s="-0x1f" base=16
libc st: (strtol+0x0/{size@LIBC:strtol}) s="77" base=10
> libc: E2E_VAR=e2e-value E2E_UNSET=(null)
> libc: 12345 -31 3 found, atoi 77
> libc: sorted -3 0 5 7 7 19 42 88
# dprobe: 7 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
