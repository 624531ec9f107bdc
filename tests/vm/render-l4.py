"""Render the layer-4 guest cases (tests/vm/l4/<case>.json) with Fulcrum's compiler.

    .venv/bin/python tests/vm/render-l4.py OUT_DIR

Each case is a revision snapshot, as the API stores it. It goes through the same calls
the publishing path makes (``snapshot_from_dict``, ``render_haproxy``,
``render_keepalived``), and every file they return is written under
``OUT_DIR/<case>/``: ``keepalived.conf``, ``keepalived.d/ipvs.json``,
``keepalived.d/fulcrum.nft`` when the case has a port range, and ``haproxy.cfg``.
run.sh calls this before the guest boots; the guest tests run keepalived (and HAProxy)
on these files unchanged, from /results/l4/<case>/.

The node is "lb1", as in the golden tests, unless the case has HA groups: then it is
rendered once for each node that belongs to one, into ``OUT_DIR/<case>/<node>/`` (with
``keepalived.d/ha.json`` too), since every node gets its own VRRP instances. Exit
status: 0 rendered, 1 a case does not compile (the message names the case and the
compiler's complaint).
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "api"))

from compiler import VerifyError, render_haproxy, render_keepalived, snapshot_from_dict, verify  # noqa: E402

CASES = HERE / "l4"
NODE = "lb1"


def targets(snap, case_dir):
    """``(node, directory)`` for each rendering of a case: one per HA node, else lb1 alone."""
    ha_nodes = sorted({entry.node for group in snap.ha_groups for entry in group.nodes})
    if not ha_nodes:
        return [(NODE, case_dir)]
    return [(node, case_dir / node) for node in ha_nodes]


def render_node(snap, node, out_dir):
    """Write every file the compiler makes for ``node`` under ``out_dir``; return their paths."""
    proved = verify(snap)
    files = render_haproxy(proved, node) | render_keepalived(proved, node)
    written = []
    for name, content in sorted(files.items()):
        path = out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    return written


def render_case(case, case_dir):
    """Render ``case`` for each of its nodes under ``case_dir``; return the paths written."""
    snap = snapshot_from_dict(json.loads(case.read_text()))
    return [path for node, out_dir in targets(snap, case_dir) for path in render_node(snap, node, out_dir)]


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[1])
    for case in sorted(CASES.glob("*.json")):
        try:
            written = render_case(case, out / case.stem)
        except VerifyError as error:
            print(f"render-l4: {case.name} does not compile: {error}", file=sys.stderr)
            return 1
        print(f"render-l4: {case.stem}: {', '.join(str(p.relative_to(out / case.stem)) for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
