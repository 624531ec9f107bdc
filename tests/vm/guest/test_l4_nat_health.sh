#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer 4, NAT: keepalived's health checks take real servers out of IPVS and
# put them back, with the files Fulcrum's compiler made for
# tests/vm/l4/nat-health.json.
#
#  $client                   $director                            $rs1, $rs2
# +----------------+      +-----------------------------+      +---------------------------+
# | eth0 10.77.1.2 |------| front 10.77.1.1             |------| eth0 10.77.2.2 / 10.77.3.2 |
# | curl           | veth |   VIP 10.77.1.100/32        | veth | nginx :80 "rs1" / "rs2"     |
# +----------------+      | rs1   10.77.2.1             |--+   | /health "status: ok"        |
#                         | rs2   10.77.3.1             |  |   +---------------------------+
#                         | sorry 10.77.4.1             |--+      $sorry
#                         | keepalived (nat-health)     |  +---+ eth0 10.77.4.2, nginx "sorry"
#                         +-----------------------------+      +---------------------------+
#
# VIP 10.77.1.100 (every check: delay_loop 1 s, retry 1, delay_before_retry 1 s):
#   :80 rr, TCP_CHECK, sorry server 10.77.4.2 (the pool's backup member)
#   :81 rr, HTTP_GET /health, body regex "^status: (ok|degraded)" (a space in it;
#       keepalived searches the whole response, headers included, so the
#       compiler prefixes (?m) and ^ anchors to a line of the page)
#   :82 rr, TCP_CHECK, on_failure quiesce (inhibit_on_failure)
#
# 1. Stopping rs1's nginx removes rs1 from :80 and :81 and sets its weight to 0
#    on :82, within 3 x (delay_loop + retry x delay_before_retry) + 5 s; the
#    time taken is measured and printed. Starting it again puts it back.
# 2. rs1 answering /health with "status: broken" leaves :81 (not :80); with
#    "status: degraded" it comes back.
# 3. With rs1 and rs2 both stopped, keepalived puts the sorry server into :80,
#    which answers; with them back, the sorry server leaves.
set -euo pipefail

readonly VIP=10.77.1.100
readonly client=fc-l4c-$$ director=fc-l4d-$$ rs1=fc-l4r1-$$ rs2=fc-l4r2-$$ sorry=fc-l4s-$$
readonly RS1=10.77.2.2:80 RS2=10.77.3.2:80 SORRY=10.77.4.2:80
WORK=$(mktemp -d /tmp/l4-nat-health.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
TIMINGS=()

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	((${#TIMINGS[@]} == 0)) || printf 'TIMING %s\n' "${TIMINGS[@]}"
	l4_cleanup
}
trap cleanup EXIT

# attach_server NS NAME NET: NS behind the director on NET.0/24 (director
# NET.1 on a link called NAME, NS NET.2 routing through it), nginx answering NAME
attach_server() {
	local ns=$1 name=$2 net=$3
	nat_server "$director" "$ns" "$name" "$net"
	start_web "$ns" "$name"
	wait_http "$director" "http://$net.2/"
}

setup_topology() {
	local ns
	for ns in "$client" "$director" "$rs1" "$rs2" "$sorry"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	attach_server "$rs1" rs1 10.77.2
	attach_server "$rs2" rs2 10.77.3
	attach_server "$sorry" sorry 10.77.4
}

# ask_n N PORT: N requests to VIP:PORT from the client, answers on one line
ask_n() { http_get_n "$1" "$client" "http://$VIP:$2/"; }

# The theoretical time keepalived needs to fail a server, from the rendered file.
read_check_timing() {
	local conf=$L4_CASES/nat-health/keepalived.conf
	read -r DELAY_LOOP RETRY BEFORE_RETRY < <(awk '
		$1 == "delay_loop" && !d { d = $2 } $1 == "retry" && !r { r = $2 }
		$1 == "delay_before_retry" && !b { b = $2 }
		END { print d, r, b }' "$conf")
	THEORY_DOWN=$(awk -v d="$DELAY_LOOP" -v r="$RETRY" -v b="$BEFORE_RETRY" 'BEGIN { print d + r * b }')
	LIMIT_DOWN=$(awk -v t="$THEORY_DOWN" 'BEGIN { print int(3 * t + 5 + 0.999) }')
	LIMIT_UP=$(awk -v d="$DELAY_LOOP" 'BEGIN { print int(3 * d + 5 + 0.999) }')
	pretty checks "delay_loop $DELAY_LOOP s, retry $RETRY, delay_before_retry $BEFORE_RETRY s: down after \
${THEORY_DOWN} s in theory (allowed $LIMIT_DOWN s), up after $DELAY_LOOP s (allowed $LIMIT_UP s)"
}

# timed WHAT LIMIT CMD...: wait_until, recording how long it took
timed() {
	local what=$1 limit=$2
	shift 2
	wait_until "$limit" "$what" "$@"
	TIMINGS+=("$what: $WAITED s (limit $limit s)")
	pretty timing "$what: $WAITED s"
}

rs1_failed_everywhere() {
	lacks_real_server "$director" "-t $VIP:80" "$RS1" &&
		lacks_real_server "$director" "-t $VIP:81" "$RS1" &&
		has_real_server "$director" "-t $VIP:82" "$RS1" 0
}

rs1_back_everywhere() {
	has_real_server "$director" "-t $VIP:80" "$RS1" 1 &&
		has_real_server "$director" "-t $VIP:81" "$RS1" 1 &&
		has_real_server "$director" "-t $VIP:82" "$RS1" 1
}

check_initial_state() {
	local port
	for port in 80 81 82; do
		has_real_server "$director" "-t $VIP:$port" "$RS1" 1 || fail ":$port does not start with rs1"
		has_real_server "$director" "-t $VIP:$port" "$RS2" 1 || fail ":$port does not start with rs2"
	done
	lacks_real_server "$director" "-t $VIP:80" "$SORRY" || fail "the sorry server is in :80 while rs1, rs2 are up"
	expect_alternating "both up, :80" "$(ask_n 4 80)"
	expect_alternating "both up, :81" "$(ask_n 4 81)"
}

check_tcp_failure() {
	pretty "$rs1" "stopping nginx"
	stop_web "$rs1"
	timed "TCP_CHECK removes stopped rs1 from :80" "$LIMIT_DOWN" lacks_real_server "$director" "-t $VIP:80" "$RS1"
	wait_until "$LIMIT_DOWN" "rs1 out of :81 and at weight 0 on :82" rs1_failed_everywhere
	ipvs "$director"
	expect_answers "rs1 down, :80" "rs2 rs2 rs2 rs2" "$(ask_n 4 80)"
	expect_answers "rs1 quiesced (weight 0), :82" "rs2 rs2 rs2 rs2" "$(ask_n 4 82)"

	pretty "$rs1" "starting nginx again"
	start_web "$rs1" rs1
	timed "TCP_CHECK puts restarted rs1 back into :80" "$LIMIT_UP" has_real_server "$director" "-t $VIP:80" "$RS1" 1
	wait_until "$LIMIT_UP" "rs1 back on :81 and at weight 1 on :82" rs1_back_everywhere
	expect_alternating "rs1 back, :80" "$(ask_n 4 80)"
}

check_http_body() {
	pretty "$rs1" "/health now says 'status: broken'"
	echo "status: broken" >"$WORK/$rs1/www/health"
	timed "HTTP_GET regex removes rs1 from :81 when the body changes" "$LIMIT_DOWN" \
		lacks_real_server "$director" "-t $VIP:81" "$RS1"
	has_real_server "$director" "-t $VIP:80" "$RS1" 1 || fail "rs1 left :80 too, whose TCP check still passes"
	expect_answers "rs1 body mismatch, :81" "rs2 rs2 rs2 rs2" "$(ask_n 4 81)"

	pretty "$rs1" "/health now says 'status: degraded'"
	echo "status: degraded" >"$WORK/$rs1/www/health"
	timed "HTTP_GET regex puts rs1 back into :81" "$LIMIT_UP" has_real_server "$director" "-t $VIP:81" "$RS1" 1
}

sorry_only() {
	has_real_server "$director" "-t $VIP:80" "$SORRY" &&
		lacks_real_server "$director" "-t $VIP:80" "$RS1" &&
		lacks_real_server "$director" "-t $VIP:80" "$RS2"
}

pool_back() {
	has_real_server "$director" "-t $VIP:80" "$RS1" 1 &&
		has_real_server "$director" "-t $VIP:80" "$RS2" 1 &&
		lacks_real_server "$director" "-t $VIP:80" "$SORRY"
}

check_sorry_server() {
	pretty "$director" "stopping nginx on rs1 and rs2"
	stop_web "$rs1"
	stop_web "$rs2"
	timed "sorry server in :80 once rs1 and rs2 are down" "$LIMIT_DOWN" sorry_only
	ipvs "$director" -t "$VIP:80"
	expect_answers "all down, :80" "sorry sorry sorry" "$(ask_n 3 80)"
	start_web "$rs1" rs1
	start_web "$rs2" rs2
	timed "rs1 and rs2 back and the sorry server out of :80" "$LIMIT_UP" pool_back
	expect_alternating "pool back, :80" "$(ask_n 4 80)"
}

setup_topology
read_check_timing
start_keepalived "$director" nat-health
wait_for_services "$director" 3
check_initial_state
check_tcp_failure
check_http_body
check_sorry_server
echo "OK: TCP and HTTP regex checks remove and restore, quiesce keeps weight 0, the sorry server answers"
