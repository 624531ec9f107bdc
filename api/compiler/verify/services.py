"""Verifying virtual services: listeners and their clashes, layers, TLS, protection, and
rules with their conditions."""

import ipaddress
from collections import defaultdict

from compiler import rules
from compiler.facts import listeners_clash, transport
from compiler.verify.fields import (
    address_problems,
    cidr_problems,
    duplicate_names,
    field_name_problems,
    name_problems,
    one_of,
    page_problems,
    port_end_problems,
    regex_problems,
    text_problems,
    vip_problems,
    within,
)


def verify_service(service, snap):
    path = f"virtual-services/{service.name}"
    problems = name_problems(service.name, f"{path}/name")
    problems += vip_problems(service.vip, f"{path}/vip")
    problems += within(service.port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/port")
    problems += one_of(service.protocol, rules.PROTOCOLS, f"{path}/protocol")
    problems += one_of(service.forwarding, rules.FORWARDING, f"{path}/forwarding")
    problems += _verify_layer(service, path)
    if snap.pool(service.default_pool) is None:
        problems.append((f"{path}/default_pool", f"pool {service.default_pool!r} does not exist"))
    problems += _verify_tls(service, snap, path)
    problems += _verify_protection(service, path)
    if service.rules and service.protocol not in rules.HTTP_PROTOCOLS:
        problems.append((f"{path}/rules", "content-switching rules need an http or https service"))
    if len(service.rules) > rules.RULES_PER_SERVICE_MAX:
        problems.append((f"{path}/rules", f"more than {rules.RULES_PER_SERVICE_MAX} rules"))
    problems += duplicate_names(service.rules, f"{path}/rules")
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
    problems = one_of(service.protocol, rules.L4_PROTOCOLS, f"{path}/protocol")
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
    problems = one_of(service.tls_policy, rules.TLS_POLICIES, f"{path}/tls_policy")
    problems += one_of(service.client_auth, rules.CLIENT_AUTH, f"{path}/client_auth")
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
    problems += within(service.hsts_max_age_s, 0, rules.HSTS_MAX_AGE_MAX, f"{path}/hsts_max_age_s")
    return problems


def _verify_protection(service, path):
    problems = []
    for field in ("allow_cidrs", "deny_cidrs"):
        values = getattr(service, field)
        if len(values) > rules.CIDRS_MAX:
            problems.append((f"{path}/{field}", f"more than {rules.CIDRS_MAX} entries"))
        for i, value in enumerate(values):
            problems += cidr_problems(value, f"{path}/{field}/{i}")
    if service.rate_limit is not None:
        limit = service.rate_limit
        problems += within(limit.requests, 1, rules.RATE_MAX, f"{path}/rate_limit/requests")
        problems += within(limit.period_s, 1, rules.RATE_PERIOD_S_MAX, f"{path}/rate_limit/period_s")
    problems += within(service.conn_limit, 0, rules.MAXCONN_MAX, f"{path}/conn_limit")
    problems += within(service.max_connections, 0, rules.MAXCONN_MAX, f"{path}/max_connections")
    problems += within(service.max_body_bytes, 0, rules.BODY_MAX, f"{path}/max_body_bytes")
    problems += one_of(service.forwarded, rules.FORWARDED, f"{path}/forwarded")
    if len(service.compression_types) > rules.COMPRESSION_TYPES_MAX:
        problems.append((f"{path}/compression_types", f"more than {rules.COMPRESSION_TYPES_MAX} media types"))
    for i, mime in enumerate(service.compression_types):
        if len(mime) > rules.MIME_TYPE_MAX or not rules.MIME_TYPE_RE.match(mime):
            problems.append((f"{path}/compression_types/{i}", f"not a media type such as text/html: {mime!r}"))
    for field in ("client_timeout_ms", "http_request_timeout_ms", "keep_alive_timeout_ms"):
        problems += within(getattr(service, field), rules.TIMEOUT_MS_MIN, rules.TIMEOUT_MS_MAX, f"{path}/{field}")
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
        problems += one_of(page.status, rules.ERROR_PAGE_STATUSES, f"{ppath}/status")
        if page.status in seen:
            problems.append((ppath, "two pages for the same status"))
        seen.add(page.status)
        if not rules.MIME_TYPE_RE.match(page.content_type):
            problems.append((f"{ppath}/content_type", f"not a media type: {page.content_type!r}"))
        problems += page_problems(page.body, rules.ERROR_PAGE_MAX, f"{ppath}/body")
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
    problems = one_of(cond.kind, rules.CONDITION_KINDS, f"{path}/kind")
    if problems:
        return problems
    if cond.kind in rules.NAMED_CONDITIONS:
        problems += field_name_problems(cond.name, f"{path}/name")
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
            problems += regex_problems(value, vpath)
        elif cond.kind == "method":
            problems += one_of(value, rules.HTTP_METHODS, vpath)
        elif cond.kind == "source_cidr":
            problems += cidr_problems(value, vpath)
        else:
            pattern, help_text = _CONDITION_VALUE[cond.kind]
            if len(value) > rules.VALUE_MAX or not pattern.match(value):
                problems.append((vpath, f"invalid value {value!r}: {help_text}"))
    return problems


def _verify_rule(rule, snap, path):
    problems = name_problems(rule.name, f"{path}/name")
    problems += one_of(rule.action, rules.RULE_ACTIONS, f"{path}/action")
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
        problems += one_of(rule.redirect_code, rules.REDIRECT_CODES, f"{path}/redirect_code")
        if not rules.REDIRECT_RE.match(rule.redirect_location):
            problems.append((f"{path}/redirect_location", f"invalid location: {rules.REDIRECT_HELP}"))
    elif rule.action == "deny":
        problems += one_of(rule.deny_status, rules.DENY_STATUSES, f"{path}/deny_status")
    elif rule.action in rules.HEADER_ACTIONS:
        problems += field_name_problems(rule.header_name, f"{path}/header_name")
        if rule.action.startswith("set_"):
            problems += text_problems(rule.header_value, f"{path}/header_value", rules.HEADER_VALUE_MAX)
    return problems


def _ports(service):
    return f"{service.port}-{service.port_end}" if service.port_end else str(service.port)


def listener_clashes(services):
    """Each service's clashes with those before it. Only services on the same address (or a
    wildcard of its family) can clash: they are found by address, not by trying every pair."""
    problems = []
    valid = [s for s in services if not address_problems(s.vip, "") and s.protocol in rules.PROTOCOLS]
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
