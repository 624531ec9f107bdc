"""TCP multiplexing (seeds-digest §001): many keep-alive clients onto few server connections.

wrk (think.lua) holds N keep-alive connections to one listener; each sends a GET for a
1 KiB object (the first within 5 s of connecting), then thinks. Once the clients have
spread out (a ramp of three think times, at least 5 s), ``ss`` in the lb namespace is
sampled once a second: established connections whose local end is the listener (client
side) against established connections to a server's port 80 (server side). Only the proxy
under test runs in the lb namespace while it is measured, and it starts fresh, so every
server-side connection is its own. The ratio is client / server connections per sample;
the median is reported.
"""

from __future__ import annotations

import ipaddress
import math
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.bench.loads import BenchError, parse_result
from tests.harness.lab import SERVER_NET, Lab

LUA_THINK = Path(__file__).with_name("think.lua")
SAMPLE_INTERVAL_S = 1.0
MIN_RAMP_S = 5.0
WRK_THREADS = 2  # wrk spreads the connections evenly over its threads
CONNECTED_SHARE = 0.95
DROPPED_SHARE = 0.01  # of the clients: a proxy closing idle clients would flatter its ratio  # of the clients must be connected in every sample


@dataclass
class MuxResult:
    """One multiplexing run: connection counts per sample and what the clients saw."""

    row: str
    system: str
    clients: int
    think_ms: int
    client_connections: list[int]
    server_connections: list[int]
    requests_per_s: float
    statuses: dict[str, int]
    errors: dict[str, int]
    round: int = 1

    @property
    def ratios(self) -> list[float]:
        return [c / max(s, 1) for c, s in zip(self.client_connections, self.server_connections, strict=True)]

    @property
    def median_ratio(self) -> float:
        return statistics.median(self.ratios)


def count_connections(ss_output: str, listener: str) -> tuple[int, int]:
    """(client side, server side) established connections in ``ss -Htn state established``
    output: local end ``listener`` ("ip:port") vs peer a lab server's port 80."""
    servers = ipaddress.ip_network(SERVER_NET)
    client_side = server_side = 0
    for line in ss_output.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        local, peer = fields[2], fields[3]
        peer_host, _, peer_port = peer.rpartition(":")
        if local == listener:
            client_side += 1
        elif peer_port == "80" and ipaddress.ip_address(peer_host) in servers:
            server_side += 1
    return client_side, server_side


def ramp_seconds(think_ms: int) -> float:
    return max(MIN_RAMP_S, 3 * think_ms / 1000)


def measure(
    lab: Lab,
    row: str,
    system: str,
    address: str,
    path: str,
    clients: int,
    think_ms: int,
    window_s: float,
    round_no: int = 1,
) -> MuxResult:
    ramp = ramp_seconds(think_ms)
    seconds = math.ceil(ramp + window_s + 2)  # wrk reads whole seconds only
    load = [f"-t{WRK_THREADS}", f"-c{clients}", f"-d{seconds}s", "--timeout", "10s"]
    script_args = [path, str(think_ms), str(clients // WRK_THREADS)]
    argv = ["wrk", *load, "-s", str(LUA_THINK), f"http://{address}", "--", *script_args]
    wrk = subprocess.Popen(
        ["ip", "netns", "exec", lab.ns("cl"), *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        time.sleep(ramp)
        samples = []
        deadline = time.monotonic() + window_s
        while time.monotonic() < deadline and wrk.poll() is None:
            ss = lab.exec("lb", ["ss", "-Htn", "state", "established"], capture_output=True, text=True, timeout=10)
            samples.append(count_connections(ss.stdout, address))
            time.sleep(SAMPLE_INTERVAL_S)
        out, _ = wrk.communicate(timeout=seconds + 60)
    finally:
        if wrk.poll() is None:
            wrk.kill()
            wrk.wait()
    if wrk.returncode != 0 or not samples:
        raise BenchError(f"mux {row} {system}: wrk exit {wrk.returncode}, {len(samples)} samples: {out[-1000:]}")
    result = parse_result(out)
    return MuxResult(
        row=row,
        system=system,
        clients=clients,
        think_ms=think_ms,
        client_connections=[c for c, _ in samples],
        server_connections=[s for _, s in samples],
        requests_per_s=result["requests"] / (result["duration_us"] / 1e6),
        statuses=result["statuses"],
        errors=result["errors"],
        round=round_no,
    )


def check(result: MuxResult) -> None:
    where = f"mux {result.row} {result.system}"
    if set(result.statuses) != {"200"}:
        raise BenchError(f"{where}: statuses {result.statuses}")
    drops = sum(n for kind, n in result.errors.items() if kind != "status")
    if drops > DROPPED_SHARE * result.clients:
        raise BenchError(f"{where}: connections dropped or timed out: {result.errors}")
    low = min(result.client_connections)
    if low < CONNECTED_SHARE * result.clients:
        raise BenchError(f"{where}: only {low} of {result.clients} clients connected in a sample")
