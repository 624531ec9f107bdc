"""Render a verified snapshot into daemon configuration files. Pure: no I/O, no clock.

HAProxy's files: ``haproxy.cfg`` and, beside it in ``haproxy.d/``, the maps, certificates,
pages and scripts it names as ``"${FULCRUM_CONF_DIR}/haproxy.d/<leaf>"``, plus
``haproxy.d/servers.json``: every server's weight and admin state and a hash of the rest
of the configuration, so the node agent can apply a weight or state change through
HAProxy's runtime API instead of reloading; and its address, port and whether it is
health-checked, so that across a reload the agent carries a server's health only to the
same server (agents/internal/haproxy/serverstate.go).
"""

import hashlib
import ipaddress
import json
import re
from dataclasses import dataclass

from compiler import ha, names
from compiler import rules as limits
from compiler.errors import VerifyError
from compiler.facts import verified
from compiler.feedback import feedback_target
from compiler.switching import ROUTED_ACL, compile_rules, conf_file, quote, value_lines
from compiler.templating import environment
from compiler.tokens import (
    ALGORITHMS_WITH_WEIGHTS,
    HAPROXY_BALANCE,
    HAPROXY_MODE,
    TLS_POLICIES,
)


@dataclass(frozen=True)
class CertificateFiles:
    """The PEM texts behind a snapshot's certificate: ``crt`` (chain and key) and ``ca``."""

    crt: str
    ca: str


class _Files:
    """haproxy.d/ leaves in the making; each leaf is written once."""

    def __init__(self):
        self.files = {}

    def add(self, leaf, content):
        self.files[f"haproxy.d/{leaf}"] = content.encode() if isinstance(content, str) else content
        return conf_file(leaf)


def _seconds(ms):
    return max(1, -(-ms // 1000))


def _check(pool, files):
    check = pool.health_check
    if check is None:
        return None
    context = {"check": check, "ping_script": None, "expect": None}
    if check.type == "ping":
        wait = _seconds(check.timeout_ms)
        context["ping_script"] = files.add(f"check-ping-{wait}s.sh", _ping_script(wait))
    if check.type in ("http", "https") and check.expect_body:
        word = "rstring" if check.expect_body_match == "regex" else "string"
        context["expect"] = f"{word} {quote(check.expect_body)}"
    return context


def _ping_script(wait_s):
    # HAProxy's external check passes: proxy address, proxy port, server address, server port.
    return (
        "#!/bin/sh\n"
        "# Fulcrum ping check: one ICMP echo to the server address.\n"
        f'exec ping -n -q -c 1 -W {wait_s} "$3" >/dev/null 2>&1\n'
    )


def _persistence(pool):
    p = pool.persistence
    if p.type == "none":
        return None
    options = []
    if p.type == "cookie_insert":
        options = [o for o in ("indirect", "nocache", "httponly", "secure") if getattr(p, o)]
        options += [f"maxidle {p.max_idle_s}s"] if p.max_idle_s else []
        options += [f"maxlife {p.max_life_s}s"] if p.max_life_s else []
    masked = p.ipv4_mask != 32 or p.ipv6_mask != 128
    return {
        "type": p.type,
        "cookie": p.type.startswith("cookie_"),
        "cookie_mode": p.type.removeprefix("cookie_"),
        "p": p,
        "options": " ".join(options),
        "source_key": f"src,ipmask({p.ipv4_mask},{p.ipv6_mask})" if masked else "src",
    }


def _server(member, pool, weighted, scale):
    # HAProxy's drain is weight 0: no new balanced traffic, persistence still honoured.
    weight = 0 if member.state == "drain" else (member.weight if weighted else 1)
    if scale and weight:
        weight = max(1, round(weight * scale))
    return {
        "name": member.name,
        "address": member.address,
        "port": member.port,
        "weight": weight,
        "disabled": member.state == "disabled",
        "member": member,
    }


def _dllc_scale(pool):
    """The factor that puts a DLLC pool's heaviest weight at HAProxy's maximum.

    fulcrum-loadd answers agent-check with a percentage of the configured weight, and
    HAProxy keeps integer weights up to 256: the larger the configured weights, the finer
    the loads it can tell apart. Scaling keeps the members' ratios. Changing a weight
    therefore reloads HAProxy (see _servers_json): a runtime "set weight" would be undone
    by the next agent answer, which is relative to the weight HAProxy loaded.
    """
    if pool.algorithm != "dynamic-least-load":
        return None
    heaviest = max((m.weight for m in pool.members if m.state != "drain"), default=0)
    return limits.WEIGHT_MAX / heaviest if heaviest else None


def _feedback(pool):
    if pool.algorithm != "dynamic-least-load":
        return None
    return {"agent_port": pool.feedback_agent_port, "interval_ms": pool.feedback_interval_ms}


def _backend(pool, mode, files, pems):
    weighted = pool.algorithm in ALGORITHMS_WITH_WEIGHTS
    scale = _dllc_scale(pool)
    balance = HAPROXY_BALANCE[pool.algorithm]
    if pool.persistence.type == "ssl_session_id" and pool.persistence.fallback_source:
        balance = "source"
    backend = {
        "name": pool.name,
        "pool": pool,
        "mode": mode,
        "balance": balance,
        "consistent_hash": balance == "source",
        "check": _check(pool, files),
        "persistence": _persistence(pool),
        "tls_ca": None,
        "maintenance_page": None,
        "feedback": _feedback(pool),
        "servers": [_server(m, pool, weighted, scale) for m in pool.members],
    }
    if pool.tls and pool.tls_verify:
        backend["tls_ca"] = files.add(names.ca_file(pool.tls_ca), pems[pool.tls_ca].ca)
    if pool.maintenance_page and mode == "http":
        backend["maintenance_page"] = files.add(names.maintenance_page_file(pool.name), pool.maintenance_page)
    return backend


def _frontend(service, files, pems, floating):
    switching = compile_rules(service)
    for leaf, content in switching.maps.items():
        files.add(leaf, content)
    vip = ipaddress.ip_address(service.vip)
    front = {
        "service": service,
        "mode": HAPROXY_MODE[service.protocol],
        "http": service.protocol in limits.HTTP_PROTOCOLS,
        "switching": switching,
        "routed_acl": ROUTED_ACL,
        "allow": list(value_lines(service.allow_cidrs)),
        "deny": list(value_lines(service.deny_cidrs)),
        "compression_types": list(value_lines(service.compression_types)),
        "scheme": "https" if service.protocol == "https" else "http",
        "forwarded_for": '"[%[src]]"' if vip.version == 6 else '"%[src]"',
        "crts": [],
        "ca_file": None,
        "tls": TLS_POLICIES[service.tls_policy],
        "error_pages": [
            (page, files.add(names.error_page_file(service.name, page.status), page.body))
            for page in service.error_pages
        ],
        "track": service.rate_limit is not None or service.conn_limit > 0,
        # An HA VIP is local only on the master: bind it anyway, so a takeover needs no reload.
        "floating": " transparent" if vip in floating else "",
    }
    if service.protocol == "https":
        front["crts"] = [files.add(names.certificate_file(name), pems[name].crt) for name in service.certificates]
        if service.client_ca:
            front["ca_file"] = files.add(names.ca_file(service.client_ca), pems[service.client_ca].ca)
    return front


def _missing_pems(snap, pems):
    used = set()
    for service in snap.virtual_services:
        if service.protocol == "https":
            used.update(service.certificates)
            used.update([service.client_ca] if service.client_ca else [])
    for pool in snap.pools:
        if pool.tls and pool.tls_verify and pool.tls_ca:
            used.add(pool.tls_ca)
    return [(f"certificates/{name}", "PEM not available to the compiler") for name in sorted(used - set(pems))]


def _block(name, **context):
    """One block of haproxy.cfg.j2 (``head`` or ``body``) rendered with ``context``."""
    template = environment().get_template("haproxy/haproxy.cfg.j2")
    return "".join(template.blocks[name](template.new_context(context)))


# The runtime state in a rendered haproxy.cfg: the revision in its first line, and each
# server line's weight and trailing " disabled" (haproxy.cfg.j2).
_HEADER = re.compile(r"^(# Generated by Fulcrum from revision )\d+( for node )")
_SERVER_LINE = re.compile(r"^(    server \S+ \S+ weight )(\d+)(.*?)(?: disabled)?$")
# The lines of its head that name the node: a node's own configuration never changes them,
# and nodes that differ only in them share one structure (and one servers.json).
_NAMING_LINE = re.compile(r"^(# Generated by Fulcrum from revision \d+ for node |    localpeer ).*$", re.M)


def _structure(config, weighted):
    """``config`` as rendered with its runtime state masked out: revision 0, every server
    enabled and of weight 0 but in the ``weighted`` backends (their weights are structure).
    The same text as rendering again with those values, at the cost of a pass over lines."""
    lines = config.split("\n")
    lines[0] = _HEADER.sub(r"\g<1>0\g<2>", lines[0], count=1)
    backend = None
    for i, line in enumerate(lines):
        if line.startswith("backend "):
            backend = line.split(" ", 2)[1]
        elif line.startswith("    server "):
            server = _SERVER_LINE.match(line)
            lines[i] = f"{server[1]}{server[2] if backend in weighted else 0}{server[3]}"
    return "\n".join(lines)


def _servers_json(backends, config):
    """Each server's runtime state and endpoint, and the hash of the configuration with
    the runtime state and the lines that name the node masked out.

    A DLLC pool's weights stay in the structure: its agent's answers are relative to the
    weight HAProxy loaded, so a weight change must reload. Its servers also say where the
    node agent reads their loads (for the console).
    """
    weighted = {names.backend(b["name"]) for b in backends if b["feedback"]}
    structure = hashlib.sha256(_structure(config, weighted).encode()).hexdigest()
    servers = [
        {
            "backend": names.backend(b["name"]),
            "server": s["name"],
            "weight": s["weight"],
            "admin": "maint" if s["disabled"] else "ready",
            "address": s["address"],
            "port": s["port"],
            "checked": b["check"] is not None,
            **({"feedback": feedback_target(b["pool"], s["member"])} if b["feedback"] else {}),
        }
        for b in backends
        for s in b["servers"]
    ]
    # One server a line: a change reads as the servers it changed, and each line is encoded in
    # C (json.dumps with an indent is pure Python: 80,000 servers took a second).
    rows = ",\n".join(json.dumps(server, sort_keys=True) for server in servers)
    return '{"servers": [' + (f"\n{rows}\n" if rows else "") + f'], "structure": "{structure}"}}\n'


def render_haproxy(proved, node, pems=None):
    """Return ``{path: bytes}`` for ``node`` (a node name) from a verified snapshot
    (``compiler.verify``'s answer).

    ``pems`` maps certificate names to ``CertificateFiles``; every certificate the
    snapshot uses for TLS must be there. Keys live only in the returned files.
    """
    return render_haproxy_nodes(proved, [node], pems)[node]


def render_haproxy_nodes(proved, nodes, pems=None):
    """``{node: files}``: render_haproxy's answer for each of ``nodes``, at the cost of the
    nodes that differ. A node's files depend on it only through its floating VIPs (their
    binds are transparent), whether it replicates stick tables (peers), and the head's lines
    that name it: the body of haproxy.cfg and every other file are rendered once for the
    nodes alike in the first two."""
    snap = verified(proved, "render_haproxy")
    pems = pems or {}
    missing = _missing_pems(snap, pems)
    if missing:
        raise VerifyError(missing)
    files = _Files()
    modes = proved.pool_modes
    # IPVS services and their pools belong to keepalived (compiler.keepalived).
    services = sorted((s for s in snap.virtual_services if not s.ipvs), key=lambda s: s.name)
    proxied = [p for p in snap.pools if "ipvs" not in modes.get(p.name, ()) and p.algorithm in HAPROXY_BALANCE]
    backends = [
        _backend(p, min(modes.get(p.name) or {"http"}), files, pems) for p in sorted(proxied, key=lambda p: p.name)
    ]
    external_check = any(b["check"] and b["check"]["ping_script"] for b in backends)
    bodies, rendered = {}, {}
    for node in nodes:
        floating, peers = ha.floating_vips(snap, node), ha.peers(snap, node)
        head = _block("head", revision=snap.revision, node=node, peers=peers, external_check=external_check)
        alike = (frozenset(floating), peers is not None)
        if alike not in bodies:
            frontends = [_frontend(s, files, pems, floating) for s in services]
            replicated = f" peers {peers['section']}" if peers else ""
            body = _block("body", frontends=frontends, backends=backends, replicated=replicated)
            servers = _servers_json(backends, _NAMING_LINE.sub(r"\1", head) + body)
            bodies[alike] = (body.encode(), {**files.files, "haproxy.d/servers.json": servers.encode()})
        body, leaves = bodies[alike]
        rendered[node] = {"haproxy.cfg": head.encode() + body, **dict(sorted(leaves.items()))}
    return rendered
