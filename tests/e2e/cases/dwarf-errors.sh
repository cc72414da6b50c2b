# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='names the debug information does not have: the kernel'"'"'s BTF-argument errors, the caret on the argument, what there is instead'
# dprobe check -x PROG prints each definition's error as the kernel's
# error_log shows it, with dprobe's detail in parentheses: the variables
# that do exist at the place (handle(r, n, who) in dwarf.c), a struct's
# members (struct msg), an index past an array's end (vals[4]), "-"
# without ">", a struct by value, $arg* twice or off the entry, $retval
# on an entry probe, and a return probe on a line.  Nothing is traced.
prog=dwarf
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2	# the errors do not depend on the compiler's level
engines=auto
case_run() {
	for d in 'p:e1 {bin}:handle nosuch' 'p:e2 {bin}:handle r->nosuch' \
		'p:e3 {bin}:handle n->x' 'p:e4 {bin}:handle r-x' \
		'p:e5 {bin}:handle r->vals[4]' 'p:e6 {bin}:handle r->hdr' \
		'p:e7 {bin}:handle $arg* $arg*' 'p:e8 {bin}:handle+4 $arg*' \
		'p:e9 {bin}:handle $retval->id' 'r:e10 {bin}:helper:3 local' \
		'p:e11 {bin}:handle x=$arg*'; do
		"$DPROBE" check -x "$P" "$(echo "$d" | subst)"
	done >"$T/stdout" 2>"$T/stderr"
	echo 0 >"$T/rc"
}
case_result() {
	cat "$T/stdout"
}
# err LOC MESSAGE DEF PREFIX [DETAIL]: the error_log block, the caret
# under the end of PREFIX (a start of DEF)
err() {
	echo "$1: error: $2"
	echo "  Command: $3"
	awk -v n=$((11 + ${#4})) 'BEGIN { s = ""; while (n-- > 0) s = s " "; print s "^" }'
	[ -n "${5:-}" ] && echo "  ($5)"
	return 0
}
expected() {
	b=$P
	k=trace_kprobe
	err $k 'This variable is not found at this probe point' \
		"p:e1 $b:handle nosuch" "p:e1 $b:handle " \
		'no nosuch at this place; there are: r, n, who'
	err $k 'This field is not found.' "p:e2 $b:handle r->nosuch" \
		"p:e2 $b:handle r->" \
		'msg has no member nosuch; its members: id, hdr, name, text, next, vals, u, cb'
	err $k 'This is not a pointer to union/structure.' \
		"p:e3 $b:handle n->x" "p:e3 $b:handle n->"
	err $k "Failed to parse single hyphen. Forgot '>'?" \
		"p:e4 $b:handle r-x" "p:e4 $b:handle r"
	err $k 'This field is not found.' "p:e5 $b:handle r->vals[4]" \
		"p:e5 $b:handle r->vals" 'index 4 is past the end of an array of 4'
	err $k 'Non pointer structure/union argument is not supported.' \
		"p:e6 $b:handle r->hdr" "p:e6 $b:handle "
	err $k '$arg* can be used only once in the parameters' \
		"p:e7 $b:handle \$arg* \$arg*" "p:e7 $b:handle \$arg* "
	err $k '$arg* can be used only on function entry or exit' \
		"p:e8 $b:handle+4 \$arg*" "p:e8 $b:handle+4 "
	err $k '$retval is not available on probe' \
		"p:e9 $b:handle \$retval->id" "p:e9 $b:handle "
	err trace_uprobe 'Retprobe address must be an function entry' \
		"r:e10 $b:helper:3 local" "r:e10 " \
		'a return probe goes on a function, not a line'
	err $k '$arg* must be an independent parameter without name etc.' \
		"p:e11 $b:handle x=\$arg*" "p:e11 $b:handle x=" \
		'$arg* stands for every parameter, each named after itself'
}
