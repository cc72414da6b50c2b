# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a stripped program whose debug information is in a separate file (debuglink, build-id): static functions and arguments by name; a mismatched debug file is refused'
# dwarf.c built at -O2 and split as Debian's packages are: the debug
# information kept alone (objcopy --only-keep-debug), the program
# stripped of every symbol (--strip-all: helper(), a static function,
# is named only in the debug file).  Three copies:
#   linked  found through .gnu_debuglink, next to the program
#   byid    found by build-id, in .build-id/XX/REST.debug under
#           $DPROBE_DEBUG_DIR (a tree like /usr/lib/debug)
#   mini    no DWARF at all, but MiniDebugInfo (.gnu_debugdata: the
#           function symbols, xz-compressed), as Fedora ships programs:
#           helper() by its symbol, no names
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
	# MiniDebugInfo, made as gdb's manual says: the function symbols
	# .dynsym lacks, xz-compressed into .gnu_debugdata of a copy
	# stripped of everything (no DWARF: a probe on a static function by
	# its symbol, no names)
	cp "$T/full" "$T/mini" &&
		nm -D "$T/mini" --format=posix --defined-only | awk '{ print $1 }' | sort >"$T/dynsyms" &&
		nm "$T/mini" --format=posix --defined-only |
		awk '$2 == "T" || $2 == "t" || $2 == "D" { print $1 }' | sort >"$T/funcsyms" &&
		comm -13 "$T/dynsyms" "$T/funcsyms" >"$T/keep" &&
		objcopy -S --remove-section .comment --keep-symbols="$T/keep" \
			"$T/dwarf.debug" "$T/mini_debuginfo" &&
		strip --strip-all -R .comment "$T/mini" &&
		xz -f "$T/mini_debuginfo" &&
		objcopy --add-section .gnu_debugdata="$T/mini_debuginfo.xz" "$T/mini" ||
		return 1
	"$DPROBE" trace -o "$T/ev.mini" -e "p:hp $T/mini:helper" -- "$T/mini" \
		>/dev/null 2>"$T/err.mini"
	echo "# mini: exit=$?" >>"$T/result"
	norm_trace <"$T/ev.mini" >>"$T/result"
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
	echo "# mini: exit=0"
	for k in 0 1 2; do
		echo "mini hp: (helper+0x0/{size:helper})"
	done
	echo "# bad, by name: exit=1 1 refusal"
	echo "# bad, the static function: exit=1 1 refusal"
}
