# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="SDT probes of a Debian program: python3.11's function__return, semaphore-gated, with \$argN"
# Debian's python3.11 carries SDT probes, each gated by a semaphore in
# .probes: CPython reports calls only while a tracer holds it (dprobe
# adds one while the probe is armed, as the kernel does for a uprobe's
# (REF)).  function__return's arguments are (filename, funcname, lineno):
# 8@%rbp 8@%r12 -4@%eax.  The definition names the SDT probe as its place
# and reads its arguments as $arg1..$arg3.
# The script: leaf() (def on line 1, returns on line 2), mid() (def on
# line 3, returns on line 5), called as mid(0..2); the module body itself
# returns after its last line, 8.  The filter keeps the script's frames.
# The place prints the site's address, the note's Location (python3.11
# is not PIE).  The program runs as a private copy, so that the kernel's
# reference run (kernel-ref.sh) puts its uprobe on that file, not on the
# system's python.
levels=O2
kdiff=yes
PY=/usr/bin/python3.11
defs='p:pyret sdt_python:function__return file=+0($arg1):string func=+0($arg2):string line=$arg3'
case_run() {
	[ -x "$PY" ] || { echo "no $PY" >"$T/skip"; exit 2; }
	readelf -n "$PY" 2>/dev/null | grep -q function__return ||
		{ echo "$PY has no SDT probes" >"$T/skip"; exit 2; }
	cat >"$T/e2e_sdt.py" <<'PYEOF'
def leaf(n):
    return n * 2
def mid(n):
    x = leaf(n)
    return x + 1
for i in range(3):
    mid(i)
print("done")
PYEOF
	cp "$PY" "$T/python3.11"
	dp_trace --filter 'pyret=file~"*e2e_sdt.py"' -- "$T/python3.11" -S -E \
		"$T/e2e_sdt.py"
}
expected() {
	at=$(readelf -n "$PY" | grep -A2 'Name: function__return' |
		sed -n 's/.*Location: 0x0*\([0-9a-f]*\),.*/0x\1/p')
	for i in 0 1 2; do
		echo "python3.11 pyret: ($at) file=\"$T/e2e_sdt.py\" func=\"leaf\" line=2"
		echo "python3.11 pyret: ($at) file=\"$T/e2e_sdt.py\" func=\"mid\" line=5"
	done
	echo "python3.11 pyret: ($at) file=\"$T/e2e_sdt.py\" func=\"<module>\" line=8"
	echo "> done"
	# every other return of the run (the interpreter's own Python code)
	# is filtered out
	echo "# dprobe: 7 events, FILTERED filtered, 0 missed, 0 lost"
	echo "# exit=0"
}
case_result() {
	trace_result | sed 's/, [0-9]* filtered,/, FILTERED filtered,/'
}
