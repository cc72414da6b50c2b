#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's kprobe_events as the reference for dprobe's symbol places.
#
#   sh tests/qemu/kprobe-ref.sh DPROBE          compare DPROBE with the kernel
#   sh tests/qemu/kprobe-ref.sh --kernel-only   only show what the kernel does
#
# The machines here have no kprobes, so Debian 12's kernel is booted under
# qemu (boot.sh), once for the whole corpus.  In the guest, the kdiff helper
# of tests/kernel/ (built static, in its kprobe mode) writes every line of
# kprobe-corpus.txt to kprobe_events with one write() each, recording
# accepted or not, the listing line, the errno and the error_log entry, and
# creates each line of kprobe-formats.txt to save its events/.../format.
# The results come back through a 9p share; on the host, kdiff compares
# them with `DPROBE check --json --no-elf -f` and `DPROBE format --no-elf`
# exactly as tests/kernel/run.sh does for uprobe_events.
#
# Differences listed in kprobe-expected.txt (input line, TAB, the row of
# docs/differences.md that accepts it, quoted) are reported as
# EXPECTED-DIFFERENCE and pass; a quote that docs/differences.md does not
# contain is a failure.  Anything else that differs fails.
# No network for the first download, no static libc, no qemu: SKIP.
# Env: DPROBE_RESULTS (appends "qemu P F S"), QEMU_KEEP=DIR (keeps the
# expanded corpus and both sides' results), DPROBE_QEMU_CACHE (boot.sh).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kernel_only=0

name=kprobe-ref
# shellcheck source=tests/qemu/lib.sh
. "$here/lib.sh"

if [ $# -ne 1 ]; then
	echo "usage: $0 DPROBE | --kernel-only" >&2
	exit 2
fi
if [ "$1" = --kernel-only ]; then
	kernel_only=1
else
	case $1 in
	/*) dprobe=$1 ;;
	*) dprobe=$(pwd)/$1 ;;
	esac
	if [ ! -x "$dprobe" ]; then
		echo "qemu kprobe-ref: $dprobe is not an executable" >&2
		t_add 0 1 0
		t_end
		exit 1
	fi
fi
for tool in gcc qemu-system-x86_64 cpio xz; do
	command -v $tool >/dev/null 2>&1 || t_skip_all "$tool not found (mk/deps.sh --test)"
done

scratch dpq-kref
kdiff=$tmp/kdiff

# Static: the guest has busybox and nothing else.
gcc -static -std=gnu17 -O1 -D_GNU_SOURCE -o "$kdiff" "$root/tests/kernel/kdiff.c" \
	2>"$tmp/gcc.err" || t_skip_all "cannot build a static kdiff: $(head -1 "$tmp/gcc.err")"
"$kdiff" expand <"$here/kprobe-corpus.txt" >"$share/corpus.exp" ||
	t_skip_all "cannot expand kprobe-corpus.txt"
"$kdiff" expand <"$here/kprobe-formats.txt" >"$share/formats.exp" ||
	t_skip_all "cannot expand kprobe-formats.txt"

# ---- the kernel, in one boot ---------------------------------------------
cat >"$tmp/payload.sh" <<'EOF'
cd /host || exit 1
uname -r >uname-r
export KDIFF_EVENTS=kprobe_events
/bin/kdiff kernel corpus.exp kernel.jsonl || exit 1
cat /sys/kernel/tracing/kprobe_events >listing-end.txt
# The formats start from an empty kprobe_events (O_TRUNC clears it).
: >/sys/kernel/tracing/kprobe_events || exit 1
/bin/kdiff kformats formats.exp kformats.out || exit 1
EOF
sh "$here/boot.sh" -a "$kdiff:/bin/kdiff" -9 "$share" "$tmp/payload.sh" \
	>"$tmp/guest.out" 2>"$tmp/guest.err"
rc=$?
if [ $rc = 77 ]; then
	t_skip_all "$(sed 's/^boot.sh: //' "$tmp/guest.err" | head -1)"
fi
if [ $rc != 0 ] || [ ! -s "$share/kernel.jsonl" ] || [ ! -s "$share/kformats.out" ]; then
	echo "qemu kprobe-ref: the guest run failed (exit $rc):" >&2
	cat "$tmp/guest.out" "$tmp/guest.err" >&2
	t_add 0 1 0
	t_end
	exit 1
fi
echo "qemu kprobe-ref: guest kernel $(cat "$share/uname-r")"
cd "$share" || exit 2
if [ $kernel_only = 1 ]; then
	"$kdiff" show kernel.jsonl
	"$kdiff" formats - formats.exp /dev/null kformats.out
	exit 0
fi

# ---- dprobe, and the comparison ------------------------------------------
# Every accepted difference must quote docs/differences.md.
expect=$here/kprobe-expected.txt
while IFS='	' read -r input why; do
	case $input in ''|';;'*) continue ;; esac
	quote=${why#docs/differences.md: }
	quote=${quote#\"}
	quote=${quote%\"}
	if [ "$quote" = "$why" ] || ! grep -qF -- "$quote" "$root/docs/differences.md"; then
		echo "BAD EXPECTATION (not a quote of docs/differences.md): $input"
		echo "  $why"
		t_add 0 1 0
	fi
done <"$expect"
"$kdiff" expand <"$expect" >expected.txt

: >counts
"$dprobe" check --json --no-elf -f corpus.exp >dprobe.jsonl 2>dprobe.err
rc=$?
if [ $rc -gt 1 ]; then
	echo "qemu kprobe-ref: dprobe check exited with $rc:" >&2
	head -20 dprobe.err >&2
fi
{
	KDIFF_EXPECT=$share/expected.txt "$kdiff" compare corpus.exp \
		kernel.jsonl dprobe.jsonl counts
	KDIFF_EXPECT=$share/expected.txt "$kdiff" formats "$dprobe" \
		formats.exp counts kformats.out
} >report.txt
cat report.txt

while read -r p f; do
	t_add "$p" "$f" 0
done <counts
[ -s counts ] || t_add 0 1 0
echo "qemu kprobe-ref: $(grep -c '^EXPECTED-DIFFERENCE' report.txt)" \
     "expected differences (kprobe-expected.txt)"
t_end
