#!/bin/sh
# The instruction sweep: a probe on every instruction of libc's strlen and
# memcpy (the implementations the IFUNCs picked) and of two functions of a
# test program, all armed at once; the program's output must not change.
# Usage: sweep.sh DPROBE
set -u
DPROBE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
t_begin sweep
T_TAG=sweep
t_scratch dprobe-sweep
tmp=$T_DIR

result() {	# name ok|fail message
	if [ "$2" = ok ]; then
		t_pass "$1 ($3)"
	else
		t_fail "$1" "$3"
	fi
}

cc -O2 -o "$tmp/prog" "$here/sweep_prog.c" -ldl || exit 1
want=$("$tmp/prog")

# Instruction starts of [start, start+len) in FILE, from objdump.
insns() {	# file start len
	objdump -d --no-show-raw-insn --start-address="$2" \
		--stop-address=$(($2 + $3)) "$1" |
		awk -F: '/^ *[0-9a-f]+:/ { gsub(/ /, "", $1); print "0x" $1 }'
}

# Link-time address -> file offset through the PT_LOAD containing it.
vaddr_to_off() {	# file vaddr
	readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5 }' |
	while read -r o v s; do
		if [ $(($2)) -ge $((v)) ] && [ $(($2)) -lt $((v + s)) ]; then
			printf '0x%x\n' $(($2 - v + o))
			break
		fi
	done
}

defs=$tmp/defs
: > "$defs"
n=0
# libc's strlen and memcpy, 384 bytes each, as PATH:OFFSET probes
"$tmp/prog" addr > "$tmp/addr"
while read -r name lib vaddr; do
	for a in $(insns "$lib" "$vaddr" 384); do
		off=$(vaddr_to_off "$lib" "$a")
		[ -n "$off" ] || continue
		n=$((n + 1))
		echo "p:sweep/${name}_$n $lib:$off" >> "$defs"
	done
done < "$tmp/addr"
# the program's own functions, as SYM+offs probes
for fn in mix classify; do
	set -- $(nm -S "$tmp/prog" | awk -v f="$fn" '$4 == f { print $1, $2 }')
	start=0x$1 size=0x$2
	for a in $(insns "$tmp/prog" "$start" "$size"); do
		n=$((n + 1))
		echo "p:sweep/${fn}_$n $fn+$((a - start))" >> "$defs"
	done
done

# Definitions dprobe refuses (not an instruction dprobe can handle) are
# reported, and left out of the run.
"$DPROBE" check -x "$tmp/prog" -f "$defs" > "$tmp/check" 2>&1
grep '^p:' "$tmp/check" > "$tmp/ok"
refused=$((n - $(wc -l < "$tmp/ok")))
[ "$refused" -le $((n / 20)) ] && result refusals ok "$refused of $n refused" ||
	result refusals fail "$refused of $n refused: $(grep -m3 error "$tmp/check")"

got=$(cd "$tmp" && "$DPROBE" trace -o "$tmp/trace" -e @"$tmp/ok" -- ./prog 2> "$tmp/err")
rc=$?
hits=$(wc -l < "$tmp/trace")
if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
	result output ok "$(wc -l < "$tmp/ok") probes, $hits hits, output unchanged"
else
	result output fail "exit $rc, output '$got' (want '$want'): $(tail -3 "$tmp/err")"
fi
for fn in strlen memcpy mix classify; do
	h=$(grep -c " ${fn}_[0-9]*: " "$tmp/trace")
	[ "$h" -gt 100 ] && result "hits in $fn" ok "$h" ||
		result "hits in $fn" fail "only $h hits"
done
t_end
