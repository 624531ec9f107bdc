#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ip_vs_dllc loaded and unloaded under live services:
#
#  $client                    $director                          $rsA, $rsB, $rsC
# +---------------------+    +------------------------------+    +---------------------------+
# | eth0 10.77.1.2      |----| front 10.77.1.1              |----| eth0 10.77.{2,3,4}.2      |
# | python3 clients     |veth|   VIP 10.77.1.100/32         |veth| :9001 name, then closed   |
# +---------------------+    | ipvsadm VIP:9001 -s dllc     |    | via the director          |
#                            +------------------------------+    +---------------------------+
#   $other: a namespace of its own with a dllc service, deleted with it
#
#   - `ipvsadm -A ... -s dllc` loads the module (IPVS's request_module);
#     /proc/net/ip_vs_dllc (0600) is in every namespace, each seeing and
#     writing only its own services
#   - rmmod fails while a service uses it; traffic still flows
#   - deleting a namespace with a dllc service releases it; once the last
#     service moved to wlc (`ipvsadm -E`), rmmod succeeds and the file goes
#   - `ipvsadm -E ... -s dllc` loads it again onto the service and its three
#     destinations (a load can be written for each at once); three cycles
#   - the kernel log has no BUG, WARNING, Oops or RCU stall
set -euo pipefail

readonly client=fc-dmc-$$ director=fc-dmd-$$ rsA=fc-dmA-$$ rsB=fc-dmB-$$ rsC=fc-dmC-$$
readonly other=fc-dmo-$$
WORK=$(mktemp -d /tmp/dllc-module.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
# shellcheck source=tests/vm/guest/dllc-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dllc-lib.sh"
readonly SVC=(-t "$VIP:9001") PSVC="tcp $VIP:9001"

cleanup() {
	set +e
	l4_cleanup
	ip netns del "$other" 2>/dev/null
}
trap cleanup EXIT

# in_root CMD...: CMD in the guest's root namespace, printed first
in_root() {
	pretty guest "$*"
	"$@"
}
loaded() { grep -q '^ip_vs_dllc ' /proc/modules; }
unloaded() { ! loaded; }
# try_rmmod: for wait_until (a deleted namespace's services go away in the
# background, so rmmod may take a few tries)
try_rmmod() { rmmod ip_vs_dllc 2>/dev/null; }

# traffic_flows WHAT: three short connections through the service are answered
traffic_flows() {
	local answers
	answers=$(ask_names "$client" "$VIP" 9001 3 | tr '\n' ' ')
	[[ $answers =~ ^([ABC]\ ){3}$ ]] || fail "$1: answers '$answers'"
	pretty ok "$1: traffic flows ($answers)"
}

check_autoload() {
	if loaded; then
		in_root rmmod ip_vs_dllc
	fi
	on "$director" ipvsadm -A "${SVC[@]}" -s dllc
	loaded || fail "ipvsadm -s dllc did not load ip_vs_dllc"
	local rs
	for rs in "$RSA" "$RSB" "$RSC"; do
		on "$director" ipvsadm -a "${SVC[@]}" -r "$rs:9001" -m
	done
	ipvs "$director"
	[[ -e $DLLC_PROC ]] || fail "no $DLLC_PROC in the root namespace"
	[[ $(stat -c %a "$DLLC_PROC") == 600 ]] || fail "$DLLC_PROC is not mode 0600"
	pretty ok "ipvsadm -s dllc loaded the module; $DLLC_PROC is there (0600)"
	dllc_write "$director" "$PSVC $RSA:9001 500"
	dllc_table "$director"
	expect_field "$director" "$PSVC" "$RSA:9001" load 500
	expect_field "$director" "$PSVC" "$RSB:9001" load -
	traffic_flows "dllc loaded"
}

check_netns_isolation() {
	add_ns "$other"
	ip -n "$other" link add dummy0 type dummy
	ip -n "$other" link set dummy0 up
	ip -n "$other" addr add 10.88.0.1/24 dev dummy0
	on "$other" ipvsadm -A -t 10.88.0.100:80 -s dllc
	on "$other" ipvsadm -a -t 10.88.0.100:80 -r 10.88.0.2:80 -m
	dllc_write "$other" "tcp 10.88.0.100:80 10.88.0.2:80 250"
	local mine theirs
	mine=$(dllc_table "$director")
	theirs=$(dllc_table "$other")
	grep -q 10.88.0.100 <<<"$mine" && fail "the director's file shows the other namespace's service"
	grep -q "$VIP" <<<"$theirs" && fail "the other namespace's file shows the director's service"
	[[ $(dllc_try_write "$other" "$PSVC $RSA:9001 100") == ENOENT ]] ||
		fail "a write in another namespace reached the director's service"
	pretty ok "each namespace sees and writes only its own services"
	# Deleting the namespace deletes its service, which drops its module reference.
	in_root ip netns del "$other"
}

check_unload() {
	in_root rmmod ip_vs_dllc && fail "rmmod succeeded while a service uses dllc"
	loaded || fail "the module went away"
	pretty ok "rmmod refused while $VIP:9001 uses dllc"
	traffic_flows "after the refused rmmod"
	expect_field "$director" "$PSVC" "$RSA:9001" load 500

	on "$director" ipvsadm -E "${SVC[@]}" -s wlc
	wait_until 30 "rmmod once no service uses dllc" try_rmmod
	unloaded || fail "ip_vs_dllc is still loaded"
	[[ ! -e $DLLC_PROC ]] || fail "$DLLC_PROC is still there"
	ip netns exec "$director" test ! -e "$DLLC_PROC" || fail "$DLLC_PROC is still in the director's namespace"
	pretty ok "rmmod after ipvsadm -E -s wlc (${WAITED} s); the file is gone"
	traffic_flows "wlc without the module"
}

check_reload() {
	local cycle
	for cycle in 1 2 3; do
		on "$director" ipvsadm -E "${SVC[@]}" -s dllc
		loaded || fail "cycle $cycle: ipvsadm -E -s dllc did not load the module"
		# init_service made an entry for every existing destination.
		dllc_write "$director" "$PSVC $RSA:9001 300"
		dllc_write "$director" "$PSVC $RSB:9001 400"
		dllc_write "$director" "$PSVC $RSC:9001 500"
		expect_field "$director" "$PSVC" "$RSC:9001" effective 500
		traffic_flows "cycle $cycle: dllc again"
		on "$director" ipvsadm -E "${SVC[@]}" -s wlc
		wait_until 30 "cycle $cycle: rmmod" try_rmmod
	done
	pretty ok "3 cycles of ipvsadm -E -s dllc / -s wlc + rmmod"
	on "$director" ipvsadm -E "${SVC[@]}" -s dllc
	dllc_table "$director"
	traffic_flows "dllc at the end"
	on "$director" ipvsadm -D "${SVC[@]}"
	wait_until 30 "rmmod after the service is deleted" try_rmmod
}

dllc_dmesg_mark
dllc_install
dllc_topology
check_autoload
check_netns_isolation
check_unload
check_reload
dllc_check_dmesg
echo "OK: ip_vs_dllc loads with ipvsadm, per namespace, unloads only when unused, reloads onto live services"
