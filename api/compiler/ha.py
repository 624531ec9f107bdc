"""High availability for one node, from a verified snapshot. Pure: no I/O.

- VRRP (keepalived): one ``vrrp_instance`` per HA group the node belongs to, with the node's
  own priority and interface, unicast to the group's other nodes, gratuitous ARP /
  unsolicited NA on takeover and as a refresh. Two track files the node agent keeps give
  up the master role at once (keepalived's FAULT state, which releases the VIPs and sends
  priority 0 so a peer takes over without waiting): ``standby`` (an operator's request)
  and ``haproxy`` (HAProxy is not running). A witness address that must answer ping keeps
  an isolated node from claiming the VIPs.
- ``keepalived.d/ha.json``: the same, for the agent (where the track files and the notify
  FIFO are, which groups and VIPs to report and clean up).
- HAProxy ``peers``: every node of any HA group that has an address, so stick tables
  (source, learned cookie, header and SSL session ID persistence) survive a failover.
"""

import ipaddress
import json
from decimal import Decimal

from compiler import names, rules


def run_dir(node):
    """Where ``node``'s agent and keepalived share files; per node, so namespaces can share a host."""
    return f"{rules.HA_RUN_DIR}/{node}"


def _advert(ms):
    return format(Decimal(ms) / 1000, "f").rstrip("0").rstrip(".")


def _vip(text):
    """An address with its prefix: a bare address is a host route (/32, /128)."""
    return str(ipaddress.ip_interface(text))


def _address_of(snap, name):
    node = snap.node(name)
    return node.address if node else ""


def runs_haproxy(snap):
    return any(not s.ipvs for s in snap.virtual_services)


def vrrp(snap, node):
    """keepalived's VRRP part for ``node`` (a name): None when it is in no HA group."""
    own = snap.node(node)
    memberships = snap.groups_of(node)
    if own is None or not memberships:
        return None
    directory = run_dir(node)
    track_haproxy = runs_haproxy(snap) and any(g.track_haproxy for g, _ in memberships)
    instances = []
    for group, entry in sorted(memberships, key=lambda m: m[0].name):
        interface = entry.interface or group.interface
        peers = [_address_of(snap, e.node) for e in group.nodes if e.node != node]
        instances.append(
            {
                "group": group,
                "interface": interface,
                "priority": entry.priority,
                "advert": _advert(group.advert_interval_ms),
                "source": own.address if peers else "",
                "peers": peers,
                "vips": [_vip(v) for v in group.vips],
                # keepalived always tracks the instance's own interface and warns when told to.
                "track_interfaces": [i for i in group.track_interfaces if i != interface],
                "track_haproxy": track_haproxy and group.track_haproxy,
                "witness": names.witness_script(group.name) if group.witness else "",
            }
        )
    return {
        "run_dir": directory,
        "fifo": f"{directory}/vrrp.fifo",
        "standby_file": f"{directory}/standby",
        "haproxy_file": f"{directory}/haproxy" if track_haproxy else "",
        "instances": instances,
        "witnesses": [i for i in instances if i["witness"]],
        "standby": own.standby,
    }


def ha_json(ha, node):
    """The agent's view of ``vrrp()``'s result."""
    track = {"standby": ha["standby_file"], **({"haproxy": ha["haproxy_file"]} if ha["haproxy_file"] else {})}
    groups = [
        {
            "name": i["group"].name,
            "vrid": i["group"].vrid,
            "interface": i["interface"],
            "priority": i["priority"],
            "advert_ms": i["group"].advert_interval_ms,
            "vips": i["vips"],
            "peers": i["peers"],
            "track_interfaces": i["track_interfaces"],
            "witness": i["group"].witness,
        }
        for i in ha["instances"]
    ]
    data = {
        "node": node,
        "run_dir": ha["run_dir"],
        "fifo": ha["fifo"],
        "standby": ha["standby"],
        "track_files": track,
        "groups": groups,
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def peers(snap, node):
    """HAProxy's peers for ``node``: None unless HAProxy serves something and ``node`` and at
    least one other HA node have addresses."""
    if not runs_haproxy(snap):
        return None
    names = sorted({e.node for g in snap.ha_groups for e in g.nodes})
    members = [(n, _address_of(snap, n)) for n in names if _address_of(snap, n)]
    if node not in dict(members) or len(members) < 2:
        return None
    return {"section": rules.PEERS_SECTION, "local": node, "port": rules.PEERS_PORT, "members": members}


def floating_vips(snap, node):
    """The VIP addresses that move between ``node`` and its peers (they may not be local yet)."""
    return {ipaddress.ip_interface(v).ip for g, _ in snap.groups_of(node) for v in g.vips}
