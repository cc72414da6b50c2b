# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a stripped program whose debug information is in a separate file (debuglink, build-id): static functions and arguments by name; a mismatched debug file is refused'
# dwarf.c built at -O2 and split as Debian's packages are: the debug
# information kept alone (objcopy --only-keep-debug), the program
# stripped of every symbol (--strip-all: helper(), a static function,
# is named only in the debug file).  Three copies:
#   linked  found through .gnu_debuglink, next to the program
#   byid    found by build-id, in .build-id/XX/REST.debug under
#           $DPROBE_DEBUG_DIR (a tree like /usr/lib/debug)
#   bad     a .gnu_debuglink to the -O0 build's debug file: another
#           build-id, refused: a definition by name has no debug
#           information, and helper (only in the debug file) is unknown
# For the first two the probes are those of dwarf-args on helper() and
# handle(), with the values of main()'s table.
prog=dwarf
levels=O2
engines='auto ptrace'
case_run() {
	O0=$(LEVEL=O0 build_prog dwarf) || return 1
	cp "$P" "$T/full" && objcopy --only-keep-debug "$T/full" "$T/dwarf.debug" &&
		objcopy --strip-all --add-gnu-debuglink="$T/dwarf.debug" "$T/full" "$T/linked" &&
		objcopy --strip-all "$T/full" "$T/byid" &&
		objcopy --only-keep-debug "$O0" "$T/other.debug" &&
		mkdir -p "$T/badir" && cp "$T/other.debug" "$T/badir/dwarf.debug" &&
		objcopy --strip-all --add-gnu-debuglink="$T/badir/dwarf.debug" "$T/full" "$T/bad" ||
		return 1
	# debuglink is searched next to the program: the bad one's name
	rm -f "$T/badir/dwarf.debug" && cp "$T/other.debug" "$T/dwarf.debug.bad"
	id=$(readelf -n "$T/full" | awk '/Build ID/ { print $3 }')
	mkdir -p "$T/dbg/.build-id/$(echo "$id" | cut -c1-2)" &&
		cp "$T/dwarf.debug" "$T/dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
	: >"$T/result"
	for v in linked byid; do
		DPROBE_DEBUG_DIR=$T/dbg "$DPROBE" trace -o "$T/ev.$v" \
			-e "p:hp $T/$v:helper k hlen=h->len" \
			-e "p:h $T/$v:handle n id=r->id name=r->name" -- "$T/$v" \
			>"$T/out.$v" 2>"$T/err.$v"
		echo "# $v: exit=$?" >>"$T/result"
		norm_trace <"$T/ev.$v" >>"$T/result"
	done
	# the bad copy: its debuglink names dwarf.debug, and next to it is
	# the right one: move it away so only the -O0 build's is found
	mv "$T/dwarf.debug" "$T/dwarf.debug.good" && cp "$T/dwarf.debug.bad" "$T/dwarf.debug"
	"$DPROBE" trace -e "p:hp $T/bad:helper k" -- "$T/bad" >"$T/out.bad" 2>"$T/err.bad"
	echo "# bad, by name: exit=$? $(grep -c 'no debug information for' "$T/err.bad") refusal" >>"$T/result"
	"$DPROBE" trace -e "p:hp $T/bad:helper" -- "$T/bad" >"$T/out.bad" 2>"$T/err.bad"
	echo "# bad, the static function: exit=$? $(grep -c 'Invalid probed address or symbol' "$T/err.bad") refusal" >>"$T/result"
	echo 0 >"$T/rc"
}
case_result() {
	cat "$T/result"
}
expected() {
	for v in linked byid; do
		echo "# $v: exit=0"
		for r in 1:42:alpha:0:300 2:7:beta:1:12 3:-3:gamma:2:65535; do
			IFS=: read -r n id name k len <<EOF2
$r
EOF2
			echo "$v h: (handle+0x0/{size:handle}) n=$n id=$id name=\"$name\""
			echo "$v hp: (helper+0x0/{size:helper}) k=$k hlen=$len"
		done
	done
	echo "# bad, by name: exit=1 1 refusal"
	echo "# bad, the static function: exit=1 1 refusal"
}
