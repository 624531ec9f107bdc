#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ip_vs_dllc's load interface and its safety while services change:
#
#  $client                    $director                          $rsA, $rsB, $rsC
# +---------------------+    +------------------------------+    +---------------------------+
# | eth0 10.77.1.2      |----| front 10.77.1.1              |----| eth0 10.77.{2,3,4}.2      |
# |      fd77:1::2      |veth|   VIP  10.77.1.100/32        |veth|      fd77:{2,3,4}::2      |
# | python3 clients     |    |   VIP6 fd77:1::100/128       |    | :9000 name, then held open|
# +---------------------+    | ipvsadm -s dllc (and wlc)    |    | :9001 name, then closed   |
#                            +------------------------------+    +---------------------------+
#
#   tcp VIP:9001     -> A, B :9001   (C comes and goes)
#   tcp [VIP6]:9001  -> [A6], [B6] :9001
#   fwm 7            -> A :9001
#   tcp VIP:9002     -> A :9001, scheduled by wlc: not dllc's
#   tcp VIP:9003     -> A, B :9000, A with an upper threshold of 1 connection
#
#   - writes for IPv4, IPv6 and firewall-mark services; IPv6 traffic flows
#   - bad writes (two lines, junk, missing or extra fields, bad numbers and
#     addresses, IPv6 without brackets, overlong, unknown service, unknown
#     destination, a service of another scheduler) fail with EINVAL or
#     ENOENT and change nothing (the file reads the same)
#   - an overloaded destination (IP_VS_DEST_F_OVERLOAD) takes nothing, however
#     low its load
#   - while loads are written and connections made without pause: 12 rounds
#     of adding and deleting C (no connection fails), 4 switches of the
#     scheduler to wlc and back (C's load writable at once after each), the
#     service deleted under that traffic, recreated, switched onto dllc
#   - the kernel log has no BUG, WARNING, Oops or RCU stall
set -euo pipefail

readonly client=fc-dbc-$$ director=fc-dbd-$$ rsA=fc-dbA-$$ rsB=fc-dbB-$$ rsC=fc-dbC-$$
WORK=$(mktemp -d /tmp/dllc-robust.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
# shellcheck source=tests/vm/guest/dllc-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dllc-lib.sh"
readonly S1="tcp $VIP:9001" S6="tcp [$VIP6]:9001" SF="fwm 7"
readonly A6='[fd77:2::2]:9001' B6='[fd77:3::2]:9001'

cleanup() {
	set +e
	l4_cleanup
	[[ ! -e $DLLC_PARAMS/max_age_ms ]] || echo 3000 >"$DLLC_PARAMS/max_age_ms"
}
trap cleanup EXIT

# ipvs_do ARGS...: ipvsadm ARGS in the director, quietly
ipvs_do() {
	ip netns exec "$director" ipvsadm "$@"
}

setup_services() {
	on "$director" ipvsadm -A -t "$VIP:9001" -s dllc
	ipvs_do -a -t "$VIP:9001" -r "$RSA:9001" -m
	ipvs_do -a -t "$VIP:9001" -r "$RSB:9001" -m
	on "$director" ipvsadm -A -t "[$VIP6]:9001" -s dllc
	ipvs_do -a -t "[$VIP6]:9001" -r "$A6" -m
	ipvs_do -a -t "[$VIP6]:9001" -r "$B6" -m
	on "$director" ipvsadm -A -f 7 -s dllc
	ipvs_do -a -f 7 -r "$RSA:9001" -m
	on "$director" ipvsadm -A -t "$VIP:9002" -s wlc
	ipvs_do -a -t "$VIP:9002" -r "$RSA:9001" -m
	ipvs "$director"
}

check_good_writes() {
	dllc_write "$director" "$S1 $RSA:9001 400" "$S1 $RSB:9001 600" "$S6 $A6 250" "$SF $RSA:9001 300" \
		"$S6 $B6 350"$'\n'
	dllc_table "$director"
	expect_field "$director" "$S1" "$RSB:9001" load 600
	expect_field "$director" "$S6" "$A6" load 250
	expect_field "$director" "$S6" "$B6" effective 350
	expect_field "$director" "$SF" "$RSA:9001" load 300
	pretty ok "IPv4, IPv6 (brackets, a trailing newline) and firewall-mark writes read back"
	local answers
	answers=$(ask_names "$client" "$VIP6" 9001 2 | tr '\n' ' ')
	[[ $answers =~ ^([AB]\ ){2}$ ]] || fail "IPv6 service: answers '$answers'"
	pretty ok "IPv6 traffic through dllc: $answers"
}

# without_age: the file without its age_ms column (it moves by itself)
without_age() {
	dllc_table "$director" | awk '{ $5 = ""; print }'
}

check_bad_writes() {
	local before after results expected=() lines=() long
	long="$S1 $RSA:9001 $(printf '0%.0s' $(seq 200))1"
	# expected error, line
	local cases=(
		EINVAL "$S1 $RSA:9001 100"$'\n'"$S1 $RSB:9001 100"
		EINVAL "$S1 $RSA:9001 100"$'\n\n'
		EINVAL "hello"
		EINVAL "$S1 $RSA:9001"
		EINVAL "$S1 $RSA:9001 100 7"
		EINVAL "icmp $VIP:9001 $RSA:9001 100"
		EINVAL "$S1 $RSA:9001 -5"
		EINVAL "$S1 $RSA:9001 +5"
		EINVAL "$S1 $RSA:9001 12abc"
		EINVAL "$S1 $RSA:9001 4294967296"
		EINVAL "tcp $VIP:70000 $RSA:9001 100"
		EINVAL "tcp 10.77.1:9001 $RSA:9001 100"
		EINVAL "tcp $VIP6:9001 $A6 100"
		EINVAL "$S6 fd77:2::2:9001 100"
		EINVAL "tcp [$VIP6:9001 $A6 100"
		EINVAL "fwm 0 $RSA:9001 100"
		EINVAL "fwm x $RSA:9001 100"
		EINVAL "$long"
		ENOENT "tcp $VIP:9999 $RSA:9001 100"
		ENOENT "udp $VIP:9001 $RSA:9001 100"
		ENOENT "$S1 $RSC:9001 100"
		ENOENT "$S1 $RSA:9000 100"
		ENOENT "$S1 $A6 100"
		ENOENT "fwm 8 $RSA:9001 100"
		ENOENT "fwm 7 $A6 100"
		ENOENT "tcp $VIP:9002 $RSA:9001 100"
	)
	local i
	for ((i = 0; i < ${#cases[@]}; i += 2)); do
		expected+=("${cases[i]}")
		lines+=("${cases[i + 1]}")
	done
	# The writes take seconds on a loaded machine: the loads must not go stale meanwhile
	# (an effective load would turn to 1000 for age, not for a bad write).
	dllc_param max_age_ms 600000
	before=$(without_age)
	results=$(dllc_try_write "$director" "${lines[@]}" | tr '\n' ' ')
	[[ $results == "${expected[*]} " ]] || {
		for ((i = 0; i < ${#lines[@]}; i++)); do
			printf '    %-8s %s\n' "$(cut -d' ' -f$((i + 1)) <<<"$results")" "$(printf %q "${lines[i]}")"
		done
		fail "bad writes: want ${expected[*]}, got $results"
	}
	after=$(without_age)
	dllc_param max_age_ms 3000
	[[ $before == "$after" ]] || fail "bad writes changed the loads:"$'\n'"$before"$'\n'"---"$'\n'"$after"
	pretty ok "${#lines[@]} bad writes failed as they should ($results) and changed nothing"
}

check_overload() {
	local s3="tcp $VIP:9003" out
	on "$director" ipvsadm -A -t "$VIP:9003" -s dllc
	ipvs_do -a -t "$VIP:9003" -r "$RSA:9000" -m -w 0
	ipvs_do -a -t "$VIP:9003" -r "$RSB:9000" -m -w 1
	hold_conns "$client" "$VIP" 9003 3 "$WORK/b3"
	[[ $(names_in "$WORK/b3") == "B B B" ]] || fail "VIP:9003: 3 connections, A drained: $(names_in "$WORK/b3")"
	on "$director" ipvsadm -e -t "$VIP:9003" -r "$RSA:9000" -m -w 1 -x 1
	dllc_write "$director" "$s3 $RSA:9000 100" "$s3 $RSB:9000 900"
	local expect
	for expect in A B; do
		out=$WORK/next-$expect
		hold_conns "$client" "$VIP" 9003 1 "$out"
		[[ $(names_in "$out") == "$expect" ]] ||
			{ ipvs "$director" -t "$VIP:9003"; fail "VIP:9003: want $expect, got $(names_in "$out")"; }
	done
	ipvs "$director" -t "$VIP:9003"
	pretty ok "A (load 100, upper threshold 1) took one connection, then overloaded none: B (load 900) did"
	on "$director" ipvsadm -e -t "$VIP:9003" -r "$RSA:9000" -m -w 1 -x 0
	hold_conns "$client" "$VIP" 9003 1 "$WORK/next-A2"
	[[ $(names_in "$WORK/next-A2") == A ]] || fail "VIP:9003 without the threshold: $(names_in "$WORK/next-A2")"
	pretty ok "threshold lifted: A again"
}

# background_load: loads written without pause into VIP:9001 (some fail while
# the scheduler is wlc or C is gone: that is the point)
background_load() {
	# shellcheck disable=SC2016 # the inner script's own variables
	ip netns exec "$director" bash -c '
		i=0
		while :; do
			for rs in "$2" "$3" "$4"; do
				echo "$1 $rs:9001 $((100 + i % 900))" >"$5" 2>/dev/null
			done
			i=$((i + 37))
		done' - "$S1" "$RSA" "$RSB" "$RSC" "$DLLC_PROC" </dev/null >/dev/null 2>&1 &
	BG_WRITER=$!
}

# background_traffic: short connections to VIP:9001 without pause, each
# answer (or "error") a line in $WORK/traffic
background_traffic() {
	ip netns exec "$client" python3 - "$VIP" >"$WORK/traffic" 2>&1 <<-'EOF' &
		import socket, sys
		while True:
		    try:
		        with socket.create_connection((sys.argv[1], 9001), timeout=5) as s:
		            data = b""
		            while chunk := s.recv(64):
		                data += chunk
		        print(data.decode().strip() or "error", flush=True)
		    except OSError:
		        print("error", flush=True)
	EOF
	BG_TRAFFIC=$!
}

# traffic_lines: how many connections the background traffic has made
traffic_lines() {
	wc -l <"$WORK/traffic"
}

# traffic_failures FROM TO: failed connections among lines FROM+1..TO
traffic_failures() {
	sed -n "$(($1 + 1)),$2p" "$WORK/traffic" | grep -cvx '[ABC]' || true
}

check_churn() {
	dllc_param max_age_ms 600000
	background_load
	background_traffic
	local round start mark0 mark1 mark2 mark3
	wait_until 20 "the background traffic" test -s "$WORK/traffic"
	mark0=$(traffic_lines)
	start=$(now_ms)
	for round in $(seq 12); do
		ipvs_do -a -t "$VIP:9001" -r "$RSC:9001" -m
		[[ $(dllc_try_write "$director" "$S1 $RSC:9001 200" 2>/dev/null) == ok ]] ||
			fail "round $round: writing C's load"
		[[ $(ask_names "$client" "$VIP" 9001 1) =~ ^[ABC]$ ]] || fail "round $round: no answer"
		ipvs_do -d -t "$VIP:9001" -r "$RSC:9001"
	done
	mark1=$(traffic_lines)
	pretty ok "12 rounds of C added and deleted in $(seconds_since "$start") s, $((mark1 - mark0))\
 connections meanwhile, $(traffic_failures "$mark0" "$mark1") failed"
	(($(traffic_failures "$mark0" "$mark1") == 0)) || fail "connections failed while C came and went"

	# While IPVS swaps schedulers (unbind, synchronize_rcu, bind) a new
	# connection finds none and is refused: IPVS's doing, counted only.
	start=$(now_ms)
	for round in 1 2 3 4; do
		ipvs_do -E -t "$VIP:9001" -s wlc
		ipvs_do -a -t "$VIP:9001" -r "$RSC:9001" -m
		ipvs_do -E -t "$VIP:9001" -s dllc
		[[ $(dllc_try_write "$director" "$S1 $RSC:9001 200" 2>/dev/null) == ok ]] ||
			fail "switch $round: writing C's load after the switch back to dllc"
		ipvs_do -d -t "$VIP:9001" -r "$RSC:9001"
	done
	mark2=$(traffic_lines)
	pretty ok "4 switches to wlc and back in $(seconds_since "$start") s, $((mark2 - mark1)) connections\
 meanwhile, $(traffic_failures "$mark1" "$mark2") refused while no scheduler was bound"
	wait_until 20 "connections answered again after the switches" traffic_flows_since "$mark2"

	mark3=$(traffic_lines)
	on "$director" ipvsadm -D -t "$VIP:9001"
	sleep 1
	kill "$BG_WRITER" "$BG_TRAFFIC"
	wait "$BG_WRITER" "$BG_TRAFFIC" 2>/dev/null || true
	pretty "$client" "background traffic: $(traffic_lines) connections; since the service was\
 deleted, $(traffic_failures "$mark3" "$(traffic_lines)") failed"
	dllc_table "$director"
	! dllc_table "$director" | grep -q ":9001 $RSC" || fail "C is still listed"
	! dllc_table "$director" | grep -q "^$S1 " || fail "the deleted service is still listed"
	pretty ok "the file follows: no C, no deleted service"

	# The service back, the scheduler switched onto it with two destinations.
	ipvs_do -A -t "$VIP:9001" -s wlc
	ipvs_do -a -t "$VIP:9001" -r "$RSA:9001" -m
	ipvs_do -a -t "$VIP:9001" -r "$RSB:9001" -m
	on "$director" ipvsadm -E -t "$VIP:9001" -s dllc
	dllc_write "$director" "$S1 $RSA:9001 100" "$S1 $RSB:9001 900"
	expect_field "$director" "$S1" "$RSA:9001" effective 100
	[[ $(ask_names "$client" "$VIP" 9001 1) == A ]] || fail "VIP:9001 recreated: the first connection did not go to A"
	pretty ok "VIP:9001 recreated under wlc, switched to dllc: loads written, A (100) chosen"
}

# traffic_flows_since MARK: 5 connections after line MARK, the last 5 answered
traffic_flows_since() {
	local n
	n=$(traffic_lines)
	((n >= $1 + 5)) && (($(traffic_failures "$((n - 5))" "$n") == 0))
}

dllc_install
dllc_dmesg_mark
dllc_topology
setup_services
check_good_writes
check_bad_writes
check_overload
check_churn
dllc_check_dmesg
echo "OK: dllc's file takes good writes only and changes nothing on bad ones; overload, destination and scheduler churn under traffic"
