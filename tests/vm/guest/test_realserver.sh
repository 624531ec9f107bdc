#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fulcrum-realserver (agents/cmd/fulcrum-realserver, built by run.sh into
# /results/bin) against the guest's kernel, in three parts.
#
# 1. Configuration, in one fresh namespace $cfg: dr (VIP on lo) and tun (VIP
#    on tunl0, IPv6 on ip6tnl0: modules ipip and ip6_tunnel) with the ARP and
#    rp_filter sysctls, then remove restores every sysctl, takes the VIPs
#    away and sets lo and the tunnels down again.
#
# 2. Traffic: IPVS in the guest's root namespace forwards one service to a
#    direct-routing real server and to a tunnelling one, on one bridge:
#
#   $client                director (guest root namespace)
#  +----------------+     +----------------------------------+
#  | eth0 10.78.0.2 |--+  | $br 10.78.0.1/24                 |
#  | curl VIP x 4   |  |  |     VIP 10.78.0.100/32           |
#  | arping VIP     |  |  | ipvs TCP VIP:80 rr               |
#  +----------------+  |  |   -> 10.78.0.3:80 -g (DR)        |
#                      |  |   -> 10.78.0.4:80 -i (TUN, ipip) |
#                      |  +----------------------------------+
#                      |                 | bridge $br
#        +-------------+-----------------+--------------------+
#        |                                                    |
#  $rsdr +------------------------+   $rstun +------------------------+
#        | eth0 10.78.0.3         |          | eth0 10.78.0.4         |
#        | lo VIP/32              |          | tunl0 up, VIP/32       |
#        | httpd: "rs-dr"         |          | rp_filter 1 -> 0       |
#        +------------------------+          | httpd: "rs-tun"        |
#                                            +------------------------+
#
# Both real servers answer the client directly, from the VIP. Only the
# director may answer ARP for the VIP: $rsdr holds the VIP before
# fulcrum-realserver runs (and answers ARP for it, the "ARP problem"), and
# no longer does after. Since that address was there first, remove leaves it.
#
# 3. The Go integration tests of cmd/fulcrum-realserver (guest-test-packages),
#    whose tun half needs this kernel's ipip.
set -euo pipefail

readonly BIN=/results/bin/fulcrum-realserver
readonly VIP=10.78.0.100 VIP_DR=10.79.0.1 VIP_TUN=10.79.0.2 VIP6=2001:db8:79::1 VIP6_TUN=2001:db8:79::2
readonly NET=10.78.0
# Unique names, so a leftover from an earlier run cannot be mistaken for ours.
readonly cfg=fr-cfg-$$ client=fr-client-$$ rsdr=fr-rsdr-$$ rstun=fr-rstun-$$ br=fr-br-$$

pretty() { echo -e "\x1b[32m\x1b[1m[+] $1:\x1b[0m $2"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
n0() { pretty director "$*"; "$@"; }

# realserver NS ARGS...: the command under test, with a state file per
# namespace (ip netns exec does not separate /run).
realserver() {
	local ns=$1
	shift
	pretty "$ns" "fulcrum-realserver $*" >&2
	ip netns exec "$ns" "$BIN" "$@" --state "/tmp/$ns.state.json"
}

cleanup() {
	set +e
	ipvsadm -D -t "$VIP:80" 2>/dev/null
	local ns
	for ns in "$cfg" "$client" "$rsdr" "$rstun"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill
		ip netns del "$ns" 2>/dev/null
		rm -rf "/tmp/$ns" "/tmp/$ns.state.json" "/tmp/$ns.state.json.lock"
	done
	ip link del "$br" 2>/dev/null
}
trap cleanup EXIT

sysctl_in() { ip netns exec "$1" sysctl -n "$2"; }

expect_sysctl() {
	local ns=$1 name=$2 want=$3 got
	got=$(sysctl_in "$ns" "$name")
	[[ $got == "$want" ]] || fail "$ns: $name is $got, want $want"
}

# addrs NS DEV: the device's addresses, one per line ("10.79.0.1/32")
addrs() { ip -n "$1" -o addr show dev "$2" | awk '{print $4}'; }
expect_addr() { addrs "$1" "$2" | grep -qx "$3" || fail "$1: $3 not on $2: $(addrs "$1" "$2" | xargs)"; }
expect_no_addr() { ! addrs "$1" "$2" | grep -qx "$3" || fail "$1: $3 still on $2"; }

is_up() { ip -n "$1" -o link show dev "$2" | grep -Eq '[<,]UP[,>]'; }
expect_up() { is_up "$1" "$2" || fail "$1: $2 is not up: $(ip -n "$1" -o link show dev "$2")"; }
expect_down() { ! is_up "$1" "$2" || fail "$1: $2 is still up"; }

readonly ARP=(net.ipv4.conf.all.arp_ignore net.ipv4.conf.all.arp_announce
	net.ipv4.conf.lo.arp_ignore net.ipv4.conf.lo.arp_announce)
readonly WATCHED=("${ARP[@]}" net.ipv4.conf.all.rp_filter net.ipv4.conf.tunl0.rp_filter)

# snapshot NS: the watched sysctls, one "name=value" per line
snapshot() {
	local name
	for name in "${WATCHED[@]}"; do
		echo "$name=$(sysctl_in "$1" "$name" 2>/dev/null || echo absent)"
	done
}

expect_arp_sysctls() {
	local ns=$1
	expect_sysctl "$ns" net.ipv4.conf.all.arp_ignore 1
	expect_sysctl "$ns" net.ipv4.conf.lo.arp_ignore 1
	expect_sysctl "$ns" net.ipv4.conf.all.arp_announce 2
	expect_sysctl "$ns" net.ipv4.conf.lo.arp_announce 2
}

# --- part 1: configuration in a fresh namespace ---------------------------

check_configuration() {
	ip netns add "$cfg"
	# A hardened host filters strictly; tun must turn it off and back on.
	ip netns exec "$cfg" sysctl -qw net.ipv4.conf.all.rp_filter=1
	local before
	modprobe ipip # so that tunl0 (and its sysctls) exist in the snapshot
	ip netns exec "$cfg" sysctl -qw net.ipv4.conf.tunl0.rp_filter=1
	before=$(snapshot "$cfg")
	pretty "$cfg" "before: $(xargs <<<"$before")"
	expect_down "$cfg" lo

	realserver "$cfg" add --mode dr "$VIP_DR" "$VIP6"
	expect_up "$cfg" lo
	expect_addr "$cfg" lo "$VIP_DR/32"
	expect_addr "$cfg" lo "$VIP6/128"
	expect_arp_sysctls "$cfg"
	[[ $(realserver "$cfg" add --mode dr "$VIP_DR") == "nothing to change" ]] ||
		fail "a second add changed something"

	realserver "$cfg" add --mode tun "$VIP_TUN" "$VIP6_TUN"
	expect_up "$cfg" tunl0
	expect_addr "$cfg" tunl0 "$VIP_TUN/32"
	expect_up "$cfg" ip6tnl0
	expect_addr "$cfg" ip6tnl0 "$VIP6_TUN/128"
	expect_sysctl "$cfg" net.ipv4.conf.all.rp_filter 0
	expect_sysctl "$cfg" net.ipv4.conf.tunl0.rp_filter 0
	realserver "$cfg" status
	if realserver "$cfg" status -o json | grep -q '"problems"'; then
		fail "status reports problems"
	fi

	realserver "$cfg" remove "$VIP_TUN" "$VIP6_TUN"
	expect_down "$cfg" tunl0
	expect_down "$cfg" ip6tnl0
	expect_no_addr "$cfg" tunl0 "$VIP_TUN/32"
	expect_sysctl "$cfg" net.ipv4.conf.all.rp_filter 1
	expect_arp_sysctls "$cfg" # the dr VIP still needs them
	if realserver "$cfg" remove "$VIP_TUN"; then
		fail "removing a VIP twice succeeded"
	fi

	realserver "$cfg" remove "$VIP_DR" "$VIP6"
	expect_no_addr "$cfg" lo "$VIP_DR/32"
	expect_no_addr "$cfg" lo "$VIP6/128"
	expect_down "$cfg" lo
	[[ $(snapshot "$cfg") == "$before" ]] ||
		fail "sysctls not restored: $(diff <(echo "$before") <(snapshot "$cfg") | xargs)"
	[[ ! -e /tmp/$cfg.state.json ]] || fail "state file left after the last remove"
	pretty "$cfg" "everything restored"
}

# --- part 2: DR and TUN traffic through IPVS -------------------------------

# join NS HOSTNUM: a namespace on the bridge with $NET.HOSTNUM
join() {
	local ns=$1 num=$2
	ip netns add "$ns"
	# A new namespace copies the root namespace's conf.all: start from the kernel's defaults.
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.all.arp_announce=0 net.ipv4.conf.all.rp_filter=0
	ip link add "fr-$num-$$" type veth peer name eth0 netns "$ns"
	ip link set "fr-$num-$$" master "$br" up
	ip -n "$ns" addr add "$NET.$num/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
}

start_http_server() {
	local ns=$1 name=$2
	mkdir -p "/tmp/$ns"
	echo "$name" >"/tmp/$ns/index.html"
	ip netns exec "$ns" busybox httpd -p 80 -h "/tmp/$ns"
}

setup_traffic() {
	ip link add "$br" type bridge
	ip addr add "$NET.1/24" dev "$br"
	ip addr add "$VIP/32" dev "$br"
	ip link set "$br" up
	join "$client" 2
	join "$rsdr" 3
	join "$rstun" 4
	ip netns exec "$rstun" sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.tunl0.rp_filter=1
	start_http_server "$rsdr" rs-dr
	start_http_server "$rstun" rs-tun
	n0 modprobe ip_vs
	n0 ipvsadm -A -t "$VIP:80" -s rr
	n0 ipvsadm -a -t "$VIP:80" -r "$NET.3:80" -g
	n0 ipvsadm -a -t "$VIP:80" -r "$NET.4:80" -i
	n0 ipvsadm -Ln
}

# normalise_mac MAC: lower case, two digits an octet (busybox prints 2:aa:... for 02:aa:...)
normalise_mac() {
	local octets
	IFS=: read -ra octets <<<"$1"
	printf '%02x:%02x:%02x:%02x:%02x:%02x\n' "0x${octets[0]}" "0x${octets[1]}" "0x${octets[2]}" \
		"0x${octets[3]}" "0x${octets[4]}" "0x${octets[5]}"
}

# arp_answerers: the MAC addresses that answer the client's ARP for the VIP
arp_answerers() {
	local out mac
	out=$(ip netns exec "$client" busybox arping -c 3 -w 5 -I eth0 "$VIP" 2>&1) || true
	echo "$out" >&2
	{ grep -o '\[[0-9a-fA-F:]*\]' <<<"$out" || true; } | tr -d '[]' |
		while read -r mac; do normalise_mac "$mac"; done | sort -u
}

check_traffic() {
	local director answers=() i got
	director=$(normalise_mac "$(cat "/sys/class/net/$br/address")")

	# The ARP problem: with the VIP on lo and default sysctls, $rsdr answers
	# ARP for it too.
	ip -n "$rsdr" addr add "$VIP/32" dev lo
	got=$(arp_answerers | xargs)
	pretty client "ARP for $VIP answered by: $got (director $director)"
	[[ $got == *" "* ]] || fail "control: only $got answered with the VIP on $rsdr's lo"

	realserver "$rsdr" add --mode dr "$VIP"
	realserver "$rstun" add --mode tun "$VIP"
	got=$(arp_answerers | xargs)
	pretty client "ARP for $VIP answered by: $got"
	[[ $got == "$director" ]] || fail "ARP for the VIP answered by $got, want only the director $director"

	ip -n "$client" neigh flush dev eth0
	for ((i = 0; i < 4; i++)); do
		answers+=("$(ip netns exec "$client" curl -fsS --max-time 10 "http://$VIP/")")
	done
	pretty client "answers: ${answers[*]}"
	[[ ${answers[*]} == "rs-dr rs-tun rs-dr rs-tun" || ${answers[*]} == "rs-tun rs-dr rs-tun rs-dr" ]] ||
		fail "want answers alternating between rs-dr and rs-tun"
	# arp_announce=2: the real servers' own ARP requests, sent while
	# replying from the VIP, must not have taught the client their MAC.
	got=$(ip -n "$client" neigh show "$VIP" dev eth0 | awk '{print $3}')
	[[ -n $got && $(normalise_mac "$got") == "$director" ]] || fail "client's neighbour entry for the VIP is $got, want $director"
	pretty director "$(ipvsadm -Ln --stats)"

	realserver "$rsdr" remove "$VIP"
	expect_addr "$rsdr" lo "$VIP/32" # it was there before add
	expect_sysctl "$rsdr" net.ipv4.conf.all.arp_ignore 0
	realserver "$rstun" remove "$VIP"
	expect_no_addr "$rstun" tunl0 "$VIP/32"
	expect_down "$rstun" tunl0
	expect_sysctl "$rstun" net.ipv4.conf.all.rp_filter 1
	expect_sysctl "$rstun" net.ipv4.conf.tunl0.rp_filter 1
}

# The Go integration tests (cmd/fulcrum-realserver, listed in
# guest-test-packages) skip tun where the kernel has no ipip; here it must run.
run_go_tests() {
	local out
	pretty guest "fulcrum-realserver.test -test.run InNetworkNamespace"
	out=$(/results/bin/fulcrum-realserver.test -test.v -test.count=1 -test.run InNetworkNamespace 2>&1) ||
		{ echo "$out"; fail "Go integration tests failed"; }
	echo "$out" | grep -E '^(---|ok|PASS|FAIL)'
	if grep -q "no ipip in this kernel" <<<"$out"; then
		echo "$out"
		fail "the Go test did not exercise tun"
	fi
}

[[ -x $BIN ]] || fail "$BIN missing: run.sh builds agents/cmd/* into /results/bin"
check_configuration
setup_traffic
check_traffic
run_go_tests
echo "OK: dr and tun configured and restored; 4 requests alternated between a DR and a TUN real server; only the director answered ARP for the VIP"
