#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer 4, NAT: the IPVS schedulers test_l4_nat_sched leaves out (mh, sed, nq,
# wlc), source hashing with and without fallback around a weight-0 member, and
# persistence by /24, set up by keepalived from the files Fulcrum's compiler
# made for tests/vm/l4/nat-sched-more.json.
#
#  $client                        $director                       $rs1, $rs2
# +-----------------------+     +--------------------------+     +---------------------------+
# | eth0 10.77.1.2        |-----| front 10.77.1.1          |-----| eth0 10.77.2.2 / 10.77.3.2 |
# |  + 10.77.1.11-.18,    | veth|   VIP 10.77.1.100/32     | veth| nginx :80 "rs1" / "rs2"     |
# |    .21, .22           |     |   route 10.77.5.0/24     |     | via 10.77.2.1 / 10.77.3.1   |
# |  + 10.77.5.21/24      |     | rs1 10.77.2.1            |     +---------------------------+
# | curl, socat           |     | rs2 10.77.3.1            |
# +-----------------------+     | keepalived               |
#                               |   (nat-sched-more)       |
#                               +--------------------------+
#
# VIP 10.77.1.100:
#   :80 mh (maglev)     each of 8 source addresses sticks to one server; both
#                       servers get some
#   :81 sed, 1:1        while one server holds a connection, 4 new go to the idle one
#   :82 nq, 1:3         the same: never queue, whatever the weights
#   :83 sed, 1:3        rs2 (weight 3) takes the held connection, then keeps
#                       taking new ones: (1+1)/3 < (0+1)/1; nq, when its held
#                       connection is on rs2 as well, sends them to idle rs1
#   :84 wlc, 3:1        one connection held on each server (equal load): 4 new
#                       connections all go to rs1: (256+i)/3 < 256/1
#   :85 sh, 1:1         control: where each of 8 source addresses hashes
#   :86 sh, rs1 at weight 0 (set by the operator, no fallback asked): sources
#                       that hash to rs1 fail, the others reach rs2
#   :87 sh, rs1 drained: the compiler adds sh-fallback by itself (drain means
#                       "move new clients", not "refuse them"): every source
#                       reaches rs2
#   :88 rr + persistence, granularity /24 (ipv4_mask 24): 10.77.1.21 and
#                       10.77.1.22 share a server; 10.77.5.21 gets the other
set -euo pipefail

readonly VIP=10.77.1.100
readonly client=fc-l4c-$$ director=fc-l4d-$$ rs1=fc-l4r1-$$ rs2=fc-l4r2-$$
readonly RS1=10.77.2.2:80 RS2=10.77.3.2:80
readonly SOURCES=(10.77.1.11 10.77.1.12 10.77.1.13 10.77.1.14 10.77.1.15 10.77.1.16 10.77.1.17 10.77.1.18)
WORK=$(mktemp -d /tmp/l4-nat-sched-more.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
HELD=()
BUSY=

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	l4_cleanup
}
trap cleanup EXIT

setup_topology() {
	local ns source
	for ns in "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	ip -n "$director" route add 10.77.5.0/24 dev front
	nat_server "$director" "$rs1" rs1 10.77.2
	nat_server "$director" "$rs2" rs2 10.77.3
	for source in "${SOURCES[@]}" 10.77.1.21 10.77.1.22; do
		ip -n "$client" addr add "$source/24" dev eth0
	done
	ip -n "$client" addr add 10.77.5.21/24 dev eth0
	start_web "$rs1" rs1
	start_web "$rs2" rs2
	wait_http "$director" http://10.77.2.2/
	wait_http "$director" http://10.77.3.2/
}

# ask PORT [CURL ARGS...]: one request to VIP:PORT from the client
ask() {
	local port=$1
	shift
	http_get "$client" "http://$VIP:$port/" "$@"
}

ask_n() { http_get_n "$1" "$client" "http://$VIP:$2/" "${@:3}"; }

# try PORT SOURCE: the answer to one request from SOURCE, or "failed"
try() {
	ip netns exec "$client" curl -fsS --max-time 3 --interface "$2" "http://$VIP:$1/" 2>/dev/null || echo failed
}

other() { [[ $1 == rs1 ]] && echo rs2 || echo rs1; }

# hold PORT: one more idle connection to VIP:PORT, kept until release_all
hold() {
	hold_tcp "$client" "$VIP" "$1"
	HELD+=("$HELD_PID")
}

release_all() {
	local pid
	for pid in "${HELD[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${HELD[@]}"; do wait "$pid" 2>/dev/null || true; done
	HELD=()
}

active_total() {
	(($(active_conns "$director" "-t $VIP:$1" "$RS1") + $(active_conns "$director" "-t $VIP:$1" "$RS2") == $2))
}

# busy_server PORT: the name of the server holding the one active connection
busy_server() {
	if (($(active_conns "$director" "-t $VIP:$1" "$RS1") == 1)); then echo rs1; else echo rs2; fi
}

check_table() {
	local table
	table=$(ipvs "$director")
	grep -Eq "^TCP +$VIP:80 mh" <<<"$table" || fail ":80 is not mh"
	grep -Eq "^TCP +$VIP:81 sed" <<<"$table" || fail ":81 is not sed"
	grep -Eq "^TCP +$VIP:82 nq" <<<"$table" || fail ":82 is not nq"
	grep -Eq "^TCP +$VIP:83 sed" <<<"$table" || fail ":83 is not sed"
	grep -Eq "^TCP +$VIP:84 wlc" <<<"$table" || fail ":84 is not wlc"
	grep -Eq "^TCP +$VIP:85 sh *$" <<<"$table" || fail ":85 is not plain sh"
	grep -Eq "^TCP +$VIP:86 sh *$" <<<"$table" || fail ":86 is not plain sh"
	grep -Eq "^TCP +$VIP:87 sh .*sh-fallback" <<<"$table" || fail ":87 is not sh with sh-fallback"
	grep -Eq "^TCP +$VIP:88 rr .*persistent 300 mask 255.255.255.0" <<<"$table" ||
		fail ":88 is not rr, persistent 300 with mask 255.255.255.0"
	has_real_server "$director" "-t $VIP:86" "$RS1" 0 || fail "rs1 is not at weight 0 on :86"
	has_real_server "$director" "-t $VIP:87" "$RS1" 0 || fail "drained rs1 is not at weight 0 on :87"
	has_real_server "$director" "-t $VIP:84" "$RS1" 3 || fail "rs1 is not at weight 3 on :84"
	pretty ok "ipvsadm shows every service with the compiled scheduler, flags, weights and mask"
}

check_mh() {
	local source answers seen=()
	for source in "${SOURCES[@]}"; do
		answers=$(ask_n 2 80 --interface "$source")
		[[ $answers == "rs1 rs1" || $answers == "rs2 rs2" ]] || fail "mh: $source moved between servers: $answers"
		seen+=("${answers%% *}")
	done
	[[ " ${seen[*]} " == *" rs1 "* && " ${seen[*]} " == *" rs2 "* ]] ||
		fail "mh: 8 source addresses all hashed to ${seen[0]}"
	pretty ok "mh: each of 8 sources stuck to one server (2 requests each): ${seen[*]}"
}

# idle_gets_new PORT WHAT: with one connection held, 4 new go to the idle server
idle_gets_new() {
	local port=$1 what=$2 busy idle
	hold "$port"
	wait_until 20 "one active connection on :$port" active_total "$port" 1
	busy=$(busy_server "$port")
	idle=$(other "$busy")
	ipvs "$director" -t "$VIP:$port"
	expect_answers "$what: $busy holds one connection, 4 new connections" \
		"$idle $idle $idle $idle" "$(ask_n 4 "$port")"
	release_all
	BUSY=$busy
}

# After idle_gets_new 82: BUSY is where nq put the held connection.
check_sed_weighted() {
	local nq_busy=$BUSY
	hold 83
	wait_until 20 "one active connection on :83" active_total 83 1
	[[ $(busy_server 83) == rs2 ]] || fail "sed 1:3 gave the first connection to rs1 (weight 1)"
	ipvs "$director" -t "$VIP:83"
	expect_answers "sed 1:3: rs2 (weight 3) holds one connection, rs1 idle; 3 new connections" \
		"rs2 rs2 rs2" "$(ask_n 3 83)"
	release_all
	if [[ $nq_busy == rs2 ]]; then
		pretty ok "sed and nq differ: with weight-3 rs2 holding one connection, sed 1:3 kept choosing rs2, nq 1:3 chose idle rs1"
	else
		pretty note "nq's held connection went to rs1 (the order IPVS lists the servers in): sed and nq agreed there"
	fi
}

check_wlc() {
	hold 84
	wait_until 20 "one active connection on :84" active_total 84 1
	hold 84
	wait_until 20 "two active connections on :84" active_total 84 2
	(($(active_conns "$director" "-t $VIP:84" "$RS1") == 1)) ||
		fail "wlc did not spread the two held connections: $(ipvs "$director" -t "$VIP:84")"
	ipvs "$director" -t "$VIP:84"
	expect_answers "wlc 3:1, one connection held on each server, 4 new connections" \
		"rs1 rs1 rs1 rs1" "$(ask_n 4 84)"
	release_all
}

check_hash_fallback() {
	local source home without with control=() n_rs1=0
	for source in "${SOURCES[@]}"; do
		home=$(try 85 "$source")
		without=$(try 86 "$source")
		with=$(try 87 "$source")
		control+=("$home")
		pretty "$client" "$source: sh (both up) -> $home; rs1 weight 0: sh -> $without; rs1 drained: sh -> $with"
		[[ $home == rs1 || $home == rs2 ]] || fail "sh control: $source got '$home'"
		[[ $with == rs2 ]] || fail "sh-fallback: $source got '$with' with rs1 at weight 0"
		if [[ $home == rs1 ]]; then
			((++n_rs1))
			[[ $without == failed ]] || fail "sh without fallback: $source (hashed to rs1 at weight 0) got '$without'"
		else
			[[ $without == rs2 ]] || fail "sh without fallback: $source (hashed to rs2) got '$without'"
		fi
	done
	((n_rs1 > 0 && n_rs1 < ${#SOURCES[@]})) || fail "sh control: 8 sources did not spread: ${control[*]}"
	pretty ok "sh: the $n_rs1 sources that hash to rs1 fail while it is at weight 0 without fallback; with rs1 drained all 8 reach rs2"
}

check_persistence_mask() {
	local a b c
	a=$(ask_n 3 88 --interface 10.77.1.21)
	b=$(ask_n 3 88 --interface 10.77.1.22)
	c=$(ask_n 3 88 --interface 10.77.5.21)
	local first=${a%% *}
	[[ $a == "$first $first $first" ]] || fail "persistence /24: 10.77.1.21 moved: $a"
	[[ $b == "$first $first $first" ]] || fail "persistence /24: 10.77.1.22 ($b) not with 10.77.1.21 ($a)"
	local third=${c%% *}
	[[ $c == "$third $third $third" ]] || fail "persistence /24: 10.77.5.21 moved: $c"
	[[ $third != "$first" ]] || fail "persistence /24: 10.77.5.0/24 on $first too; rr should place its template on the other"
	# The persistence templates (source port 0) hold the client's network, not its address.
	local templates
	templates=$(ip netns exec "$director" ipvsadm -Lnc | awk '$4 ~ /:0$/ && $5 == "'"$VIP"':88"')
	echo "$templates"
	if ! grep -Eq ' 10\.77\.1\.0:0 ' <<<"$templates" || ! grep -Eq ' 10\.77\.5\.0:0 ' <<<"$templates"; then
		ip netns exec "$director" ipvsadm -Lnc
		fail "persistence /24: no templates for 10.77.1.0 and 10.77.5.0 on :88"
	fi
	[[ $(wc -l <<<"$templates") == 2 ]] || fail "persistence /24: not one template per /24 on :88"
	pretty ok "persistence /24: 10.77.1.21 -> $a; 10.77.1.22 -> $b (same /24); 10.77.5.21 -> $c; one template per /24"
}

setup_topology
start_keepalived "$director" nat-sched-more
wait_for_services "$director" 9
check_table
check_mh
idle_gets_new 81 "sed 1:1"
idle_gets_new 82 "nq 1:3"
check_sed_weighted
check_wlc
check_hash_fallback
check_persistence_mask
echo "OK: mh, sed, nq, wlc weights, sh with and without fallback around a weight-0 member, persistence by /24"
