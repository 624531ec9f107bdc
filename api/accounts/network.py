"""The client's address, for the audit log and the sign-in throttles.

``X-Forwarded-For`` is believed only when the connection comes from a proxy listed in
``FULCRUM_TRUSTED_PROXIES`` (addresses or networks); otherwise anyone could choose the
address they are recorded and throttled under.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings


@lru_cache(maxsize=8)
def _networks(proxies):
    return tuple(ipaddress.ip_network(p.strip(), strict=False) for p in proxies if p.strip())


def _trusted(address):
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in _networks(tuple(settings.FULCRUM_TRUSTED_PROXIES)))


def _valid(address):
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def client_address(request):
    """REMOTE_ADDR, or the nearest untrusted hop of X-Forwarded-For when REMOTE_ADDR is a
    trusted proxy. None when there is no valid address."""
    meta = getattr(request, "META", {})
    remote = meta.get("REMOTE_ADDR", "")
    if not _trusted(remote):
        return _valid(remote)
    hops = [h.strip() for h in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop):
            return _valid(hop)
    return _valid(hops[0]) if hops else _valid(remote)
