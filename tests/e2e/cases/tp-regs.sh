# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='t: definitions read the registers that carry no argument as 0, the segment registers too'
# A tracepoint's probe is called, not trapped: only the argument
# registers hold something; every other register reads as 0, %cs and
# %ss included.  tpoints --once 3 fills the stack below with 0xa5 before
# each tick_once(i), so a register left unset in the probe's frame would
# show 0xa5a5a5a5a5a5a5a5.
prog=tpoints
engines='auto agent'
defs='t:tp/segs tp:tick i=$arg1:s32 cs=%cs ss=%ss bx=%bx r15=%r15'
args='--once 3'
expected() {
	for i in 0 1 2; do
		echo "tpoints segs: i=$i cs=0x0 ss=0x0 bx=0x0 r15=0x0"
	done
	cat <<'EOF2'
> tpoints: sum 3
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
