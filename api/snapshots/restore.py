"""Restoring: making the stored objects equal to a configuration document, the way back
from freezing (snapshots.freeze). revisions.restore runs it under the publish lock for a
rollback, the automatic rollback of an unconfirmed revision and a backup restore.

A document has the sections of a snapshot (``certificates``, ``pools``,
``virtual_services``, ``nodes``, ``ha_groups``, ``ipvs_sync``); a backup's entries also
carry what a snapshot leaves out (see revisions.backup).

- Objects are matched by name (certificates by fingerprint: their content never changes),
  so objects that stay keep their ids, and their ``version`` rises only when they change.
  What the document lists is created or updated, what it does not list is deleted.
- A field a snapshot does not hold (a description) is kept when the document leaves it
  out; a field the document leaves out that a snapshot holds takes its default, as the
  compiler read it.
- Nodes are machines, not configuration: nodes the document names get its address; one
  that does not exist is created with a new agent token (returned once); others stay.
- The whole document is checked before anything is written (Plan.read): its shape and
  every rule by the compiler's own ``verify`` (the rules the API applies to single
  objects), then each field by the models' validators. Problems name their path
  (``pools/web/members/s1/port``). Plan.write writes it all; the caller's transaction
  makes that all or nothing.
"""

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import models

from certificates.models import Certificate
from certificates.validators import validate_content, validate_pem_size
from cluster.models import HaGroup, HaGroupNode, IpvsSync, Node
from compiler import VerifyError, snapshot_from_dict, verify
from compiler.snapshot import SECTIONS as LABELS
from services.models import HealthCheck, Member, Pool, Rule, VirtualService
from snapshots import freeze as shapes

# The document's sections: a snapshot's, with IPVS sync settings kept while sync is off.
SECTIONS = ("certificates", "pools", "virtual_services", "nodes", "ha_groups", "ipvs_sync")

PEM_KEYS = ("certificate", "chain", "private_key")
CERTIFICATE_KEYS = {"name", "fingerprint", "has_key", "description", *PEM_KEYS}
NODE_KEYS = {"name", "address", "standby"}  # standby is the operator's runtime choice: never restored
DESCRIPTION_MAX = 200
# Unique values are parked out of range while objects swap them (a member's endpoint,
# a service's listener, a group's VRID), so every step keeps the constraints.
PARK_PORT = 100_000
PARK_VRID = 1_000


class RestoreError(Exception):
    """Nothing was restored; ``problems`` is a list of (path, message), and ``refusal`` the
    daemon's refusal they come from, when a daemon refused the files (publish.Refusal)."""

    def __init__(self, problems, refusal=None):
        self.problems = list(problems)
        self.refusal = refusal
        super().__init__("; ".join(f"{p}: {m}" for p, m in self.problems))


def _gone(name, fingerprint):
    return (
        f"certificate {name} (fingerprint {fingerprint}) is no longer stored, so it cannot be restored: "
        "upload it again, or restore a backup that holds it"
    )


class Plan:
    """A document read and checked: what each section's objects must become."""

    def __init__(self, sections, certificates, sync_enabled):
        self.sections = sections
        self.certificates = certificates  # name -> _CertificateEntry
        self.sync_enabled = sync_enabled

    @classmethod
    def read(cls, objects):
        if not isinstance(objects, dict):
            raise RestoreError([("objects", "expected an object")])
        unknown = sorted(set(objects) - set(SECTIONS))
        problems = [(name, "unknown section") for name in unknown]
        sections = {key: _entries(objects, key, problems) for key in LABELS}
        sync = objects.get("ipvs_sync")
        if sync is not None and not isinstance(sync, dict):
            problems.append(("ipvs-sync", "expected an object or null"))
            sync = None
        sync = dict(sync) if sync is not None else None
        enabled = sync.pop("enabled", True) if sync is not None else False
        if not isinstance(enabled, bool):
            problems.append(("ipvs-sync/enabled", "expected true or false"))
        sections["ipvs_sync"] = sync
        certificates = {c["name"]: _CertificateEntry.read(c, problems) for c in sections["certificates"]}
        for section, label in (("pools", "pools"), ("virtual_services", "virtual-services")):
            for entry in sections[section]:
                _description(entry, f"{label}/{entry['name']}", problems)
        for entry in sections["nodes"]:
            unknown = sorted(set(entry) - NODE_KEYS)
            problems += [(f"nodes/{entry['name']}/{key}", "unknown field") for key in unknown]
        group = (sync or {}).get("ha_group")
        if isinstance(group, str) and group and group not in {g["name"] for g in sections["ha_groups"]}:
            problems.append(("ipvs-sync/ha_group", f"no HA group named {group!r}"))
        if problems:
            raise RestoreError(problems)
        plan = cls(sections, certificates, enabled)
        problems = plan.verify()
        if problems:
            raise RestoreError(problems)
        return plan

    def snapshot(self):
        """The compiler's snapshot of the document: what the objects will compile to."""
        s = self.sections
        drop = ("description",)
        nodes = {n.name: {"name": n.name, "address": n.address or "", "standby": n.standby} for n in Node.objects.all()}
        for entry in s["nodes"]:
            current = nodes.get(entry["name"], {"address": "", "standby": False})
            address = (entry["address"] or "") if "address" in entry else current["address"]
            nodes[entry["name"]] = {"name": entry["name"], "address": address, "standby": current["standby"]}
        sync = s["ipvs_sync"] if self.sync_enabled else None
        return {
            "revision": 0,
            "virtual_services": [{k: v for k, v in e.items() if k not in drop} for e in s["virtual_services"]],
            "pools": [{k: v for k, v in e.items() if k not in drop} for e in s["pools"]],
            "certificates": [c.snapshot_entry() for c in self.certificates.values()],
            "ipvs_sync": sync,
            "nodes": [nodes[name] for name in sorted(nodes)],
            "ha_groups": s["ha_groups"],
        }

    def verify(self):
        """Problems with the document: its shapes first, then every rule the compiler applies
        (the API's own rules, object by object) and every model field validator."""
        try:
            snap = snapshot_from_dict(self.snapshot())
            if self.sections["ipvs_sync"] is not None and not self.sync_enabled:
                sync = {"revision": 0, "virtual_services": [], "pools": [], "ipvs_sync": self.sections["ipvs_sync"]}
                snapshot_from_dict(sync)  # kept while off: still the right shape
        except VerifyError as err:
            # The compiler names the singleton by its snapshot key in shape errors.
            return [(re.sub(r"^/ipvs_sync\b", "ipvs-sync", p), m) for p, m in err.problems]
        try:
            verify(snap)
            problems = []
        except VerifyError as err:
            problems = err.problems
        # The compiler's message where both see a field: it names the rule.
        seen = {path for path, _ in problems}
        return problems + [(path, message) for path, message in self.clean() if path not in seen]

    def clean(self):
        """Problems each field's model validators find (lengths and ranges the compiler does not own)."""
        problems = []
        for entry in self.sections["certificates"]:
            values = {"name": entry["name"], "description": entry.get("description") or ""}
            problems += _clean(Certificate, values, f"certificates/{entry['name']}")
        for entry in self.sections["pools"]:
            path = f"pools/{entry['name']}"
            problems += _clean(Pool, _pool_values(entry, None), path)
            for member in entry.get("members", []):
                problems += _clean(
                    Member, _values(member, shapes.MEMBER_FIELDS, Member), f"{path}/members/{member['name']}"
                )
            if entry.get("health_check") is not None:
                problems += _clean(HealthCheck, _check_values(entry["health_check"]), f"{path}/health_check")
        for entry in self.sections["virtual_services"]:
            path = f"virtual-services/{entry['name']}"
            problems += _clean(VirtualService, _service_values(entry, None), path)
            for position, rule in enumerate(entry.get("rules", [])):
                problems += _clean(Rule, _rule_values(rule, position), f"{path}/rules/{rule['name']}")
        for entry in self.sections["ha_groups"]:
            problems += _clean(HaGroup, _group_values(entry), f"ha-groups/{entry['name']}")
        for entry in self.sections["nodes"]:
            problems += _clean(Node, {"address": entry.get("address") or None}, f"nodes/{entry['name']}")
        if self.sections["ipvs_sync"] is not None:
            problems += _clean(IpvsSync, _sync_values(self.sections["ipvs_sync"], True), "ipvs-sync")
        return problems

    def write(self):
        """Create, update and delete in dependency order; returns the new nodes' tokens."""
        s = self.sections
        certificates = _write_certificates(self.certificates)
        pools = _write_pools(s["pools"], certificates)
        _write_services(s["virtual_services"], pools, certificates)
        Pool.objects.exclude(name__in=pools).delete()
        nodes, tokens = _write_nodes(s["nodes"])
        groups = _write_groups(s["ha_groups"], nodes)
        _write_sync(s["ipvs_sync"], self.sync_enabled, groups)
        HaGroup.objects.exclude(name__in=groups).delete()
        Certificate.objects.exclude(pk__in=[c.pk for c in certificates.values()]).delete()
        return tokens


def _entries(objects, key, problems):
    """A section's entries: a list of objects with unique string names."""
    label, entries = LABELS[key], objects.get(key)
    if entries is None:
        return []
    if not isinstance(entries, list):
        problems.append((label, "expected a list"))
        return []
    good, seen = [], set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            problems.append((f"{label}/{index}", "expected an object with a name"))
        elif entry["name"] in seen:
            problems.append((f"{label}/{entry['name']}", "named twice"))
        else:
            seen.add(entry["name"])
            good.append(entry)
    return good


def _description(entry, path, problems):
    value = entry.get("description")
    if value is not None and (not isinstance(value, str) or len(value) > DESCRIPTION_MAX):
        problems.append((f"{path}/description", f"expected text of at most {DESCRIPTION_MAX} characters"))


@dataclass
class _CertificateEntry:
    """A certificate the document names: by content (a backup) or by fingerprint (a snapshot)."""

    name: str
    fingerprint: str
    has_key: bool
    description: str | None = None
    content: dict | None = None  # canonical certificate, chain, private_key

    @classmethod
    def read(cls, entry, problems):
        path = f"certificates/{entry['name']}"
        problems += [(f"{path}/{key}", "unknown field") for key in sorted(set(entry) - CERTIFICATE_KEYS)]
        _description(entry, path, problems)
        if "certificate" in entry:
            return cls._from_content(entry, path, problems)
        fingerprint = entry.get("fingerprint")
        stored = Certificate.objects.filter(fingerprint=fingerprint).first() if isinstance(fingerprint, str) else None
        if stored is None:
            problems.append((path, _gone(entry["name"], entry.get("fingerprint"))))
            return None
        return cls(entry["name"], stored.fingerprint, stored.has_key, entry.get("description"))

    @classmethod
    def _from_content(cls, entry, path, problems):
        """The upload's own checks (certificates.validators), without the validity dates."""
        texts = {key: entry.get(key, "") for key in PEM_KEYS}
        before = len(problems)
        for key, text in texts.items():
            if not isinstance(text, str):
                problems.append((f"{path}/{key}", "expected PEM text"))
                continue
            try:
                validate_pem_size(text)
            except ValidationError as err:
                problems.append((f"{path}/{key}", err.messages[0]))
        if len(problems) > before:
            return None
        try:
            content = validate_content(texts["certificate"], texts["chain"], texts["private_key"], "", now=None)
        except ValidationError as err:
            problems += [(f"{path}/{field}", m) for field, messages in err.message_dict.items() for m in messages]
            return None
        if entry.get("fingerprint", content.fingerprint) != content.fingerprint:
            problems.append((f"{path}/fingerprint", f"is not the certificate's: {content.fingerprint}"))
            return None
        pems = {key: getattr(content, key) for key in PEM_KEYS}
        return cls(entry["name"], content.fingerprint, bool(content.private_key), entry.get("description"), pems)

    def snapshot_entry(self):
        return {"name": self.name, "fingerprint": self.fingerprint, "has_key": self.has_key}


# Model fields whose snapshot name differs, for problem paths.
_SNAPSHOT_NAMES = {
    "vrrp_version": "version",
    "rate_limit_requests": "rate_limit/requests",
    "rate_limit_period_s": "rate_limit/period_s",
}


def _clean(model, values, path):
    """Problems the model's own field validators find in ``values`` (relations and JSON
    columns are the compiler's: their shapes and meaning were verified already)."""
    instance = model(**values)
    skip = [
        f.name for f in model._meta.fields if f.name not in values or f.is_relation or isinstance(f, models.JSONField)
    ]
    try:
        instance.full_clean(exclude=skip, validate_unique=False, validate_constraints=False)
    except ValidationError as err:
        return [(f"{path}/{_SNAPSHOT_NAMES.get(f, f)}", m) for f, ms in err.message_dict.items() for m in ms]
    return []


def _values(entry, names, model):
    """``entry``'s value of each field, or the model's default where the entry has none."""
    return {name: entry[name] if name in entry else model._meta.get_field(name).get_default() for name in names}


def _pool_values(entry, pool):
    values = _values(entry, list(shapes.POOL_FIELDS), Pool)
    if "description" in entry or pool is None or pool.pk is None:
        values["description"] = entry.get("description", "")
    return values


def _check_values(entry):
    return _values(entry, shapes.HEALTH_CHECK_FIELDS, HealthCheck)


def _service_values(entry, service):
    values = _values(entry, shapes.SERVICE_FIELDS, VirtualService)
    limit = entry.get("rate_limit")
    if limit:
        values["rate_limit_requests"] = limit["requests"]
        values["rate_limit_period_s"] = limit.get("period_s", 10)
    else:
        values["rate_limit_requests"] = 0  # the period of a limit that is off is kept
    if "description" in entry or service is None or service.pk is None:
        values["description"] = entry.get("description", "")
    return values


def _rule_values(entry, position):
    return {**_values(entry, shapes.RULE_FIELDS, Rule), "position": position}


def _group_values(entry):
    fields = list(shapes.HA_GROUP_FIELDS) + ["vips", "track_interfaces"]
    values = _values(entry, fields, HaGroup)
    values["vrrp_version"] = entry.get("version", 3)
    values["witness"] = entry.get("witness") or None
    return values


def _sync_values(entry, enabled):
    values = {"enabled": enabled}
    if entry is not None:
        fields = (*shapes.SYNC_FIELDS, "group")
        values.update({f: entry.get(f, IpvsSync._meta.get_field(f).get_default()) for f in fields})
        values["group"] = entry.get("group") or None
    return values


def _assign(instance, values):
    """Set ``values`` on ``instance``; True when one differs from what it held."""
    changed = False
    for name, value in values.items():
        model_field = instance._meta.get_field(name)
        if model_field.is_relation:
            current, new = getattr(instance, model_field.attname), value.pk if value is not None else None
        else:
            current, new = getattr(instance, name), value
        if current != new:
            setattr(instance, name, value)
            changed = True
    return changed


def _save(instance, changed):
    """Create ``instance``, or store its change with its version raised."""
    if instance.pk is None:
        instance.save()
    elif changed:
        instance.version += 1
        instance.save()


def _upsert(instance, values):
    _save(instance, _assign(instance, values))
    return instance


def _write_certificates(entries):
    """Certificates by fingerprint (content never changes), renamed where the document says."""
    stored = {c.fingerprint: c for c in Certificate.objects.all()}
    by_fingerprint = {e.fingerprint: e for e in entries.values()}
    for cert in stored.values():
        target = by_fingerprint.get(cert.fingerprint)
        if (target is None and cert.name in entries) or (target is not None and target.name != cert.name):
            cert.name = f"~{cert.pk}"  # names are unique: park it until its own name is free
            Certificate.objects.filter(pk=cert.pk).update(name=cert.name)
    kept = {}
    for entry in entries.values():
        cert = stored.get(entry.fingerprint)
        if cert is None:
            cert = Certificate(name=entry.name, description=entry.description or "", **entry.content)
            cert.save()
        else:
            values = {"name": entry.name}
            if entry.description is not None:
                values["description"] = entry.description
            _upsert(cert, values)
        kept[entry.name] = cert
    return kept


def _write_pools(entries, certificates):
    stored = {p.name: p for p in Pool.objects.all()}
    pools = {}
    for entry in entries:
        pool = stored.get(entry["name"]) or Pool()
        values = _pool_values(entry, pool)
        values["tls_ca"] = certificates.get(entry.get("tls_ca") or "")
        _upsert(pool, values)
        _write_members(pool, entry.get("members", []))
        _write_check(pool, entry.get("health_check"))
        pools[pool.name] = pool
    return pools


def _write_members(pool, entries):
    names = {e["name"] for e in entries}
    Member.objects.filter(pool=pool).exclude(name__in=names).delete()
    stored = {m.name: m for m in Member.objects.filter(pool=pool)}
    wanted = {e["name"]: _values(e, shapes.MEMBER_FIELDS, Member) for e in entries}
    moving = [m for m in stored.values() if (m.address, m.port) != (wanted[m.name]["address"], wanted[m.name]["port"])]
    _park(moving, "port", PARK_PORT)
    for name, values in wanted.items():
        _upsert(stored.get(name) or Member(pool=pool), values)


def _write_check(pool, entry):
    current = HealthCheck.objects.filter(pool=pool).first()
    if entry is None:
        if current is not None:
            current.delete()
        return
    _upsert(current or HealthCheck(pool=pool), _check_values(entry))


def _park(instances, field_name, base):
    for index, instance in enumerate(instances):
        setattr(instance, field_name, base + index)
        type(instance).objects.filter(pk=instance.pk).update(**{field_name: base + index})


def _write_services(entries, pools, certificates):
    wanted = {e["name"]: e for e in entries}
    VirtualService.objects.exclude(name__in=wanted).delete()
    stored = {s.name: s for s in VirtualService.objects.prefetch_related("sni_certificates")}
    moving = [s for s in stored.values() if _listener(s.__dict__) != _listener(_service_values(wanted[s.name], s))]
    _park(moving, "port", PARK_PORT)
    for name, entry in wanted.items():
        service = stored.get(name) or VirtualService()
        names = entry.get("certificates", [])
        values = _service_values(entry, service)
        values["default_pool"] = pools[entry["default_pool"]]
        values["default_certificate"] = certificates[names[0]] if names else None
        values["client_ca"] = certificates.get(entry.get("client_ca") or "")
        changed = _assign(service, values)
        sni = {certificates[n].pk for n in names[1:]}
        current = (
            {c.pk for c in service.sni_certificates.all()} - {service.default_certificate_id} if service.pk else set()
        )
        _save(service, changed or sni != current)
        if sni != current:
            service.sni_certificates.set(sni)
        _write_rules(service, entry.get("rules", []), pools)


def _listener(values):
    return tuple(values.get(f) for f in ("vip", "port", "port_end", "protocol"))


def _write_rules(service, entries, pools):
    names = {e["name"] for e in entries}
    Rule.objects.filter(virtual_service=service).exclude(name__in=names).delete()
    stored = {r.name: r for r in Rule.objects.filter(virtual_service=service)}
    for position, entry in enumerate(entries):
        values = _rule_values(entry, position)
        values["pool"] = pools.get(entry.get("pool") or "")
        _upsert(stored.get(entry["name"]) or Rule(virtual_service=service), values)


def _write_nodes(entries):
    stored = {n.name: n for n in Node.objects.all()}
    tokens = {}
    for entry in entries:
        node = stored.get(entry["name"])
        address = entry.get("address") or None
        if node is None:
            node = Node(name=entry["name"], address=address)
            tokens[node.name] = node.rotate_token()
            node.save()
            stored[node.name] = node
        elif "address" in entry:
            _upsert(node, {"address": address})
    return stored, tokens


def _write_groups(entries, nodes):
    wanted = {e["name"]: e for e in entries}
    stored = {g.name: g for g in HaGroup.objects.prefetch_related("nodes__node")}
    _park(
        [g for g in stored.values() if g.name not in wanted or wanted[g.name].get("vrid") != g.vrid], "vrid", PARK_VRID
    )
    groups = {}
    for name, entry in wanted.items():
        group = stored.get(name) or HaGroup()
        rows = sorted((n["node"], n["priority"], n.get("interface", "")) for n in entry.get("nodes", []))
        current = sorted((r.node.name, r.priority, r.interface) for r in group.nodes.all()) if group.pk else []
        _save(group, _assign(group, _group_values(entry)) or rows != current)
        if rows != current:
            group.nodes.all().delete()
            HaGroupNode.objects.bulk_create(
                HaGroupNode(group=group, node=nodes[n], priority=p, interface=i) for n, p, i in rows
            )
        groups[name] = group
    return groups


def _write_sync(entry, enabled, groups):
    sync = IpvsSync.load()
    values = _sync_values(entry, enabled)
    if entry is not None:
        values["ha_group"] = groups.get(entry.get("ha_group") or "")
    elif sync.ha_group_id not in {g.pk for g in groups.values()}:
        values["ha_group"] = None  # its group goes; the other settings are kept while sync is off
    _upsert(sync, values)
