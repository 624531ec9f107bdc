"""Checks of the control-plane benchmark (``make bench-api``): its arithmetic and report, and
one tiny real run against the real API (no time asserted: that every measured request
succeeded and was counted)."""

from __future__ import annotations

import itertools
import json

import pytest

from tests.bench import apibench as bench
from tests.bench.loads import BenchError


def test_percentile_and_spread():
    assert bench.percentile([5, 1, 3, 2, 4], 0.5) == 3
    assert bench.percentile(list(range(1, 101)), 0.95) == 95
    picks = bench.spread(30, 100)
    assert len(picks) == 30 and len(set(picks)) == 30 and all(0 <= i < 100 for i in picks)
    assert all(abs(a - b) > 1 for a, b in itertools.pairwise(picks))  # never the neighbour


def test_the_report_gives_ratios_against_the_smallest_size():
    def result(size, write_ms, apply_s):
        writes = {k: {"p50_ms": write_ms, "p95_ms": write_ms * 2, "n": 3} for k in ("member_weight", "rule_create", "service_patch")}  # fmt: skip
        reads = {name: {"p50_ms": write_ms * 2, "n": 5} for name in bench.READS}
        return {"size": size, "writes": writes, "bulk": {"rules": 50, "create_s": 0.2, "median_s": 0.1, "n": 3},
                "apply": {"median_s": apply_s, "max_s": apply_s, "n": 1}, "reads": reads}  # fmt: skip

    lines = bench.report([result(100, 20.0, 1.0), result(10_000, 30.0, 8.0)]).splitlines()
    assert lines[2].startswith("| 100 | 20 / 40 ms (1.00x)")
    assert "30 / 60 ms (1.50x)" in lines[3] and "8.00 s (8.0x)" in lines[3] and "50 in 0.10 s" in lines[3]
    assert lines[6] == "| services | history p50 | dashboard p50 | pending_count p50 |"
    assert lines[9] == "| 10,000 | 60 ms (1.5x) | 60 ms (1.5x) | 60 ms (1.5x) |"


def test_a_tiny_run_against_the_real_api(tmp_path):
    output = tmp_path / "api.json"
    assert bench.main(["--sizes", "20,40", "--writes", "3", "--applies", "1", "--bulk", "30",
                       "--agents", "5", "--prefix", "apibenchtest", "--output", str(output)]) == 0  # fmt: skip
    document = json.loads(output.read_text())
    assert [r["size"] for r in document["results"]] == [20, 40]
    for result in document["results"]:
        assert {w["n"] for w in result["writes"].values()} == {3}
        assert all(w["p50_ms"] > 0 for w in result["writes"].values())
        assert (result["bulk"]["rules"], result["bulk"]["n"], result["apply"]["n"]) == (30, 3, 1)
        assert {(r["n"], r["p50_ms"] > 0) for r in result["reads"].values()} == {(5, True)}
    assert len(document["load_average"]["before"]) == 3
    first, second = (r["agents"] for r in document["results"])
    assert second is None  # agents at the first size only
    # Every agent waited (none answered before the publish) and got the published revision.
    assert (first["agents"], first["answered_before_the_publish"], first["told_to_retry"]) == (5, 0, 0), first
    assert first["api_cpu_at_rest_pct"] >= 0 and first["all_woken_s"] > 0 and first["publish_s"] > 0


def test_a_refused_request_fails_the_benchmark():
    class Answer:
        status_code = 400
        text = "no"

        class request:  # the shape of requests' answer
            method, url = "POST", "/api/v1/rules/"

    with pytest.raises(BenchError, match="-> 400 no"):
        bench.timed(201, lambda: Answer())
