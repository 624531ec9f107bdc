#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer 4, direct routing and IP-in-IP tunnelling: keepalived sets up IPVS from
# the files Fulcrum's compiler made for tests/vm/l4/dr-tun.json; the real
# servers are prepared by fulcrum-realserver (/results/bin, built by run.sh).
#
#                               $lan: bridge br0
#        +------------------+------------------+------------------+
#        |                  |                  |                  |
#  +-----------+   +------------------+  +-----------------+  +-----------------+
#  | $client   |   | $director        |  | $rs1            |  | $rs2            |
#  | 10.77.1.2 |   | 10.77.1.1        |  | 10.77.1.11      |  | 10.77.1.12      |
#  | curl,     |   | VIP .101 (DR)    |  | lo:    .101/32  |  | lo:    .101/32  |
#  | python3   |   | VIP .102 (TUN)   |  | tunl0: .102/32  |  | tunl0: .102/32  |
#  +-----------+   | keepalived       |  | nginx "rs1",    |  | nginx "rs2",    |
#                  | (dr-tun case)    |  | socat udp/53 on |  | socat udp/53 on |
#                  +------------------+  | .101 "rs1"      |  | .101 "rs2"      |
#                                        +-----------------+  +-----------------+
#
# DR: the director hands the client's packets to a real server's MAC address,
# unchanged; the real server has the VIP on lo (arp_ignore=1, arp_announce=2:
# only the director answers ARP for it) and answers the client directly.
# TUN: the director wraps the packets in IP-in-IP to the real server's address;
# the real server unwraps them on tunl0 (VIP there, rp_filter=0) and answers
# the client directly. The director does not forward (ip_forward stays 0).
#
#   10.77.1.101:80      DR, rr: 8 requests alternate rs1/rs2
#   10.77.1.102:80      TUN, rr: 8 requests alternate; tunl0 on each real
#                       server counts the tunnelled packets
#   10.77.1.101 udp/53  DR, rr + ops: 8 datagrams from one source port
#                       alternate, and come back from the VIP
set -euo pipefail

readonly VIP_DR=10.77.1.101 VIP_TUN=10.77.1.102
readonly lan=fc-l4l-$$ client=fc-l4c-$$ director=fc-l4d-$$ rs1=fc-l4r1-$$ rs2=fc-l4r2-$$
readonly REALSERVER=/results/bin/fulcrum-realserver
WORK=$(mktemp -d /tmp/l4-dr-tun.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	set +e
	local ns
	for ns in "$rs1" "$rs2"; do
		[[ -x $REALSERVER && -f $WORK/$ns/realserver.json ]] &&
			ip netns exec "$ns" "$REALSERVER" remove --state "$WORK/$ns/realserver.json" "$VIP_DR" "$VIP_TUN"
	done
	l4_cleanup
}
trap cleanup EXIT

# plug NS ADDRESS PORT: NS's eth0 (ADDRESS/24) on the bridge, as port PORT
plug() {
	local ns=$1 address=$2 port=$3
	veth "$lan" "$port" "$ns" eth0
	ip -n "$lan" link set dev "$port" master br0
	ip -n "$ns" addr add "$address/24" dev eth0
}

# prepare_real_server NS: the VIPs on lo (DR) and tunl0 (TUN), ARP and
# reverse-path filtering set for them, by fulcrum-realserver
prepare_real_server() {
	local ns=$1
	mkdir -p "$WORK/$ns"
	[[ -x $REALSERVER ]] || fail "$REALSERVER is missing (run.sh builds agents/cmd/* into /results/bin)"
	on "$ns" "$REALSERVER" add --mode dr --state "$WORK/$ns/realserver.json" "$VIP_DR"
	on "$ns" "$REALSERVER" add --mode tun --state "$WORK/$ns/realserver.json" "$VIP_TUN"
	local setting
	for setting in conf.all.arp_ignore=1 conf.all.arp_announce=2 conf.all.rp_filter=0 conf.tunl0.rp_filter=0; do
		[[ $(ip netns exec "$ns" sysctl -n "net.ipv4.${setting%=*}") == "${setting#*=}" ]] ||
			fail "$ns: net.ipv4.${setting%=*} is not ${setting#*=} after fulcrum-realserver add"
	done
	ip -n "$ns" -br addr show dev lo | grep -q "$VIP_DR/32" || fail "$ns: $VIP_DR is not on lo"
	ip -n "$ns" -br addr show dev tunl0 | grep -q "$VIP_TUN/32" || fail "$ns: $VIP_TUN is not on tunl0"
}

setup_topology() {
	local ns
	for ns in "$lan" "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	ip -n "$lan" link add br0 type bridge
	ip -n "$lan" link set dev br0 up
	plug "$client" 10.77.1.2 to-client
	plug "$director" 10.77.1.1 to-director
	plug "$rs1" 10.77.1.11 to-rs1
	plug "$rs2" 10.77.1.12 to-rs2
	ip -n "$director" addr add "$VIP_DR/32" dev eth0
	ip -n "$director" addr add "$VIP_TUN/32" dev eth0
	prepare_real_server "$rs1"
	prepare_real_server "$rs2"
	start_web "$rs1" rs1
	start_web "$rs2" rs2
	start_udp_name "$rs1" rs1 53 "$VIP_DR"
	start_udp_name "$rs2" rs2 53 "$VIP_DR"
	wait_http "$client" http://10.77.1.11/
	wait_http "$client" http://10.77.1.12/
}

# ask_n N URL: N requests from the client, answers on one line
ask_n() { http_get_n "$1" "$client" "$2"; }

tunl0_rx() {
	ip netns exec "$1" cat /sys/class/net/tunl0/statistics/rx_packets
}

check_table() {
	local table
	table=$(ipvs "$director")
	[[ $(ipvs "$director" -t "$VIP_DR:80" | grep -c ' Route ') == 2 ]] || fail "$VIP_DR:80 is not DR to 2 real servers"
	[[ $(ipvs "$director" -t "$VIP_TUN:80" | grep -c ' Tunnel ') == 2 ]] || fail "$VIP_TUN:80 is not TUN to 2 real servers"
	grep -Eq "^UDP +$VIP_DR:53 rr .*ops" <<<"$table" || fail "udp/53 is not rr with ops"
	pretty ok "ipvsadm: DR (Route) and TUN (Tunnel) services with 2 real servers each"
}

# Only the director may answer ARP for the VIPs, or the client would bypass it.
check_arp() {
	local director_mac mac vip
	director_mac=$(ip -n "$director" -br link show dev eth0 | awk '{ print $3 }')
	for vip in "$VIP_DR" "$VIP_TUN"; do
		mac=$(ip -n "$client" neigh show "$vip" | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
		[[ $mac == "$director_mac" ]] || fail "the client resolved $vip to '$mac', not the director's $director_mac"
	done
	pretty ok "the client's ARP entries for both VIPs are the director's ($director_mac)"
}

check_dr() {
	expect_alternating "DR rr, 8 requests" "$(ask_n 8 "http://$VIP_DR/")"
}

check_tun() {
	local before1 before2 after1 after2
	before1=$(tunl0_rx "$rs1")
	before2=$(tunl0_rx "$rs2")
	expect_alternating "TUN rr, 8 requests" "$(ask_n 8 "http://$VIP_TUN/")"
	after1=$(tunl0_rx "$rs1")
	after2=$(tunl0_rx "$rs2")
	# A request is at least SYN, ACK + GET, ACK + FIN: 4 packets in, 4 per server here.
	((after1 - before1 >= 16 && after2 - before2 >= 16)) ||
		fail "tunl0 received $((after1 - before1)) (rs1) and $((after2 - before2)) (rs2) packets for 4 requests each"
	pretty ok "tunl0 unwrapped $((after1 - before1)) packets on rs1, $((after2 - before2)) on rs2"
}

check_udp_dr() {
	local answers
	answers=$(udp_ask "$client" "$VIP_DR" 53 8 | tr '\n' ' ')
	expect_alternating "DR UDP rr + ops, 8 datagrams from one source port" "${answers% }"
}

setup_topology
# A new namespace inherits the root namespace's ip_forward (an earlier test may
# have set it): DR and TUN must work without the director forwarding replies.
ip netns exec "$director" sysctl -qw net.ipv4.ip_forward=0
start_keepalived "$director" dr-tun
wait_for_services "$director" 3
check_table
check_dr
check_tun
check_arp
check_udp_dr
[[ $(ip netns exec "$director" sysctl -n net.ipv4.ip_forward) == 0 ]] || fail "the director forwards IP"
echo "OK: DR and TUN (TCP) and DR UDP with ops spread over both real servers, which answer directly"
