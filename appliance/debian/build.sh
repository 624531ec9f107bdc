#!/bin/bash
# Builds Fulcrum's Debian packages for the appliance (Debian 13 trixie):
# fulcrum-api, fulcrum-console, fulcrum-agent, fulcrum-loadd, fulcrum-cli,
# ip-vs-dllc-dkms and fulcrum-appliance, from one source package whose
# debian/ directory is appliance/debian/.
#
#   appliance/debian/build.sh
#   FULCRUM_VERSION=1.2.3 FULCRUM_DEB_OUT=/tmp/debs appliance/debian/build.sh
#
# The repository has no debian/ at its top: this script stages api/, agents/,
# webui/ and appliance/ (the working tree, uncommitted changes included) in
# images/.build/src/fulcrum/ with appliance/debian/ as debian/ and a
# generated debian/changelog, and runs `dpkg-buildpackage -b -us -uc -d`
# there (-d: Go, Node.js and Python come from this host, see debian/rules).
# The .deb files (and the .buildinfo/.changes) land in FULCRUM_DEB_OUT,
# default images/.build/debs/, replacing the packages of an earlier build.
# A build is skipped when FULCRUM_DEB_OUT holds the packages of this version
# built from the same inputs: the staged files' contents, the version and
# the Go, Node.js and Python that build them (a hash in .source-key there).
#
# The version is FULCRUM_VERSION if set (a Debian version without a
# revision), else derived from `git describe --tags --always --dirty`:
# 1.2.3 on a tag v1.2.3, 1.2.3+git4.gabc1234 four commits later, and, while
# no tag exists, 0.9.0~git<commits>.g<hash>; "+dirty" marks uncommitted
# changes. Every later commit gives a higher version.
#
# ip-vs-dllc-dkms has a version of its own: the module's (PACKAGE_VERSION in
# its dkms.conf), "+m" and the count of commits that changed its files
# (DLLC_PATHS; "+dirty" for uncommitted changes there), after the epoch 1 (it
# had the product's version before, 0.9.0~git...). An upgrade that leaves the
# module alone leaves the package alone, and DKMS does not build it again on
# the appliance (two minutes of an emulated appliance's upgrade).
#
# Needs: debhelper and dh-dkms (`make deps-image` installs them), Go >= 1.24,
# Node.js >= 20.19 with npm, and the repository's .venv (`make deps`), or
# FULCRUM_BUILD_PYTHON naming another Python with pip and the API's
# requirements. Reuses the Go, npm and pip download caches; rebuilds
# everything else. Progress goes to stderr, the tools' output to
# images/.build/debs-build.log (its tail is shown on failure).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readonly REPO
readonly BUILD_DIR=$REPO/images/.build
readonly OUT=${FULCRUM_DEB_OUT:-$BUILD_DIR/debs}
# Beside OUT, so that two builds into two folders (the upgrade test's) can run at once.
readonly SRC_PARENT=$OUT.src
readonly LOG=$OUT-build.log
readonly STAGED_DIRS=(api agents webui appliance)
readonly PACKAGES=(fulcrum-api fulcrum-console fulcrum-agent fulcrum-loadd fulcrum-cli ip-vs-dllc-dkms fulcrum-appliance)
readonly DLLC_PACKAGE=ip-vs-dllc-dkms
# What the DKMS package is made of (its version counts the commits that changed them).
readonly DLLC_PATHS=(appliance/kernel/ip_vs_dllc appliance/debian/ip-vs-dllc-dkms.dkms appliance/debian/ip-vs-dllc-dkms.install)
# The version before the first tag (see above).
readonly UNTAGGED_BASE=0.9.0

log() { echo "debs: $*" >&2; }
die() { log "$*"; exit 1; }

# need_version NAME HAVE WANT: fails unless HAVE >= WANT.
need_version() {
	dpkg --compare-versions "$2" ge "$3" || die "$1 $2 is too old: the packages need $1 >= $3"
}

find_go() {
	command -v go 2>/dev/null || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } ||
		die "Go is not installed (Go >= 1.24 on the PATH or in /usr/local/go)"
}

check_tools() {
	command -v dh >/dev/null && command -v dh_dkms >/dev/null ||
		die "debhelper or dh-dkms is missing: run \`make deps-image\` (appliance/dev/deps.sh demo image)"
	GO=$(find_go)
	need_version go "$("$GO" env GOVERSION | sed 's/^go//')" 1.24
	command -v npm >/dev/null || die "npm is not installed (Node.js >= 20.19 with npm)"
	need_version node "$(node --version | sed 's/^v//')" 20.19
	FULCRUM_BUILD_PYTHON=${FULCRUM_BUILD_PYTHON:-$REPO/.venv/bin/python}
	"$FULCRUM_BUILD_PYTHON" -c 'import django, pip' 2>/dev/null ||
		die "$FULCRUM_BUILD_PYTHON lacks pip or Django: run \`make deps\` or set FULCRUM_BUILD_PYTHON"
	export GO FULCRUM_BUILD_PYTHON
}

# A Debian version from `git describe` (see the header).
git_version() {
	local describe dirty="" re_tag='^v?([0-9][A-Za-z0-9.+~]*)$' re_after='^v?([0-9][A-Za-z0-9.+~]*)-([0-9]+)-g([0-9a-f]+)$'
	describe=$(git -C "$REPO" describe --tags --always --dirty)
	# Without a tag, describe gives the bare hash, which may look like a version (1ca5b22).
	git -C "$REPO" describe --tags --abbrev=0 >/dev/null 2>&1 || re_tag='^$' re_after='^$'
	if [[ $describe == *-dirty ]]; then
		describe=${describe%-dirty} dirty=+dirty
	fi
	if [[ $describe =~ $re_tag ]]; then
		echo "${BASH_REMATCH[1]}$dirty"
	elif [[ $describe =~ $re_after ]]; then
		echo "${BASH_REMATCH[1]}+git${BASH_REMATCH[2]}.g${BASH_REMATCH[3]}$dirty"
	else
		echo "$UNTAGGED_BASE~git$(git -C "$REPO" rev-list --count HEAD).g$describe$dirty"
	fi
}

package_version() {
	local version=${FULCRUM_VERSION:-}
	[[ -n $version ]] || version=$(git_version)
	# Native package: no revision (no "-"), and only what a Debian version allows.
	[[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]] ||
		die "not a Debian version for this package: '$version' (digits first, then letters, digits, . + ~)"
	echo "$version"
}

# dllc_version: ip-vs-dllc-dkms's version (see the header).
dllc_version() {
	local module commits dirty=""
	module=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$REPO/appliance/kernel/ip_vs_dllc/dkms.conf")
	[[ $module =~ ^[0-9][A-Za-z0-9.]*$ ]] || die "appliance/kernel/ip_vs_dllc/dkms.conf: no PACKAGE_VERSION"
	commits=$(git -C "$REPO" rev-list --count HEAD -- "${DLLC_PATHS[@]}")
	[[ -z $(git -C "$REPO" status --porcelain -- "${DLLC_PATHS[@]}") ]] || dirty=+dirty
	echo "1:$module+m$commits$dirty"
}

# file_version PACKAGE VERSION DLLC: the version in PACKAGE's file name (no epoch).
file_version() {
	if [[ $1 == "$DLLC_PACKAGE" ]]; then echo "${3#*:}"; else echo "$2"; fi
}

# existing_files: the NUL-separated paths on stdin that exist in the working
# tree (a tracked file may have been deleted).
existing_files() {
	local path
	while IFS= read -r -d '' path; do
		if [[ -e $REPO/$path || -L $REPO/$path ]]; then printf '%s\0' "$path"; fi
	done
}

# staged_files: the working tree's files of STAGED_DIRS (tracked or not, but
# not ignored), NUL-separated, relative to the repository.
staged_files() {
	git -C "$REPO" ls-files -z --cached --others --exclude-standard -- "${STAGED_DIRS[@]}" | existing_files
}

# source_key VERSION: a hash of what the packages are built from.
source_key() {
	{
		echo "$1"
		"$GO" version
		node --version
		"$FULCRUM_BUILD_PYTHON" --version
		staged_files | (cd "$REPO" && xargs -0 sha256sum)
	} | sha256sum | cut -c1-16
}

# up_to_date VERSION DLLC KEY: OUT holds every package of VERSION (DLLC), built from KEY.
up_to_date() {
	local pkg
	[[ $(cat "$OUT/.source-key" 2>/dev/null) == "$3" ]] || return 1
	for pkg in "${PACKAGES[@]}"; do
		compgen -G "$OUT/${pkg}_$(file_version "$pkg" "$1" "$2")_*.deb" >/dev/null || return 1
	done
}

# stage DIR: the staged files copied into DIR, with appliance/debian/ as DIR/debian/.
stage() {
	local dir=$1
	mkdir -p "$dir"
	staged_files | tar -C "$REPO" --null -T - -cf - | tar -C "$dir" -xf -
	cp -R "$REPO/appliance/debian" "$dir/debian"
	rm -f "$dir/debian/build.sh"
}

write_changelog() {
	local dir=$1 version=$2 maintainer date describe
	maintainer=$(sed -n 's/^Maintainer: //p' "$dir/debian/control")
	date=$(git -C "$REPO" log -1 --format=%cD)
	describe=$(git -C "$REPO" describe --tags --always --dirty)
	cat >"$dir/debian/changelog" <<-EOF
	fulcrum ($version) trixie; urgency=medium

	  * Built from git $describe.

	 -- $maintainer  $date
	EOF
}

build() {
	local dir=$1
	log "dpkg-buildpackage in ${dir#"$REPO"/} (output: ${LOG#"$REPO"/})"
	if ! (cd "$dir" && FULCRUM_DLLC_VERSION=$2 dpkg-buildpackage -b -us -uc -d) >>"$LOG" 2>&1; then
		log "FAILED; last lines of $LOG:"
		tail -n 40 "$LOG" >&2
		exit 1
	fi
}

# collect VERSION DLLC: this build's files into OUT, after removing the
# packages an earlier build left there.
collect() {
	local version=$1 dllc=$2 pkg
	mkdir -p "$OUT"
	for pkg in "${PACKAGES[@]}"; do
		rm -f "$OUT/${pkg}_"*.deb
	done
	rm -f "$OUT"/fulcrum_*.buildinfo "$OUT"/fulcrum_*.changes
	for pkg in "${PACKAGES[@]}"; do
		mv "$SRC_PARENT/${pkg}_$(file_version "$pkg" "$version" "$dllc")"_*.deb "$OUT/" 2>/dev/null ||
			die "no $pkg package was built"
	done
	mv "$SRC_PARENT/fulcrum_${version}"_*.buildinfo "$SRC_PARENT/fulcrum_${version}"_*.changes "$OUT/"
}

main() {
	local version dllc dir key start=$SECONDS
	mkdir -p "$OUT"
	# One build into OUT at a time; the second waits and then finds it up to date.
	exec 9>"$OUT/.lock"
	flock 9
	check_tools
	version=$(package_version)
	dllc=$(dllc_version)
	key=$(source_key "$version $dllc")
	if up_to_date "$version" "$dllc" "$key"; then
		log "version $version ($DLLC_PACKAGE $dllc): up to date in $OUT"
		return
	fi
	: >"$LOG"
	dir=$SRC_PARENT/fulcrum
	log "version $version ($DLLC_PACKAGE $dllc)"
	rm -rf "$SRC_PARENT" "$OUT/.source-key"
	stage "$dir"
	write_changelog "$dir" "$version"
	build "$dir" "$dllc"
	collect "$version" "$dllc"
	echo "$key" >"$OUT/.source-key"
	rm -rf "$SRC_PARENT"
	log "built in $((SECONDS - start)) s, into $OUT:"
	(cd "$OUT" && du -h -- *_"$version"_*.deb "${DLLC_PACKAGE}_${dllc#*:}"_*.deb) >&2
}

main "$@"
