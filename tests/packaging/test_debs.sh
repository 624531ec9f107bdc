#!/bin/bash
# Tests Fulcrum's Debian packages on Debian 13 trixie, for real:
#
#   appliance/debian/build.sh ──> images/.build/debs/*.deb ──> lintian (no errors)
#        │
#        ▼  mmdebstrap --variant=apt trixie (deb.debian.org), then in the root:
#   apt-get install /…/*.deb   (dependencies from the archive: PostgreSQL 17,
#        │                      HAProxy 3.0, keepalived, systemd, python3 3.13)
#        ▼  tests/packaging/in-root.sh, chrooted, in a network namespace of its own
#   files, users, units (systemd-analyze verify), no secret; PostgreSQL started,
#   fulcrum-api-init, migrate, gunicorn as in the unit, the console and the API
#   over HTTP, the CLI, an apply checked by trixie's haproxy and keepalived as
#   the user fulcrum; reinstall (upgrade path) keeps the secret; purge.
#
#   tests/packaging/test_debs.sh [--debs DIR] [--dkms] [--keep]
#     --debs DIR  test the packages in DIR instead of building them
#     --dkms      also install linux-headers-amd64 first and time DKMS building
#                 ip_vs_dllc while ip-vs-dllc-dkms installs (adds ~1 min)
#     --keep      keep the root (images/.build/packaging-root) after success
#
# Runs unattended as root; exits non-zero on any failure. Downloaded packages
# are kept in images/.build/cache/packaging-debs/ across runs. Progress goes
# to stderr, mmdebstrap's and apt's output to images/.build/packaging-test.log
# (its tail is shown on failure); a failed run leaves the root for a look.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
readonly HERE REPO
# shellcheck source=appliance/dev/rootlib.sh
. "$REPO/appliance/dev/rootlib.sh"
# Physical (.ci/run may make .build a link): unmount_below compares paths with /proc/mounts.
BUILD_DIR=$(mkdir -p "$REPO/images/.build" && cd "$REPO/images/.build" && pwd -P)
readonly BUILD_DIR
readonly CACHE=$BUILD_DIR/cache/packaging-debs
readonly ROOT=$BUILD_DIR/packaging-root
readonly LOG=$BUILD_DIR/packaging-test.log
readonly MIRROR=${FULCRUM_TEST_MIRROR:-http://deb.debian.org/debian}
readonly IN_ROOT_DEBS=/var/tmp/fulcrum-debs

log() { echo "packaging: $*" >&2; }
die() { log "$*"; exit 1; }

debs=""
with_dkms=0
keep=0

parse_args() {
	while (($#)); do
		case $1 in
		--debs) debs=$(cd "${2:?--debs needs a directory}" && pwd); shift ;;
		--dkms) with_dkms=1 ;;
		--keep) keep=1 ;;
		*) die "unknown argument: $1 (see the header of $0)" ;;
		esac
		shift
	done
}

ensure_tools() {
	command -v mmdebstrap >/dev/null && command -v lintian >/dev/null ||
		die "mmdebstrap or lintian is missing: run \`make deps-image\` (appliance/dev/deps.sh demo image)"
}

build_debs() {
	if [[ -n $debs ]]; then
		return
	fi
	debs=$BUILD_DIR/debs
	FULCRUM_DEB_OUT=$debs "$REPO/appliance/debian/build.sh"
}

run_lintian() {
	local start=$SECONDS out
	# Errors fail (overrides in appliance/debian/*.lintian-overrides say why
	# each is expected); warnings are shown.
	if ! out=$(lintian --fail-on error --tag-display-limit 0 "$debs"/*.deb 2>&1); then
		echo "$out" >&2
		die "lintian found errors"
	fi
	echo "  ok  lintian: no errors, $(grep -c '^W: ' <<<"$out" || true) warnings ($((SECONDS - start)) s)" >&2
}

# The commands mmdebstrap runs in the new root once it is bootstrapped
# (services cannot start there: mmdebstrap blocks them).
customize_hooks() {
	local install="DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"
	echo "--customize-hook=mkdir -p \"\$1$IN_ROOT_DEBS\""
	echo "--customize-hook=sync-in $debs $IN_ROOT_DEBS"
	if ((with_dkms)); then
		echo "--customize-hook=chroot \"\$1\" sh -c '$install dkms linux-headers-amd64'"
		echo "--customize-hook=start=\$(date +%s); chroot \"\$1\" sh -c '$install $IN_ROOT_DEBS/ip-vs-dllc-dkms_*.deb';" \
			"echo \"ip-vs-dllc-dkms installed (dkms add, build, install) in \$((\$(date +%s) - start)) s\" >&2"
	fi
	echo "--customize-hook=chroot \"\$1\" sh -c '$install $IN_ROOT_DEBS/*.deb'"
	echo "--customize-hook=sync-out /var/cache/apt/archives $CACHE"
}

bootstrap_and_install() {
	local start=$SECONDS hooks
	mapfile -t hooks < <(customize_hooks)
	mkdir -p "$CACHE"
	unmount_below "$ROOT"
	rm -rf "$ROOT"
	log "mmdebstrap trixie + apt-get install of the packages (output: ${LOG#"$REPO"/})"
	# shellcheck disable=SC2016 # $1 is mmdebstrap's, in the hook
	if ! mmdebstrap --variant=apt --mode=root --skip=essential/unlink \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
		--setup-hook="sync-in $CACHE /var/cache/apt/archives/" \
		"${hooks[@]}" trixie "$ROOT" "$MIRROR" >>"$LOG" 2>&1; then
		log "FAILED; last lines of $LOG:"
		tail -n 40 "$LOG" >&2
		exit 1
	fi
	grep -h 'installed (dkms add' "$LOG" >&2 || true
	report_leftovers
	log "root ready in $((SECONDS - start)) s ($(du -sm "$ROOT" | cut -f1) MiB)"
}

# Processes still running in the root (PostgreSQL or gunicorn, should the
# checks die before stopping them): only those, found by their root.
stop_root_processes() {
	root_processes "$ROOT" | xargs -r kill -KILL 2>/dev/null || true
}

# Something the installation started and left running (it keeps /proc busy).
report_leftovers() {
	local pid
	for pid in $(root_processes "$ROOT"); do
		log "left running by the installation: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	done
	cleanup
}

cleanup() {
	stop_root_processes
	unmount_below "$ROOT"
}

mount_root() {
	mount -t proc proc "$ROOT/proc"
	mount --rbind /dev "$ROOT/dev"
	mount --make-rslave "$ROOT/dev"
	mount -t tmpfs -o mode=0755 tmpfs "$ROOT/run"
	mount -t tmpfs -o mode=1777 tmpfs "$ROOT/tmp"
}

run_checks() {
	local version
	version=$(dpkg-deb -f "$(compgen -G "$debs/fulcrum-api_*.deb" | head -n 1)" Version)
	cp "$HERE/in-root.sh" "$ROOT/var/tmp/in-root.sh"
	mount_root
	trap cleanup EXIT
	log "checks in the root (version $version)"
	# A network namespace of its own: the API's 127.0.0.1:8000 and
	# PostgreSQL's port cannot meet anything else on this host.
	# shellcheck disable=SC2016 # expanded by that sh
	unshare --net sh -c 'ip link set lo up && exec chroot "$1" /bin/bash /var/tmp/in-root.sh "$2" "$3" "$4"' \
		sh "$ROOT" "$version" "$IN_ROOT_DEBS" "$with_dkms"
	cleanup
	trap - EXIT
}

main() {
	local start=$SECONDS
	parse_args "$@"
	((EUID == 0)) || die "run as root (mmdebstrap, chroot, mounts)"
	mkdir -p "$BUILD_DIR"
	: >"$LOG"
	ensure_tools
	build_debs
	run_lintian
	bootstrap_and_install
	run_checks
	((keep)) || rm -rf "$ROOT"
	log "all checks passed in $((SECONDS - start)) s"
}

main "$@"
