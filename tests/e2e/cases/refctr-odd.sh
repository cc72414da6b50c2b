# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='PATH:OFFSET(REF) with an odd counter offset is refused before the program runs'
# The kernel refuses a reference counter offset that is not 2-byte
# aligned when it registers the uprobe (__uprobe_register: EINVAL); a
# 16-bit counter there could also straddle a page.  dprobe refuses it
# when it resolves the probe, on both engines, with nothing armed and the
# program not run (its "sem=" lines never appear).
prog=semaphore
variant=nopie
case_run() {
	sem=$(vaddr_to_off "$P" "$(sym_vaddr "$P" semaphore)")
	odd=$(hex $((sem + 1)))
	defs="p:w $P:{off:work}($odd) i=%di:s64"
	dp_trace -- "$P"
	echo "$odd" >"$T/odd"
}
case_result() {
	sed -e "s|$P|PROG|g" -e "s|$(cat "$T/odd")|ODD|g" "$T/stderr"
	echo "# exit=$(cat "$T/rc")"
	sed 's/^/> /' "$T/stdout"
}
expected() {
	cat <<'EOF2'
dprobe: uprobes/w: Invalid reference counter offset (reference counter offset ODD is odd: a counter is a 2-byte aligned unsigned short)
# exit=1
EOF2
}
