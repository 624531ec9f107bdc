"""Warnings about a snapshot: settings that compile but will probably not work as meant.

Unlike ``verify`` these never block a change: the compiler cannot see the network, so they
are judged from what the nodes report (their interfaces' networks and, per IPVS service,
the scheduler the kernel runs). Pure: the caller passes the reports in.
"""

import ipaddress
from collections import defaultdict

from compiler.tokens import IPVS_SCHEDULER


def _networks(cidrs):
    nets = []
    for cidr in cidrs:
        try:
            nets.append(ipaddress.ip_interface(cidr).network)
        except ValueError:
            continue
    return nets


def _on(address, nets):
    ip = ipaddress.ip_address(address)
    return any(ip.version == n.version and ip in n for n in nets)


def _member_warnings(service, pool, node, nets):
    out = []
    for m in pool.members:
        if m.state == "disabled":
            continue
        method = m.forwarding or service.forwarding
        if method == "nat" and not _on(m.address, nets):
            out.append(
                f"member {pool.name}/{m.name} ({m.address}) is on no network of node {node}: NAT works only "
                "when its replies are routed back through the balancer (its gateway must be the balancer)."
            )
        elif method == "direct-routing" and not _on(m.address, nets):
            out.append(
                f"member {pool.name}/{m.name} ({m.address}) is not on a network node {node} is attached to: "
                "direct routing needs the members on the balancer's own subnet (use tunnel across subnets)."
            )
    return out


_SERVER_COOKIES = ("cookie_insert", "cookie_rewrite", "cookie_prefix")


def _shared_cookies(service, snap):
    """Pools of one service (its default and its rules') that keep their clients with the same
    cookie name: each pool reads the other's server names from it, so a browser that moves
    between them loses its server in both."""
    by_cookie = defaultdict(list)
    names = dict.fromkeys([service.default_pool, *(rule.pool for rule in service.rules if rule.pool)])
    for name in names:
        pool = snap.pool(name) if name else None
        if pool is not None and pool.persistence.type in _SERVER_COOKIES:
            by_cookie[pool.persistence.cookie_name].append(name)
    return [
        f"pools {', '.join(shared)} keep their clients with the same cookie, {cookie}: a browser moving between "
        "them loses its server in each; give each pool its own cookie name."
        for cookie, shared in by_cookie.items()
        if len(shared) > 1
    ]


def _vip_off_the_nodes(service, nodes):
    """A VIP on none of a node's networks: clients on a segment find it by ARP (or neighbour
    discovery) only on the node's own subnets, so it is reached only if a router sends it to
    the node. Nodes that reported no networks yet are left out."""
    vip = ipaddress.ip_address(service.vip)
    if vip.is_unspecified:
        return []
    off = [
        node
        for node, report in sorted(nodes.items())
        if (nets := _networks(report.get("networks") or [])) and not _on(vip, nets)
    ]
    if not off:
        return []
    return [
        f"VIP {vip} is on no network of node{'s' if len(off) > 1 else ''} {', '.join(off)}: clients reach it there "
        "only if a router sends it to the node (a route, or BGP); otherwise use an address of the node's subnets."
    ]


def service_warnings(snap, nodes):
    """{service name: [message]} for ``snap``; ``nodes`` maps node name to
    ``{"networks": ["10.0.0.1/24", ...], "ipvs": [{"name", "scheduler_wanted", "scheduler_in_force", "message"}]}``."""
    warnings = defaultdict(list)
    floating = {ipaddress.ip_interface(v).ip for g in snap.ha_groups for v in g.vips}
    for service in snap.virtual_services:
        if floating and ipaddress.ip_address(service.vip) not in floating:
            warnings[service.name].append(
                f"VIP {service.vip} is in no HA group: it does not move when a node fails "
                "(add it to a group's VIPs, or the node must own it another way)."
            )
        warnings[service.name] += _shared_cookies(service, snap)
        warnings[service.name] += _vip_off_the_nodes(service, nodes)
        pool = snap.pool(service.default_pool)
        if not service.ipvs or pool is None:
            continue
        for node, report in sorted(nodes.items()):
            nets = _networks(report.get("networks") or [])
            if nets:
                warnings[service.name] += _member_warnings(service, pool, node, nets)
            for status in report.get("ipvs") or []:
                wanted, in_force = status.get("scheduler_wanted"), status.get("scheduler_in_force")
                if status.get("name") == service.name and wanted != in_force:
                    why = status.get("message", "")
                    warnings[service.name].append(f"node {node} runs scheduler {in_force} instead of {wanted}: {why}")
        check = pool.health_check
        if check is not None and check.rise > 1:
            warnings[service.name].append(
                f"pool {pool.name}: keepalived brings a member back after its first good check; rise {check.rise} "
                "applies to HAProxy pools only."
            )
        if IPVS_SCHEDULER.get(pool.algorithm) == "dllc" and not nodes:
            warnings[service.name].append("dynamic-least-load needs the ip_vs_dllc module on the nodes.")
    return {name: found for name, found in warnings.items() if found}
