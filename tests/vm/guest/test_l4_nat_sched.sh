#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer 4, NAT: the IPVS schedulers, UDP with one-packet scheduling, a port
# range through an nftables firewall mark and the IPVS sync daemons, all set up
# by keepalived from the files Fulcrum's compiler made for tests/vm/l4/nat-sched.json.
#
#  $client                       $director                             $rs1
# +---------------------+      +-------------------------------+      +----------------------+
# | eth0 10.77.1.2      |------| front 10.77.1.1               |      | eth0 10.77.2.2       |
# |  + .11-.16, .21-.22 | veth |   VIP 10.77.1.100/32          |------| nginx :80 "rs1"      |
# | curl, python3 (UDP) |      | rs1   10.77.2.1               | veth |  :8000 :8050 "rs1:P" |
# +---------------------+      | rs2   10.77.3.1               |--+   | socat udp/53 "rs1"   |
#                              | keepalived (nat-sched case)   |  |   | via 10.77.2.1        |
#                              | nft fulcrum.nft: 8000-8099    |  |   +----------------------+
#                              |   -> firewall mark            |  |      $rs2: the same, 10.77.3.2,
#                              +-------------------------------+  +---   "rs2", via 10.77.3.1
#
# VIP 10.77.1.100, one virtual service per port:
#   :80 rr      8 requests alternate exactly
#   :81 wrr     weights 3:1, 8 requests give 6:2
#   :82 lc      while a client holds one connection open, new connections all
#               go to the other (idle) server
#   :83 sh      each of 6 source addresses sticks to one server; they spread
#   :84 sh-port one source address, 8 source ports: both servers answer
#   :85 rr + persistence: each of 2 clients stays on one server, and not the same
#   udp/53 rr   8 datagrams from 8 source ports alternate; answers from the VIP
#   :8000-8099  a firewall-mark service: ports 8000 and 8050 both reach the real
#               servers (and keep their port), 8100 does not
# and keepalived runs the master and backup sync daemons (ipvs_sync, syncid 42).
set -euo pipefail

readonly VIP=10.77.1.100
readonly client=fc-l4c-$$ director=fc-l4d-$$ rs1=fc-l4r1-$$ rs2=fc-l4r2-$$
WORK=$(mktemp -d /tmp/l4-nat-sched.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	l4_cleanup
}
trap cleanup EXIT

setup_topology() {
	local ns
	for ns in "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	nat_server "$director" "$rs1" rs1 10.77.2
	nat_server "$director" "$rs2" rs2 10.77.3
	local host
	for host in 11 12 13 14 15 16 21 22; do
		ip -n "$client" addr add "10.77.1.$host/24" dev eth0
	done
	start_web "$rs1" rs1
	start_web "$rs2" rs2
	start_udp_name "$rs1" rs1 53
	start_udp_name "$rs2" rs2 53
	# The real servers answer directly first: a failure below is about IPVS.
	wait_http "$director" http://10.77.2.2/
	wait_http "$director" http://10.77.3.2:8050/
}

# ask PORT [CURL ARGS...]: one request to the VIP from the client; prints the answer
ask() {
	local port=$1
	shift
	http_get "$client" "http://$VIP:$port/" "$@"
}

# ask_n N PORT [CURL ARGS...]: N requests, answers on one line
ask_n() { http_get_n "$1" "$client" "http://$VIP:$2/" "${@:3}"; }

check_table() {
	local table
	table=$(ipvs "$director")
	grep -Eq "^TCP +$VIP:80 rr" <<<"$table" || fail ":80 is not rr"
	grep -Eq "^TCP +$VIP:81 wrr" <<<"$table" || fail ":81 is not wrr"
	grep -Eq "^TCP +$VIP:82 lc" <<<"$table" || fail ":82 is not lc"
	grep -Eq "^TCP +$VIP:83 sh *$" <<<"$table" || fail ":83 is not plain sh"
	grep -Eq "^TCP +$VIP:84 sh .*sh-port" <<<"$table" || fail ":84 is not sh with sh-port"
	grep -Eq "^TCP +$VIP:85 rr .*persistent 300" <<<"$table" || fail ":85 is not rr, persistent 300"
	grep -Eq "^UDP +$VIP:53 rr *$" <<<"$table" || fail "udp/53 is not plain rr"
	grep -Eq "^FWM +$MARK rr" <<<"$table" || fail "no firewall-mark service $MARK"
	has_real_server "$director" "-t $VIP:81" 10.77.2.2:80 3 || fail "rs1 does not have weight 3 on :81"
	[[ $(ipvs "$director" -t "$VIP:80" | grep -c Masq) == 2 ]] || fail ":80 does not masquerade to 2 real servers"
	pretty ok "ipvsadm shows every service with the compiled scheduler, flags and weights"
}

check_rr() {
	expect_alternating "rr, 8 requests" "$(ask_n 8 80)"
}

check_wrr() {
	local answers
	answers=$(ask_n 8 81)
	expect_counts "wrr 3:1, 8 requests" 6 2 "$answers"
}

active_on() {
	ipvs "$director" -t "$VIP:82" | awk -v rs="$1" '$2 == rs { print $5 }'
}

one_held_connection() {
	(($(active_on 10.77.2.2:80) + $(active_on 10.77.3.2:80) == 1))
}

check_lc() {
	pretty "$client" "holding one idle connection to $VIP:82"
	ip netns exec "$client" socat -u "TCP4:$VIP:82" /dev/null </dev/null &
	local holder_pid=$!
	wait_until 20 "one active connection on :82" one_held_connection
	local busy idle
	if (($(active_on 10.77.2.2:80) == 1)); then busy=rs1 idle=rs2; else busy=rs2 idle=rs1; fi
	ipvs "$director" -t "$VIP:82"
	expect_answers "lc, 6 new connections while $busy holds one" \
		"$idle $idle $idle $idle $idle $idle" "$(ask_n 6 82)"
	kill "$holder_pid" 2>/dev/null || true
	wait "$holder_pid" 2>/dev/null || true
}

check_sh() {
	local host answers seen=()
	for host in 11 12 13 14 15 16; do
		answers=$(ask_n 2 83 --interface "10.77.1.$host")
		[[ $answers == "rs1 rs1" || $answers == "rs2 rs2" ]] ||
			fail "sh: client 10.77.1.$host moved between servers: $answers"
		seen+=("${answers%% *}")
		pretty "$client" "sh: 10.77.1.$host -> $answers"
	done
	[[ " ${seen[*]} " == *" rs1 "* && " ${seen[*]} " == *" rs2 "* ]] ||
		fail "sh: 6 source addresses all hashed to ${seen[0]}"
	pretty ok "sh: every source address stuck to one server; the 6 spread: ${seen[*]}"
}

check_sh_port() {
	local port answers=()
	# Below the ephemeral range (32768-60999), so no earlier connection's
	# TIME_WAIT holds them; a few spare ports each, in case one is taken.
	for port in 20000 20010 20020 20030 20040 20050 20060 20070; do
		answers+=("$(ask 84 --local-port "$port-$((port + 9))")")
	done
	[[ " ${answers[*]} " == *" rs1 "* && " ${answers[*]} " == *" rs2 "* ]] ||
		fail "sh-port: 8 source ports of one address all went to ${answers[0]}"
	pretty ok "sh-port: one address, 8 source ports: ${answers[*]}"
}

check_persistence() {
	local a b
	a=$(ask_n 4 85 --interface 10.77.1.21)
	b=$(ask_n 4 85 --interface 10.77.1.22)
	[[ $a == "${a%% *} ${a%% *} ${a%% *} ${a%% *}" ]] || fail "persistence: 10.77.1.21 moved: $a"
	[[ $b == "${b%% *} ${b%% *} ${b%% *} ${b%% *}" ]] || fail "persistence: 10.77.1.22 moved: $b"
	# rr places the second client's template on the other server.
	[[ ${a%% *} != "${b%% *}" ]] || fail "persistence: both clients on ${a%% *}; rr should alternate templates"
	pretty ok "rr + persistence: 10.77.1.21 -> $a; 10.77.1.22 -> $b"
}

check_udp() {
	local answers
	answers=$(udp_ask "$client" "$VIP" 53 8 each | tr '\n' ' ')
	expect_alternating "UDP rr, 8 datagrams from 8 source ports, answered from the VIP" "${answers% }"
}


check_port_range() {
	on "$director" nft list table inet fulcrum
	local a b
	a=$(ask 8000)
	b=$(ask 8050)
	[[ $a =~ ^rs[12]:8000$ ]] || fail "port range: $VIP:8000 answered '$a'"
	[[ $b =~ ^rs[12]:8050$ ]] || fail "port range: $VIP:8050 answered '$b'"
	[[ ${a%:*} != "${b%:*}" ]] || fail "port range: rr sent both connections to ${a%:*}"
	if ip netns exec "$client" curl -fsS --max-time 3 "http://$VIP:8100/" 2>/dev/null; then
		fail "port range: $VIP:8100 (outside 8000-8099) was forwarded"
	fi
	# The connection table, not --stats: the kernel folds per-CPU counters into
	# those only every few seconds.
	ip netns exec "$director" ipvsadm -Lnc | grep -E ':80(00|50) ' || true
	pretty ok "port range via mark $MARK: :8000 -> $a, :8050 -> $b, :8100 not forwarded"
}

sync_daemons_up() {
	local daemons
	daemons=$(ip netns exec "$director" ipvsadm -L --daemon)
	grep -q 'master sync daemon.*front.*syncid=42' <<<"$daemons" &&
		grep -q 'backup sync daemon.*front.*syncid=42' <<<"$daemons"
}

check_sync_daemon() {
	wait_until 20 "master and backup sync daemons with syncid 42" sync_daemons_up
	on "$director" ipvsadm -L --daemon
	pretty ok "keepalived started the master and backup sync daemons (syncid 42 on front)"
}

setup_topology
MARK=$(python3 -c 'import json,sys; print(*[s["fwmark"] for s in json.load(open(sys.argv[1]))["services"] if s["fwmark"]])' \
	"$L4_CASES/nat-sched/keepalived.d/ipvs.json")
readonly MARK
start_keepalived "$director" nat-sched
wait_for_services "$director" 8
check_table
check_rr
check_wrr
check_lc
check_sh
check_sh_port
check_persistence
check_udp
check_port_range
check_sync_daemon
echo "OK: NAT schedulers rr wrr lc sh sh-port, persistence, UDP, port range, sync daemons"
