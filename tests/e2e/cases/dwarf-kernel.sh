# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='perf probe as the oracle for values: the same names recorded by the kernel'"'"'s uprobes (perf probe -a, perf record) and by dprobe give the same values'
# dwarf.c: handle() three times and helper:3 (the printf line, where
# local is stored), probed by name with perf probe in a group of this
# run's own (removed afterwards), recorded with perf record through the
# kernel's uprobe_events, and with dprobe on the same names.  Both are
# reduced to "EVENT NAME=VALUE ...", numbers in decimal (perf types an
# unsigned member as hex).  At -O0 perf reads the function's parameters
# past its prologue and dprobe at its entry: the values are the same.
prog=dwarf
engines=auto
needs='perf root'
H='n id=r->id len=r->hdr.len name=r->name nid=r->next->id'
case_run() {
	G=dpperf$$
	trap 'perf probe -q -d "$G:*" >/dev/null 2>&1' EXIT
	if ! perf probe -q -x "$P" -a "$G:h=handle $(echo "$H" | sed 's/name=r->name/name=r->name:string/')" 2>"$T/perf.err" ||
	   ! perf probe -q -x "$P" -a "$G:l=helper:3 local" 2>>"$T/perf.err" ||
	   ! perf record -q -o "$T/perf.data" -e "$G:*" -- "$P" >/dev/null 2>>"$T/perf.err"; then
		echo "perf probe or perf record cannot run here: $(head -n 1 "$T/perf.err")" >"$T/skip"
		exit 2
	fi
	perf script -i "$T/perf.data" -F event,trace 2>/dev/null |
		sed -n "s/^$G:\\([a-z]*\\): ([0-9a-f]*)/\\1/p" | decimal >"$T/perf.vals"
	"$DPROBE" trace -o "$T/events" -e "p:h $P:handle $H" \
		-e "p:l $P:helper:3 local" -- "$P" >/dev/null 2>"$T/stderr"
	echo $? >"$T/rc"
	norm_trace <"$T/events" | sed 's/^[^ ]* \([a-z]*\): ([^)]*)/\1/' | decimal >"$T/dprobe.vals"
}
# numbers written 0x... in decimal
decimal() {
	awk '{
		for (i = 2; i <= NF; i++)
			if (match($i, /=0x[0-9a-f]+$/)) {
				h = substr($i, RSTART + 3); v = 0
				for (k = 1; k <= length(h); k++)
					v = v * 16 + index("0123456789abcdef", substr(h, k, 1)) - 1
				$i = substr($i, 1, RSTART) v
			}
		print }'
}
case_result() {
	cat "$T/dprobe.vals"
}
expected() {
	cat "$T/perf.vals"
}
