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
from fulcrum.collector import collector_paused
from services.models import HealthCheck, Member, Pool, Rule, VirtualService
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


# What a values() row of each model holds for its translation below: the fields stored as
# they are, and the relations' names and other stored shapes the translation converts (a
# member's and a health check's rows are their *_FIELDS).
POOL_VALUES = (*POOL_FIELDS, "tls_ca__name")
RULE_VALUES = (*RULE_FIELDS, "pool__name")
SERVICE_VALUES = (
    *SERVICE_FIELDS, "default_pool__name", "default_certificate__name", "client_ca__name", "rate_limit_requests",
    "rate_limit_period_s",
)  # fmt: skip


class _Stored:
    """A model instance read as a values() row: ``field``, or ``relation__field`` (None when
    the relation is empty). One translation then serves a whole revision, read as rows, and
    a single write's objects, some not saved yet."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __getitem__(self, key):
        name, _, field = key.partition("__")
        value = getattr(self.obj, name)
        return (getattr(value, field) if value is not None else None) if field else value


def _member(row):
    return {f: row[f] for f in MEMBER_FIELDS}


def _health_check(row):
    return {f: row[f] for f in HEALTH_CHECK_FIELDS}


def _pool(row, members, check):
    """``members`` in the snapshot's order; ``check`` None for a pool without one."""
    data = {f: row[f] for f in POOL_FIELDS}
    data["tls_ca"] = row["tls_ca__name"] or ""
    data["members"] = [_member(m) for m in members]
    if check is not None:
        data["health_check"] = _health_check(check)
    return data


def _rule(row):
    data = {f: row[f] for f in RULE_FIELDS}
    data["pool"] = row["pool__name"] or ""
    return data


def _service(row, rules, sni_names):
    """``rules`` as snapshot dicts, in order; ``sni_names``: its SNI certificates' names."""
    data = {f: row[f] for f in SERVICE_FIELDS}
    data["default_pool"] = row["default_pool__name"] or ""
    data["client_ca"] = row["client_ca__name"] or ""
    requests = row["rate_limit_requests"]
    data["rate_limit"] = {"requests": requests, "period_s": row["rate_limit_period_s"]} if requests else None
    default = row["default_certificate__name"]
    data["certificates"] = ([default] if default else []) + sorted(set(sni_names) - {default or ""})
    data["rules"] = rules
    return data


def member_dict(m):
    return _member(_Stored(m))


def health_check_dict(check):
    return _health_check(_Stored(check))


def pool_dict(p, members=None, check=None):
    """``members`` and ``check`` default to the stored ones."""
    if members is None:
        members = sorted(p.members.all(), key=lambda m: m.name) if p.pk else []
    if check is None and p.pk:
        check = getattr(p, "health_check", None)
    return _pool(_Stored(p), [_Stored(m) for m in members], _Stored(check) if check is not None else None)


def rule_dict(r):
    return _rule(_Stored(r))


def service_dict(s, rules=None, sni_certificates=None):
    """``rules`` and ``sni_certificates`` default to the stored ones."""
    if sni_certificates is None:
        sni_certificates = list(s.sni_certificates.all()) if s.pk else []
    if rules is None:
        rules = sorted(s.rules.all(), key=lambda r: r.position) if s.pk else []
    return _service(_Stored(s), [rule_dict(r) for r in rules], [c.name for c in sni_certificates])


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
    ``pools`` as ids: those and the pools the services use (read from the services fetched).

    Services, pools and their children are read as values() rows, a query per model: a
    revision of 10,000 services has 230,000 of them, which model instances would triple."""
    service_rows = list(services.order_by("name").values("pk", "default_pool", *SERVICE_VALUES))
    rules = _by(Rule.objects.filter(virtual_service__in=services).order_by("position"), "virtual_service",
                "pool", *RULE_VALUES)  # fmt: skip
    sni = _by(VirtualService.sni_certificates.through.objects.filter(virtualservice__in=services).order_by(),
              "virtualservice", "certificate__name")  # fmt: skip
    if not isinstance(pools, QuerySet):
        used = {s["default_pool"] for s in service_rows} | {r["pool"] for rs in rules.values() for r in rs}
        pools = Pool.objects.filter(pk__in=(set(pools) | used) - {None})
    members = _by(Member.objects.filter(pool__in=pools).order_by(), "pool", *MEMBER_FIELDS)
    checks = HealthCheck.objects.filter(pool__in=pools).order_by().values("pool", *HEALTH_CHECK_FIELDS)
    checks = {row["pool"]: row for row in checks}

    def service(row):
        rows, names = rules.get(row["pk"], ()), [c["certificate__name"] for c in sni.get(row["pk"], ())]
        return _service(row, [_rule(r) for r in rows], names)

    groups = HaGroup.objects.prefetch_related(Prefetch("nodes", HaGroupNode.objects.select_related("node")))
    return {
        "revision": number,
        "virtual_services": [service(row) for row in service_rows],
        "pools": [
            _pool(p, sorted(members.get(p["pk"], ()), key=lambda m: m["name"]), checks.get(p["pk"]))
            for p in pools.order_by("name").values("pk", *POOL_VALUES)
        ],
        "certificates": [snapshot_entry(c) for c in certificates.order_by("name")],
        "ipvs_sync": next((sync_dict(s) for s in IpvsSync.objects.filter(enabled=True)), None),
        "nodes": [node_dict(n) for n in Node.objects.order_by("name")],
        "ha_groups": [ha_group_dict(g) for g in groups.order_by("name")],
    }


def _by(queryset, parent, *names):
    """{parent id: [values() rows of ``names``]} of ``queryset``, in its order."""
    grouped = {}
    for row in queryset.values(parent, *names):
        grouped.setdefault(row[parent], []).append(row)
    return grouped


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
        with collector_paused():
            _current.update(stamp=stamp, at=now, snapshot=freeze(0))
    return _current["snapshot"]


def replace(items, old_name, new):
    """``items`` with the entry named ``old_name`` replaced by ``new`` (appended if absent)."""
    out = [item for item in items if item["name"] != old_name]
    index = next((i for i, item in enumerate(items) if item["name"] == old_name), len(out))
    return out[:index] + [new] + out[index:]
