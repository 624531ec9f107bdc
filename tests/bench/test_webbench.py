"""Fast checks of the benchmark's own logic (no root, no traffic): broken runs are refused
instead of reported, the load generators' output is read right, and the report maths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench import report, shipped
from tests.bench.loads import (
    BenchError,
    Measurement,
    STimeProgress,
    check_mix,
    check_s_time,
    check_sized,
    count_marks,
    wrk_script_args,
)
from tests.bench.multiplex import MuxResult, count_connections, ramp_seconds
from tests.bench.multiplex import check as multiplex_check
from tests.bench.plan import ROUTED_SERVERS, format_size, sized_file_content
from tests.bench.webbench import DEFAULT_OUTPUT, L7_ROWS, cps_rows, parse_args, rotated
from tests.harness.webbench import WEBBENCH_MIX, expected_not_found_share, webbench_file_content

# -- refusing broken runs ---------------------------------------------------------------------


def a_mix_result(**changes) -> dict:
    fields = {
        "requests": 9900,
        "duration_us": 1_000_000,
        "bytes": 50_000_000,
        "errors": {"connect": 0, "read": 0, "write": 0, "status": 200, "timeout": 0},
        "latency_us": {"mean": 1000, "p50": 900, "p90": 1500, "p99": 3000, "max": 9000},
        "statuses": {"200": 9700, "404": 200},
        "servers": {"s1": 3000, "s2": 4000, "s3": 2900},
        "routes": {"image/gif s1": 3000, "image/gif s2": 2900, "text/html s2": 1100, "text/html s3": 2900},
        "set_cookies": 0,
    }
    return fields | changes


def test_file_set_has_the_exact_sizes():
    for entry in WEBBENCH_MIX:
        if entry.size is not None:
            assert len(webbench_file_content(entry)) == entry.size
    assert expected_not_found_share() == pytest.approx(2 / 99)
    assert len(sized_file_content(1048576)) == 1048576


def test_a_healthy_mix_run_passes():
    check_mix("row", a_mix_result(), ROUTED_SERVERS, 2 / 99)
    check_mix("row", a_mix_result(set_cookies=990), ROUTED_SERVERS, 2 / 99, set_cookie_share=0.1)


@pytest.mark.parametrize(
    "changes, complaint",
    [
        ({"requests": 0, "statuses": {}, "routes": {}}, "no request"),
        ({"statuses": {"200": 9600, "404": 200, "503": 100}}, "unexpected statuses"),
        ({"statuses": {"200": 9900}}, "404 share"),
        ({"errors": {"connect": 50, "read": 0, "write": 0, "status": 200, "timeout": 0}}, "socket errors"),
        ({"routes": {"image/gif s1": 5000, "image/gif s3": 1, "text/html s2": 1, "text/html s3": 1}}, "answered"),
        ({"routes": {"image/gif s1": 5000, "text/html s2": 1, "text/html s3": 1}}, "answered"),
        ({"set_cookies": 500}, "Set-Cookie"),
    ],
)
def test_a_broken_mix_run_is_refused(changes, complaint):
    with pytest.raises(BenchError, match=complaint):
        check_mix("row", a_mix_result(**changes), ROUTED_SERVERS, 2 / 99)


def test_a_sized_run_needs_whole_bodies_from_the_whole_pool():
    good = a_mix_result(statuses={"200": 100}, requests=100, bytes=100 * 600, servers={"s1": 34, "s2": 33, "s3": 33})
    check_sized("cps", good, 512, {"s1", "s2", "s3"})
    with pytest.raises(BenchError, match="bytes"):
        check_sized("cps", good | {"bytes": 100 * 300}, 512, {"s1", "s2", "s3"})
    with pytest.raises(BenchError, match="answered by"):
        check_sized("cps", good | {"servers": {"s1": 100}}, 512, {"s1", "s2", "s3"})
    with pytest.raises(BenchError, match="statuses"):
        check_sized("cps", good | {"statuses": {"200": 99, "502": 1}}, 512, {"s1", "s2", "s3"})


def test_wrk_script_arguments():
    args = wrk_script_args({"/a": 2, "/b": 1}, "1.0", {"IMG": ("s1", "s2")}, 10)
    assert args == ["/a=2", "/b=1", "version=1.0", "cookie=IMG:s1,s2", "new-visitor=10"]
    assert wrk_script_args({"/a": 1}) == ["/a=1"]


# -- openssl s_time ---------------------------------------------------------------------------

S_TIME_OUTPUT = b"Collecting connection statistics for 600 seconds\n***r*\n\n5 connections in 0.01s; 5 conn/user sec\n"


def test_s_time_progress_counts_only_the_connection_line():
    progress = STimeProgress()
    for i, byte in enumerate(S_TIME_OUTPUT):
        progress.feed(bytes([byte]), float(i))
    assert sum(m[1] for m in progress.marks) == 4 and sum(m[2] for m in progress.marks) == 1
    assert progress.marks[0][0] == S_TIME_OUTPUT.index(b"*")


def test_s_time_handshakes_are_counted_in_the_window():
    first = [(float(t), 1, 0) for t in range(0, 11)]
    second = [(float(t), 2, 1) for t in range(2, 13)]
    assert count_marks([first, second], 2.0, 10.0) == (8 + 16, 8)


def test_s_time_results_are_checked():
    good = {"connections": 10, "resumed": 0, "window_s": 1.0}
    check_s_time("tls", good)
    with pytest.raises(BenchError, match="resumed"):
        check_s_time("tls", good | {"resumed": 3})
    with pytest.raises(BenchError, match="0 handshakes"):
        check_s_time("tls", good | {"connections": 0})


# -- multiplexing -----------------------------------------------------------------------------

SS_OUTPUT = """\
0      0      10.77.100.19:80 10.77.1.2:40000
0      0      10.77.100.19:80 10.77.1.2:40001
0      0      10.77.100.19:80 10.77.1.2:40002
0      0      10.77.2.1:51000 10.77.2.11:80
0      0      10.77.100.20:80 10.77.1.2:40003
0      0      10.77.1.1:22 10.77.1.2:40004
"""


def test_connections_are_counted_by_side():
    assert count_connections(SS_OUTPUT, "10.77.100.19:80") == (3, 1)
    assert ramp_seconds(200) == 5 and ramp_seconds(60_000) == 180


def a_mux(system: str, server_connections: list[int], think_ms: int = 200, row: str = "mux") -> MuxResult:
    return MuxResult(row, system, 2000, think_ms, [2000] * len(server_connections), server_connections, 9000.0, {}, {})


def test_multiplexing_ratio_is_the_median_per_sample():
    mux = a_mux("fulcrum", [10, 20, 0])
    assert mux.ratios == [200.0, 100.0, 2000.0]
    assert mux.median_ratio == 200.0


@pytest.mark.parametrize(
    "changes, complaint",
    [
        ({"statuses": {"200": 100, "408": 3}}, "statuses"),
        ({"errors": {"connect": 0, "read": 40, "write": 0, "status": 0, "timeout": 0}}, "dropped"),
        ({"client_connections": [2000, 1500]}, "clients connected"),
    ],
)
def test_a_broken_multiplexing_run_is_refused(changes, complaint):
    good = a_mux("fulcrum", [10, 10])
    good.statuses, good.errors = {"200": 100}, {"connect": 0, "read": 5, "write": 0, "status": 0, "timeout": 0}
    multiplex_check(good)
    for name, value in changes.items():
        setattr(good, name, value)
    with pytest.raises(BenchError, match=complaint):
        multiplex_check(good)


# -- report maths -----------------------------------------------------------------------------


def measurements() -> list[Measurement]:
    rates = {  # row -> system -> per-round rates
        "3 rules": {"fulcrum": [100, 110, 90], "haproxy": [100, 100, 100], "nginx": [80, 80, 80], "fulcrum-host": [50]},
        "5,000 rules": {"fulcrum": [99, 99, 99], "haproxy": [100, 100, 100], "nginx": [70, 70, 70]},
    }
    found = [Measurement("l7", "3 rules", "fulcrum", 0, 1.0)]  # warm-up: left out
    for row, systems in rates.items():
        for system, values in systems.items():
            # CPU per request: 1e6 / rate, as if each system were CPU-bound.
            found += [Measurement("l7", row, system, i + 1, v, {}, 1e6 / v) for i, v in enumerate(values)]
    return found


def test_summaries_are_medians_and_ratios_of_medians():
    first, second = report.summarize(measurements())
    assert first.row == "3 rules" and first.rounds == 3
    assert first.medians == {"fulcrum": 100, "haproxy": 100, "nginx": 80, "fulcrum-host": 50}
    assert (first.minimums["fulcrum"], first.maximums["fulcrum"]) == (90, 110)
    assert first.ratio_to_haproxy == 1.0 and first.ratio_to_nginx == 1.25 and first.ratio_to_host == 2.0
    assert first.paired_ratio_to_haproxy == 1.0
    assert first.cpu_us_per_op == {"fulcrum": 10_000, "haproxy": 10_000, "nginx": 12_500, "fulcrum-host": 20_000}
    assert second.ratio_to_haproxy == pytest.approx(0.99) and second.ratio_to_host is None


def test_costs_are_relative_throughput_changes():
    (cost,) = report.costs(report.summarize(measurements()), [("5,000 rules", "3 rules", "5,000 rules")])
    assert cost.by_system["fulcrum"] == pytest.approx(-0.01)
    assert cost.by_system["nginx"] == pytest.approx(70 / 80 - 1)
    assert cost.cpu_by_system["fulcrum"] == pytest.approx(100 / 99 - 1)


def test_targets_met_missed_and_not_measured():
    summaries = report.summarize(measurements())
    (cost,) = report.costs(summaries, [("5,000 rules", "3 rules", "5,000 rules")])
    mux = [a_mux("fulcrum", [10]), a_mux("haproxy", [10])]
    haproxy, nginx, rules, multiplexing = report.targets(summaries, cost, mux, "3 rules")
    assert haproxy.met is True and "0.990" in haproxy.measured and "1.000 (200 ms)" in haproxy.measured
    assert nginx.met is True and nginx.measured.startswith("1.25")
    assert rules.met is True and rules.measured == "-1.0% throughput"
    assert multiplexing.met is None and "200 ms" in multiplexing.note
    long_think = [a_mux("fulcrum", [5], think_ms=60_000)]
    assert report.targets([], None, long_think, "3 rules")[-1].met is True


def test_targets_missed():
    runs = [m for m in measurements() if not (m.row == "5,000 rules" and m.system == "fulcrum")]
    runs += [Measurement("l7", "5,000 rules", "fulcrum", 1, 90.0)]
    summaries = report.summarize(runs)
    (cost,) = report.costs(summaries, [("5,000 rules", "3 rules", "5,000 rules")])
    haproxy, _nginx, rules, _mux = report.targets(summaries, cost, [], "3 rules")
    assert haproxy.met is False and "1 of 2 rows below" in haproxy.measured
    assert rules.met is False


def test_tables_render_every_system():
    summaries = report.summarize(measurements())
    table = report.rate_table(summaries, "l7", "req/s")
    assert "| 3 rules | 100 | 100 | 80 | 50 | 1.000 | 1.25 | 2.00 |" in table
    assert "| 5,000 rules | 99 | 100 | 70 | - | 0.990 | 1.41 | - |" in table
    assert "| 5,000 rules | 10 101.0 | 10 000.0 | 14 285.7 | - | 1.010 |" in report.cpu_table(summaries, "l7", "µs")
    assert "| -1.0% (+1.0%) |" in report.costs_table(report.costs(summaries, [("x", "3 rules", "5,000 rules")]))
    assert report.number(12345.6) == "12 346"
    assert "| yes |" in report.targets_table(report.targets(summaries, None, [], "3 rules"))
    assert "| 10.0 : 1 | 10.0 |" in report.mux_table([a_mux("nginx", [200])], {})
    assert "| 3 rules | 50% | 50% | 40% | 25% |" in report.direct_table(summaries, 200.0)
    builds = report.builds_table({"fulcrum": "HAProxy 3.0.11 (OpenSSL 3.5.9, 2 threads by default)"})
    assert "| Fulcrum | HAProxy 3.0.11 (OpenSSL 3.5.9, 2 threads by default) |" in builds


def test_multiplexing_cells_are_medians_over_rounds():
    rounds = [a_mux("fulcrum", [n]) for n in (10, 40, 20)]  # ratios 200, 50, 100
    for number, run in enumerate(rounds, 1):
        run.round = number
    mux = [*rounds, a_mux("haproxy", [10]), a_mux("haproxy", [20])]
    fulcrum, haproxy = report.mux_summaries(mux)
    assert (fulcrum.system, fulcrum.ratio, fulcrum.server_connections) == ("fulcrum", 100.0, 20)
    assert haproxy.ratio == 150.0
    assert report.mux_ratio_to_haproxy(mux) == {200: pytest.approx(100 / 150)}
    table = report.mux_table(mux, {})
    assert "| 20 (40) | 100.0 : 1 | 200.0, 50.0, 100.0 |" in table
    # The target is judged on the longest think time measured, not the best ratio.
    long_think = a_mux("fulcrum", [100], think_ms=60_000)
    assert report.targets([], None, [*mux, long_think], "x")[-1].measured.startswith("20.0:1")


# -- settings and rows ------------------------------------------------------------------------


def test_settings_come_from_flags_then_environment_then_defaults():
    args = parse_args([], {})
    assert (args.rounds, args.duration, args.quick, args.output) == (3, 4.0, False, Path(DEFAULT_OUTPUT))
    assert args.mux_think_ms == (200, 2000) and len(args.cps_sizes) == 6
    quick = parse_args([], {"FULCRUM_BENCH_QUICK": "1"})
    assert (quick.rounds, quick.cps_sizes, quick.mux_think_ms) == (1, (64, 1048576), (200,))
    env = {"FULCRUM_BENCH_ROUNDS": "5", "FULCRUM_BENCH_SECTIONS": "l7,mux", "FULCRUM_BENCH_MUX_THINK_MS": "60000"}
    args = parse_args(["--rounds", "2"], env)
    assert (args.rounds, args.sections, args.mux_think_ms) == (2, ("l7", "mux"), (60000,))
    assert parse_args(["--quick", "--duration", "3"], {}).duration == 3.0


@pytest.mark.parametrize("argv", [["--rounds", "0"], ["--sections", "l8"], ["--cps-sizes", "x"]])
def test_bad_settings_are_refused(argv):
    with pytest.raises(SystemExit):
        parse_args(argv, {})


def test_rows_and_rotation():
    assert [row.listener for row in L7_ROWS] == ["l7-3", "l7-50", "l7-5000", "l7-3", "cookie"]
    rows = cps_rows((64, 1048576))
    assert len(rows) == 10 and rows[1].label == "HTTP/1.0, 1 MiB"
    assert rows[-1].label == "TLS ECDSA P-256 + client cert, 1 MiB" and rows[-1].listener == "tls-ecdsa-client"
    assert rotated([1, 2, 3], 1) == [2, 3, 1] and rotated([1, 2, 3], 3) == [1, 2, 3]
    assert format_size(45056) == "44 KiB" and format_size(64) == "64 B"


# -- the shipped daemons ----------------------------------------------------------------------


def test_daemon_builds_are_read_from_the_binaries_own_words():
    haproxy = shipped.parse_build(
        "haproxy",
        "HAProxy version 3.0.11-1+deb13u5 2026/11/18 - https://haproxy.org/\n"
        "Built with multi-threading support (MAX_TGROUPS=16, MAX_THREADS=256, default=2).\n"
        "Built with OpenSSL version : OpenSSL 3.5.7 9 Jun 2026\n"
        "Running on OpenSSL version : OpenSSL 3.5.9 29 Sep 2026\n",
    )
    assert haproxy.label() == "HAProxy 3.0.11-1+deb13u5 (OpenSSL 3.5.9 29 Sep 2026, 2 threads by default)"
    nginx = shipped.parse_build(
        "nginx",
        "nginx version: nginx/1.26.3\nbuilt with OpenSSL 3.5.7 9 Jun 2026 (running with OpenSSL 3.5.9 29 Sep 2026)\n",
    )
    assert nginx.label() == "nginx 1.26.3 (OpenSSL 3.5.9 29 Sep 2026)"
