"""A refused publish's problems as the API shows them (PublishProblemSerializer).

Each problem's path is split into the object it names and the field inside it, with the
object's id where it exists now, so the console can link to it; a daemon's refusal adds
the daemon, the node and the daemon's own words.
"""

from certificates.models import Certificate
from cluster.models import HaGroup, Node
from compiler.errors import split_path
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
