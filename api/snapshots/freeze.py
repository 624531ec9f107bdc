"""Freezing: the one translation from stored objects to the compiler's snapshot dicts
(snapshots.restore is the way back).

revisions.publish freezes whole revisions; the serializers freeze what a single write can
affect (freeze_around) to run the compiler's own checks before it is saved, so the API
accepts exactly what the compiler can render. The fields a model stores as they are come
from the compiler's dataclasses (compiler.snapshot), so a new one needs no list here.
"""

import ipaddress
import time
from dataclasses import fields

from django.conf import settings
from django.db.models import Prefetch, Q, QuerySet

from certificates.models import Certificate
from certificates.pem import snapshot_entry
from cluster.models import HaGroup, HaGroupNode, IpvsSync, Node
from compiler import snapshot as shape
from services.models import Pool, Rule, VirtualService
from snapshots.generation import generation


def _stored_as_is(cls, *converted):
    """The fields of the compiler's dataclass ``cls`` that its model stores as they are: all
    but ``converted`` (relations, and fields stored in another shape, filled in below)."""
    names = [f.name for f in fields(cls)]
    unknown = set(converted) - set(names)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    return tuple(name for name in names if name not in converted)


HEALTH_CHECK_FIELDS = _stored_as_is(shape.HealthCheck)
MEMBER_FIELDS = _stored_as_is(shape.Member)
POOL_FIELDS = _stored_as_is(shape.Pool, "members", "health_check", "tls_ca")
SERVICE_FIELDS = _stored_as_is(shape.VirtualService, "default_pool", "client_ca", "rate_limit", "certificates", "rules")
RULE_FIELDS = _stored_as_is(shape.Rule, "pool")
HA_GROUP_FIELDS = _stored_as_is(shape.HaGroup, "version", "vips", "track_interfaces", "witness", "nodes")
SYNC_FIELDS = _stored_as_is(shape.IpvsSync, "group", "ha_group")


def _name(obj):
    return obj.name if obj is not None else ""


def member_dict(m):
    return {f: getattr(m, f) for f in MEMBER_FIELDS}


def health_check_dict(check):
    return {f: getattr(check, f) for f in HEALTH_CHECK_FIELDS}


def pool_dict(p, members=None, check=None):
    """``members`` and ``check`` default to the stored ones."""
    data = {f: getattr(p, f) for f in POOL_FIELDS}
    data["tls_ca"] = _name(p.tls_ca)
    if members is None:
        members = sorted(p.members.all(), key=lambda m: m.name) if p.pk else []
    data["members"] = [member_dict(m) for m in members]
    if check is None and p.pk:
        check = getattr(p, "health_check", None)
    if check is not None:
        data["health_check"] = health_check_dict(check)
    return data


def rule_dict(r):
    data = {f: getattr(r, f) for f in RULE_FIELDS}
    data["pool"] = _name(r.pool)
    return data


def service_dict(s, rules=None, sni_certificates=None):
    """``rules`` and ``sni_certificates`` default to the stored ones."""
    data = {f: getattr(s, f) for f in SERVICE_FIELDS}
    data["default_pool"] = _name(s.default_pool)
    data["client_ca"] = _name(s.client_ca)
    data["rate_limit"] = (
        {"requests": s.rate_limit_requests, "period_s": s.rate_limit_period_s} if s.rate_limit_requests else None
    )
    if sni_certificates is None:
        sni_certificates = list(s.sni_certificates.all()) if s.pk else []
    extra = sorted({c.name for c in sni_certificates} - {_name(s.default_certificate)})
    data["certificates"] = ([s.default_certificate.name] if s.default_certificate else []) + extra
    if rules is None:
        rules = sorted(s.rules.all(), key=lambda r: r.position) if s.pk else []
    data["rules"] = [rule_dict(r) for r in rules]
    return data


def sync_dict(sync):
    """The snapshot's ``ipvs_sync`` entry for the stored settings."""
    ha_group = sync.ha_group.name if sync.ha_group_id else ""
    return {**{f: getattr(sync, f) for f in SYNC_FIELDS}, "group": sync.group or "", "ha_group": ha_group}


def node_dict(node):
    return {"name": node.name, "address": node.address or "", "standby": node.standby}


def ha_group_dict(group, nodes=None):
    """``nodes`` (HaGroupNode rows) default to the stored ones."""
    if nodes is None:
        nodes = list(group.nodes.all()) if group.pk else []
    return {
        **{f: getattr(group, f) for f in HA_GROUP_FIELDS},
        "version": group.vrrp_version,
        "vips": list(group.vips),
        "track_interfaces": list(group.track_interfaces),
        "witness": group.witness or "",
        "nodes": [
            {"node": n.node.name, "priority": n.priority, "interface": n.interface}
            for n in sorted(nodes, key=lambda n: n.node.name)
        ],
    }


def _frozen(number, services, pools, certificates):
    """The snapshot dict of these querysets, and every node, HA group and the sync settings.
    ``pools`` as ids: those and the pools the services use (read from the services fetched)."""
    services = list(
        services.select_related("default_pool", "default_certificate", "client_ca")
        .prefetch_related("sni_certificates", Prefetch("rules", Rule.objects.select_related("pool")))
        .order_by("name")
    )
    if not isinstance(pools, QuerySet):
        used = {s.default_pool_id for s in services} | {r.pool_id for s in services for r in s.rules.all()}
        pools = Pool.objects.filter(pk__in=(set(pools) | used) - {None})
    pools = pools.prefetch_related("members").select_related("health_check", "tls_ca").order_by("name")
    groups = HaGroup.objects.prefetch_related(Prefetch("nodes", HaGroupNode.objects.select_related("node")))
    return {
        "revision": number,
        "virtual_services": [service_dict(s) for s in services],
        "pools": [pool_dict(p) for p in pools],
        "certificates": [snapshot_entry(c) for c in certificates.order_by("name")],
        "ipvs_sync": next((sync_dict(s) for s in IpvsSync.objects.filter(enabled=True)), None),
        "nodes": [node_dict(n) for n in Node.objects.order_by("name")],
        "ha_groups": [ha_group_dict(g) for g in groups.order_by("name")],
    }


def freeze(number):
    """The snapshot dict (compiler input) of every stored object."""
    return _frozen(number, VirtualService.objects.all(), Pool.objects.all(), Certificate.objects.all())


WILDCARDS = {4: "0.0.0.0", 6: "::"}


def freeze_around(services=(), pools=(), vips=()):
    """The snapshot dict of what a change to ``services`` and ``pools`` (ids) can break, for
    a write to verify at the cost of what it touches rather than of the whole configuration:

    - those services, and every service that uses one of those pools or of the pools those
      services use (a pool serves one mode);
    - the services on the same addresses as those services or as ``vips`` (the addresses a
      change gives them), and the wildcards of their families: listener clashes;
    - the IPVS services with a port range (their firewall marks must differ);
    - every pool the services above use, the certificates they all name, and the (few)
      nodes, HA groups and sync settings.

    What verify() says of it about these objects is what it says of the whole configuration;
    the full verify runs at apply (revisions.publish)."""
    service_ids, pool_ids, addresses = set(services), set(pools), set(vips)
    for address, pool in VirtualService.objects.filter(pk__in=service_ids).values_list("vip", "default_pool"):
        addresses.add(str(address))
        pool_ids.add(pool)
    pool_ids |= set(
        Rule.objects.filter(virtual_service__in=service_ids, pool__isnull=False).values_list("pool", flat=True)
    )
    pool_ids.discard(None)
    users = Q(default_pool__in=pool_ids) | Q(pk__in=Rule.objects.filter(pool__in=pool_ids).values("virtual_service"))
    ranges = Q(port_end__gt=0) & ~Q(forwarding="proxy")
    service_ids |= set(VirtualService.objects.filter(users | _near(addresses) | ranges).values_list("pk", flat=True))
    frozen = _frozen(0, VirtualService.objects.filter(pk__in=service_ids), pool_ids, Certificate.objects.none())
    return with_certificates(frozen)


def with_certificates(frozen):
    """``frozen`` (a snapshot dict of some services and pools), its certificates the ones they
    name: after a change names another, this gives it too."""
    named = {c for s in frozen["virtual_services"] for c in [*s["certificates"], s["client_ca"]]}
    named |= {p["tls_ca"] for p in frozen["pools"]}
    frozen["certificates"] = [snapshot_entry(c) for c in Certificate.objects.filter(name__in=named).order_by("name")]
    return frozen


def _near(addresses):
    """Where the services whose listeners could clash with one on ``addresses`` are: the same
    addresses, the wildcards of their families, and for a wildcard its whole family."""
    near = Q(pk__in=[])
    for address in addresses:
        try:
            version = ipaddress.ip_address(address).version
        except ValueError:
            continue  # a refused VIP clashes with nothing; its own field says why
        family = Q(vip__contains=":") if version == 6 else ~Q(vip__contains=":")
        unspecified = ipaddress.ip_address(address).is_unspecified
        near |= family if unspecified else Q(vip__in=[address, WILDCARDS[version]])
    return near


def listening_on(addresses):
    """The ids of the services whose listeners could clash with one on ``addresses`` (_near)."""
    return set(VirtualService.objects.filter(_near(addresses)).values_list("pk", flat=True))


_current = {"stamp": None, "at": 0.0, "snapshot": None}


def current():
    """freeze(0) for readers that may be a moment late (a list's advice, the pending changes).

    Reused, in this process, until the snapshot generation moves (snapshots.generation: any
    committed change to what a snapshot holds, however made), and for at most
    settings.FULCRUM_SNAPSHOT_REUSE_S. Freezing 1,000 services takes about a second; a console
    asks every few seconds. Callers must not change the dict. Writes validate against what
    they touch (freeze_around), never this. A publish changes nothing a snapshot holds."""
    # The stamp is read before freezing: a change committed meanwhile gives a newer stamp next time.
    stamp = generation()
    now = time.monotonic()
    if _current["stamp"] != stamp or now - _current["at"] >= settings.FULCRUM_SNAPSHOT_REUSE_S:
        _current.update(stamp=stamp, at=now, snapshot=freeze(0))
    return _current["snapshot"]


def replace(items, old_name, new):
    """``items`` with the entry named ``old_name`` replaced by ``new`` (appended if absent)."""
    out = [item for item in items if item["name"] != old_name]
    index = next((i for i, item in enumerate(items) if item["name"] == old_name), len(out))
    return out[:index] + [new] + out[index:]
