"""What the DLLC benchmark measures (seed 002), as plain data: the rows, the two servers,
the snapshot Fulcrum compiles for them. Pure: no processes, no files.

Every row is one virtual service of one snapshot, on its own VIP, in front of the same
two real servers (the "fast" one with twice the CPU quota of the "slow" one):

    row       API algorithm          weights fast:slow   HAProxy
    rr        round-robin            1:1 (ignored)       balance roundrobin
    wrr       weighted-round-robin   1:1                 balance roundrobin (same as rr)
    lc        least-connections-unweighted               (IPVS only: lc)
    wlc       least-connections      1:1                 balance leastconn (= LC)
    wrr-2-1   weighted-round-robin   2:1 (hand-picked)   balance roundrobin, weights 2:1
    wlc-2-1   least-connections      2:1 (hand-picked)   balance leastconn, weights 2:1
    dllc      dynamic-least-load     1:1                 balance leastconn + fulcrum-loadd's
                                                         agent-check setting the weights

Equal weights are the realistic case (the operator does not know the capacities); the
2:1 rows are the best case the study's WRR and WLC were given, the true capacity ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.harness.lab import SERVER_ADDRS

SERVER_PORT = 8081
VIP_BASE = 20  # row i listens on 10.77.100.(VIP_BASE + i):80
# fast in the lab's s1 namespace, slow in s2's (the lab's nginx keeps port 80 there).
SERVERS = {"fast": "s1", "slow": "s2"}
DLLC_ALGORITHM = "dynamic-least-load"


@dataclass(frozen=True)
class Row:
    """One scheduler as an operator would configure it."""

    key: str
    label: str
    algorithm: str
    weights: tuple[int, int] = (1, 1)  # fast, slow

    @property
    def dllc(self) -> bool:
        return self.algorithm == DLLC_ALGORITHM


ROWS = {
    row.key: row
    for row in (
        Row("rr", "RR", "round-robin"),
        Row("wrr", "WRR, equal weights", "weighted-round-robin"),
        Row("lc", "LC", "least-connections-unweighted"),  # IPVS only: proxy pools refuse it
        Row("wlc", "LC = WLC, equal weights", "least-connections"),
        Row("wrr-2-1", "WRR, hand-picked weights 2:1", "weighted-round-robin", (2, 1)),
        Row("wlc-2-1", "WLC, hand-picked weights 2:1", "least-connections", (2, 1)),
        Row("dllc", "DLLC", DLLC_ALGORITHM),
    )
}
DEFAULT_ROWS = ("rr", "wrr", "wlc", "wlc-2-1", "dllc")
# The goal compares DLLC with these rows (the realistic, equal-weight WLC and plain RR).
GOAL_WLC, GOAL_RR, REFERENCE_WLC = "wlc", "rr", "wlc-2-1"
GOAL_VS_WLC, GOAL_VS_RR = 1.0, 1.2


def server_address(server: str) -> str:
    return SERVER_ADDRS[SERVERS[server]]


def vip(rows: tuple[str, ...], key: str) -> str:
    return f"10.77.100.{VIP_BASE + rows.index(key)}"


def pool(row: Row, feedback_interval_ms: int) -> dict:
    """No health check: the schedulers are under test, and a saturated server's checks
    would time out and take it out of the pool (DLLC's agent-check runs on its own)."""
    members = [
        {"name": name, "address": server_address(name), "port": SERVER_PORT, "weight": weight, "state": "enabled"}
        for name, weight in zip(SERVERS, row.weights, strict=True)
    ]
    settings = {"feedback_interval_ms": feedback_interval_ms} if row.dllc else {}
    return {"name": row.key, "algorithm": row.algorithm, "members": members, **settings}


def snapshot(rows: tuple[str, ...], feedback_interval_ms: int) -> dict:
    """The revision Fulcrum compiles: one HTTP service per row."""
    services = [
        {
            "name": key,
            "vip": vip(rows, key),
            "port": 80,
            "protocol": "http",
            "enabled": True,
            "default_pool": key,
        }
        for key in rows
    ]
    return {
        "revision": 1,
        "virtual_services": services,
        "pools": [pool(ROWS[key], feedback_interval_ms) for key in rows],
        "certificates": [],
    }
