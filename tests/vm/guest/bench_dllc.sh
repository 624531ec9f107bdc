#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Seed 002, the DLLC study's experiment, through IPVS NAT in the QEMU guest
# (the host kernel has no IPVS). Not a test: run.sh runs it only when named
# (tests/bench/dllc-ipvs.sh does). The HAProxy half runs on the host:
# tests/bench/dllcbench.py.
#
# Two real servers of unequal capacity: tests/bench/dllcserver.py, a fixed
# amount of CPU work per request, each in a cgroup v2 capped with cpu.max
# (fast: FAST_CPU, slow: SLOW_CPU = half of it). One IPVS service per row, all
# NAT to the same two servers, on VIP:8001, 8002, ...:
#
#   rr  wrr  lc  wlc  (equal weights)   wlc-2-1 (hand-picked 2:1)   dllc
#
#  $client                    $director                        $rsF, $rsS
# +---------------------+    +----------------------------+    +--------------------------+
# | eth0 10.77.1.2      |----| front 10.77.1.1            |----| eth0 10.77.2.2 / 10.77.3.2|
# | httperf             |veth|   VIP 10.77.1.100/32       |veth| dllcserver.py :8081      |
# | dllcipvs.py         |    | rsf 10.77.2.1, rss 10.77.3.1    |  (cgroup fulcrum-bench-*)|
# +---------------------+    | ipvsadm -m, one service    |    | fulcrum-loadd :3334      |
#                            | per row; the loads feeder  |    | via the director         |
#                            +----------------------------+    +--------------------------+
#
# DLLC's loads: fulcrum-loadd on each server measures its cgroup (busy +
# throttled share over 2 s); a loop in the director's namespace, this
# script's own (the node agent's loop needs a whole appliance revision),
# reads GET /v1/load of both every FEED_MS and writes "tcp VIP:PORT RIP:PORT
# MILLI" lines into /proc/net/ip_vs_dllc, as the agent does.
#
# The measuring is tests/bench/dllcipvs.py (run in the client's namespace):
# each server's capacity alone (its CPU per request from its cgroup, then
# httperf at twice quota / that), then the rates LOADS x their sum, ROUNDS
# times, rows rotated at every rate; httperf, one request per connection.
# Writes /results/bench_dllc.json; the host renders the report.
#
# Settings (run.sh passes FULCRUM_BENCH_L4_* to the guest; lists with commas):
# FULCRUM_BENCH_L4_DLLC_ROWS, _LOADS, _ROUNDS, _SECONDS, _TIMEOUT, _FAST_CPU,
# _SLOW_CPU, _WORK_MS, _WORKERS, _QUEUE, _FEED_MS.
set -euo pipefail

# Lists are comma-separated: the kernel command line that carries them splits at spaces.
readonly ROWS=${FULCRUM_BENCH_L4_DLLC_ROWS:-rr,wrr,lc,wlc,wlc-2-1,dllc}
readonly LOADS=${FULCRUM_BENCH_L4_DLLC_LOADS:-0.5,1,1.5,2}
readonly ROUNDS=${FULCRUM_BENCH_L4_DLLC_ROUNDS:-2}
readonly SECONDS_PER_RUN=${FULCRUM_BENCH_L4_DLLC_SECONDS:-15}
readonly TIMEOUT=${FULCRUM_BENCH_L4_DLLC_TIMEOUT:-5}
# httperf polls: it takes one of the two vCPUs whole; the servers' quotas and
# the director share the other.
readonly FAST_CPU=${FULCRUM_BENCH_L4_DLLC_FAST_CPU:-0.4}
readonly SLOW_CPU=${FULCRUM_BENCH_L4_DLLC_SLOW_CPU:-0.2}
# Under TCG a request's overhead (accept, parse, thread switches) costs many
# milliseconds of guest CPU: the work must be much larger for the quotas to
# set the capacities, and one worker per server avoids the switches.
readonly WORK_MS=${FULCRUM_BENCH_L4_DLLC_WORK_MS:-50}
readonly FEED_MS=${FULCRUM_BENCH_L4_DLLC_FEED_MS:-1000}
# (workers + queue) / the slow server's capacity stays below TIMEOUT.
readonly WORKERS=${FULCRUM_BENCH_L4_DLLC_WORKERS:-1} QUEUE=${FULCRUM_BENCH_L4_DLLC_QUEUE:-3}
readonly PORT=8081 FIRST_VPORT=8001
readonly FAST=10.77.2.2 SLOW=10.77.3.2
readonly client=fc-xc-$$ director=fc-xd-$$ rsF=fc-xf-$$ rsS=fc-xs-$$
readonly LOADD=/results/bin/fulcrum-loadd
readonly SERVER=/src/tests/bench/dllcserver.py
readonly OUT=/results/bench_dllc.json
readonly CGROUP=/sys/fs/cgroup
WORK=$(mktemp -d /tmp/bench-dllc.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
# shellcheck source=tests/vm/guest/dllc-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dllc-lib.sh"

cleanup() {
	set +e
	l4_cleanup
	local name
	for name in fast slow; do rmdir "$CGROUP/fulcrum-bench-$name" 2>/dev/null; done
}
trap cleanup EXIT

# scheduler ROW: "SCHEDULER FAST_WEIGHT SLOW_WEIGHT" (the rows of tests/bench/dllcplan.py)
scheduler() {
	case $1 in
	rr | wrr | lc | wlc | dllc) echo "$1 1 1" ;;
	wrr-2-1) echo "wrr 2 1" ;;
	wlc-2-1) echo "wlc 2 1" ;;
	*) fail "unknown row $1" ;;
	esac
}

check_tools() {
	command -v httperf >/dev/null ||
		fail "httperf is not in the guest image: it needs 'httperf' in PACKAGES of tests/vm/build-rootfs.sh"
	[[ -x $LOADD ]] || fail "$LOADD is missing (run.sh builds agents/cmd/* into /results/bin)"
}

setup_cgroups() {
	mountpoint -q "$CGROUP" || mount -t cgroup2 none "$CGROUP"
	grep -qw cpu "$CGROUP/cgroup.controllers" || fail "cgroup v2 has no cpu controller"
	echo +cpu >"$CGROUP/cgroup.subtree_control"
	(cd /src && python3 -m tests.bench.dllcipvs groups --fast "$FAST_CPU" --slow "$SLOW_CPU")
}

setup_topology() {
	local ns
	for ns in "$client" "$director" "$rsF" "$rsS"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	nat_server "$director" "$rsF" rsf 10.77.2
	nat_server "$director" "$rsS" rss 10.77.3
	# The capacity runs and the servers' counters go straight to them.
	ip -n "$client" route add 10.77.0.0/16 via 10.77.1.1
	ip netns exec "$client" sysctl -qw net.ipv4.tcp_tw_reuse=1 "net.ipv4.ip_local_port_range=1024 65535"
}

# start_server NS NAME ADDRESS UNITS: dllcserver.py in NS, moved into its cgroup
start_server() {
	local ns=$1 name=$2 address=$3 units=$4 pid
	# ip netns exec executes the program itself: $! is the server's pid.
	ip netns exec "$ns" python3 "$SERVER" serve --listen "$address:$PORT" --name "$name" --work "$units" \
		--workers "$WORKERS" --queue "$QUEUE" </dev/null >"$WORK/$name.log" 2>&1 &
	pid=$!
	echo "$pid" >"$CGROUP/fulcrum-bench-$name/cgroup.procs"
	wait_http "$client" "http://$address:$PORT/health"
	pretty "$ns" "$name server $pid in $CGROUP/fulcrum-bench-$name: cpu.max $(cat "$CGROUP/fulcrum-bench-$name/cpu.max")"
}

# start_loadd NS NAME ADDRESS: fulcrum-loadd beside the server, outside its cgroup.
# nsenter enters the network namespace only: ip netns exec mounts a new /sys,
# without the cgroup hierarchy loadd reads.
start_loadd() {
	local ns=$1 name=$2 address=$3
	nsenter --net="/run/netns/$ns" "$LOADD" --agent-listen= --http-listen=:3334 \
		--source="cgroup:$CGROUP/fulcrum-bench-$name" --window=2s --sample=250ms \
		</dev/null >"$WORK/loadd-$name.log" 2>&1 &
	wait_http "$director" "http://$address:3334/v1/load"
}

# add_services: one NAT service per row, VIP:8001 upwards
add_services() {
	local row port=$FIRST_VPORT sched wfast wslow
	for row in ${ROWS//,/ }; do
		read -r sched wfast wslow <<<"$(scheduler "$row")"
		on "$director" ipvsadm -A -t "$VIP:$port" -s "$sched"
		on "$director" ipvsadm -a -t "$VIP:$port" -r "$FAST:$PORT" -m -w "$wfast"
		on "$director" ipvsadm -a -t "$VIP:$port" -r "$SLOW:$PORT" -m -w "$wslow"
		((++port))
	done
	ipvs "$director"
}

# dllc_port: the dllc row's virtual port, or nothing
dllc_port() {
	local row port=$FIRST_VPORT
	for row in ${ROWS//,/ }; do
		[[ $row == dllc ]] && echo "$port"
		((++port))
	done
}

# start_feeder PORT: the loads of both servers into ip_vs_dllc for VIP:PORT,
# every FEED_MS (one write() per line, as the module wants)
start_feeder() {
	ip netns exec "$director" python3 - "$VIP:$1" "$FAST:$PORT" "$SLOW:$PORT" "$FEED_MS" \
		</dev/null >"$WORK/feeder.log" 2>&1 <<-'EOF' &
		import json, os, socket, sys, time
		service, servers, interval = sys.argv[1], sys.argv[2:4], int(sys.argv[4]) / 1000
		def load_milli(address):  # python3-minimal has no http.client
		    with socket.create_connection((address, 3334), timeout=1) as conn:
		        conn.sendall(b"GET /v1/load HTTP/1.0\r\n\r\n")
		        data = b""
		        while chunk := conn.recv(4096):
		            data += chunk
		    head, _, body = data.partition(b"\r\n\r\n")
		    if b" 200 " not in head.split(b"\r\n")[0]:
		        raise ValueError(head[:60])
		    return json.loads(body)["load_milli"]
		while True:
		    for server in servers:
		        try:
		            milli = load_milli(server.split(":")[0])
		            fd = os.open("/proc/net/ip_vs_dllc", os.O_WRONLY)
		            try:
		                os.write(fd, f"tcp {service} {server} {milli}\n".encode())
		            finally:
		                os.close(fd)
		        except (OSError, ValueError, KeyError) as err:
		            print(f"{server}: {err}", flush=True)  # the module keeps the last load
		    time.sleep(interval)
	EOF
}

# check_rows: every row's service answers from both servers before measuring
check_rows() {
	local row port=$FIRST_VPORT answers i
	for row in ${ROWS//,/ }; do
		answers=()
		for i in 1 2 3 4 5 6; do answers+=("$(http_get "$client" "http://$VIP:$port/" | tail -n 1)"); done
		[[ " ${answers[*]} " == *" fast "* && " ${answers[*]} " == *" slow "* ]] ||
			fail "$row ($VIP:$port): answers ${answers[*]}"
		pretty ok "$row on $VIP:$port: ${answers[*]}"
		((++port))
	done
}

measure() {
	local units=$1 per_unit=$2 row port=$FIRST_VPORT rows=()
	for row in ${ROWS//,/ }; do
		rows+=(--row "$row=$port")
		((++port))
	done
	local note="IPVS NAT in a QEMU TCG guest; DLLC's loads fed by the benchmark's own loop"
	note+=" (fulcrum-loadd GET /v1/load -> /proc/net/ip_vs_dllc every $FEED_MS ms), not the node agent."
	nsenter --net="/run/netns/$client" env PYTHONPATH=/src python3 -m tests.bench.dllcipvs measure \
		--fast "$FAST_CPU" --slow "$SLOW_CPU" --vip "$VIP" "${rows[@]}" \
		--server "fast=$FAST" --server "slow=$SLOW" --port "$PORT" --loads "${LOADS//,/ }" \
		--seconds "$SECONDS_PER_RUN" --repeats "$ROUNDS" --timeout "$TIMEOUT" \
		--workers "$WORKERS" --queue "$QUEUE" --work-units "$units" --cpu-us-per-unit "$per_unit" \
		--dllc-version "$DLLC_VERSION" --note "$note" --output "$OUT"
}

main() {
	local per_unit units port
	check_tools
	[[ " ${ROWS//,/ } " != *" dllc "* ]] || dllc_install
	setup_cgroups
	setup_topology
	per_unit=$(python3 "$SERVER" calibrate)
	units=$(python3 -c "print(max(1, round($WORK_MS * 1000 / $per_unit)))")
	pretty guest "$units work units per request ($per_unit µs each, $WORK_MS ms)"
	start_server "$rsF" fast "$FAST" "$units"
	start_server "$rsS" slow "$SLOW" "$units"
	add_services
	port=$(dllc_port)
	if [[ -n $port ]]; then
		start_loadd "$rsF" fast "$FAST"
		start_loadd "$rsS" slow "$SLOW"
		start_feeder "$port"
		sleep 3
		pretty "$director" "loads fed into ip_vs_dllc:"
		dllc_table "$director"
	fi
	check_rows
	measure "$units" "$per_unit"
	[[ -z $port ]] || { pretty "$director" "ip_vs_dllc at the end:"; dllc_table "$director"; }
	echo "OK: $OUT"
}

main
