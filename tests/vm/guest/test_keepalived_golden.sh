#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# keepalived 2.3 (Debian trixie) accepts every keepalived.conf Fulcrum's
# compiler makes. The unit tier checks the golden files with the host's
# keepalived (2.2 on Debian 12); this is the version the appliance image ships.
#
#   guest (no topology: --config-test needs no interfaces or IPVS)
#   +--------------------------------------------------------------+
#   | keepalived --config-test -f                                  |
#   |   /src/api/compiler/tests/golden/*/keepalived.conf (goldens) |
#   |   /results/l4/*/keepalived.conf  (the guest tests' cases)    |
#   +--------------------------------------------------------------+
#
# A configuration passes when keepalived exits 0 and reports no unknown
# keyword. Every MISC_CHECK program a file names is installed first (a root-
# owned stub under /etc/fulcrum/checks), as on a node: keepalived judges
# script security only for programs that exist (it refuses to run one without
# enable_script_security, exit 6, which the compiler therefore renders). The
# l4-checks golden also holds an HTTP_GET regex with a space in it;
# test_l4_nat_health runs such a regex on live traffic.
set -euo pipefail

readonly GOLDEN=/src/api/compiler/tests/golden
readonly CASES=/results/l4
readonly CHECKS_DIR=/etc/fulcrum/checks

pretty() { echo -e "\x1b[32m\x1b[1m[+] $1:\x1b[0m $2"; }
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
indent() { sed 's/^/    | /'; }

INSTALLED=()

cleanup() {
	set +e
	rm -f "${INSTALLED[@]}"
	rmdir "$CHECKS_DIR" /etc/fulcrum 2>/dev/null
}
trap cleanup EXIT

# config_test FILE: keepalived --config-test; sets STATUS and OUTPUT
config_test() {
	STATUS=0
	OUTPUT=$(keepalived --config-test -f "$1" 2>&1) || STATUS=$?
}

check_file() {
	local conf=$1
	config_test "$conf"
	[[ -z $OUTPUT ]] || indent <<<"$OUTPUT"
	((STATUS == 0)) || fail "$conf: keepalived --config-test exited $STATUS"
	! grep -qi 'unknown keyword' <<<"$OUTPUT" || fail "$conf: keepalived does not know a keyword"
	pretty ok "$conf"
}

# install_check_programs FILE...: a stub for every misc_path program named
install_check_programs() {
	local program programs
	mkdir -p "$CHECKS_DIR"
	mapfile -t programs < <(sed -nE 's/^ *misc_path "([^ "]+).*/\1/p' "$@" | sort -u)
	for program in "${programs[@]}"; do
		[[ $program == "$CHECKS_DIR"/* ]] || fail "check program outside $CHECKS_DIR: $program"
		printf '#!/bin/sh\nexit 0\n' >"$program"
		chmod 755 "$program"
		INSTALLED+=("$program")
		pretty guest "installed a stub $program"
	done
}

check_rendered_files() {
	local files=("$GOLDEN"/*/keepalived.conf "$CASES"/*/keepalived.conf) conf
	for conf in "${files[@]}"; do [[ -f $conf ]] || fail "no file matches $conf"; done
	install_check_programs "${files[@]}"
	for conf in "${files[@]}"; do check_file "$conf"; done
	grep -q MISC_CHECK "${files[@]}" || fail "no file has a MISC_CHECK: script security is untested"
	pretty ok "${#files[@]} keepalived.conf files pass keepalived $(keepalived_version)'s --config-test"
}

keepalived_version() {
	keepalived --version 2>&1 | awk 'NR == 1 { print $2 }'
}

pretty guest "keepalived $(keepalived_version)"
check_rendered_files
echo "OK: golden and case keepalived.conf files pass keepalived $(keepalived_version)'s --config-test"
