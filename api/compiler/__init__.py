"""Fulcrum's compiler: pure functions from a frozen snapshot to daemon configuration.

    snap = snapshot_from_dict(revision.snapshot)
    verify(snap)                      # raises VerifyError naming the object path
    files = render_haproxy(snap, "lb1")  # {"haproxy.cfg": b"...", "haproxy.d/...": b"..."}
    files |= render_keepalived(snap, "lb1")  # {"keepalived.conf": b"...", ...} or {}
    files |= render_firewall(snap, "lb1")  # {"firewall.nft": b"..."}: the node's firewall sets

No file I/O, no database, no clock: the same snapshot always gives the same bytes.
"""

from compiler.errors import VerifyError
from compiler.firewall import render_firewall
from compiler.keepalived import render_keepalived
from compiler.render import render_haproxy
from compiler.snapshot import Snapshot, snapshot_from_dict
from compiler.verify import verify

__all__ = [
    "Snapshot",
    "VerifyError",
    "render_firewall",
    "render_haproxy",
    "render_keepalived",
    "snapshot_from_dict",
    "verify",
]
