"""Backup: the whole configuration as one versioned JSON document, and reading one back.

The document is a revision snapshot's shape plus what a snapshot leaves out: certificate
PEMs with their private keys, descriptions, IPVS sync settings while sync is off, and
node addresses. It holds no time and no revision number, lists are sorted by name (a
service's rules in their order) and keys are sorted, so exporting, restoring the export
and exporting again gives the same bytes. It holds private keys: only admins read it.

    {"format": "fulcrum-backup", "format_version": 1,
     "objects": {"certificates": [...], "pools": [...], "virtual_services": [...],
                 "nodes": [...], "ha_groups": [...], "ipvs_sync": {...}}}
"""

import json

from certificates.models import Certificate
from certificates.pem import snapshot_entry
from cluster.models import HaGroup, IpvsSync, Node
from services.models import Pool, VirtualService
from snapshots.freeze import ha_group_dict, pool_dict, service_dict, sync_dict

FORMAT = "fulcrum-backup"
FORMAT_VERSION = 1


class DocumentError(Exception):
    """Not a backup this appliance reads; ``problems`` is a list of (path, message)."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))


def certificate_entry(cert):
    """A certificate as a backup holds it: the snapshot's entry plus its content."""
    return {
        **snapshot_entry(cert),
        "description": cert.description,
        "certificate": cert.certificate,
        "chain": cert.chain,
        "private_key": cert.private_key,
    }


def sync_entry(sync):
    """The IPVS sync settings, kept whether or not sync is on."""
    return {"enabled": sync.enabled, **sync_dict(sync)}


def export_objects():
    """Every object of the configuration, in backup form (with secrets)."""
    pools = Pool.objects.prefetch_related("members").select_related("health_check", "tls_ca").order_by("name")
    services = (
        VirtualService.objects.select_related("default_pool", "default_certificate", "client_ca")
        .prefetch_related("sni_certificates", "rules__pool")
        .order_by("name")
    )
    return {
        "certificates": [certificate_entry(c) for c in Certificate.objects.order_by("name")],
        "pools": [{**pool_dict(p), "description": p.description} for p in pools],
        "virtual_services": [{**service_dict(s), "description": s.description} for s in services],
        "nodes": [{"name": n.name, "address": n.address or ""} for n in Node.objects.order_by("name")],
        "ha_groups": [ha_group_dict(g) for g in HaGroup.objects.prefetch_related("nodes__node").order_by("name")],
        "ipvs_sync": sync_entry(IpvsSync.objects.filter(pk=1).first() or IpvsSync()),  # read, never created
    }


def export_document():
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "objects": export_objects()}


def render(document):
    """The document's bytes: sorted keys, two-space indent, one final newline."""
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def read_document(document):
    """The ``objects`` of a backup document; DocumentError unless its format is one we read
    (its sections are the restore's to check, as for a revision's snapshot)."""
    if not isinstance(document, dict):
        raise DocumentError([("document", "a backup is a JSON object")])
    problems = []
    if document.get("format") != FORMAT:
        problems.append(("format", f"not a Fulcrum backup: expected {FORMAT!r}, got {document.get('format')!r}"))
    elif document.get("format_version") != FORMAT_VERSION:
        version = document.get("format_version")
        problems.append(("format_version", f"version {version!r} is not one this appliance reads ({FORMAT_VERSION})"))
    unknown = sorted(set(document) - {"format", "format_version", "objects"})
    problems += [(name, "unknown field") for name in unknown]
    objects = document.get("objects")
    if not isinstance(objects, dict):
        problems.append(("objects", "missing, or not an object"))
    if problems:
        raise DocumentError(problems)
    return objects
