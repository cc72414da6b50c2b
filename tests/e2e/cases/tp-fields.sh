# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='application tracepoints by name: every field type, printed as kernel tracepoints print'
# tpoints.c fires, for i = 0..2: tp:ints(-1-i, -300(i+1), -70000(i+1),
# -5e9(i+1), 250+i, 65530+i, 4e9+i, 1.8e19+i) (each integer type keeps its
# width and sign); tp:strs("zero"/"one"/"two", NULL, {i, -i, 100i, -1},
# (void *)0x1000(i+1)) (a NULL string is a fault; the pointer is an
# integer field, u64); tp:eight(i..i+7), whose 7th and 8th arguments the
# caller passes on the stack.  A tracepoint's line is its fields alone.
# Tracepoints are enabled by the in-process engine only.
prog=tpoints
engines='auto agent'
defs='tp:ints
tp:strs
tp:eight'
expected() {
	for i in 0 1 2; do
		names="zero one two"
		set -- $names
		shift "$i"
		echo "tpoints ints: s8=$((-1 - i)) s16=$((-300 * (i + 1))) s32=$((-70000 * (i + 1))) s64=$((-5000000000 * (i + 1))) u8=$((250 + i)) u16=$((65530 + i)) u32=$((4000000000 + i)) u64=1800000000000000000$i"
		echo "tpoints strs: name=\"$1\" none=(fault) vec={$i,$((-i)),$((100 * i)),-1} ptr=$((4096 * (i + 1)))"
		echo "tpoints eight: a=$i b=$((i + 1)) c=$((i + 2)) d=$((i + 3)) e=$((i + 4)) f=$((i + 5)) g=$((i + 6)) h=$((i + 7))"
	done
	cat <<'EOF2'
> tpoints: sum 300
# dprobe: 9 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
