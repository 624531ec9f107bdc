"""Verifying high availability: HA groups (VRRP), their nodes, and IPVS connection sync."""

import ipaddress
from collections import defaultdict

from compiler import rules
from compiler.verify.fields import address_problems, duplicate_names, interface_problems, name_problems, one_of, within


def verify_sync(sync, path):
    """Problems with the IPVS sync daemon settings ``sync`` (a snapshot IpvsSync)."""
    problems = []
    if not rules.INTERFACE_RE.match(sync.interface):
        problems.append((f"{path}/interface", f"invalid interface {sync.interface!r}: {rules.INTERFACE_HELP}"))
    problems += within(sync.sync_id, 0, rules.SYNC_ID_MAX, f"{path}/sync_id")
    problems += within(sync.port, rules.PORT_MIN, rules.PORT_MAX, f"{path}/port")
    problems += within(sync.ttl, 1, 255, f"{path}/ttl")
    if sync.max_packet:
        problems += within(sync.max_packet, 1, rules.SYNC_MAXLEN_MAX, f"{path}/max_packet")
    if sync.group:
        bad_group = address_problems(sync.group, f"{path}/group")
        problems += bad_group
        if not bad_group and not ipaddress.ip_address(sync.group).is_multicast:
            problems.append((f"{path}/group", f"{sync.group} is not a multicast address"))
    return problems


def verify_ha(snap):
    """Problems with the nodes' HA settings and the HA groups."""
    problems = duplicate_names(snap.nodes, "nodes")
    for node in snap.nodes:
        problems += name_problems(node.name, f"nodes/{node.name}/name")
        if node.address:
            problems += address_problems(node.address, f"nodes/{node.name}/address")
    problems += duplicate_names(snap.ha_groups, "ha-groups")
    for group in snap.ha_groups:
        problems += verify_ha_group(group, snap.node)
    problems += _ha_clashes(snap.ha_groups)
    return problems


def verify_ha_group(group, node_named):
    """Problems with one HA group; ``node_named(name)`` returns a snapshot Node or None."""
    path = f"ha-groups/{group.name}"
    problems = name_problems(group.name, f"{path}/name")
    problems += within(group.vrid, rules.VRID_MIN, rules.VRID_MAX, f"{path}/vrid")
    problems += interface_problems(group.interface, f"{path}/interface")
    problems += one_of(group.version, rules.VRRP_VERSIONS, f"{path}/version")
    problems += _advert(group, f"{path}/advert_interval_ms")
    problems += within(group.preempt_delay_s, 0, rules.PREEMPT_DELAY_S_MAX, f"{path}/preempt_delay_s")
    if group.preempt_delay_s and not group.preempt:
        problems.append((f"{path}/preempt_delay_s", "a delay only applies when preempt is on"))
    if group.auth_password:
        if group.version != 2:
            problems.append((f"{path}/auth_password", "VRRPv3 has no authentication; use version 2 or no password"))
        elif not rules.VRRP_PASSWORD_RE.match(group.auth_password):
            problems.append((f"{path}/auth_password", rules.VRRP_PASSWORD_HELP))
    for i, name in enumerate(group.track_interfaces):
        problems += interface_problems(name, f"{path}/track_interfaces/{i}")
    if len(group.track_interfaces) > rules.TRACK_INTERFACES_MAX:
        problems.append((f"{path}/track_interfaces", f"at most {rules.TRACK_INTERFACES_MAX}"))
    if group.witness:
        problems += address_problems(group.witness, f"{path}/witness")
    problems += within(group.garp_refresh_s, 0, rules.GARP_REFRESH_S_MAX, f"{path}/garp_refresh_s")
    problems += within(group.garp_repeat, rules.GARP_REPEAT_MIN, rules.GARP_REPEAT_MAX, f"{path}/garp_repeat")
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
        problems += within(entry.priority, rules.VRRP_PRIORITY_MIN, rules.VRRP_PRIORITY_MAX, f"{npath}/priority")
        if entry.priority in priorities:
            problems.append(
                (f"{npath}/priority", f"same as {priorities[entry.priority]}'s: give each node its own priority")
            )
        priorities.setdefault(entry.priority, entry.node)
        if entry.interface:
            problems += interface_problems(entry.interface, f"{npath}/interface")
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
