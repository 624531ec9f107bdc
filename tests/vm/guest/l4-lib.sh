# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Shared by the layer-4 guest scripts (test_l4_*.sh, bench_l4.sh); sourced, not
# run. Every node of a topology is a network namespace: the director runs
# keepalived on a case rendered by Fulcrum's compiler on the host
# (tests/vm/render-l4.py -> /results/l4/<case>/), the real servers run nginx
# (and socat for UDP) answering with their own name, the client sends traffic.
#
# The caller sets WORK (a scratch directory of its own) and calls l4_cleanup
# from its EXIT trap: it stops what these helpers started and deletes the
# namespaces registered with add_ns.

readonly L4_CASES=/results/l4
L4_NAMESPACES=()
L4_KEEPALIVED_PID=

pretty() { echo -e "\x1b[32m\x1b[1m[+] $1:\x1b[0m $2"; }
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# on NS CMD...: runs CMD in NS, printing it first
on() {
	local ns=$1
	shift
	pretty "$ns" "$*"
	ip netns exec "$ns" "$@"
}

# now_ms: monotonic enough for timing checks (the guest clock does not jump)
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# seconds_since START_MS: "2.4", elapsed seconds with one decimal
seconds_since() {
	local ms=$(($(now_ms) - $1))
	printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

add_ns() {
	ip netns add "$1"
	ip -n "$1" link set lo up
	L4_NAMESPACES+=("$1")
}

# veth NS_A DEV_A NS_B DEV_B: a veth pair between two namespaces, both ends up
veth() {
	ip link add name "$2" netns "$1" type veth peer name "$4" netns "$3"
	ip -n "$1" link set dev "$2" up
	ip -n "$3" link set dev "$4" up
}

# nat_front DIRECTOR CLIENT VIP: the client side of the IPv4 NAT topology:
# CLIENT (10.77.1.2) on DIRECTOR's link "front" (10.77.1.1 and VIP/32), and
# DIRECTOR forwarding
nat_front() {
	local lb=$1 cl=$2 vip=$3
	veth "$lb" front "$cl" eth0
	ip -n "$lb" addr add 10.77.1.1/24 dev front
	ip -n "$lb" addr add "$vip/32" dev front
	ip -n "$cl" addr add 10.77.1.2/24 dev eth0
	ip netns exec "$lb" sysctl -qw net.ipv4.ip_forward=1
}

# nat_server DIRECTOR NS NAME NET: real server NS (NET.2) on DIRECTOR's link
# NAME (NET.1), its gateway the director, so NAT replies come back through it
# (the test scripts' own names are readonly: these locals must differ)
nat_server() {
	local lb=$1 rs=$2 link=$3 net=$4
	veth "$lb" "$link" "$rs" eth0
	ip -n "$lb" addr add "$net.1/24" dev "$link"
	ip -n "$rs" addr add "$net.2/24" dev eth0
	ip -n "$rs" route add default via "$net.1"
}

# start_web NS NAME [EXTRA]: nginx in NS. GET / on port 80 answers NAME; ports
# 8000 and 8050 answer NAME:PORT; /health serves $WORK/NS/www/health ("status:
# ok" until a test changes it); /static.html is a 605-byte file whose last line
# is NAME, for the benchmark. EXTRA, when given, is more configuration for the
# http block (a test's own server blocks: TLS, IPv6).
start_web() {
	local ns=$1 name=$2 extra=${3:-}
	local dir=$WORK/$ns
	mkdir -p "$dir/www" "$dir/tmp"
	[[ -f $dir/www/health ]] || echo "status: ok" >"$dir/www/health"
	head -c 600 /dev/zero | tr '\0' 'x' >"$dir/www/static.html"
	printf '\n%s\n' "$name" >>"$dir/www/static.html"
	# nginx's workers run as www-data: they must reach the files
	chmod a+rx "$WORK"
	chmod -R a+rX "$dir"
	cat >"$dir/nginx.conf" <<-EOF
		worker_processes 1;
		pid $dir/nginx.pid;
		error_log $dir/error.log warn;
		events { worker_connections 1024; }
		http {
		    access_log off;
		    client_body_temp_path $dir/tmp/body;
		    proxy_temp_path $dir/tmp/proxy;
		    fastcgi_temp_path $dir/tmp/fastcgi;
		    uwsgi_temp_path $dir/tmp/uwsgi;
		    scgi_temp_path $dir/tmp/scgi;
		    keepalive_requests 100000;
		    default_type text/plain;
		    server {
		        listen 80;
		        root $dir/www;
		        location = / { return 200 "$name\n"; }
		    }
		    server {
		        listen 8000;
		        listen 8050;
		        location / { return 200 "$name:\$server_port\n"; }
		    }
		$extra
		}
	EOF
	ip netns exec "$ns" nginx -q -c "$dir/nginx.conf" -e "$dir/error.log" ||
		fail "nginx did not start in $ns: $(cat "$dir/error.log" 2>/dev/null)"
}

# stop_web NS: stops NS's nginx and waits until port 80 is closed
stop_web() {
	local ns=$1 pid
	pid=$(cat "$WORK/$ns/nginx.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	fail "nginx in $ns did not stop"
}

# start_udp_name NS NAME PORT [ADDRESS]: answers every datagram on PORT with
# NAME. Bound to ADDRESS when given, so that a direct-routing real server
# answers from the VIP (its socket would otherwise pick its own address).
# Returns once it has answered a datagram sent in NS (wait_udp).
start_udp_name() {
	local ns=$1 name=$2 port=$3 bind=${4:+,bind=$4}
	ip netns exec "$ns" socat "UDP4-RECVFROM:$port$bind,reuseaddr,fork" "EXEC:echo $name" </dev/null \
		>"$WORK/$ns.socat.log" 2>&1 &
	wait_udp "$ns" "${4:-127.0.0.1}" "$port" "$name"
}

# start_udp_name6 NS NAME PORT: start_udp_name over IPv6
start_udp_name6() {
	local ns=$1 name=$2 port=$3
	ip netns exec "$ns" socat "UDP6-RECVFROM:$port,reuseaddr,fork" "EXEC:echo $name" </dev/null \
		>"$WORK/$ns.socat6.log" 2>&1 &
	wait_udp "$ns" ::1 "$port" "$name"
}

# wait_udp NS HOST PORT NAME: until HOST:PORT answers NAME to a datagram sent in
# NS, so that a test's first datagram cannot race the server's start (a DR UDP
# check once got no answer to its first datagram in a loaded emulated guest; a
# late start is the likely cause, not a proven one).
wait_udp() {
	local ns=$1 host=$2 port=$3 name=$4
	for _ in $(seq 10); do
		[[ $(udp_ask "$ns" "$host" "$port" 1) == "$name" ]] && return 0
		sleep 0.2
	done
	fail "the UDP server $name never answered on $host:$port in $ns"
}

# http_get NS URL [CURL ARGS...]: the body, or fails the test
http_get() {
	local ns=$1 url=$2
	shift 2
	ip netns exec "$ns" curl -fsS --max-time 5 "$@" "$url" || fail "GET $url from $ns failed"
}

# http_get_n N NS URL [CURL ARGS...]: N requests, the bodies on one line
http_get_n() {
	local n=$1 i answers=()
	shift
	for ((i = 0; i < n; i++)); do answers+=("$(http_get "$@")"); done
	echo "${answers[*]}"
}

# wait_http NS URL: until URL answers (topology check before IPVS is involved)
wait_http() {
	local ns=$1 url=$2
	for _ in $(seq 50); do
		ip netns exec "$ns" curl -fs --max-time 2 -o /dev/null "$url" && return 0
		sleep 0.2
	done
	fail "$url never answered from $ns"
}

# udp_ask NS HOST PORT COUNT [same|each]: COUNT datagrams to HOST (IPv4 or
# IPv6), one answer printed per line; from ONE client socket (one source port:
# "same", the default) or from a new socket each time ("each"). With one source
# port IPVS keeps every datagram on one real server, unless one-packet
# scheduling is on. An answer from another address than HOST is printed as
# ANSWER@ADDRESS:PORT (a client that checks where its answer comes from would
# drop it).
udp_ask() {
	ip netns exec "$1" python3 - "$2" "$3" "$4" "${5:-same}" <<-'EOF'
		import socket, sys
		host, port, count, ports = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
		family, anywhere = (socket.AF_INET6, "::") if ":" in host else (socket.AF_INET, "0.0.0.0")
		def client(source_port):
		    s = socket.socket(family, socket.SOCK_DGRAM)
		    s.settimeout(5)
		    s.bind((anywhere, source_port))
		    return s
		s = client(40053)
		for i in range(count):
		    if ports == "each":
		        s.close()
		        s = client(0)
		    s.sendto(b"who\n", (host, port))
		    try:
		        data, source = s.recvfrom(256)
		    except TimeoutError:
		        print("timeout")
		        continue
		    answer = data.decode().strip()
		    print(answer if source[:2] == (host, port) else f"{answer}@{source[0]}:{source[1]}")
	EOF
}

# start_keepalived NS CASE [CONF]: keepalived in the foreground of a background
# job in NS, on the files the compiler rendered for CASE; the case's nftables
# file (port-range marks) is loaded first, as the node agent does. With CONF,
# CASE's keepalived.conf is copied there first and keepalived reads the copy,
# which reload_keepalived can replace.
start_keepalived() {
	local ns=$1 case=$2
	local dir=$L4_CASES/$case run=$WORK/keepalived-$case
	local conf=${3:-$dir/keepalived.conf}
	[[ -f $dir/keepalived.conf ]] || fail "$dir/keepalived.conf is missing: run.sh renders it (render-l4.py)"
	mkdir -p "$run"
	if [[ $conf != "$dir/keepalived.conf" ]]; then
		cp "$dir/keepalived.conf" "$conf"
		L4_KEEPALIVED_CONF=$conf
	fi
	pretty "$ns" "keepalived on $dir/keepalived.conf${3:+ (copied to $conf)}"
	sed 's/^/    | /' "$dir/keepalived.conf"
	if [[ -f $dir/keepalived.d/fulcrum.nft ]]; then
		on "$ns" nft -f "$dir/keepalived.d/fulcrum.nft"
	fi
	ip netns exec "$ns" keepalived -n -l -D -f "$conf" \
		-p "$run/keepalived.pid" -c "$run/checkers.pid" -r "$run/vrrp.pid" \
		</dev/null >"$run/keepalived.log" 2>&1 &
	L4_KEEPALIVED_PID=$!
	L4_KEEPALIVED_LOG=$run/keepalived.log
}

# reload_keepalived CASE: CASE's keepalived.conf replaces the copy keepalived
# was started on (start_keepalived NS CASE CONF), then SIGHUP: a reload in the
# same process, as the node agent applies a new revision. Prints the difference.
reload_keepalived() {
	local new=$L4_CASES/$1/keepalived.conf
	[[ -n $L4_KEEPALIVED_PID && -n ${L4_KEEPALIVED_CONF:-} ]] ||
		fail "reload_keepalived: keepalived was not started on a copy (start_keepalived NS CASE CONF)"
	[[ -f $new ]] || fail "$new is missing: run.sh renders it (render-l4.py)"
	pretty keepalived "reload on $new (SIGHUP to $L4_KEEPALIVED_PID); the change:"
	diff -u "$L4_KEEPALIVED_CONF" "$new" | sed 's/^/    | /' || true
	cp "$new" "$L4_KEEPALIVED_CONF"
	kill -HUP "$L4_KEEPALIVED_PID"
}

stop_keepalived() {
	local pid=$L4_KEEPALIVED_PID
	[[ -n $pid ]] || return 0
	L4_KEEPALIVED_PID=
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

show_keepalived_log() {
	[[ -n ${L4_KEEPALIVED_LOG:-} && -f $L4_KEEPALIVED_LOG ]] || return 0
	echo "---- keepalived log (last 40 lines) ----"
	tail -n 40 "$L4_KEEPALIVED_LOG"
	echo "----"
}

# ipvs NS ARGS...: ipvsadm -Ln ARGS in NS (numeric, no printing)
ipvs() {
	local ns=$1
	shift
	ip netns exec "$ns" ipvsadm -Ln "$@"
}

# real_servers NS SERVICE: "ADDRESS:PORT WEIGHT" per real server of SERVICE
# ("-t VIP:PORT", "-u VIP:PORT" or "-f MARK")
real_servers() {
	local ns=$1
	shift
	ipvs "$ns" "$@" 2>/dev/null | awk '$1 == "->" && $2 != "RemoteAddress:Port" { print $2, $4 }'
}

# has_real_server NS SERVICE ADDRESS:PORT [WEIGHT]: SERVICE ("-t VIP:PORT")
# lists the real server (with that weight)
has_real_server() {
	local ns=$1 svc=$2 rs=$3 weight=${4:-}
	# shellcheck disable=SC2086 # SERVICE is two words on purpose
	real_servers "$ns" $svc | awk -v rs="$rs" -v w="$weight" \
		'$1 == rs && (w == "" || $2 == w) { found = 1 } END { exit !found }'
}

lacks_real_server() { ! has_real_server "$@"; }

# conns NS SERVICE ADDRESS:PORT: "ACTIVE INACTIVE", the real server's connection
# counts in SERVICE ("-t VIP:PORT"); "0 0" when it is not there
conns() {
	local ns=$1 svc=$2 rs=$3
	# shellcheck disable=SC2086 # SERVICE is two words on purpose
	ipvs "$ns" $svc 2>/dev/null | awk -v rs="$rs" \
		'$1 == "->" && $2 == rs { a = $5; i = $6 } END { print a + 0, i + 0 }'
}

# active_conns NS SERVICE ADDRESS:PORT: the real server's active connections
active_conns() {
	local counts
	counts=$(conns "$@")
	echo "${counts% *}"
}

# hold_tcp NS HOST PORT [SOURCE]: an idle TCP connection from NS to HOST:PORT
# (from SOURCE), kept open in the background; its pid goes to HELD_PID. Kill it
# to close the connection (l4_cleanup kills what is left).
hold_tcp() {
	local ns=$1 host=$2 port=$3 bind=${4:+,bind=$4}
	pretty "$ns" "holding an idle connection to $host:$port${4:+ from $4}"
	ip netns exec "$ns" socat -u "TCP:$host:$port$bind" /dev/null </dev/null &
	# shellcheck disable=SC2034 # for the caller
	HELD_PID=$!
}

# wait_until LIMIT_S WHAT CMD...: polls CMD every 0.2 s; fails after LIMIT_S.
# Sets WAITED to the seconds it took (one decimal).
wait_until() {
	local limit=$1 what=$2
	shift 2
	local start
	start=$(now_ms)
	until "$@"; do
		if (($(now_ms) - start > limit * 1000)); then
			show_keepalived_log
			fail "$what: not within $limit s"
		fi
		sleep 0.2
	done
	WAITED=$(seconds_since "$start")
}

# wait_for_services NS COUNT: until keepalived has put COUNT virtual services
# into IPVS (its start-up takes a few seconds under TCG)
services_at_least() {
	(($(ipvs "$1" | grep -cE '^(TCP|UDP|FWM) ') >= $2))
}

wait_for_services() {
	local ns=$1 count=$2
	wait_until 60 "keepalived setting up $count virtual services" services_at_least "$ns" "$count"
	pretty "$ns" "keepalived set up $count virtual services in $WAITED s"
	ipvs "$ns"
}

# expect_answers WHAT EXPECTED ACTUAL...: the answers, in order, are exactly EXPECTED
expect_answers() {
	local what=$1 expected=$2
	shift 2
	local actual="$*"
	[[ $actual == "$expected" ]] || fail "$what: expected '$expected', got '$actual'"
	pretty ok "$what: $actual"
}

# expect_alternating WHAT ANSWERS: rs1 and rs2 strictly alternate (rr)
expect_alternating() {
	local what=$1 prev='' answer
	for answer in $2; do
		[[ $answer == rs1 || $answer == rs2 ]] || fail "$what: unexpected answer '$answer' in: $2"
		[[ $answer != "$prev" ]] || fail "$what: $answer twice in a row: $2"
		prev=$answer
	done
	[[ -n $prev ]] || fail "$what: no answers"
	pretty ok "$what alternate: $2"
}

# expect_counts WHAT RS1 RS2 ANSWERS: rs1 answered RS1 times, rs2 RS2 times
expect_counts() {
	local what=$1 want1=$2 want2=$3 answers=$4
	local n1 n2
	n1=$(tr ' ' '\n' <<<"$answers" | grep -cx rs1 || true)
	n2=$(tr ' ' '\n' <<<"$answers" | grep -cx rs2 || true)
	((n1 == want1 && n2 == want2)) || fail "$what: rs1 $n1, rs2 $n2 (want $want1:$want2): $answers"
	pretty ok "$what: rs1 $n1, rs2 $n2: $answers"
}

l4_cleanup() {
	set +e
	stop_keepalived
	local ns
	for ns in "${L4_NAMESPACES[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	sleep 0.5
	for ns in "${L4_NAMESPACES[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$WORK"
}
