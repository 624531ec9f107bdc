#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the guest of the QEMU test tier from the appliance's own root
# filesystem: the one images/build.sh provisions (Debian trixie, its 6.12
# kernel, HAProxy 3.0, keepalived 2.3, ipvsadm, nginx, python3, and
# ip_vs_dllc built by DKMS from the Fulcrum packages), with the tools the
# guest tests use layered over it, as a raw ext4 image plus the kernel and
# initrd that QEMU boots directly (-kernel/-initrd, no bootloader). The guest
# tests therefore run on the kernel, daemons and module that ship.
#
#   images/.build/rootfs (read-only)
#        │ overlayfs: the test layer is written beside it, the rootfs untouched
#        ▼
#   apt-get install socat apache2-utils httperf busybox sparse   (in a chroot)
#   checkpatch.pl + its data, from linux-source-6.12 of the kernel's version
#   ip_vs_dllc, natively against the image's kernel headers:
#       kbuild C=2 (sparse) and checkpatch --strict, logs kept for test_dllc_build
#   /fulcrum-test-init
#        │ mkfs.ext4 -d
#        ▼
#   tests/vm/.cache/rootfs-<hash>/{rootfs.ext4,vmlinuz,initrd.img,kernel-release}
#
# <hash> is the hash of this script and of the rootfs's own stamp
# (images/.build/rootfs.stamp: its scripts and the .debs it was built from),
# so a new appliance build or an edit here rebuilds it. Built in *.partial,
# stamped .complete, then renamed: a half-built cache is never used; older
# builds are removed. Packages come through images/.build/cache/debs, the
# image build's own package cache.
#
# The rootfs must exist: tests/vm/run.sh builds it (appliance/debian/build.sh,
# images/build.sh rootfs) when it is missing.
#
# Prints the cache folder on stdout (last line); progress goes to stderr, the
# tools' output to tests/vm/.cache/build.log (its tail is shown on error).
# Runs unattended as root. Usage: build-rootfs.sh [--force]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
readonly HERE REPO
# shellcheck source=appliance/dev/rootlib.sh
. "$REPO/appliance/dev/rootlib.sh"
# Physical paths (.ci/run may make these links to a machine-wide cache): unmount_below
# compares them with /proc/mounts.
CACHE=$(mkdir -p "$HERE/.cache" && cd "$HERE/.cache" && pwd -P)
readonly CACHE
readonly BUILD_LOG=$CACHE/build.log
IMAGE_BUILD=$(mkdir -p "$REPO/images/.build" && cd "$REPO/images/.build" && pwd -P)
readonly IMAGE_BUILD
readonly ROOTFS=$IMAGE_BUILD/rootfs
readonly ROOTFS_STAMP=$IMAGE_BUILD/rootfs.stamp
readonly PKG_CACHE=$IMAGE_BUILD/cache/debs
readonly MIRROR=${FULCRUM_VM_MIRROR:-http://deb.debian.org/debian}
readonly MODULE_SRC=$REPO/appliance/kernel/ip_vs_dllc

# What the guest tests use beyond the appliance: real servers (socat), load
# (ab, httperf), busybox's small tools, sparse for the module's check.
readonly TEST_PACKAGES=(socat apache2-utils httperf busybox sparse xz-utils)
# Where the module's checks leave their logs in the guest (test_dllc_build).
readonly CHECKS_DIR=/var/lib/fulcrum-vm

log() { echo "vm/build-rootfs: $*" >&2; }

cache_key() {
	{
		sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1
		cat "$ROOTFS_STAMP"
	} | sha256sum | cut -c1-16
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

# in_root ROOT CMD...: CMD in a chroot of ROOT with /proc, /dev and the
# package cache (a bind mount: downloaded packages stay out of the image).
in_root() {
	local root=$1
	shift
	chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

mount_root() {
	local root=$1
	mount -t proc proc "$root/proc"
	mount --bind /dev "$root/dev"
	mkdir -p "$PKG_CACHE"
	mount --bind "$PKG_CACHE" "$root/var/cache/apt/archives"
}

# install_test_packages ROOT: from the mirror, with the host's resolver for the
# while (the appliance's resolv.conf is empty until its first boot).
install_test_packages() {
	local root=$1
	log "apt-get install ${TEST_PACKAGES[*]}"
	echo "deb $MIRROR trixie main" >"$root/etc/apt/sources.list.d/fulcrum-vm.list"
	cp --remove-destination /etc/resolv.conf "$root/etc/resolv.conf"
	in_root "$root" apt-get -q update >>"$BUILD_LOG" 2>&1
	in_root "$root" apt-get install -y -q --no-install-recommends "${TEST_PACKAGES[@]}" >>"$BUILD_LOG" 2>&1
}

kernel_release() {
	find "$1/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1
}

# install_checkpatch ROOT: scripts/checkpatch.pl and the two files it reads
# (spelling.txt, const_structs.checkpatch) from linux-source-<series> of the
# same version as the kernel, into /usr/local/share/checkpatch, with
# /usr/local/bin/checkpatch.pl linked to it. Debian packages checkpatch
# nowhere else; the 150 MB package stays in the package cache, not the image.
install_checkpatch() {
	local root=$1 release series version deb
	release=$(kernel_release "$root")
	series=$(cut -d. -f1,2 <<<"$release")
	# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
	version=$(in_root "$root" dpkg-query -W -f '${Version}' "linux-image-$release")
	log "checkpatch.pl from linux-source-$series $version"
	in_root "$root" apt-get install -y -q --no-install-recommends --download-only \
		"linux-source-$series=$version" >>"$BUILD_LOG" 2>&1
	deb=$PKG_CACHE/linux-source-${series}_${version}_all.deb
	mkdir -p "$root/usr/local/share/checkpatch"
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/src/linux-source-$series.tar.xz" >"$root/tmp/linux-source.tar.xz"
	# --occurrence=1: tar stops reading once it has the three files.
	in_root "$root" tar -xJf /tmp/linux-source.tar.xz -C /usr/local/share/checkpatch --strip-components=2 \
		--occurrence=1 "linux-source-$series/scripts/checkpatch.pl" "linux-source-$series/scripts/spelling.txt" \
		"linux-source-$series/scripts/const_structs.checkpatch"
	rm "$root/tmp/linux-source.tar.xz"
	ln -sf ../share/checkpatch/checkpatch.pl "$root/usr/local/bin/checkpatch.pl"
}

# check_module ROOT: the module's `make check` (kbuild with C=2: sparse on
# every source, and the compiler's warnings) and `make style` (checkpatch
# --strict) against the image's own kernel headers, natively in a chroot; the
# outputs and exit statuses go to $CHECKS_DIR for test_dllc_build, which
# judges them (a finding fails that test, not this build).
check_module() {
	local root=$1 release status target
	release=$(kernel_release "$root")
	mkdir -p "$root$CHECKS_DIR" "$root/tmp/ip_vs_dllc"
	cp -R "$MODULE_SRC/." "$root/tmp/ip_vs_dllc/"
	for target in check style; do
		status=0
		in_root "$root" make -C /tmp/ip_vs_dllc "$target" "KDIR=/lib/modules/$release/build" \
			>"$root$CHECKS_DIR/$target.log" 2>&1 || status=$?
		echo "$status" >"$root$CHECKS_DIR/$target.status"
		log "ip_vs_dllc make $target: exit status $status"
	done
	rm -rf "$root/tmp/ip_vs_dllc"
}

configure_guest() {
	local root=$1
	echo fulcrum-vm >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 fulcrum-vm\n' >"$root/etc/hosts"
	: >"$root/etc/resolv.conf"
	rm -f "$root/etc/apt/sources.list.d/fulcrum-vm.list"
	rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
	write_guest_init "$root"
}

extract_boot_files() {
	local root=$1 out=$2 release
	release=$(kernel_release "$root")
	[[ -f $root/boot/vmlinuz-$release && -f $root/boot/initrd.img-$release ]] ||
		{ log "no kernel or initrd for $release in $root/boot"; exit 1; }
	cp "$root/boot/vmlinuz-$release" "$out/vmlinuz"
	cp "$root/boot/initrd.img-$release" "$out/initrd.img"
	echo "$release" >"$out/kernel-release"
}

make_disk_image() {
	local root=$1 image=$2
	local used_mib
	used_mib=$(du -sm "$root" | cut -f1)
	# Headroom for what tests write: the guest runs on a snapshot anyway.
	log "mkfs.ext4 (${used_mib} MiB of files)"
	mkfs.ext4 -q -F -L fulcrum-root -d "$root" "$image" "$((used_mib * 3 / 2 + 512))M" >>"$BUILD_LOG" 2>&1
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
	local work=$out.partial root
	unmount_below "$work"
	rm -rf "$work"
	mkdir -p "$work/upper" "$work/overlay-work" "$work/root"
	root=$work/root
	trap 'build_failed $? "'"$work"'"' EXIT

	mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$work/upper,workdir=$work/overlay-work" "$root"
	mount_root "$root"
	install_test_packages "$root"
	install_checkpatch "$root"
	check_module "$root"
	umount "$root/var/cache/apt/archives" "$root/dev" "$root/proc"
	configure_guest "$root"
	extract_boot_files "$root" "$work"
	make_disk_image "$root" "$work/rootfs.ext4"
	umount "$root"
	rm -rf "$work/upper" "$work/overlay-work" "$work/root"

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
	[[ $(id -u) -eq 0 ]] || { log "must run as root (overlayfs, chroot)"; exit 1; }
	[[ -d $ROOTFS && -f $ROOTFS_STAMP ]] ||
		{ log "no appliance rootfs in $ROOTFS: images/build.sh rootfs builds it (after appliance/debian/build.sh)"; exit 1; }
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
		log "building $out from $ROOTFS (details in $BUILD_LOG)"
		: >"$BUILD_LOG"
		build "$out"
		log "built in $((SECONDS - start)) s"
	fi
	prune_old_builds "$out"
	echo "$out"
}

main "$@"
