"""Meaning checks on a snapshot: everything the renderer relies on is proved here.

Each problem names the object path, e.g. ``pools/web/members/s1/port``.
"""

import ipaddress
from collections import defaultdict

from compiler import pcre, rules
from compiler.errors import VerifyError
from compiler.facts import derive, firewall_mark, listeners_clash, marked_services, pool_modes, transport
from compiler.tokens import HAPROXY_BALANCE, HASH_SCHEDULERS, IPVS_SCHEDULER


def verify(snap):
    """Raise VerifyError listing every problem in ``snap``; when it compiles, return it
    Verified, with the facts the renderers use (compiler.facts)."""
    problems = []
    problems += _unique_names(snap.pools, "pools")
    problems += _unique_names(snap.virtual_services, "virtual-services")
    for pool in snap.pools:
        problems += _verify_pool(pool)
    for service in snap.virtual_services:
        problems += _verify_service(service, snap)
    problems += _unique_names(snap.certificates, "certificates")
    problems += _listener_clashes(snap.virtual_services)
    modes = pool_modes(snap)
    problems += _pool_modes(snap, modes)
    if snap.ipvs_sync is not None:
        problems += verify_sync(snap.ipvs_sync, "ipvs-sync")
        if snap.ipvs_sync.ha_group and not any(g.name == snap.ipvs_sync.ha_group for g in snap.ha_groups):
            problems.append(("ipvs-sync/ha_group", f"no HA group named {snap.ipvs_sync.ha_group!r}"))
    problems += verify_ha(snap)
    problems += _mark_collisions(snap)
    if problems:
        raise VerifyError(problems)
    return derive(snap, modes)


def _mark_collisions(snap):
    """keepalived matches port ranges by firewall mark: two ranges may not share one."""
    problems, taken = [], set()
    for service in marked_services(snap):
        mark = firewall_mark(service)
        if mark in taken:
            problems.append((f"virtual-services/{service.name}/port_end", "firewall mark collision"))
        taken.add(mark)
    return problems


def verify_sync(sync, path):
    """Problems with the IPVS sync daemon settings ``sync`` (a snapshot IpvsSync)."""
    problems = []
    if not rules.INTERFACE_RE.match(sync.interface):
        problems.append((f"{path}/interface", f"invalid interface {sync.interface!r}: {rules.INTERFACE_HELP}"))
    problems += _within(sync.sync_id, 0, rules.SYNC_ID_MAX, f"{path}/sync_id")
    problems += _within(sync.port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/port")
    problems += _within(sync.ttl, 1, 255, f"{path}/ttl")
    if sync.max_packet:
        problems += _within(sync.max_packet, 1, rules.SYNC_MAXLEN_MAX, f"{path}/max_packet")
    if sync.group:
        bad_group = _address(sync.group, f"{path}/group")
        problems += bad_group
        if not bad_group and not ipaddress.ip_address(sync.group).is_multicast:
            problems.append((f"{path}/group", f"{sync.group} is not a multicast address"))
    return problems


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


def _unusable(address):
    """Why no packet can be sent to ``address`` (an ip_address) from a node, or "": multicast,
    broadcast, or a zone (fe80::1%eth0), which means something on one host only."""
    return (
        (address.is_multicast and "a multicast address")
        or (address == ipaddress.IPv4Address("255.255.255.255") and "the broadcast address")
        or (getattr(address, "scope_id", None) and "a scoped address (%zone)")
        or ""
    )


def _member_address(value, loopback, path):
    """A member HAProxy and IPVS can connect to; the unspecified address would reach the node
    itself (HAProxy connecting to its own listeners). A loopback address reaches a service on
    each node itself: only when the member says so (``loopback``), as a typo for a real
    server's address would otherwise send its traffic to whatever listens on the node."""
    if problems := _address(value, path):
        return problems
    address = ipaddress.ip_address(value)
    why = _unusable(address) or (address.is_unspecified and "the unspecified address, which reaches the node itself")
    if why:
        return [(path, f"{value!r} is {why}: it cannot be a member")]
    if address.is_loopback and not loopback:
        return [
            (path, f"{value!r} is a loopback address, which reaches each node itself: set loopback if it is meant to")
        ]
    if loopback and not address.is_loopback:
        return [
            (path.rsplit("/", 1)[0] + "/loopback", f"set, but {value} is not a loopback address (127.0.0.0/8, ::1)")
        ]
    return []


def port_end_problems(port, port_end, path):
    """A port range's last port (0: no range) comes after its first."""
    return _within(port_end, port + 1, rules.PORT_MAX, path) if port_end else []


def vip_problems(value, path):
    """A VIP the nodes can hold and bind (0.0.0.0 and :: bind every address, as HAProxy's
    ``bind :80``): not IPv4-mapped IPv6 (the IPv4 address is the VIP), nor IPv6 link-local
    (bound only with a zone)."""
    if problems := _address(value, path):
        return problems
    address = ipaddress.ip_address(value)
    why = _unusable(address)
    if not why and address.version == 6 and address.ipv4_mapped:
        why = f"an IPv4-mapped IPv6 address (make {address.ipv4_mapped} the VIP)"
    elif not why and address.version == 6 and address.is_link_local:
        why = "an IPv6 link-local address"
    return [(path, f"{value!r} is {why}: it cannot be a VIP")] if why else []


def _within(value, low, high, path):
    return [] if low <= value <= high else [(path, f"{value} is outside {low}..{high}")]


def _one_of(value, allowed, path):
    return [] if value in allowed else [(path, f"{value!r} is not one of {', '.join(map(str, allowed))}")]


def _verify_pool(pool):
    path = f"pools/{pool.name}"
    problems = _name(pool.name, f"{path}/name")
    problems += _one_of(pool.algorithm, rules.ALGORITHMS, f"{path}/algorithm")
    problems += _unique_names(pool.members, f"{path}/members")
    endpoints = set()
    for member in pool.members:
        mpath = f"{path}/members/{member.name}"
        problems += _name(member.name, f"{mpath}/name")
        problems += _member_address(member.address, member.loopback, f"{mpath}/address")
        problems += _within(member.port, rules.PORT_MIN, rules.PORT_MAX, f"{mpath}/port")
        problems += _within(member.weight, rules.WEIGHT_MIN, rules.WEIGHT_MAX, f"{mpath}/weight")
        problems += _one_of(member.state, rules.MEMBER_STATES, f"{mpath}/state")
        problems += _within(member.max_connections, 0, rules.MAXCONN_MAX, f"{mpath}/max_connections")
        problems += _within(member.max_queue, 0, rules.MAXCONN_MAX, f"{mpath}/max_queue")
        problems += _within(member.slowstart_ms, 0, rules.TIMEOUT_MS_MAX, f"{mpath}/slowstart_ms")
        problems += _within(member.min_connections, 0, rules.MAXCONN_MAX, f"{mpath}/min_connections")
        problems += _one_of(member.forwarding, rules.MEMBER_FORWARDING, f"{mpath}/forwarding")
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
    for field in ("feedback_agent_port", "feedback_http_port"):
        problems += _within(getattr(pool, field), rules.PORT_MIN, rules.PORT_MAX, f"{path}/{field}")
    problems += _within(
        pool.feedback_interval_ms,
        rules.CHECK_INTERVAL_MS_MIN,
        rules.CHECK_INTERVAL_MS_MAX,
        f"{path}/feedback_interval_ms",
    )
    for field in ("connect_timeout_ms", "server_timeout_ms", "queue_timeout_ms"):
        problems += _within(getattr(pool, field), rules.TIMEOUT_MS_MIN, rules.TIMEOUT_MS_MAX, f"{path}/{field}")
    if pool.tls_sni and not rules.SNI_RE.match(pool.tls_sni):
        problems.append((f"{path}/tls_sni", f"not a host name or @host: {pool.tls_sni!r}"))
    problems += _page(pool.maintenance_page, rules.MAINTENANCE_PAGE_MAX, f"{path}/maintenance_page")
    problems += _one_of(pool.on_failure, rules.ON_FAILURE, f"{path}/on_failure")
    return problems


def _page(text, limit, path):
    """A page HAProxy answers: it must fit in the buffer HAProxy answers it from."""
    size = len(text.encode())
    if size <= limit:
        return []
    return [(path, f"{size} bytes (UTF-8): HAProxy answers a page of at most {limit} bytes from its buffer")]


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
    """A pattern the daemons' engine (PCRE2) compiles."""
    problems = _text(value, path, rules.REGEX_MAX)
    if not problems and (error := pcre.compile_error(value)):
        problems.append((path, f"regular expression does not compile in HAProxy and keepalived (PCRE2): {error}"))
    return problems


def _cidr(value, path):
    """An address or a block with a prefix length. Not a mask: Python reads 10.0.0.0/0.255.255.255
    as the hostmask of 10.0.0.0/8, HAProxy as a netmask that lets 11.0.0.0 in."""
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [(path, f"not an address or CIDR block: {value!r}")]
    if "/" in value and not value.partition("/")[2].isdigit():
        return [(path, f"{value!r}: write the prefix length, such as {network.with_prefixlen}, not a mask")]
    return []


def _verify_check(check, path):
    problems = _one_of(check.type, rules.CHECK_TYPES, f"{path}/type")
    low, high = rules.CHECK_INTERVAL_MS_MIN, rules.CHECK_INTERVAL_MS_MAX
    problems += _within(check.interval_ms, low, high, f"{path}/interval_ms")
    problems += _within(check.timeout_ms, low, check.interval_ms, f"{path}/timeout_ms")
    problems += _within(check.rise, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/rise")
    problems += _within(check.fall, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/fall")
    problems += _within(check.retry_interval_ms, 0, high, f"{path}/retry_interval_ms")
    if check.retry_interval_ms and check.retry_interval_ms < low:
        problems.append((f"{path}/retry_interval_ms", f"0 (the interval) or at least {low}"))
    if check.type in ("http", "https"):
        problems += _one_of(check.method, rules.CHECK_METHODS, f"{path}/method")
        if check.expect_body and check.method == "HEAD":
            problems.append((f"{path}/expect_body", "a HEAD request has no body to match; use GET"))
        if check.expect_body:
            problems += _one_of(check.expect_body_match, rules.CHECK_BODY_MATCH, f"{path}/expect_body_match")
            check_body = {"regex": _regex, "digest": _digest}.get(check.expect_body_match, _text)
            problems += check_body(check.expect_body, f"{path}/expect_body")
        if not rules.HTTP_PATH_RE.match(check.path):
            problems.append((f"{path}/path", f"invalid path {check.path!r}: {rules.HTTP_PATH_HELP}"))
        low, high = rules.HTTP_STATUS_MIN, rules.HTTP_STATUS_MAX
        problems += _within(check.expected_status, low, high, f"{path}/expected_status")
        if check.host and not rules.HOST_RE.match(check.host):
            problems.append((f"{path}/host", f"not a host name: {check.host!r}"))
    if check.type == "agent":
        problems += _within(check.agent_port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/agent_port")
    if check.type == "dns":
        problems += _one_of(check.dns_type, rules.DNS_TYPES, f"{path}/dns_type")
        if not rules.DNS_NAME_RE.match(check.dns_name):
            problems.append((f"{path}/dns_name", f"not a domain name: {check.dns_name!r}"))
    if check.type == "script" and not rules.CHECK_SCRIPT_RE.match(check.script):
        problems.append((f"{path}/script", f"invalid command {check.script!r}: {rules.CHECK_SCRIPT_HELP}"))
    elif check.type == "script" and len(check.script) > rules.CHECK_SCRIPT_MAX:
        limit = rules.CHECK_SCRIPT_MAX
        problems.append((f"{path}/script", f"longer than {limit} characters, too long for a line of keepalived's"))
    return problems


def _digest(value, path):
    return [] if rules.DIGEST_RE.match(value) else [(path, f"invalid digest {value!r}: {rules.DIGEST_HELP}")]


def _verify_service(service, snap):
    path = f"virtual-services/{service.name}"
    problems = _name(service.name, f"{path}/name")
    problems += vip_problems(service.vip, f"{path}/vip")
    problems += _within(service.port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/port")
    problems += _one_of(service.protocol, rules.PROTOCOLS, f"{path}/protocol")
    problems += _one_of(service.forwarding, rules.FORWARDING, f"{path}/forwarding")
    problems += _verify_layer(service, path)
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


def _verify_layer(service, path):
    """What a proxied service may not ask for, and what an IPVS service cannot do."""
    if not service.ipvs:
        problems = []
        if service.protocol == "udp":
            problems.append((f"{path}/protocol", "UDP is forwarded by IPVS: choose nat, direct-routing or tunnel"))
        for field in ("port_end", "one_packet_scheduling"):
            if getattr(service, field):
                problems.append((f"{path}/{field}", "needs an IPVS forwarding method (nat, direct-routing, tunnel)"))
        return problems
    problems = _one_of(service.protocol, rules.L4_PROTOCOLS, f"{path}/protocol")
    problems += port_end_problems(service.port, service.port_end, f"{path}/port_end")
    if service.one_packet_scheduling and service.protocol != "udp":
        problems.append((f"{path}/one_packet_scheduling", "one-packet scheduling is for UDP services"))
    elif service.one_packet_scheduling and service.forwarding == "nat":
        # IPVS keeps no connection for such packets, so NAT cannot translate the replies.
        problems.append(
            (
                f"{path}/one_packet_scheduling",
                "needs direct-routing or tunnel: NAT replies would come back from the members' addresses",
            )
        )
    proxy_only = {
        "allow_cidrs": service.allow_cidrs,
        "deny_cidrs": service.deny_cidrs,
        "conn_limit": service.conn_limit,
        "max_connections": service.max_connections,
    }
    problems += [(f"{path}/{f}", "HAProxy setting: needs forwarding proxy") for f, used in proxy_only.items() if used]
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
    if len(service.compression_types) > rules.COMPRESSION_TYPES_MAX:
        problems.append((f"{path}/compression_types", f"more than {rules.COMPRESSION_TYPES_MAX} media types"))
    for i, mime in enumerate(service.compression_types):
        if len(mime) > rules.MIME_TYPE_MAX or not rules.MIME_TYPE_RE.match(mime):
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
        problems += _page(page.body, rules.ERROR_PAGE_MAX, f"{ppath}/body")
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


def _ports(service):
    return f"{service.port}-{service.port_end}" if service.port_end else str(service.port)


def _listener_clashes(services):
    """Each service's clashes with those before it. Only services on the same address (or a
    wildcard of its family) can clash: they are found by address, not by trying every pair."""
    problems = []
    valid = [s for s in services if not _address(s.vip, "") and s.protocol in rules.PROTOCOLS]
    on_address, wildcards, by_family = defaultdict(list), defaultdict(list), defaultdict(list)
    for i, service in enumerate(valid):
        address = ipaddress.ip_address(service.vip)
        family = (transport(service.protocol), address.version)
        if address.is_unspecified:
            earlier = by_family[family]
        else:
            earlier = sorted(on_address[(family, address)] + wildcards[family])
        for j in earlier:
            other = valid[j]
            if listeners_clash(service, other):
                problems.append(
                    (
                        f"virtual-services/{service.name}/vip",
                        f"{service.vip}:{_ports(service)}/{transport(service.protocol)} clashes with "
                        f"virtual service {other.name!r} ({other.vip}:{_ports(other)})",
                    )
                )
        (wildcards[family] if address.is_unspecified else on_address[(family, address)]).append(i)
        by_family[family].append(i)
    return problems


def _pool_modes(snap, modes):
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
    if pool.persistence.type not in ("none", "source"):
        problems.append((f"{path}/persistence/type", "IPVS persistence is by source address: none or source"))
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
    vip = ipaddress.ip_address(service.vip) if not _address(service.vip, "") else None
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
        family_fixed = vip is not None and method != "tunnel" and not _address(member.address, "")
        if family_fixed and ipaddress.ip_address(member.address).version != vip.version:
            problems.append((f"{mpath}/address", f"{method} needs the VIP's address family; only tunnel mixes them"))
    return problems


def verify_ha(snap):
    """Problems with the nodes' HA settings and the HA groups."""
    problems = _unique_names(snap.nodes, "nodes")
    for node in snap.nodes:
        problems += _name(node.name, f"nodes/{node.name}/name")
        if node.address:
            problems += _address(node.address, f"nodes/{node.name}/address")
    problems += _unique_names(snap.ha_groups, "ha-groups")
    for group in snap.ha_groups:
        problems += verify_ha_group(group, snap.node)
    problems += _ha_clashes(snap.ha_groups)
    return problems


def verify_ha_group(group, node_named):
    """Problems with one HA group; ``node_named(name)`` returns a snapshot Node or None."""
    path = f"ha-groups/{group.name}"
    problems = _name(group.name, f"{path}/name")
    problems += _within(group.vrid, rules.VRID_MIN, rules.VRID_MAX, f"{path}/vrid")
    problems += _interface(group.interface, f"{path}/interface")
    problems += _one_of(group.version, rules.VRRP_VERSIONS, f"{path}/version")
    problems += _advert(group, f"{path}/advert_interval_ms")
    problems += _within(group.preempt_delay_s, 0, rules.PREEMPT_DELAY_S_MAX, f"{path}/preempt_delay_s")
    if group.preempt_delay_s and not group.preempt:
        problems.append((f"{path}/preempt_delay_s", "a delay only applies when preempt is on"))
    if group.auth_password:
        if group.version != 2:
            problems.append((f"{path}/auth_password", "VRRPv3 has no authentication; use version 2 or no password"))
        elif not rules.VRRP_PASSWORD_RE.match(group.auth_password):
            problems.append((f"{path}/auth_password", rules.VRRP_PASSWORD_HELP))
    for i, name in enumerate(group.track_interfaces):
        problems += _interface(name, f"{path}/track_interfaces/{i}")
    if len(group.track_interfaces) > rules.TRACK_INTERFACES_MAX:
        problems.append((f"{path}/track_interfaces", f"at most {rules.TRACK_INTERFACES_MAX}"))
    if group.witness:
        problems += _address(group.witness, f"{path}/witness")
    problems += _within(group.garp_refresh_s, 0, rules.GARP_REFRESH_S_MAX, f"{path}/garp_refresh_s")
    problems += _within(group.garp_repeat, rules.GARP_REPEAT_MIN, rules.GARP_REPEAT_MAX, f"{path}/garp_repeat")
    families = set()
    if not group.vips:
        problems.append((f"{path}/vips", "at least one VIP"))
    if len(group.vips) > rules.HA_VIPS_MAX:
        problems.append((f"{path}/vips", f"at most {rules.HA_VIPS_MAX}"))
    for i, vip in enumerate(group.vips):
        try:
            families.add(ipaddress.ip_interface(vip).version)
        except ValueError:
            problems.append((f"{path}/vips/{i}", f"not an address or address/prefix: {vip!r}"))
    if len(families) > 1:
        problems.append((f"{path}/vips", "IPv4 and IPv6 VIPs need separate groups (one VRRP instance per family)"))
    problems += _ha_nodes(group, node_named, families, path)
    return problems


def _interface(value, path):
    if rules.INTERFACE_RE.match(value):
        return []
    return [(path, f"invalid interface {value!r}: {rules.INTERFACE_HELP}")]


def _advert(group, path):
    if group.version == 2:
        low, high, step = rules.ADVERT_V2_MS_MIN, rules.ADVERT_V2_MS_MAX, rules.ADVERT_V2_MS_STEP
        unit = "whole seconds (VRRPv2); use version 3 for sub-second adverts"
    else:
        low, high, step = rules.ADVERT_V3_MS_MIN, rules.ADVERT_V3_MS_MAX, rules.ADVERT_V3_MS_STEP
        unit = "a multiple of 10 ms (VRRPv3 counts centiseconds)"
    ms = group.advert_interval_ms
    if not low <= ms <= high or ms % step:
        return [(path, f"{ms} ms: from {low} to {high} ms, {unit}")]
    return []


def _ha_nodes(group, node_named, families, path):
    problems = []
    if not group.nodes:
        problems.append((f"{path}/nodes", "at least one node"))
    seen, priorities = set(), {}
    for entry in group.nodes:
        npath = f"{path}/nodes/{entry.node}"
        node = node_named(entry.node)
        if node is None:
            problems.append((npath, f"no node named {entry.node!r}"))
            continue
        if entry.node in seen:
            problems.append((npath, "listed twice"))
        seen.add(entry.node)
        problems += _within(entry.priority, rules.VRRP_PRIORITY_MIN, rules.VRRP_PRIORITY_MAX, f"{npath}/priority")
        if entry.priority in priorities:
            problems.append(
                (f"{npath}/priority", f"same as {priorities[entry.priority]}'s: give each node its own priority")
            )
        priorities.setdefault(entry.priority, entry.node)
        if entry.interface:
            problems += _interface(entry.interface, f"{npath}/interface")
        if len(group.nodes) > 1:
            if not node.address:
                problems.append((f"nodes/{node.name}/address", f"needed: HA group {group.name} has peers (unicast)"))
            elif families and ipaddress.ip_address(node.address).version not in families:
                problems.append(
                    (
                        f"nodes/{node.name}/address",
                        f"HA group {group.name}'s VIPs are another IP family than this address",
                    )
                )
    return problems


def _ha_clashes(groups):
    """Two groups must not share a VRID on one segment, nor a VIP anywhere. A clash is
    reported on every group involved, so whichever one an operator edits shows it."""
    problems, vrids, vips = [], defaultdict(list), defaultdict(list)
    for group in groups:
        vrids[group.vrid].append(group.name)
        for i, vip in enumerate(group.vips):
            try:
                vips[ipaddress.ip_interface(vip).ip].append((group.name, i))
            except ValueError:
                continue
    for vrid, names in vrids.items():
        for name in names if len(names) > 1 else ():
            others = ", ".join(n for n in names if n != name)
            problems.append((f"ha-groups/{name}/vrid", f"VRID {vrid} is also {others}'s"))
    for address, places in vips.items():
        for name, i in places if len(places) > 1 else ():
            others = sorted({n for n, _ in places if n != name})
            where = f"also in HA group {', '.join(others)}" if others else "listed twice"
            problems.append((f"ha-groups/{name}/vips/{i}", f"{address} is {where}"))
    return problems
