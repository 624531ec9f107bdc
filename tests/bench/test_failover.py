"""The failover benchmark's settings, gap measure and report maths (unit tier, no root)."""

import json

import pytest

from tests.bench import failover, failoverreport
from tests.harness.requestloop import longest_gap


def rows(pattern, start=100.0, step=0.02):
    """Request records from a string: "." answered, "x" failed, one per step."""
    return [{"t": start + i * step, "url": 0, "ok": c == "."} for i, c in enumerate(pattern)]


def test_longest_gap_is_first_failure_to_next_success():
    gap = longest_gap(rows("..xx...xxxxx.."))
    assert gap.failed == 5
    assert gap.ms == pytest.approx(100)  # 5 requests 20 ms apart, then the answer
    assert gap.start == pytest.approx(100.14)


def test_longest_gap_without_failure_and_without_recovery():
    assert longest_gap(rows("....")).failed == 0
    assert longest_gap(rows("..xxx")).ms == float("inf")


def test_longest_gap_orders_by_start_and_keeps_to_its_url_and_window():
    records = list(reversed(rows("..xx..")))  # answers arrive out of order
    records += [{"t": 100.05, "url": 1, "ok": False}]
    assert longest_gap(records).failed == 2
    assert longest_gap(records, after=100.07).failed == 0


def test_defaults_and_quick_settings():
    full = failover.parse_args([], environ={})
    assert (full.adverts, full.rounds, full.modes, full.rest) == ((1000, 200, 100), 10, failover.MODES, 60)
    quick = failover.parse_args(["--quick"], environ={})
    assert quick.adverts == (200,) and quick.rounds == 2 and "artifacts" in str(quick.output)
    env = failover.parse_args(
        [], environ={"FULCRUM_BENCH_FAILOVER_ADVERTS": "500", "FULCRUM_BENCH_FAILOVER_ROUNDS": "3"}
    )
    assert (env.adverts, env.rounds) == ((500,), 3)


def test_bad_mode_is_refused():
    with pytest.raises(SystemExit):
        failover.parse_args(["--modes", "reboot"], environ={})


def test_master_down_interval():
    assert failoverreport.master_down_s(1000, 100) == pytest.approx(3 + 156 / 256)
    assert failoverreport.master_down_s(200, 150) == pytest.approx(0.6 + 0.2 * 106 / 256)


def facts():
    failovers = [
        {"advert_ms": a, "mode": m, "round": i, "gap_ms": g, "takeover_s": g / 1000 + 0.05, "failed_requests": 1}
        for a, m, gaps in [
            (1000, "keepalived", [2800, 3400, 3000]),
            (200, "keepalived", [600, 700, 650]),
            (200, "link", [640, 720, 1100]),
        ]
        for i, g in enumerate(gaps)
    ]
    rest = [{"advert_ms": 200, "seconds": 60, "holder_changes": 0, "keepalived_state_changes": 0}]
    rest[0] |= {"requests": 3000, "failed": 0}
    env = {"cpus": 2, "kernel": "6", "keepalived": "k", "haproxy": "h", "loadavg_start": [1, 1, 1]}
    env |= {"date": "2026-11-22T10:00:00+00:00", "settings": {"interval_ms": 20, "timeout_ms": 250}}
    return {"environment": env, "rest": rest, "failovers": failovers}


def test_summary_medians_and_maxima():
    cells = {(c.advert_ms, c.mode): c for c in failoverreport.summarize(facts()["failovers"])}
    assert cells[1000, "keepalived"].gap_median_ms == 3000 and cells[1000, "keepalived"].gap_max_ms == 3400
    assert cells[200, "link"].gap_median_ms == 720 and cells[200, "link"].count == 3


def test_markdown_states_the_goal_per_mode():
    text = failoverreport.markdown(facts())
    assert "| advert 200 ms (master-down 0.68-0.72 s) | 650 / 700 (3) | 720 / 1 100 (3) |" in text
    assert "keepalived SIGKILL at 200 ms: max gap 700 ms (median 650) < 1000 ms: **yes**" in text
    assert "front link down at 200 ms: max gap 1 100 ms (median 720) < 1000 ms: **no**" in text
    assert "no false failover at rest at 200 ms (60 s): **yes**" in text
    assert "| 200 ms, keepalived SIGKILL | 0.70 / 0.75 | 0.22 |" in text  # 650 / 3000


def test_write_makes_the_three_files(tmp_path):
    pytest.importorskip("matplotlib")
    written = failoverreport.write(tmp_path / "failover", facts())
    assert sorted(p.suffix for p in written) == [".json", ".md", ".svg"]
    assert json.loads((tmp_path / "failover.json").read_text())["summary"][0]["advert_ms"] == 1000
