# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='perf probe as the oracle: the same places and names give the same addresses and the same locations as perf probe -D'
# For each probe, `perf probe -x PROG -D SPEC` and `dprobe check -x PROG`
# on the same place and names, both reduced to "FILE-OFFSET LOCATION..."
# (argument names and types taken off: perf types a char * as x64 where
# dprobe reads the string it points to, so dprobe's +0(X):string is X
# again, and perf writes unsigned as xN).  At -O0 perf moves a function
# probe past the prologue and reads the parameters' stack slots, where
# dprobe stays at the entry and reads the ABI registers: the function
# probes are compared at -O2 only, the line probes at both levels.  A
# line whose statement has several rows in the line table (a call with
# its arguments on more lines) is not compared: perf takes the last row,
# dprobe the first, as gdb does (docs/debuginfo.md).
prog=dwarf
engines=auto
needs='perf root'
case_run() {
	: >"$T/result"
	while IFS='|' read -r spec def; do
		[ "$LEVEL" = O0 ] && case $spec in *:*) ;; *) continue ;; esac
		p=$(perf probe -x "$P" -D "$spec" 2>/dev/null | grep '^[pr]:' | tail -n 1)
		d=$("$DPROBE" check -x "$P" "p:x $P:$def" 2>&1 | grep '^p:')
		echo "# $spec" >>"$T/result"
		echo "perf   $(reduce_perf "$p")" >>"$T/result"
		echo "dprobe $(reduce_dprobe "$d")" >>"$T/result"
	done <<'EOF2'
handle n r->id r->hdr.len r->name r->next->id r->vals[2]|handle n r->id r->hdr.len r->name r->next->id r->vals[2]
handle who r->text|handle who r->text
helper k h->len|helper k h->len
helper:3 local|helper:3 local
helper:4 local|helper:4 local
EOF2
	echo 0 >"$T/rc"
}
# "p:G/E FILE:0xOFF a=LOC:T ..." -> "0xOFF LOC ..."
reduce_perf() {
	echo "$1" | awk '{ sub(/.*:/, "", $2); printf "%s", $2
		for (i = 3; i <= NF; i++) { a = $i; sub(/^[^=]*=/, "", a); sub(/:[^:()]*$/, "", a); printf " %s", a }
		print "" }'
}
# "p:G/E FILE:SYM[+N] a=LOC:T ..." -> "0xOFF LOC ..."
reduce_dprobe() {
	place=$(echo "$1" | awk '{ print $2 }')
	sym=${place##*:}
	off=0
	case $sym in *+*) off=${sym#*+}; sym=${sym%%+*} ;; esac
	v=$(($(sym_vaddr "$P" "$sym") + off))
	printf '0x%x' "$(vaddr_to_off "$P" "$v")"
	echo "$1" | awk '{
		for (i = 3; i <= NF; i++) { a = $i; sub(/^[^=]*=/, "", a)
			s = a ~ /:string$/; sub(/:[^:()]*$/, "", a)
			if (s && a ~ /^\+0\(.*\)$/) a = substr(a, 4, length(a) - 4)
			printf " %s", a }
		print "" }'
}
case_result() {
	cat "$T/result"
}
# expected: each probe's two lines alike
expected() {
	awk '/^# / { print; next } /^perf / { sub(/^perf   /, ""); print "perf   " $0; print "dprobe " $0 }' "$T/result"
}
