#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The ip_vs_dllc module (appliance/kernel/ip_vs_dllc) built for the guest's
# kernel, as the appliance image builds it: no network, just the guest.
#
#   /src/appliance/kernel/ip_vs_dllc  --cp-->  /usr/src/ip-vs-dllc-<version>
#       dkms add, dkms build (KBUILD_CHECKSRC=2: sparse on every source in
#       the same kbuild run; a warning in make.log fails), dkms install
#       (signed with the image's DKMS key, depmod)
#   modinfo: version from dkms.conf, GPL, depends on ip_vs, max_age_ms
#   modprobe/rmmod: /proc/net/ip_vs_dllc appears and goes, the scheduler
#       registers ("[dllc] scheduler registered")
#   make style: checkpatch.pl --strict (from the kernel's source package,
#       see build-rootfs.sh) on a copy of the sources
#
# The other test_dllc_* tests use the module this one installs: it sorts
# first, so a run of them all builds it once (each installs it itself when
# run without this one, which takes as long).
set -euo pipefail

WORK=$(mktemp -d /tmp/dllc-build.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
# shellcheck source=tests/vm/guest/dllc-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dllc-lib.sh"

cleanup() {
	set +e
	rm -rf "$WORK"
}
trap cleanup EXIT

check_modinfo() {
	pretty guest "modinfo ip_vs_dllc"
	modinfo ip_vs_dllc | grep -Ev '^(sig_key|signature|\s)' | sed 's/^/    | /'
	[[ $(modinfo -F version ip_vs_dllc) == "$DLLC_VERSION" ]] || fail "modinfo: version is not $DLLC_VERSION"
	[[ $(modinfo -F license ip_vs_dllc) == GPL ]] || fail "modinfo: license is not GPL"
	[[ $(modinfo -F signer ip_vs_dllc) == "DKMS module signing key" ]] || fail "modinfo: not signed by DKMS"
	modinfo -F parm ip_vs_dllc | grep -q '^max_age_ms:' || fail "modinfo: no max_age_ms parameter"
	modinfo -F depends ip_vs_dllc | grep -qw ip_vs || fail "modinfo: does not depend on ip_vs"
	[[ $(modinfo -n ip_vs_dllc) == */updates/dkms/* ]] || fail "modinfo: not DKMS's module: $(modinfo -n ip_vs_dllc)"
	pretty ok "modinfo: version $DLLC_VERSION, GPL, signed by DKMS, depends on ip_vs, max_age_ms"
}

check_load() {
	! grep -q '^ip_vs_dllc ' /proc/modules || rmmod ip_vs_dllc
	pretty guest "modprobe ip_vs_dllc"
	modprobe ip_vs_dllc
	[[ -e $DLLC_PROC ]] || fail "no $DLLC_PROC after modprobe"
	[[ $(head -n 1 "$DLLC_PROC") == "# service destination load age_ms effective overhead weight" ]] ||
		fail "$DLLC_PROC header: $(head -n 1 "$DLLC_PROC")"
	[[ $(wc -l <"$DLLC_PROC") == 1 ]] || fail "$DLLC_PROC lists services, there are none"
	[[ $(cat "$DLLC_PARAMS/max_age_ms") == 3000 ]] || fail "max_age_ms is not 3000 by default"
	dmesg | grep -q 'IPVS: \[dllc\] scheduler registered' || fail "no 'scheduler registered' in the kernel log"
	pretty guest "rmmod ip_vs_dllc"
	rmmod ip_vs_dllc
	[[ ! -e $DLLC_PROC ]] || fail "$DLLC_PROC is still there after rmmod"
	pretty ok "modprobe: $DLLC_PROC (header only) and max_age_ms=3000; rmmod removes them"
}

check_style() {
	local copy=$WORK/ip_vs_dllc start
	cp -r "$DLLC_SRC" "$copy"
	start=$(now_ms)
	make -C "$copy" --no-print-directory style || fail "make style (checkpatch) found problems"
	pretty ok "make style (checkpatch --strict) clean in $(seconds_since "$start") s"
}

dllc_dmesg_mark
dllc_reinstall
check_modinfo
check_load
check_style
dllc_check_dmesg
echo "OK: ip_vs_dllc built by DKMS in $DLLC_BUILD_S s (sparse clean), modinfo, modprobe/rmmod, checkpatch clean"
