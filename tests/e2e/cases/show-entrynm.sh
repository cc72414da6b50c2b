# shellcheck shell=sh disable=SC2016,SC2034  # the runner reads the settings
desc='-fpatchable-function-entry=N,M: a jmp short to a jmp in the nops before the symbol (7,5), the nops all before it (5,5: placed as on any function); shown, traced, and the nops given back after -p'
# progs/entry.c built with -fpatchable-function-entry=7,5 (entrypatch75:
# 5 one-byte nops before each function's symbol, 2 at it) and 5,5
# (entrypatch55: all 5 before it).
#  - entrypatch75 pick: the 2 nops at pick are the region; the agent
#    writes `jmp rel32` to the detour into the 5 nops before pick, then
#    `jmp short` to it (eb f9: from pick+2 back 7) over the 2 nops;
#    nothing is relocated (the jump table does not refuse it), the tail
#    jumps back to pick+0x2.
#  - entrypatch55 mix: no nop at the symbol, so the jump needs mix's own
#    instructions: optimised as in a plain build, and show says the
#    site is not used.
# On the ptrace engine every probe is an int3: the nop is emulated, mix's
# first instruction runs in a slot; the entry sites are named the same.
# Then pick of entrypatch75 is traced with an entry and a return probe
# (values from progs/entry.c, as cases/show.sh), the whole program with
# --tracer function (main, pick, mix: each a short site), and a running
# progs/waiter.c built with 7,5 is shown with -p: afterwards the 5 bytes
# before work and work's own are the file's again, and it runs on.
prog=entrypatch75
levels=O2
defs=''

s_run() {
	_n=$1
	shift
	record_cmd show "$@"
	t_timeout "$TMO" "$DPROBE" show "$@" >"$T/$_n.out" 2>"$T/$_n.err" \
		</dev/null
	echo $? >"$T/$_n.rc"
}

case_run() {
	A=$(build_prog entrypatch55) || return 1
	s_run short pick -- "$P"
	s_run before mix -- "$A"
	record_cmd trace -e 'p:pk pick k=%di:s32' -e 'r:pr pick $retval:s32' -o "$T/tr.ev" -- "$P"
	(cd "$T" && t_timeout "$TMO" "$DPROBE" trace -e 'p:pk pick k=%di:s32' \
		-e 'r:pr pick $retval:s32' -o "$T/tr.ev" -- "$P" >"$T/tr.out" \
		2>"$T/tr.err" </dev/null)
	echo $? >"$T/tr.rc"
	record_cmd trace --tracer function -o "$T/fn.ev" -- "$P"
	t_timeout "$TMO" "$DPROBE" trace --tracer function -o "$T/fn.ev" \
		-- "$P" >/dev/null 2>"$T/fn.err" </dev/null
	echo $? >"$T/fn.rc"
	W=$(build_prog waiterpatch75) || return 1
	start_bg "$T/w.out" "$W" "$T/go" 5 || return 1
	s_run attach -p "$BG_PID" work
	wait_pre_restored "$BG_PID" "$W" work ||
		echo "# work-5..work+16 not restored" >"$T/notes"
	touch "$T/go"
	wait "$BG_PID"
	echo "# target exit=$?" >>"$T/notes"
}

# The 21 bytes from SYM-5 in PID are FILE's again (polled: the agent
# restores them as the session ends).
wait_pre_restored() {
	_a=$(($(runtime_addr "$1" "$2" "$3") - 5)) || return 1
	_o=$(($(vaddr_to_off "$2" "$(sym_vaddr "$2" "$3")") - 5))
	_f=$(dd if="$2" bs=1 skip="$_o" count=21 2>/dev/null | od -An -tx1 | tr -d ' \n')
	_i=0
	while [ "$(dd if="/proc/$1/mem" bs=1 skip="$_a" count=21 2>/dev/null |
		od -An -tx1 | tr -d ' \n')" != "$_f" ]; do
		[ $_i -ge 500 ] && return 1
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
		_i=$((_i + 1))
	done
}

# A run's output, shortened as in cases/show.sh: the header lines, each
# section's bytes on one line (a rel32 as XX), where it goes back.
show_of() {
	awk '
	/^[a-z]/ || /^  (strategy|entry site):/ { print; next }
	/^  [a-z]/ { sec = $1; sub(/:$/, "", sec); next }
	/^    / { line = $0; sub(/^    [^ ]+ +/, "", line)
		n = split(line, w, " ")
		for (i = 1; i <= n && w[i] ~ /^[0-9a-f][0-9a-f]$/; i++)
			bytes[sec] = bytes[sec] " " w[i]
		next }
	END {
		sub(/^ e9 .. .. .. ../, " e9 XX XX XX XX", bytes["now"])
		sub(/^ e9 .. .. .. ../, " e9 XX XX XX XX", bytes["before"])
		print "original:" bytes["original"]
		print "now:" bytes["now"]
		if (bytes["before"] != "") print "before:" bytes["before"]
		if (bytes["detour"] != "") print "detour: yes"
		if (bytes["out-of-line"] != "") print "slot: yes"
	}' "$1"
	sed -n 's/^  \(jumps back to .*\)/\1/p; s/^  \(emulated\):.*/\1/p' "$1"
}

case_result() {
	for _n in short before; do
		echo "== $_n"
		show_of "$T/$_n.out"
		sed 's/^/! /' "$T/$_n.err"
		echo "# exit=$(cat "$T/$_n.rc")"
	done
	echo "== trace"
	sed -n -e 's/^.*: \(pk: \)(pick+0x0\/0x[0-9a-f]*) /\1/p' \
	    -e 's/^.*: \(pr: \)([^ ]* <- pick) /\1/p' "$T/tr.ev"
	sed 's/^/> /' "$T/tr.out"
	summary_of "$T/tr.err"
	echo "# exit=$(cat "$T/tr.rc")"
	echo "== function"
	sed -n 's/^.*: \(pick\|mix\) <-main$/\1/p' "$T/fn.ev" | sort | uniq -c |
		sed 's/^ *//'
	summary_of "$T/fn.err"
	echo "# exit=$(cat "$T/fn.rc")"
	echo "== attach"
	sed -n -e 's/^\(kprobes\/p_work_0: work+0x0\) (.* engine)$/\1/p' \
	    -e '/^  entry site:/p' "$T/attach.out"
	sed 's/^/! /' "$T/attach.err"
	echo "# exit=$(cat "$T/attach.rc")"
	sed 's/^/> /' "$T/w.out"
	cat "$T/notes" 2>/dev/null
}

# od's bytes of FILE from SYM+OFF, LEN of them, as " aa bb"
file_bytes() {
	_o=$(($(vaddr_to_off "$1" "$(sym_vaddr "$1" "$2")") + $3))
	od -An -tx1 -j "$_o" -N "$4" "$1" | tr -s ' \n' '  ' | sed 's/ *$//'
}

# the offset of SYM's first instruction boundary at 5 or past it
past5() {
	_k=1
	while _b=$(insn_off "$1" "$2" $_k) && [ "$_b" -lt 5 ]; do
		_k=$((_k + 1))
	done
	echo "$_b"
}

SHORT='patchable function entry with nops before the symbol (-fpatchable-function-entry=N,M): a short jmp to a jmp in the nops before'
UNUSED='patchable function entry, not used (-fpatchable-function-entry=N,M: no jump fits in its nops, the probe is placed as on any function)'

expected() {
	A=$(build_prog entrypatch55)
	# the layouts, from the files: five nops before, two at pick
	[ "$(file_bytes "$P" pick -5 7)" = " 90 90 90 90 90 90 90" ] || return 1
	[ "$(file_bytes "$A" mix -5 5)" = " 90 90 90 90 90" ] || return 1
	p2=$(insn_off "$P" pick 2)
	m1=$(insn_off "$A" mix 1)
	m5=$(past5 "$A" mix)
	if [ "${DPROBE_ENGINE:-auto}" = ptrace ]; then
		mb=$(file_bytes "$A" mix 0 "$m1")
		cat <<EOF2
== short
kprobes/p_pick_0: pick+0x0 (ptrace engine)
  strategy: int3 (emulate:nop; not optimized: the ptrace engine only places int3s)
  entry site: $SHORT
original: 90
now: cc
emulated
# exit=0
== before
kprobes/p_mix_0: mix+0x0 (ptrace engine)
  strategy: int3 (xol; not optimized: the ptrace engine only places int3s)
  entry site: $UNUSED
original:$mb
now:$(echo "$mb" | sed 's/^ [0-9a-f][0-9a-f]/ cc/')
slot: yes
jumps back to mix+$(hex "$m1")
# exit=0
EOF2
	else
		mb=$(file_bytes "$A" mix 0 "$m5")
		pad=$(i=5; while [ $i -lt "$m5" ]; do printf ' cc'; i=$((i + 1)); done)
		cat <<EOF2
== short
kprobes/p_pick_0: pick+0x0 (agent engine)
  strategy: optimized
  entry site: $SHORT
original: 90 90
now: eb f9
before: e9 XX XX XX XX
detour: yes
jumps back to pick+$(hex "$p2")
# exit=0
== before
kprobes/p_mix_0: mix+0x0 (agent engine)
  strategy: optimized
  entry site: $UNUSED
original:$mb
now: e9 XX XX XX XX$pad
detour: yes
jumps back to mix+$(hex "$m5")
# exit=0
EOF2
	fi
	echo "== trace"
	_s=0
	for _k in 0 1 2 3 4 5 6 7 8; do
		case $_k in
		0) _r=4 ;; 1) _r=7 ;; 2) _r=-8 ;; 3) _r=10 ;; 4) _r=4 ;;
		5) _r=0 ;; 6) _r=1 ;; 7) _r=1 ;; *) _r=1 ;;
		esac
		echo "pk: k=$_k"
		echo "pr: arg1=$_r"
		_s=$((_s * 31 + _r * 17 + (_s ^ _r)))
	done
	echo "> $_s"
	echo "# dprobe: 18 events, 0 filtered, 0 missed, 0 lost"
	echo "# exit=0"
	cat <<EOF2
== function
9 mix
9 pick
# dprobe: 19 events, 0 filtered, 0 missed, 0 lost
# exit=0
== attach
kprobes/p_work_0: work+0x0
  entry site: $SHORT
# exit=0
> waiter: ready
> waiter: phase 1 done, sum 55
# target exit=0
EOF2
}
