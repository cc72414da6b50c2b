# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a probe by name on a function with inlined copies: at each copy and at the out-of-line one, as perf probe places it; dprobe says how many'
# inl.c: scale(v, k) is inlined into use1() (v 5, k 2) and use2() (v 7,
# k 3), and called out of line through a pointer (v 4, k 5), in that
# order.  p:sc PROG:scale v k becomes three definitions of one event:
# the out-of-line copy, read where the ABI passes v and k, and each
# inlined copy at its first instruction, read where DWARF says v and k
# are there.  p:ln PROG:scale:2 (the line of its body) goes on that line
# in each copy too.  -O0 only: at -O2 the compiler keeps v nowhere at one of the
# inlined entries (and dprobe then refuses the definition, naming v).
prog=inl
levels=O0
sort_events=1	# sc and ln share an address in each inlined copy
defs='p:sc {bin}:scale v k
p:ln {bin}:scale:2 v k'
case_check() {
	grep -q '^dprobe: scale: 3 places (2 inlined copies)$' "$T/stderr" && return 0
	echo "dprobe did not say where scale went"
	return 1
}
expected() {
	cat <<'EOF2'
inl sc: (use1+{inlentry:use1}/{size:use1}) v=5 k=2
inl ln: (use1+{linein:use1:scale:2}/{size:use1}) v=5 k=2
inl sc: (use2+{inlentry:use2}/{size:use2}) v=7 k=3
inl ln: (use2+{linein:use2:scale:2}/{size:use2}) v=7 k=3
inl sc: (scale+0x0/{size:scale}) v=4 k=5
inl ln: (scale+{lineoff:scale:2}/{size:scale}) v=4 k=5
> use1: scale(5, 2) = 11
> use2: scale(7, 3) = 23
> ptr: scale(4, 5) = 21
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
