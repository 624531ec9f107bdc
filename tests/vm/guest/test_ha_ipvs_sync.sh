#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# High availability, layer 4: an established TCP connection survives the death
# of the master balancer because the IPVS connection-sync daemon had already
# given the backup its entry. keepalived runs in lb1 and lb2 on the files
# Fulcrum's compiler made for each node from tests/vm/l4/ha-sync.json
# (render-l4.py -> /results/l4/ha-sync/<node>/), unchanged: one VRRPv3
# instance "front" (unicast, adverts every 200 ms, nopreempt) holding the VIP,
# a direct-routing service on the VIP, and `lvs_sync_daemon eth0 front id 61`:
# the master of "front" runs the master sync daemon, its backup the backup one.
#
#                                  $lan: bridge br0
#     +---------------+----------------+-----------------+-----------------+
#     |               |                |                 |                 |
#  +-----------+ +------------+ +------------+ +---------------+ +---------------+
#  | $client   | | $lb1       | | $lb2       | | $rs1          | | $rs2          |
#  | 10.77.1.2 | | 10.77.1.3  | | 10.77.1.4  | | 10.77.1.11    | | 10.77.1.12    |
#  | socat:    | | keepalived | | keepalived | | lo: VIP/32    | | lo: VIP/32    |
#  | one TCP   | | prio 150   | | prio 100   | | chat on 9000: | | chat on 9000: |
#  | connection| | VIP .100   | |            | | "rs1 <line>"  | | "rs2 <line>"  |
#  +-----------+ +------------+ +------------+ +---------------+ +---------------+
#                  master sync ---------> backup sync
#                  daemon    224.0.0.81:8848 daemon
#
# Direct routing: the real server answers the client itself, so after a
# failover only the client-to-VIP direction has to find its way, through the
# new master's IPVS, which forwards a packet of a connection it did not see
# open only if it has the connection's entry (IPVS schedules nothing but SYNs).
# (NAT would also need the real servers' gateway to be a floating address.)
# nopreempt: a node that comes back has an empty connection table, and the
# master re-sends an established connection only on its 3rd, 53rd, 103rd...
# packet (sync_threshold 3 50): taking the VIP back at once would break every
# idle connection it has not relearned. One failover, not two.
#
# The scenario runs twice, each time on a fresh topology:
#   sync     lb1 master, lb2 backup; the client opens one connection through
#            the VIP and exchanges a line; lb2's connection table gets the
#            entry (same real server as lb1's); lb1 dies; the client sends
#            the next line on the SAME connection: the answer comes, from the
#            same real server, through lb2.
#   no sync  the same, with lb2's backup sync daemon stopped
#            (ipvsadm --stop-daemon backup) before the connection opens:
#            lb2 has no entry, the packet reaches lb2's own stack, which has
#            no socket for it: the connection is reset (or answers nothing).
#            The test can fail: this is what the sync daemon prevents.
#
# How lb1 dies: as a crashed or powered-off node, not a clean stop. SIGTERM
# would make keepalived send a priority-0 advert and remove the VIP and its
# IPVS services itself (a planned switch-over, the easy case). Here every
# process in lb1 gets SIGKILL and lb1's port on the bridge goes down, as a
# dead machine's link does: its kernel still holds the VIP and the IPVS table
# but nothing reaches it. lb2 takes over when the adverts stop (3 x 200 ms +
# skew), and the client's frames reach lb2 only because its ARP entry for the
# VIP follows lb2's gratuitous ARP (checked: lb2's MAC address afterwards).
#
# The message goes out right after the kill, as a client that knows nothing
# of the failover would send it; TCP retransmits it until lb2 forwards it.
# TIMING lines: kill -> VIP on lb2, kill -> answer (or reset) on the connection.
set -euo pipefail

readonly VIP=10.77.1.100 PORT=9000 CASE=ha-sync
readonly REALSERVER=/results/bin/fulcrum-realserver
# Where the node agent keeps each node's track files and notify FIFO (the
# compiler's constant: /run/fulcrum-agent/<node>/).
readonly AGENT_RUN=/run/fulcrum-agent
WORK=$(mktemp -d /tmp/ha-ipvs-sync.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"

# One round's namespaces (new names each round, see start_round).
lan='' client='' lb1='' lb2='' rs1='' rs2=''
ROUND_DIR=''
CHAT_PID='' CHAT_FD='' TAKEOVER_PID=''
# The held connection: its client address:port, and the real server it reached.
SOURCE='' SERVER=''
FIFO_READERS=() AGENT_DIRS=()
declare -A KEEPALIVED_LOG=()

cleanup() {
	local rc=$?
	set +e
	((rc == 0)) || show_round_logs
	end_round
	l4_cleanup
}
trap cleanup EXIT

show_round_logs() {
	local node
	for node in lb1 lb2; do
		[[ -f ${KEEPALIVED_LOG[$node]:-} ]] || continue
		echo "---- $node: keepalived log (last 30 lines) ----"
		tail -n 30 "${KEEPALIVED_LOG[$node]}"
	done
	echo "---- kernel log, IPVS ----"
	dmesg | grep -i ipvs | tail -n 20
	echo "----"
}

# plug NS ADDRESS PORT: NS's eth0 (ADDRESS/24) on the bridge, as port PORT
plug() {
	local ns=$1 address=$2 port=$3
	veth "$lan" "$port" "$ns" eth0
	ip -n "$lan" link set dev "$port" master br0
	ip -n "$ns" addr add "$address/24" dev eth0
}

# start_chat NS NAME: on port 9000, every line received is answered with
# "NAME line" on the same connection, for as long as the client keeps it
start_chat() {
	local ns=$1 name=$2
	mkdir -p "$ROUND_DIR/$ns"
	printf '#!/bin/sh\nexec sed -u "s/^/%s /"\n' "$name" >"$ROUND_DIR/$ns/chat.sh"
	chmod +x "$ROUND_DIR/$ns/chat.sh"
	ip netns exec "$ns" socat "TCP-LISTEN:$PORT,reuseaddr,fork" "EXEC:$ROUND_DIR/$ns/chat.sh" </dev/null \
		>"$ROUND_DIR/$ns/chat.log" 2>&1 &
}

# chat_answers NS ADDRESS NAME: NS gets "NAME ping" back from ADDRESS:9000
chat_answers() {
	[[ $(echo ping | ip netns exec "$1" socat -t 3 -T 5 - "TCP:$2:$PORT" 2>/dev/null) == "$3 ping" ]]
}

# direct_routing_server NS ADDRESS NAME: the VIP on lo without ARP for it, by
# fulcrum-realserver, and the chat service
direct_routing_server() {
	local ns=$1 address=$2 name=$3
	plug "$ns" "$address" "to-$name"
	[[ -x $REALSERVER ]] || fail "$REALSERVER is missing (run.sh builds agents/cmd/* into /results/bin)"
	on "$ns" "$REALSERVER" add --mode dr --state "$ROUND_DIR/$ns.realserver.json" "$VIP" >/dev/null
	start_chat "$ns" "$name"
	wait_until 20 "$name's chat service answering" chat_answers "$client" "$address" "$name"
}

setup_topology() {
	local ns
	for ns in "$lan" "$client" "$lb1" "$lb2" "$rs1" "$rs2"; do add_ns "$ns"; done
	ip -n "$lan" link add br0 type bridge
	ip -n "$lan" link set dev br0 up
	plug "$client" 10.77.1.2 to-client
	plug "$lb1" 10.77.1.3 to-lb1
	plug "$lb2" 10.77.1.4 to-lb2
	direct_routing_server "$rs1" 10.77.1.11 rs1
	direct_routing_server "$rs2" 10.77.1.12 rs2
	# A new namespace inherits the root namespace's ip_forward: DR needs none.
	for ns in "$lb1" "$lb2"; do ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=0; done
}

# agent_run_files NODE: what the node agent makes before it starts keepalived:
# the standby track file with "0" (serve; "1" would put every instance in
# FAULT) and the notify FIFO, which it reads (here cat, into NODE.vrrp)
agent_run_files() {
	local node=$1 dir=$AGENT_RUN/$1
	[[ ! -e $dir ]] || fail "$dir exists: another agent or test left it"
	mkdir -p "$dir"
	AGENT_DIRS+=("$dir")
	echo 0 >"$dir/standby"
	mkfifo "$dir/vrrp.fifo"
	cat "$dir/vrrp.fifo" >"$ROUND_DIR/$node.vrrp" &
	FIFO_READERS+=($!)
}

# start_node NS NODE: keepalived in NS on the files rendered for NODE
start_node() {
	local ns=$1 node=$2
	agent_run_files "$node"
	start_keepalived "$ns" "$CASE/$node"
	KEEPALIVED_LOG[$node]=$L4_KEEPALIVED_LOG
	# lb1's is SIGKILLed on purpose: no "Killed" notice from bash in the log
	disown "$L4_KEEPALIVED_PID"
}

# has_vip NS: the VIP is on NS's eth0 (output captured first: grep -q could
# end the pipe early and pipefail report ip's SIGPIPE)
has_vip() {
	local addresses
	addresses=$(ip -n "$1" -br addr show dev eth0)
	[[ " $addresses " == *" $VIP/32 "* ]]
}

# notified NODE STATE: keepalived told NODE's agent (FIFO) that "front" is in STATE
notified() {
	grep -q "^INSTANCE \"front\" $2 " "$ROUND_DIR/$1.vrrp"
}

# daemons NS: "master" and/or "backup", the IPVS sync daemons running in NS
daemons() {
	ip netns exec "$1" ipvsadm -L --daemon | awk '/sync daemon/ { print $1 }' | sort | paste -sd ' '
}

# sync_daemons_are NS WANT: the daemons in NS are WANT ("master", "backup", "")
sync_daemons_are() {
	[[ $(daemons "$1") == "$2" ]]
}

mac_of() {
	ip -n "$1" -br link show dev eth0 | awk '{ print $3 }'
}

# client_vip_mac: the client's ARP entry for the VIP
client_vip_mac() {
	ip -n "$client" neigh show "$VIP" dev eth0 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }'
}

client_arp_is() { [[ $(client_vip_mac) == "$1" ]]; }

# start_pair SYNC: lb1 master (started alone first: with nopreempt the first
# master keeps the role), then lb2 backup; each with the sync daemon of its
# role. With SYNC "off", lb2's backup daemon is then stopped.
start_pair() {
	local sync=$1 with=with
	start_node "$lb1" lb1
	wait_until 60 "lb1 master (the VIP on lb1)" has_vip "$lb1"
	pretty lb1 "master after $WAITED s"
	start_node "$lb2" lb2
	wait_until 60 "lb2 backup (notify FIFO)" notified lb2 BACKUP
	wait_until 30 "the master sync daemon alone in lb1" sync_daemons_are "$lb1" master
	wait_until 30 "the backup sync daemon alone in lb2" sync_daemons_are "$lb2" backup
	on "$lb1" ipvsadm -L --daemon
	on "$lb2" ipvsadm -L --daemon
	notified lb1 MASTER || fail "keepalived did not write lb1's MASTER state to its notify FIFO"
	if ! has_vip "$lb1" || has_vip "$lb2"; then fail "the VIP is not on lb1 alone"; fi
	ipvs "$lb2" -t "$VIP:$PORT" | grep -c ' Route ' | grep -qx 2 || fail "lb2 has no DR service with 2 real servers"
	if [[ $sync == off ]]; then
		on "$lb2" ipvsadm --stop-daemon backup
		sync_daemons_are "$lb2" "" || fail "lb2 still runs a sync daemon: $(daemons "$lb2")"
		pretty lb2 "backup sync daemon stopped: lb2 learns no connection"
		with=without
	fi
	pretty ok "lb1 master with the master sync daemon, lb2 backup $with the backup one"
}

# open_chat: one TCP connection from the client to VIP:9000, kept by socat
# (stdin: a FIFO the test writes to through CHAT_FD; stdout: chat.out)
open_chat() {
	mkfifo "$ROUND_DIR/chat.in"
	: >"$ROUND_DIR/chat.out"
	pretty "$client" "socat - TCP:$VIP:$PORT (one connection, kept open)"
	ip netns exec "$client" socat - "TCP:$VIP:$PORT" <"$ROUND_DIR/chat.in" \
		>"$ROUND_DIR/chat.out" 2>"$ROUND_DIR/chat.err" &
	CHAT_PID=$!
	exec {CHAT_FD}>"$ROUND_DIR/chat.in"
}

# say LINE: sends LINE on the connection
say() {
	kill -0 "$CHAT_PID" 2>/dev/null || fail "the client's connection is closed: $(cat "$ROUND_DIR/chat.err")"
	pretty "$client" "-> $1"
	printf '%s\n' "$1" >&"$CHAT_FD"
}

# await_answer N LIMIT_S: until the connection has given N lines, the client's
# socat ended (reset or closed) or LIMIT_S passed. Sets ANSWER (line N or "")
# and OUTCOME: answered, ended or timeout.
await_answer() {
	local n=$1 limit=$2 start lines
	start=$(now_ms)
	ANSWER='' OUTCOME=timeout
	while (($(now_ms) - start < limit * 1000)); do
		# builtins only: the measured time is the connection's, not the polling's
		mapfile -t lines <"$ROUND_DIR/chat.out"
		if ((${#lines[@]} >= n)); then
			ANSWER=${lines[n - 1]}
			OUTCOME=answered
			return 0
		fi
		kill -0 "$CHAT_PID" 2>/dev/null || {
			OUTCOME=ended
			return 0
		}
		sleep 0.05
	done
}

# client_port: the client's port of the held connection
client_port() {
	ip netns exec "$client" ss -Htn state established dst "$VIP" dport = ":$PORT" |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^10\.77\.1\.2:/) { sub(/.*:/, "", $i); print $i } }'
}

# conn_destination NS SOURCE: the real server of SOURCE's entry in NS's IPVS
# connection table ("" when there is none)
conn_destination() {
	ipvs "$1" -c | awk -v src="$2" -v vip="$VIP:$PORT" '$4 == src && $5 == vip { print $6 }'
}

has_conn() { [[ -n $(conn_destination "$@") ]]; }

# kill_lb1: lb1 dies: every process in it gets SIGKILL (keepalived sends no
# priority-0 advert and removes nothing), then its link goes down
kill_lb1() {
	local pids
	mapfile -t pids < <(ip netns pids "$lb1")
	kill -KILL "${pids[@]}"
	ip -n "$lan" link set dev to-lb1 down
}

# watch_takeover: in the background, writes to takeover.at the time (now_ms)
# at which the VIP is added to lb2, from lb2's address events (polling would
# add its own delay under TCG)
watch_takeover() {
	(
		ip -n "$lb2" monitor address dev eth0 | while read -r line; do
			if [[ " $line " == *" $VIP/32 "* ]]; then
				now_ms >"$ROUND_DIR/takeover.at"
				break
			fi
		done
	) &
	TAKEOVER_PID=$!
	sleep 1 # ip monitor subscribed
}

ms_as_seconds() {
	printf '%d.%02d' $(($1 / 1000)) $(($1 % 1000 / 10))
}

# fail_over: kills lb1, sends "second" at once, waits for the outcome (see
# await_answer), then checks lb2 took over. Sets TAKEOVER_MS and OUTCOME_MS.
fail_over() {
	local start lb2_mac
	pretty lb1 "SIGKILL to every process, link down (a dead node)"
	watch_takeover
	start=$(now_ms)
	kill_lb1
	say second
	await_answer 2 30
	OUTCOME_MS=$(($(now_ms) - start))
	wait_until 15 "the VIP on lb2" test -s "$ROUND_DIR/takeover.at"
	TAKEOVER_MS=$(($(cat "$ROUND_DIR/takeover.at") - start))
	notified lb2 MASTER || fail "keepalived did not write lb2's MASTER state to its notify FIFO"
	sync_daemons_are "$lb2" master || fail "lb2, now master, runs '$(daemons "$lb2")' sync daemons, not the master one"
	lb2_mac=$(mac_of "$lb2")
	wait_until 5 "the client's ARP entry for $VIP on lb2's $lb2_mac" client_arp_is "$lb2_mac"
	pretty ok "lb2 took over: VIP on lb2, its MASTER state notified, the client's ARP entry for $VIP is lb2's $lb2_mac"
	sed 's/^/    lb2 notify FIFO | /' "$ROUND_DIR/lb2.vrrp"
}

# start_round TAG: a fresh topology, its namespace names unique to the round
start_round() {
	local tag=$1
	lan=fc-ha$tag-l-$$ client=fc-ha$tag-c-$$ lb1=fc-ha$tag-lb1-$$ lb2=fc-ha$tag-lb2-$$
	rs1=fc-ha$tag-r1-$$ rs2=fc-ha$tag-r2-$$
	ROUND_DIR=$WORK/round-$tag
	mkdir -p "$ROUND_DIR"
	setup_topology
}

# keepalived_remarks: what keepalived said about the rendered files or its
# settings in either node (deprecations, notices, warnings), for the log
keepalived_remarks() {
	local node
	for node in lb1 lb2; do
		grep -iE 'deprecat|notice|warn|error|unknown|does not exist' "${KEEPALIVED_LOG[$node]}" |
			sed "s/^/    $node keepalived | /" || true
	done
}

# end_round: stops everything the round started and deletes its namespaces
# and the agent's run directories
end_round() {
	local ns
	[[ -z $CHAT_FD ]] || exec {CHAT_FD}>&-
	CHAT_FD=''
	[[ -z $TAKEOVER_PID ]] || kill "$TAKEOVER_PID" 2>/dev/null || true
	TAKEOVER_PID=''
	for ns in "${L4_NAMESPACES[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
	done
	sleep 0.5
	for ns in "${L4_NAMESPACES[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
	L4_NAMESPACES=()
	L4_KEEPALIVED_PID=''
	((${#FIFO_READERS[@]} == 0)) || kill "${FIFO_READERS[@]}" 2>/dev/null || true
	FIFO_READERS=()
	((${#AGENT_DIRS[@]} == 0)) || rm -rf "${AGENT_DIRS[@]}"
	AGENT_DIRS=()
	rmdir "$AGENT_RUN" 2>/dev/null || true
}

# first_exchange: opens the connection, "first" answered; prints the server
first_exchange() {
	open_chat
	say first
	await_answer 1 10
	[[ $OUTCOME == answered && $ANSWER =~ ^(rs[12])\ first$ ]] ||
		fail "first line: $OUTCOME '$ANSWER' $(cat "$ROUND_DIR/chat.err")"
	SERVER=${BASH_REMATCH[1]}
	SOURCE=10.77.1.2:$(client_port)
	pretty ok "the connection from $SOURCE reached $SERVER through lb1: '$ANSWER'"
	on "$lb1" ipvsadm -Lnc
	[[ $(conn_destination "$lb1" "$SOURCE") == "10.77.1.1${SERVER#rs}:$PORT" ]] ||
		fail "lb1's connection table has no entry $SOURCE -> $SERVER"
}

round_with_sync() {
	local on_lb1 on_lb2
	pretty round "1/2: with the backup sync daemon in lb2"
	start_round 1
	start_pair on
	first_exchange
	wait_until 10 "lb2 learning the connection from the sync daemon" has_conn "$lb2" "$SOURCE"
	pretty lb2 "has the entry $WAITED s after the first line"
	on "$lb2" ipvsadm -Lnc
	on_lb1=$(conn_destination "$lb1" "$SOURCE")
	on_lb2=$(conn_destination "$lb2" "$SOURCE")
	[[ $on_lb2 == "$on_lb1" ]] || fail "lb2's entry sends $SOURCE to $on_lb2, lb1's to $on_lb1"
	fail_over
	on "$lb2" ipvsadm -Lnc
	[[ $OUTCOME == answered && $ANSWER == "$SERVER second" ]] ||
		fail "after the failover the connection gave: $OUTCOME '$ANSWER' $(cat "$ROUND_DIR/chat.err")"
	echo "TIMING sync: VIP on lb2 $(ms_as_seconds "$TAKEOVER_MS") s after lb1 died;" \
		"answer on the same connection after $(ms_as_seconds "$OUTCOME_MS") s"
	pretty ok "the connection survived the failover: '$ANSWER' from $SERVER, as before, through lb2"
	keepalived_remarks
	end_round
}

round_without_sync() {
	pretty round "2/2, negative control: lb2's backup sync daemon stopped"
	start_round 2
	start_pair off
	first_exchange
	# The master sends what it has at least every 2 s (IPVS_SYNC_FLUSH_TIME).
	sleep 5
	on "$lb2" ipvsadm -Lnc
	! has_conn "$lb2" "$SOURCE" || fail "lb2 learned the connection without its backup sync daemon"
	fail_over
	on "$lb2" ipvsadm -Lnc
	case $OUTCOME in
	answered) fail "the connection survived without the sync daemon ('$ANSWER'): the test proves nothing" ;;
	ended) pretty ok "the connection was reset by lb2: $(grep -o 'Connection reset by peer' "$ROUND_DIR/chat.err" || cat "$ROUND_DIR/chat.err")" ;;
	timeout) pretty ok "no answer on the connection within 30 s" ;;
	esac
	echo "TIMING no sync: VIP on lb2 $(ms_as_seconds "$TAKEOVER_MS") s after lb1 died;" \
		"connection $OUTCOME after $(ms_as_seconds "$OUTCOME_MS") s"
	end_round
}

round_with_sync
round_without_sync
echo "OK: an established DR connection survives lb1's death through lb2 with the IPVS sync daemon, and does not without it"
