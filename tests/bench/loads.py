"""Load generators run from the lab's client namespace, and the checks on what they saw.

- wrk with webbench.lua: request mixes over keep-alive or HTTP/1.0 connections; counts
  statuses, which server answered which content type, and Set-Cookie headers.
- ``openssl s_time -new``: full TLS handshakes, one GET per connection, optionally with a
  client certificate (wrk cannot present one); several processes in parallel.

A check refuses a run whose traffic did not go where the configuration says, so a broken
setup fails instead of looking fast. The numbers themselves are never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.harness.lab import Lab

LUA_MIX = Path(__file__).with_name("webbench.lua")
RESULT_MARKER = "WEBBENCH_RESULT "
SOCKET_ERROR_TOLERANCE = 0.001  # of requests; wrk may cut a few connections at the end
NOT_FOUND_TOLERANCE = 0.005  # absolute, around the mix's expected share
SET_COOKIE_TOLERANCE = 0.01  # absolute, around the new-visitor share
S_TIME_LIMIT_S = 600  # s_time is stopped after its window; this only bounds a stray one
S_TIME_START_TIMEOUT_S = 10


class BenchError(RuntimeError):
    """The setup is broken: the numbers would be meaningless."""


@dataclass
class Measurement:
    """One timed run of one row on one system."""

    section: str  # "l7" (WebBench mix), "cps" (connections per second)
    row: str
    system: str
    round: int  # 0 = warm-up
    rate: float  # requests/s (l7) or connections/s (cps)
    detail: dict = field(default_factory=dict)  # the load generator's counters
    cpu_us_per_op: float | None = None  # the proxy's CPU time per request or connection


# -- wrk ------------------------------------------------------------------------------------


def wrk_script_args(
    mix: dict[str, int], version: str = "1.1", cookies: dict[str, tuple[str, ...]] | None = None, new_visitor: int = 0
) -> list[str]:
    """Arguments for webbench.lua (see its header)."""
    args = [f"{path}={weight}" for path, weight in mix.items()]
    if version != "1.1":
        args.append(f"version={version}")
    for name, values in (cookies or {}).items():
        args.append(f"cookie={name}:{','.join(values)}")
    if new_visitor:
        args.append(f"new-visitor={new_visitor}")
    return args


def parse_result(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith(RESULT_MARKER)]
    if not lines:
        raise BenchError(f"no {RESULT_MARKER.strip()} line in: {stdout[-2000:]}")
    return json.loads(lines[-1].removeprefix(RESULT_MARKER))


def wrk_argv(url: str, script: Path, script_args: list[str], threads: int, connections: int, seconds: float):
    # wrk reads whole seconds only.
    load = [f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "2s"]
    return ["wrk", *load, "-s", str(script), url, "--", *script_args]


def run_wrk(
    lab: Lab,
    url: str,
    script_args: list[str],
    threads: int,
    connections: int,
    seconds: float,
    cpu_seconds: Callable[[], float] | None = None,
) -> dict:
    """One wrk run; ``cpu_seconds`` reads the proxy's CPU time before and after it."""
    argv = wrk_argv(url, LUA_MIX, script_args, threads, connections, seconds)
    cpu_start = cpu_seconds() if cpu_seconds else 0.0
    proc = lab.exec("cl", argv, capture_output=True, text=True, timeout=seconds + 60)
    cpu_end = cpu_seconds() if cpu_seconds else 0.0
    if proc.returncode != 0:
        raise BenchError(f"wrk {url} failed (exit {proc.returncode}): {proc.stdout}{proc.stderr}")
    result = parse_result(proc.stdout)
    result["requests_per_s"] = result["requests"] / (result["duration_us"] / 1e6)
    if cpu_seconds:
        result["proxy_cpu_s"] = cpu_end - cpu_start
    return result


def check_mix(
    where: str,
    result: dict,
    routes: dict[str, frozenset[str]],
    not_found_share: float,
    set_cookie_share: float = 0.0,
) -> None:
    """Refuse a mix run: no traffic, wrong statuses, socket errors, or answers from servers
    outside the pool its content type routes to (or a pool member that never answered)."""
    requests = result["requests"]
    if requests == 0:
        raise BenchError(f"{where}: no request completed")
    unexpected = {s: n for s, n in result["statuses"].items() if s not in ("200", "404")}
    if unexpected:
        raise BenchError(f"{where}: unexpected statuses {unexpected} of {requests} requests")
    share = result["statuses"].get("404", 0) / requests
    if abs(share - not_found_share) > NOT_FOUND_TOLERANCE:
        raise BenchError(f"{where}: 404 share {share:.2%}, expected {not_found_share:.2%}")
    check_socket_errors(where, result)
    seen: dict[str, set[str]] = {}
    for route in result["routes"]:
        kind, _, server = route.partition(" ")
        seen.setdefault(kind, set()).add(server)
    if seen != {kind: set(servers) for kind, servers in routes.items()}:
        raise BenchError(f"{where}: answered {result['routes']}, expected content type -> servers {routes}")
    cookie_share = result.get("set_cookies", 0) / requests
    if abs(cookie_share - set_cookie_share) > SET_COOKIE_TOLERANCE:
        raise BenchError(f"{where}: Set-Cookie on {cookie_share:.2%} of answers, expected {set_cookie_share:.2%}")


def check_socket_errors(where: str, result: dict) -> None:
    socket_errors = sum(n for kind, n in result["errors"].items() if kind != "status")
    if socket_errors > SOCKET_ERROR_TOLERANCE * max(result["requests"], 1):
        raise BenchError(f"{where}: socket errors {result['errors']} of {result['requests']} requests")


def check_sized(where: str, result: dict, size: int, servers: set[str]) -> None:
    """Refuse a one-file run: every answer 200 from the whole pool, with the whole body."""
    requests = result["requests"]
    if requests == 0 or set(result["statuses"]) != {"200"}:
        raise BenchError(f"{where}: statuses {result['statuses']} of {requests} requests")
    check_socket_errors(where, result)
    if set(result["servers"]) != servers:
        raise BenchError(f"{where}: answered by {result['servers']}, expected {sorted(servers)}")
    if result["bytes"] < requests * size:
        raise BenchError(f"{where}: {result['bytes']} bytes for {requests} answers of {size} bytes")


# -- openssl s_time ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientCertificate:
    cert: Path
    key: Path


def s_time_argv(address: str, path: str, seconds: int, client: ClientCertificate | None) -> list[str]:
    argv = ["openssl", "s_time", "-connect", address, "-new", "-time", str(seconds), "-www", path]
    if client is not None:
        argv += ["-cert", str(client.cert), "-key", str(client.key)]
    return argv


class STimeProgress:
    """What one s_time process printed, with the time each connection finished.

    After its "Collecting connection statistics" line, s_time prints one character per
    connection as it completes ('*' full handshake, 'r' resumed) up to the next newline;
    each read of that line is recorded as (time, full, resumed)."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, int, int]] = []
        self.tail = b""
        self._newlines = 0

    def feed(self, chunk: bytes, now: float) -> None:
        full = resumed = 0
        parts = chunk.split(b"\n")
        for i, part in enumerate(parts):
            if self._newlines == 1:
                full, resumed = full + part.count(b"*"), resumed + part.count(b"r")
            if i < len(parts) - 1:
                self._newlines += 1
        if full or resumed:
            self.marks.append((now, full, resumed))
        self.tail = (self.tail + chunk)[-4096:]

    def read_all(self, proc: subprocess.Popen) -> None:
        while chunk := os.read(proc.stdout.fileno(), 65536):
            self.feed(chunk, time.monotonic())


def count_marks(per_process: list[list[tuple[float, int, int]]], start: float, end: float) -> tuple[int, int]:
    """(full, resumed) handshakes recorded in the window (start, end]."""
    inside = [m for marks in per_process for m in marks if start < m[0] <= end]
    return sum(m[1] for m in inside), sum(m[2] for m in inside)


def _wait_until_connecting(procs: list[subprocess.Popen], progress: list[STimeProgress]) -> None:
    deadline = time.monotonic() + S_TIME_START_TIMEOUT_S
    while not all(p.marks for p in progress):
        if any(proc.poll() is not None for proc in procs) or time.monotonic() > deadline:
            tails = " | ".join(p.tail.decode(errors="replace")[-300:] for p in progress)
            raise BenchError(f"s_time did not start connecting: {tails}")
        time.sleep(0.01)


def run_s_time(
    lab: Lab,
    address: str,
    path: str,
    seconds: float,
    processes: int,
    client: ClientCertificate | None,
    cpu_seconds: Callable[[], float] | None = None,
) -> dict:
    """``processes`` s_time loops at once; once every one has completed a connection, count
    the handshakes they all complete in the next ``seconds``, then stop them. (s_time's own
    clock has whole seconds, so its -time is only an upper bound here.) ``cpu_seconds``
    reads the proxy's CPU time at both ends of that window."""
    argv = ["ip", "netns", "exec", lab.ns("cl"), *s_time_argv(address, path, S_TIME_LIMIT_S, client)]
    procs = [
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(processes)
    ]
    progress = [STimeProgress() for _ in procs]
    readers = [
        threading.Thread(target=p.read_all, args=(proc,), daemon=True) for p, proc in zip(progress, procs, strict=True)
    ]
    for reader in readers:
        reader.start()
    try:
        _wait_until_connecting(procs, progress)
        cpu_start, start = cpu_seconds() if cpu_seconds else 0.0, time.monotonic()
        time.sleep(seconds)
        cpu_end, end = cpu_seconds() if cpu_seconds else 0.0, time.monotonic()
        for proc, seen in zip(procs, progress, strict=True):
            if proc.poll() is not None:
                output = seen.tail.decode(errors="replace")[-1000:]
                raise BenchError(f"s_time {address}{path} stopped (exit {proc.returncode}): {output}")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc, reader in zip(procs, readers, strict=True):
            proc.wait(timeout=10)
            reader.join(timeout=10)
    full, resumed = count_marks([p.marks for p in progress], start, end)
    result = {"connections": full + resumed, "resumed": resumed, "window_s": end - start}
    result["connections_per_s"] = result["connections"] / result["window_s"]
    if cpu_seconds:
        result["proxy_cpu_s"] = cpu_end - cpu_start
    return result


def check_s_time(where: str, result: dict) -> None:
    if result["connections"] == 0 or result["resumed"]:
        raise BenchError(f"{where}: {result['connections']} handshakes, {result['resumed']} of them resumed")
