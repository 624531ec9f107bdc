"""A refused publish's problems as the API shows them (PublishProblemSerializer).

Each problem's path is split into the object it names and the field inside it, with the
object's id where it exists now, so the console can link to it; a daemon's refusal adds
the daemon, the node and the daemon's own words.
"""

from certificates.models import Certificate
from cluster.models import HaGroup, Node
from compiler import VerifyError, snapshot_from_dict
from compiler.errors import split_path
from compiler.locate import locate_haproxy, locate_keepalived
from revisions.checks import complaints, haproxy_says
from services.models import Pool, VirtualService

_MODELS = {
    "virtual-service": VirtualService,
    "pool": Pool,
    "certificate": Certificate,
    "ha-group": HaGroup,
    "node": Node,
}


def problem_rows(problems, refusal=None):
    """``problems`` ((path, message) pairs), or ``refusal``'s (publish.Refusal), as rows."""
    if refusal is not None:
        entries = [(path, message, refusal.daemon, refusal.node, said) for path, message, said in refusal.entries()]
    else:
        entries = [(path, message, None, None, None) for path, message in problems]
    return _rows(entries)


def _rows(entries):
    rows = []
    for path, message, daemon, node, said in entries:
        kind, name, field = split_path(path)
        row = {"path": path, "message": message, "object": kind, "name": name, "field": field}
        rows.append({**row, "id": None, "daemon": daemon, "node": node, "daemon_message": said})
    _add_ids(rows)
    return rows


def refused_body(detail, problems, refusal=None):
    """The body of a refusal (PublishErrorSerializer)."""
    return {
        "detail": detail,
        "problems": problem_rows(problems, refusal),
        "daemon_output": refusal.output if refusal is not None else None,
    }


def report_problems(node_revision, message):
    """The problems a node's failure report names: the lines of its ``message`` in which
    HAProxy or keepalived named a place in the node's copy of the files, or one of the
    sections they were rendered from, read back to the objects. The rest stays in the
    message, which is kept as the agent sent it."""
    try:
        snap = snapshot_from_dict(node_revision.revision.snapshot)
    except VerifyError:  # an old snapshot this compiler no longer reads: the message says it all
        return []
    node, files = node_revision.node.name, node_revision.files
    said = complaints(haproxy_says(message))
    located = {}
    for daemon, found in (
        ("keepalived", locate_keepalived(snap, node, files, said)),
        ("haproxy", locate_haproxy(snap, files, said)),
    ):
        for complaint in found:
            if complaint.pinned and complaint.path:
                located.setdefault(complaint.said, (daemon, complaint.path))
    entries = [
        (path, f"{daemon} rejected the configuration: {s}", daemon, node, s) for s, (daemon, path) in located.items()
    ]
    return _rows(entries)


def _add_ids(rows):
    """Each row's object id, one query per kind of object named."""
    wanted = {}
    for row in rows:
        if row["object"] in _MODELS:
            wanted.setdefault(row["object"], set()).add(row["name"])
    ids = {
        (kind, name): pk
        for kind, names in wanted.items()
        for name, pk in _MODELS[kind].objects.filter(name__in=names).values_list("name", "pk")
    }
    for row in rows:
        row["id"] = ids.get((row["object"], row["name"]))
