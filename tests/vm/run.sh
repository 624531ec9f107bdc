#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs guest tests (tests/vm/guest/test_*.sh) in a QEMU machine booted from
# the image that build-rootfs.sh makes from the appliance's rootfs (the
# packages, the rootfs and the guest are built first where out of date).
#
#   tests/vm/run.sh                  every guest test
#   tests/vm/run.sh test_ipvs_nat    some of them (ipvs_nat or a path also do)
#
# The repository is shared with the guest read-only over 9p, so editing a
# test needs no rebuild; results come back through a second, writable share,
# tests/artifacts/vm/results/. The serial console is kept in
# tests/artifacts/vm/console.log.
#
# Environment: FULCRUM_VM_TIMEOUT (s, whole boot, default 3600),
# FULCRUM_VM_TEST_TIMEOUT (s, each test, default 600), FULCRUM_VM_MEMORY
# (MiB, default 1024), FULCRUM_VM_CPUS (default 2), FULCRUM_VM_ARTIFACTS
# (directory for console.log and results/, default tests/artifacts/vm),
# FULCRUM_VM_ICOUNT (QEMU -icount, e.g. shift=1: guest time from the
# instruction count, for benchmarks; off by default), FULCRUM_JUNIT_DIR (a
# JUnit file per test there); FULCRUM_BENCH_L4_* variables reach the guest's
# environment.
#
# Ends with "N passed, N failed"; exits non-zero on any failure, on a
# timeout, or when no test ran.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
REPO=$(cd "$HERE/../.." && pwd)
readonly REPO
readonly ARTIFACTS=${FULCRUM_VM_ARTIFACTS:-$REPO/tests/artifacts/vm}
readonly RESULTS=$ARTIFACTS/results
readonly CONSOLE_LOG=$ARTIFACTS/console.log
readonly TIMEOUT=${FULCRUM_VM_TIMEOUT:-3600}
readonly MEMORY=${FULCRUM_VM_MEMORY:-1024}
readonly CPUS=${FULCRUM_VM_CPUS:-2}
readonly TEST_TIMEOUT=${FULCRUM_VM_TEST_TIMEOUT:-600}

log() { echo "vm/run: $*" >&2; }

# select_tests [ARG...]: fills tests[] with names such as test_ipvs_nat, from
# test_ipvs_nat, ipvs_nat or guest/test_ipvs_nat.sh; all tests without ARGs.
# Guest scripts outside the test_*.sh pattern (bench_l4) run only when named.
select_tests() {
	local arg name
	tests=()
	if (($# == 0)); then
		mapfile -t tests < <(find "$HERE/guest" -maxdepth 1 -name 'test_*.sh' \
			-printf '%f\n' | sed 's/\.sh$//' | sort)
	fi
	for arg in "$@"; do
		name=$(basename "$arg" .sh)
		[[ $name == test_* || -f $HERE/guest/$name.sh ]] || name=test_$name
		[[ -f $HERE/guest/$name.sh ]] || { log "no such test: $HERE/guest/$name.sh"; exit 2; }
		tests+=("$name")
	done
}

qemu_pid=
stop_qemu() {
	[[ -n $qemu_pid ]] || return 0
	# timeout(1) leads its own process group: this reaches qemu too.
	kill -TERM -- "-$qemu_pid" 2>/dev/null || return 0
	sleep 2
	kill -KILL -- "-$qemu_pid" 2>/dev/null || true
}

# boot_guest IMAGE_DIR: runs the machine to completion; returns qemu's status
boot_guest() {
	local image=$1
	local share_opts=security_model=none,multidevs=remap
	local append=(
		root=/dev/vda rw rootfstype=ext4 console=ttyS0
		init=/fulcrum-test-init panic=-1 quiet mitigations=off
		# The kernel hands unknown NAME=value words to init as environment.
		"FULCRUM_VM_TEST_TIMEOUT=$TEST_TIMEOUT"
	)
	# Settings of guest benchmarks (bench_l4.sh) travel the same way.
	local var icount=()
	for var in $(compgen -v FULCRUM_BENCH_L4_); do append+=("$var=${!var}"); done
	# Guest time from the instruction count: what the guest measures no longer
	# depends on how much of the host it gets (benchmarks).
	[[ -z ${FULCRUM_VM_ICOUNT:-} ]] || icount=(-icount "$FULCRUM_VM_ICOUNT")
	trap stop_qemu EXIT
	trap 'exit 130' INT TERM
	# One host thread for all vCPUs (thread=single). With a thread each, one full
	# run panicked on an "Oops: int3" in enqueue_entity: our reading (not
	# reproduced on demand) is a vCPU running stale translated code while the
	# kernel patched its text (static keys, text_poke_bp). Costs ~25% of tier time.
	timeout --kill-after=10 "$TIMEOUT" \
		qemu-system-x86_64 -accel tcg,thread=single -cpu max -smp "$CPUS" -m "$MEMORY" "${icount[@]}" \
		-nographic -no-reboot -nic none \
		-kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
		-append "${append[*]}" \
		-drive "file=$image/rootfs.ext4,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$REPO,mount_tag=fulcrum_src,readonly=on,$share_opts" \
		-virtfs "local,path=$RESULTS,mount_tag=fulcrum_results,$share_opts" \
		</dev/null >"$CONSOLE_LOG" 2>&1 &
	qemu_pid=$!
	local rc=0
	wait "$qemu_pid" || rc=$?
	qemu_pid=
	return "$rc"
}

# first_crash: the console's line number of the guest kernel's first oops or panic, if any
first_crash() { grep -n -m1 -aE 'Oops|BUG:|Kernel panic' "$CONSOLE_LOG" | cut -d: -f1; }

# show_console_tail: the guest kernel's first crash, else the console's last 40 lines
show_console_tail() {
	local crash
	crash=$(first_crash)
	if [[ -n $crash ]]; then
		echo "---- the guest kernel crashed: $CONSOLE_LOG from line $crash ----"
		tail -n "+$crash" "$CONSOLE_LOG" | head -n 60 | tr -d '\r'
	else
		echo "---- last 40 lines of $CONSOLE_LOG ----"
		tail -n 40 "$CONSOLE_LOG" | tr -d '\r'
	fi
	echo "----"
	[[ ! -f $RESULTS/dmesg.log ]] || echo "guest kernel log: $RESULTS/dmesg.log"
}

# junit NAME RESULT: a JUnit file for one guest test in $FULCRUM_JUNIT_DIR, if
# set (tests/run-tiers.sh counts them)
junit() {
	[[ -n ${FULCRUM_JUNIT_DIR:-} ]] || return 0
	mkdir -p "$FULCRUM_JUNIT_DIR"
	(cd "$REPO" && .venv/bin/python -m tests.harness.tiers junit "$FULCRUM_JUNIT_DIR/vm-$1.xml" vm "$1" "$2" \
		"$(cat "$RESULTS/$1.seconds" 2>/dev/null || echo 0)")
}

# report TEST...: prints one line per test, logs of failures; sets passed/failed
report() {
	local name result
	passed=0 failed=0
	for name in "$@"; do
		result=$(cat "$RESULTS/$name.result" 2>/dev/null || echo "fail (no result: did not run)")
		if [[ $result == pass ]]; then
			junit "$name" ok
			echo "PASS $name"
			((++passed))
		else
			junit "$name" "$result"
			echo "FAIL $name: $result"
			if [[ -f $RESULTS/$name.log ]]; then
				echo "---- $RESULTS/$name.log ----"
				cat "$RESULTS/$name.log"
				echo "---- end of $name.log; FAIL $name: $result"
			fi
			((++failed))
		fi
	done
}

# build_guest_binaries: programs the guest cannot build itself (it has no Go),
# compiled on the host into the results share, which the guest sees as
# /results/bin: every command under agents/cmd, and a test binary
# (<package leaf>.test) for each package listed in guest-test-packages, so that
# agent tests that need the guest's kernel or daemons run there.
build_guest_binaries() {
	local pkg
	mkdir -p "$RESULTS/bin"
	(cd "$REPO/agents" && CGO_ENABLED=0 go build -o "$RESULTS/bin/" ./cmd/...)
	while read -r pkg; do
		[[ -n $pkg && $pkg != \#* ]] || continue
		(cd "$REPO/agents" && CGO_ENABLED=0 go test -c -o "$RESULTS/bin/$(basename "$pkg").test" "./$pkg")
	done <"$HERE/guest-test-packages"
}

# render_l4_cases: the keepalived (and HAProxy) files of the layer-4 cases
# (tests/vm/l4/*.json), made by the repository's compiler on the host, into
# the results share: the guest sees them as /results/l4/<case>/.
render_l4_cases() {
	local python=$REPO/.venv/bin/python
	[[ -x $python ]] || {
		log "$python is missing: the layer-4 cases are rendered by the compiler in the venv (make deps)"
		exit 1
	}
	"$python" "$HERE/render-l4.py" "$RESULTS/l4" >&2
}

main() {
	[[ $(id -u) -eq 0 ]] || { log "must run as root"; exit 1; }
	local tests image
	select_tests "$@"
	((${#tests[@]})) || { log "no guest tests found"; echo "0 passed, 0 failed"; exit 1; }

	# The guest is made from the appliance's rootfs: the packages and the rootfs
	# first (each is skipped when up to date).
	"$REPO/appliance/debian/build.sh"
	"$REPO/images/build.sh" rootfs
	image=$("$HERE/build-rootfs.sh" | tail -n 1)

	rm -rf "$RESULTS"
	mkdir -p "$RESULTS"
	printf '%s\n' "${tests[@]}" >"$RESULTS/selected"
	build_guest_binaries
	render_l4_cases

	log "booting $(cat "$image/kernel-release") under TCG for: ${tests[*]}"
	local start=$SECONDS qemu_rc=0
	boot_guest "$image" || qemu_rc=$?
	log "guest ran for $((SECONDS - start)) s (qemu exit status $qemu_rc)"

	local passed failed problem=
	report "${tests[@]}"
	if ((qemu_rc == 124 || qemu_rc == 137)); then
		problem="timed out after $TIMEOUT s"
	elif ((qemu_rc != 0)); then
		problem="qemu exited with status $qemu_rc"
	elif [[ ! -f $RESULTS/finished ]]; then
		problem="the guest runner did not finish"
		[[ -z $(first_crash) ]] || problem+=": the guest kernel crashed"
	elif ! compgen -G "$RESULTS/*.result" >/dev/null; then
		problem="no test ran"
	fi
	if [[ -n $problem ]]; then
		log "$problem"
		# Tests that left no result were already counted as failed.
		((failed > 0)) || failed=1
	fi
	if ((failed > 0)) || [[ -n $problem ]]; then
		show_console_tail
	fi
	echo "$passed passed, $failed failed"
	((failed == 0))
}

main "$@"
