# shellcheck shell=sh disable=SC2016,SC2034  # the runner reads the settings
desc='dprobe show: the bytes before and after, the detour or slot and where it jumps back; int3, optimised and compiler entry-site probes'
# progs/entry.c, built plain (entry), with -pg -mfentry -mnop-mcount
# (entryfentry) and with -fpatchable-function-entry=5 (entrypatch).
# Each run shows one probe at a function's entry in a launched command,
# which is held before main() and killed: the program prints nothing.
#  - plain viacall: an indirect call through a register in its first 5
#    bytes keeps the agent from optimising: an int3 replaces the first
#    byte of its first instruction, which runs in an out-of-line slot
#    that jumps back to the next instruction (objdump's second one).
#    (pick's jump table no longer does: the agent reads the table.)
#  - plain mix: the agent replaces the instructions covering 5 bytes with
#    a jmp (e9) to a detour, pads the rest with int3, and the detour's
#    tail runs those instructions and jumps back past them.
#  - entryfentry / entrypatch pick: the compiler's nops (0f 1f 44 00 00,
#    and five 90) are the entry site; the agent optimises in spite of the
#    jump table, nothing is relocated and the tail jumps back to pick+0x5.
# On the ptrace engine every probe is an int3: nops are emulated (no
# slot), mix's first instruction runs in a slot.
# The original bytes are read from the file (od at the symbol's offset).
# Then entryfentry is traced with an entry and a return probe on pick:
# through the entry site's detour both fire as anywhere else, the values
# worked out from the source below.  Last, a running process (-p,
# progs/waiter.c) is shown, has its code back and runs on.
prog=entry
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
	F=$(build_prog entryfentry) && N=$(build_prog entrypatch) || return 1
	s_run via viacall -- "$P"
	s_run mix mix -- "$P"
	s_run fentry pick -- "$F"
	s_run patch pick -- "$N"
	# and traced through the fentry site: entries and returns as usual
	record_cmd trace -e 'p:pk pick k=%di:s32' -e 'r:pr pick $retval:s32' -o "$T/tr.ev" -- "$F"
	(cd "$T" && t_timeout "$TMO" "$DPROBE" trace -e 'p:pk pick k=%di:s32' \
		-e 'r:pr pick $retval:s32' -o "$T/tr.ev" -- "$F" >"$T/tr.out" \
		2>"$T/tr.err" \
		</dev/null)
	echo $? >"$T/tr.rc"
	attach_run
}

# -p: progs/waiter.c is shown while it waits for its file, then every
# byte of work is the file's again, and it runs on: 1..5 squared, 55.
attach_run() {
	W=$(build_prog waiter) || return 1
	start_bg "$T/w.out" "$W" "$T/go" 5 || return 1
	s_run attach -p "$BG_PID" work
	wait_restored "$BG_PID" "$W" work || echo "# work not restored" >"$T/notes"
	touch "$T/go"
	wait "$BG_PID"
	echo "# target exit=$?" >>"$T/notes"
}

# A run's output, shortened: the header lines, each section's bytes on
# one line (the jmp's rel32 as XX: addresses vary), where it goes back.
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
		print "original:" bytes["original"]
		print "now:" bytes["now"]
		if (bytes["detour"] != "") print "detour: yes"
		if (bytes["out-of-line"] != "") print "slot: yes"
	}' "$1"
	sed -n 's/^  \(jumps back to .*\)/\1/p; s/^  \(emulated\):.*/\1/p' "$1"
}

case_result() {
	for _n in via mix fentry patch; do
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
	echo "== attach"
	sed -n 's/^\(kprobes\/p_work_0: work+0x0\) (.* engine)$/\1/p' "$T/attach.out"
	grep -c '^  now:$' "$T/attach.out"
	sed 's/^/! /' "$T/attach.err"
	echo "# exit=$(cat "$T/attach.rc")"
	sed 's/^/> /' "$T/w.out"
	cat "$T/notes" 2>/dev/null
}

# od's bytes of FILE at SYM+0, LEN of them, as " aa bb"
file_bytes() {
	_o=$(vaddr_to_off "$1" "$(sym_vaddr "$1" "$2")")
	od -An -tx1 -j "$_o" -N "$3" "$1" | tr -s ' \n' '  ' | sed 's/ *$//'
}

# the offset of SYM's first instruction boundary at 5 or past it
past5() {
	_k=1
	while _b=$(insn_off "$1" "$2" $_k) && [ "$_b" -lt 5 ]; do
		_k=$((_k + 1))
	done
	echo "$_b"
}

# the ptrace engine's strategy, the instruction handled as $1
pt_how() {
	echo "int3 ($1; not optimized: the ptrace engine only places int3s)"
}

# the int3 over BYTES (" aa bb cc"): " cc bb cc"
int3_over() {
	echo "$1" | sed 's/^ [0-9a-f][0-9a-f]/ cc/'
}

# pick(k, 1) for k = 0..8, and main's sum (mix), as the trace shows them
expected_trace() {
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
	cat <<'EOF2'
== attach
kprobes/p_work_0: work+0x0
1
# exit=0
> waiter: ready
> waiter: phase 1 done, sum 55
# target exit=0
EOF2
}

expected() {
	expected_show
	expected_trace
}

expected_show() {
	F=$(build_prog entryfentry)
	N=$(build_prog entrypatch)
	p1=$(insn_off "$P" viacall 1)
	m1=$(insn_off "$P" mix 1)
	m5=$(past5 "$P" mix)
	pb=$(file_bytes "$P" viacall "$p1")
	if [ "${DPROBE_ENGINE:-auto}" = ptrace ]; then
		mb=$(file_bytes "$P" mix "$m1")
		cat <<EOF2
== via
kprobes/p_viacall_0: viacall+0x0 (ptrace engine)
  strategy: $(pt_how xol)
original:$pb
now:$(int3_over "$pb")
slot: yes
jumps back to viacall+$(hex "$p1")
# exit=0
== mix
kprobes/p_mix_0: mix+0x0 (ptrace engine)
  strategy: $(pt_how xol)
original:$mb
now:$(int3_over "$mb")
slot: yes
jumps back to mix+$(hex "$m1")
# exit=0
== fentry
kprobes/p_pick_0: pick+0x0 (ptrace engine)
  strategy: $(pt_how emulate:nop)
  entry site: fentry nop (-pg -mfentry -mnop-mcount)
original: 0f 1f 44 00 00
now: cc 1f 44 00 00
emulated
# exit=0
== patch
kprobes/p_pick_0: pick+0x0 (ptrace engine)
  strategy: $(pt_how emulate:nop)
  entry site: patchable function entry (-fpatchable-function-entry)
original: 90
now: cc
emulated
# exit=0
EOF2
		return
	fi
	mb=$(file_bytes "$P" mix "$m5")
	pad=$(i=5; while [ $i -lt "$m5" ]; do printf ' cc'; i=$((i + 1)); done)
	cat <<EOF2
== via
kprobes/p_viacall_0: viacall+0x0 (agent engine)
  strategy: int3 (xol; not optimized: an indirect call in the replaced bytes)
original:$pb
now:$(int3_over "$pb")
slot: yes
jumps back to viacall+$(hex "$p1")
# exit=0
== mix
kprobes/p_mix_0: mix+0x0 (agent engine)
  strategy: optimized
original:$mb
now: e9 XX XX XX XX$pad
detour: yes
jumps back to mix+$(hex "$m5")
# exit=0
== fentry
kprobes/p_pick_0: pick+0x0 (agent engine)
  strategy: optimized
  entry site: fentry nop (-pg -mfentry -mnop-mcount)
original: 0f 1f 44 00 00
now: e9 XX XX XX XX
detour: yes
jumps back to pick+0x5
# exit=0
== patch
kprobes/p_pick_0: pick+0x0 (agent engine)
  strategy: optimized
  entry site: patchable function entry (-fpatchable-function-entry)
original: 90 90 90 90 90
now: e9 XX XX XX XX
detour: yes
jumps back to pick+0x5
# exit=0
EOF2
}
