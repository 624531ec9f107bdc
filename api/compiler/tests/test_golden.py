"""Golden tests: each case's input renders to the committed bytes, and the daemons accept them.

Regenerate after an intended change with ``pytest api/compiler --regen-golden`` and review the diff.
"""

import json
from pathlib import Path

import pytest

from compiler import names, render_firewall, render_haproxy, render_keepalived, snapshot_from_dict, verify
from compiler.render import CertificateFiles, _structure, render_haproxy_nodes
from revisions.checks import check_haproxy, check_keepalived, check_nftables

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.json").exists())
TLS = Path(__file__).parent / "tls"


def golden_pems():
    """The test certificates by name, as the API hands them to the renderer."""
    names = {p.name.split(".")[0] for p in TLS.glob("*.pem")}
    crt = {n: (TLS / f"{n}.crt.pem") for n in names}
    return {
        n: CertificateFiles(crt=crt[n].read_text() if crt[n].exists() else "", ca=(TLS / f"{n}.ca.pem").read_text())
        for n in names
    }


def _render(case):
    proved = verify(snapshot_from_dict(json.loads((GOLDEN / case / "input.json").read_text())))
    return (
        render_haproxy(proved, "lb1", golden_pems()) | render_keepalived(proved, "lb1") | render_firewall(proved, "lb1")
    )


def _golden_files(case):
    root = GOLDEN / case
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "input.json"
    }


@pytest.mark.parametrize("case", CASES)
def test_render_matches_golden(case, request):
    rendered = _render(case)
    if request.config.getoption("--regen-golden"):
        for name in _golden_files(case):
            (GOLDEN / case / name).unlink()
        for name, content in rendered.items():
            (GOLDEN / case / name).parent.mkdir(exist_ok=True)
            (GOLDEN / case / name).write_bytes(content)
    assert sorted(rendered) == sorted(_golden_files(case)), f"{case}: the set of files differs"
    for name, content in rendered.items():
        assert content == (GOLDEN / case / name).read_bytes(), f"{case}/{name} differs; rerun with --regen-golden"


@pytest.mark.parametrize("case", CASES)
def test_golden_passes_haproxy_check(case):
    result = check_haproxy(_golden_files(case))
    assert result.ok, result.output
    assert "server state" not in result.output  # the check lays out an empty state file


@pytest.mark.parametrize("case", [c for c in CASES if (GOLDEN / c / "keepalived.conf").exists()])
def test_golden_passes_keepalived_config_test(case):
    result = check_keepalived(_golden_files(case))
    assert result.ok, result.output


@pytest.mark.parametrize("case", CASES)
def test_golden_passes_nft_check(case):
    """firewall.nft against the appliance's baseline, and keepalived.d/fulcrum.nft, in an empty netns."""
    result = check_nftables(_golden_files(case))
    assert result.checked and result.ok, result.output


def test_render_is_deterministic():
    assert all(_render(case) == _render(case) for case in CASES)


def test_at_least_the_known_cases_exist():
    assert {"http-basic", "tcp-and-algorithms", "ipv6-and-states", "empty", "l4-forwarding", "l4-checks"} <= set(CASES)


def _masked_state(state, dllc):
    """A member's state that renders its server line as the structure masks it."""
    if dllc:
        return "enabled" if state == "disabled" else state  # a drained one's weight 0 is structure
    return "drain"


@pytest.mark.parametrize("case", CASES)
def test_the_structure_hash_masks_exactly_the_runtime_state(case):
    """servers.json's structure hashes haproxy.cfg with the runtime state masked in the text:
    the same text as rendering with every member drained (weight 0) and none disabled, but in
    a DLLC pool (its weights are structure: only disabled ones are enabled), and revision 0.
    A template that comes to print a weight or state elsewhere fails here."""
    data = json.loads((GOLDEN / case / "input.json").read_text())
    masked = {**data, "revision": 0, "pools": [dict(pool) for pool in data["pools"]]}
    weighted = set()
    for pool in masked["pools"]:
        dllc = pool.get("algorithm") == "dynamic-least-load"
        pool["members"] = [
            {**m, "state": _masked_state(m.get("state", "enabled"), dllc)} for m in pool.get("members", [])
        ]
        if dllc:
            weighted.add(names.backend(pool["name"]))
    config, expected = (
        render_haproxy(verify(snapshot_from_dict(d)), "lb1", golden_pems())["haproxy.cfg"].decode()
        for d in (data, masked)
    )
    assert _structure(config, weighted) == expected


def test_nodes_alike_are_rendered_once_and_named_apart():
    """render_haproxy_nodes gives each node what render_haproxy gives it alone. Nodes with
    the same floating VIPs and peers (lb1, lb2: both in both groups) differ only in the lines
    that name them, and share servers.json: its structure leaves those lines out."""
    proved = verify(snapshot_from_dict(json.loads((GOLDEN / "ha" / "input.json").read_text())))
    nodes = ("lb1", "lb2", "lb3")  # lb3 is in no group: no floating VIPs, no peers
    together = render_haproxy_nodes(proved, nodes, golden_pems())
    assert together == {node: render_haproxy(proved, node, golden_pems()) for node in nodes}
    lb1, lb2, lb3 = (together[node]["haproxy.cfg"].decode().splitlines() for node in nodes)
    assert [(a, b) for a, b in zip(lb1, lb2, strict=True) if a != b] == [
        (lb1[0], lb1[0].replace("for node lb1.", "for node lb2.")),
        ("    localpeer lb1", "    localpeer lb2"),
    ]
    assert together["lb1"]["haproxy.d/servers.json"] == together["lb2"]["haproxy.d/servers.json"]
    assert any(" transparent" in line for line in lb1) and not any(" transparent" in line for line in lb3)
    assert together["lb1"]["haproxy.d/servers.json"] != together["lb3"]["haproxy.d/servers.json"]
