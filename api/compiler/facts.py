"""What verify() hands the renderers: the snapshot it proved, and the facts it derived on
the way. The compiler runs one way: snapshot_from_dict → verify → render; a renderer takes
only a Verified, so nothing renders what was not verified, and nothing verifies twice.

The facts are plain functions of a snapshot (listener transports, where each pool is used,
the firewall marks of port ranges); verify computes the ones the renderers need once.
"""

import ipaddress
import zlib
from collections import defaultdict
from dataclasses import dataclass
from types import MappingProxyType

from compiler.snapshot import Snapshot
from compiler.tokens import HAPROXY_MODE

_MARK_BASE = 0x46000000  # 'F' in the top byte keeps Fulcrum's marks apart from others'


@dataclass(frozen=True)
class Verified:
    """A snapshot verify() found nothing wrong with, and what it derived from it."""

    snapshot: Snapshot
    # {pool name: frozenset of "http" / "tcp" (the HAProxy modes it is used in), "ipvs"}
    pool_modes: MappingProxyType
    # {service name: firewall mark} of the enabled IPVS services with a port range
    marks: MappingProxyType


def derive(snap, modes=None):
    """The facts of ``snap``, unchecked: verify() returns this once it found nothing wrong
    (``modes``: the pool_modes it worked out). Only tests call it directly, to hand a daemon
    what verify() would refuse."""
    modes = {name: frozenset(used) for name, used in (modes or pool_modes(snap)).items()}
    marks = {service.name: firewall_mark(service) for service in marked_services(snap)}
    return Verified(snap, MappingProxyType(modes), MappingProxyType(marks))


def verified(value, renderer):
    """``value``'s snapshot, when ``value`` is verify()'s answer; else a TypeError (a
    renderer given a bare snapshot is a programming error, not an operator's)."""
    if not isinstance(value, Verified):
        raise TypeError(f"{renderer} takes what compiler.verify() returns, not {type(value).__name__}")
    return value.snapshot


def transport(protocol):
    """The IP protocol a listener uses: every protocol but udp is carried over TCP."""
    return "udp" if protocol == "udp" else "tcp"


def listeners_clash(a, b):
    """True when two services (vip, port, port_end, protocol) would take the same packets.

    A wildcard VIP covers its address family; TCP and UDP on one port do not clash.
    """
    if transport(a.protocol) != transport(b.protocol):
        return False
    if a.port > (b.port_end or b.port) or b.port > (a.port_end or a.port):
        return False
    x, y = ipaddress.ip_address(a.vip), ipaddress.ip_address(b.vip)
    return x == y or (x.version == y.version and (x.is_unspecified or y.is_unspecified))


def pool_modes(snap):
    """{pool name: modes}: "http" / "tcp" for the HAProxy modes it is used in, "ipvs" for IPVS."""
    modes = defaultdict(set)
    for service in snap.virtual_services:
        mode = "ipvs" if service.ipvs else HAPROXY_MODE.get(service.protocol, service.protocol)
        modes[service.default_pool].add(mode)
        for rule in service.rules:
            if rule.action == "use_pool":
                modes[rule.pool].add(mode)
    return modes


def firewall_mark(service):
    """A stable mark for a port-range service, from what it matches (not from its name)."""
    key = f"{service.protocol} {service.vip} {service.port}-{service.port_end}"
    return _MARK_BASE | (zlib.crc32(key.encode()) & 0xFFFFFF)


def marked_services(snap):
    """The services keepalived gives a firewall mark: enabled IPVS services with a port range,
    by name."""
    return sorted((s for s in snap.virtual_services if s.ipvs and s.enabled and s.port_end), key=lambda s: s.name)
