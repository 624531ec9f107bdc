"""Checks of the console benchmark's own logic (no API, no timing asserted): the rows it
loads, the static baseline page, refusing broken runs, the medians and the report; and the
in-page measurement itself, in Chromium, on a tiny static page."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bench import consolebench as bench
from tests.bench.loads import BenchError


def a_run(page="console", rows=3, keys=None, **cold_changes) -> dict:
    loaded = {"firstRow": 100.0, "allRows": 120.0, "allRowsPainted": 130.0, "rendered": rows, "expected": rows}
    loaded_bytes = {
        "document": {"transfer": 1000},
        "js": {"transfer": 50_000},
        "css": {"transfer": 5_000},
        "api": {"transfer": 9_000},
        "domContentLoaded": 40.0,
        "apiStart": 50.0,
        "apiEnd": 90.0,
    }
    return {
        "page": page,
        "run": 0,
        "cold": {**loaded, "bytes": loaded_bytes, **cold_changes},
        "warm": {**loaded, "bytes": loaded_bytes},
        "keys": keys
        if keys is not None
        else [{"key": "x", "ms": 10.0, "visible": 0}, {"key": "clear", "ms": 30.0, "visible": rows}],
    }


def _with_api(run: dict, start: float, end: float) -> dict:
    run["cold"]["bytes"]["apiRequests"] = [{"url": "/api/v1/x/", "start": start, "end": end, "transfer": 7}]
    return run


def test_the_loaded_services_are_distinct_and_valid_names():
    rows = bench.service_rows(1000)
    assert len({r["name"] for r in rows}) == 1000
    assert len({(r["vip"], r["port"]) for r in rows}) == 1000
    assert len({r["pool"] for r in rows}) == 1000
    assert all(r["vip"].split(".")[3] != "0" for r in rows)


def test_the_static_page_holds_the_same_rows_escaped():
    rows = bench.service_rows(3)
    rows[1]["name"] = "<b>x</b>"
    page = bench.static_page(rows)
    assert page.count('<tr><th scope="row">') == 3
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert 'type="search"' in page and "3 virtual services" in page


def test_the_static_page_shows_a_page_of_rows_and_holds_them_all():
    rows = bench.service_rows(bench.PAGE_ROWS + 50)
    page = bench.static_page(rows)
    assert page.count('<tr><th scope="row">') == bench.PAGE_ROWS
    assert rows[-1]["name"] in page and f"{len(rows)} virtual services" in page


def test_the_filter_narrows_by_name_as_documented():
    names = [r["name"] for r in bench.service_rows(1000)]
    assert bench.narrowing(names, bench.FILTER) == "1,000 → 1,000 (5 keys) → 100 → 10 → 1"
    assert bench.expected_visible(names, "") == bench.PAGE_ROWS == 100
    assert bench.expected_after_each_key(names, bench.FILTER) == [100] * 6 + [10, 1, 100]


def test_a_run_with_the_wrong_rows_is_refused():
    names = ["a-1", "a-2", "b-1"]
    bench.check_run(
        a_run(keys=[{"key": "a", "ms": 5, "visible": 2}, {"key": "clear", "ms": 9, "visible": 3}]), 3, names, "a"
    )
    with pytest.raises(BenchError, match="2 rows rendered"):
        bench.check_run(a_run(rendered=2), 3, names, "a")
    with pytest.raises(BenchError, match="after 'a' 3 rows visible, wanted 2"):
        bench.check_run(a_run(keys=[{"key": "a", "ms": 5, "visible": 3}]), 3, names, "a")
    with pytest.raises(BenchError, match="out of order"):
        bench.check_run(a_run(firstRow=200.0), 3, names, "a")


def test_medians_per_page_and_the_report():
    runs = [
        a_run(),
        a_run(firstRow=120.0),
        a_run(firstRow=110.0),
        a_run("static", firstRow=10.0, allRows=20.0, allRowsPainted=25.0),
    ]
    summary = bench.summarise(runs)
    assert summary["console"]["cold_first_row_ms"] == 110.0
    assert summary["console"]["key_median_ms"] == 10.0 and summary["console"]["clear_ms"] == 30.0
    assert summary["static"]["cold_first_row_ms"] == 10.0
    result = {
        "date": "2026-11-22",
        "services": 3,
        "runs": 3,
        "filter": "x",
        "narrowing": "3 → 0",
        "browser": "1",
        "machine": "test",
        "load_before": "0",
        "load_after": "0",
        "summary": summary,
    }
    result["api_requests"] = bench.api_requests([_with_api(a_run(), 10, 20), _with_api(a_run(), 30, 40)])
    assert result["api_requests"] == [{"url": "/api/v1/x/", "start_ms": 20.0, "end_ms": 30.0, "bytes": 7}]
    text = bench.report(result)
    assert "| `/api/v1/x/` | 20.0 | 30.0 | 0.0 KiB |" in text
    assert "| (a) first load, cold cache: navigation → first row (ms) | 110 | 10.0 | 11.0x |" in text
    assert "| (a) JavaScript transferred (bytes) | 48.8 KiB | 48.8 KiB | 1.0x |" in text


def test_settings_from_the_environment_and_quick_defaults():
    args = bench.parse_args([], {"FULCRUM_BENCH_CONSOLE_RUNS": "7"})
    assert (args.runs, args.services, args.prefix) == (7, 1000, "consolebench")
    assert args.output.parent == bench.RESULTS
    quick = bench.parse_args(["--quick"], {})
    assert (quick.runs, quick.services) == (2, 200)
    assert quick.output.parent == bench.QUICK_OUTPUT


browser_ready = (
    Path(bench.CHROMIUM).is_file()
    and shutil.which("node") is not None
    and (bench.WEBUI / "node_modules" / "playwright-core").is_dir()
)


@pytest.mark.skipif(not browser_ready, reason="needs Chromium, node and webui/node_modules")
def test_the_page_measurement_counts_rows_and_keystrokes(tmp_path):
    """The in-page probes on a 12-row static page: every mark taken, every row and key counted."""
    rows = bench.service_rows(12)
    names = [r["name"] for r in rows]
    (tmp_path / "list.html").write_text(bench.static_page(rows))
    with bench.static_server(tmp_path) as url:
        expected = bench.expected_after_each_key(names, "svc-001")
        page = {
            "name": "static",
            "url": f"{url}/list.html",
            "rows": 12,
            "filter": "svc-001",
            "expectedVisible": expected,
        }
        measured = bench.measure({"chromium": bench.CHROMIUM, "runs": 1, "pages": [page]}, timeout=120)
    [run] = measured["runs"]
    bench.check_run(run, 12, names, "svc-001")
    assert [key["visible"] for key in run["keys"]] == expected == [12, 12, 12, 12, 12, 12, 2, 12]
    assert [key["key"] for key in run["keys"]][-1] == "clear"
    assert all(key["changes"] >= 1 for key in run["keys"])  # the count line changes with every key
    assert run["cold"]["bytes"]["document"]["body"] == len((tmp_path / "list.html").read_bytes())
    assert run["cold"]["bytes"]["js"]["count"] == 0 and run["cold"]["bytes"]["api"]["count"] == 0
    metrics = bench.run_metrics(run)
    assert metrics["cold_first_row_ms"] <= metrics["cold_all_rows_ms"]
