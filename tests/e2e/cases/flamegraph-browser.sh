# shellcheck shell=sh disable=SC2034  # the runner reads the settings
desc="the flame graph in headless Chromium: its script runs (data-ready), the frames are the program's functions, ?s=REGEX marks the matching ones, ?z=NAME zooms"
# stack.c with 2, traced with --flamegraph; the SVG opened from a file
# with a search in its address; the DOM Chromium dumps once the page has
# loaded shows what the script did.
prog=stack
levels=O2
engines="ptrace"
needs="chromium"
defs=''

case_run() {
	record_cmd trace -e 'p:lf leaf' -e 'p:ot other' --flamegraph "$T/g.svg" -- "$P" 2
	t_timeout "$TMO" "$DPROBE" trace -e 'p:lf leaf' -e 'p:ot other' \
		--flamegraph "$T/g.svg" -- "$P" 2 >"$T/run.out" 2>"$T/run.err" \
		</dev/null
	# root needs --no-sandbox; a profile of its own, nothing kept
	t_timeout "$TMO" chromium --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$T/profile" \
		--dump-dom "file://$T/g.svg?s=^(leaf|middle)\$" \
		>"$T/dom" 2>"$T/chromium.err" </dev/null
	echo "$?" >"$T/chromium.rc"
	# zoomed on outer at load: it fills the width, other is hidden
	t_timeout "$TMO" chromium --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$T/profile" \
		--dump-dom "file://$T/g.svg?z=outer" \
		>"$T/zdom" 2>>"$T/chromium.err" </dev/null
	echo "$?" >>"$T/chromium.rc"
	rm -rf "$T/profile"
}

case_result() {
	echo "chromium: exit $(cat "$T/chromium.rc" | tr '\n' ' ')"
	_n=$(grep -c '^<g class="f">' "$T/g.svg")
	_r=$(sed -n 's/.* data-ready="\([0-9]*\)".*/\1/p' "$T/dom" | head -n 1)
	[ -n "$_r" ] && [ "$_r" = "$_n" ] && echo "script: ran over every frame" ||
		echo "script: data-ready '$_r', $_n frames in the file"
	# the frames' names in the DOM, the program's ones
	echo "frames: $(sed -n 's/.*<title>\([a-z]*\) ([0-9]* samples\{0,1\}, .*/\1/p' "$T/dom" |
		grep -E '^(main|outer|middle|leaf|other)$' | LC_ALL=C sort | tr '\n' ' ')"
	echo "matched: $(sed -n 's/.*<g class="f" data-match="1"><title>\([^ ]*\) .*/\1/p' "$T/dom" |
		LC_ALL=C sort | tr '\n' ' ')"
	grep -o 'Matched: [0-9.]*%' "$T/dom" | head -n 1
	grep -o ' data-zoom="[^"]*"' "$T/zdom" | head -n 1
	echo "zoom: outer $(sed -n 's/.*<title>outer ([^<]*<\/title><rect x="\([0-9.]*\)" y="[0-9]*" width="\([0-9.]*\)".*/at \1 width \2/p' "$T/zdom" | head -n 1)"
	echo "zoom: other $(grep -c '<g class="f" display="none"><title>other ' "$T/zdom") hidden"
}

expected() {
	echo "chromium: exit 0 0 "
	echo "script: ran over every frame"
	echo "frames: leaf main middle other outer "
	echo "matched: leaf middle "
	echo "Matched: 50.0%"
	echo ' data-zoom="outer"'
	echo "zoom: outer at 10.00 width 1180.00"
	echo "zoom: other 1 hidden"
}
