"""Fast checks of the benchmark's own logic (no root, no traffic): the compiled config
stays valid for HAProxy, and broken runs are refused instead of reported."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.bench.webbench import (
    BenchError,
    RunResult,
    bench_snapshot,
    check_run,
    compile_haproxy_config,
)
from tests.harness.lab import SERVER_ADDRS
from tests.harness.webbench import WEBBENCH_MIX, expected_not_found_share, webbench_file_content


def a_run(**changes) -> RunResult:
    fields = {
        "path": "fulcrum",
        "round": 1,
        "requests": 9900,
        "duration_us": 1_000_000,
        "bytes": 50_000_000,
        "errors": {"connect": 0, "read": 0, "write": 0, "status": 200, "timeout": 0},
        "latency_us": {"mean": 1000, "p50": 900, "p90": 1500, "p99": 3000, "max": 9000},
        "statuses": {"200": 9700, "404": 200},
        "servers": {"s1": 9900},
    }
    return RunResult(**(fields | changes))


def test_file_set_has_the_exact_sizes():
    for entry in WEBBENCH_MIX:
        if entry.size is not None:
            assert len(webbench_file_content(entry)) == entry.size
    assert expected_not_found_share() == pytest.approx(2 / 99)


def test_a_healthy_run_passes():
    check_run(a_run(), {"s1"})


@pytest.mark.parametrize(
    "changes, complaint",
    [
        ({"requests": 0, "statuses": {}, "servers": {}}, "no request"),
        ({"statuses": {"200": 9600, "404": 200, "503": 100}}, "unexpected statuses"),
        ({"statuses": {"200": 9900}}, "404 share"),
        ({"errors": {"connect": 50, "read": 0, "write": 0, "status": 200, "timeout": 0}}, "socket errors"),
        ({"servers": {"s1": 9000, "s2": 900}}, "answered by"),
    ],
)
def test_a_broken_run_is_refused(changes, complaint):
    with pytest.raises(BenchError, match=complaint):
        check_run(a_run(**changes), {"s1"})


def test_the_compiled_bench_config_is_accepted_by_haproxy(tmp_path):
    config = compile_haproxy_config(bench_snapshot(SERVER_ADDRS))
    assert b"bind 10.77.100.10:80" in config and b"server s3 10.77.2.13:80" in config
    (tmp_path / "haproxy.cfg").write_bytes(config)
    check = subprocess.run(
        ["haproxy", "-c", "-f", str(tmp_path / "haproxy.cfg")],
        env={**os.environ, "FULCRUM_RUN_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0, check.stdout + check.stderr
