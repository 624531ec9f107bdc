# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Sourced by the scripts that build root filesystems and run things chrooted in them
# (images/build.sh, tests/packaging/test_debs.sh, tests/vm/build-rootfs.sh,
# tests/deps/clean-root.sh).

# unmount_below DIR: unmounts whatever is mounted below DIR, deepest first, so that removing
# DIR cannot reach into /proc, /dev or a package cache. DIR must be a physical path: it is
# compared with /proc/mounts.
unmount_below() {
	local dir=$1 mnt
	awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r mnt; do umount -l "$mnt" || true; done
}

# root_processes ROOT: the PIDs of the processes running chrooted in ROOT
root_processes() {
	local link pid
	for link in /proc/[0-9]*/root; do
		pid=${link#/proc/} pid=${pid%/root}
		[[ $(readlink "$link" 2>/dev/null) != "$1" ]] || echo "$pid"
	done
}
