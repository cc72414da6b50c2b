#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Boot Debian 12's kernel (which has kprobes, unlike the test machines')
# under qemu with a busybox initramfs, run one payload script in it and
# hand back what the payload printed and its exit code.
#
#   sh tests/qemu/boot.sh [-v] [-a FILE:GUESTPATH]... [-b BINARY]...
#                         [-9 HOSTDIR] PAYLOAD.sh [ARG...]
#   sh tests/qemu/boot.sh --fetch     only fill the cache
#
# -a copies FILE into the guest at GUESTPATH; -b copies a dynamically
# linked BINARY to the same path in the guest together with every library
# `ldd` lists (the host's loader and libc run in the guest: same distro);
# -9 shares HOSTDIR read-write as /host (virtio 9p); -v prints the guest
# kernel's console on stderr.  The payload runs as root with tracefs at
# /sys/kernel/tracing and cwd /; its stdout and stderr come back on
# stdout through the second serial port, so kernel messages never mix in.
#
# Exit status: the payload's, or 124 when qemu is killed after
# $DPROBE_QEMU_TIMEOUT seconds (default 120), 125 when the guest died
# before the payload finished, 77 when the kernel or busybox cannot be
# fetched (no network): the callers turn 77 into a SKIP, with the reason
# on stderr.
#
# Cache: ${DPROBE_QEMU_CACHE:-$HOME/.cache/dprobe-qemu}/PACKAGE-VERSION,
# filled once from Debian's mirror with apt-get download (nothing is
# installed on the host): vmlinux, base.cpio, config, uname-r, package.
set -u

KPKG=linux-image-6.1.0-56-amd64
KVER=6.1.192-2
# One folder per pin: changing the pin fetches again.
CACHE=${DPROBE_QEMU_CACHE:-${HOME:-/tmp}/.cache/dprobe-qemu}/$KPKG-$KVER
TIMEOUT=${DPROBE_QEMU_TIMEOUT:-120}
MARK=@@dprobe-qemu-end@@

die() {
	echo "boot.sh: $*" >&2
	exit 2
}

nofetch() {
	echo "boot.sh: cannot fetch the guest kernel: $*" >&2
	exit 77
}

# ---- the cache --------------------------------------------------------

# The pinned kernel, or (when the mirror moved on, as bookworm-security
# does) the newest 6.1.0-N-amd64 apt knows, said out loud.
pick_kernel() {
	if apt-cache madison "$KPKG" 2>/dev/null |
	   awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | grep -qxF "$KVER"; then
		echo "$KPKG=$KVER"
		return
	fi
	alt=$(apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
	      grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' |
	      sort -t- -k4,4n | tail -1)
	[ -n "$alt" ] || return 1
	echo "boot.sh: $KPKG=$KVER is not offered by apt here; using $alt" \
	     "(run apt-get update if this is unexpected)" >&2
	echo "$alt"
}

# The bzImage's payload is an XZ stream; the uncompressed vmlinux boots
# through its PVH note and saves the guest ~4 s of decompression (TCG).
cut_vmlinux() {
	off=$(LC_ALL=C grep -abo "$(printf '\3757zXZ')" "$1" | head -1 |
	      cut -d: -f1)
	[ -n "$off" ] || return 1
	tail -c +$((off + 1)) "$1" | xz -dc --single-stream >"$2" 2>/dev/null
	[ -s "$2" ]
}

# The modules behind -9, in load order.
MODS="drivers/virtio/virtio_ring drivers/virtio/virtio
drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci_legacy_dev
drivers/virtio/virtio_pci fs/netfs/netfs fs/fscache/fscache net/9p/9pnet
net/9p/9pnet_virtio fs/9p/9p"

write_init() {
	cat >"$1" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs nodev /sys/kernel/tracing
mkdir -p /tmp /dev/pts /host
out=/dev/ttyS1
stty -F $out raw -echo 2>/dev/null
if [ -e /payload/ninep ]; then
	for m in $(cat /lib/modules/order); do insmod /lib/modules/$m.ko; done
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host /host
fi
set -- $(cat /payload/args 2>/dev/null)
cd /
sh /payload/payload.sh "$@" >$out 2>&1 </dev/null
rc=$?
# Let the UART drain before the marker and the power-off.
stty -F $out raw -echo 2>/dev/null
printf '\n@@dprobe-qemu-end@@ %d\n' $rc >$out
sync
poweroff -f
EOF
	chmod 755 "$1"
}

fetch() {
	[ -s "$CACHE/vmlinux" ] && [ -s "$CACHE/base.cpio" ] && return 0
	command -v apt-get >/dev/null || nofetch "no apt-get"
	for t in cpio xz qemu-system-x86_64; do
		command -v $t >/dev/null || die "$t not found (mk/deps.sh --test)"
	done
	mkdir -p "$CACHE" || die "cannot create $CACHE"
	dl=$(mktemp -d "$CACHE/dl.XXXXXX") || die "cannot write to $CACHE"
	kpkg=$(pick_kernel) || { rm -rf "$dl"; nofetch "apt offers no linux-image-6.1.0-*-amd64"; }
	if ! (cd "$dl" && apt-get download -q "$kpkg" busybox-static \
	      >download.log 2>&1); then
		msg=$(grep -E '^(E|W):' "$dl/download.log" | head -2 | tr '\n' ' ')
		rm -rf "$dl"
		nofetch "apt-get download $kpkg busybox-static failed: $msg"
	fi
	for deb in "$dl"/*.deb; do
		dpkg-deb -x "$deb" "$dl/x" || { rm -rf "$dl"; die "cannot unpack $deb"; }
	done
	for vmlinuz in "$dl"/x/boot/vmlinuz-*; do break; done
	cut_vmlinux "$vmlinuz" "$dl/vmlinux" ||
		{ rm -rf "$dl"; die "no XZ payload in $vmlinuz"; }
	# The base initramfs: busybox, /init, the 9p modules.
	r=$dl/root
	mkdir -p "$r/bin" "$r/proc" "$r/sys" "$r/dev" "$r/lib/modules" "$r/payload"
	cp "$dl/x/bin/busybox" "$r/bin/busybox" || { rm -rf "$dl"; die "no busybox"; }
	write_init "$r/init"
	kmods=$(ls -d "$dl"/x/lib/modules/*/kernel)
	for m in $MODS; do
		mkdir -p "$r/lib/modules/$(dirname "$m")"
		cp "$kmods/$m.ko" "$r/lib/modules/$m.ko" || { rm -rf "$dl"; die "no $m.ko"; }
		echo "$m" >>"$r/lib/modules/order"
	done
	(cd "$r" && find . | cpio -o -H newc --quiet) >"$dl/base.cpio" ||
		{ rm -rf "$dl"; die "cannot build the initramfs"; }
	basename "$vmlinuz" | sed 's/^vmlinuz-//' >"$CACHE/uname-r"
	echo "$kpkg" >"$CACHE/package"
	cp "$dl"/x/boot/config-* "$CACHE/config"
	mv "$dl/vmlinux" "$CACHE/vmlinux" && mv "$dl/base.cpio" "$CACHE/base.cpio"
	rm -rf "$dl"
}

# ---- one run ----------------------------------------------------------

verbose=0
ninep=
tmp=$(mktemp -d /tmp/dprobe-qemu.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
run=$tmp/root
mkdir -p "$run/payload"

add() {
	case $2 in /*) ;; *) die "-a $1:$2: GUESTPATH must be absolute" ;; esac
	mkdir -p "$run$(dirname "$2")" && cp -L "$1" "$run$2" ||
		die "cannot add $1"
}

add_binary() {
	add "$1" "$(realpath "$1")"
	if ! ldd "$1" >"$tmp/ldd" 2>&1; then
		# Static programs and scripts need nothing more.
		grep -q "not a dynamic executable" "$tmp/ldd" && return
		die "ldd $1 failed: $(cat "$tmp/ldd")"
	fi
	# "libx.so => /path (0x..)" and "/lib64/ld-linux-x86-64.so.2 (0x..)"
	for lib in $(awk '$2 == "=>" && $3 ~ /^\// { print $3 }
			  $1 ~ /^\// { print $1 }' "$tmp/ldd"); do
		add "$lib" "$lib"
	done
}

while [ $# -gt 0 ]; do
	case $1 in
	--fetch) fetch; echo "boot.sh: cache ready in $CACHE"; exit 0 ;;
	-v) verbose=1 ;;
	-a) [ $# -ge 2 ] || die "-a needs FILE:GUESTPATH"
	    add "${2%%:*}" "${2#*:}"; shift ;;
	-b) [ $# -ge 2 ] || die "-b needs BINARY"; add_binary "$2"; shift ;;
	-9) [ $# -ge 2 ] && [ -d "$2" ] || die "-9 needs a directory"
	    ninep=$(cd "$2" && pwd); shift ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || die "usage: boot.sh [-v] [-a FILE:GUESTPATH]... [-b BINARY]... [-9 HOSTDIR] PAYLOAD.sh [ARG...]"
[ -r "$1" ] || die "no payload $1"
fetch
cp "$1" "$run/payload/payload.sh"
shift
# Arguments are word-split in the guest; keep them simple.
echo "$*" >"$run/payload/args"

qemu_9p=
if [ -n "$ninep" ]; then
	touch "$run/payload/ninep"
	qemu_9p="-virtfs local,path=$ninep,mount_tag=host,security_model=none,id=host"
fi
(cd "$run" && find . | cpio -o -H newc --quiet) >"$tmp/run.cpio" ||
	die "cannot build the payload archive"
cat "$CACHE/base.cpio" "$tmp/run.cpio" >"$tmp/initrd"

# Software emulation (TCG) unless asked: on these VMs /dev/kvm may exist
# and still hang the guest at boot.
accel="-accel tcg"
if [ "${DPROBE_QEMU_KVM:-0}" = 1 ]; then
	accel="-accel kvm -accel tcg"
fi
: >"$tmp/out"
# shellcheck disable=SC2086  # $accel and $qemu_9p are option lists
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 $accel -machine pc -nodefaults \
	-m 512 -smp 1 -nographic -no-reboot \
	-kernel "$CACHE/vmlinux" -initrd "$tmp/initrd" \
	-append "console=ttyS0 quiet loglevel=1 panic=-1" \
	-serial "file:$tmp/console" -serial "file:$tmp/out" $qemu_9p \
	</dev/null >"$tmp/qemu.log" 2>&1
qrc=$?
[ $verbose = 1 ] && cat "$tmp/console" "$tmp/qemu.log" >&2

# The payload's output is everything before "\n" MARK.
pos=$(LC_ALL=C grep -abo "$MARK [0-9]*" "$tmp/out" | tail -1)
if [ -z "$pos" ]; then
	cat "$tmp/out"
	if [ $qrc = 124 ] || [ $qrc = 137 ]; then
		echo "boot.sh: qemu killed after ${TIMEOUT}s" >&2
		exit 124
	fi
	echo "boot.sh: the guest stopped before the payload finished" \
	     "(qemu exit $qrc); its console:" >&2
	tail -20 "$tmp/console" "$tmp/qemu.log" >&2
	exit 125
fi
off=${pos%%:*}
head -c $((off - 1)) "$tmp/out"
exit "${pos##* }"
