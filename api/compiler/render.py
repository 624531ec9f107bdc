"""Render a verified snapshot into daemon configuration files. Pure: no I/O, no clock."""

import ipaddress
import re
from functools import cache

import jinja2

from compiler.tokens import ALGORITHMS_WITH_WEIGHTS, HAPROXY_BALANCE, HAPROXY_MODE
from compiler.verify import verify

# The last line of defence: a word that reaches a config file must be inert to the parser.
_INERT_WORD = re.compile(r"\A[A-Za-z0-9_.:/%?&=+,;~!*()@\[\]-]+\Z")


def haproxy_word(value):
    """Jinja filter: pass a value into haproxy.cfg only if it cannot change the parse."""
    text = str(value)
    if not _INERT_WORD.match(text):
        raise ValueError(f"refusing to render {text!r} into haproxy.cfg")
    return text


def haproxy_address(address, port):
    """``10.0.0.1:80`` or ``[2001:db8::1]:80``."""
    ip = ipaddress.ip_address(address)
    host = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    return haproxy_word(f"{host}:{port}")


@cache
def _environment():
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("compiler", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["word"] = haproxy_word
    env.filters["address"] = haproxy_address
    return env


def _backend(pool, snap):
    protocols = {s.protocol for s in snap.virtual_services if s.default_pool == pool.name}
    weighted = pool.algorithm in ALGORITHMS_WITH_WEIGHTS
    return {
        "name": pool.name,
        "mode": HAPROXY_MODE[protocols.pop() if protocols else "http"],
        "balance": HAPROXY_BALANCE[pool.algorithm],
        "consistent_hash": pool.algorithm == "source-hash",
        "check": pool.health_check,
        "servers": [
            {
                "name": m.name,
                "address": m.address,
                "port": m.port,
                # HAProxy's drain is weight 0: no new balanced traffic, persistence still honoured.
                "weight": 0 if m.state == "drain" else (m.weight if weighted else 1),
                "disabled": m.state == "disabled",
            }
            for m in pool.members
        ],
    }


def render_haproxy(snap, node):
    """Return ``{"haproxy.cfg": bytes}`` for ``node`` (a node name) from a snapshot."""
    verify(snap)
    context = {
        "revision": snap.revision,
        "node": node,
        "services": sorted(snap.virtual_services, key=lambda s: s.name),
        "backends": [_backend(p, snap) for p in sorted(snap.pools, key=lambda p: p.name)],
    }
    text = _environment().get_template("haproxy/haproxy.cfg.j2").render(context)
    return {"haproxy.cfg": text.encode()}
