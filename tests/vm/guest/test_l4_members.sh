#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer 4, NAT: member settings on live traffic, with the files Fulcrum's
# compiler made for tests/vm/l4/members.json and members-drain.json (the same
# snapshot with rs1 of the "drain" pool set to drain).
#
#  $client                   $director                        $rs1, $rs2
# +----------------+      +-------------------------+      +---------------------------+
# | eth0 10.77.1.2 |------| front 10.77.1.1         |------| eth0 10.77.2.2 / 10.77.3.2 |
# | curl, socat,   | veth |   VIP 10.77.1.100/32    | veth | nginx :80 "rs1" / "rs2"     |
# | python3        |      | rs1   10.77.2.1         |--+   +---------------------------+
# +----------------+      | rs2   10.77.3.1         |  |
#                         | keepalived on a copy of |  +-- (rs2's link)
#                         | members, then reloaded  |
#                         | (SIGHUP) on             |
#                         | members-drain           |
#                         +-------------------------+
#
# VIP 10.77.1.100:
#   :80 rr. Two keep-alive connections are open, one on each server; rs1 is
#       drained (a new revision, keepalived reloaded): its weight becomes 0,
#       both open connections still answer from their server, new
#       connections all go to rs2.
#   :81 wrr, rs1 weight 5 max_connections 1 (uthreshold), rs2 weight 1
#       max_connections 50 min_connections 10 (lthreshold): --thresholds shows
#       them; while rs1 holds one connection, new connections (which wrr 5:1
#       would mostly give rs1) all go to rs2.
#   :82 rr, rs2 disabled: IPVS has rs1 only, every request goes to rs1.
#   :83 wrr 5:1 without thresholds, the control for :81: while rs1 holds a
#       connection, it still gets at least 3 of 4 new ones.
set -euo pipefail

readonly VIP=10.77.1.100
readonly client=fc-l4c-$$ director=fc-l4d-$$ rs1=fc-l4r1-$$ rs2=fc-l4r2-$$
readonly RS1=10.77.2.2:80 RS2=10.77.3.2:80
WORK=$(mktemp -d /tmp/l4-members.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
TIMINGS=()
HELD=()

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	((${#TIMINGS[@]} == 0)) || printf 'TIMING %s\n' "${TIMINGS[@]}"
	l4_cleanup
}
trap cleanup EXIT

setup_topology() {
	local ns
	for ns in "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	nat_server "$director" "$rs1" rs1 10.77.2
	nat_server "$director" "$rs2" rs2 10.77.3
	start_web "$rs1" rs1
	start_web "$rs2" rs2
	wait_http "$director" http://10.77.2.2/
	wait_http "$director" http://10.77.3.2/
}

# ask_n N PORT: N requests (new connections) to VIP:PORT, answers on one line
ask_n() { http_get_n "$1" "$client" "http://$VIP:$2/"; }

# keepalive_client PORT TRIGGER: two HTTP/1.1 keep-alive connections to
# VIP:PORT; one request on each ("before A B"), then, once the file TRIGGER
# exists, one more on each over the same connections ("after A B").
keepalive_client() {
	ip netns exec "$client" python3 -u - "$VIP" "$1" "$2" <<-'EOF'
		import os, socket, sys, time
		host, port, trigger = sys.argv[1], int(sys.argv[2]), sys.argv[3]
		def ask(s):
		    s.sendall(b"GET / HTTP/1.1\r\nHost: vip\r\n\r\n")
		    data = b""
		    while b"\r\n\r\n" not in data:
		        chunk = s.recv(4096)
		        if not chunk:
		            return "closed"
		        data += chunk
		    head, body = data.split(b"\r\n\r\n", 1)
		    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
		                  if line.lower().startswith(b"content-length:"))
		    while len(body) < length:
		        body += s.recv(4096)
		    return body.decode().strip()
		conns = [socket.create_connection((host, port), timeout=10) for _ in range(2)]
		print("before", *(ask(c) for c in conns))
		while not os.path.exists(trigger):
		    time.sleep(0.2)
		print("after", *(ask(c) for c in conns))
	EOF
}

has_line() { grep -q "^$1 " "$2" 2>/dev/null; }

check_drain() {
	local out=$WORK/keepalive.out trigger=$WORK/keepalive.go before after pid
	expect_alternating "rs1 enabled, :80" "$(ask_n 2 80)"
	pretty "$client" "two keep-alive connections to $VIP:80"
	keepalive_client 80 "$trigger" >"$out" 2>&1 &
	pid=$!
	wait_until 20 "the keep-alive client's first requests" has_line before "$out"
	before=$(sed -n 's/^before //p' "$out")
	[[ $before == "rs1 rs2" || $before == "rs2 rs1" ]] || fail "the two keep-alive connections answered '$before'"
	pretty ok "keep-alive connections: one on each server ($before)"
	reload_keepalived members-drain
	timed "reload: rs1 at weight 0 on :80 (drain)" 20 has_real_server "$director" "-t $VIP:80" "$RS1" 0
	kill -0 "$L4_KEEPALIVED_PID" || fail "keepalived exited on the reload"
	ipvs "$director" -t "$VIP:80"
	(($(active_conns "$director" "-t $VIP:80" "$RS1") == 1)) ||
		fail "drained rs1 does not show its open connection: $(conns "$director" "-t $VIP:80" "$RS1")"
	pretty ok "drained rs1: weight 0, active connections $(active_conns "$director" "-t $VIP:80" "$RS1")"
	expect_answers "rs1 drained, 4 new connections to :80" "rs2 rs2 rs2 rs2" "$(ask_n 4 80)"
	touch "$trigger"
	wait "$pid" || fail "the keep-alive client failed: $(cat "$out")"
	after=$(sed -n 's/^after //p' "$out")
	[[ $after == "$before" ]] || fail "after the drain the open connections answered '$after' (before: '$before')"
	pretty ok "the open connections still answer from their servers after the drain: $after"
}

# thresholds NS SERVICE ADDRESS:PORT: "UTHRESHOLD LTHRESHOLD" of a real server
thresholds() {
	# shellcheck disable=SC2086 # SERVICE is two words on purpose
	ipvs "$1" $2 --thresholds | awk -v rs="$3" '$1 == "->" && $2 == rs { print $3, $4 }'
}

active_total() {
	(($(active_conns "$director" "-t $VIP:$1" "$RS1") + $(active_conns "$director" "-t $VIP:$1" "$RS2") == $2))
}

# hold_until_rs1 PORT: idle connections to VIP:PORT, one at a time, until rs1
# holds one (wrr's first pick depends on the order the servers were added in:
# rs2 may take the first). Their pids go to HELD.
hold_until_rs1() {
	local port=$1 n
	for n in 1 2 3; do
		hold_tcp "$client" "$VIP" "$port"
		HELD+=("$HELD_PID")
		wait_until 20 "$n active connection(s) on :$port" active_total "$port" "$n"
		(($(active_conns "$director" "-t $VIP:$port" "$RS1") == 0)) || return 0
	done
	ipvs "$director" -t "$VIP:$port"
	fail "wrr 5:1 gave none of 3 connections to rs1 (weight 5) on :$port"
}

release_held() {
	local pid
	for pid in "${HELD[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${HELD[@]}"; do wait "$pid" 2>/dev/null || true; done
	HELD=()
}

count() { tr ' ' '\n' <<<"$2" | grep -cx "$1" || true; }

check_thresholds() {
	local t1 t2 answers
	ipvs "$director" -t "$VIP:81" --thresholds
	t1=$(thresholds "$director" "-t $VIP:81" "$RS1")
	t2=$(thresholds "$director" "-t $VIP:81" "$RS2")
	[[ $t1 == "1 0" ]] || fail "rs1 on :81: uthreshold/lthreshold '$t1', want '1 0'"
	[[ $t2 == "50 10" ]] || fail "rs2 on :81: uthreshold/lthreshold '$t2', want '50 10'"
	[[ $(thresholds "$director" "-t $VIP:83" "$RS1") == "0 0" ]] || fail "rs1 on :83 has thresholds"
	pretty ok "--thresholds: rs1 upper 1 lower 0 (max_connections 1), rs2 upper 50 lower 10 (max 50, min 10); none on :83"

	# The control: the same pool without thresholds.
	hold_until_rs1 83
	ipvs "$director" -t "$VIP:83"
	answers=$(ask_n 4 83)
	(($(count rs1 "$answers") >= 3)) || fail "wrr 5:1 without thresholds: rs1 answered $(count rs1 "$answers") of 4: $answers"
	pretty ok "control, :83 without thresholds: rs1 holds a connection, 4 new connections: $answers (wrr 5:1)"
	release_held

	hold_until_rs1 81
	ipvs "$director" -t "$VIP:81"
	expect_answers "rs1 (weight 5) at max_connections 1, 4 new connections to :81" \
		"rs2 rs2 rs2 rs2" "$(ask_n 4 81)"
	release_held
}

check_disabled() {
	real_servers "$director" -t "$VIP:82"
	has_real_server "$director" "-t $VIP:82" "$RS1" 1 || fail "rs1 is not in :82"
	lacks_real_server "$director" "-t $VIP:82" "$RS2" || fail "disabled rs2 is in :82"
	[[ $(real_servers "$director" -t "$VIP:82" | wc -l) == 1 ]] || fail ":82 has more than one real server"
	expect_answers "rs2 disabled, :82" "rs1 rs1 rs1 rs1" "$(ask_n 4 82)"
}

timed() {
	local what=$1 limit=$2
	shift 2
	wait_until "$limit" "$what" "$@"
	TIMINGS+=("$what: $WAITED s (limit $limit s)")
	pretty timing "$what: $WAITED s"
}

setup_topology
start_keepalived "$director" members "$WORK/keepalived.conf"
wait_for_services "$director" 4
check_disabled
check_thresholds
check_drain
echo "OK: a drained member keeps its connections and gets no new ones, max/min_connections are IPVS thresholds that send new connections elsewhere, a disabled member is absent"
