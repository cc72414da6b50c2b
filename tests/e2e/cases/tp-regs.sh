# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='t: definitions read the tracepoint arguments, through $argN and the stack, never a stale frame'
# A tracepoint's probe is called, not trapped, and a t: line reads
# arguments only (registers are the kernel's BAD_VAR there: tp-errors).
# tpoints --once 3 fills the stack below with 0xa5 before each
# tick_once(i), so an argument read from a frame left unset would show
# 0xa5a5a5a5.
prog=tpoints
engines='auto agent'
defs='t:tp/segs tp:tick i=$arg1:s32 again=$arg1:x32'
args='--once 3'
expected() {
	for i in 0 1 2; do
		echo "tpoints segs: i=$i again=0x$(printf %x $i)"
	done
	cat <<'EOF2'
> tpoints: sum 3
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
