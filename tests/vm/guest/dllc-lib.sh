# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2154 # the caller names the namespaces (client, director, rsA-C) and WORK
#
# Shared by the ip_vs_dllc guest tests (test_dllc_*.sh); sourced after
# l4-lib.sh, not run. The module is built and installed with DKMS from the
# read-only /src once per boot (dllc_install); every test installs it if an
# earlier one has not.
#
# The topology (dllc_topology) is the layer-4 NAT one, dual stack, with three
# real servers that answer with their name from a python3 server instead of
# nginx, so that a client can hold connections open for as long as it likes:
#
#  $client                    $director                          $rsA, $rsB, $rsC
# +---------------------+    +------------------------------+    +---------------------------+
# | eth0 10.77.1.2      |----| front 10.77.1.1              |----| eth0 10.77.{2,3,4}.2      |
# |      fd77:1::2      |veth|   VIP 10.77.1.100/32         |veth|      fd77:{2,3,4}::2      |
# | python3 clients     |    |   VIP6 fd77:1::100/128       |    | :9000 name, then held open|
# +---------------------+    | rsA 10.77.2.1  fd77:2::1     |    | :9001 name, then closed   |
#                            | rsB 10.77.3.1  fd77:3::1     |    | via the director          |
#                            | rsC 10.77.4.1  fd77:4::1     |    +---------------------------+
#                            | ipvsadm -s dllc, forwarding  |
#                            +------------------------------+

readonly DLLC_SRC=/src/appliance/kernel/ip_vs_dllc
readonly DLLC_PROC=/proc/net/ip_vs_dllc
readonly DLLC_PARAMS=/sys/module/ip_vs_dllc/parameters
readonly VIP=10.77.1.100 VIP6=fd77:1::100
readonly RSA=10.77.2.2 RSB=10.77.3.2 RSC=10.77.4.2
DLLC_VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$DLLC_SRC/dkms.conf")
readonly DLLC_VERSION

# dllc_install: builds and installs the module with DKMS (dllc_reinstall:
# whatever DKMS state an earlier, failed test left goes first), unless it is
# installed already (an earlier test of this boot did it), and loads it. Sets
# DLLC_BUILD_S to the seconds it took (0: nothing to do).
dllc_install() {
	DLLC_BUILD_S=0
	if modinfo -n ip_vs_dllc >/dev/null 2>&1 && [[ -f $(modinfo -n ip_vs_dllc) ]]; then
		pretty dkms "ip_vs_dllc already installed: $(modinfo -n ip_vs_dllc)"
	else
		dllc_reinstall
	fi
	modprobe ip_vs_dllc
}

# dllc_reinstall: dllc_install even if it is installed already
dllc_reinstall() {
	! grep -q '^ip_vs_dllc ' /proc/modules || rmmod ip_vs_dllc
	dkms remove -m ip-vs-dllc -v "$DLLC_VERSION" --all >/dev/null 2>&1 || true
	dllc_dkms
}

# dllc_dkms: the source copied under /usr/src, then dkms add, build and
# install, as the appliance image does. The build runs with
# KBUILD_CHECKSRC=2, what `make check` (C=2) sets: sparse checks the sources
# in the same kbuild run (each costs half a minute of start-up under TCG), and
# any warning in DKMS's make.log, sparse's or the compiler's, fails the test.
dllc_dkms() {
	local kver src=/usr/src/ip-vs-dllc-$DLLC_VERSION start log
	kver=$(uname -r)
	# DKMS wants the source under /usr/src; /src is read-only and may hold
	# the host's build products of `make test`.
	rm -rf "$src"
	cp -r "$DLLC_SRC" "$src"
	rm -f "$src/test/dllc_core_test"
	start=$(now_ms)
	pretty dkms "add, build (with sparse) and install ip-vs-dllc/$DLLC_VERSION for $kver"
	dkms add -m ip-vs-dllc -v "$DLLC_VERSION"
	log=/var/lib/dkms/ip-vs-dllc/$DLLC_VERSION/$kver/$(uname -m)/log/make.log
	KBUILD_CHECKSRC=2 dkms build -m ip-vs-dllc -v "$DLLC_VERSION" ||
		fail "dkms build failed: $(cat "/var/lib/dkms/ip-vs-dllc/$DLLC_VERSION/build/make.log" 2>/dev/null)"
	pretty dkms "make.log of the build:"
	sed 's/^/    | /' "$log"
	grep -q 'CHECK .*ip_vs_dllc\.c' "$log" || fail "sparse did not run in the DKMS build"
	! grep -E '(warning|error):' "$log" || fail "the DKMS build (sparse, gcc) has warnings (above)"
	dkms install -m ip-vs-dllc -v "$DLLC_VERSION"
	DLLC_BUILD_S=$(seconds_since "$start")
	pretty dkms "built (sparse clean) and installed in $DLLC_BUILD_S s: $(dkms status ip-vs-dllc)"
	modinfo -n ip_vs_dllc >/dev/null || fail "modinfo does not find ip_vs_dllc after dkms install"
}

# dllc_dmesg_mark: remembers how long the kernel log is now
dllc_dmesg_mark() {
	DLLC_DMESG_LINES=$(dmesg | wc -l)
}

# dllc_check_dmesg: nothing the kernel logged since dllc_dmesg_mark is a BUG,
# WARNING, Oops, RCU stall, lockdep splat or memory corruption report
dllc_check_dmesg() {
	local new
	new=$(dmesg | tail -n +"$((DLLC_DMESG_LINES + 1))")
	if grep -E 'BUG[: ]|WARNING:|Oops|detected stall|circular locking|general protection|KASAN|corruption|refcount_t:|scheduling while atomic|sleeping function called' <<<"$new"; then
		echo "---- kernel log since the test began ----"
		echo "$new"
		fail "the kernel logged a problem (above)"
	fi
	pretty ok "kernel log clean ($(wc -l <<<"$new") new lines)"
}

# dllc_param NAME VALUE: sets a module parameter
dllc_param() {
	pretty sysfs "$DLLC_PARAMS/$1 = $2"
	echo "$2" >"$DLLC_PARAMS/$1"
}

# dllc_topology: the namespaces of the diagram above, the name servers started
dllc_topology() {
	local ns
	for ns in "$client" "$director" "$rsA" "$rsB" "$rsC"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	nat_server "$director" "$rsA" rsA 10.77.2
	nat_server "$director" "$rsB" rsB 10.77.3
	nat_server "$director" "$rsC" rsC 10.77.4
	# The same over IPv6 (nodad: usable at once).
	ip -n "$director" addr add fd77:1::1/64 dev front nodad
	ip -n "$director" addr add "$VIP6/128" dev front nodad
	ip -n "$client" addr add fd77:1::2/64 dev eth0 nodad
	local i=2 rs
	for rs in rsA rsB rsC; do
		ip -n "$director" addr add "fd77:$i::1/64" dev "$rs" nodad
		ns=${!rs}
		ip -n "$ns" addr add "fd77:$i::2/64" dev eth0 nodad
		ip -n "$ns" route add default via "fd77:$i::1"
		((++i))
	done
	ip netns exec "$director" sysctl -qw net.ipv6.conf.all.forwarding=1
	start_name_server "$rsA" A
	start_name_server "$rsB" B
	start_name_server "$rsC" C
	wait_until 30 "the name servers answering" servers_answer
}

# start_name_server NS NAME: on port 9000 answers NAME and keeps the
# connection open; on 9001 answers NAME and closes it (IPv4 and IPv6).
start_name_server() {
	ip netns exec "$1" python3 - "$2" >"$WORK/$1.server.log" 2>&1 <<-'EOF' &
		import socket, sys, threading
		name = (sys.argv[1] + "\n").encode()
		held = []
		def serve(port, hold):
		    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
		    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
		    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		    s.bind(("::", port))
		    s.listen(256)
		    while True:
		        c, _ = s.accept()
		        c.sendall(name)
		        if hold:
		            held.append(c)
		        else:
		            c.close()
		threading.Thread(target=serve, args=(9001, False), daemon=True).start()
		serve(9000, True)
	EOF
}

# servers_answer: each server answers its name, asked from the director
servers_answer() {
	[[ $(ask_names "$director" "$RSA" 9001 1) == A && $(ask_names "$director" "$RSB" 9001 1) == B &&
		$(ask_names "$director" "$RSC" 9001 1) == C ]] 2>/dev/null
}

# ask_names NS HOST PORT COUNT: COUNT connections one after the other, each
# read to its end; prints the answers one per line ("error" for a failure)
ask_names() {
	ip netns exec "$1" python3 - "$2" "$3" "$4" <<-'EOF'
		import socket, sys
		host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
		for _ in range(count):
		    try:
		        with socket.create_connection((host, port), timeout=5) as s:
		            data = b""
		            while chunk := s.recv(64):
		                data += chunk
		        print(data.decode().strip() or "error", flush=True)
		    except OSError:
		        print("error", flush=True)
	EOF
}

# hold_conns NS HOST PORT COUNT OUT: COUNT connections one after the other,
# each kept open once it has read the server's name; the names go to OUT, one
# per line, then "held". Runs in the background (HOLD_PID) until killed;
# waits until all are open.
hold_conns() {
	local ns=$1 host=$2 port=$3 count=$4 out=$5
	pretty "$ns" "holding $count connections to $host:$port"
	ip netns exec "$ns" python3 - "$host" "$port" "$count" >"$out" 2>&1 <<-'EOF' &
		import socket, sys, time
		host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
		held = []
		for _ in range(count):
		    s = socket.create_connection((host, port), timeout=10)
		    data = b""
		    while not data.endswith(b"\n"):
		        chunk = s.recv(64)
		        if not chunk:
		            break
		        data += chunk
		    print(data.decode().strip() or "error", flush=True)
		    held.append(s)
		print("held", flush=True)
		time.sleep(3600)
	EOF
	# shellcheck disable=SC2034 # for the caller
	HOLD_PID=$!
	wait_until 60 "$count connections held to $host:$port" grep -qx held "$out"
}

# names_in OUT: the names a hold_conns wrote, space-separated
names_in() {
	grep -vx held "$1" | tr '\n' ' ' | sed 's/ $//'
}

# count_of NAME WORDS...: how many of WORDS are NAME
count_of() {
	local name=$1 n=0 w
	shift
	for w in "$@"; do [[ $w == "$name" ]] && ((++n)); done
	echo "$n"
}

# dllc_write NS LINE...: each LINE (no newline added) in one write() of its
# own to NS's /proc/net/ip_vs_dllc; fails the test unless all are accepted
dllc_write() {
	local ns=$1 results
	shift
	results=$(dllc_try_write "$ns" "$@" | tr '\n' ' ')
	[[ $results == "$(printf 'ok %.0s' "$@")" ]] || fail "writes in $ns: $results"
}

# dllc_try_write NS LINE...: each LINE in one write() of its own; prints
# "ok" or the error's name (EINVAL, ENOENT, ...) for each, one per line
dllc_try_write() {
	local ns=$1
	shift
	pretty "$ns" "write $DLLC_PROC: $(printf "'%q' " "$@")" >&2
	ip netns exec "$ns" python3 - "$DLLC_PROC" "$@" <<-'EOF'
		import errno, os, sys
		for line in sys.argv[2:]:
		    fd = os.open(sys.argv[1], os.O_WRONLY)
		    try:
		        n = os.write(fd, line.encode())
		        print("ok" if n == len(line.encode()) else f"short write {n}")
		    except OSError as e:
		        print(errno.errorcode.get(e.errno, str(e.errno)))
		    finally:
		        os.close(fd)
	EOF
}

# dllc_table NS: the /proc/net/ip_vs_dllc of NS
dllc_table() {
	ip netns exec "$1" cat "$DLLC_PROC"
}

# dllc_field NS SERVICE DEST COLUMN: one column (load, age_ms, effective,
# overhead, weight) of the line of DEST in SERVICE ("tcp VIP:PORT", "fwm N")
dllc_field() {
	local ns=$1 svc=$2 dest=$3 col
	case $4 in
	load) col=4 ;; age_ms) col=5 ;; effective) col=6 ;; overhead) col=7 ;; weight) col=8 ;;
	*) fail "dllc_field: no column $4" ;;
	esac
	dllc_table "$ns" | awk -v s="$svc" -v d="$dest" -v c="$col" \
		'$1 " " $2 == s && $3 == d { print $c; found = 1 } END { exit !found }' ||
		fail "dllc_field: $dest of $svc is not in $DLLC_PROC"
}

# expect_field NS SERVICE DEST COLUMN VALUE
expect_field() {
	local got
	got=$(dllc_field "$1" "$2" "$3" "$4")
	[[ $got == "$5" ]] || { dllc_table "$1"; fail "$4 of $3 in $2: $got, want $5"; }
}

# active_is NS SERVICE DEST N: DEST has N active connections (ipvsadm)
active_is() {
	[[ $(active_conns "$1" "$2" "$3") == "$4" ]]
}
