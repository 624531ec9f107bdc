#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installs what building the appliance images (images/build.sh) needs on the
# host (Debian 12 or later): mmdebstrap for the root filesystem, squashfs-tools,
# GRUB (BIOS and UEFI) with xorriso and mtools for the ISO, Packer and QEMU for
# the disk image, qemu-img for the OVA, xmllint to check the OVF. Only what is
# missing is installed, so it is cheap to run every time (`make image` does).
#
# Usage: images/deps.sh   (as root)
set -euo pipefail

# command or file -> Debian package that provides it
declare -A needed=(
	[mmdebstrap]=mmdebstrap
	[mksquashfs]=squashfs-tools
	[xorriso]=xorriso
	[grub-mkrescue]=grub-common
	[/usr/lib/grub/i386-pc/modinfo.sh]=grub-pc-bin
	[/usr/lib/grub/x86_64-efi/modinfo.sh]=grub-efi-amd64-bin
	[mformat]=mtools
	[packer]=packer
	[qemu-system-x86_64]=qemu-system-x86
	[qemu-img]=qemu-utils
	[xmllint]=libxml2-utils
	[/usr/share/OVMF/OVMF_CODE_4M.fd]=ovmf
	[/usr/share/keyrings/debian-archive-keyring.gpg]=debian-archive-keyring
	# The acceptance tests (tests/vm/image): SSH into the guest, read the image offline.
	[ssh]=openssh-client
	[sfdisk]=fdisk
	[debugfs]=e2fsprogs
)

missing=()
for need in "${!needed[@]}"; do
	if [[ $need == /* ]]; then
		[[ -e $need ]] || missing+=("${needed[$need]}")
	else
		command -v "$need" >/dev/null 2>&1 || missing+=("${needed[$need]}")
	fi
done

if ((${#missing[@]})); then
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	echo "images/deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" ||
		{ apt-get -q update && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"; }
fi
