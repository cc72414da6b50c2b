# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='MOD:SYM on a library loaded later with dlopen, unloaded, loaded again'
# dl.c: dlopen(libe2edl.so); dl_work(1, "one") = 103, dl_work(2, "three")
# = 205; dlclose (the library is unmapped); dlopen again; dl_work(3,
# "seven") = 305.  The probes name the library by its file name/soname,
# libe2edl.so, which is not mapped when tracing starts: they stay
# pending until dlopen maps it, go when it is unmapped and come back
# with the second dlopen.  dl_work(a, s) = a * 100 + strlen(s); each call
# is made by call_it() through a function pointer, so the return site is
# after call_it's one indirect call.
prog=dl
libs=libe2edl.so
kdiff=yes
# Against the kernel, dprobe runs on ptrace: these places print the
# library's run-time address, and the in-process engine's own pages
# (rings, out-of-line slots) move where the loader maps it.
kengine=ptrace
defs='p:dw libe2edl.so:dl_work a=%di:s64 s=+0(%si):string
r:dr libe2edl.so:dl_work ret=$retval:s64'
case_run() {
	dp_trace -- "$P" "$LIB"
}
expected() {
	cat <<'EOF2'
dl dw: (dl_work+0x0/{size@LIB:dl_work}) a=1 s="one"
dl dr: ({retsite:call_it:*} <- dl_work) ret=103
dl dw: (dl_work+0x0/{size@LIB:dl_work}) a=2 s="three"
dl dr: ({retsite:call_it:*} <- dl_work) ret=205
dl dw: (dl_work+0x0/{size@LIB:dl_work}) a=3 s="seven"
dl dr: ({retsite:call_it:*} <- dl_work) ret=305
> dl: dl_work(1, "one") = 103
> dl: dl_work(2, "three") = 205
> dl: dl_work(3, "seven") = 305
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
