# shellcheck shell=bash
# What fulcrum-api-init, fulcrum-standby-init and fulcrum-management share about the
# appliance's one PostgreSQL cluster, "main" (Debian's layout). Sourced, not run; the script
# that sources it defines die. Installed as /usr/lib/fulcrum/lib/fulcrum-pg.sh (package
# fulcrum-api).

# pg_version: the version of the cluster (the newest in /etc/postgresql that has a "main").
pg_version() {
	local version
	version=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
	[[ -n $version && -d /etc/postgresql/$version/main ]] || die "no PostgreSQL cluster in /etc/postgresql"
	echo "$version"
}
