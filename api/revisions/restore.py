"""Restore as a revision operation: snapshots.restore, under the publish lock, for a
backup (``restore``) and for a rollback (``restore_in_transaction`` and
``objects_of_snapshot``, from revisions.rollback). After writing, every node's files are
rendered and checked by the daemons; a refusal changes nothing.
"""

import copy
from dataclasses import dataclass, field

from django.db import DataError, IntegrityError, transaction

from cluster.models import Node
from revisions import backup
from revisions.diff import object_changes
from revisions.publish import PublishError, compile_for_node, publishing, retrying
from snapshots.freeze import freeze
from snapshots.restore import SECTIONS, Plan, RestoreError


@dataclass
class Restored:
    changes: list
    node_tokens: dict = field(default_factory=dict)


def restore(objects, dry_run=False):
    """Make the stored objects equal to ``objects``; with ``dry_run`` only say what would change.

    Returns the object changes (as revisions.diff shows them, without secrets) and the
    agent tokens of nodes it created. Raises RestoreError, changing nothing.
    """

    def attempt():
        with publishing():
            before = comparable(backup.export_objects())
            tokens = restore_in_transaction(objects)
            result = Restored(object_changes(before, comparable(backup.export_objects())), tokens)
            if dry_run:
                transaction.set_rollback(True)
                result.node_tokens = {}
            return result

    return retrying(attempt)


def restore_in_transaction(objects, check_files=True):
    """The restore itself, inside the caller's transaction and publish lock; returns node tokens.

    ``check_files`` renders every node's files and checks them with the daemons (a caller
    that publishes next gets that check from publishing).
    """
    plan = Plan.read(objects)
    try:
        with transaction.atomic():
            tokens = plan.write()
    except (IntegrityError, DataError) as err:  # the checks above should leave the database nothing to refuse
        raise RestoreError([("", f"the database refused the configuration: {err}")]) from err
    if check_files:
        _check_files()
    return tokens


def objects_of_snapshot(snapshot):
    """A revision's snapshot as a document (its certificates are found by fingerprint).

    A rollback never registers a machine again: nodes deleted since the revision are left
    out, so an HA group that still names one is refused with that node's name.
    """
    objects = {k: copy.deepcopy(v) for k, v in snapshot.items() if k in SECTIONS}
    objects.setdefault("ipvs_sync", None)
    stored = set(Node.objects.values_list("name", flat=True))
    objects["nodes"] = [n for n in objects.get("nodes") or [] if n["name"] in stored]
    return objects


def comparable(objects):
    """A backup's objects without certificate content, for showing what changes."""
    out = copy.deepcopy(objects)
    for cert in out.get("certificates", []):
        for key in ("certificate", "chain", "private_key"):
            cert.pop(key, None)
    return out


def _check_files():
    frozen = freeze(0)
    names = list(Node.objects.values_list("name", flat=True)) or ["check"]
    try:
        for name in names:
            compile_for_node(frozen, name)
    except PublishError as err:
        raise RestoreError(err.problems, err.refusal) from err
