#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# keepalived 2.3 (Debian trixie) accepts every keepalived.conf Fulcrum's
# compiler makes. The unit tier checks the golden files with the host's
# keepalived (2.2 on Debian 12); this is the version the appliance image ships.
#
#   guest, namespace kagolden: a link for every interface the files name
#   +--------------------------------------------------------------+
#   | keepalived --config-test -f                                  |
#   |   /src/api/compiler/tests/golden/*/keepalived.conf (goldens) |
#   |   /results/l4/*/keepalived.conf  (the guest tests' cases)    |
#   |   /results/l4/*/*/keepalived.conf  (per-node HA cases)       |
#   +--------------------------------------------------------------+
#
# VRRP instances name interfaces and track files, and keepalived warns (exit
# 5) about any it cannot find; the API host's check forgives exactly those
# warnings, because only the node has its interfaces and its agent's track
# files. First the API's own check (revisions/checks.py, no Django) runs here
# on every file, as it would on an appliance; then, with the interfaces and
# track files made, keepalived itself must accept every file without a word.
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

readonly NS=kagolden

cleanup() {
	set +e
	rm -f "${INSTALLED[@]}"
	rmdir "$CHECKS_DIR" /etc/fulcrum 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf /run/fulcrum-agent
}
trap cleanup EXIT

TRACK_FILES=()

# make_track_files FILE...: the track files the node agent keeps, at "0"
make_track_files() {
	local file
	mapfile -t TRACK_FILES < <(sed -nE 's|^ *file (/run/fulcrum-agent/[^ ]+)$|\1|p' "$@" | sort -u)
	for file in "${TRACK_FILES[@]}"; do
		mkdir -p "$(dirname "$file")"
		echo 0 >"$file"
	done
	pretty guest "track files: ${TRACK_FILES[*]}"
}

# api_check FILE...: what the API host's check says of each file's bundle
api_check() {
	local conf
	for conf in "$@"; do
		PYTHONPATH=/src/api python3 -c '
import os, sys
from revisions.checks import check_keepalived
conf = sys.argv[1]
root = os.path.dirname(conf)
files = {}
for base, _, names in os.walk(root):
    for name in names:
        path = os.path.join(base, name)
        if name != "input.json" and (name == "keepalived.conf" or "keepalived.d" in path):
            files[os.path.relpath(path, root)] = open(path, "rb").read()
result = check_keepalived(files)
print(result.output)
sys.exit(0 if result.ok else 1)
' "$conf" | indent || fail "$conf: the API would refuse it"
	done
	pretty ok "the API's check accepts ${#@} files with keepalived $(keepalived_version)"
}

# make_interfaces FILE...: a namespace with a link (one end of a veth pair)
# for every interface the files name (instance interface, VIP dev, tracked
# and sync interfaces)
make_interfaces() {
	local names name i=0
	ip netns add "$NS"
	mapfile -t names < <(
		{
			sed -nE 's/^ *(interface|lvs_sync_daemon) ([A-Za-z0-9_.@-]+).*/\2/p' "$@"
			sed -nE 's/.* dev ([A-Za-z0-9_.@-]+)$/\1/p' "$@"
			awk '/track_interface \{/ { on = 1; next } on && /}/ { on = 0 } on { print $1 }' "$@"
		} | sort -u
	)
	for name in "${names[@]}"; do
		ip -n "$NS" link add "$name" type veth peer name "kapeer$((i++))"
		ip -n "$NS" link set "$name" up
	done
	pretty guest "interfaces: ${names[*]}"
}

# config_test FILE: keepalived --config-test; sets STATUS and OUTPUT
config_test() {
	STATUS=0
	OUTPUT=$(ip netns exec "$NS" keepalived --config-test -f "$1" 2>&1) || STATUS=$?
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
	for conf in "$CASES"/*/*/keepalived.conf; do [[ -f $conf ]] && files+=("$conf"); done
	install_check_programs "${files[@]}"
	api_check "${files[@]}"
	make_interfaces "${files[@]}"
	make_track_files "${files[@]}"
	grep -q vrrp_instance "${files[@]}" || fail "no file has a vrrp_instance: VRRP is untested"
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
