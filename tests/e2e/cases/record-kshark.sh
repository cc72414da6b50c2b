# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='record: KernelShark (its library, libkshark) loads the recording, every event and stack'
# fib.c's fib(4): 9 calls; each entry recorded with its user stack (-g),
# so the file holds 9 events and 9 stacks (an event of their own).
# KernelShark's data library, through python's ctypes (it has no
# command line), opens the file and loads its entries: 18.  A file that
# is not a trace.dat is refused (a negative descriptor).  The same
# recording made with --compress (version 7, zstd) loads the same.  Skipped
# without KernelShark (Debian's kernelshark package, a Qt application
# the test suite does not install).
prog=fib
args=4
levels=O2
engines=auto
needs='python3 kernelshark'
defs='p:fib fib n=%di:s32'
case_run() {
	_e=$(defs_eargs)
	eval "set -- $_e"
	t_timeout "$TMO" "$DPROBE" record -g -o "$T/rec.dat" "$@" -- "$P" $args \
		>/dev/null 2>"$T/rec.err" </dev/null
	echo $? >"$T/rc"
	t_timeout "$TMO" "$DPROBE" record --compress -g -o "$T/recz.dat" "$@" \
		-- "$P" $args >/dev/null 2>&1 </dev/null
	echo "not a recording" >"$T/bad.dat"
}
case_result() {
	echo "# record exit=$(cat "$T/rc")"
	python3 - "$T/rec.dat" "$T/recz.dat" "$T/bad.dat" <<'PY' 2>/dev/null
import ctypes, ctypes.util, sys
lib = ctypes.util.find_library("kshark") or "libkshark.so.2"
k = ctypes.CDLL(lib)
ctx = ctypes.c_void_p()
k.kshark_instance(ctypes.byref(ctx))
for name, f in (("recording", sys.argv[1]), ("compressed", sys.argv[2]),
                ("not a trace.dat", sys.argv[3])):
    sd = k.kshark_open(ctx, f.encode())
    if sd < 0:
        print("# %s: refused" % name)
        continue
    rows = ctypes.c_void_p()
    print("# %s: %d entries" % (name, k.kshark_load_entries(ctx, sd, ctypes.byref(rows))))
    k.kshark_close(ctx, sd)
PY
}
expected() {
	cat <<'EOF2'
# record exit=0
# recording: 18 entries
# compressed: 18 entries
# not a trace.dat: refused
EOF2
}
