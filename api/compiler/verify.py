"""Meaning checks on a snapshot: everything the renderer relies on is proved here.

Each problem names the object path, e.g. ``pools/web/members/s1/port``.
"""

import ipaddress
import re
from collections import defaultdict

from compiler import rules
from compiler.errors import VerifyError
from compiler.tokens import HAPROXY_BALANCE, HAPROXY_MODE


def verify(snap):
    """Raise VerifyError listing every problem in ``snap``; return None when it compiles."""
    problems = []
    problems += _unique_names(snap.pools, "pools")
    problems += _unique_names(snap.virtual_services, "virtual-services")
    for pool in snap.pools:
        problems += _verify_pool(pool)
    for service in snap.virtual_services:
        problems += _verify_service(service, snap)
    problems += _unique_names(snap.certificates, "certificates")
    problems += _listener_clashes(snap.virtual_services)
    problems += _pool_modes(snap)
    if problems:
        raise VerifyError(problems)


def _unique_names(items, kind):
    seen, problems = set(), []
    for item in items:
        if item.name in seen:
            problems.append((f"{kind}/{item.name}", "duplicate name"))
        seen.add(item.name)
    return problems


def _name(value, path):
    return [] if rules.NAME_RE.match(value) else [(path, f"invalid name {value!r}: {rules.NAME_HELP}")]


def _address(value, path):
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return [(path, f"not an IP address: {value!r}")]
    return []


def _within(value, low, high, path):
    return [] if low <= value <= high else [(path, f"{value} is outside {low}..{high}")]


def _one_of(value, allowed, path):
    return [] if value in allowed else [(path, f"{value!r} is not one of {', '.join(map(str, allowed))}")]


def _verify_pool(pool):
    path = f"pools/{pool.name}"
    problems = _name(pool.name, f"{path}/name")
    problems += _one_of(pool.algorithm, tuple(HAPROXY_BALANCE), f"{path}/algorithm")
    problems += _unique_names(pool.members, f"{path}/members")
    endpoints = set()
    for member in pool.members:
        mpath = f"{path}/members/{member.name}"
        problems += _name(member.name, f"{mpath}/name")
        problems += _address(member.address, f"{mpath}/address")
        problems += _within(member.port, rules.PORT_MIN, rules.PORT_MAX, f"{mpath}/port")
        problems += _within(member.weight, rules.WEIGHT_MIN, rules.WEIGHT_MAX, f"{mpath}/weight")
        problems += _one_of(member.state, rules.MEMBER_STATES, f"{mpath}/state")
        problems += _within(member.max_connections, 0, rules.MAXCONN_MAX, f"{mpath}/max_connections")
        problems += _within(member.max_queue, 0, rules.MAXCONN_MAX, f"{mpath}/max_queue")
        problems += _within(member.slowstart_ms, 0, rules.TIMEOUT_MS_MAX, f"{mpath}/slowstart_ms")
        if (member.address, member.port) in endpoints:
            problems.append((mpath, f"{member.address}:{member.port} is already a member of this pool"))
        endpoints.add((member.address, member.port))
    if pool.health_check:
        problems += _verify_check(pool.health_check, f"{path}/health_check")
    problems += _verify_persistence(pool.persistence, f"{path}/persistence")
    problems += _one_of(pool.http_reuse, rules.HTTP_REUSE, f"{path}/http_reuse")
    problems += _within(pool.pool_max_conn, -1, rules.MAXCONN_MAX, f"{path}/pool_max_conn")
    problems += _within(pool.pool_purge_delay_ms, 0, rules.TIMEOUT_MS_MAX, f"{path}/pool_purge_delay_ms")
    problems += _one_of(pool.proxy_protocol, rules.PROXY_PROTOCOLS, f"{path}/proxy_protocol")
    for field in ("connect_timeout_ms", "server_timeout_ms", "queue_timeout_ms"):
        problems += _within(getattr(pool, field), rules.TIMEOUT_MS_MIN, rules.TIMEOUT_MS_MAX, f"{path}/{field}")
    if pool.tls_sni and not rules.SNI_RE.match(pool.tls_sni):
        problems.append((f"{path}/tls_sni", f"not a host name or @host: {pool.tls_sni!r}"))
    if len(pool.maintenance_page) > rules.MAINTENANCE_PAGE_MAX:
        problems.append((f"{path}/maintenance_page", f"longer than {rules.MAINTENANCE_PAGE_MAX} characters"))
    return problems


def _verify_persistence(p, path):
    problems = _one_of(p.type, rules.PERSISTENCE_TYPES, f"{path}/type")
    if p.type.startswith("cookie_") or p.type == "app_cookie":
        problems += _field_name(p.cookie_name, f"{path}/cookie_name")
    if p.type == "header":
        problems += _field_name(p.header_name, f"{path}/header_name")
    problems += _within(p.max_idle_s, 0, rules.PERSISTENCE_TIMEOUT_S_MAX, f"{path}/max_idle_s")
    problems += _within(p.max_life_s, 0, rules.PERSISTENCE_TIMEOUT_S_MAX, f"{path}/max_life_s")
    problems += _within(p.timeout_s, 1, rules.PERSISTENCE_TIMEOUT_S_MAX, f"{path}/timeout_s")
    problems += _within(p.ipv4_mask, 1, 32, f"{path}/ipv4_mask")
    problems += _within(p.ipv6_mask, 1, 128, f"{path}/ipv6_mask")
    problems += _within(p.table_size, 1, rules.TABLE_SIZE_MAX, f"{path}/table_size")
    return problems


def _field_name(value, path):
    return [] if rules.FIELD_NAME_RE.match(value) else [(path, f"invalid name {value!r}: {rules.FIELD_NAME_HELP}")]


def _text(value, path, limit=rules.VALUE_MAX):
    if len(value) > limit:
        return [(path, f"longer than {limit} characters")]
    return [] if rules.TEXT_RE.match(value) else [(path, f"invalid text {value!r}: {rules.TEXT_HELP}")]


def _regex(value, path):
    problems = _text(value, path, rules.REGEX_MAX)
    if not problems:
        try:
            re.compile(value)
        except re.error as err:
            problems.append((path, f"regular expression does not compile: {err}"))
    return problems


def _cidr(value, path):
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [(path, f"not an address or CIDR block: {value!r}")]
    return []


def _verify_check(check, path):
    problems = _one_of(check.type, rules.CHECK_TYPES, f"{path}/type")
    low, high = rules.CHECK_INTERVAL_MS_MIN, rules.CHECK_INTERVAL_MS_MAX
    problems += _within(check.interval_ms, low, high, f"{path}/interval_ms")
    problems += _within(check.timeout_ms, low, check.interval_ms, f"{path}/timeout_ms")
    problems += _within(check.rise, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/rise")
    problems += _within(check.fall, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/fall")
    if check.type in ("http", "https"):
        problems += _one_of(check.method, rules.CHECK_METHODS, f"{path}/method")
        if check.expect_body and check.method == "HEAD":
            problems.append((f"{path}/expect_body", "a HEAD request has no body to match; use GET"))
        if check.expect_body:
            problems += _one_of(check.expect_body_match, rules.CHECK_BODY_MATCH, f"{path}/expect_body_match")
            check_body = _regex if check.expect_body_match == "regex" else _text
            problems += check_body(check.expect_body, f"{path}/expect_body")
        if not rules.HTTP_PATH_RE.match(check.path):
            problems.append((f"{path}/path", f"invalid path {check.path!r}: {rules.HTTP_PATH_HELP}"))
        low, high = rules.HTTP_STATUS_MIN, rules.HTTP_STATUS_MAX
        problems += _within(check.expected_status, low, high, f"{path}/expected_status")
        if check.host and not rules.HOST_RE.match(check.host):
            problems.append((f"{path}/host", f"not a host name: {check.host!r}"))
    if check.type == "agent":
        problems += _within(check.agent_port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/agent_port")
    return problems


def _verify_service(service, snap):
    path = f"virtual-services/{service.name}"
    problems = _name(service.name, f"{path}/name")
    problems += _address(service.vip, f"{path}/vip")
    problems += _within(service.port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/port")
    problems += _one_of(service.protocol, rules.PROTOCOLS, f"{path}/protocol")
    if snap.pool(service.default_pool) is None:
        problems.append((f"{path}/default_pool", f"pool {service.default_pool!r} does not exist"))
    problems += _verify_tls(service, snap, path)
    problems += _verify_protection(service, path)
    if service.rules and service.protocol not in rules.HTTP_PROTOCOLS:
        problems.append((f"{path}/rules", "content-switching rules need an http or https service"))
    if len(service.rules) > rules.RULES_PER_SERVICE_MAX:
        problems.append((f"{path}/rules", f"more than {rules.RULES_PER_SERVICE_MAX} rules"))
    problems += _unique_names(service.rules, f"{path}/rules")
    for rule in service.rules:
        problems += _verify_rule(rule, snap, f"{path}/rules/{rule.name}")
    return problems


def _verify_tls(service, snap, path):
    problems = _one_of(service.tls_policy, rules.TLS_POLICIES, f"{path}/tls_policy")
    problems += _one_of(service.client_auth, rules.CLIENT_AUTH, f"{path}/client_auth")
    if service.protocol == "https":
        if not service.certificates:
            problems.append((f"{path}/certificates", "an https service needs at least one certificate"))
        for name in service.certificates:
            cert = snap.certificate(name)
            if cert is None:
                problems.append((f"{path}/certificates", f"certificate {name!r} does not exist"))
            elif not cert.has_key:
                problems.append((f"{path}/certificates", f"certificate {name!r} has no private key"))
        if service.client_auth != "none" and not service.client_ca:
            problems.append((f"{path}/client_ca", "client-certificate verification needs a CA bundle"))
    else:
        for field in ("certificates", "client_ca"):
            if getattr(service, field):
                problems.append((f"{path}/{field}", "only an https service terminates TLS"))
        if service.client_auth != "none":
            problems.append((f"{path}/client_auth", "only an https service terminates TLS"))
    if service.client_ca and snap.certificate(service.client_ca) is None:
        problems.append((f"{path}/client_ca", f"certificate {service.client_ca!r} does not exist"))
    if service.redirect_https and service.protocol != "http":
        problems.append((f"{path}/redirect_https", "only a plain http service redirects to https"))
    if service.hsts_max_age_s and service.protocol != "https":
        problems.append((f"{path}/hsts_max_age_s", "HSTS is sent only by an https service"))
    problems += _within(service.hsts_max_age_s, 0, rules.HSTS_MAX_AGE_MAX, f"{path}/hsts_max_age_s")
    return problems


def _verify_protection(service, path):
    problems = []
    for field in ("allow_cidrs", "deny_cidrs"):
        values = getattr(service, field)
        if len(values) > rules.CIDRS_MAX:
            problems.append((f"{path}/{field}", f"more than {rules.CIDRS_MAX} entries"))
        for i, value in enumerate(values):
            problems += _cidr(value, f"{path}/{field}/{i}")
    if service.rate_limit is not None:
        limit = service.rate_limit
        problems += _within(limit.requests, 1, rules.RATE_MAX, f"{path}/rate_limit/requests")
        problems += _within(limit.period_s, 1, rules.RATE_PERIOD_S_MAX, f"{path}/rate_limit/period_s")
    problems += _within(service.conn_limit, 0, rules.MAXCONN_MAX, f"{path}/conn_limit")
    problems += _within(service.max_connections, 0, rules.MAXCONN_MAX, f"{path}/max_connections")
    problems += _within(service.max_body_bytes, 0, rules.BODY_MAX, f"{path}/max_body_bytes")
    problems += _one_of(service.forwarded, rules.FORWARDED, f"{path}/forwarded")
    for i, mime in enumerate(service.compression_types):
        if not rules.MIME_TYPE_RE.match(mime):
            problems.append((f"{path}/compression_types/{i}", f"not a media type such as text/html: {mime!r}"))
    for field in ("client_timeout_ms", "http_request_timeout_ms", "keep_alive_timeout_ms"):
        problems += _within(getattr(service, field), rules.TIMEOUT_MS_MIN, rules.TIMEOUT_MS_MAX, f"{path}/{field}")
    http_only = {
        "rate_limit": service.rate_limit is not None,
        "max_body_bytes": service.max_body_bytes,
        "compression": service.compression,
        "error_pages": service.error_pages,
        "redirect_https": service.redirect_https,
    }
    if service.protocol not in rules.HTTP_PROTOCOLS:
        problems += [(f"{path}/{f}", "needs an http or https service") for f, used in http_only.items() if used]
    seen = set()
    for page in service.error_pages:
        ppath = f"{path}/error_pages/{page.status}"
        problems += _one_of(page.status, rules.ERROR_PAGE_STATUSES, f"{ppath}/status")
        if page.status in seen:
            problems.append((ppath, "two pages for the same status"))
        seen.add(page.status)
        if not rules.MIME_TYPE_RE.match(page.content_type):
            problems.append((f"{ppath}/content_type", f"not a media type: {page.content_type!r}"))
        if len(page.body) > rules.ERROR_PAGE_MAX:
            problems.append((f"{ppath}/body", f"longer than {rules.ERROR_PAGE_MAX} characters"))
    return problems


_CONDITION_VALUE = {
    "path_prefix": (rules.PATH_PATTERN_RE, rules.PATH_PATTERN_HELP),
    "path_suffix": (rules.PATH_FRAGMENT_RE, rules.PATH_PATTERN_HELP),
    "path_contains": (rules.PATH_FRAGMENT_RE, rules.PATH_PATTERN_HELP),
    "path_extension": (rules.EXTENSION_RE, rules.EXTENSION_HELP),
    "host_exact": (rules.HOST_RE, "a host name such as www.example.com"),
    "host_suffix": (rules.HOST_SUFFIX_RE, "a host name ending such as .example.com"),
    "host_wildcard": (rules.HOST_WILDCARD_RE, "a host name where '*' stands for one label, such as *.example.com"),
    "header_equals": (rules.TEXT_RE, rules.TEXT_HELP),
    "cookie_equals": (rules.TEXT_RE, rules.TEXT_HELP),
    "query_equals": (rules.TEXT_RE, rules.TEXT_HELP),
}


def _verify_condition(cond, path):
    problems = _one_of(cond.kind, rules.CONDITION_KINDS, f"{path}/kind")
    if problems:
        return problems
    if cond.kind in rules.NAMED_CONDITIONS:
        problems += _field_name(cond.name, f"{path}/name")
    elif cond.name:
        problems.append((f"{path}/name", f"{cond.kind} takes no name"))
    if cond.kind in rules.PRESENCE_CONDITIONS:
        if cond.values:
            problems.append((f"{path}/values", f"{cond.kind} takes no values"))
        return problems
    if not cond.values:
        problems.append((f"{path}/values", "at least one value is needed"))
    if len(cond.values) > rules.VALUES_PER_CONDITION_MAX:
        problems.append((f"{path}/values", f"more than {rules.VALUES_PER_CONDITION_MAX} values"))
    for i, value in enumerate(cond.values):
        vpath = f"{path}/values/{i}"
        if cond.kind in rules.REGEX_CONDITIONS:
            problems += _regex(value, vpath)
        elif cond.kind == "method":
            problems += _one_of(value, rules.HTTP_METHODS, vpath)
        elif cond.kind == "source_cidr":
            problems += _cidr(value, vpath)
        else:
            pattern, help_text = _CONDITION_VALUE[cond.kind]
            if len(value) > rules.VALUE_MAX or not pattern.match(value):
                problems.append((vpath, f"invalid value {value!r}: {help_text}"))
    return problems


def _verify_rule(rule, snap, path):
    problems = _name(rule.name, f"{path}/name")
    problems += _one_of(rule.action, rules.RULE_ACTIONS, f"{path}/action")
    if not rule.conditions:
        problems.append((f"{path}/conditions", "a rule needs at least one condition"))
    if len(rule.conditions) > rules.CONDITIONS_PER_RULE_MAX:
        problems.append((f"{path}/conditions", f"more than {rules.CONDITIONS_PER_RULE_MAX} conditions"))
    for i, cond in enumerate(rule.conditions):
        problems += _verify_condition(cond, f"{path}/conditions/{i}")
    if rule.action == "use_pool":
        pool = snap.pool(rule.pool)
        if pool is None:
            problems.append((f"{path}/pool", f"pool {rule.pool!r} does not exist"))
    elif rule.action == "redirect":
        problems += _one_of(rule.redirect_code, rules.REDIRECT_CODES, f"{path}/redirect_code")
        if not rules.REDIRECT_RE.match(rule.redirect_location):
            problems.append((f"{path}/redirect_location", f"invalid location: {rules.REDIRECT_HELP}"))
    elif rule.action == "deny":
        problems += _one_of(rule.deny_status, rules.DENY_STATUSES, f"{path}/deny_status")
    elif rule.action in rules.HEADER_ACTIONS:
        problems += _field_name(rule.header_name, f"{path}/header_name")
        if rule.action.startswith("set_"):
            problems += _text(rule.header_value, f"{path}/header_value", rules.HEADER_VALUE_MAX)
    return problems


def listeners_clash(vip_a, port_a, vip_b, port_b):
    """True when two VIP:port listeners cannot both be bound (a wildcard covers its family)."""
    if port_a != port_b:
        return False
    a, b = ipaddress.ip_address(vip_a), ipaddress.ip_address(vip_b)
    return a == b or (a.version == b.version and (a.is_unspecified or b.is_unspecified))


def _listener_clashes(services):
    problems = []
    valid = [s for s in services if not _address(s.vip, "")]
    for i, service in enumerate(valid):
        for other in valid[:i]:
            if listeners_clash(service.vip, service.port, other.vip, other.port):
                problems.append(
                    (
                        f"virtual-services/{service.name}/vip",
                        f"{service.vip}:{service.port} clashes with virtual service {other.name!r}",
                    )
                )
    return problems


def pool_modes(snap):
    """{pool name: {"http", "tcp"}}: the HAProxy modes each pool is used in."""
    modes = defaultdict(set)
    for service in snap.virtual_services:
        mode = HAPROXY_MODE.get(service.protocol, service.protocol)
        modes[service.default_pool].add(mode)
        for rule in service.rules:
            if rule.action == "use_pool":
                modes[rule.pool].add(mode)
    return modes


def _pool_modes(snap):
    modes = sorted(pool_modes(snap).items())
    problems = [
        (f"pools/{name}", "used by both http and tcp virtual services; use one pool per mode")
        for name, used in modes
        if len(used) > 1
    ]
    for name, used in modes:
        pool = snap.pool(name)
        if pool is None or len(used) != 1:
            continue
        allowed = rules.PERSISTENCE_HTTP if used == {"http"} else rules.PERSISTENCE_TCP
        if pool.persistence.type not in allowed:
            kind = "an http or https" if used == {"tcp"} else "a tcp"
            problems.append((f"pools/{name}/persistence/type", f"{pool.persistence.type} needs {kind} service"))
        if pool.tls_ca and snap.certificate(pool.tls_ca) is None:
            problems.append((f"pools/{name}/tls_ca", f"certificate {pool.tls_ca!r} does not exist"))
        if pool.tls and pool.tls_verify and not pool.tls_ca:
            problems.append((f"pools/{name}/tls_ca", "verifying members' certificates needs a CA bundle"))
    return problems
