#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer 4, NAT: keepalived's SSL_GET, HTTP_GET with an MD5 digest, DNS_CHECK,
# PING_CHECK and MISC_CHECK (plain and misc_dynamic) on live traffic, with the
# files Fulcrum's compiler made for tests/vm/l4/checks.json.
#
#  $client                   $director                        $rs1, $rs2
# +----------------+      +-------------------------+      +-----------------------------------+
# | eth0 10.77.1.2 |------| front 10.77.1.1         |------| eth0 10.77.2.2 / 10.77.3.2        |
# | curl, python3  | veth |   VIP 10.77.1.100/32    | veth | nginx :80 "rsN", /digest.txt      |
# +----------------+      | rs1   10.77.2.1         |--+   |   :443 TLS (self-signed, openssl  |
#                         | rs2   10.77.3.1         |  |   |   in the guest): "rsN"; vhost     |
#                         | keepalived (checks)     |  |   |   rs.fulcrum.test serves          |
#                         | /etc/fulcrum/checks/    |  +---|   /tls-health, the default 404s   |
#                         |   fulcrum-l4-exit       |      | python3 udp/53: DNS answers, and  |
#                         +-------------------------+      |   "rsN" to "who"                  |
#                                                          +-----------------------------------+
#
# VIP 10.77.1.100 (1 s checks: delay_loop 1, retry 1, delay_before_retry 1;
# script checks every 2 s):
#   :443    rr, SSL_GET /tls-health, virtualhost + SNI rs.fulcrum.test
#   :81     rr, HTTP_GET /digest.txt, digest = md5 of "fulcrum digest page\n"
#   udp/53  rr, DNS_CHECK type A check.fulcrum.test
#   :82     rr, PING_CHECK
#   :83     rr, MISC_CHECK "fulcrum-l4-exit misc"; rs2 is the pool's backup
#           member (sorry server)
#   :84     wrr, MISC_CHECK "fulcrum-l4-exit dynamic" with misc_dynamic
#
# keepalived gives a check script nothing about the real server it checks;
# the compiler puts the member's address and port first (as F5's external
# monitors get them), so fulcrum-l4-exit ADDRESS PORT NAME exits with the
# number in /tmp/fulcrum-l4-exit/NAME@ADDRESS, else .../NAME (1 when neither):
# one member of :84 can get its own verdict; :83 has one checked member and
# the sorry server.
#
# Each failure is measured (TIMING lines): rs1's TLS page gone (404), rs1's
# digest page changed, rs1's DNS responder stopped, the script's exit status
# (1; 12 -> weight 10; 3 -> weight 1), rs1's eth0 down; after each, the
# requests show where the traffic went, and rs1 comes back when repaired.
set -euo pipefail

readonly VIP=10.77.1.100
readonly client=fc-l4c-$$ director=fc-l4d-$$ rs1=fc-l4r1-$$ rs2=fc-l4r2-$$
readonly TLS_HOST=rs.fulcrum.test
readonly CHECKS_DIR=/etc/fulcrum/checks EXIT_DIR=/tmp/fulcrum-l4-exit
readonly EXIT_SCRIPT=$CHECKS_DIR/fulcrum-l4-exit
readonly DIGEST_PAGE='fulcrum digest page'
WORK=$(mktemp -d /tmp/l4-checks.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
TIMINGS=()
CREATED_DIRS=()
declare -A DNS_PID=()

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	((${#TIMINGS[@]} == 0)) || printf 'TIMING %s\n' "${TIMINGS[@]}"
	l4_cleanup
	rm -rf "$EXIT_DIR"
	rm -f "$EXIT_SCRIPT"
	local i
	for ((i = ${#CREATED_DIRS[@]} - 1; i >= 0; i--)); do rmdir "${CREATED_DIRS[i]}" 2>/dev/null; done
	return 0
}
trap cleanup EXIT

# The limits, as in test_l4_nat_health: 3 x the theory + 5 s. A 1 s check
# fails a server after delay_loop + retry x delay_before_retry = 2 s (plus the
# connect timeouts of checks that time out), a 2 s script check after 4 s.
readonly DOWN_1S=11 UP_1S=8 DOWN_2S=17 UP_2S=11

timed() {
	local what=$1 limit=$2
	shift 2
	wait_until "$limit" "$what" "$@"
	TIMINGS+=("$what: $WAITED s (limit $limit s)")
	pretty timing "$what: $WAITED s"
}

make_tls_cert() {
	command -v openssl >/dev/null ||
		fail "the guest has no openssl: SSL_GET cannot be tested (openssl comes with ca-certificates in build-rootfs.sh)"
	pretty guest "a self-signed certificate for $TLS_HOST (openssl $(openssl version | cut -d' ' -f2))"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=$TLS_HOST" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null ||
		fail "openssl could not make a certificate"
	chmod 644 "$WORK/tls.key"
}

# tls_servers NS NAME: nginx server blocks on 443. The default one answers GET /
# with NAME (the traffic through the VIP) and 404 for anything else; the
# virtual host rs.fulcrum.test also serves the files, /tls-health among them,
# so the check passes only when keepalived sends the virtual host. Both log
# "SNI HOST URI STATUS" to $WORK/NS/tls-access.log.
tls_servers() {
	local dir=$WORK/$1 name=$2
	cat <<-EOF
		    log_format tls '\$ssl_server_name \$host \$request_uri \$status';
		    server {
		        listen 443 ssl default_server;
		        ssl_certificate $WORK/tls.crt;
		        ssl_certificate_key $WORK/tls.key;
		        access_log $dir/tls-access.log tls;
		        location = / { return 200 "$name\n"; }
		        location / { return 404; }
		    }
		    server {
		        listen 443 ssl;
		        server_name $TLS_HOST;
		        ssl_certificate $WORK/tls.crt;
		        ssl_certificate_key $WORK/tls.key;
		        access_log $dir/tls-access.log tls;
		        root $dir/www;
		        location = / { return 200 "$name\n"; }
		    }
	EOF
}

# start_dns NS NAME: a DNS responder on udp/53 in NS (python3): a query gets
# NOERROR with one A record for A questions; the datagram "who" gets NAME.
# Every DNS query is logged to $WORK/NS.dns.log.
start_dns() {
	local ns=$1 name=$2
	ip netns exec "$ns" python3 -u - "$name" >>"$WORK/$ns.dns.log" 2>&1 <<-'EOF' &
		import socket, sys
		name = sys.argv[1]
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.bind(("0.0.0.0", 53))
		while True:
		    data, peer = s.recvfrom(512)
		    if data == b"who\n":
		        s.sendto(name.encode() + b"\n", peer)
		        continue
		    if len(data) < 17 or data[2] & 0x80:
		        continue
		    end = data.index(0, 12) + 5  # the question: QNAME, QTYPE, QCLASS
		    answer = b""
		    if data[end - 4:end - 2] == b"\x00\x01":
		        answer = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + bytes([10, 77, 0, 1])
		    header = data[:2] + b"\x81\x80\x00\x01" + (b"\x00\x01" if answer else b"\x00\x00") + b"\x00\x00\x00\x00"
		    s.sendto(header + data[12:end] + answer, peer)
		    print("DNS query from", peer[0], "answered", flush=True)
	EOF
	DNS_PID[$ns]=$!
}

stop_dns() {
	local ns=$1 pid=${DNS_PID[$1]}
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

dns_queries() { grep -c '^DNS query' "$WORK/$1.dns.log" 2>/dev/null || true; }

attach_server() {
	local ns=$1 name=$2 net=$3
	nat_server "$director" "$ns" "$name" "$net"
	mkdir -p "$WORK/$ns/www"
	printf '%s\n' "$DIGEST_PAGE" >"$WORK/$ns/www/digest.txt"
	echo ok >"$WORK/$ns/www/tls-health"
	start_web "$ns" "$name" "$(tls_servers "$ns" "$name")"
	start_dns "$ns" "$name"
	wait_http "$director" "http://$net.2/"
}

install_exit_script() {
	local dir
	for dir in /etc/fulcrum "$CHECKS_DIR"; do
		[[ -d $dir ]] && continue
		mkdir -m 755 "$dir"
		CREATED_DIRS+=("$dir")
	done
	[[ ! -e $EXIT_SCRIPT ]] || fail "$EXIT_SCRIPT exists already"
	cat >"$EXIT_SCRIPT" <<-EOF
		#!/bin/sh
		# fulcrum-l4-exit ADDRESS PORT NAME (keepalived runs it per member, the compiler
		# puts the member's address and port first): exits with the number in
		# $EXIT_DIR/NAME@ADDRESS, else $EXIT_DIR/NAME (1 when neither); keeps what it
		# was given (arguments, environment) in $EXIT_DIR/NAME@ADDRESS.seen
		{ echo "args: \$*"; export -p; } >"$EXIT_DIR/\$3@\$1.seen"
		code=1
		if [ -r "$EXIT_DIR/\$3@\$1" ]; then read -r code <"$EXIT_DIR/\$3@\$1"
		elif [ -r "$EXIT_DIR/\$3" ]; then read -r code <"$EXIT_DIR/\$3"; fi
		exit "\$code"
	EOF
	chown root:root "$EXIT_SCRIPT"
	chmod 755 "$EXIT_SCRIPT"
	mkdir -p "$EXIT_DIR"
	echo 0 >"$EXIT_DIR/misc"
	echo 0 >"$EXIT_DIR/dynamic"
	pretty guest "installed $EXIT_SCRIPT (root, 0755); misc and dynamic exit 0"
}

# set_exit NAME STATUS: what fulcrum-l4-exit NAME exits with from now on
set_exit() {
	pretty guest "fulcrum-l4-exit $1 now exits $2"
	echo "$2" >"$EXIT_DIR/$1"
}

setup_topology() {
	local ns
	for ns in "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	make_tls_cert
	attach_server "$rs1" rs1 10.77.2
	attach_server "$rs2" rs2 10.77.3
	install_exit_script
}

# ask_n N URL [CURL ARGS]: N requests from the client, answers on one line
ask_n() { http_get_n "$1" "$client" "${@:2}"; }

ask_tls() { ask_n "$1" "https://$VIP/" -k; }
ask_udp() { udp_ask "$client" "$VIP" 53 "$1" each | paste -sd ' '; }

# The page, the digest and the virtual host the case relies on, checked
# before keepalived runs: a failure below is about keepalived.
check_premises() {
	local conf=$L4_CASES/checks/keepalived.conf want got
	want=$(awk '$1 == "digest" { print $2; exit }' "$conf")
	got=$(ip netns exec "$director" curl -fsS http://10.77.2.2/digest.txt | md5sum | cut -d' ' -f1)
	[[ $got == "$want" ]] || fail "md5 of rs1's /digest.txt is $got, the rendered digest $want"
	pretty ok "md5 of /digest.txt as served: $got = the digest in keepalived.conf"
	got=$(ip netns exec "$director" curl -ks -o /dev/null -w '%{http_code}' https://10.77.2.2/tls-health)
	[[ $got == 404 ]] || fail "https://10.77.2.2/tls-health without the virtual host answered $got, not 404"
	got=$(ip netns exec "$director" curl -ks -o /dev/null -w '%{http_code}' \
		--resolve "$TLS_HOST:443:10.77.2.2" "https://$TLS_HOST/tls-health")
	[[ $got == 200 ]] || fail "https://$TLS_HOST/tls-health on rs1 answered $got, not 200"
	pretty ok "/tls-health over TLS: 404 without the virtual host, 200 with $TLS_HOST"
	: >"$WORK/$rs1/tls-access.log" # from here on, only keepalived asks for /tls-health
}

all_members_in() {
	local port
	for port in 443 81 82 84; do
		has_real_server "$director" "-t $VIP:$port" "10.77.2.2:${PORT_OF[$port]}" 1 || return 1
		has_real_server "$director" "-t $VIP:$port" "10.77.3.2:${PORT_OF[$port]}" 1 || return 1
	done
	has_real_server "$director" "-u $VIP:53" 10.77.2.2:53 1 &&
		has_real_server "$director" "-u $VIP:53" 10.77.3.2:53 1 &&
		has_real_server "$director" "-t $VIP:83" 10.77.2.2:80 1 &&
		lacks_real_server "$director" "-t $VIP:83" 10.77.3.2:80
}
declare -A PORT_OF=([443]=443 [81]=80 [82]=80 [84]=80)

checks_ran() {
	(($(dns_queries "$rs1") >= 3 && $(dns_queries "$rs2") >= 3))
}

check_initial_state() {
	# Real servers start up (no alpha): wait until the checks have run a few
	# times, then every member must still be there.
	wait_until 30 "three DNS_CHECK rounds" checks_ran
	sleep 2
	all_members_in || {
		ipvs "$director"
		fail "a member failed its check while every server is healthy"
	}
	ipvs "$director"
	pretty ok "every check passes on healthy servers (DNS queries answered: rs1 $(dns_queries "$rs1"), rs2 $(dns_queries "$rs2"))"
	check_tls_log
	expect_alternating "both up, TLS :443" "$(ask_tls 4)"
	expect_alternating "both up, :81" "$(ask_n 4 "http://$VIP:81/")"
	expect_alternating "both up, :82" "$(ask_n 4 "http://$VIP:82/")"
	expect_answers "rs1 up, the sorry server idle, :83" "rs1 rs1" "$(ask_n 2 "http://$VIP:83/")"
	expect_alternating "both up, :84" "$(ask_n 4 "http://$VIP:84/")"
	expect_alternating "both up, udp/53" "$(ask_udp 4)"
}

# What SSL_GET sent, from rs1's nginx log: TLS with SNI, the virtual host, 200.
check_tls_log() {
	local log=$WORK/$rs1/tls-access.log checks
	checks=$(grep -c ' /tls-health ' "$log" || true)
	((checks > 0)) || fail "rs1's nginx logged no /tls-health request"
	grep ' /tls-health ' "$log" | grep -qv "^$TLS_HOST $TLS_HOST /tls-health 200\$" &&
		fail "an SSL_GET request without SNI or virtual host $TLS_HOST, or not 200: $(grep ' /tls-health ' "$log" | sort | uniq -c)"
	pretty ok "rs1's nginx: $checks SSL_GET requests, each with SNI $TLS_HOST, Host $TLS_HOST, answered 200"
}

check_ssl_get() {
	pretty "$rs1" "/tls-health removed: the virtual host answers 404"
	mv "$WORK/$rs1/www/tls-health" "$WORK/$rs1/www/tls-health.off"
	timed "SSL_GET removes rs1 from :443 (404)" "$DOWN_1S" lacks_real_server "$director" "-t $VIP:443" 10.77.2.2:443
	has_real_server "$director" "-t $VIP:81" 10.77.2.2:80 1 || fail "rs1 left :81 too"
	expect_answers "rs1's TLS page gone, :443" "rs2 rs2 rs2 rs2" "$(ask_tls 4)"
	mv "$WORK/$rs1/www/tls-health.off" "$WORK/$rs1/www/tls-health"
	timed "SSL_GET puts rs1 back into :443" "$UP_1S" has_real_server "$director" "-t $VIP:443" 10.77.2.2:443 1
	expect_alternating "rs1 back, TLS :443" "$(ask_tls 4)"
}

check_http_digest() {
	pretty "$rs1" "/digest.txt changed (still 200)"
	printf '%s, changed\n' "$DIGEST_PAGE" >"$WORK/$rs1/www/digest.txt"
	timed "HTTP_GET digest removes rs1 from :81 (page changed)" "$DOWN_1S" \
		lacks_real_server "$director" "-t $VIP:81" 10.77.2.2:80
	has_real_server "$director" "-t $VIP:82" 10.77.2.2:80 1 || fail "rs1 left :82 too"
	expect_answers "rs1's page changed, :81" "rs2 rs2 rs2 rs2" "$(ask_n 4 "http://$VIP:81/")"
	printf '%s\n' "$DIGEST_PAGE" >"$WORK/$rs1/www/digest.txt"
	timed "HTTP_GET digest puts rs1 back into :81" "$UP_1S" has_real_server "$director" "-t $VIP:81" 10.77.2.2:80 1
	expect_alternating "rs1 back, :81" "$(ask_n 4 "http://$VIP:81/")"
}

check_dns() {
	local before
	pretty "$rs1" "stopping the DNS responder"
	stop_dns "$rs1"
	timed "DNS_CHECK removes rs1 from udp/53 (responder stopped)" "$DOWN_1S" \
		lacks_real_server "$director" "-u $VIP:53" 10.77.2.2:53
	expect_answers "rs1's responder stopped, udp/53" "rs2 rs2 rs2 rs2" "$(ask_udp 4)"
	before=$(dns_queries "$rs1")
	start_dns "$rs1" rs1
	timed "DNS_CHECK puts rs1 back into udp/53" "$UP_1S" has_real_server "$director" "-u $VIP:53" 10.77.2.2:53 1
	pretty ok "rs1's restarted responder answered $(($(dns_queries "$rs1") - before)) DNS_CHECK queries"
	expect_alternating "rs1 back, udp/53" "$(ask_udp 4)"
}

sorry_in() {
	lacks_real_server "$director" "-t $VIP:83" 10.77.2.2:80 &&
		has_real_server "$director" "-t $VIP:83" 10.77.3.2:80
}

rs1_without_sorry() {
	has_real_server "$director" "-t $VIP:83" 10.77.2.2:80 1 &&
		lacks_real_server "$director" "-t $VIP:83" 10.77.3.2:80
}

check_misc() {
	set_exit misc 1
	timed "MISC_CHECK removes rs1 from :83 (exit 1); the sorry server comes in" "$DOWN_2S" sorry_in
	ipvs "$director" -t "$VIP:83"
	expect_answers "script failing, :83 (sorry server rs2)" "rs2 rs2 rs2" "$(ask_n 3 "http://$VIP:83/")"
	set_exit misc 0
	timed "MISC_CHECK puts rs1 back into :83 (exit 0); the sorry server leaves" "$UP_2S" rs1_without_sorry
	expect_answers "script passing, :83" "rs1 rs1" "$(ask_n 2 "http://$VIP:83/")"
	local seen
	seen=$(head -n 1 "$EXIT_DIR/misc@10.77.2.2.seen")
	[[ $seen == "args: 10.77.2.2 80 misc" ]] || fail "the script got '$seen', want the member's address and port first"
	pretty ok "the script ran with the member's address and port first: $seen"
}

# weights_84 RS1_WEIGHT [RS2_WEIGHT]: both members in :84 with these weights
weights_84() {
	has_real_server "$director" "-t $VIP:84" 10.77.2.2:80 "$1" &&
		has_real_server "$director" "-t $VIP:84" 10.77.3.2:80 "${2:-$1}"
}

none_in_84() {
	lacks_real_server "$director" "-t $VIP:84" 10.77.2.2:80 &&
		lacks_real_server "$director" "-t $VIP:84" 10.77.3.2:80
}

check_misc_dynamic() {
	# Per member: the script sees which member it checks.
	set_exit dynamic@10.77.2.2 12
	timed "misc_dynamic: rs1's script exits 12: rs1 weight 10, rs2 keeps 1 on :84" "$UP_2S" weights_84 10 1
	ipvs "$director" -t "$VIP:84"
	rm -f "$EXIT_DIR/dynamic@10.77.2.2"
	set_exit dynamic 12
	timed "misc_dynamic: exit 12 for both sets weight 10 on :84" "$UP_2S" weights_84 10
	expect_alternating "both at weight 10 (wrr), :84" "$(ask_n 4 "http://$VIP:84/")"
	set_exit dynamic 0
	timed "misc_dynamic: exit 0 gives back the configured weight 1 (keepalived 2.3)" "$UP_2S" weights_84 1
	set_exit dynamic 1
	timed "misc_dynamic: exit 1 removes both members of :84" "$DOWN_2S" none_in_84
	if ip netns exec "$client" curl -fsS --max-time 3 "http://$VIP:84/" 2>/dev/null; then
		fail ":84 answered with no real server"
	fi
	pretty ok ":84 without real servers: the request fails"
	set_exit dynamic 3
	timed "misc_dynamic: exit 3 puts both back with weight 1" "$UP_2S" weights_84 1
	expect_alternating "both back, :84" "$(ask_n 4 "http://$VIP:84/")"
}

check_ping() {
	on "$rs1" ip link set dev eth0 down
	timed "PING_CHECK removes rs1 from :82 (its eth0 down)" "$DOWN_1S" \
		lacks_real_server "$director" "-t $VIP:82" 10.77.2.2:80
	expect_answers "rs1's interface down, :82" "rs2 rs2 rs2 rs2" "$(ask_n 4 "http://$VIP:82/")"
	on "$rs1" ip link set dev eth0 up
	ip -n "$rs1" route replace default via 10.77.2.1
	timed "PING_CHECK puts rs1 back into :82 (eth0 up)" "$UP_1S" has_real_server "$director" "-t $VIP:82" 10.77.2.2:80 1
	expect_alternating "rs1 back, :82" "$(ask_n 4 "http://$VIP:82/")"
	# Every other check failed rs1 too while its link was down; all come back.
	wait_until "$UP_2S" "rs1 back in every service after its link returned" all_members_in
	pretty ok "rs1 is back in every service"
}

setup_topology
check_premises
start_keepalived "$director" checks
wait_for_services "$director" 6
check_initial_state
check_ssl_get
check_http_digest
check_dns
check_misc
check_misc_dynamic
check_ping
echo "OK: SSL_GET, HTTP_GET digest, DNS_CHECK, PING_CHECK and MISC_CHECK (with misc_dynamic weights) take members out and back on live traffic"
