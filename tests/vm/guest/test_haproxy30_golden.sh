#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every golden HAProxy bundle the compiler's tests commit must also be accepted by the
# appliance's HAProxy (Debian trixie, 3.0), not only by the host's 2.6: `haproxy -c` on
# each case, laid out as the node agent lays it out (FULCRUM_CONF_DIR with haproxy.d/).
set -euo pipefail

readonly GOLDEN=/src/api/compiler/tests/golden
haproxy -v | sed -n 1p  # not head: under pipefail, haproxy writing after head exits is SIGPIPE (141)
passed=0 failed=0
for case_dir in "$GOLDEN"/*/; do
	name=$(basename "$case_dir")
	work=$(mktemp -d)
	cp -r "$case_dir"/. "$work"/
	rm -f "$work/input.json"
	if [[ -d $work/haproxy.d ]]; then
		chmod -R go-rwx "$work/haproxy.d"
		find "$work/haproxy.d" -name '*.sh' -exec chmod 0700 {} +
	fi
	if out=$(FULCRUM_CONF_DIR=$work FULCRUM_RUN_DIR=$work haproxy -c -q -f "$work/haproxy.cfg" 2>&1); then
		echo "ok   $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name: $out"
		failed=$((failed + 1))
	fi
	rm -rf "$work"
done
echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
