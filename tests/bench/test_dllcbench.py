"""Fast checks of the DLLC benchmark's own logic (no root, no traffic): httperf's output
read right, the snapshot compiled as the rows say, the server's queue and shedding, and
the report's medians and goal."""

from __future__ import annotations

import json
import socket

import pytest

from tests.bench import dllcreport
from tests.bench.dllcbench import compile_haproxy, parse_args
from tests.bench.dllcplan import DEFAULT_ROWS, snapshot
from tests.bench.dllcserver import Server
from tests.bench.httperf import httperf_argv, parse_httperf

HTTPERF_OUTPUT = """\
httperf --hog --timeout=3 --client=0/1 --server=10.77.100.20 --port=80 --uri=/ --rate=200 --send-buffer=4096 \
--recv-buffer=16384 --num-conns=2000 --num-calls=1
Maximum connect burst length: 1

Total: connections 2000 requests 2000 replies 1900 test-duration 10.512 s

Connection rate: 190.3 conn/s (5.3 ms/conn, <=42 concurrent connections)
Connection time [ms]: min 9.1 avg 120.5 max 2210.0 median 95.5 stddev 80.1
Connection time [ms]: connect 0.1
Connection length [replies/conn]: 1.000

Request rate: 190.3 req/s (5.3 ms/req)
Request size [B]: 62.0

Reply rate [replies/s]: min 170.2 avg 180.7 max 190.0 stddev 9.9 (2 samples)
Reply time [ms]: response 118.3 transfer 0.0
Reply size [B]: header 120.0 content 5.0 footer 0.0 (total 125.0)
Reply status: 1xx=0 2xx=1500 3xx=0 4xx=0 5xx=400

CPU time [s]: user 1.50 system 7.50 (user 14.3% system 71.3% total 85.6%)
Net I/O: 35.0 KB/s (0.3*10^6 bps)

Errors: total 100 client-timo 90 socket-timo 0 connrefused 0 connreset 10
Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0
"""


def test_httperf_numbers():
    run = parse_httperf(HTTPERF_OUTPUT, 200)
    assert (run.connections, run.replies_2xx, run.errors, run.client_timeouts) == (2000, 1500, 100, 90)
    assert run.reply_rate == pytest.approx(150.0)  # 1500 good replies over 10 s of offered load
    assert run.error_percent == pytest.approx(25.0)  # 100 errors + 400 non-2xx of 2000
    assert run.response_time_ms == 120.5
    assert run.httperf_cpu_s == pytest.approx(9.0)


def test_httperf_argv_one_request_per_connection():
    argv = httperf_argv("10.77.100.20", 80, "/", 150, 10, 3)
    assert "--num-conns=1500" in argv and "--num-calls=1" in argv and "--timeout=3" in argv


def test_snapshot_compiles_to_the_rows():
    config = compile_haproxy(snapshot(DEFAULT_ROWS, 1000))["haproxy.cfg"].decode()
    backends = {block.split("\n", 1)[0]: block for block in config.split("\nbackend ")[1:]}
    assert "balance roundrobin" in backends["pool-rr"] and "balance roundrobin" in backends["pool-wrr"]
    assert "balance leastconn" in backends["pool-wlc"]
    assert "weight 2" in backends["pool-wlc-2-1"] and "weight 1" in backends["pool-wlc-2-1"]
    dllc = backends["pool-dllc"]
    assert "balance leastconn" in dllc
    assert dllc.count("agent-check agent-port 3333 agent-inter 1000ms") == 2
    assert "option httpchk" not in config  # no health checks: the schedulers are under test


def test_loads_or_rates():
    args = parse_args([], environ={})
    assert args.loads == (0.4, 0.8, 1.0, 1.2, 1.6, 2.0) and args.rates is None and args.repeats == 3
    args = parse_args(["--rates", "50,100"], environ={"FULCRUM_BENCH_DLLC_REPEATS": "5"})
    assert args.rates == (50.0, 100.0) and args.repeats == 5


def test_server_queues_then_sheds():
    server = Server("fast", work=1, workers=1, queue=1)
    answers = []
    for _ in range(3):
        ours, theirs = socket.socketpair()
        ours.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        server.admit(theirs)
        answers.append(ours)
    # Two fit (one worker, one waiting); the third is refused at once.
    assert len(server.waiting) == 2 and server.counts["shed"] == 1
    assert answers[2].recv(4096).startswith(b"HTTP/1.1 503 ")
    ours, theirs = socket.socketpair()
    ours.sendall(b"GET /counters HTTP/1.1\r\n\r\n")
    server.admit(theirs)
    assert json.loads(ours.recv(4096).split(b"\r\n\r\n", 1)[1]) == {"served": 0, "shed": 1, "abandoned": 0}


def a_point(row: str, rate: float, reply_rate: float, errors: float, fast: int = 60, slow: int = 40) -> dict:
    servers = {
        name: {"sessions": n, "utilisation": 0.9, "served": n, "shed": 0, "abandoned": 0, "cpu_s": 1.0}
        for name, n in (("fast", fast), ("slow", slow))
    }
    httperf = {"reply_rate": reply_rate, "error_percent": errors, "response_time_ms": 50.0, "httperf_cpu_s": 1.0}
    return {"row": row, "rate": rate, "repeat": 1, "elapsed_s": 10.0, "httperf": httperf, "servers": servers}


def test_goal_at_the_top_rate():
    points = [
        a_point("rr", 200, 100, 50),
        a_point("wlc", 200, 140, 30),
        a_point("dllc", 200, 145, 28),
        a_point("rr", 100, 90, 10),
        a_point("wlc", 100, 100, 0),
        a_point("dllc", 100, 100, 0),
    ]
    cells = dllcreport.summarize(points)
    assert cells[("dllc", 200)].fast_share == pytest.approx(0.6)
    found = dllcreport.goals(cells, ["rr", "wlc", "dllc"], 200, dllcreport.row_labels({}))
    assert [g.met for g in found] == [True, True, True]  # 145/140 >= 1, 145/100 >= 1.2, 28 % lowest
    points.append(a_point("wlc-2-1", 200, 150, 20))
    points.append(a_point("wlc-2-1", 100, 100, 0))
    cells = dllcreport.summarize(points)
    found = dllcreport.goals(cells, ["rr", "wlc", "wlc-2-1", "dllc"], 200, dllcreport.row_labels({}))
    assert found[-1].met is False  # the hand-picked 2:1 row had fewer errors


def test_medians_over_repetitions():
    points = [a_point("rr", 100, value, 0) | {"repeat": i} for i, value in enumerate((80, 95, 90), 1)]
    cell = dllcreport.summarize(points)[("rr", 100)]
    assert (cell.reply_rate, cell.reply_rate_min, cell.reply_rate_max, cell.repeats) == (90, 80, 95, 3)
