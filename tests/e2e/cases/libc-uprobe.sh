# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a PATH:OFFSET uprobe place in a shared library prints the runtime address'
# The same getenv calls as libc-mod, probed as a uprobe: the file offset
# of getenv in libc.  The place prints as the kernel prints uprobes: the
# address where the probe sits in the process, libc's load address +
# getenv's address in the file.  Both dprobe and the program run with
# address randomisation off (setarch -R), so the load address is the one
# the dynamic loader reports under LD_TRACE_LOADED_OBJECTS the same way.
# The return probe prints (return address <- getenv's address); the
# program is built without PIE, so its return addresses are link-time
# addresses.  (On the in-process engine libc sits where it sits with the
# agent preloaded.)
prog=libc
variant=nopie
kdiff=yes
syslibs=libc.so.6
DP_WRAP="setarch -R"
LIBC=/lib/x86_64-linux-gnu/libc.so.6
defs='p:gu {bin@LIBC}:{off@LIBC:getenv} name=+0(%di):string
r:gur {bin@LIBC}:{off@LIBC:getenv} val=+0($retval):string'
case_run() {
	E2E_VAR=e2e-value dp_trace -- "$P"
}
expected() {
	# the in-process engine preloads its agent, which moves libc
	pre=
	if [ "${DPROBE_ENGINE:-auto}" != ptrace ] &&
		[ -f "$(dirname "$DPROBE")/libdprobe.so" ]; then
		pre="LD_PRELOAD=$(dirname "$DPROBE")/libdprobe.so"
	fi
	# shellcheck disable=SC2086  # $pre: an assignment or nothing
	base=$(setarch -R env $pre LD_TRACE_LOADED_OBJECTS=1 "$P" |
		sed -n 's/.*libc\.so\.6 => .* (0x\([0-9a-f]*\))$/\1/p')
	ge=$(hex $((0x$base + $(sym_vaddr "$LIBC" getenv))))
	cat <<EOF2
libc gu: ($ge) name="E2E_VAR"
libc gur: ({retaddr:main:getenv@plt:1} <- $ge) val="e2e-value"
libc gu: ($ge) name="E2E_UNSET"
libc gur: ({retaddr:main:getenv@plt:2} <- $ge) val=(fault)
> libc: E2E_VAR=e2e-value E2E_UNSET=(null)
> libc: 12345 -31 3 found, atoi 77
> libc: sorted -3 0 5 7 7 19 42 88
# dprobe: 4 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
