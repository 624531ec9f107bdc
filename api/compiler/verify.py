"""Meaning checks on a snapshot: everything the renderer relies on is proved here.

Each problem names the object path, e.g. ``pools/web/members/s1/port``.
"""

import ipaddress
from collections import defaultdict

from compiler import rules
from compiler.errors import VerifyError
from compiler.tokens import HAPROXY_BALANCE


def verify(snap):
    """Raise VerifyError listing every problem in ``snap``; return None when it compiles."""
    problems = []
    problems += _unique_names(snap.pools, "pools")
    problems += _unique_names(snap.virtual_services, "virtual-services")
    for pool in snap.pools:
        problems += _verify_pool(pool)
    for service in snap.virtual_services:
        problems += _verify_service(service, snap)
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
    return [] if value in allowed else [(path, f"{value!r} is not one of {', '.join(allowed)}")]


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
        if (member.address, member.port) in endpoints:
            problems.append((mpath, f"{member.address}:{member.port} is already a member of this pool"))
        endpoints.add((member.address, member.port))
    if pool.health_check:
        problems += _verify_check(pool.health_check, f"{path}/health_check")
    return problems


def _verify_check(check, path):
    problems = _one_of(check.type, rules.CHECK_TYPES, f"{path}/type")
    low, high = rules.CHECK_INTERVAL_MS_MIN, rules.CHECK_INTERVAL_MS_MAX
    problems += _within(check.interval_ms, low, high, f"{path}/interval_ms")
    problems += _within(check.timeout_ms, low, check.interval_ms, f"{path}/timeout_ms")
    problems += _within(check.rise, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/rise")
    problems += _within(check.fall, 1, rules.CHECK_RISE_FALL_MAX, f"{path}/fall")
    if check.type == "http":
        if not rules.HTTP_PATH_RE.match(check.path):
            problems.append((f"{path}/path", f"invalid path {check.path!r}: {rules.HTTP_PATH_HELP}"))
        low, high = rules.HTTP_STATUS_MIN, rules.HTTP_STATUS_MAX
        problems += _within(check.expected_status, low, high, f"{path}/expected_status")
        if check.host and not rules.HOST_RE.match(check.host):
            problems.append((f"{path}/host", f"not a host name: {check.host!r}"))
    return problems


def _verify_service(service, snap):
    path = f"virtual-services/{service.name}"
    problems = _name(service.name, f"{path}/name")
    problems += _address(service.vip, f"{path}/vip")
    problems += _within(service.port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/port")
    problems += _one_of(service.protocol, rules.PROTOCOLS, f"{path}/protocol")
    if snap.pool(service.default_pool) is None:
        problems.append((f"{path}/default_pool", f"pool {service.default_pool!r} does not exist"))
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


def _pool_modes(snap):
    protocols = defaultdict(set)
    for service in snap.virtual_services:
        protocols[service.default_pool].add(service.protocol)
    return [
        (f"pools/{name}", "used by both http and tcp virtual services; use one pool per protocol")
        for name, used in sorted(protocols.items())
        if len(used) > 1
    ]
