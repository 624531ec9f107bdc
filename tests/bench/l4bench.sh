#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Layer-4 benchmark: IPVS NAT and DR (keepalived), HAProxy and the direct path
# to one nginx, measured with ab inside the QEMU guest of tests/vm (the host
# kernel has no IPVS). The guest side is tests/vm/guest/bench_l4.sh; the
# configurations come from tests/vm/l4/bench.json through Fulcrum's compiler.
#
#   sudo tests/bench/l4bench.sh          # ~11 min on 2 cores (5 rounds, 3 s runs)
#   FULCRUM_BENCH_L4_ROUNDS=1 FULCRUM_BENCH_L4_SECONDS=1 sudo -E tests/bench/l4bench.sh   # smoke test
#
# Settings (environment, passed to the guest on the kernel command line):
# FULCRUM_BENCH_L4_ROUNDS (5), FULCRUM_BENCH_L4_SECONDS (3, per ab run),
# FULCRUM_BENCH_L4_CONCURRENCY (16); and FULCRUM_VM_ICOUNT (shift=1, "" for
# none), QEMU's -icount: the guest's clock follows the instructions it runs
# (one per 2 ns with shift=1), not the host's, so a run measures work done per
# instruction budget and other load on the host no longer decides the numbers
# (without it, the same path varied up to 8x between rounds on a busy host).
#
# Writes tests/bench/results/l4-<date>.md and .json (medians, ratios to
# direct and to HAProxy, every run); the guest's log stays in
# tests/artifacts/vm-bench/. Exit status: 0 written, 1 the guest run failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
REPO=$(cd "$HERE/../.." && pwd)
readonly REPO
readonly ARTIFACTS=$REPO/tests/artifacts/vm-bench

rounds=${FULCRUM_BENCH_L4_ROUNDS:-5}
seconds=${FULCRUM_BENCH_L4_SECONDS:-3}
export FULCRUM_VM_ICOUNT=${FULCRUM_VM_ICOUNT-shift=1}
# Setup and checks take about 2 minutes under TCG; each round makes 10 ab runs.
# Guest seconds; with -icount a guest second may take longer on the host.
budget=$((240 + rounds * 10 * (seconds + 8)))

# The guest cannot see what else runs on the host; the report says.
host_load_start=$(cut -d' ' -f1-3 /proc/loadavg)
FULCRUM_VM_ARTIFACTS=$ARTIFACTS FULCRUM_VM_TEST_TIMEOUT=$budget FULCRUM_VM_TIMEOUT=$((3 * budget + 120)) \
	"$REPO/tests/vm/run.sh" bench_l4
host_load_end=$(cut -d' ' -f1-3 /proc/loadavg)

stamp=$(date +%Y-%m-%d)
mkdir -p "$HERE/results"
{
	cat "$ARTIFACTS/results/bench_l4.md"
	echo "QEMU -icount: ${FULCRUM_VM_ICOUNT:-off}. Host: $(nproc) CPUs, load average $host_load_start at the" \
		"start, $host_load_end at the end (other work on the host shares the CPUs with the guest)."
} >"$HERE/results/l4-$stamp.md"
cp "$ARTIFACTS/results/bench_l4.json" "$HERE/results/l4-$stamp.json"
echo "l4bench: tests/bench/results/l4-$stamp.md and .json"
