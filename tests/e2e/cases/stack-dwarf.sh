# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--call-graph dwarf: the stack of code without frame pointers, unwound with the CFI, is the program's own backtrace(); fp's is short there"
# unwind.c, built -O2 -fomit-frame-pointer: main calls outer(1), outer
# middle(2), middle leaf(4).  At leaf's entry the CFI gives leaf, then
# the return addresses in middle, outer and main, then the C library's
# start code down to _start (which ends the CFI); only the frames down
# to main are written here, the rest comes from the program itself
# (case_check: its backtrace(), on this build and on unwindfp).
prog=unwind
levels=O2
defs='p:lf leaf x=%di'
opts="--call-graph dwarf"
events_by=stack_events
# the trace lines normalised; each frame as " => NAME", down to main
stack_events() {
	norm_trace <"$T/events" | awk '
		/^BADLINE:  => / {
			if (cut)
				next
			f = substr($0, 14); sub(/\+0x.*/, "", f)
			print " => " f
			if (f == "main")
				cut = 1
			next
		}
		{ cut = 0; print }'
}
expected() {
	echo "unwind lf: (leaf+0x0/{size:leaf}) x=0x4"
	echo "unwind <user stack trace>"
	printf ' => %s\n' leaf middle outer main
	echo "> unwind: ok"
	echo "# dprobe: 1 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
}

# The stack's addresses in JSON lines, one a line ("0x..."), of the
# first record of FILE.
json_ips() {
	head -n 1 "$1" | grep -o '"stack":\[.*\]' |
		grep -o '{"ip":"0x[0-9a-f]*"' | sed 's/.*"\(0x[0-9a-f]*\)"$/\1/'
}

# dwarf_vs_backtrace PROG: a run with `bt`, where leaf prints glibc's
# backtrace(): dprobe's frames after the first (where each was taken:
# leaf's entry, leaf's call to backtrace) are the same addresses, as
# many, and the first is leaf+0x0.
dwarf_vs_backtrace() {
	"$DPROBE" trace --json --call-graph dwarf -e 'p:lf leaf' \
		-o "$T/dw.json" -- "$1" bt >"$T/bt.out" 2>"$T/dw.err" ||
		{ echo "dwarf run of $1 failed"; cat "$T/dw.err"; return 1; }
	sed -n 's/^bt //p' "$T/bt.out" | tail -n +2 >"$T/bt.ips"
	json_ips "$T/dw.json" | tail -n +2 >"$T/dw.ips"
	[ -s "$T/bt.ips" ] || { echo "no backtrace from $1"; return 1; }
	grep -q '"stack":\[{"ip":"0x[0-9a-f]*","sym":"leaf+0x0/' "$T/dw.json" ||
		{ echo "$1: first frame is not leaf+0x0"; cat "$T/dw.json"; return 1; }
	cmp -s "$T/bt.ips" "$T/dw.ips" ||
		{ echo "$1: dwarf stack differs from backtrace() (after frame 0)"
		  diff "$T/bt.ips" "$T/dw.ips"; cat "$T/dw.json"; return 1; }
}

case_check() {
	fp=$(build_prog unwindfp) || { echo "cannot build unwindfp"; return 1; }
	dwarf_vs_backtrace "$P" || return 1
	dwarf_vs_backtrace "$fp" || return 1
	# why dwarf exists: frame pointers on this build give leaf, then
	# middle (the return address at [sp], read at a function's entry),
	# and no further: %rbp is no frame pointer here, so outer is missed
	"$DPROBE" trace --json -g -e 'p:lf leaf' -o "$T/fp.json" -- "$P" \
		>/dev/null 2>"$T/fp.err" ||
		{ echo "fp run failed"; cat "$T/fp.err"; return 1; }
	nfp=$(json_ips "$T/fp.json" | grep -c .)
	ndw=$(json_ips "$T/dw.json" | grep -c .)
	if grep -q '"sym":"outer+' "$T/fp.json" || [ "$nfp" -ge "$ndw" ]; then
		echo "fp stack of the -fomit-frame-pointer build not short:" \
			"$nfp frames, dwarf $ndw"
		cat "$T/fp.json"
		return 1
	fi
	# --call-graph fp is -g; a bad SIZE is refused before anything runs
	"$DPROBE" trace --call-graph dwarf,0 -e 'p:lf leaf' -- "$P" \
		>"$T/bad.out" 2>&1 && { echo "dwarf,0 accepted"; return 1; }
	grep -q "^dprobe: bad --call-graph 'dwarf,0'" "$T/bad.out" ||
		{ echo "dwarf,0: unexpected error"; head -n 3 "$T/bad.out"; return 1; }
	return 0
}
