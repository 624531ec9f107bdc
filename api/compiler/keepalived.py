"""Render a verified snapshot's layer-4 services into keepalived's files. Pure: no I/O.

- ``keepalived.conf``: one ``virtual_server`` per enabled IPVS service, its members as
  real servers with their health checks, the IPVS sync daemon in ``global_defs``.
- ``keepalived.d/ipvs.json``: every virtual server with the kernel scheduler the operator
  chose. keepalived only accepts its own list of schedulers, so for ``dllc`` the file names
  a fallback and the node agent sets the kernel scheduler itself, and keeps it set. It also
  names the member behind each real server, so the agent's telemetry can say whose it is.
- ``keepalived.d/fulcrum.nft``: firewall marks for port-range services (IPVS matches a
  range only as a firewall-mark service). Only present when a range service exists.
- The node's VRRP instances and ``keepalived.d/ha.json`` (see compiler.ha).

Nothing is rendered for a node without IPVS services, sync settings or HA groups.
"""

import ipaddress
import json
from decimal import Decimal

from compiler import pcre
from compiler.facts import verified
from compiler.feedback import feedback_target
from compiler.ha import ha_json, vrrp
from compiler.templating import environment, keepalived_word
from compiler.tokens import HASH_SCHEDULERS, IPVS_METHOD, IPVS_SCHEDULER, KEEPALIVED_FALLBACK, KEEPALIVED_SCHEDULERS

CHECK_BLOCKS = {
    "tcp": "TCP_CHECK",
    "http": "HTTP_GET",
    "https": "SSL_GET",
    "ping": "PING_CHECK",
    "dns": "DNS_CHECK",
    "script": "MISC_CHECK",
}


def seconds(ms):
    """keepalived timers are seconds with decimals: 1500 -> "1.5"."""
    return format(Decimal(ms) / 1000, "f").rstrip("0").rstrip(".") if ms % 1000 else str(ms // 1000)


def _check(pool, fwmark):
    check = pool.health_check
    if check is None:
        return None
    context = {
        "type": check.type,
        "block": CHECK_BLOCKS[check.type],
        "delay_loop": seconds(check.interval_ms),
        "timeout": seconds(check.timeout_ms),
        # keepalived fails a server after 1 + retry failed checks: HAProxy's fall.
        "retry": check.fall - 1,
        "retry_delay": seconds(check.retry_interval_ms or check.interval_ms),
        "alpha": check.alpha,
        "omega": check.omega,
        "path": check.path,
        "status": check.expected_status,
        "host": check.host,
        "sni": check.type == "https" and bool(check.host),
        "digest": check.expect_body if check.expect_body_match == "digest" else "",
        "regex": "",
        "multiline": False,
        "dns_type": check.dns_type,
        "dns_name": check.dns_name,
        "misc_timeout": max(1, -(-check.timeout_ms // 1000)),
        "dynamic": check.script_dynamic,
    }
    if check.expect_body and check.expect_body_match == "regex":
        # keepalived searches the whole response, status line and headers included: multiline,
        # an operator's ^ and $ anchor to a line of the page, as they expect. An option rather
        # than a leading (?m), which would break a pattern that starts with (*CR) or the like.
        context["regex"], context["multiline"] = check.expect_body, True
    elif check.expect_body and check.expect_body_match == "string":
        context["regex"] = pcre.literal(check.expect_body)
    return context


def _persistence(pool, vip):
    p = pool.persistence
    if p.type != "source":
        return None
    if vip.version == 4:
        granularity = str(ipaddress.ip_network(f"0.0.0.0/{p.ipv4_mask}").netmask) if p.ipv4_mask != 32 else ""
    else:
        granularity = str(p.ipv6_mask) if p.ipv6_mask != 128 else ""
    return {"timeout": p.timeout_s, "granularity": granularity}


def _virtual_server(service, pool, mark):
    vip = ipaddress.ip_address(service.vip)
    scheduler = IPVS_SCHEDULER[pool.algorithm]
    flags = []
    if scheduler in HASH_SCHEDULERS:
        # A drained or quiesced member has weight 0: without fallback the clients that hash
        # to it would be refused instead of moving, which is not what drain means.
        weight_zero = pool.on_failure == "quiesce" or any(m.state == "drain" for m in pool.members)
        wanted = {"port": pool.hash_port, "fallback": pool.hash_fallback or weight_zero}
        flags = [f"{scheduler}-{flag}" for flag in ("port", "fallback") if wanted[flag]]
    if service.one_packet_scheduling:
        flags.append("ops")
    members = [m for m in pool.members if m.state != "disabled"]
    return {
        "service": service,
        "pool": pool,
        "mark": mark,
        "family": "inet6" if vip.version == 6 else "inet",
        "protocol": service.protocol.upper(),
        "scheduler": scheduler,
        "keepalived_scheduler": scheduler if scheduler in KEEPALIVED_SCHEDULERS else KEEPALIVED_FALLBACK,
        "flags": flags,
        "method": IPVS_METHOD[service.forwarding],
        "persistence": _persistence(pool, vip),
        "check": _check(pool, mark),
        "inhibit": pool.on_failure == "quiesce",
        "sorry": next((m for m in members if m.backup), None),
        "real_servers": [
            {
                "member": m,
                # Like F5's external monitors: the program gets the member's address and port
                # first (keepalived itself passes nothing), then the operator's arguments.
                "script": _script_for(pool, m),
                # Drain is IPVS's quiescing: weight 0 takes no new connections, keeps the old.
                "weight": 0 if m.state == "drain" else m.weight,
                "method": IPVS_METHOD[m.forwarding] if m.forwarding else "",
            }
            for m in members
            if not m.backup
        ],
    }


def _script_for(pool, member):
    check = pool.health_check
    if check is None or check.type != "script":
        return ""
    program, _, arguments = check.script.partition(" ")
    return " ".join(w for w in (program, member.address, str(member.port), arguments) if w)


def _key(vs):
    service = vs["service"]
    if vs["mark"]:
        return f"fwmark {vs['mark']}"
    host = f"[{service.vip}]" if ":" in service.vip else service.vip
    return f"{service.protocol} {host}:{service.port}"


def _feedback(vs):
    """The real servers of a dllc service, where their loads are read and their weights."""
    return [
        {**feedback_target(vs["pool"], rs["member"]), "dest_port": rs["member"].port, "weight": rs["weight"]}
        for rs in vs["real_servers"]
    ]


def _members(vs):
    """Every real server (and the sorry server) with the member it stands for, for telemetry.

    A mark service's real servers have no port in keepalived.conf: IPVS lists them with port 0.
    """

    def entry(member, weight, sorry):
        port = 0 if vs["mark"] else member.port
        pool = vs["pool"].name
        return {
            "pool": pool,
            "member": member.name,
            "address": member.address,
            "port": port,
            "weight": weight,
            "sorry": sorry,
        }

    members = [entry(rs["member"], rs["weight"], False) for rs in vs["real_servers"]]
    if vs["sorry"]:
        members.append(entry(vs["sorry"], 1, True))  # keepalived's default weight
    return members


def _ipvs_json(virtual_servers):
    services = [
        {
            "key": _key(vs),
            "name": vs["service"].name,
            "protocol": vs["service"].protocol,
            "family": vs["family"],
            "address": "" if vs["mark"] else vs["service"].vip,
            "port": 0 if vs["mark"] else vs["service"].port,
            "fwmark": vs["mark"],
            "scheduler": vs["scheduler"],
            "keepalived_scheduler": vs["keepalived_scheduler"],
            "health_check": vs["check"]["type"] if vs["check"] else "",
            "members": _members(vs),
            **({"feedback": _feedback(vs)} if vs["scheduler"] == "dllc" else {}),
        }
        for vs in virtual_servers
    ]
    return json.dumps({"services": services}, indent=1, sort_keys=True) + "\n"


def _nft(virtual_servers, node):
    lines = [
        f"# Generated by Fulcrum for node {node}.",
        "# Firewall marks for IPVS port-range services; replaces the whole table.",
        "table inet fulcrum {}",
        "delete table inet fulcrum",
        "table inet fulcrum {",
        "    chain prerouting {",
        "        type filter hook prerouting priority mangle; policy accept;",
    ]
    for vs in virtual_servers:
        s = vs["service"]
        family = "ip6" if vs["family"] == "inet6" else "ip"
        lines.append(
            f"        {family} daddr {keepalived_word(s.vip)} {s.protocol} dport {s.port}-{s.port_end}"
            f" meta mark set {vs['mark']:#x} comment {json.dumps(s.name)}"
        )
    return "\n".join([*lines, "    }", "}", ""])


def _sync_instance(snap, ha):
    """The VRRP instance that decides this node's sync daemon role; "" = both daemons."""
    wanted = snap.ipvs_sync.ha_group if snap.ipvs_sync else ""
    if ha is None or not wanted:
        return ""
    return wanted if any(i["group"].name == wanted for i in ha["instances"]) else ""


def render_keepalived(proved, node):
    """Return ``{path: bytes}`` of keepalived's files for ``node`` from a verified snapshot
    (``compiler.verify``'s answer); empty when nothing is L4."""
    snap = verified(proved, "render_keepalived")
    services = sorted((s for s in snap.virtual_services if s.ipvs and s.enabled), key=lambda s: s.name)
    ha = vrrp(snap, node)
    if not services and snap.ipvs_sync is None and ha is None:
        return {}
    marks = proved.marks
    virtual_servers = [_virtual_server(s, snap.pool(s.default_pool), marks.get(s.name, 0)) for s in services]
    context = {
        "node": node,
        "sync": snap.ipvs_sync,
        "sync_instance": _sync_instance(snap, ha),
        "ha": ha,
        "scripts": any(vs["check"] and vs["check"]["type"] == "script" for vs in virtual_servers),
        "virtual_servers": virtual_servers,
    }
    files = {
        "keepalived.conf": environment().get_template("keepalived/keepalived.conf.j2").render(context).encode(),
        "keepalived.d/ipvs.json": _ipvs_json(virtual_servers).encode(),
    }
    if ha is not None:
        files["keepalived.d/ha.json"] = ha_json(ha, node).encode()
    ranged = [vs for vs in virtual_servers if vs["mark"]]
    if ranged:
        files["keepalived.d/fulcrum.nft"] = _nft(ranged, node).encode()
    return files
