# shellcheck shell=sh disable=SC2034  # the runner reads the settings
desc='--tracer stack: the deepest stack of a recursion, each entry with its depth and size, as the kernel'"'"'s stack_trace'
# stackmax.c, read from its source: the deepest stack is leaf at its
# entry, down four times (down(0) called leaf, down(1..3) called down),
# then main; what lies above main (the C library's start code) is left
# out.  Depths depend on the environment above the stack and sizes on
# the compiler: the table is checked for the kernel's columns, depths
# falling by each entry's size, leaf's size its return address (8) and
# the four down frames of one size over their 256-byte array; then
# printed with D for depths and S for sizes over 8.  leaf's depth is
# the one the program measured itself (the end of its [stack] mapping
# less leaf's stack pointer at entry).  The in-process engine checks
# in the process, the ptrace engine in dprobe at its stops: the same
# table.
prog=stackmax
timestamps=no
opts='--tracer stack'
stk_norm() {
	awk '
	/^        Depth    Size   Location    \([0-9]+ entries\)$/ { next }
	/^        -----    ----   --------$/ { print; next }
	/^ *[0-9]+\) / {
		if (done) next
		n = $1; sub(/\)$/, "", n)
		if (sprintf("%3d) %8d   %5d   %s", n, $2, $3, $4) != $0) {
			print "BADLINE: " $0; next
		}
		if (n + 0 != seen + 0) print "BADINDEX: " $0
		seen++
		if (seen > 1 && prev - $2 != psize) print "BADSIZE: " $0
		if (seen > 1 && $4 ~ /^down\+/ && pname ~ /^down\+/ && $3 != psize)
			print "UNEQUAL: " $0
		prev = $2; psize = $3; pname = $4
		loc = $4; sub(/\/0x[0-9a-f]+$/, "", loc)
		if (loc !~ /^leaf\+0x0$/) sub(/\+0x[0-9a-f]+$/, "+OFF", loc)
		size = $3 == 8 ? 8 : ($3 > 256 ? "S" : ($3 > 8 ? "s" : $3))
		print n ") D " size " " loc
		if (loc ~ /^main\+/) done = 1
		next
	}
	{ print "OTHER: " $0 }' "$T/events"
}
case_result() {
	stk_norm
	sed -e 's/^/> /' -e 's/depth [0-9][0-9]*$/depth N/' "$T/stdout"
	grep -o 'stack: 5 functions,' "$T/stderr" | tr -d ,
	echo "# exit=$(cat "$T/rc")"
}
case_check() {
	_own=$(sed -n 's/^stackmax: leaf at depth \([0-9]*\)$/\1/p' "$T/stdout")
	_got=$(awk '$1 == "0)" { print $2 }' "$T/events")
	if [ -z "$_own" ] || [ "$_own" != "$_got" ]; then
		echo "leaf's depth: $_got, the program measured $_own"
		return 1
	fi
}
expected() {
	cat <<'EOF2'
        -----    ----   --------
0) D 8 leaf+0x0
1) D S down+OFF
2) D S down+OFF
3) D S down+OFF
4) D S down+OFF
5) D s main+OFF
> stackmax: leaf at depth N
> stackmax: ok
stack: 5 functions
# exit=0
EOF2
}
