"""A publish checks each distinct meaning once: nodes whose files differ only in their names
(comments) share the daemons' checks, and nodes an HA group tells apart are each checked."""

import pytest

from revisions import publish
from revisions.tests.configuration import admin_client, build, post


@pytest.fixture
def checks(monkeypatch):
    """The bundles each daemon's real check saw, by daemon."""
    seen = {"haproxy": [], "keepalived": [], "nftables": []}
    for daemon in seen:
        real = getattr(publish, f"check_{daemon}")

        def counted(files, real=real, daemon=daemon):
            seen[daemon].append(files)
            return real(files)

        monkeypatch.setattr(publish, f"check_{daemon}", counted)
    return seen


def test_nodes_that_differ_only_in_name_are_checked_once(db, checks):
    admin = admin_client()
    build(admin)  # lb1 and lb2, in one HA group with their own priorities
    for name, address in (("lb3", "10.0.0.13"), ("lb4", "10.0.0.14"), ("lb5", "10.0.0.15")):
        post(admin, "nodes/", {"name": name, "address": address})
    answer = post(admin, "revisions/", {"message": "five nodes"})
    stored = publish.NodeRevision.objects.filter(revision__number=answer["number"])
    assert sorted(stored.values_list("node__name", flat=True)) == ["lb1", "lb2", "lb3", "lb4", "lb5"]
    # lb1 and lb2: their HA group tells them apart (priorities, HAProxy peers); lb3-lb5 only their names.
    assert {daemon: len(bundles) for daemon, bundles in checks.items()} == {
        "haproxy": 3,
        "keepalived": 3,
        "nftables": 3,
    }
    headers = {files["haproxy.cfg"].split(b"\n", 1)[0] for files in checks["haproxy"]}
    assert len(headers) == 3 and any(b"for node lb3." in h for h in headers), headers  # lb3 checked for the three
    files = {n.node.name: n.files for n in stored}
    assert files["lb4"]["haproxy.cfg"] != files["lb3"]["haproxy.cfg"]  # each still gets its own files
    assert files["lb4"]["haproxy.cfg"].replace("lb4", "lb3") == files["lb3"]["haproxy.cfg"]
