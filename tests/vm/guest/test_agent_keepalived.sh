#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The node agent's keepalived/IPVS tests (agents/internal/keepalived) against the
# appliance's keepalived (Debian trixie), IPVS and nftables, in a namespace of their own:
# keepalived started from a bundle creates the IPVS services; the agent's reconcile puts
# the scheduler ipvs.json wants in force (sed instead of keepalived's wlc) and keeps it
# across a keepalived reload and a real server removed by a health check; a scheduler the
# kernel lacks (dllc) leaves wlc in force and the status says why; the nftables script sets
# the marks; a refused keepalived.conf is not made live. run.sh compiles the test binary on
# the host.
#
# Outside the guest those tests skip; here FULCRUM_VM_GUEST=1 enables them, and a skip
# fails this script, so that a guest run cannot pass without them.
#
# The guest is the appliance, which ships ip_vs_dllc: for "a scheduler the kernel lacks"
# its file is moved away while the tests run (modules.dep still names it, so modprobe
# finds no file), and put back however they end.
set -euo pipefail

module=$(modinfo -n ip_vs_dllc)
hidden=$(mktemp -d)/$(basename "$module")
restore() { [[ ! -e $hidden ]] || mv "$hidden" "$module"; }
trap restore EXIT
! grep -q '^ip_vs_dllc ' /proc/modules || rmmod ip_vs_dllc
mv "$module" "$hidden"
keepalived --version 2>&1 | sed -n 1p
nft --version
cd /src/agents/internal/keepalived
out=$(mktemp)
status=0
FULCRUM_VM_GUEST=1 /results/bin/keepalived.test -test.v -test.count=1 -test.timeout=240s 2>&1 |
	tee "$out" || status=$?
if grep -q -- '--- SKIP' "$out"; then
	echo "FAIL: tests were skipped in the guest:" >&2
	grep -- '--- SKIP' "$out" >&2
	exit 1
fi
exit "$status"
