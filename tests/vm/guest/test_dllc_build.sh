#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The ip_vs_dllc module (appliance/kernel/ip_vs_dllc) as the appliance ships
# it: built by DKMS from the ip-vs-dllc-dkms package when the image was
# provisioned (images/scripts/provision.sh), for the kernel this guest runs.
#
#   dkms status: installed for $(uname -r); the build's make.log (kept by DKMS
#       in the image) has no compiler warning
#   make check (kbuild C=2: sparse on every source) and make style
#       (checkpatch.pl --strict), run against the image's own kernel headers
#       when the guest was built (tests/vm/build-rootfs.sh, natively): both
#       clean, their logs shown
#   modinfo: version from dkms.conf, GPL, DKMS signer, depends on ip_vs,
#       max_age_ms
#   modprobe/rmmod: /proc/net/ip_vs_dllc appears and goes, the scheduler
#       registers ("[dllc] scheduler registered")
#
# The other test_dllc_* tests use the same module (dllc_install loads it).
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

# The guest's build ran these against the image's kernel headers: its logs and statuses.
readonly CHECKS=/var/lib/fulcrum-vm

check_dkms_build() {
	local kver status log
	kver=$(uname -r)
	status=$(dkms status -m ip-vs-dllc -v "$DLLC_VERSION" -k "$kver")
	pretty dkms "$status"
	[[ $status == *": installed"* ]] || fail "DKMS has not installed ip-vs-dllc/$DLLC_VERSION for $kver"
	log=/var/lib/dkms/ip-vs-dllc/$DLLC_VERSION/$kver/$(uname -m)/log/make.log
	[[ -f $log ]] || fail "no DKMS make.log for $kver: $log"
	sed 's/^/    | /' "$log"
	! grep -E '(warning|error):' "$log" || fail "the image's DKMS build has compiler warnings (above)"
	pretty ok "built and installed by DKMS in the image, no compiler warning"
}

# check_logged NAME WHAT: make NAME's exit status (the guest's build ran it) is 0
check_logged() {
	local name=$1 what=$2
	[[ -f $CHECKS/$name.status ]] || fail "no $CHECKS/$name.status: the guest was built without it"
	pretty "make $name" "$what"
	sed 's/^/    | /' "$CHECKS/$name.log"
	[[ $(cat "$CHECKS/$name.status") == 0 ]] || fail "make $name found problems (above)"
}

check_sparse() {
	check_logged check "kbuild C=2 against $(uname -r)'s headers"
	grep -q 'CHECK .*ip_vs_dllc\.c' "$CHECKS/check.log" || fail "sparse did not run on ip_vs_dllc.c"
	pretty ok "sparse and the compiler: clean"
}

check_style() {
	check_logged style "checkpatch.pl --strict"
	pretty ok "checkpatch --strict: clean"
}

dllc_dmesg_mark
check_dkms_build
check_sparse
check_style
check_modinfo
check_load
dllc_check_dmesg
echo "OK: ip_vs_dllc built by DKMS in the image (no warning), sparse and checkpatch clean, modinfo, modprobe/rmmod"
