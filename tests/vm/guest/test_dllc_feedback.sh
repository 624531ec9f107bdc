#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# DLLC end to end on the appliance's kernel: fulcrum-loadd on two real servers,
# the node agent, keepalived from the files Fulcrum's compiler made for
# tests/vm/l4/dllc.json, and the ip_vs_dllc module (built and installed by
# DKMS, dllc-lib.sh). rs2 runs a CPU burner in its cgroup; the agent reads
# both loads and writes them into the module, which sends most new
# connections to the idle rs1; without the module (hidden and unloaded) the
# agent's wlc weights do the same; a silent fulcrum-loadd's load counts as
# the average. The checks are the agent's guest test (TestGuestDLLCFeedback in
# agents/cmd/fulcrum-agent), run here inside the director's namespace with a
# fake API, the one part of the stack the guest cannot run.
#
#  $client                  $director                             $rs1, $rs2
# +------------------+    +-----------------------------------+    +------------------------------+
# | eth0 10.77.1.2   |----| front 10.77.1.1, VIP 10.77.1.100  |----| eth0 10.77.{2,3}.2           |
# | curl             |veth| rs1 10.77.2.1   rs2 10.77.3.1     |veth| nginx :80 "rs1" / "rs2"      |
# +------------------+    | fulcrum-agent (test) + keepalived |    | fulcrum-loadd :3334, source  |
#                         | IPVS NAT, scheduler dllc          |    |   cgroup <CGROUPS>/<rs>      |
#                         +-----------------------------------+    | rs2: + a CPU burner in it    |
#                                                                  +------------------------------+
#
# Each server is a cgroup (cpu.max 50000 100000: half a CPU): nginx, its
# fulcrum-loadd and, for rs2, the burner run in it.
set -euo pipefail

readonly client=fc-dfc-$$ director=fc-dfd-$$ rs1=fc-dfr1-$$ rs2=fc-dfr2-$$
WORK=$(mktemp -d /tmp/dllc-feedback.XXXXXX)
readonly WORK
# cgroup2 mounted outside /sys: "ip netns exec" mounts a fresh sysfs over /sys,
# which would hide /sys/fs/cgroup from the fulcrum-loadd it starts.
readonly CGROUPS=/run/fulcrum-cgroup2
# shellcheck source=tests/vm/guest/l4-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/l4-lib.sh"
# shellcheck source=tests/vm/guest/dllc-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dllc-lib.sh"

cleanup() {
	local rc=$?
	if ((rc != 0)); then
		local log
		for log in "$WORK"/*.loadd.log; do
			[[ -f $log ]] && { echo "---- $log ----"; cat "$log"; }
		done
	fi
	l4_cleanup
	local group
	for group in "${rs1}" "${rs2}"; do
		[[ -d $CGROUPS/$group ]] || continue
		xargs -r kill -KILL <"$CGROUPS/$group/cgroup.procs" 2>/dev/null
		sleep 0.2
		rmdir "$CGROUPS/$group" 2>/dev/null
	done
	exit "$rc"
}
trap cleanup EXIT

# server_cgroup NAME: a cgroup with half a CPU; prints its path
server_cgroup() {
	local dir=$CGROUPS/$1
	mkdir -p "$dir"
	echo "50000 100000" >"$dir/cpu.max"
	echo "$dir"
}

# in_cgroup DIR CMD...: runs CMD (in the background) in the cgroup DIR
in_cgroup() {
	local dir=$1
	shift
	sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$dir" "$@" &
}

setup_cgroups() {
	mkdir -p "$CGROUPS"
	mountpoint -q "$CGROUPS" || mount -t cgroup2 none "$CGROUPS"
	grep -qw cpu "$CGROUPS/cgroup.subtree_control" || echo +cpu >"$CGROUPS/cgroup.subtree_control"
}

setup_servers() {
	local ns
	for ns in "$client" "$director" "$rs1" "$rs2"; do add_ns "$ns"; done
	nat_front "$director" "$client" "$VIP"
	nat_server "$director" "$rs1" rs1 10.77.2
	nat_server "$director" "$rs2" rs2 10.77.3
	local name group
	for name in rs1 rs2; do
		ns=${!name}
		group=$(server_cgroup "$ns")
		# nginx forks its workers from a process in the cgroup: they stay in it.
		echo $$ >"$group/cgroup.procs"
		start_web "$ns" "$name"
		echo $$ >"$CGROUPS/cgroup.procs"
		in_cgroup "$group" ip netns exec "$ns" /results/bin/fulcrum-loadd --agent-listen "" \
			--http-listen :3334 --source "cgroup:$group" --window 2s --sample 250ms \
			>"$WORK/$name.loadd.log" 2>&1
		eval "${name}_loadd=\$!"
	done
	pretty "$rs2" "a CPU burner in $CGROUPS/$rs2"
	in_cgroup "$CGROUPS/$rs2" sh -c 'while :; do :; done'
	wait_http "$director" http://10.77.2.2/
	wait_http "$director" http://10.77.3.2/
}

main() {
	dllc_install
	dllc_dmesg_mark
	setup_cgroups
	setup_servers
	local module
	module=$(modinfo -n ip_vs_dllc)
	pretty test "TestGuestDLLCFeedback in $director (module $module)"
	# shellcheck disable=SC2154 # rs2_loadd is set by eval in setup_servers
	ip netns exec "$director" env FULCRUM_VM_GUEST=1 FULCRUM_DLLC_BUNDLE="$L4_CASES/dllc" \
		FULCRUM_DLLC_CLIENT_NS="$client" FULCRUM_DLLC_RS2_LOADD_PID="$rs2_loadd" \
		FULCRUM_DLLC_MODULE="$module" \
		/results/bin/fulcrum-agent.test -test.run '^TestGuestDLLCFeedback$' -test.v -test.count=1 \
		-test.timeout=420s
	dllc_check_dmesg
}

main
