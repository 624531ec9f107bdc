"""httperf, the study's load generator: one open-loop run at a fixed connection rate.

httperf opens ``rate`` new connections per second whatever the answers do (an open loop:
an overloaded server sees the same offered load, unlike a closed-loop client that waits),
sends one request on each and counts what came back within ``timeout`` seconds.

From one run (``HttperfRun``):

- **reply rate** = 2xx replies / (connections / rate): the successful answers per second
  of offered load. httperf's own "Reply rate" samples every 5 s of the test duration,
  which stretches past the last connection by up to ``timeout``; it is kept beside.
- **error rate** = (connections without a 2xx reply) / connections, in percent: httperf's
  errors (client timeouts, refused, reset, no file descriptor or port) plus non-2xx replies.
- **response time** = httperf's mean connection time of the successful connections
  (connect + request + reply), in ms. Timed-out connections are not in it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

# httperf selects on at most FD_SETSIZE (1024) descriptors: rate x timeout must stay below.
FD_LIMIT = 1024

_TOTAL = re.compile(r"^Total: connections (\d+) requests (\d+) replies (\d+) test-duration ([\d.]+) s", re.M)
_CONN_TIME = re.compile(r"^Connection time \[ms\]: min ([\d.]+) avg ([\d.]+) max ([\d.]+) median ([\d.]+)", re.M)
_REPLY_RATE = re.compile(r"^Reply rate \[replies/s\]: min ([\d.]+) avg ([\d.]+) max ([\d.]+)", re.M)
_REPLY_TIME = re.compile(r"^Reply time \[ms\]: response ([\d.]+) transfer ([\d.]+)", re.M)
_STATUS = re.compile(r"^Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) 4xx=(\d+) 5xx=(\d+)", re.M)
_ERRORS1 = re.compile(
    r"^Errors: total (\d+) client-timo (\d+) socket-timo (\d+) connrefused (\d+) connreset (\d+)", re.M
)
_ERRORS2 = re.compile(r"^Errors: fd-unavail (\d+) addrunavail (\d+) ftab-full (\d+) other (\d+)", re.M)
_CPU = re.compile(r"^CPU time \[s\]: user ([\d.]+) system ([\d.]+)", re.M)


class HttperfOutputError(ValueError):
    """httperf's output lacks a line the benchmark needs."""


def httperf_argv(server: str, port: int, uri: str, rate: float, seconds: float, timeout_s: float) -> list[str]:
    """One request per connection, ``rate`` connections/s for ``seconds``."""
    connections = max(1, round(rate * seconds))
    return [
        "httperf",
        "--hog",  # any local port: thousands of connections per run
        f"--server={server}",
        f"--port={port}",
        f"--uri={uri}",
        f"--rate={rate:g}",
        f"--num-conns={connections}",
        "--num-calls=1",
        f"--timeout={timeout_s:g}",
    ]


@dataclass
class HttperfRun:
    """httperf's counters for one run, and the three numbers the benchmark reports."""

    rate: float
    connections: int
    replies: int
    replies_2xx: int
    errors: int
    client_timeouts: int
    refused: int
    reset: int
    fd_unavailable: int
    other_errors: int
    test_duration_s: float
    connection_ms_avg: float
    connection_ms_median: float
    connection_ms_max: float
    reply_rate_sampled: float
    response_ms: float
    httperf_cpu_s: float

    @property
    def reply_rate(self) -> float:
        return self.replies_2xx / (self.connections / self.rate)

    @property
    def error_percent(self) -> float:
        return (self.connections - self.replies_2xx) / self.connections * 100

    @property
    def response_time_ms(self) -> float | None:
        return self.connection_ms_avg if self.replies_2xx else None

    def as_dict(self) -> dict:
        return asdict(self) | {
            "reply_rate": self.reply_rate,
            "error_percent": self.error_percent,
            "response_time_ms": self.response_time_ms,
        }


def _match(pattern: re.Pattern, output: str) -> tuple[float, ...]:
    found = pattern.search(output)
    if found is None:
        raise HttperfOutputError(f"httperf output has no line matching {pattern.pattern!r}:\n{output[-2000:]}")
    return tuple(float(x) for x in found.groups())


def parse_httperf(output: str, rate: float) -> HttperfRun:
    connections, _requests, replies, duration = _match(_TOTAL, output)
    _min, conn_avg, conn_max, conn_median = _match(_CONN_TIME, output)
    _1xx, ok, _3xx, _4xx, _5xx = _match(_STATUS, output)
    errors, client_timo, _socket_timo, refused, reset = _match(_ERRORS1, output)
    fd_unavail, addr_unavail, ftab_full, other = _match(_ERRORS2, output)
    user, system = _match(_CPU, output)
    return HttperfRun(
        rate=rate,
        connections=int(connections),
        replies=int(replies),
        replies_2xx=int(ok),
        errors=int(errors),
        client_timeouts=int(client_timo),
        refused=int(refused),
        reset=int(reset),
        fd_unavailable=int(fd_unavail),
        other_errors=int(addr_unavail + ftab_full + other),
        test_duration_s=duration,
        connection_ms_avg=conn_avg,
        connection_ms_median=conn_median,
        connection_ms_max=conn_max,
        reply_rate_sampled=_match(_REPLY_RATE, output)[1],
        response_ms=_match(_REPLY_TIME, output)[0],
        httperf_cpu_s=user + system,
    )
