#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the guest for the QEMU test tier: a Debian trixie root filesystem as a
# raw ext4 image, plus the kernel and initrd taken out of it so that QEMU can
# boot them directly (-kernel/-initrd, no bootloader).
#
# The result is cached in tests/vm/.cache/rootfs-<hash>/, where <hash> is the
# hash of this script: whatever defines the image (package list, initramfs
# settings, the in-image init) lives here, so editing this file is what
# triggers a rebuild. A build is assembled in a temporary folder and renamed
# into place only once complete (and stamped), so a half-built cache is never
# used. Downloaded packages are kept in tests/vm/.cache/debs/ across rebuilds.
#
# Prints the cache folder on stdout (last line); progress goes to stderr, the
# tools' own output to tests/vm/.cache/build.log (its tail is shown on error).
# Runs unattended as root. Usage: build-rootfs.sh [--force]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
readonly CACHE=$HERE/.cache
readonly MIRROR=${FULCRUM_VM_MIRROR:-http://deb.debian.org/debian}
readonly SUITE=trixie
readonly BUILD_LOG=$CACHE/build.log

# Installed by debootstrap. The kernel is installed afterwards, once the
# initramfs settings are in place, so its initrd is generated only once.
readonly PACKAGES=(
	ipvsadm keepalived haproxy
	iproute2 procps curl python3 busybox kmod iputils-ping
	nftables socat apache2-utils nginx httperf
	initramfs-tools zstd ca-certificates
)
# Installed with the kernel: what building the ip_vs_dllc module in the guest
# takes (DKMS, the headers of the guest's kernel, gcc, sparse for `make check`).
# checkpatch.pl (`make style`) comes out of the kernel's source package, see
# install_checkpatch.
readonly MODULE_BUILD_PACKAGES=(linux-headers-amd64 dkms sparse xz-utils)
# Enough to mount the root disk: the initrd carries only these (and their
# dependencies). The 9p modules are loaded from the root filesystem.
readonly INITRD_MODULES=(virtio_pci virtio_blk ext4)

log() { echo "vm/build-rootfs: $*" >&2; }

cache_key() {
	sha256sum "${BASH_SOURCE[0]}" | cut -c1-16
}

# The first program the guest kernel runs. Deliberately tiny: it mounts the
# 9p shares and hands over to tests/vm/guest/init.sh, read from the host, so
# that editing the runner or the tests needs no image rebuild.
write_guest_init() {
	local root=$1
	cat >"$root/fulcrum-test-init" <<-'EOF'
	#!/bin/sh
	# Installed by tests/vm/build-rootfs.sh. Hands over to the repo's runner.
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
	halt() { echo "fulcrum-test-init: $*"; echo o >/proc/sysrq-trigger; sleep 60; }
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	modprobe 9pnet_virtio && modprobe 9p || halt "cannot load the 9p modules"
	opts=trans=virtio,version=9p2000.L,msize=262144
	mkdir -p /src /results
	mount -t 9p -o "$opts,ro" fulcrum_src /src || halt "cannot mount fulcrum_src"
	mount -t 9p -o "$opts" fulcrum_results /results || halt "cannot mount fulcrum_results"
	exec /bin/bash /src/tests/vm/guest/init.sh
	halt "cannot start /src/tests/vm/guest/init.sh"
	EOF
	chmod 0755 "$root/fulcrum-test-init"
}

# debootstrap 1.0.128 (bookworm) knows trixie; older ones get sid's script,
# which is the one trixie's is a link to anyway.
debootstrap_script() {
	local scripts=/usr/share/debootstrap/scripts
	[[ -e $scripts/$SUITE ]] || echo "$scripts/sid"
}

bootstrap() {
	local root=$1
	local include
	include=$(IFS=,; echo "${PACKAGES[*]}")
	mkdir -p "$CACHE/debs"
	log "debootstrap $SUITE from $MIRROR"
	# shellcheck disable=SC2046 # the optional script argument is meant to vanish
	debootstrap --variant=minbase --components=main --include="$include" \
		--cache-dir="$CACHE/debs" \
		"$SUITE" "$root" "$MIRROR" $(debootstrap_script) >>"$BUILD_LOG" 2>&1
}

configure_initramfs() {
	local root=$1
	mkdir -p "$root/etc/initramfs-tools/conf.d"
	echo MODULES=list >"$root/etc/initramfs-tools/conf.d/fulcrum-vm"
	echo COMPRESS=zstd >>"$root/etc/initramfs-tools/conf.d/fulcrum-vm"
	printf '%s\n' "${INITRD_MODULES[@]}" >>"$root/etc/initramfs-tools/modules"
}

# Runs apt-get in the new root with the package cache shared with debootstrap
# (a bind mount: the downloaded packages stay out of the image).
chroot_apt_install() {
	local root=$1
	shift
	mount -t proc proc "$root/proc"
	mount --bind "$CACHE/debs" "$root/var/cache/apt/archives"
	chroot "$root" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends "$@" >>"$BUILD_LOG" 2>&1
	umount "$root/var/cache/apt/archives" "$root/proc"
}

# install_checkpatch ROOT: scripts/checkpatch.pl and the two files it reads
# (spelling.txt, const_structs.checkpatch) from linux-source-<series> of the
# same version as the installed kernel, into /usr/local/share/checkpatch, with
# /usr/local/bin/checkpatch.pl linked to it. Debian packages checkpatch
# nowhere else; the 150 MB package stays in the package cache, not the image,
# and tar stops reading once it has the three files.
install_checkpatch() {
	local root=$1
	local release series version deb
	release=$(find "$root/boot" -name 'vmlinuz-*' -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V | tail -1)
	series=$(cut -d. -f1,2 <<<"$release")
	# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
	version=$(chroot "$root" dpkg-query -W -f '${Version}' "linux-image-$release")
	log "checkpatch.pl from linux-source-$series $version"
	chroot_apt_install "$root" --download-only "linux-source-$series=$version"
	deb=$CACHE/debs/linux-source-${series}_${version}_all.deb
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/src/linux-source-$series.tar.xz" >"$root/tmp/linux-source.tar.xz"
	mkdir -p "$root/usr/local/share/checkpatch"
	chroot "$root" tar -xJf /tmp/linux-source.tar.xz -C /usr/local/share/checkpatch \
		--strip-components=2 --occurrence=1 "linux-source-$series/scripts/checkpatch.pl" \
		"linux-source-$series/scripts/spelling.txt" "linux-source-$series/scripts/const_structs.checkpatch"
	rm "$root/tmp/linux-source.tar.xz"
	ln -s ../share/checkpatch/checkpatch.pl "$root/usr/local/bin/checkpatch.pl"
}

configure_guest() {
	local root=$1
	echo fulcrum-vm >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 fulcrum-vm\n' >"$root/etc/hosts"
	: >"$root/etc/resolv.conf"
	write_guest_init "$root"
	# Nothing in the guest reads these; dropping them shrinks the image.
	rm -rf "$root"/usr/share/{doc,man,info,locale}/* "$root"/var/lib/apt/lists/* \
		"$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
}

extract_boot_files() {
	local root=$1 out=$2
	local kernel initrd
	kernel=$(find "$root/boot" -name 'vmlinuz-*' | sort -V | tail -1)
	initrd=$(find "$root/boot" -name 'initrd.img-*' | sort -V | tail -1)
	[[ -f $kernel && -f $initrd ]] || { log "no kernel or initrd in $root/boot"; exit 1; }
	cp "$kernel" "$out/vmlinuz"
	cp "$initrd" "$out/initrd.img"
	basename "$kernel" | sed 's/^vmlinuz-//' >"$out/kernel-release"
}

make_disk_image() {
	local root=$1 image=$2
	local used_mib
	used_mib=$(du -sm "$root" | cut -f1)
	# Headroom for what tests write: the guest runs on a snapshot anyway.
	log "mkfs.ext4 (${used_mib} MiB of files)"
	mkfs.ext4 -q -F -L fulcrum-root -d "$root" "$image" "$((used_mib * 3 / 2 + 512))M" >>"$BUILD_LOG" 2>&1
}

# Unmounts whatever an interrupted build left mounted below $1, so that
# removing the folder cannot reach into /proc or the package cache.
unmount_below() {
	local dir=$1 mnt
	awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r mnt; do umount -l "$mnt" || true; done
}

build_failed() {
	local rc=$1 work=$2
	unmount_below "$work"
	((rc == 0)) && return
	log "FAILED (status $rc); last lines of $BUILD_LOG:"
	tail -n 30 "$BUILD_LOG" >&2
}

build() {
	local out=$1
	local work=$out.partial
	unmount_below "$work"
	rm -rf "$work"
	mkdir -p "$work/root"
	trap 'build_failed $? "'"$work"'"' EXIT

	bootstrap "$work/root"
	configure_initramfs "$work/root"
	log "installing the kernel"
	chroot_apt_install "$work/root" linux-image-amd64 "${MODULE_BUILD_PACKAGES[@]}"
	install_checkpatch "$work/root"
	# DKMS signs what it builds; its key made here, not in each guest boot
	# (RSA key generation takes long under TCG).
	chroot "$work/root" dkms generate_mok >>"$BUILD_LOG" 2>&1
	configure_guest "$work/root"
	extract_boot_files "$work/root" "$work"
	make_disk_image "$work/root" "$work/rootfs.ext4"
	rm -rf "$work/root"

	date -u +%FT%TZ >"$work/.complete"
	mv "$work" "$out"
}

prune_old_builds() {
	local keep=$1 dir
	for dir in "$CACHE"/rootfs-*; do
		[[ -d $dir && $dir != "$keep" ]] || continue
		log "removing stale $dir"
		unmount_below "$dir"
		rm -rf "$dir"
	done
}

main() {
	[[ $(id -u) -eq 0 ]] || { log "must run as root (debootstrap, chroot)"; exit 1; }
	mkdir -p "$CACHE"
	local out
	out=$CACHE/rootfs-$(cache_key)
	# Two runs at once would build into the same folder.
	exec 9>"$CACHE/.lock"
	flock 9

	if [[ ${1:-} == --force ]]; then
		rm -rf "$out"
	fi
	if [[ -e $out/.complete ]]; then
		log "cached: $out"
	else
		local start=$SECONDS
		log "building $out (about 1-2 min; details in $BUILD_LOG)"
		: >"$BUILD_LOG"
		build "$out"
		log "built in $((SECONDS - start)) s"
	fi
	prune_old_builds "$out"
	echo "$out"
}

main "$@"
