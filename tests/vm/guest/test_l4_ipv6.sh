#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer 4, NAT over IPv6: an IPv6 VIP with IPv6 real servers, TCP (with a
# TCP_CHECK) and UDP, set up by keepalived from the files Fulcrum's compiler
# made for tests/vm/l4/ipv6.json.
#
#  $client                    $director                        $rs1, $rs2
# +-----------------+      +---------------------------+      +------------------------------+
# | eth0 fd77:1::2  |------| front fd77:1::1/64        |------| eth0 fd77:2::2 / fd77:3::2    |
# | curl, python3   | veth |   VIP fd77:1::100/128     | veth | nginx [::]:80 "rs1" / "rs2"   |
# +-----------------+      | rs1   fd77:2::1/64        |--+   | socat udp6/53 "rs1" / "rs2"   |
#                          | rs2   fd77:3::1/64        |  |   | via fd77:2::1 / fd77:3::1     |
#                          | forwarding on (IPv6)      |  |   +------------------------------+
#                          | keepalived (ipv6 case)    |  +--- (rs2's link)
#                          +---------------------------+
#
#   [fd77:1::100]:80   rr, TCP_CHECK: 8 requests alternate; stopping rs1's
#                      nginx takes it out (the requests all go to rs2), and
#                      starting it puts it back
#   [fd77:1::100]:53   udp rr: 8 datagrams from 8 source ports alternate,
#                      answered from the VIP
set -euo pipefail

readonly VIP=fd77:1::100
readonly client=fc-l4c-$$ director=fc-l4d-$$ rs1=fc-l4r1-$$ rs2=fc-l4r2-$$
readonly RS1='[fd77:2::2]:80' RS2='[fd77:3::2]:80'
WORK=$(mktemp -d /tmp/l4-ipv6.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	l4_cleanup
}
trap cleanup EXIT

# web6 NAME: a server block answering NAME on [::]:80 (start_web's are IPv4)
web6() {
	printf '    server { listen [::]:80 ipv6only=on; location = / { return 200 "%s\\n"; } }\n' "$1"
}

setup_topology() {
	local ns
	for ns in "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	veth "$director" front "$client" eth0
	veth "$director" rs1 "$rs1" eth0
	veth "$director" rs2 "$rs2" eth0
	# nodad: the addresses are usable at once (no duplicate address detection)
	ip -n "$director" addr add fd77:1::1/64 dev front nodad
	ip -n "$director" addr add "$VIP/128" dev front nodad
	ip -n "$director" addr add fd77:2::1/64 dev rs1 nodad
	ip -n "$director" addr add fd77:3::1/64 dev rs2 nodad
	ip netns exec "$director" sysctl -qw net.ipv6.conf.all.forwarding=1
	ip -n "$client" addr add fd77:1::2/64 dev eth0 nodad
	ip -n "$rs1" addr add fd77:2::2/64 dev eth0 nodad
	ip -n "$rs1" route add default via fd77:2::1
	ip -n "$rs2" addr add fd77:3::2/64 dev eth0 nodad
	ip -n "$rs2" route add default via fd77:3::1
	start_web "$rs1" rs1 "$(web6 rs1)"
	start_web "$rs2" rs2 "$(web6 rs2)"
	start_udp_name6 "$rs1" rs1 53
	start_udp_name6 "$rs2" rs2 53
	wait_http "$director" "http://[fd77:2::2]/"
	wait_http "$director" "http://[fd77:3::2]/"
}

ask_n() { http_get_n "$1" "$client" "http://[$VIP]/"; }

check_table() {
	local table
	table=$(ipvs "$director")
	grep -Eq "^TCP +\[$VIP\]:80 rr" <<<"$table" || fail "[$VIP]:80 is not rr"
	grep -Eq "^UDP +\[$VIP\]:53 rr" <<<"$table" || fail "udp [$VIP]:53 is not rr"
	has_real_server "$director" "-t [$VIP]:80" "$RS1" 1 || fail "rs1 is not in [$VIP]:80"
	has_real_server "$director" "-t [$VIP]:80" "$RS2" 1 || fail "rs2 is not in [$VIP]:80"
	[[ $(ipvs "$director" -t "[$VIP]:80" | grep -c Masq) == 2 ]] || fail "[$VIP]:80 does not masquerade to 2 real servers"
	pretty ok "ipvsadm: the IPVS services on [$VIP] masquerade to 2 IPv6 real servers"
}

check_tcp() {
	expect_alternating "IPv6 rr, 8 requests" "$(ask_n 8)"
	pretty "$rs1" "stopping nginx"
	stop_web "$rs1"
	wait_until 15 "TCP_CHECK removes rs1 from [$VIP]:80" lacks_real_server "$director" "-t [$VIP]:80" "$RS1"
	pretty timing "TCP_CHECK removed rs1 in $WAITED s"
	expect_answers "IPv6, rs1 down, 4 requests" "rs2 rs2 rs2 rs2" "$(ask_n 4)"
	start_web "$rs1" rs1 "$(web6 rs1)"
	wait_until 10 "TCP_CHECK puts rs1 back into [$VIP]:80" has_real_server "$director" "-t [$VIP]:80" "$RS1" 1
	pretty timing "TCP_CHECK put rs1 back in $WAITED s"
	expect_alternating "IPv6, rs1 back, 4 requests" "$(ask_n 4)"
}

check_udp() {
	local answers
	answers=$(udp_ask "$client" "$VIP" 53 8 each | tr '\n' ' ')
	expect_alternating "IPv6 UDP rr, 8 datagrams from 8 source ports, answered from the VIP" "${answers% }"
}

setup_topology
start_keepalived "$director" ipv6
wait_for_services "$director" 2
check_table
check_tcp
check_udp
echo "OK: IPv6 NAT: TCP rr with a TCP_CHECK that removes and restores, UDP rr"
