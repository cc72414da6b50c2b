# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="--stack against the kernel: the frames of a uprobe's <user stack trace> (options/userstacktrace), address for address"
# stack.c at leaf's entry, twice (run with 2), ASLR off (setarch -R) so
# that both runs map the program and the C library at the same
# addresses.  The kernel walks the frame-pointer chain from the
# registers (arch_stack_walk_user(): the ip, then each frame's return
# address), so at a function's first instruction, before its frame is
# made, it misses the direct caller: dprobe reads it at [sp].  So the
# kernel's frames are dprobe's without its second (middle's return
# address), the kernel keeping at most 8.  Every frame counts here, the
# C library's too; on the agent engine, whose libdprobe.so preloaded
# moves the libraries that load after it, a library's frames (above the
# program) are compared by their offset in the page ("lib+0x24a").  The kernel's side is a private copy of the program
# (uprobes are per file) in an instance of our own, all removed after.
prog=stack
levels=O2
engines="agent ptrace"
needs="root setarch"
defs='p:lf leaf'
TR=/sys/kernel/tracing
case_run() {
	[ -w "$TR/uprobe_events" ] || { echo "no tracefs at $TR" >"$T/skip"; exit 2; }
	cp "$P" "$T/stackk" || exit 1
	_va=$(sym_vaddr "$T/stackk" leaf) && _off=$(vaddr_to_off "$T/stackk" "$_va") ||
		exit 1
	_g=dpstk$$ _i=$TR/instances/dprobe-stk-$$
	mkdir "$_i" || exit 1
	trap 'kcleanup' EXIT INT TERM
	printf 'p:%s/lf %s:0x%x\n' "$_g" "$T/stackk" "$_off" >>"$TR/uprobe_events" &&
		echo 1 >"$_i/options/userstacktrace" &&
		echo 1 >"$_i/events/$_g/lf/enable" || exit 1
	setarch -R "$T/stackk" 2 >/dev/null
	cat "$_i/trace" >"$T/ktrace"
	kcleanup
	trap - EXIT INT TERM
	DP_WRAP="setarch -R"
	dp_trace --json -g -- "$T/stackk" 2
}
# what this case made, and nothing else
kcleanup() {
	[ -d "$_i" ] || return 0
	echo 0 >"$_i/events/$_g/lf/enable" 2>/dev/null
	rmdir "$_i" 2>/dev/null
	echo "-:$_g/lf" >>"$TR/uprobe_events" 2>/dev/null
}
# one line of frames per hit: the kernel's, dprobe's (second dropped)
kframes() {
	awk '/<user stack trace>/ { if (s != "") print s; s = ""; on = 1; next }
	     on && /^ =>  </ { a = $0; sub(/^ =>  </, "", a); sub(/>.*/, "", a)
			       sub(/^0+/, "", a); s = s " 0x" a; next }
	     { on = 0 }
	     END { if (s != "") print s }' "$T/ktrace"
}
dframes() {
	sed -n 's/.*"stack":\[\(.*\)\].*/\1/p' "$T/events" |
	awk '{ n = split($0, f, /"ip":"/); s = ""; k = 0
	       for (i = 2; i <= n; i++) {
		       a = f[i]; sub(/".*/, "", a)
		       if (i == 3) continue
		       if (++k <= 8) s = s " " a
	       }
	       print s }'
}
# on the agent engine, library frames as lib+(offset in the page)
libnorm() {
	if [ "${DPROBE_ENGINE:-auto}" = ptrace ]; then
		cat
		return
	fi
	awk '{ s = ""
	       for (i = 1; i <= NF; i++) {
		       a = $i
		       if (length(a) > 14 || (length(a) == 14 && a > "0x6fffffffffff"))
			       a = "lib+0x" substr(a, length(a) - 2)
		       s = s " " a
	       }
	       print s }'
}
case_result() {
	kframes | libnorm >"$T/kf"
	dframes | libnorm >"$T/df"
	i=0
	while IFS= read -r k <&3 && IFS= read -r d <&4; do
		i=$((i + 1))
		# shellcheck disable=SC2086  # the frames, a word each
		set -- $k
		if [ "$k" = "$d" ] && [ $# -ge 3 ]; then
			echo "hit $i: same frames"
		else
			echo "hit $i: kernel$k, dprobe$d"
		fi
	done 3<"$T/kf" 4<"$T/df"
	echo "kernel hits: $(grep -c . "$T/kf"), dprobe hits: $(grep -c . "$T/df")"
}
expected() {
	echo "hit 1: same frames"
	echo "hit 2: same frames"
	echo "kernel hits: 2, dprobe hits: 2"
}
