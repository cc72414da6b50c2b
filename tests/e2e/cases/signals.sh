# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="the program's own SIGTRAP/SIGSEGV/other handlers see the same signals traced"
# signals.c (see its header): raise(SIGTRAP) -> 5/-6 (SI_TKILL); its own
# int3 -> 5/128 (SI_KERNEL: the tracer must not take it for a probe);
# a store to address 16 -> 11/1 (SEGV_MAPERR), handler siglongjmps;
# kill(self, SIGUSR1) x3 -> 10/0 (SI_USER); sigqueue(SIGRTMIN, 1234) ->
# 34/-1 (SI_QUEUE) with the value; a child exiting 7 -> 17/1
# (CLD_EXITED).  Each handler calls note(sig, code), probed at entry and
# return (returns sig * 1000 + code into on_signal).  The program's
# output must be what it prints untraced (checked too).
prog=signals
kdiff=yes
defs='p:note note sig=%di:s32 code=%si:s32
r:noteret note ret=$retval:s64'
expected() {
	for sc in 5:-6 5:128 11:1 10:0 10:0 10:0 34:-1 17:1; do
		s=${sc%:*}
		c=${sc#*:}
		echo "signals note: (note+0x0/{size:note}) sig=$s code=$c"
		echo "signals noteret: ({retsite:on_signal:note} <- note) ret=$((s * 1000 + c))"
	done
	cat <<'EOF2'
> signals: signal 5 code=-6
> signals: signal 5 code=128
> signals: SIGSEGV code=1 addr=16
> signals: signal 10 code=0
> signals: signal 10 code=0
> signals: signal 10 code=0
> signals: SIGRTMIN code=-1 value=1234
> signals: SIGCHLD code=1 status=7
> signals: 8 notes
# dprobe: 16 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
case_check() {
	"$P" >"$T/untraced" 2>&1
	diff -u "$T/untraced" "$T/stdout" || {
		echo "the traced program's output differs from its untraced output"
		return 1
	}
}
