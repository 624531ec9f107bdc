"""Render a verified snapshot into a node's firewall sets. Pure: no I/O.

``firewall.nft`` is an nftables script for the table of the appliance's firewall baseline
(``appliance/firewall/baseline.nft``, ``table inet fulcrum_firewall``), whose input chain
drops what it does not accept. The script replaces the elements of the baseline's sets in
one transaction (``nft -f`` applies a file atomically):

- ``services4`` / ``services6``: ``VIP . tcp|udp . port`` (or ``port-port_end``) of every
  enabled virtual service, layer 7 and layer 4 alike (every node serves every service; HA
  only decides where a VIP lives). A wildcard VIP is its whole family (``0.0.0.0/0``).
- ``cluster4`` / ``cluster6``: ``source . destination . tcp|udp . port`` between the
  balancers: HAProxy ``peers`` from each other node to this one, and the IPVS sync daemon's
  multicast group.

Every node gets the file, even with nothing to accept: it then empties the sets.
"""

import ipaddress
from dataclasses import dataclass

from compiler import ha
from compiler.facts import transport, verified
from compiler.templating import environment

# The table the baseline defines, as nft names it (family and name).
TABLE = "inet fulcrum_firewall"
FILE = "firewall.nft"
# The kernel's default IPVS sync group (IP_VS_SYNC_GROUP), which keepalived keeps unless
# told otherwise.
IPVS_SYNC_GROUP = "224.0.0.81"
# Set elements an "add element" statement carries (each is one netlink message).
ELEMENTS_PER_STATEMENT = 500


@dataclass(frozen=True)
class Element:
    """One set element: the parts of its nft key (``10.0.0.5 . tcp . 80``) and a comment
    naming where it comes from."""

    key: tuple[str, ...]
    comment: str


def _host(address):
    """An address as an nft set key part: a wildcard is its whole family."""
    ip = ipaddress.ip_address(address)
    return f"{ip.compressed}/0" if ip.is_unspecified else ip.compressed


def _family(address):
    return ipaddress.ip_address(address).version


def _services(snap):
    """{4: [...], 6: [...]}: the enabled virtual services' VIP . protocol . ports."""
    sets = {4: [], 6: []}
    for s in sorted((s for s in snap.virtual_services if s.enabled), key=lambda s: s.name):
        ports = f"{s.port}-{s.port_end}" if s.port_end else str(s.port)
        sets[_family(s.vip)].append(Element((_host(s.vip), transport(s.protocol), ports), s.name))
    return sets


def _cluster(snap, node):
    """{4: [...], 6: [...]}: HAProxy peers from the other nodes, and the IPVS sync group."""
    sets = {4: [], 6: []}
    peers = ha.peers(snap, node)
    if peers:
        own = dict(peers["members"])[node]
        for name, address in peers["members"]:
            if name != node and _family(address) == _family(own):
                key = (_host(address), _host(own), "tcp", str(peers["port"]))
                sets[_family(own)].append(Element(key, f"haproxy peer {name}"))
    if snap.ipvs_sync is not None:
        group = snap.ipvs_sync.group or IPVS_SYNC_GROUP
        anywhere = "0.0.0.0/0" if _family(group) == 4 else "::/0"
        key = (anywhere, _host(group), "udp", str(snap.ipvs_sync.port))
        sets[_family(group)].append(Element(key, "ipvs sync"))
    return sets


def render_firewall(proved, node):
    """Return ``{"firewall.nft": bytes}`` for ``node`` (a node name) from a verified snapshot
    (``compiler.verify``'s answer)."""
    snap = verified(proved, "render_firewall")
    services, cluster = _services(snap), _cluster(snap, node)
    sets = {
        "services4": services[4],
        "services6": services[6],
        "cluster4": cluster[4],
        "cluster6": cluster[6],
    }
    context = {"node": node, "table": TABLE, "sets": sets, "chunk": ELEMENTS_PER_STATEMENT}
    return {FILE: environment().get_template("firewall/firewall.nft.j2").render(context).encode()}
