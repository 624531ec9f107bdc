"""Verifying pools: members, health checks, persistence, and what a pool's mode (HAProxy or
IPVS) allows."""

import ipaddress

from compiler import pcre, rules
from compiler.tokens import HAPROXY_BALANCE, HASH_SCHEDULERS, IPVS_SCHEDULER
from compiler.verify.fields import (
    address_problems,
    digest_problems,
    duplicate_names,
    field_name_problems,
    member_address_problems,
    name_problems,
    one_of,
    page_problems,
    regex_problems,
    text_problems,
    within,
)


def verify_pool(pool):
    path = f"pools/{pool.name}"
    problems = name_problems(pool.name, f"{path}/name")
    problems += one_of(pool.algorithm, rules.ALGORITHMS, f"{path}/algorithm")
    problems += duplicate_names(pool.members, f"{path}/members")
    endpoints = set()
    for member in pool.members:
        mpath = f"{path}/members/{member.name}"
        problems += name_problems(member.name, f"{mpath}/name")
        problems += member_address_problems(member.address, member.loopback, f"{mpath}/address")
        problems += within(member.port, rules.PORT_MIN, rules.PORT_MAX, f"{mpath}/port")
        problems += within(member.weight, rules.WEIGHT_MIN, rules.WEIGHT_MAX, f"{mpath}/weight")
        problems += one_of(member.state, rules.MEMBER_STATES, f"{mpath}/state")
        problems += within(member.max_connections, 0, rules.MAXCONN_MAX, f"{mpath}/max_connections")
        problems += within(member.max_queue, 0, rules.MAXCONN_MAX, f"{mpath}/max_queue")
        problems += within(member.slowstart_ms, 0, rules.TIMEOUT_MS_MAX, f"{mpath}/slowstart_ms")
        problems += within(member.min_connections, 0, rules.MAXCONN_MAX, f"{mpath}/min_connections")
        problems += one_of(member.forwarding, rules.MEMBER_FORWARDING, f"{mpath}/forwarding")
        if (member.address, member.port) in endpoints:
            problems.append((mpath, f"{member.address}:{member.port} is already a member of this pool"))
        endpoints.add((member.address, member.port))
    if pool.health_check:
        problems += _verify_check(pool.health_check, f"{path}/health_check")
    problems += _verify_persistence(pool.persistence, f"{path}/persistence")
    problems += one_of(pool.http_reuse, rules.HTTP_REUSE, f"{path}/http_reuse")
    problems += within(pool.pool_max_conn, -1, rules.MAXCONN_MAX, f"{path}/pool_max_conn")
    problems += within(pool.pool_purge_delay_ms, 0, rules.TIMEOUT_MS_MAX, f"{path}/pool_purge_delay_ms")
    problems += one_of(pool.proxy_protocol, rules.PROXY_PROTOCOLS, f"{path}/proxy_protocol")
    for field in ("feedback_agent_port", "feedback_http_port"):
        problems += within(getattr(pool, field), rules.PORT_MIN, rules.PORT_MAX, f"{path}/{field}")
    problems += within(
        pool.feedback_interval_ms,
        rules.CHECK_INTERVAL_MS_MIN,
        rules.CHECK_INTERVAL_MS_MAX,
        f"{path}/feedback_interval_ms",
    )
    for field in ("connect_timeout_ms", "server_timeout_ms", "queue_timeout_ms"):
        problems += within(getattr(pool, field), rules.TIMEOUT_MS_MIN, rules.TIMEOUT_MS_MAX, f"{path}/{field}")
    if pool.tls_sni and not rules.SNI_RE.match(pool.tls_sni):
        problems.append((f"{path}/tls_sni", f"not a host name or @host: {pool.tls_sni!r}"))
    problems += page_problems(pool.maintenance_page, rules.MAINTENANCE_PAGE_MAX, f"{path}/maintenance_page")
    problems += one_of(pool.on_failure, rules.ON_FAILURE, f"{path}/on_failure")
    return problems


def _verify_persistence(p, path):
    problems = one_of(p.type, rules.PERSISTENCE_TYPES, f"{path}/type")
    if p.type.startswith("cookie_") or p.type == "app_cookie":
        problems += field_name_problems(p.cookie_name, f"{path}/cookie_name")
    if p.type == "header":
        problems += field_name_problems(p.header_name, f"{path}/header_name")
    problems += within(p.max_idle_s, 0, rules.PERSISTENCE_TIMEOUT_S_MAX, f"{path}/max_idle_s")
    problems += within(p.max_life_s, 0, rules.PERSISTENCE_TIMEOUT_S_MAX, f"{path}/max_life_s")
    problems += within(p.timeout_s, 1, rules.PERSISTENCE_TIMEOUT_S_MAX, f"{path}/timeout_s")
    problems += within(p.ipv4_mask, 1, 32, f"{path}/ipv4_mask")
    problems += within(p.ipv6_mask, 1, 128, f"{path}/ipv6_mask")
    problems += within(p.table_size, 1, rules.TABLE_SIZE_MAX, f"{path}/table_size")
    return problems


def _verify_check(check, path):
    problems = one_of(check.type, rules.CHECK_TYPES, f"{path}/type")
    low, high = rules.CHECK_INTERVAL_MS_MIN, rules.CHECK_INTERVAL_MS_MAX
    problems += within(check.interval_ms, low, high, f"{path}/interval_ms")
    problems += within(check.timeout_ms, low, check.interval_ms, f"{path}/timeout_ms")
    problems += within(check.rise, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/rise")
    problems += within(check.fall, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/fall")
    problems += within(check.retry_interval_ms, 0, high, f"{path}/retry_interval_ms")
    if check.retry_interval_ms and check.retry_interval_ms < low:
        problems.append((f"{path}/retry_interval_ms", f"0 (the interval) or at least {low}"))
    if check.type in ("http", "https"):
        problems += one_of(check.method, rules.CHECK_METHODS, f"{path}/method")
        if check.expect_body and check.method == "HEAD":
            problems.append((f"{path}/expect_body", "a HEAD request has no body to match; use GET"))
        if check.expect_body:
            problems += one_of(check.expect_body_match, rules.CHECK_BODY_MATCH, f"{path}/expect_body_match")
            checks = {"regex": regex_problems, "digest": digest_problems}
            check_body = checks.get(check.expect_body_match, text_problems)
            problems += check_body(check.expect_body, f"{path}/expect_body")
        if not rules.HTTP_PATH_RE.match(check.path):
            problems.append((f"{path}/path", f"invalid path {check.path!r}: {rules.HTTP_PATH_HELP}"))
        low, high = rules.HTTP_STATUS_MIN, rules.HTTP_STATUS_MAX
        problems += within(check.expected_status, low, high, f"{path}/expected_status")
        if check.host and not rules.HOST_RE.match(check.host):
            problems.append((f"{path}/host", f"not a host name: {check.host!r}"))
    if check.type == "agent":
        problems += within(check.agent_port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/agent_port")
    if check.type == "dns":
        problems += one_of(check.dns_type, rules.DNS_TYPES, f"{path}/dns_type")
        if not rules.DNS_NAME_RE.match(check.dns_name):
            problems.append((f"{path}/dns_name", f"not a domain name: {check.dns_name!r}"))
    if check.type == "script" and not rules.CHECK_SCRIPT_RE.match(check.script):
        problems.append((f"{path}/script", f"invalid command {check.script!r}: {rules.CHECK_SCRIPT_HELP}"))
    elif check.type == "script" and len(check.script) > rules.CHECK_SCRIPT_MAX:
        limit = rules.CHECK_SCRIPT_MAX
        problems.append((f"{path}/script", f"longer than {limit} characters, too long for a line of keepalived's"))
    return problems


def pool_mode_problems(snap, modes):
    problems = []
    for name, used in sorted(modes.items()):
        pool = snap.pool(name)
        if pool is None:
            continue
        if "ipvs" in used and len(used) > 1:
            problems.append((f"pools/{name}", "used by both IPVS (layer 4) and proxy services; give each its own pool"))
        elif len(used) > 1:
            problems.append((f"pools/{name}", "used by both http and tcp virtual services; use one pool per mode"))
        elif used == {"ipvs"}:
            problems += _verify_ipvs_pool(pool, snap, f"pools/{name}")
        else:
            problems += _verify_proxy_pool(pool, snap, used, f"pools/{name}")
    # A pool no service uses yet is still rendered as an HAProxy backend: its CA must exist too.
    for pool in snap.pools:
        if pool.name not in modes and pool.algorithm in HAPROXY_BALANCE:
            problems += _verify_tls_ca(pool, snap, f"pools/{pool.name}")
    return problems


def _verify_proxy_pool(pool, snap, used, path):
    problems = []
    if pool.algorithm in IPVS_SCHEDULER and pool.algorithm not in HAPROXY_BALANCE:
        problems.append(
            (
                f"{path}/algorithm",
                f"{pool.algorithm} is an IPVS scheduler; proxy pools use one of " + ", ".join(HAPROXY_BALANCE),
            )
        )
    allowed = rules.PERSISTENCE_HTTP if used == {"http"} else rules.PERSISTENCE_TCP
    if pool.persistence.type not in allowed:
        kind = "an http or https" if used == {"tcp"} else "a tcp"
        problems.append((f"{path}/persistence/type", f"{pool.persistence.type} needs {kind} service"))
    problems += _verify_tls_ca(pool, snap, path)
    ipvs_only = {
        "hash_port": pool.hash_port,
        "hash_fallback": pool.hash_fallback,
        "on_failure": pool.on_failure != "remove",
    }
    problems += [(f"{path}/{f}", "an IPVS setting: needs a layer-4 service") for f, used_ in ipvs_only.items() if used_]
    for member in pool.members:
        for field in ("min_connections", "forwarding"):
            if getattr(member, field):
                problems.append((f"{path}/members/{member.name}/{field}", "an IPVS setting: needs a layer-4 service"))
    check = pool.health_check
    if check is not None and check.type == "agent" and pool.algorithm == "dynamic-least-load":
        problems.append(
            (
                f"{path}/health_check/type",
                "dynamic-least-load asks fulcrum-loadd's agent for each member's weight; "
                "HAProxy has one agent per server: use a tcp or http check",
            )
        )
    if check is not None:
        cpath = f"{path}/health_check"
        if check.type not in rules.PROXY_CHECK_TYPES:
            problems.append((f"{cpath}/type", f"{check.type} checks are run by keepalived for layer-4 pools"))
        for field, wrong in (
            ("expect_body_match", check.expect_body_match == "digest"),
            ("alpha", check.alpha),
            ("omega", check.omega),
        ):
            if wrong:
                problems.append((f"{cpath}/{field}", "a keepalived setting: needs a layer-4 service"))
    return problems


def _verify_tls_ca(pool, snap, path):
    problems = []
    if pool.tls_ca and snap.certificate(pool.tls_ca) is None:
        problems.append((f"{path}/tls_ca", f"certificate {pool.tls_ca!r} does not exist"))
    if pool.tls and pool.tls_verify and not pool.tls_ca:
        problems.append((f"{path}/tls_ca", "verifying members' certificates needs a CA bundle"))
    return problems


def _verify_ipvs_pool(pool, snap, path):
    problems = []
    scheduler = IPVS_SCHEDULER.get(pool.algorithm)
    if (pool.hash_port or pool.hash_fallback) and scheduler not in HASH_SCHEDULERS:
        problems.append((f"{path}/algorithm", "hash_port and hash_fallback need source-hash or maglev-hash"))
    if pool.persistence.type not in rules.IPVS_PERSISTENCE:
        allowed = " or ".join(rules.IPVS_PERSISTENCE)
        problems.append((f"{path}/persistence/type", f"IPVS persistence is by source address: {allowed}"))
    proxy_only = {
        "tls": pool.tls,
        "proxy_protocol": pool.proxy_protocol != "none",
        "maintenance_page": pool.maintenance_page,
    }
    problems += [(f"{path}/{f}", "a HAProxy setting: needs forwarding proxy") for f, used in proxy_only.items() if used]
    backups = [m for m in pool.members if m.backup]
    if len(backups) > 1:
        problems.append((f"{path}/members", "IPVS has one sorry server: mark at most one member as backup"))
    for member in pool.members:
        mpath = f"{path}/members/{member.name}"
        for field in ("max_queue", "slowstart_ms"):
            if getattr(member, field):
                problems.append((f"{mpath}/{field}", "a HAProxy setting: IPVS has no queue or slow start"))
        if member.min_connections and member.min_connections >= (member.max_connections or 1):
            problems.append((f"{mpath}/min_connections", "needs max_connections above it"))
        if member.backup and member.forwarding:
            problems.append((f"{mpath}/forwarding", "the sorry server uses the service's forwarding method"))
    if pool.health_check is not None:
        problems += _verify_keepalived_check(pool.health_check, f"{path}/health_check")
        if pool.health_check.script_dynamic and scheduler == "dllc":
            problems.append(
                (
                    f"{path}/health_check/script_dynamic",
                    "dynamic-least-load sets the weights from the members' loads; a dynamic script would fight it",
                )
            )
    for service in snap.virtual_services:
        if service.default_pool == pool.name:
            problems += _verify_ipvs_members(service, pool)
    return problems


def _verify_keepalived_check(check, path):
    problems = []
    if check.type not in rules.IPVS_CHECK_TYPES:
        problems.append(
            (
                f"{path}/type",
                f"{check.type} checks are HAProxy's; layer-4 pools use " + ", ".join(rules.IPVS_CHECK_TYPES),
            )
        )
    if check.type in ("http", "https"):
        if check.method != "GET":
            problems.append((f"{path}/method", "keepalived's HTTP checks send GET"))
        if not rules.KEEPALIVED_TEXT_RE.match(check.path):
            problems.append((f"{path}/path", f"invalid path for keepalived: {rules.KEEPALIVED_TEXT_HELP}"))
        literal = check.expect_body and check.expect_body_match != "digest"
        if literal and not rules.KEEPALIVED_TEXT_RE.match(check.expect_body):
            problems.append((f"{path}/expect_body", f"invalid text for keepalived: {rules.KEEPALIVED_TEXT_HELP}"))
        elif literal and check.expect_body_match == "string":
            problems += _keepalived_literal(check.expect_body, f"{path}/expect_body")
    return problems


def _keepalived_literal(text, path):
    """keepalived searches a page for a string as a regex that matches it literally: it must
    fit on one of keepalived's lines."""
    length = len(pcre.literal(text))
    if length <= rules.KEEPALIVED_REGEX_MAX:
        return []
    limit = rules.KEEPALIVED_REGEX_MAX
    return [
        (
            path,
            f"keepalived would search the page for a regex of {length} characters (each of . [ ] ( ) * + ? | "
            f"takes 3, ^ 11); its configuration lines hold at most {limit}",
        )
    ]


def _verify_ipvs_members(service, pool):
    """Forwarding constraints between a service and its real servers."""
    problems = []
    vip = ipaddress.ip_address(service.vip) if not address_problems(service.vip, "") else None
    for member in pool.members:
        mpath = f"pools/{pool.name}/members/{member.name}"
        method = member.forwarding or service.forwarding
        if method != "nat" and not service.port_end and member.port != service.port:
            problems.append(
                (
                    f"{mpath}/port",
                    f"{method} cannot change the port: use {service.port} "
                    f"(the port of virtual service {service.name!r}) or nat",
                )
            )
        family_fixed = vip is not None and method != "tunnel" and not address_problems(member.address, "")
        if family_fixed and ipaddress.ip_address(member.address).version != vip.version:
            problems.append((f"{mpath}/address", f"{method} needs the VIP's address family; only tunnel mixes them"))
    return problems
