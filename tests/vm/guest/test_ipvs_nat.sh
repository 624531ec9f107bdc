#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# IPVS NAT (masquerading) with round-robin, inside the QEMU guest.
#
# The guest's root namespace is the director; the client and the two real
# servers each get their own namespace, joined to it by a veth pair:
#
#  $client                  director (guest root namespace)        $rs1
# +-----------------+      +-----------------------------+      +-----------------+
# | eth0 10.77.1.2  |------| d-client 10.77.1.1          |      | eth0 10.77.2.2  |
# | curl VIP x 20   | veth |          VIP 10.77.1.100/32 |      | httpd: "rs1"    |
# +-----------------+      | d-rs1    10.77.2.1          |------| via 10.77.2.1   |
#                          | d-rs2    10.77.3.1          |--+   +-----------------+
#                          | ipvs TCP VIP:80 rr, -m NAT  |  |      $rs2
#                          +-----------------------------+  |   +-----------------+
#                                                           +---| eth0 10.77.3.2  |
#                                                          veth | httpd: "rs2"    |
#                                                               | via 10.77.3.1   |
#                                                               +-----------------+
#
# The real servers' default route is the director, so their replies come back
# through it and IPVS rewrites the source back to the VIP (-m, masquerading).
# 20 requests from the client must alternate strictly between rs1 and rs2.
set -euo pipefail

readonly VIP=10.77.1.100
readonly REQUESTS=20
# Unique names, so a leftover from an earlier run cannot be mistaken for ours.
readonly client=fc-client-$$ rs1=fc-rs1-$$ rs2=fc-rs2-$$

pretty() { echo -e "\x1b[32m\x1b[1m[+] $1:\x1b[0m $2"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
n0() { pretty director "$*"; "$@"; }
on_client() { pretty client "$*"; ip netns exec "$client" "$@"; }

FORWARD_BEFORE=$(sysctl -n net.ipv4.ip_forward)
readonly FORWARD_BEFORE

cleanup() {
	set +e
	sysctl -qw "net.ipv4.ip_forward=$FORWARD_BEFORE"  # later tests share this boot
	ipvsadm -D -t "$VIP:80" 2>/dev/null
	local ns
	for ns in "$client" "$rs1" "$rs2"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill
		ip netns del "$ns" 2>/dev/null
	done
	ip link del d-client 2>/dev/null
	ip link del d-rs1 2>/dev/null
	ip link del d-rs2 2>/dev/null
}
trap cleanup EXIT

# connect NS DIRECTOR_IFACE NET: veth pair, director gets NET.1, NS gets NET.2
connect() {
	local ns=$1 dev=$2 net=$3
	ip netns add "$ns"
	ip link add "$dev" type veth peer name eth0 netns "$ns"
	ip addr add "$net.1/24" dev "$dev"
	ip link set "$dev" up
	ip -n "$ns" addr add "$net.2/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	ip -n "$ns" route add default via "$net.1"
}

# start_http_server NS NAME: answers every GET / with NAME
start_http_server() {
	local ns=$1 name=$2
	local docroot=/tmp/$ns
	mkdir -p "$docroot"
	echo "$name" >"$docroot/index.html"
	ip netns exec "$ns" busybox httpd -p 80 -h "$docroot"
}

wait_http() {
	local url=$1 i
	for i in $(seq 50); do
		ip netns exec "$client" curl -fs --max-time 2 -o /dev/null "$url" && return 0
		sleep 0.1
	done
	fail "$url never answered"
}

setup_topology() {
	connect "$client" d-client 10.77.1
	connect "$rs1" d-rs1 10.77.2
	connect "$rs2" d-rs2 10.77.3
	ip addr add "$VIP/32" dev d-client
	sysctl -qw net.ipv4.ip_forward=1
	start_http_server "$rs1" rs1
	start_http_server "$rs2" rs2
}

setup_ipvs() {
	n0 modprobe ip_vs
	grep -q '^ip_vs ' /proc/modules || fail "kernel module ip_vs is not loaded"
	n0 ipvsadm -A -t "$VIP:80" -s rr
	n0 ipvsadm -a -t "$VIP:80" -r 10.77.2.2:80 -m
	n0 ipvsadm -a -t "$VIP:80" -r 10.77.3.2:80 -m
	n0 ipvsadm -Ln
}

check_ipvs_table() {
	local table
	table=$(ipvsadm -Ln)
	grep -Eq "^TCP +$VIP:80 rr" <<<"$table" || fail "service missing from ipvsadm -Ln"
	grep -Eq -- "-> 10.77.2.2:80 +Masq" <<<"$table" || fail "rs1 missing or not Masq"
	grep -Eq -- "-> 10.77.3.2:80 +Masq" <<<"$table" || fail "rs2 missing or not Masq"
	grep -q '^ip_vs_rr ' /proc/modules || fail "scheduler module ip_vs_rr is not loaded"
}

# Reaching the real servers directly first proves the topology, so that a
# failure below is about IPVS and not about veths or routes.
check_direct_reachability() {
	wait_http http://10.77.2.2/
	wait_http http://10.77.3.2/
}

check_round_robin() {
	local answers=() i
	for ((i = 0; i < REQUESTS; i++)); do
		answers+=("$(ip netns exec "$client" curl -fsS --max-time 5 "http://$VIP/")")
	done
	pretty client "answers: ${answers[*]}"

	local rs1_count=0 rs2_count=0
	for ((i = 0; i < REQUESTS; i++)); do
		case ${answers[i]} in
		rs1) ((++rs1_count)) ;;
		rs2) ((++rs2_count)) ;;
		*) fail "request $i answered '${answers[i]}'" ;;
		esac
		if ((i > 0)) && [[ ${answers[i]} == "${answers[i - 1]}" ]]; then
			fail "requests $((i - 1)) and $i both went to ${answers[i]}: not alternating"
		fi
	done
	((rs1_count == REQUESTS / 2 && rs2_count == REQUESTS / 2)) ||
		fail "uneven split: rs1=$rs1_count rs2=$rs2_count"
	pretty director "$(ipvsadm -Ln --stats)"
}

setup_topology
setup_ipvs
check_ipvs_table
check_direct_reachability
on_client curl -fsS --max-time 5 "http://$VIP/"
check_round_robin
echo "OK: $REQUESTS requests alternated between rs1 and rs2"
