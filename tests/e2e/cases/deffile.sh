# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-e @FILE: definitions from a file, with comments, blank lines and a delete'
# The file defines fe, gone and fr, then deletes gone: only fe and fr
# fire.  fib(3): fe 3, fe 2, fe 1, fr 1, fe 0, fr 0, fr 1 (fib(2)), fe 1,
# fr 1, fr 2 (into main).  Returns inside fib return after its call.
prog=fib
args=3
case_run() {
	cat >"$T/probes" <<'EOF2'
# probes for fib
p:fe fib n=%di:s64

p:gone fib
r:fr fib ret=$retval:s64   # the return value
-:gone
EOF2
	dp_trace -e "@$T/probes" -- "$P" 3
}
expected() {
	cat <<'EOF2'
fib fe: (fib+0x0/{size:fib}) n=3
fib fe: (fib+0x0/{size:fib}) n=2
fib fe: (fib+0x0/{size:fib}) n=1
fib fr: ({retsite:fib:fib} <- fib) ret=1
fib fe: (fib+0x0/{size:fib}) n=0
fib fr: ({retsite:fib:fib} <- fib) ret=0
fib fr: ({retsite:fib:fib} <- fib) ret=1
fib fe: (fib+0x0/{size:fib}) n=1
fib fr: ({retsite:fib:fib} <- fib) ret=1
fib fr: ({retsite:main:fib} <- fib) ret=2
> fib: fib(3) = 2, 5 calls
# dprobe: 10 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
