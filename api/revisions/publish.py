"""Apply: freeze the objects, compile them per node, check with the daemons, publish.

A revision is stored only when every node's files compile and pass the daemon's own check,
so a configuration HAProxy would reject never reaches an agent.
"""

import copy
import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.db import DatabaseError, OperationalError, connection, transaction
from django.db.models import F, Max
from django.utils import timezone

from certificates.models import Certificate
from certificates.pem import ca_pem, haproxy_pem
from cluster.models import Node
from compiler import VerifyError, render_firewall, render_haproxy_nodes, render_keepalived, snapshot_from_dict, verify
from compiler.locate import Complaint, locate_haproxy, locate_keepalived
from compiler.render import CertificateFiles
from fulcrum.collector import collector_paused
from revisions.checks import check_haproxy, check_keepalived, check_nftables, complaints
from revisions.choices import ConfirmState
from revisions.diff import fingerprint, object_changes
from revisions.models import NodeRevision, Revision
from services.models import Member
from snapshots.freeze import current, freeze

# Any node name works for the check when no node is registered yet.
_CHECK_NODE = "check"
_PUBLISH_LOCK = 0x46554C43  # "FULC": one publisher at a time
_SERIALIZATION_FAILURE = "40001"


class PublishError(Exception):
    """The revision was not published; ``problems`` is a list of (path, message), and
    ``refusal`` the daemon's refusal they come from, when a daemon refused the files."""

    def __init__(self, problems, refusal=None):
        self.problems = problems
        self.refusal = refusal
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))


@dataclass(frozen=True)
class Refusal:
    """A daemon refused a node's files: all it said, and each complaint read back to the
    object and field it concerns (compiler.locate)."""

    daemon: str
    node: str
    output: str
    complaints: tuple[Complaint, ...]

    def entries(self):
        """(path, message, the daemon's words) per complaint. One that names none of the
        operator's objects is the node's: nodes/<node>/<daemon>."""
        node_path = f"nodes/{self.node}/{self.daemon}"
        said = self.complaints or (Complaint(self.output),)
        return [(c.path or node_path, f"{self.daemon} rejected the configuration: {c.said}", c.said) for c in said]

    def problems(self):
        return [(path, message) for path, message, _ in self.entries()]


def refusal(daemon, node, snap, files, output):
    """``daemon``'s refusal of ``node``'s ``files``, rendered from ``snap``, with its ``output``."""
    said = complaints(output)
    if daemon == "haproxy":
        located = locate_haproxy(snap, files, said)
    elif daemon == "keepalived":
        located = locate_keepalived(snap, node, files, said)
    else:
        located = []
    return Refusal(daemon, node, output, tuple(located))


class NothingToApply(Exception):
    """An apply without force found no pending change: the objects are those of revision
    ``base`` (None: there are no objects and no revision yet). Nothing was published."""

    def __init__(self, base):
        self.base = base
        if base is None:
            super().__init__("nothing to apply: there are no objects and no revision yet")
        else:
            super().__init__(f"nothing to apply: the configuration is the same as revision {base}")


def _pems(snapshot):
    """The stored PEMs of the certificates ``snapshot`` names, matched by fingerprint so an
    old revision never compiles with different bytes than it was built from."""
    wanted = {c["fingerprint"]: c["name"] for c in snapshot.get("certificates", [])}
    return {
        wanted[c.fingerprint]: CertificateFiles(crt=haproxy_pem(c) if c.has_key else "", ca=ca_pem(c))
        for c in Certificate.objects.filter(fingerprint__in=wanted)
    }


def pending_changes(fields=True):
    """What an apply would change now: the last published revision (None before the first) and
    the current objects (snapshots.freeze.current, as readers see them) that differ from it
    (revisions.diff.object_changes: without their ``fields`` when told so). Decided as an
    apply decides it (``changed``): with the fingerprints equal, the last snapshot is not read."""
    last, snapshot = last_published(), current()
    if not changed(last, snapshot, _fingerprint(snapshot)):
        return last, []
    return last, object_changes(last.snapshot if last else {}, snapshot, fields)


def changed(last, snapshot, digest):
    """Whether ``snapshot``, whose fingerprint is ``digest``, holds other objects than ``last``
    (the last published revision; None before the first): what an apply without force asks."""
    if last is not None and not last.fingerprint:  # stored before revisions kept fingerprints
        return bool(object_changes(last.snapshot, snapshot, fields=False))
    return digest != (last.fingerprint if last else fingerprint({}))


_fingerprinted = {"last": (None, "")}


def _fingerprint(snapshot):
    """fingerprint(snapshot), remembered for the snapshot last asked about: current() answers
    the same dict until the generation moves, and the console's banner and dashboard poll."""
    remembered, digest = _fingerprinted["last"]
    if remembered is not snapshot:
        digest = fingerprint(snapshot)
        _fingerprinted["last"] = (snapshot, digest)
    return digest


def last_published():
    """The last published revision, with its number and fingerprint (its snapshot is read when
    first used); None before the first."""
    return Revision.objects.only("number", "fingerprint").order_by("-number").first()


def compile_for_nodes(snapshot, node_names):
    """{node name: files}: ``snapshot`` verified once, rendered for each node, and every file
    checked by its daemon."""
    proved, rendered = render_for_nodes(snapshot, node_names)
    with checked(proved, rendered):
        pass
    return _texts(rendered)


def render_for_nodes(snapshot, node_names):
    """``snapshot`` verified once and rendered for each node: (the verified configuration,
    {node name: {path: bytes}}). Raises PublishError with what verify found."""
    try:
        proved = verify(snapshot_from_dict(snapshot))
        haproxy = render_haproxy_nodes(proved, node_names, _pems(snapshot))
        rendered = {
            name: haproxy[name] | render_keepalived(proved, name) | render_firewall(proved, name) for name in node_names
        }
    except VerifyError as err:
        raise PublishError(err.problems) from err
    return proved, rendered


def _texts(rendered):
    return {name: {path: content.decode() for path, content in files.items()} for name, files in rendered.items()}


@contextmanager
def checked(proved, rendered):
    """Every daemon check ``rendered`` needs, run side by side (each is a daemon's process)
    while the block runs, which may store what the checks are to allow. On leaving, it raises
    PublishError with the first refusal in node and daemon order, as if the checks had run one
    after the other: what the block stored must be in a transaction that the error undoes."""
    checks = _checks(rendered)
    with ThreadPoolExecutor(max_workers=max(1, min(len(checks), os.cpu_count() or 1))) as pool:
        results = [pool.submit(_check, daemon, files) for _name, daemon, files in checks]
        yield
        for (name, daemon, files), result in zip(checks, results, strict=True):
            said = result.result()
            if not said.ok:
                refused = refusal(daemon, name, proved.snapshot, files, said.output)
                raise PublishError(refused.problems(), refused)


def _check(daemon, files):
    return {"haproxy": check_haproxy, "keepalived": check_keepalived, "nftables": check_nftables}[daemon](files)


def _checks(rendered):
    """The checks ``rendered`` ({node name: files}) needs, as (node name, daemon, files): one
    for each thing a daemon is asked, so that nodes it cannot tell apart are checked once."""
    checks, asked = [], set()
    for name, files in rendered.items():
        for daemon in READS:
            meaning = (daemon, _meaning(files, READS[daemon]))
            if meaning not in asked:
                asked.add(meaning)
                checks.append((name, daemon, files))
    return checks


# The files each daemon's check reads (revisions.checks), and the lines of them that do not
# change its verdict: comments (each file's header names its node), and keepalived's
# router_id, the node's name, which keepalived takes whatever it is. servers.json is the
# agent's; HAProxy does not read it.
READS = {
    "haproxy": (("haproxy.cfg", "haproxy.d/"), ("#",)),
    "keepalived": (("keepalived.conf", "keepalived.d/"), ("#", "router_id ")),
    "nftables": (("firewall.nft", "keepalived.d/fulcrum.nft"), ("#",)),
}


def _meaning(files, reads):
    """What a daemon's check of a node's files depends on: the files it reads, without the
    lines that do not change its verdict. Nodes alike in this are checked once."""
    paths, ignored = reads
    ignored = tuple(word.encode() for word in ignored)
    return tuple(
        (path, tuple(line for line in content.splitlines() if not line.lstrip().startswith(ignored)))
        for path, content in sorted(files.items())
        if path.startswith(paths) and path != "haproxy.d/servers.json"
    )


def compile_for_node(snapshot, node_name):
    """Render ``snapshot`` for one node and check every file with its daemon."""
    return compile_for_nodes(snapshot, [node_name])[node_name]


@contextmanager
def publishing():
    """One publisher at a time, with one consistent view of all objects.

    The outermost caller takes the lock before its transaction starts: a repeatable-read
    snapshot is taken by the transaction's first statement, so a lock taken inside it
    would leave a waiting publisher looking at the data from before the previous
    publisher's commit (and reusing its revision number).

    Whatever it builds, the collector leaves alone (fulcrum.collector).
    """
    if connection.in_atomic_block:
        with transaction.atomic(), collector_paused():
            _advisory("pg_advisory_xact_lock")
            yield
        return
    _advisory("pg_advisory_lock")
    try:
        with transaction.atomic(), collector_paused():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield
    finally:
        try:
            _advisory("pg_advisory_unlock")
        except DatabaseError:  # the connection is gone, and its session lock with it
            connection.close()


def _advisory(function):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s)", [_PUBLISH_LOCK])


def retrying(function, attempts=3):
    """Call ``function`` again when its repeatable-read transaction collided with another
    writer (serialization failure), as a whole: it must be a complete transaction."""
    for attempt in range(attempts):
        try:
            return function()
        except OperationalError as err:
            if getattr(err.__cause__, "sqlstate", None) != _SERIALIZATION_FAILURE or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def publish(author, message, confirm_within_s=None, force=False):
    """Create, check and publish the next revision; raise PublishError and store nothing on failure.

    Without ``force``, objects equal to the last revision's raise NothingToApply, and nothing
    changes; ``force`` publishes them again (the nodes get the same configuration anew).
    With ``confirm_within_s`` the revision awaits confirmation (see revisions.rollback).
    Publishing confirms a revision that awaits one, as a new commit does on Junos.
    """
    with publishing():
        snapshot = freeze(last_number() + 1)
        last, digest = last_published(), fingerprint(snapshot)
        if not force and not changed(last, snapshot, digest):
            raise NothingToApply(last.number if last else None)
        settle_awaiting(ConfirmState.CONFIRMED)
        return store(snapshot, author, message, confirm_within_s=confirm_within_s, digest=digest)


def settle_awaiting(state):
    """End the wait of the revision awaiting confirmation, if any, with ``state``."""
    Revision.objects.filter(confirm_state=ConfirmState.AWAITING).update(confirm_state=state)


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
    with publishing():
        last = Revision.objects.order_by("-number").first()
        path = f"pools/{member.pool.name}/members/{member.name}"
        live = _find(last.snapshot if last else {}, member.pool.name, member.name)
        if live is None:
            raise PublishError([(path, "not in the live configuration yet; apply the pending changes first")])
        snapshot = copy.deepcopy(last.snapshot)
        snapshot["revision"] = last.number + 1
        _find(snapshot, member.pool.name, member.name).update(changes)
        words = ", ".join(f"{k} {v}" for k, v in changes.items())
        revision = store(snapshot, author, f"runtime: {member.pool.name}/{member.name} {words}")
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
    return retrying(lambda: _publish_node_standby(node, standby, author), attempts)


def _publish_node_standby(node, standby, author):
    with publishing():
        last = Revision.objects.order_by("-number").first()
        entries = (last.snapshot if last else {}).get("nodes", [])
        if not any(n["name"] == node.name for n in entries):
            raise PublishError([(f"nodes/{node.name}", "not in the live configuration yet; apply first")])
        snapshot = copy.deepcopy(last.snapshot)
        snapshot["revision"] = last.number + 1
        next(n for n in snapshot["nodes"] if n["name"] == node.name)["standby"] = standby
        word = "standby" if standby else "back in service"
        revision = store(snapshot, author, f"runtime: node {node.name} {word}")
        Node.objects.filter(pk=node.pk).update(standby=standby, version=F("version") + 1)
        return revision


def _find(snapshot, pool_name, member_name):
    pool = next((p for p in snapshot.get("pools", []) if p["name"] == pool_name), None)
    return next((m for m in pool["members"] if m["name"] == member_name), None) if pool else None


def last_number():
    """The newest revision's number; 0 before the first."""
    return Revision.objects.aggregate(last=Max("number"))["last"] or 0


def store(snapshot, author, message, confirm_within_s=None, rollback_of=None, digest=None):
    """Compile ``snapshot`` for every node and store it as the revision it names, with its
    fingerprint (``digest``, when the caller has it already)."""
    number = snapshot["revision"]
    nodes = list(Node.objects.all())
    proved, rendered = render_for_nodes(snapshot, [node.name for node in nodes] or [_CHECK_NODE])
    compiled = _texts(rendered)
    bundles = {node.pk: compiled[node.name] for node in nodes}
    confirm = {}
    if confirm_within_s:
        confirm = {
            "confirm_within_s": confirm_within_s,
            "confirm_by": timezone.now() + timedelta(seconds=confirm_within_s),
            "confirm_state": ConfirmState.AWAITING,
        }
    # Stored while the daemons check the files, and rolled back if one refuses them.
    with transaction.atomic(), checked(proved, rendered):
        revision = Revision.objects.create(
            number=number,
            snapshot=snapshot,
            fingerprint=digest or fingerprint(snapshot),
            author=author,
            message=message,
            rollback_of=rollback_of,
            **confirm,
        )
        NodeRevision.objects.bulk_create(
            NodeRevision(revision=revision, node=node, files=bundles[node.pk]) for node in nodes
        )
    return revision


def node_files(revision, node):
    """This node's files of ``revision``, stored or compiled now, without storing anything:
    for readers (a GET must not write, and the node may be deleted meanwhile)."""
    existing = NodeRevision.objects.filter(revision=revision, node=node).values_list("files", flat=True).first()
    return existing if existing is not None else compile_for_node(revision.snapshot, node.name)


def node_revision(revision, node):
    """This node's copy of ``revision``; compiled on first request for nodes added since."""
    existing = NodeRevision.objects.filter(revision=revision, node=node).first()
    if existing:
        return existing
    files = compile_for_node(revision.snapshot, node.name)
    return NodeRevision.objects.get_or_create(revision=revision, node=node, defaults={"files": files})[0]
