#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installs what the QEMU test tier needs on the host (Debian 12 or later).
# The caller has already run `apt-get update`; this script only installs what
# is missing, so it is cheap to run every time.
set -euo pipefail

# command -> Debian package that provides it
declare -A needed=(
	[debootstrap]=debootstrap
	[qemu-system-x86_64]=qemu-system-x86
	[mkfs.ext4]=e2fsprogs
	[timeout]=coreutils
	[sha256sum]=coreutils
	[gpgv]=gpgv
)

missing=()
for cmd in "${!needed[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${needed[$cmd]}")
done
# The trixie release is signed with keys that bookworm ships in this package.
[[ -e /usr/share/keyrings/debian-archive-keyring.gpg ]] || missing+=(debian-archive-keyring)

if ((${#missing[@]})); then
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	echo "vm/deps: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
