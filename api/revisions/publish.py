"""Apply: freeze the objects, compile them per node, check with the daemons, publish.

A revision is stored only when every node's files compile and pass the daemon's own check,
so a configuration HAProxy would reject never reaches an agent.
"""

import copy
from contextlib import contextmanager

from django.db import OperationalError, connection, transaction
from django.db.models import F, Max

from certificates.models import Certificate
from certificates.pem import ca_pem, haproxy_pem
from cluster.models import Node
from compiler import VerifyError, render_haproxy, render_keepalived, snapshot_from_dict
from compiler.render import CertificateFiles
from revisions.checks import check_haproxy, check_keepalived
from revisions.models import NodeRevision, Revision
from services.models import Member
from services.snapshot import freeze

# Any node name works for the check when no node is registered yet.
_CHECK_NODE = "check"
_PUBLISH_LOCK = 0x46554C43  # "FULC": one publisher at a time


class PublishError(Exception):
    """The revision was not published; ``problems`` is a list of (path, message)."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))


def _pems(snapshot):
    """The stored PEMs of the certificates ``snapshot`` names, matched by fingerprint so an
    old revision never compiles with different bytes than it was built from."""
    wanted = {c["fingerprint"]: c["name"] for c in snapshot.get("certificates", [])}
    return {
        wanted[c.fingerprint]: CertificateFiles(crt=haproxy_pem(c) if c.has_key else "", ca=ca_pem(c))
        for c in Certificate.objects.filter(fingerprint__in=wanted)
    }


def compile_for_node(snapshot, node_name):
    """Render ``snapshot`` for one node and check every file with its daemon."""
    try:
        snap = snapshot_from_dict(snapshot)
        files = render_haproxy(snap, node_name, _pems(snapshot)) | render_keepalived(snap, node_name)
    except VerifyError as err:
        raise PublishError(err.problems) from err
    for daemon, check in (("haproxy", check_haproxy), ("keepalived", check_keepalived)):
        result = check(files)
        if not result.ok:
            path = f"nodes/{node_name}/{daemon}"
            raise PublishError([(path, f"{daemon} rejected the configuration: {result.output}")])
    return {name: content.decode() for name, content in files.items()}


@contextmanager
def _publishing():
    """One publisher at a time, with one consistent view of all objects."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        with connection.cursor() as cursor:
            if outermost:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_PUBLISH_LOCK])
        yield


def publish(author, message):
    """Create, check and publish the next revision; raise PublishError and store nothing on failure."""
    with _publishing():
        number = _last_number() + 1
        return _store(freeze(number), author, message)


# Member fields an operator changes at runtime, without a reload.
RUNTIME_FIELDS = ("weight", "state")


def publish_member_runtime(member, changes, author):
    """Change a live member's weight or state now, as the next revision.

    The revision is the last published snapshot with only this member changed (other
    pending edits stay pending), so node agents see a change HAProxy's runtime API can
    make without a reload. The member's stored row changes in the same transaction.
    """
    unknown = sorted(set(changes) - set(RUNTIME_FIELDS))
    if unknown:
        raise PublishError([(f, "cannot change at runtime") for f in unknown])
    with _publishing():
        last = Revision.objects.order_by("-number").first()
        path = f"pools/{member.pool.name}/members/{member.name}"
        live = _find(last.snapshot if last else {}, member.pool.name, member.name)
        if live is None:
            raise PublishError([(path, "not in the live configuration yet; apply the pending changes first")])
        snapshot = copy.deepcopy(last.snapshot)
        snapshot["revision"] = last.number + 1
        _find(snapshot, member.pool.name, member.name).update(changes)
        words = ", ".join(f"{k} {v}" for k, v in changes.items())
        revision = _store(snapshot, author, f"runtime: {member.pool.name}/{member.name} {words}")
        Member.objects.filter(pk=member.pk).update(**changes, version=F("version") + 1)
        return revision


def publish_node_standby(node, standby, author, attempts=3):
    """Ask ``node`` to give up (or take back) its master roles now, as the next revision.

    Like a runtime member change, the revision is the last published snapshot with only
    this node's ``standby`` changed, so pending edits stay pending. The node's agent puts
    its VRRP instances in FAULT: the VIPs go to the peers at once, whatever preempt says.
    The node's own agent writes its row often (status reports), which a repeatable-read
    publish can collide with: such a collision is retried from the start.
    """
    for attempt in range(attempts):
        try:
            return _publish_node_standby(node, standby, author)
        except OperationalError as err:
            if getattr(err.__cause__, "sqlstate", None) != _SERIALIZATION_FAILURE or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


_SERIALIZATION_FAILURE = "40001"


def _publish_node_standby(node, standby, author):
    with _publishing():
        last = Revision.objects.order_by("-number").first()
        entries = (last.snapshot if last else {}).get("nodes", [])
        if not any(n["name"] == node.name for n in entries):
            raise PublishError([(f"nodes/{node.name}", "not in the live configuration yet; apply first")])
        snapshot = copy.deepcopy(last.snapshot)
        snapshot["revision"] = last.number + 1
        next(n for n in snapshot["nodes"] if n["name"] == node.name)["standby"] = standby
        word = "standby" if standby else "back in service"
        revision = _store(snapshot, author, f"runtime: node {node.name} {word}")
        Node.objects.filter(pk=node.pk).update(standby=standby, version=F("version") + 1)
        return revision


def _find(snapshot, pool_name, member_name):
    pool = next((p for p in snapshot.get("pools", []) if p["name"] == pool_name), None)
    return next((m for m in pool["members"] if m["name"] == member_name), None) if pool else None


def _last_number():
    return Revision.objects.aggregate(last=Max("number"))["last"] or 0


def _store(snapshot, author, message):
    number = snapshot["revision"]
    nodes = list(Node.objects.all())
    bundles = {node.pk: compile_for_node(snapshot, node.name) for node in nodes}
    if not nodes:
        compile_for_node(snapshot, _CHECK_NODE)
    revision = Revision.objects.create(number=number, snapshot=snapshot, author=author, message=message)
    NodeRevision.objects.bulk_create(
        NodeRevision(revision=revision, node=node, files=bundles[node.pk]) for node in nodes
    )
    return revision


def node_revision(revision, node):
    """This node's copy of ``revision``; compiled on first request for nodes added since."""
    existing = NodeRevision.objects.filter(revision=revision, node=node).first()
    if existing:
        return existing
    files = compile_for_node(revision.snapshot, node.name)
    return NodeRevision.objects.get_or_create(revision=revision, node=node, defaults={"files": files})[0]
