#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The dllc scheduler's choices in the kernel: IPVS NAT with ipvsadm, loads
# written into /proc/net/ip_vs_dllc, connections held open by a client.
#
#  $client                    $director                          $rsA, $rsB, $rsC
# +---------------------+    +------------------------------+    +---------------------------+
# | eth0 10.77.1.2      |----| front 10.77.1.1              |----| eth0 10.77.{2,3,4}.2      |
# | python3: holds      |veth|   VIP 10.77.1.100/32         |veth| :9000 name, then held open|
# | connections open,   |    | rsA 10.77.2.1 rsB 10.77.3.1  |    | :9001 name, then closed   |
# | or short ones       |    | rsC 10.77.4.1                |    | via the director          |
# +---------------------+    +------------------------------+    +---------------------------+
#
# VIP:9000 -> A, B, C :9000   the study's worked example: 10, 8 and 12
#     connections held on A, B and C (placed there by draining the others,
#     weight 0), loads 500/300/700: the next connection goes to B
#     (8 × 300 is the smallest product); with A's load at 100 it goes to A
#     though B has fewer connections (wlc would pick B); with A's connections
#     closed it goes to A again
# VIP:9001 -> A, B :9001      skew: loads 900 and 100, 40 short connections:
#     B takes most (about 9 in 10); VIP:9002 the same with loads 500 and 500:
#     about even
# VIP:9003 -> A, B :9000      stale loads: 2 connections on A (weight 1), 3 on
#     B (weight 2); fresh loads 100/900 send the next to A; with
#     max_age_ms=500 and half a second later every load is stale, the file
#     shows effective 1000 for both, and the next goes where wlc sends it, B;
#     back on VIP:9000 (max_age_ms 5000), only B and C written afresh: A's
#     stale load counts as their mean
# Until then max_age_ms is 600000: the guest is slow, loads must not go
# stale between writing them and the connection they decide.
set -euo pipefail

readonly client=fc-dsc-$$ director=fc-dsd-$$ rsA=fc-dsA-$$ rsB=fc-dsB-$$ rsC=fc-dsC-$$
WORK=$(mktemp -d /tmp/dllc-sched.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
# shellcheck source=tests/vm/guest/dllc-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dllc-lib.sh"
readonly HOLD=(-t "$VIP:9000") P9000="tcp $VIP:9000"

cleanup() {
	set +e
	l4_cleanup
	[[ ! -e $DLLC_PARAMS/max_age_ms ]] || echo 3000 >"$DLLC_PARAMS/max_age_ms"
}
trap cleanup EXIT

HOLDS=0
declare -A HOLDERS=()

# hold TAG PORT N WANT: N more connections to VIP:PORT held open, all of
# which must be answered by WANT (A, B or C); the holder is HOLDERS[TAG]
hold() {
	local tag=$1 port=$2 n=$3 want=$4 out=$WORK/hold-$((++HOLDS)) names
	hold_conns "$client" "$VIP" "$port" "$n" "$out"
	HOLDERS[$tag]="${HOLDERS[$tag]:-} $HOLD_PID"
	names=$(names_in "$out")
	[[ $names == "$(yes "$want" | head -n "$n" | paste -sd ' ')" ]] ||
		{ ipvs "$director"; dllc_table "$director"; fail "$n connections to :$port: want all $want, got: $names"; }
	pretty ok "$n connections to :$port held, all on $want"
}

# weights PORT A B C: the weights of A, B (and C) in VIP:PORT
weights() {
	local port=$1 rs w
	shift
	for rs in "$RSA" "$RSB" "$RSC"; do
		(($#)) || break
		w=$1
		shift
		ip netns exec "$director" ipvsadm -e -t "$VIP:$port" -r "$rs:$(target_port "$port")" -m -w "$w"
	done
	pretty "$director" "weights of VIP:$port now $(real_servers "$director" -t "$VIP:$port" | awk '{ printf "%s ", $2 }')"
}

# target_port PORT: the real servers' port behind VIP:PORT
target_port() {
	case $1 in 9000 | 9003) echo 9000 ;; *) echo 9001 ;; esac
}

# service PORT RS...: VIP:PORT scheduled by dllc, masquerading to RS... (at
# the target port), all of weight 1
service() {
	local port=$1 rs
	shift
	on "$director" ipvsadm -A -t "$VIP:$port" -s dllc
	for rs in "$@"; do
		ip netns exec "$director" ipvsadm -a -t "$VIP:$port" -r "$rs:$(target_port "$port")" -m -w 1
	done
}

# expect_active PORT A B [C]: ActiveConn of A, B (and C) in VIP:PORT
expect_active() {
	local port=$1 tp rs want got=()
	tp=$(target_port "$port")
	shift
	for rs in "$RSA" "$RSB" "$RSC"; do
		(($#)) || break
		want=$1
		shift
		wait_until 20 "ActiveConn of $rs:$tp in VIP:$port to be $want" active_is "$director" "-t $VIP:$port" "$rs:$tp" "$want"
		got+=("$want")
	done
	pretty ok "VIP:$port ActiveConn ${got[*]}"
}

check_worked_example() {
	# Loads stay fresh until check_stale: the guest is slow.
	dllc_param max_age_ms 600000
	service 9000 "$RSA" "$RSB" "$RSC"
	weights 9000 1 0 0
	hold A 9000 10 A
	weights 9000 0 1 0
	hold B 9000 8 B
	weights 9000 0 0 1
	hold C 9000 12 C
	weights 9000 1 1 1
	expect_active 9000 10 8 12
	ipvs "$director" "${HOLD[@]}"

	dllc_write "$director" "$P9000 $RSA:9000 500" "$P9000 $RSB:9000 300" "$P9000 $RSC:9000 700"
	dllc_table "$director"
	expect_field "$director" "$P9000" "$RSA:9000" effective 500
	expect_field "$director" "$P9000" "$RSB:9000" effective 300
	expect_field "$director" "$P9000" "$RSC:9000" effective 700
	local oa ob oc
	oa=$(dllc_field "$director" "$P9000" "$RSA:9000" overhead)
	ob=$(dllc_field "$director" "$P9000" "$RSB:9000" overhead)
	oc=$(dllc_field "$director" "$P9000" "$RSC:9000" overhead)
	pretty director "C × L: A $oa × 500 = $((oa * 500)), B $ob × 300 = $((ob * 300)), C $oc × 700 = $((oc * 700))"
	hold B 9000 1 B
	expect_active 9000 10 9 12
	pretty ok "worked example: loads 500/300/700, connections 10/8/12: the new one went to B"

	# Load over connections: A at 100 wins with 10 connections against B's 9.
	dllc_write "$director" "$P9000 $RSA:9000 100"
	hold A 9000 1 A
	expect_active 9000 11 9 12
	pretty ok "A's load 100: A (11 × 100 < 9 × 300), where wlc would choose B"

	# Connections over load: A's closed, loads 500/300/700 again.
	dllc_write "$director" "$P9000 $RSA:9000 500"
	# shellcheck disable=SC2086 # a list of pids
	kill ${HOLDERS[A]}
	HOLDERS[A]=
	expect_active 9000 0 9 12
	hold A 9000 1 A
	pretty ok "A's connections closed, loads 500/300/700: A"
}

# spread PORT: 40 short connections to VIP:PORT; sets NA and NB
spread() {
	local answers
	answers=$(ask_names "$client" "$VIP" "$1" 40 | tr '\n' ' ')
	# shellcheck disable=SC2086 # the answers are words
	NA=$(count_of A $answers) NB=$(count_of B $answers)
	pretty "$client" "40 connections to VIP:$1: A $NA, B $NB: $answers"
	((NA + NB == 40)) || fail "VIP:$1: not every connection answered by A or B: $answers"
}

check_skew() {
	service 9001 "$RSA" "$RSB"
	dllc_write "$director" "tcp $VIP:9001 $RSA:9001 900" "tcp $VIP:9001 $RSB:9001 100"
	spread 9001
	((NB >= 3 * NA && NA >= 1)) || fail "loads 900/100: want B well ahead of A (and A some), got A $NA, B $NB"
	pretty ok "loads 900/100: B took $NB of 40, A $NA"
	dllc_table "$director" | grep -E "^#|:9001 "

	service 9002 "$RSA" "$RSB"
	dllc_write "$director" "tcp $VIP:9002 $RSA:9001 500" "tcp $VIP:9002 $RSB:9001 500"
	spread 9002
	((NA >= 17 && NB >= 17)) || fail "loads 500/500: want about even, got A $NA, B $NB"
	pretty ok "loads 500/500: A $NA, B $NB"
}

check_stale() {
	local p9003="tcp $VIP:9003"
	service 9003 "$RSA" "$RSB"
	weights 9003 1 0
	hold A3 9003 2 A
	weights 9003 0 1
	hold B3 9003 3 B
	weights 9003 1 2
	expect_active 9003 2 3
	# C × L / W: A 2 × 100 / 1 = 200 < B 3 × 900 / 2 = 1350;
	# wlc, C / W: A 2 / 1 = 2 > B 3 / 2 = 1.5.
	dllc_write "$director" "$p9003 $RSA:9000 100" "$p9003 $RSB:9000 900"
	hold A3 9003 1 A
	pretty ok "fresh loads 100/900: A (3 × 100 / 1 < 3 × 900 / 2)"

	dllc_param max_age_ms 500
	sleep 1
	dllc_table "$director" | grep -E "^#|:9003 "
	expect_field "$director" "$p9003" "$RSA:9000" effective 1000
	expect_field "$director" "$p9003" "$RSB:9000" effective 1000
	expect_field "$director" "$p9003" "$RSA:9000" load 100
	(($(dllc_field "$director" "$p9003" "$RSA:9000" age_ms) > 500)) || fail "A's load is not older than 500 ms"
	hold B3 9003 1 B
	pretty ok "stale loads (max_age_ms=500, 1 s later): both count 1000, the choice is wlc's, B (3 / 1 > 3 / 2)"

	# Only B and C fresh on VIP:9000: A counts as their mean.
	dllc_param max_age_ms 5000
	wait_until 10 "A's load on VIP:9000 older than 5 s" a_is_stale
	dllc_write "$director" "$P9000 $RSB:9000 900" "$P9000 $RSC:9000 300"
	dllc_table "$director" | grep -E "^#|:9000 "
	expect_field "$director" "$P9000" "$RSA:9000" effective 600
	expect_field "$director" "$P9000" "$RSB:9000" effective 900
	expect_field "$director" "$P9000" "$RSC:9000" effective 300
	pretty ok "A stale, B 900 and C 300 fresh: A counts as their mean, 600"
}

a_is_stale() {
	(($(dllc_field "$director" "$P9000" "$RSA:9000" age_ms) > 5100))
}

dllc_install
dllc_dmesg_mark
dllc_topology
check_worked_example
check_skew
check_stale
dllc_check_dmesg
echo "OK: dllc chooses as the worked example says, skews by load, falls back to the mean and to wlc when loads go stale"
