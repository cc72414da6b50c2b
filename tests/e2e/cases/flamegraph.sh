# shellcheck shell=sh disable=SC2034  # the runner reads the settings
desc="--flamegraph: one well-formed SVG whose frames are the program's functions, as wide as their counts; the same bytes as --format folded | dprobe flamegraph"
# stack.c with 3: leaf is hit 3 times under main;outer;middle, other 3
# times under main.  Frames below main (the C library's) vary by system
# and are not looked at.
prog=stack
levels=O2
engines="auto ptrace"
defs=''

fg_trace() {
	t_timeout "$TMO" "$DPROBE" trace -e 'p:lf leaf' -e 'p:ot other' "$@" \
		-- "$P" 3 >>"$T/run.out" 2>>"$T/run.err" </dev/null
}

case_run() {
	record_cmd trace -e 'p:lf leaf' -e 'p:ot other' --flamegraph "$T/g.svg" -- "$P" 3
	fg_trace --flamegraph "$T/g.svg"
	echo "$?" >"$T/g.rc"
	fg_trace --format folded -o "$T/f.folded"
	"$DPROBE" flamegraph "$T/f.folded" -o "$T/f.svg" 2>>"$T/run.err"
	echo "$?" >"$T/f.rc"
}

# well-formed XML, by xmllint or else Python's parser
well_formed() {
	if command -v xmllint >/dev/null 2>&1; then
		xmllint --noout "$1" 2>&1
	else
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1" 2>&1
	fi
}

# "NAME SAMPLES WIDTH" for each frame
svg_frames() {
	sed -n 's/^<g class="f"><title>\(.*\) (\([0-9]*\) samples\{0,1\}, [0-9.]*%)<\/title><rect x="[0-9.]*" y="[0-9]*" width="\([0-9.]*\)".*/\1 \2 \3/p' "$1"
}

case_result() {
	echo "exit: $(cat "$T/g.rc") $(cat "$T/f.rc")"
	if _e=$(well_formed "$T/g.svg"); then echo "svg: well-formed"
	else echo "svg: $_e"; fi
	svg_frames "$T/g.svg" >"$T/frames"
	echo "frames: $(awk '$1 ~ /^(main|outer|middle|leaf|other)$/ { print $1 " " $2 }' \
		"$T/frames" | LC_ALL=C sort | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
	_tot=$(sed -n 's/.* data-total="\([0-9]*\)".*/\1/p' "$T/g.svg" | head -n 1)
	awk -v tot="$_tot" 'BEGIN { bad = 0 }
		{ w = $2 * 1180 / tot; if ($3 - w > 0.01 || w - $3 > 0.01) bad++ }
		END { print "widths: " (NR && !bad ? "proportional" : bad " of " NR " off") }' \
		"$T/frames"
	grep -q '<script type="text/ecmascript"><!\[CDATA\[' "$T/g.svg" &&
		! grep -q 'href=' "$T/g.svg" && echo "self-contained: yes"
	cmp -s "$T/g.svg" "$T/f.svg" && echo "pipe: same bytes" ||
		echo "pipe: differs"
}

expected() {
	echo "exit: 0 0"
	echo "svg: well-formed"
	echo "frames: leaf 3, main 6, middle 3, other 3, outer 3"
	echo "widths: proportional"
	echo "self-contained: yes"
	echo "pipe: same bytes"
}
