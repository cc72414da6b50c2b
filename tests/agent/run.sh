#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The libdprobe.so tests: the test programs of tests/agent (TAP output,
# built by `make agent-test`), the two examples with their expected
# output, and a check that the hit path's objects call no library
# function.
#
#   sh tests/agent/run.sh BUILD_DIR
#
# Prints one line per case and "agent: N passed, N failed, N skipped"; appends
# "agent P F S" to $DPROBE_RESULTS when it is set.
set -u
B=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
t_begin agent
T_TAG=agent
t_scratch dprobe-agent
tmp=$T_DIR

result() {	# ok|fail name [detail]
	if [ "$1" = ok ]; then
		t_pass "$2"
	else
		t_fail "$2" "${3:-}"
	fi
}

# run_tap LABEL CMD...: run a TAP producer, one result per "ok"/"not ok"
# line ("ok ... # SKIP" is a skip), and a failure for a non-zero exit
# that no "not ok" explains.
run_tap() {
	label=$1
	shift
	"$@" >"$tmp/out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*) t_skip "$label: ${line#ok * - }" ;;
		"ok "*) result ok "$label: ${line#ok * - }" ;;
		"not ok "*) result fail "$label: ${line#not ok * - }" ;;
		"#"*) echo "    $line" ;;
		esac
	done <"$tmp/out"
	if [ $rc -ne 0 ] && ! grep -q '^not ok ' "$tmp/out"; then
		result fail "$label" "exit status $rc: $(tail -n 3 "$tmp/out" | tr '\n' ' ')"
	fi
}

# ---- the test programs ---------------------------------------------------
for t in "$B"/tests/agent/t_* "$B"/tests/agent/dl_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	case $name in
	dl_*) set -- "$B/libdprobe.so" ;;
	*) set -- ;;
	esac
	run_tap "$name" timeout 300 "$t" "$@"
done

# ---- again without jump optimisation --------------------------------------
# The programs that exercise optimisation, with every probe left an int3.
for name in t_hammer t_opt t_sweep t_gp t_kretprobe; do
	t=$B/tests/agent/$name
	[ -x "$t" ] || continue
	run_tap "$name (DPROBE_NOOPT=1)" env DPROBE_NOOPT=1 timeout 300 "$t"
done

# ---- tracepoints: compile-time checks, and the disabled cost (callgrind) ----
for script in tp_compile tp_callgrind hit_syscalls; do
	case $script in
	tp_compile) arg=${CC:-cc} ;;
	*) arg=$B ;;
	esac
	run_tap "$script" sh "$(dirname "$0")/$script.sh" "$arg"
done

# ---- the examples ----------------------------------------------------------
# kprobe_example: the kernel sample's lines, ip one byte after the probe.
check_kprobe_example() {	# symbol
	"$B/examples/kprobe_example" "$@" >"$tmp/ex" 2>&1 || return 1
	awk -v sym="${1:-example_clone}" '
	function hex(s,  i, v) {
		v = 0
		sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	/^Planted kprobe at 0x[0-9a-f]+$/ { addr = $4; planted++; next }
	/pre_handler: p->addr = / {
		if ($1 != "<" sym ">") bad = bad " name:" $1
		a = $5; sub(/,$/, "", a)
		ip = $8; sub(/,$/, "", ip)
		if (a != addr) bad = bad " addr:" a
		if (hex(ip) != hex(addr) + 1) bad = bad " ip:" ip
		if ($11 !~ /^0x[0-9a-f]+$/) bad = bad " flags:" $11
		pre++; next
	}
	/post_handler: p->addr = / {
		a = $5; sub(/,$/, "", a)
		if (a != addr) bad = bad " post-addr:" a
		post++; next
	}
	/^kprobe at 0x[0-9a-f]+ unregistered$/ { unreg++; next }
	/^work done: 25, missed 0$/ { done++; next }
	{ bad = bad " line:" $0 }
	END {
		if (planted != 1 || pre != 3 || post != 3 || unreg != 1 ||
		    done != 1 || bad != "") {
			printf "planted %d pre %d post %d unreg %d done %d%s\n",
				planted, pre, post, unreg, done, bad
			exit 1
		}
	}' "$tmp/ex" >"$tmp/why"
}

for sym in "" getpid libc.so.6:getpid; do
	if check_kprobe_example $sym; then
		result ok "kprobe_example ${sym:-(default)}: 3 hits, kernel-style lines"
	else
		result fail "kprobe_example ${sym:-(default)}" "$(cat "$tmp/why" "$tmp/ex" | head -n 12 | tr '\n' '|')"
	fi
done

out=$("$B/examples/kprobe_example" no_such_symbol 2>&1)
if [ $? -eq 1 ] && [ "$out" = "register_kprobe failed, returned -2 (No such file or directory)" ]; then
	result ok "kprobe_example no_such_symbol: -ENOENT"
else
	result fail "kprobe_example no_such_symbol" "$out"
fi

"$B/examples/kretprobe_example" >"$tmp/ex" 2>&1
rc=$?
sed -e 's/ took [0-9]* ns/ took N ns/' -e 's/0x[0-9a-f]*/ADDR/' "$tmp/ex" >"$tmp/got"
cat >"$tmp/want" <<'EOF'
Planted return probe at example_alloc: ADDR
example_alloc returned 120 and took N ns to execute
example_alloc returned 2016 and took N ns to execute
example_alloc returned 32640 and took N ns to execute
example_alloc returned 130560 and took N ns to execute
kretprobe at ADDR unregistered
Missed probing 0 instances of example_alloc.
total 165336
EOF
if [ $rc -eq 0 ] && cmp -s "$tmp/want" "$tmp/got"; then
	result ok "kretprobe_example: return values and timings"
else
	result fail "kretprobe_example" "exit $rc: $(diff "$tmp/want" "$tmp/got" | head -n 6 | tr '\n' '|')"
fi

# ---- the hit path calls no library function ---------------------------------
# Objects that hold only hit-path code; any undefined symbol must be ours.
for o in hit rethook nofault nofault_copy trampoline opt_hit opt_entry stack; do
	f=$B/agent/src/engine/agent/$o.o
	if [ ! -f "$f" ]; then
		result fail "hit path $o.o" "not built"
		continue
	fi
	ext=$(nm -u "$f" | awk '{ print $2 }' |
		grep -v -e '^dp_' -e '^_GLOBAL_OFFSET_TABLE_$' | tr '\n' ' ')
	if [ -z "$ext" ]; then
		result ok "hit path $o.o: no library calls"
	else
		result fail "hit path $o.o" "calls $ext"
	fi
done

t_end
