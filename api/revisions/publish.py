"""Apply: freeze the objects, compile them per node, check with the daemons, publish.

A revision is stored only when every node's files compile and pass the daemon's own check,
so a configuration HAProxy would reject never reaches an agent.
"""

from django.db import connection, transaction
from django.db.models import Max

from cluster.models import Node
from compiler import VerifyError, render_haproxy, snapshot_from_dict
from revisions.checks import check_haproxy
from revisions.models import NodeRevision, Revision
from services.models import Pool, VirtualService

# Any node name works for the check when no node is registered yet.
_CHECK_NODE = "check"
_PUBLISH_LOCK = 0x46554C43  # "FULC": one publisher at a time


class PublishError(Exception):
    """The revision was not published; ``problems`` is a list of (path, message)."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))


def freeze(number):
    """The snapshot dict (compiler input) of the current objects."""
    pools = Pool.objects.prefetch_related("members").select_related("health_check").order_by("name")
    services = VirtualService.objects.select_related("default_pool").order_by("name")
    return {
        "revision": number,
        "virtual_services": [_service(s) for s in services],
        "pools": [_pool(p) for p in pools],
    }


def _service(s):
    return {
        "name": s.name,
        "vip": s.vip,
        "port": s.port,
        "protocol": s.protocol,
        "enabled": s.enabled,
        "default_pool": s.default_pool.name,
    }


def _pool(p):
    data = {
        "name": p.name,
        "algorithm": p.algorithm,
        "members": [
            {"name": m.name, "address": m.address, "port": m.port, "weight": m.weight, "state": m.state}
            for m in sorted(p.members.all(), key=lambda m: m.name)
        ],
    }
    check = getattr(p, "health_check", None)
    if check is not None:
        data["health_check"] = {
            f: getattr(check, f)
            for f in ("type", "path", "expected_status", "host", "interval_ms", "timeout_ms", "rise", "fall")
        }
    return data


def compile_for_node(snapshot, node_name):
    """Render ``snapshot`` for one node and check every file with its daemon."""
    try:
        files = render_haproxy(snapshot_from_dict(snapshot), node_name)
    except VerifyError as err:
        raise PublishError(err.problems) from err
    result = check_haproxy(files)
    if not result.ok:
        raise PublishError([(f"nodes/{node_name}/haproxy.cfg", f"haproxy rejected the configuration: {result.output}")])
    return {name: content.decode() for name, content in files.items()}


def publish(author, message):
    """Create, check and publish the next revision; raise PublishError and store nothing on failure."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        with connection.cursor() as cursor:
            if outermost:  # one consistent view of all objects while freezing them
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_PUBLISH_LOCK])
        return _publish_locked(author, message)


def _publish_locked(author, message):
    number = (Revision.objects.aggregate(last=Max("number"))["last"] or 0) + 1
    snapshot = freeze(number)
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
