#!/bin/bash
# The checks tests/packaging/test_debs.sh runs inside the trixie root where
# it installed Fulcrum's packages (chrooted, in a network namespace of its
# own, no systemd running). Stops at the first failure, saying what failed.
#
#   in-root.sh VERSION DEB_DIR WITH_DKMS    (as root, in the root)
#
# 1. what the installation made: files, no tests or build leftovers, the
#    user fulcrum, units enabled or not as intended (Debian's haproxy and
#    keepalived disabled), `systemd-analyze verify`, no secret anywhere;
# 2. the programs run on trixie: python3 3.13 imports the vendored packages,
#    `fulcrum --version`, `fulcrum-agent -h`, `fulcrum-loadd -h`;
# 3. the API for real: PostgreSQL started, fulcrum-api-init (settings file,
#    role, database), migrate, `manage.py check`, gunicorn started the way
#    fulcrum-api.service starts it, the console and the API over HTTP, the
#    CLI with a token, an apply that trixie's haproxy and keepalived check as
#    the user fulcrum, fulcrum_expire_confirmations;
# 4. reinstalling (dpkg's upgrade path) keeps the secret key and the data;
#    purging removes the code and the secret, keeps the database.
set -euo pipefail

readonly VERSION=$1 DEB_DIR=$2 WITH_DKMS=$3
readonly ENV_FILE=/etc/fulcrum/api.env
readonly UNIT_DIR=/usr/lib/systemd/system
readonly API=http://127.0.0.1:8000
readonly WORK=/var/tmp/fulcrum-check
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8

gunicorn_pid=""
pg_cluster=""

pass() { echo "  ok  $*" >&2; }
fail() {
	echo "  FAILED  $*" >&2
	exit 1
}
section() { echo "packaging: $*" >&2; }

# expect DESCRIPTION COMMAND...: the command must succeed.
expect() {
	local what=$1
	shift
	"$@" || fail "$what (command: $*)"
	pass "$what"
}

# ---- 1. the installation ----------------------------------------------

check_files() {
	local path
	for path in /usr/sbin/fulcrum-agent /usr/bin/fulcrum /usr/bin/fulcrum-loadd /usr/sbin/fulcrum-manage \
		/usr/lib/fulcrum/bin/fulcrum-api-init /usr/lib/fulcrum/bin/fulcrum-standby-init \
		/usr/lib/fulcrum/bin/fulcrum-management /usr/lib/fulcrum/bin/fulcrum-witness; do
		[[ -f $path && -x $path ]] || fail "$path is not an installed program"
	done
	for path in /usr/lib/fulcrum/api/manage.py /usr/lib/fulcrum/api/fulcrum/settings.py \
		/usr/lib/fulcrum/lib/fulcrum-pg.sh /usr/lib/fulcrum/api/compiler/templates /usr/lib/fulcrum/python/django/__init__.py \
		/usr/lib/fulcrum/python/gunicorn/__init__.py /usr/share/fulcrum/console/index.html \
		/usr/share/fulcrum/console/index.html.gz /usr/share/fulcrum/static/rest_framework \
		/usr/share/fulcrum/static/drf_spectacular_sidecar /etc/default/fulcrum-agent /etc/default/fulcrum-loadd \
		"$UNIT_DIR"/fulcrum-{api,agent,loadd,expire-confirmations,replication,management}.service \
		"$UNIT_DIR"/postgresql@.service.d/fulcrum-fence.conf \
		/usr/lib/sysusers.d/fulcrum-api.conf /usr/lib/tmpfiles.d/fulcrum-api.conf; do
		[[ -e $path ]] || fail "$path is missing"
	done
	pass "programs, API code, vendored Python, static files, console, units and defaults in place"
	[[ -z $(find /usr/lib/fulcrum/api -name tests -o -name settings_test.py -o -name testing.py) ]] ||
		fail "the API's tests were installed"
	[[ ! -e /usr/lib/fulcrum/python/bin && ! -e /usr/lib/fulcrum/api/Dockerfile ]] ||
		fail "pip's scripts or the Dockerfile were installed"
	pass "no tests, pip scripts or Dockerfile installed"
	[[ -z $(find /usr/lib/fulcrum -name '*.pyc' ! -name '*.cpython-313.pyc' ! -name '*.cpython-313.opt-?.pyc') ]] ||
		fail "byte-code of another Python than 3.13 is installed"
	[[ -n $(find /usr/lib/fulcrum/python/django -name '*.cpython-313.pyc' | head -n 1) ]] ||
		fail "the postinst did not byte-compile for python3.13"
	# PEP 552: flags 3, checked against the source's hash (fulcrum-compile), not its time
	[[ $(od -An -tu1 -j4 -N1 /usr/lib/fulcrum/python/django/__pycache__/__init__.cpython-313.pyc | tr -d ' ') == 3 ]] ||
		fail "the byte-code is not checked by the source's hash"
	pass "byte-code only for CPython 3.13, made by the postinst, checked by the source's hash"
}

check_dkms_source() {
	local src version
	src=$(compgen -G '/usr/src/ip-vs-dllc-*' | head -n 1) || fail "no /usr/src/ip-vs-dllc-*"
	version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf")
	[[ $src == "/usr/src/ip-vs-dllc-$version" ]] || fail "$src does not match dkms.conf's version $version"
	for file in Kbuild Makefile ip_vs_dllc.c dllc_core.h; do
		[[ -f $src/$file ]] || fail "$src/$file is missing"
	done
	dkms status ip-vs-dllc/"$version" | grep -q 'ip-vs-dllc' || fail "DKMS does not know ip-vs-dllc/$version"
	pass "ip_vs_dllc source in $src, added to DKMS: $(dkms status ip-vs-dllc | head -n 1)"
	if [[ $WITH_DKMS == 1 ]]; then
		check_dkms_module "$version"
	fi
}

check_dkms_module() {
	local version=$1 kver module
	kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
	dkms status ip-vs-dllc/"$version" -k "$kver" | grep -q installed ||
		fail "DKMS did not install ip-vs-dllc for $kver: $(dkms status)"
	module=$(find "/lib/modules/$kver/updates/dkms" -name 'ip_vs_dllc.ko*' | head -n 1)
	[[ -n $module ]] || fail "no ip_vs_dllc.ko under /lib/modules/$kver/updates/dkms"
	[[ $(modinfo -F version "$module") == "$version" ]] || fail "$module's version is not $version"
	[[ $(modinfo -F vermagic "$module") == "$kver "* ]] || fail "$module was not built for $kver"
	pass "DKMS built and installed $module for $kver (version $version)"
}

check_user() {
	local entry uid home shell
	entry=$(getent passwd fulcrum) || fail "no user fulcrum"
	IFS=: read -r _ _ uid _ _ home shell <<<"$entry"
	((uid < 1000)) || fail "fulcrum is not a system user (uid $uid)"
	[[ $home == /var/lib/fulcrum && $shell == */nologin ]] || fail "fulcrum: home $home, shell $shell"
	[[ $(stat -c '%U:%G %a' /var/lib/fulcrum) == "fulcrum:fulcrum 750" ]] ||
		fail "/var/lib/fulcrum is $(stat -c '%U:%G %a' /var/lib/fulcrum)"
	[[ $(stat -c '%U %a' /etc/fulcrum/agent) == "root 700" ]] || fail "/etc/fulcrum/agent is not root's alone"
	pass "system user fulcrum (uid $uid, home /var/lib/fulcrum 0750, no login); /etc/fulcrum/agent 0700"
}

unit_state() {
	systemctl is-enabled "$1" 2>/dev/null || true
}

check_units() {
	local unit want
	for unit in fulcrum-api.service:enabled fulcrum-replication.service:enabled \
		fulcrum-management.service:enabled fulcrum-management-request.socket:enabled \
		fulcrum-agent.service:enabled fulcrum-loadd.service:disabled haproxy.service:disabled keepalived.service:disabled; do
		want=${unit#*:} unit=${unit%:*}
		[[ $(unit_state "$unit") == "$want" ]] || fail "$unit is $(unit_state "$unit"), not $want"
	done
	pass "enabled: fulcrum-api, fulcrum-replication, fulcrum-management (and its request socket), fulcrum-agent; disabled: fulcrum-loadd, haproxy, keepalived"
	# fulcrum-firewall.service (After= of the agent) belongs to fulcrum-appliance.
	local out
	out=$(systemd-analyze verify --man=no "$UNIT_DIR"/fulcrum-{api,agent,loadd,expire-confirmations,replication,management}.service \
		"$UNIT_DIR"/fulcrum-management-request{.socket,@.service} 2>&1) || fail "systemd-analyze verify: $out"
	[[ -z $out ]] || fail "systemd-analyze verify complains: $out"
	pass "systemd-analyze verify: the eight units are clean"
}

check_no_secret() {
	[[ ! -e $ENV_FILE ]] || fail "$ENV_FILE exists after installation: a secret made at install time"
	! grep -rqs 'FULCRUM_SECRET_KEY=' /etc || fail "a FULCRUM_SECRET_KEY is set somewhere in /etc"
	[[ -z $(find /etc/fulcrum -type f) ]] || fail "files in /etc/fulcrum after installation: $(find /etc/fulcrum -type f)"
	pass "no settings file, secret key or token after installation"
}

# ---- 2. the programs ----------------------------------------------------

check_programs() {
	local out
	out=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	[[ $out == 3.13 ]] || fail "python3 is $out, not 3.13"
	out=$(PYTHONPATH=/usr/lib/fulcrum/python python3 -c '
import argon2, cryptography, django, gunicorn, jinja2, jsonschema, markupsafe, psycopg, rest_framework, rpds, yaml
from cryptography.hazmat.bindings import _rust
from markupsafe import _speedups
print(django.__file__, psycopg.pq.__impl__, yaml.__with_libyaml__, argon2.PasswordHasher().hash("x")[:9])')
	[[ $out == "/usr/lib/fulcrum/python/django/__init__.py binary True \$argon2id" ]] ||
		fail "the vendored packages on python3.13: $out"
	pass "python3 3.13 imports the vendored packages with their C/Rust parts (psycopg binary, libyaml, argon2)"
	out=$(fulcrum --version)
	[[ $out == "fulcrum $VERSION" ]] || fail "fulcrum --version says '$out', not 'fulcrum $VERSION'"
	pass "fulcrum --version: $out"
	[[ $(readlink -f /usr/bin/fulcrum-shell) == /usr/bin/fulcrum ]] || fail "/usr/bin/fulcrum-shell is not a link to fulcrum"
	out=$(fulcrum-shell -c version 2>&1) || fail "fulcrum-shell -c version: $out"
	[[ $out == *"$VERSION"* ]] || fail "fulcrum-shell -c version: $out"
	pass "fulcrum-shell (the admin's login shell) is the CLI's restricted shell: $out"
	if out=$(fulcrum-agent -h 2>&1); then fail "fulcrum-agent -h exited 0 (flag.ErrHelp is a usage exit)"; fi
	[[ $out == *-token-file* && $out == *-state-dir* && $out == *-firewall* ]] || fail "fulcrum-agent -h: $out"
	out=$(fulcrum-loadd -h 2>&1) || true
	[[ $out == *-agent-listen* ]] || fail "fulcrum-loadd -h: $out"
	pass "fulcrum-agent -h and fulcrum-loadd -h print their flags"
}

# ---- 3. the API for real ---------------------------------------------

start_postgres() {
	local version
	version=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
	[[ -n $version ]] || fail "no PostgreSQL cluster was created by the postgresql package"
	pg_cluster="$version main"
	install -d -o postgres -g postgres -m 2775 /run/postgresql
	# shellcheck disable=SC2086 # version and name
	pg_ctlcluster $pg_cluster start || fail "pg_ctlcluster $pg_cluster start"
	pass "PostgreSQL $version started"
}

check_api_init() {
	local key mode
	expect "fulcrum-api-init (first run)" /usr/lib/fulcrum/bin/fulcrum-api-init
	mode=$(stat -c '%U:%G %a' "$ENV_FILE")
	[[ $mode == "root:fulcrum 640" ]] || fail "$ENV_FILE is $mode, not root:fulcrum 640"
	key=$(sed -n 's/^FULCRUM_SECRET_KEY=//p' "$ENV_FILE")
	((${#key} >= 50)) || fail "the secret key is too short: ${#key} characters"
	grep -qx 'DATABASE_URL=postgresql://fulcrum@/fulcrum?host=/run/postgresql' "$ENV_FILE" ||
		fail "$ENV_FILE lacks the local DATABASE_URL"
	expect "fulcrum-api-init (second run)" /usr/lib/fulcrum/bin/fulcrum-api-init
	[[ $(sed -n 's/^FULCRUM_SECRET_KEY=//p' "$ENV_FILE") == "$key" ]] || fail "a second run changed the key"
	runuser -u fulcrum -- psql -h /run/postgresql -d fulcrum -tAc 'SELECT current_user' | grep -qx fulcrum ||
		fail "the user fulcrum cannot reach its database by peer authentication"
	pass "settings file root:fulcrum 0640 with a ${#key}-character key, kept by a second run; role and database made"
	echo "$key" >"$WORK/secret-key"
}

check_manage() {
	local out
	# What fulcrum-api.service runs before each start: the new database is migrated ...
	out=$(/usr/lib/fulcrum/bin/fulcrum-api-init --migrate 2>&1) || fail "fulcrum-api-init --migrate: $out"
	[[ $out == *"Applying "* ]] || fail "fulcrum-api-init --migrate did not migrate the new database: $out"
	pass "fulcrum-api-init --migrate (as the unit) migrated the new database"
	expect "fulcrum-manage migrate --check (nothing left)" fulcrum-manage migrate --check -v 0
	# ... and the next start, with nothing to migrate, does not start Django for it.
	out=$(/usr/lib/fulcrum/bin/fulcrum-api-init --migrate 2>&1) || fail "fulcrum-api-init --migrate: $out"
	[[ $out == *"the schema is current"* && $out != *"Operations to perform"* ]] ||
		fail "fulcrum-api-init --migrate ran migrate on a current schema: $out"
	pass "fulcrum-api-init --migrate leaves a current schema alone"
	# The list fulcrum-management reads to skip a new master's migration: all applied now.
	local shipped=/usr/lib/fulcrum/api/fulcrum/migrations.txt missing
	missing=$(LC_ALL=C comm -23 <(LC_ALL=C sort -u "$shipped") <(runuser -u fulcrum -- psql -h /run/postgresql \
		-d fulcrum -XtAc "SELECT app || '.' || name FROM django_migrations" | LC_ALL=C sort -u))
	[[ -s $shipped && -z $missing ]] || fail "$shipped: empty, or names migrations not applied: $missing"
	pass "$shipped: $(wc -l <"$shipped") migrations, each applied"
	expect "fulcrum-manage check" fulcrum-manage check --fail-level WARNING -v 0
	out=$(fulcrum-manage check --deploy 2>&1) || fail "fulcrum-manage check --deploy: $out"
	pass "fulcrum-manage check --deploy: $(grep -c '^?: (security' <<<"$out" || true) security hints (nginx in front sets HSTS and redirects)"
	if out=$(su -s /bin/sh nobody -c '/usr/sbin/fulcrum-manage check' 2>&1); then
		fail "fulcrum-manage ran for the user nobody"
	fi
	[[ $out == *"run as root or as fulcrum"* ]] || fail "fulcrum-manage as nobody: $out"
	pass "fulcrum-manage refuses other users"
}

# unit_setting KEY: the values of KEY= in fulcrum-api.service, continuation
# lines joined, one a line.
unit_setting() {
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$UNIT_DIR/fulcrum-api.service" | sed -n "s/^$1=//p"
}

# Starts gunicorn as fulcrum-api.service does: its user, environment,
# settings file, working directory and command line, read from the unit.
start_gunicorn() {
	local exec_start workdir env=()
	exec_start=$(unit_setting ExecStart)
	workdir=$(unit_setting WorkingDirectory)
	mapfile -t env < <(unit_setting Environment; grep -E '^[A-Z_]+=' "$ENV_FILE")
	# shellcheck disable=SC2086 # the command line is split at white space, as systemd does
	(cd "$workdir" && exec runuser -u fulcrum -- env -i PATH="$PATH" "${env[@]}" $exec_start) \
		>"$WORK/gunicorn.log" 2>&1 &
	gunicorn_pid=$!
	wait_for_api
	pass "gunicorn started as in fulcrum-api.service: $exec_start"
}

wait_for_api() {
	local tries
	for ((tries = 0; tries < 120; tries++)); do
		http_status / >/dev/null 2>&1 && return
		kill -0 "$gunicorn_pid" 2>/dev/null || fail "gunicorn exited: $(tail -n 20 "$WORK/gunicorn.log")"
		sleep 0.5
	done
	fail "the API did not answer within 60 s: $(tail -n 20 "$WORK/gunicorn.log")"
}

# http_status PATH [TOKEN]: prints the status, the body goes to $WORK/body.
http_status() {
	python3 - "$API$1" "${2:-}" "$WORK/body" <<-'EOF'
	import sys, urllib.error, urllib.request
	url, token, body = sys.argv[1:]
	req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
	try:
	    with urllib.request.urlopen(req, timeout=30) as resp:
	        status, data = resp.status, resp.read()
	except urllib.error.HTTPError as err:
	    status, data = err.code, err.read()
	open(body, "wb").write(data)
	print(status)
	EOF
}

check_http() {
	local token
	[[ $(http_status /) == 200 ]] || fail "GET / (the console): $(http_status /)"
	cmp -s "$WORK/body" /usr/share/fulcrum/console/index.html || fail "GET / is not the console's index.html"
	pass "GET / serves the console from /usr/share/fulcrum/console"
	[[ $(http_status /static/rest_framework/css/bootstrap.min.css) == 200 ]] || fail "GET /static/...: not 200"
	pass "GET /static/... serves the collected static files"
	[[ $(http_status /api/v1/auth/me/) == 401 ]] || fail "GET /api/v1/auth/me/ without a token is not 401"
	fulcrum-manage fulcrum_admin --password-stdin <<<"packaging-test-password-1" >/dev/null ||
		fail "fulcrum-manage fulcrum_admin"
	token=$(fulcrum-manage fulcrum_token admin --name packaging-test) || fail "fulcrum-manage fulcrum_token"
	[[ $(http_status /api/v1/auth/me/ "$token") == 200 ]] || fail "GET /api/v1/auth/me/ with a token: $(cat "$WORK/body")"
	grep -q '"username": *"admin"' "$WORK/body" || fail "GET /api/v1/auth/me/: $(cat "$WORK/body")"
	pass "the API answers 401 without a token, and who the admin's token belongs to with it"
	echo "$token" >"$WORK/token"
}

# cli ARGS...: the fulcrum CLI signed in with the admin's token.
cli() {
	FULCRUM_URL=$API FULCRUM_TOKEN=$(cat "$WORK/token") HOME=$WORK fulcrum "$@"
}

check_apply() {
	local out
	fulcrum-manage fulcrum_node lb1 --token-file /var/lib/fulcrum/lb1.token >/dev/null || fail "fulcrum_node lb1"
	cli pool create -f - >/dev/null <<<'{"name": "web", "algorithm": "round-robin"}' || fail "fulcrum pool create"
	cli member create -f - >/dev/null <<<'{"pool": "web", "name": "s1", "address": "192.0.2.11", "port": 80}' ||
		fail "fulcrum member create"
	cli virtual-service create -f - >/dev/null \
		<<<'{"name": "web", "vip": "198.51.100.10", "port": 80, "protocol": "http", "default_pool": "web"}' ||
		fail "fulcrum virtual-service create"
	out=$(cli apply -m "packaging test" 2>&1) || fail "fulcrum apply: $out"
	[[ $out == "Revision "*" published"* ]] || fail "fulcrum apply published nothing: $out" # exit 0 for nothing to apply too
	pass "the CLI created a service and applied it: trixie's haproxy and keepalived checked it as fulcrum ($out)"
	expect "fulcrum-manage fulcrum_expire_confirmations" fulcrum-manage fulcrum_expire_confirmations
}

stop_gunicorn() {
	[[ -n $gunicorn_pid ]] || return 0
	kill -TERM "$gunicorn_pid" 2>/dev/null || true
	wait "$gunicorn_pid" 2>/dev/null || true
	gunicorn_pid=""
}

stop_postgres() {
	[[ -n $pg_cluster ]] || return 0
	# shellcheck disable=SC2086 # version and name
	pg_ctlcluster $pg_cluster stop -m fast || true
	pg_cluster=""
}

# ---- 4. reinstall and purge -----------------------------------------

check_reinstall() {
	local out
	out=$(DEBIAN_FRONTEND=noninteractive dpkg -i "$DEB_DIR"/fulcrum-{api,agent,console,cli,loadd}_*.deb 2>&1) ||
		fail "reinstalling (dpkg's upgrade path): $out"
	[[ $(sed -n 's/^FULCRUM_SECRET_KEY=//p' "$ENV_FILE") == "$(cat "$WORK/secret-key")" ]] ||
		fail "reinstalling changed the secret key"
	[[ $(unit_state haproxy.service) == disabled && $(unit_state fulcrum-api.service) == enabled ]] ||
		fail "reinstalling changed which units are enabled"
	[[ -n $(find /usr/lib/fulcrum/python/django -name '*.cpython-313.pyc' | head -n 1) ]] ||
		fail "no byte-code after reinstalling"
	# The same bytes again (dpkg's upgrade path): the byte-code was kept, nothing compiled anew.
	[[ $out == *"fulcrum-compile: 0 compiled"* ]] || fail "reinstalling compiled again: $(grep fulcrum-compile <<<"$out")"
	fulcrum-manage migrate --check -v 0 || fail "the database lost its migrations"
	pass "reinstalling keeps the secret key, the database, the units' states and the byte-code"
}

check_purge() {
	local out
	out=$(DEBIAN_FRONTEND=noninteractive apt-get purge -y -q fulcrum-api 2>&1) ||
		fail "apt-get purge fulcrum-api: $out"
	[[ ! -e /usr/lib/fulcrum/api && ! -e /usr/lib/fulcrum/python ]] || fail "code left after purge: $(find /usr/lib/fulcrum | head)"
	[[ ! -e $ENV_FILE && ! -e /var/lib/fulcrum ]] || fail "settings or state left after purge"
	getent passwd fulcrum >/dev/null || fail "purge removed the system user"
	pass "purge removes the code, the settings file with its secret and the state; the user stays"
}

cleanup() {
	stop_gunicorn
	stop_postgres
}

main() {
	mkdir -p "$WORK"
	trap cleanup EXIT
	section "the installation"
	check_files
	check_dkms_source
	check_user
	check_units
	check_no_secret
	section "the programs"
	check_programs
	section "the API, run"
	start_postgres
	check_api_init
	check_manage
	start_gunicorn
	check_http
	check_apply
	stop_gunicorn
	section "reinstall and purge"
	check_reinstall
	stop_postgres
	check_purge
}

main
