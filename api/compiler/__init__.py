"""Fulcrum's compiler: pure functions from a frozen snapshot to daemon configuration.

    snap = snapshot_from_dict(revision.snapshot)  # shape only
    proved = verify(snap)  # meaning: raises VerifyError naming the object path, else a Verified
    files = render_haproxy(proved, "lb1")  # {"haproxy.cfg": b"...", "haproxy.d/...": b"..."}
    files |= render_keepalived(proved, "lb1")  # {"keepalived.conf": b"...", ...} or {}
    files |= render_firewall(proved, "lb1")  # {"firewall.nft": b"..."}: the node's firewall sets
    render_haproxy_nodes(proved, ["lb1", "lb2"])  # {node: files}: what nodes share rendered once

One way: the renderers take only verify()'s answer (compiler.facts.Verified) and never
verify again. No file I/O, no database, no clock: the same snapshot always gives the same
bytes.
"""

from compiler.errors import VerifyError
from compiler.facts import Verified
from compiler.firewall import render_firewall
from compiler.keepalived import render_keepalived
from compiler.render import render_haproxy, render_haproxy_nodes
from compiler.snapshot import Snapshot, snapshot_from_dict
from compiler.verify import verify

__all__ = [
    "Snapshot",
    "Verified",
    "VerifyError",
    "render_firewall",
    "render_haproxy",
    "render_haproxy_nodes",
    "render_keepalived",
    "snapshot_from_dict",
    "verify",
]
