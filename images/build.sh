#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the Fulcrum appliance images (`make image` runs it, as root):
#
#   rootfs  mmdebstrap of Debian trixie, then scripts/provision.sh inside the
#           chroot with the Fulcrum .debs (the one provisioning of every image)
#   iso     squashfs of the rootfs + its kernel and initrd + GRUB for BIOS and
#           UEFI (grub-mkrescue): a live system whose menu installs Fulcrum
#   qcow2   Packer (QEMU, TCG) boots the ISO's kernel with fulcrum.install=/dev/vda:
#           the ISO's installer writes the disk unattended and powers off
#   ova     scripts/make-ova.sh converts the qcow2's installed disk:
#           streamOptimized VMDK + OVF + manifest in one tar
#   check   boots the ISO (BIOS, its own GRUB) to the installer's menu, and
#           the qcow2 (snapshot) to the first-boot setup's first question or a
#           login prompt, reading their serial consoles
#
# Usage: images/build.sh [--force] [STAGE...]     (default: every stage)
# A stage is skipped when its output is there and was built from the same
# inputs (a hash of them is stored next to it); asking for a stage builds what
# it needs first. --force rebuilds the stages asked for.
#
# Inputs: the .debs in $FULCRUM_DEB_OUT (default images/.build/debs; with none,
# the image holds the base system only, with a warning). Outputs, in
# images/.build/out/: fulcrum-<version>.iso, .qcow2, .ova. Work files, logs and
# the package cache are in images/.build/ (see images/README.md).
# Variables: FULCRUM_VERSION (default: the fulcrum-appliance .deb's version,
# else `git describe`), FULCRUM_IMAGE_MIRROR, FULCRUM_IMAGE_SECURITY_MIRROR
# (empty: no security suite), FULCRUM_IMAGE_BOOT_TIMEOUT (seconds, check),
# FULCRUM_IMAGE_BOOT_PATTERN (what the qcow2's console must show, a regex).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
REPO=$(cd "$HERE/.." && pwd)
readonly REPO
# shellcheck source=appliance/dev/rootlib.sh
. "$REPO/appliance/dev/rootlib.sh"
# Physical (.ci/run may make .build a link to a machine-wide cache): unmount_below
# compares these paths with /proc/mounts.
BUILD=$(mkdir -p "$HERE/.build" && cd "$HERE/.build" && pwd -P)
readonly BUILD
readonly OUT=$BUILD/out
readonly LOGS=$BUILD/logs
readonly PKG_CACHE=$BUILD/cache/debs
readonly DEBS=${FULCRUM_DEB_OUT:-$BUILD/debs}
readonly SUITE=trixie
readonly MIRROR=${FULCRUM_IMAGE_MIRROR:-http://deb.debian.org/debian}
readonly SECURITY_MIRROR=${FULCRUM_IMAGE_SECURITY_MIRROR-http://deb.debian.org/debian-security}
readonly BOOT_TIMEOUT=${FULCRUM_IMAGE_BOOT_TIMEOUT:-600}
# The serial console line that tells the installation went through (printed
# last by fulcrum-install), and those that tell an installed image is up.
readonly INSTALL_OK='fulcrum-install: SUCCESS'
readonly BOOT_OK_PATTERN=${FULCRUM_IMAGE_BOOT_PATTERN:-'Management interface \[|login: '}
readonly ISO_OK='Install Fulcrum on a disk'
readonly STAGES=(rootfs iso qcow2 ova check)

declare -A forced=() done_stage=()
declare -a timings=()

log() { echo "images/build: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# show_log_tail FILE: the end of a tool's log, after a failure.
show_log_tail() {
	log "last lines of $1:"
	tail -n 40 "$1" >&2 || true
}

hash_of() { sha256sum | cut -c1-16; }

# hash_files PATH...: one hash of the files' names and contents (names from each PATH's own
# name down: the same files in another clone give the same hash).
hash_files() {
	local path
	for path in "$@"; do
		if [[ -d $path ]]; then
			(cd "$path" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum) |
				sed "s|  \./|  ${path##*/}/|"
		else
			echo "$(sha256sum <"$path" | cut -d' ' -f1)  ${path##*/}"
		fi
	done | hash_of
}

# stamp_ok STAGE STAMP KEY: the stage's output was built from these inputs
# (and no --force asked to rebuild it).
stamp_ok() { [[ -z ${forced[$1]:-} && -e $2 && $(cat "$2") == "$3" ]]; }

image_version() {
	local deb
	if [[ -n ${FULCRUM_VERSION:-} ]]; then
		echo "$FULCRUM_VERSION"
	elif deb=$(compgen -G "$DEBS/fulcrum-appliance_*.deb" | head -n 1) && [[ -n $deb ]]; then
		dpkg-deb -f "$deb" Version
	else
		git -C "$REPO" describe --tags --always --dirty 2>/dev/null || echo 0.0.0
	fi
}

# run_stage NAME: runs stage_NAME once per build.sh run, timed.
run_stage() {
	local name=$1 start=$SECONDS
	[[ -z ${done_stage[$name]:-} ]] || return 0
	"stage_$name"
	done_stage[$name]=1
	timings+=("$(printf '%-7s %5d s' "$name" $((SECONDS - start)))")
	log "$name: $((SECONDS - start)) s"
}

## rootfs ####################################################################

readonly ROOTFS=$BUILD/rootfs

rootfs_key() {
	{
		declare -f build_rootfs mmdebstrap_args
		echo "$SUITE $MIRROR $SECURITY_MIRROR"
		hash_files "$HERE/scripts/provision.sh" "$HERE/scripts/fulcrum-install" "$HERE/files"
		if compgen -G "$DEBS/*.deb" >/dev/null; then hash_files "$DEBS"/*.deb; fi
	} | hash_of
}

# mmdebstrap_args STAGING: sets the caller's array args. "$1" in a hook is
# the chroot, expanded by mmdebstrap's hook shell, not here.
# shellcheck disable=SC2016
mmdebstrap_args() {
	local staging=$1
	local hook_dir=/tmp/fulcrum-provision
	local provision="chroot \"\$1\" /bin/bash $hook_dir/provision.sh"
	args=(
		--mode=root --variant=apt --format=directory --architectures=amd64 --components=main
		# No manuals, translations or documentation (copyright files stay):
		# dpkg keeps excluding them on the appliance (/etc/dpkg/dpkg.cfg.d).
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias'
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
		# The package cache lives outside, kept across builds.
		--skip=essential/unlink
		--setup-hook='mkdir -p "$1/var/cache/apt/archives"'
		--setup-hook="sync-in $PKG_CACHE /var/cache/apt/archives/"
		--customize-hook="mkdir -p \"\$1$hook_dir\""
		--customize-hook="sync-in $staging $hook_dir"
		--customize-hook="$provision install $hook_dir"
		--customize-hook='chroot "$1" apt-get autoclean -q'
		--customize-hook="sync-out /var/cache/apt/archives $PKG_CACHE"
		--customize-hook="$provision clean"
		"$SUITE" "$ROOTFS.partial"
		"deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main"
	)
	if [[ -n $SECURITY_MIRROR ]]; then args+=("deb $SECURITY_MIRROR $SUITE-security main"); fi
}

# The folder copied into the chroot: the provisioning script, the installer,
# the files laid onto / and the Fulcrum packages.
stage_provision_dir() {
	local staging=$1
	rm -rf "$staging"
	mkdir -p "$staging/debs"
	cp "$HERE/scripts/provision.sh" "$HERE/scripts/fulcrum-install" "$staging/"
	cp -R "$HERE/files" "$staging/files"
	if compgen -G "$DEBS/*.deb" >/dev/null; then
		cp "$DEBS"/*.deb "$staging/debs/"
		log "Fulcrum packages from $DEBS: $(cd "$DEBS" && echo *.deb)"
	else
		log "WARNING: no .deb in $DEBS (appliance/debian/build.sh makes them): base system only"
	fi
}

build_rootfs() {
	local staging=$BUILD/provision args=()
	stage_provision_dir "$staging"
	mmdebstrap_args "$staging"
	unmount_below "$ROOTFS.partial"
	rm -rf "$ROOTFS.partial"
	mkdir -p "$PKG_CACHE"
	log "mmdebstrap $SUITE + provision.sh (log: $LOGS/rootfs.log)"
	if ! mmdebstrap "${args[@]}" >"$LOGS/rootfs.log" 2>&1; then
		unmount_below "$ROOTFS.partial"
		show_log_tail "$LOGS/rootfs.log"
		die "the root filesystem build failed"
	fi
	grep -E '^provision: ' "$LOGS/rootfs.log" >&2 || true
	unmount_below "$ROOTFS"
	rm -rf "$ROOTFS" "$staging"
	mv "$ROOTFS.partial" "$ROOTFS"
}

stage_rootfs() {
	local key
	key=$(rootfs_key)
	if stamp_ok rootfs "$BUILD/rootfs.stamp" "$key" && [[ -d $ROOTFS ]]; then
		log "rootfs: up to date ($ROOTFS)"
		return
	fi
	rm -f "$BUILD/rootfs.stamp"
	build_rootfs
	echo "$key" >"$BUILD/rootfs.stamp"
	log "rootfs: $(du -sh "$ROOTFS" | cut -f1) in $ROOTFS"
}

## iso #######################################################################

readonly ISO_TREE=$BUILD/iso

iso_path() { echo "$OUT/fulcrum-$(image_version).iso"; }

iso_key() {
	{
		cat "$BUILD/rootfs.stamp"
		declare -f build_iso
		cat "$HERE/iso/grub.cfg"
	} | hash_of
}

# The kernel and initrd of the rootfs (the newest, if several).
rootfs_boot_file() {
	find "$ROOTFS/boot" -maxdepth 1 -name "$1-*" | sort -V | tail -n 1
}

build_iso() {
	local iso=$1 kernel initrd
	kernel=$(rootfs_boot_file vmlinuz)
	initrd=$(rootfs_boot_file initrd.img)
	[[ -n $kernel && -n $initrd ]] || die "no kernel or initrd in $ROOTFS/boot"
	rm -rf "$ISO_TREE"
	mkdir -p "$ISO_TREE/live" "$ISO_TREE/boot/grub"
	cp "$kernel" "$ISO_TREE/live/vmlinuz"
	cp "$initrd" "$ISO_TREE/live/initrd.img"
	sed "s/@VERSION@/$(image_version)/g" "$HERE/iso/grub.cfg" >"$ISO_TREE/boot/grub/grub.cfg"
	log "mksquashfs (zstd; log: $LOGS/iso.log)"
	local start=$SECONDS
	# zstd level 15: on two cores 68 s and 420 MiB for this rootfs, where 19 took 191 s for
	# 394 MiB (2026-11-28): the ISO is built on every change, and it unpacks as fast.
	mksquashfs "$ROOTFS" "$ISO_TREE/live/filesystem.squashfs" -noappend -comp zstd \
		-Xcompression-level 15 -b 1M -no-progress >"$LOGS/iso.log" 2>&1 ||
		{ show_log_tail "$LOGS/iso.log"; die "mksquashfs failed"; }
	log "grub-mkrescue (BIOS + UEFI; mksquashfs took $((SECONDS - start)) s)"
	rm -f "$iso"
	grub-mkrescue -o "$iso.partial" "$ISO_TREE" -- -volid FULCRUM >>"$LOGS/iso.log" 2>&1 ||
		{ show_log_tail "$LOGS/iso.log"; die "grub-mkrescue failed"; }
	publish "$iso.partial" iso
}

stage_iso() {
	run_stage rootfs
	local key iso
	key=$(iso_key)
	iso=$(iso_path)
	if stamp_ok iso "$BUILD/iso.stamp" "$key" && [[ -f $iso ]]; then
		log "iso: up to date ($iso)"
		return
	fi
	rm -f "$BUILD/iso.stamp"
	build_iso "$iso"
	echo "$key" >"$BUILD/iso.stamp"
	log "iso: $(du -h "$iso" | cut -f1) $iso (squashfs $(du -h "$ISO_TREE/live/filesystem.squashfs" | cut -f1))"
}

# publish FILE EXT: moves FILE to out/fulcrum-<version>.EXT, replacing the
# outputs of other versions (one set of images in out/).
publish() {
	local file=$1 ext=$2 final
	final=$OUT/fulcrum-$(image_version).$ext
	find "$OUT" -maxdepth 1 -name "fulcrum-*.$ext" ! -path "$final" -delete
	mv "$file" "$final"
}

## qcow2 (Packer) and ova ####################################################

packer_key() {
	local target=$1
	{
		cat "$BUILD/iso.stamp"
		declare -f packer_build
		cat "$HERE/packer/fulcrum.pkr.hcl" "$HERE/packer/vars/$target.pkrvars.hcl"
	} | hash_of
}

# packer_build TARGET: installs the ISO onto a fresh disk with Packer; leaves
# $BUILD/packer/TARGET/<vm_name>.qcow2 and the guest's serial console log.
packer_build() {
	local target=$1 iso dir serial
	iso=$(iso_path)
	dir=$BUILD/packer/$target
	serial=$LOGS/install-$target.serial.log
	rm -rf "$dir"
	mkdir -p "$BUILD/packer"
	: >"$serial"
	log "packer: installing onto a $target disk under TCG (log: $LOGS/packer-$target.log, console: $serial)"
	if ! (cd "$HERE/packer" && CHECKPOINT_DISABLE=1 PACKER_CACHE_DIR=$BUILD/packer/cache \
		PACKER_LOG=1 PACKER_LOG_PATH=$LOGS/packer-$target.log \
		packer build -color=false -var-file="vars/$target.pkrvars.hcl" \
			-var "iso_path=$iso" -var "iso_checksum=sha256:$(sha256sum "$iso" | cut -d' ' -f1)" \
			-var "kernel=$ISO_TREE/live/vmlinuz" -var "initrd=$ISO_TREE/live/initrd.img" \
			-var "output_directory=$dir" -var "serial_log=$serial" \
			fulcrum.pkr.hcl >"$LOGS/packer-$target.out" 2>&1); then
		show_log_tail "$LOGS/packer-$target.out"
		die "packer failed"
	fi
	if ! grep -q "$INSTALL_OK" "$serial"; then
		show_log_tail "$serial"
		die "the unattended installation failed (the guest powered off without $INSTALL_OK)"
	fi
	grep -a "$INSTALL_OK" "$serial" | tail -n 1 | tr -d '\r' >&2
}

# The disk Packer made for TARGET, which is named in its var file.
packer_disk() {
	local target=$1 name
	name=$(sed -nE 's/^vm_name[[:space:]]*=[[:space:]]*"([^"]+)".*/\1/p' "$HERE/packer/vars/$target.pkrvars.hcl")
	echo "$BUILD/packer/$target/$name"
}

# ensure_packer_disk TARGET: Packer's disk for TARGET, built if out of date.
ensure_packer_disk() {
	local target=$1 key
	run_stage iso
	key=$(packer_key "$target")
	if stamp_ok "$target" "$BUILD/packer-$target.stamp" "$key" && [[ -f $(packer_disk "$target") ]]; then
		log "$target: Packer disk up to date"
		return
	fi
	rm -f "$BUILD/packer-$target.stamp"
	packer_build "$target"
	[[ -f $(packer_disk "$target") ]] || die "packer left no $(packer_disk "$target")"
	echo "$key" >"$BUILD/packer-$target.stamp"
}

stage_qcow2() {
	ensure_packer_disk qcow2
	local qcow2
	qcow2=$OUT/fulcrum-$(image_version).qcow2
	cp --reflink=auto "$(packer_disk qcow2)" "$qcow2.partial"
	publish "$qcow2.partial" qcow2
	log "qcow2: $(du -h "$qcow2" | cut -f1) $qcow2 ($(qemu-img info --output=json "$qcow2" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["virtual-size"] >> 30)') GiB virtual)"
}

ova_key() {
	{
		cat "$BUILD/packer-qcow2.stamp"
		cat "$HERE/scripts/make-ova.sh"
	} | hash_of
}

# The OVA's disk is the qcow2's: one installation, converted (make-ova.sh).
stage_ova() {
	ensure_packer_disk qcow2
	local ova key
	ova=$OUT/fulcrum-$(image_version).ova
	key=$(ova_key)
	if stamp_ok ova "$BUILD/ova.stamp" "$key" && [[ -f $ova ]]; then
		log "ova: up to date ($ova)"
		return
	fi
	rm -f "$BUILD/ova.stamp"
	"$HERE/scripts/make-ova.sh" "$(packer_disk qcow2)" "$ova.partial" "$(image_version)"
	publish "$ova.partial" ova
	echo "$key" >"$BUILD/ova.stamp"
	log "ova: $(du -h "$ova" | cut -f1) $ova"
}

## check #####################################################################

# boot_until NAME PATTERN BOOT.SH-ARGS...: boots an image until PATTERN shows
# on its serial console (logs/boot-NAME.serial.log), or fails the build.
boot_until() {
	local name=$1 pattern=$2 serial=$LOGS/boot-$1.serial.log start=$SECONDS
	shift 2
	log "check: booting the $name (TCG; console: $serial)"
	if ! "$HERE/scripts/boot.sh" "$@" --serial-log "$serial" --wait-for "$pattern" \
		--timeout "$BOOT_TIMEOUT" 2>"$LOGS/boot-$name.log"; then
		cat "$LOGS/boot-$name.log" >&2
		show_log_tail "$serial"
		die "the $name did not show '$pattern' on its serial console within $BOOT_TIMEOUT s"
	fi
	log "check: the $name shows '$(grep -aoE "$pattern" "$serial" | head -n 1)' after $((SECONDS - start)) s"
}

# Boots the ISO from its own boot loader (BIOS) to the installer's menu, and
# the qcow2 (untouched: -snapshot) to the first-boot setup or a login prompt.
stage_check() {
	run_stage qcow2
	boot_until iso "$ISO_OK" --iso "$(iso_path)"
	boot_until qcow2 "$BOOT_OK_PATTERN" --image "$OUT/fulcrum-$(image_version).qcow2" --snapshot
}

##############################################################################

main() {
	local stages=() stage force=0
	while (($#)); do
		case $1 in
		--force) force=1 ;;
		-h | --help) sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*)
			[[ " ${STAGES[*]} " == *" $1 "* ]] || die "unknown stage $1 (stages: ${STAGES[*]})"
			stages+=("$1")
			;;
		esac
		shift
	done
	((${#stages[@]})) || stages=("${STAGES[@]}")
	if ((force)); then for stage in "${stages[@]}"; do forced[$stage]=1; done; fi
	[[ $(id -u) == 0 ]] || die "must run as root (mmdebstrap, chroot, mounts)"
	mkdir -p "$OUT" "$LOGS"
	exec 9>"$BUILD/.lock"
	if ! flock -n 9; then
		log "waiting for another images/build.sh to finish"
		flock 9
	fi
	local start=$SECONDS
	for stage in "${stages[@]}"; do run_stage "$stage"; done
	log "done in $((SECONDS - start)) s:"
	printf '  %s\n' "${timings[@]}" >&2
}

main "$@"
