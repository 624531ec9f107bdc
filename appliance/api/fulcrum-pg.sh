# shellcheck shell=bash
# What fulcrum-api-init, fulcrum-standby-init and fulcrum-management share about the
# appliance's one PostgreSQL cluster, "main" (Debian's layout), and the API's database in it.
# Sourced, not run; the script that sources it defines die. As root. Installed as /usr/lib/fulcrum/lib/fulcrum-pg.sh (package
# fulcrum-api).

# pg_version: the version of the cluster (the newest in /etc/postgresql that has a "main").
pg_version() {
	local version
	version=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
	[[ -n $version && -d /etc/postgresql/$version/main ]] || die "no PostgreSQL cluster in /etc/postgresql"
	echo "$version"
}

# pg_bin PROGRAM: the cluster's own PROGRAM (psql), not Debian's wrapper of it in /usr/bin, a
# Perl script that finds the cluster first: 22 ms a psql here instead of 7, and a takeover on
# the emulated appliance runs a dozen.
pg_bin() { echo "/usr/lib/postgresql/$(pg_version)/bin/$1"; }

# The migrations of this appliance's code (fulcrum_migrate --shipped, at the package's build).
readonly FULCRUM_MIGRATIONS=/usr/lib/fulcrum/api/fulcrum/migrations.txt

# schema_current: every migration of this appliance's code is in the local API database
# already (the usual case: no upgrade since the last start), so no one need start Django to
# migrate it: 6-8 s of each API start on a busy emulated appliance, and of a takeover.
schema_current() {
	local applied
	[[ -s $FULCRUM_MIGRATIONS ]] || return 1
	applied=$(cd / && runuser -u postgres -- "$(pg_bin psql)" -h /run/postgresql -d fulcrum -X -tA \
		-c "SELECT app || '.' || name FROM django_migrations" 2>/dev/null) || return 1
	[[ -n $applied ]] || return 1
	[[ -z $(LC_ALL=C comm -23 <(LC_ALL=C sort -u "$FULCRUM_MIGRATIONS") <(LC_ALL=C sort -u <<<"$applied")) ]]
}
