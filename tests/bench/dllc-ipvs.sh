#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Seed 002, the DLLC experiment, through IPVS NAT: rr, wrr, lc, wlc (equal
# weights), wlc 2:1 and dllc in the QEMU guest of tests/vm (the host kernel
# has no IPVS). The guest side is tests/vm/guest/bench_dllc.sh, which builds
# ip_vs_dllc with DKMS and measures with tests/bench/dllcipvs.py; the report
# is rendered here by tests/bench/dllcreport.py. The HAProxy half is
# `make bench-dllc`.
#
#   sudo tests/bench/dllc-ipvs.sh                # ~25 min on 2 cores (48 runs of 15 s)
#   FULCRUM_BENCH_L4_DLLC_ROUNDS=1 FULCRUM_BENCH_L4_DLLC_LOADS=1,2 sudo -E tests/bench/dllc-ipvs.sh
#
# Settings (environment, passed to the guest on the kernel command line, so
# lists are comma-separated; see the guest script): FULCRUM_BENCH_L4_DLLC_ROWS
# (rr,wrr,lc,wlc,wlc-2-1,dllc), _LOADS (0.5,1,1.5,2 x both servers'
# capacity), _ROUNDS (2), _SECONDS (15), _TIMEOUT (5), _FAST_CPU (0.4),
# _SLOW_CPU (0.2), _WORK_MS (50), _WORKERS (1), _QUEUE (3), _FEED_MS (1000);
# FULCRUM_VM_ICOUNT (shift=1, "" for none) as for tests/bench/l4bench.sh: the
# guest's clock follows its instructions, so other load on the host does not
# decide the numbers. Absolute rates under TCG mean little: the rows' ratios
# are the result.
#
# Writes tests/bench/results/dllc-ipvs-<date>.md, .json and .svg; the
# guest's log stays in tests/artifacts/vm-dllc/. Exit status: 0 written, 1
# the guest run failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
REPO=$(cd "$HERE/../.." && pwd)
readonly REPO
readonly ARTIFACTS=$REPO/tests/artifacts/vm-dllc
cd "$REPO"

rounds=${FULCRUM_BENCH_L4_DLLC_ROUNDS:-2}
seconds=${FULCRUM_BENCH_L4_DLLC_SECONDS:-15}
timeout=${FULCRUM_BENCH_L4_DLLC_TIMEOUT:-5}
IFS=, read -ra rows <<<"${FULCRUM_BENCH_L4_DLLC_ROWS:-rr,wrr,lc,wlc,wlc-2-1,dllc}"
IFS=, read -ra loads <<<"${FULCRUM_BENCH_L4_DLLC_LOADS:-0.5,1,1.5,2}"
export FULCRUM_VM_ICOUNT=${FULCRUM_VM_ICOUNT-shift=1}
# The DKMS build and set-up take some minutes under TCG; each run its seconds,
# httperf's timeout and the pauses around it. Guest seconds.
budget=$((900 + rounds * ${#rows[@]} * ${#loads[@]} * (seconds + timeout + 8)))

host_load_start=$(cut -d' ' -f1-3 /proc/loadavg)
FULCRUM_VM_ARTIFACTS=$ARTIFACTS FULCRUM_VM_TEST_TIMEOUT=$budget FULCRUM_VM_TIMEOUT=$((3 * budget + 300)) \
	"$REPO/tests/vm/run.sh" bench_dllc
host_load_end=$(cut -d' ' -f1-3 /proc/loadavg)

stamp=$(date +%Y-%m-%d)
"$REPO/.venv/bin/python" -m tests.bench.dllcreport "$ARTIFACTS/results/bench_dllc.json" \
	"$HERE/results/dllc-ipvs-$stamp" \
	--note "QEMU -icount: ${FULCRUM_VM_ICOUNT:-off}. Host: $(nproc) CPUs, load average $host_load_start at the start, $host_load_end at the end (other work on the host shares the CPUs with the guest)."
echo "dllc-ipvs: tests/bench/results/dllc-ipvs-$stamp.md, .json and .svg"
