#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The node agent's real-HAProxy tests (agents/internal/haproxy) against the appliance's
# HAProxy (Debian trixie, 3.0): seamless reloads under load, rollback of a failed reload,
# bundle swaps with haproxy.d/, and weight/state changes through the runtime API through
# the master CLI without a reload. run.sh compiles the test binary on the host.
set -euo pipefail

haproxy -v | sed -n 1p  # not head: under pipefail, haproxy writing after head exits is SIGPIPE (141)
cd /src/agents/internal/haproxy  # testdata/ is read relative to the package
# A hang guard, under the runner's 600 s per test (run.sh): Go's own timeout names the test
# that hung. Under TCG beside two appliances, 12 seamless reloads alone took 146 s (run41).
/results/bin/haproxy.test -test.v -test.count=1 -test.timeout=540s
