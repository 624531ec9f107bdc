#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer-4 benchmark, in the QEMU guest (the host kernel has no IPVS). Not a
# test: run.sh runs it only when named (tests/bench/l4bench.sh does).
#
# The same two nginx real servers (one worker each), serving a 605-byte file,
# reached five ways:
#   direct   the client to rs1, no balancer (the reference)
#   direct2  the client to rs1 and rs2 at once, half the concurrency each, no
#            balancer: what the two servers give without one in front
#   nat      IPVS NAT (masquerading), rr, set up by keepalived
#   dr       IPVS direct routing, rr, set up by keepalived
#   haproxy  HAProxy 3.0 in the director, http mode, roundrobin
# keepalived.conf and haproxy.cfg come from one snapshot compiled by Fulcrum
# (tests/vm/l4/bench.json -> /results/l4/bench/).
#
#                               $lan: bridge br0
#        +------------------+------------------+------------------+
#  +-------------+   +--------------------+  +----------------+  +----------------+
#  | $client     |   | $director          |  | $rs1           |  | $rs2           |
#  | eth0        |   | eth0 10.77.1.1     |  | 10.77.1.11     |  | 10.77.1.12     |
#  | 10.77.1.2   |   |  VIP .101 (DR)     |  | lo: .101 (DR)  |  | lo: .101 (DR)  |
#  | ab          |   | nat0 10.77.9.1     |  | nginx          |  | nginx          |
#  | eth1        |---|  VIP .100 (NAT)    |  | 10.77.9.0/24   |  | 10.77.9.0/24   |
#  | 10.77.9.2   |   |  .200 (HAProxy)    |  | via 10.77.1.1  |  | via 10.77.1.1  |
#  +-------------+   | keepalived, HAProxy|  +----------------+  +----------------+
#                    +--------------------+
#
# The NAT and HAProxy VIPs sit on a second link (10.77.9.0/24) so that the real
# servers' answers to the client go back through the director (NAT needs
# that); DR and direct traffic stays on the bridge.
#
# Load: ab -c CONCURRENCY for SECONDS per run, with keep-alive (-k: requests
# per second) and without (one request per connection: connections per
# second). ROUNDS rounds; in each, every path runs once per mode, the order
# rotating. Reported: medians, and ratios of medians to direct and to HAProxy.
# Absolute numbers under TCG mean little; the ratios are the result.
#
# Writes /results/bench_l4.json and /results/bench_l4.md.
set -euo pipefail

readonly ROUNDS=${FULCRUM_BENCH_L4_ROUNDS:-5}
readonly SECONDS_PER_RUN=${FULCRUM_BENCH_L4_SECONDS:-3}
readonly CONCURRENCY=${FULCRUM_BENCH_L4_CONCURRENCY:-16}
readonly VIP_NAT=10.77.9.100 VIP_DR=10.77.1.101 VIP_PROXY=10.77.9.200
readonly lan=fc-bl-$$ client=fc-bc-$$ director=fc-bd-$$ rs1=fc-br1-$$ rs2=fc-br2-$$
readonly REALSERVER=/results/bin/fulcrum-realserver
readonly OUT=/results/bench_l4
WORK=$(mktemp -d /tmp/bench-l4.XXXXXX)
readonly WORK
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
declare -A URL=(
	[direct]=http://10.77.1.11/static.html
	[direct2]="http://10.77.1.11/static.html http://10.77.1.12/static.html"
	[nat]=http://$VIP_NAT/static.html
	[dr]=http://$VIP_DR/static.html
	[haproxy]=http://$VIP_PROXY/static.html
)
readonly PATHS=(direct direct2 nat dr haproxy)

cleanup() {
	local rc=$?
	((rc == 0)) || show_keepalived_log
	set +e
	[[ ! -f $WORK/haproxy.pid ]] || kill "$(cat "$WORK/haproxy.pid")" 2>/dev/null
	l4_cleanup
}
trap cleanup EXIT

plug() {
	local ns=$1 address=$2 port=$3
	veth "$lan" "$port" "$ns" eth0
	ip -n "$lan" link set dev "$port" master br0
	ip -n "$ns" addr add "$address/24" dev eth0
}

setup_real_server() {
	local ns=$1 name=$2 address=$3
	plug "$ns" "$address" "to-$name"
	ip -n "$ns" route add 10.77.9.0/24 via 10.77.1.1
	mkdir -p "$WORK/$ns"
	if [[ -x $REALSERVER ]]; then
		ip netns exec "$ns" "$REALSERVER" add --mode dr --state "$WORK/$ns/realserver.json" "$VIP_DR" >/dev/null
	else
		fail "$REALSERVER is missing (run.sh builds agents/cmd/* into /results/bin)"
	fi
	start_web "$ns" "$name"
}

setup_topology() {
	local ns
	for ns in "$lan" "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	ip -n "$lan" link add br0 type bridge
	ip -n "$lan" link set dev br0 up
	plug "$client" 10.77.1.2 to-client
	plug "$director" 10.77.1.1 to-director
	ip -n "$director" addr add "$VIP_DR/32" dev eth0
	veth "$director" nat0 "$client" eth1
	ip -n "$director" addr add 10.77.9.1/24 dev nat0
	ip -n "$director" addr add "$VIP_NAT/32" dev nat0
	ip -n "$director" addr add "$VIP_PROXY/32" dev nat0
	ip -n "$client" addr add 10.77.9.2/24 dev eth1
	# Connection-rate runs leave thousands of TIME_WAIT sockets behind.
	ip netns exec "$client" sysctl -qw net.ipv4.tcp_tw_reuse=1
	ip netns exec "$director" sysctl -qw net.ipv4.ip_forward=1
	setup_real_server "$rs1" rs1 10.77.1.11
	setup_real_server "$rs2" rs2 10.77.1.12
	wait_http "$client" http://10.77.1.11/
	wait_http "$client" http://10.77.1.12/
}

start_haproxy() {
	local conf=$L4_CASES/bench/haproxy.cfg
	mkdir -p "$WORK/haproxy"
	sed 's/^/    | /' "$conf"
	ip netns exec "$director" env FULCRUM_RUN_DIR="$WORK/haproxy" FULCRUM_CONF_DIR="$L4_CASES/bench" \
		haproxy -D -p "$WORK/haproxy.pid" -f "$conf" || fail "HAProxy did not start"
}

# check_path PATH: before measuring, the path answers and (balancers) spreads
# over both real servers
check_path() {
	local path=$1 url i answers=()
	for url in ${URL[$path]}; do
		for i in 1 2 3 4; do
			answers+=("$(http_get "$client" "$url" | tail -n 1)")
		done
	done
	case $path in
	direct) [[ ${answers[*]} == "rs1 rs1 rs1 rs1" ]] || fail "direct: answers ${answers[*]}" ;;
	direct2) [[ ${answers[*]} == "rs1 rs1 rs1 rs1 rs2 rs2 rs2 rs2" ]] || fail "direct2: answers ${answers[*]}" ;;
	*) expect_alternating "$path" "${answers[*]}" ;;
	esac
}

# syn_retransmits: the client's count of SYNs sent again (a lost or dropped
# SYN costs a connection one second)
syn_retransmits() {
	ip netns exec "$client" nstat -asz TcpExtTCPSynRetrans | awk '$1 == "TcpExtTCPSynRetrans" { print $2 }'
}

# measure PATH MODE ROUND: one ab run (one per URL, at once, sharing the
# concurrency); appends a JSON line to $WORK/runs.jsonl and keeps ab's output
# in $OUT.runs/
measure() {
	local path=$1 mode=$2 round=$3 keepalive=() urls url n=0 pids=() pid retrans
	local outputs=() out=$OUT.runs/$path-$mode-$round
	[[ $mode == keepalive ]] && keepalive=(-k)
	read -ra urls <<<"${URL[$path]}"
	retrans=$(syn_retransmits)
	for url in "${urls[@]}"; do
		# -t implies -n 50000: -n comes after it to lift that cap (ab keeps a
		# record per request, so not by much).
		ip netns exec "$client" ab "${keepalive[@]}" -q -c $((CONCURRENCY / ${#urls[@]})) \
			-t "$SECONDS_PER_RUN" -n 500000 "$url" >"$out.$n.txt" 2>&1 &
		pids+=($!)
		outputs+=("$out.$n.txt")
		((++n))
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || {
			cat "${outputs[@]}"
			fail "ab on $path ($mode) failed"
		}
	done
	retrans=$(($(syn_retransmits) - retrans))
	awk -v path="$path" -v mode="$mode" -v round="$round" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
		-v retrans="$retrans" '
		/^Complete requests:/ { complete += $3 }
		/^Failed requests:/ { failed += $3 }
		/^Non-2xx responses:/ { non2xx += $3 }
		/^Requests per second:/ { rps += $4 }
		/^Keep-Alive requests:/ { kept += $3 }
		/^Connect:/ && $6 > connect_max { connect_max = $6 }
		END {
			printf "{\"path\": \"%s\", \"mode\": \"%s\", \"round\": %d, \"rps\": %.2f, \"complete\": %d, " \
				"\"failed\": %d, \"non2xx\": %d, \"keepalive_requests\": %d, \"connect_max_ms\": %d, " \
				"\"syn_retransmits\": %d, \"load1\": %s}\n",
				path, mode, round, rps, complete, failed, non2xx, kept, connect_max, retrans, load
		}' "${outputs[@]}" | tee -a "$WORK/runs.jsonl"
}

run_rounds() {
	local round i path mode order
	for ((round = 1; round <= ROUNDS; round++)); do
		for mode in keepalive connection; do
			for ((i = 0; i < ${#PATHS[@]}; i++)); do
				order=$(((i + round - 1) % ${#PATHS[@]}))
				path=${PATHS[order]}
				measure "$path" "$mode" "$round"
			done
		done
	done
}

warm_up() {
	local path url
	for path in "${PATHS[@]}"; do
		for url in ${URL[$path]}; do
			ip netns exec "$client" ab -k -q -c "$CONCURRENCY" -n 500 "$url" >/dev/null
		done
	done
}

# report: medians and ratios, as JSON and a markdown table
report() {
	python3 - "$WORK/runs.jsonl" "$OUT" "$ROUNDS" "$SECONDS_PER_RUN" "$CONCURRENCY" \
		"$(uname -r)" "$(haproxy -v | sed -n 1p)" "$(nginx -v 2>&1)" "$(keepalived --version 2>&1 | sed -n 1p)" \
		"$(nproc)" <<-'EOF'
		import json, sys
		runs_file, out, rounds, seconds, concurrency, kernel, haproxy, nginx, keepalived, cpus = sys.argv[1:]
		runs = [json.loads(line) for line in open(runs_file)]
		bad = [r for r in runs if r["failed"] or r["non2xx"] or not r["complete"]]
		if bad:
		    sys.exit(f"runs with failed or non-2xx requests: {bad}")
		def median(values):
		    values = sorted(values)
		    n = len(values)
		    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
		paths = ["direct", "direct2", "nat", "dr", "haproxy"]
		modes = {"keepalive": "keep-alive (ab -k), requests/s", "connection": "one request per connection, connections/s"}
		medians = {m: {p: median([r["rps"] for r in runs if r["path"] == p and r["mode"] == m]) for p in paths} for m in modes}
		# Runs of one round sit close in time: their ratios share the conditions.
		def rps(p, m, n):
		    return next(r["rps"] for r in runs if r["path"] == p and r["mode"] == m and r["round"] == n)
		round_ratios = {
		    m: {p: {ref: median([rps(p, m, n) / rps(ref, m, n) for n in range(1, int(rounds) + 1)])
		            for ref in ("direct", "direct2", "haproxy")} for p in paths}
		    for m in modes
		}
		labels = {"direct": "direct to rs1 (no balancer)", "direct2": "direct to rs1 + rs2 at once (no balancer)",
		          "nat": "IPVS NAT (keepalived)", "dr": "IPVS DR (keepalived)",
		          "haproxy": "HAProxy 3.0, http mode (Fulcrum-compiled)"}
		settings = {"rounds": int(rounds), "seconds_per_run": float(seconds), "concurrency": int(concurrency),
		            "file_bytes": 605, "guest_cpus": int(cpus), "kernel": kernel, "haproxy": haproxy,
		            "nginx": nginx, "keepalived": keepalived}
		json.dump({"settings": settings, "medians": medians, "median_round_ratios": round_ratios, "runs": runs},
		          open(out + ".json", "w"), indent=1)
		lines = [
		    f"ab -c {concurrency}, {seconds} s per run, median of {rounds} rounds; 605-byte file from nginx "
		    f"(1 worker per server); QEMU TCG guest, {cpus} vCPUs, kernel {kernel}; {keepalived}, {haproxy}. "
		    "Ratios are of the medians (the JSON also has the median of the per-round ratios).",
		    "",
		]
		for mode, title in modes.items():
		    lines += [f"| {title} | median | ÷ direct (rs1) | ÷ direct (rs1 + rs2) | ÷ HAProxy | runs | SYN retransmits |",
		              "| --- | ---: | ---: | ---: | ---: | --- | ---: |"]
		    for p in paths:
		        m = medians[mode][p]
		        mine = [r for r in runs if r["path"] == p and r["mode"] == mode]
		        each = ", ".join(f"{r['rps']:.0f}" for r in mine)
		        retrans = sum(r["syn_retransmits"] for r in mine)
		        lines.append(f"| {labels[p]} | {m:.0f} | {m / medians[mode]['direct']:.2f} | "
		                     f"{m / medians[mode]['direct2']:.2f} | {m / medians[mode]['haproxy']:.2f} | {each} | {retrans} |")
		    lines.append("")
		open(out + ".md", "w").write("\n".join(lines))
		print("\n".join(lines))
	EOF
}

setup_topology
start_keepalived "$director" bench
wait_for_services "$director" 2
start_haproxy
for path in "${PATHS[@]}"; do check_path "$path"; done
: >"$WORK/runs.jsonl"
rm -rf "$OUT.runs"
mkdir -p "$OUT.runs"
warm_up
run_rounds
report
echo "OK: benchmark written to $OUT.json and $OUT.md"
