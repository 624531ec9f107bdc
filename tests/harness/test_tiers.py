"""The run's summary (tests/harness/tiers.py): tests counted from JUnit files and checks, a failed
tier in the table and in tiers.json."""

import json

import pytest

from tests.harness import tiers

PYTEST_JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="a" name="ok1" time="0.1"/><testcase classname="a" name="ok2" time="0.1"/>
<testcase classname="a" name="fails" time="0.1"><failure message="assert 1 == 2"/></testcase>
<testcase classname="a" name="errors" time="0.1"><error message="fixture"/></testcase>
<testcase classname="a" name="skips" time="0.0"><skipped message="guest only"/></testcase>
</testsuite></testsuites>"""


@pytest.fixture
def artifacts(tmp_path, monkeypatch):
    monkeypatch.setattr(tiers, "ARTIFACTS", tmp_path)
    monkeypatch.setattr(tiers, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("FULCRUM_RUN_SECONDS", "130")
    return tmp_path


def test_counts_junit_files_checks_and_a_failed_tier(artifacts, capsys):
    unit = artifacts / "results" / "unit"
    unit.mkdir(parents=True)
    (unit / "python.xml").write_text(PYTEST_JUNIT)
    (unit / "checks.tsv").write_text("ip_vs_dllc-maths\tok\n")
    vm = artifacts / "results" / "vm"
    vm.mkdir(parents=True)
    tiers.junit(str(vm / "vm-test_a.xml"), "vm", "test_a", "ok", "12")
    tiers.junit(str(vm / "vm-test_b.xml"), "vm", "test_b", "fail 124", "600")
    (artifacts / "results" / "lint").mkdir()
    (artifacts / "results" / "lint" / "checks.tsv").write_text("ruff\tok\ngo\tfailed\n")
    (artifacts / "tiers.tsv").write_text("vm\tFAILED\t0\t700\nunit\tok\t10\t40\nlint\tFAILED\t0\t10\n")

    assert tiers.summary() == 0
    table = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in table[1:4]] == [["lint", "FAILED"], ["vm", "FAILED"], ["unit", "ok"]]
    document = json.loads((artifacts / "tiers.json").read_text())
    got = {t["tier"]: (t["result"], t["seconds"], t["passed"], t["failed"], t["skipped"]) for t in document["tiers"]}
    assert got == {
        "unit": ("ok", 30, 3, 2, 1),
        "vm": ("FAILED", 700, 1, 1, 0),
        "lint": ("FAILED", 10, 1, 1, 0),
    }
    assert document["result"] == "FAILED" and document["total_s"] == 130
    assert table[-1].split()[:5] == ["total", "130s", "5", "4", "1"]


def test_a_truncated_junit_file_counts_as_a_failure(tmp_path):
    broken = tmp_path / "died.xml"
    broken.write_text("<testsuite><testcase name='x'")
    assert tiers.junit_counts(broken) == tiers.Counts(failed=1)
