#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The guest's test runner, started as PID 1 by /fulcrum-test-init (see
# build-rootfs.sh) once the 9p shares are mounted:
#   /src      the repository, read-only
#   /results  tests/artifacts/vm/results on the host, writable
#
# Runs the tests named in /results/selected (one per line, e.g.
# test_ipvs_nat), each in its own bash with a time limit, and leaves for each
# <name>.log (its output) and <name>.result ("pass" or "fail <exit code>"),
# then the kernel log as dmesg.log. Then powers the machine off. It never returns: PID 1 exiting would panic.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

readonly GUEST_TESTS=/src/tests/vm/guest
readonly RESULTS=/results
readonly TEST_TIMEOUT=${FULCRUM_VM_TEST_TIMEOUT:-600}

console() { echo "fulcrum-vm: $*" >/dev/console; }

power_off() {
	sync
	console "powering off"
	echo o >/proc/sysrq-trigger
	sleep 60
}
trap power_off EXIT

setup_system() {
	mkdir -p /dev/pts /dev/shm /run /tmp
	mount -t devpts -o gid=5,mode=620 devpts /dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	mount -t tmpfs -o mode=0755 tmpfs /run
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mkdir -p /run/netns /run/lock
	hostname fulcrum-vm
	ip link set lo up
	console "kernel $(uname -r), $(nproc) CPU(s), up $(cut -d' ' -f1 /proc/uptime) s"
}

# reset_state NAME: whatever test NAME left behind goes, so that the next test
# starts from the same clean state whatever this one did or how it ended (a
# test killed by its time limit cannot run its own cleanup): every process
# but this runner, every network namespace, the IPVS table and nftables
# ruleset. What was left is noted at the end of the test's log.
reset_state() {
	local name=$1 pid cmd left=()
	for pid in /proc/[0-9]*; do
		pid=${pid#/proc/}
		((pid != 1 && pid != BASHPID)) || continue
		cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
		[[ -n $cmd ]] || continue # a kernel thread
		left+=("$pid $cmd")
		kill -KILL "$pid" 2>/dev/null
	done
	ip -all netns delete 2>/dev/null
	local ipvs nft
	ipvs=$(ipvsadm -Sn 2>/dev/null) && ipvsadm -C
	nft=$(nft list ruleset 2>/dev/null) && nft flush ruleset
	{
		((${#left[@]} == 0)) || printf 'runner: killed what the test left running: %s\n' "${left[@]}"
		[[ -z $ipvs ]] || echo "runner: cleared the IPVS table the test left: ${ipvs//$'\n'/; }"
		[[ -z $nft ]] || echo "runner: flushed the nftables ruleset the test left"
	} >>"$RESULTS/$name.log"
}

run_test() {
	local name=$1
	local script=$GUEST_TESTS/$name.sh
	local start=$SECONDS rc=0 reason pattern
	console "RUN  $name"
	if [[ -f $script ]]; then
		(cd /tmp && timeout --kill-after=10 "$TEST_TIMEOUT" bash "$script") \
			>"$RESULTS/$name.log" 2>&1 </dev/null || rc=$?
	else
		echo "no such test: $script" >"$RESULTS/$name.log"
		rc=127
	fi
	((rc == 124)) && echo "timed out after $TEST_TIMEOUT s" >>"$RESULTS/$name.log"
	if ((rc == 0)); then
		echo pass >"$RESULTS/$name.result"
	else
		# the reason in the summary (a long log is cut in the middle by whoever
		# shows it): a shell test's first "FAIL: ...", else the Go test that
		# failed ("--- FAIL: TestX"), a timeout, or Go's bare "FAIL"
		reason=
		for pattern in '^FAIL: ' '^--- FAIL: ' '^timed out' '^FAIL'; do
			reason=$(grep -m1 -E "$pattern" "$RESULTS/$name.log" | sed 's/^ *//' || true)
			[[ -z $reason ]] || break
		done
		echo "fail $rc${reason:+: $reason}" >"$RESULTS/$name.result"
	fi
	reset_state "$name"
	echo "$((SECONDS - start))" >"$RESULTS/$name.seconds"
	console "$( ((rc == 0)) && echo PASS || echo FAIL) $name ($((SECONDS - start)) s)"
}

main() {
	setup_system
	local name
	while read -r name; do
		[[ -n $name ]] && run_test "$name"
	done <"$RESULTS/selected"
	dmesg >"$RESULTS/dmesg.log" 2>&1
	date +%s >"$RESULTS/finished"
}

main
