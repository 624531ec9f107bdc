#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Proves on a truly clean Debian 12 root that the project installs what it
# needs itself: a minimal bookworm (mmdebstrap --variant=minbase: Debian's
# priority "required" packages and apt, what the dependency audit calls the
# base system) with nothing added but this host's Go and Node.js toolchains
# (README asks for them on the PATH), CA certificates (with the host's own)
# and a clone of this repository, then, inside it, the dependency installer
# and `make check` (lint, unit with the dependency audit, api).
#
#   tests/deps/clean-root.sh [DIR]     (as root; default DIR /var/tmp/fulcrum-clean-root)
#
# DIR is made anew (what a run leaves there is removed first). The clone is of
# HEAD: commit what you want proven. Output goes to DIR.log as well; the
# table of make check's tiers ends it. Takes 15-25 minutes cold (downloads:
# Debian packages, PyPI, npm, Go modules).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readonly REPO
# shellcheck source=appliance/dev/rootlib.sh
. "$REPO/appliance/dev/rootlib.sh"
readonly ROOT=${1:-/var/tmp/fulcrum-clean-root}
readonly MIRROR=${FULCRUM_TEST_MIRROR:-http://deb.debian.org/debian}

log() { echo "clean-root: $*" >&2; }

cleanup() {
	root_processes "$ROOT" | xargs -r kill -KILL 2>/dev/null || true
	unmount_below "$ROOT"
}

bootstrap() {
	log "mmdebstrap --variant=minbase bookworm $ROOT"
	# ca-certificates: the toolchains' registries (PyPI, npm, the Go proxy) are HTTPS.
	mmdebstrap --variant=minbase --include=ca-certificates bookworm "$ROOT" \
		"deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
		"deb http://deb.debian.org/debian-security bookworm-security main"
	# The host's own certificate authorities (a site's TLS proxy, say): what this machine
	# trusts, the root must too, or the registries above are unreachable from it.
	if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
		cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
		chroot "$ROOT" update-ca-certificates >/dev/null
	fi
}

copy_toolchains() {
	local go node
	go=$(dirname "$(dirname "$(readlink -f "$(command -v go || echo /usr/local/go/bin/go)")")")
	node=$(readlink -f "$(command -v node)")
	log "toolchains from this host: Go $("$go/bin/go" env GOVERSION) ($go), Node.js $(node --version) ($node)"
	mkdir -p "$ROOT/usr/local/go"
	cp -a "$go/." "$ROOT/usr/local/go/"
	ln -sf /usr/local/go/bin/go /usr/local/go/bin/gofmt "$ROOT/usr/local/bin/"
	cp -a "$node" "$ROOT/usr/local/bin/node"
	mkdir -p "$ROOT/usr/local/lib/node_modules"
	cp -a "$(dirname "$node")/../lib/node_modules/npm" "$ROOT/usr/local/lib/node_modules/"
	ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
	ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
}

clone() {
	log "git clone $REPO (HEAD $(git -C "$REPO" rev-parse --short HEAD))"
	git clone -q "$REPO" "$ROOT/work/fulcrum"
}

mount_root() {
	mount -t proc proc "$ROOT/proc"
	mount --rbind /sys "$ROOT/sys"
	mount --make-rslave "$ROOT/sys"
	mount --rbind /dev "$ROOT/dev"
	mount --make-rslave "$ROOT/dev"
	mount -t tmpfs -o mode=0755 tmpfs "$ROOT/run"
	mount -t tmpfs -o mode=1777 tmpfs "$ROOT/tmp"
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
}

# Runs a command with the root as /, in a mount namespace of its own where the root is a
# mount pivoted to, not a chroot: the kernel refuses a chrooted process new user namespaces
# (the tests' nft checks), and `ip netns exec` needs / to be a mount it can make a slave.
in_root() {
	unshare --mount --propagation private -- /bin/sh -c '
		set -e
		mount --rbind "$1" "$1"
		cd "$1"
		mkdir -p .host
		pivot_root . .host
		umount -l /.host
		rmdir /.host
		shift
		exec "$@"' in_root "$ROOT" "$@"
}

main() {
	((EUID == 0)) || { log "run as root (mmdebstrap, mounts, namespaces)"; exit 1; }
	command -v mmdebstrap >/dev/null || { log "mmdebstrap is missing: make deps-image"; exit 1; }
	exec > >(tee "$ROOT.log") 2>&1
	cleanup
	rm -rf "$ROOT"
	trap cleanup EXIT
	local start=$SECONDS
	bootstrap
	copy_toolchains
	clone
	mount_root
	log "in the root: appliance/dev/deps.sh demo test image, then make check"
	# Node.js trusts only its own copy of the public authorities unless told (a host does it
	# in its npmrc): the root's store, which has the host's own, is added to it.
	in_root /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
		bash -c 'cd /work/fulcrum && appliance/dev/deps.sh demo test image && make check'
	log "passed in $((SECONDS - start)) s"
}

main "$@"
