#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The appliance's kernel settings against the image's kernel (Debian trixie, 6.12):
#   - every module of appliance/system/modules-load.d/fulcrum.conf loads
#   - every key of appliance/system/sysctl.d/60-fulcrum.conf exists once they are
#     loaded (a glob such as net.ipv4.conf.*.send_redirects matches at least one),
#     takes the value, and reads it back
# The guest runs no systemd: the files are applied the way systemd-modules-load and
# systemd-sysctl would, key by key, so that a missing or refused key names itself.
set -euo pipefail

readonly SYSTEM=/src/appliance/system
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# settings FILE: "key value" lines of a sysctl.d file (comments and blank lines dropped)
settings() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*=[[:space:]]*/=/' "$1"
}

load_modules() {
	local module
	while read -r module; do
		[[ -n $module && $module != \#* ]] || continue
		modprobe "$module" || fail "modprobe $module"
		grep -q "^$module " /proc/modules || fail "$module is not loaded"
	done <"$SYSTEM/modules-load.d/fulcrum.conf"
}

# The values before this test, restored at exit: later tests in the same guest start
# from the kernel's defaults (new network namespaces copy the root namespace's
# net.ipv4.conf.all, so arp_ignore=1 here would silence their ARP).
declare -A original=()
restore() {
	local path
	for path in "${!original[@]}"; do echo "${original[$path]}" >"$path" || echo "could not restore $path"; done
}
trap restore EXIT

# check_key PATH VALUE: PATH under /proc/sys takes VALUE and reads it back
check_key() {
	local path=$1 want=$2 got
	[[ -e $path ]] || { fail "${path#/proc/sys/}: no such key"; return; }
	[[ -v original[$path] ]] || original[$path]=$(<"$path")
	echo "$want" >"$path" || { fail "${path#/proc/sys/}: refused $want"; return; }
	got=$(tr -s '[:space:]' ' ' <"$path")
	[[ ${got% } == "$want" ]] || fail "${path#/proc/sys/}: wrote '$want', reads '${got% }'"
}

apply_settings() {
	local line key value path matched checked=0
	while IFS= read -r line; do
		key=${line%%=*} value=${line#*=}
		value=$(tr -s '[:space:]' ' ' <<<"$value")
		value=${value% }
		path=/proc/sys/${key//./\/}
		matched=0
		for p in $path; do  # a glob (net.ipv4.conf.*.x) names several keys
			[[ -e $p ]] || continue
			matched=1
			check_key "$p" "$value"
		done
		((matched)) || fail "$key: no such key"
		checked=$((checked + 1))
	done < <(settings "$SYSTEM/sysctl.d/60-fulcrum.conf")
	echo "$checked settings checked"
	((checked >= 15)) || fail "only $checked settings read from the file"
}

uname -r
load_modules
apply_settings
((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "all keys exist and take their values"
