"""Golden tests: each case's input renders to the committed bytes, and HAProxy accepts them.

Regenerate after an intended change with ``pytest api/compiler --regen-golden`` and review the diff.
"""

import json
from pathlib import Path

import pytest

from compiler import render_haproxy, snapshot_from_dict
from revisions.checks import check_haproxy

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.json").exists())


def _render(case):
    snap = snapshot_from_dict(json.loads((GOLDEN / case / "input.json").read_text()))
    return render_haproxy(snap, "lb1")


@pytest.mark.parametrize("case", CASES)
def test_render_matches_golden(case, request):
    rendered = _render(case)
    for name, content in rendered.items():
        expected = GOLDEN / case / name
        if request.config.getoption("--regen-golden"):
            expected.write_bytes(content)
        assert content == expected.read_bytes(), f"{case}/{name} differs; rerun with --regen-golden and review"


@pytest.mark.parametrize("case", CASES)
def test_golden_passes_haproxy_check(case):
    result = check_haproxy((GOLDEN / case / "haproxy.cfg").read_bytes())
    assert result.ok, result.output


def test_render_is_deterministic():
    assert all(_render(case) == _render(case) for case in CASES)


def test_at_least_the_known_cases_exist():
    assert {"http-basic", "tcp-and-algorithms", "ipv6-and-states", "empty"} <= set(CASES)
