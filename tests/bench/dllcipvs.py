"""Seed 002 through IPVS NAT: the measuring half, run inside the QEMU guest (only modules
of Debian's python3-minimal, as the guest has no more: no http.client, no statistics).

tests/vm/guest/bench_dllc.sh builds the topology, loads ip_vs_dllc, makes one IPVS
service per row, starts the two servers in their cgroups and fulcrum-loadd beside them,
and feeds the loads into the module; then it runs this module in the client's network
namespace (``nsenter --net``, so that /sys/fs/cgroup stays visible):

    python3 -m tests.bench.dllcipvs groups --fast 0.3 --slow 0.15
    python3 -m tests.bench.dllcipvs measure --vip 10.77.1.100 --row rr=8001 ... --output F

``groups`` makes the two CPU-capped cgroups (cgroup v2 ``cpu.max``; cpugroups.py) and
prints their directories; ``measure`` finds each server's capacity, sweeps the request
rates like dllcbench.py (repetitions outermost, rows rotated at every rate) and writes
the JSON that ``python -m tests.bench.dllcreport`` turns into the report on the host.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.bench.cpugroups import CpuGroup
from tests.bench.httperf import FD_LIMIT, httperf_argv, parse_httperf

SERVER_NAMES = ("fast", "slow")
CPU_PERIOD_US = 20_000
IDLE_SHARE = 0.05
IDLE_LIMIT_S = 120.0


def group(name: str, cpus: float) -> CpuGroup:
    return CpuGroup(f"fulcrum-bench-{name}", cpus, CPU_PERIOD_US)


def get(address: str, port: int, path: str) -> bytes:
    """GET over a plain socket (HTTP/1.0: the answer ends with the connection); the body."""
    with socket.create_connection((address, port), timeout=60) as conn:
        conn.sendall(f"GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n".encode())
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n", 1)[0]:
        raise SystemExit(f"GET http://{address}:{port}{path}: {head[:100]!r}")
    return body


def get_json(address: str, port: int, path: str) -> dict:
    return json.loads(get(address, port, path))


def counters(address: str, port: int) -> dict[str, int]:
    """The server's own counts (dllcserver.py's /counters)."""
    return get_json(address, port, "/counters")


def wait_idle(groups: dict[str, CpuGroup], settle: float = 0.0) -> None:
    deadline = time.monotonic() + IDLE_LIMIT_S
    while time.monotonic() < deadline:
        before = {name: g.usage().cpu_s for name, g in groups.items()}
        time.sleep(0.5)
        if all((g.usage().cpu_s - before[name]) / 0.5 <= IDLE_SHARE * g.cpus for name, g in groups.items()):
            time.sleep(settle)
            return
    raise SystemExit(f"the servers did not go idle within {IDLE_LIMIT_S} s")


def httperf(address: str, port: int, rate: float, args) -> tuple[dict, float]:
    argv = httperf_argv(address, port, "/", rate, args.seconds, args.timeout)
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=args.seconds * 5 + args.timeout + 300)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    run = parse_httperf(proc.stdout, rate)
    if run.fd_unavailable:
        raise SystemExit(f"httperf ran out of descriptors at {rate:g}/s")
    return run.as_dict(), elapsed


def server_state(args, groups) -> dict[str, tuple]:
    return {name: (groups[name].usage().cpu_s, counters(args.servers[name], args.port)) for name in SERVER_NAMES}


def measure_point(args, groups, key: str, rate: float, repeat: int) -> dict:
    wait_idle(groups, args.settle)
    before = server_state(args, groups)
    run, elapsed = httperf(args.vip, args.rows[key], rate, args)
    run_cpu = {name: groups[name].usage().cpu_s - before[name][0] for name in SERVER_NAMES}
    wait_idle(groups)
    after = server_state(args, groups)
    servers = {}
    for name in SERVER_NAMES:
        own = {what: after[name][1][what] - before[name][1][what] for what in ("served", "shed", "abandoned")}
        servers[name] = own | {
            "cpu_s": after[name][0] - before[name][0],
            "utilisation": run_cpu[name] / (elapsed * groups[name].cpus),
            "sessions": sum(own.values()),  # connections IPVS gave it
        }
    point = {"row": key, "rate": rate, "repeat": repeat, "elapsed_s": elapsed, "httperf": run, "servers": servers}
    point["load_average_1m"] = os.getloadavg()[0]
    h = point["httperf"]
    share = servers["fast"]["sessions"] / max(1, sum(s["sessions"] for s in servers.values()))
    print(
        f"  rep {repeat} rate {rate:>5g} {key:<8} reply {h['reply_rate']:6.1f}/s errors {h['error_percent']:5.1f} % "
        f"fast share {share:4.0%}",
        flush=True,
    )
    return point


def cpu_per_request(args, group: CpuGroup, address: str, requests: int = 20) -> float:
    """CPU seconds one request costs the server, work and overhead (accept, parse, threads:
    much more than the work's share under TCG), from its cgroup over requests sent one
    at a time."""
    before = group.usage().cpu_s
    for _ in range(requests):
        get(address, args.port, "/")
    return (group.usage().cpu_s - before) / requests


def measure_capacity(args, groups) -> dict[str, dict]:
    """Each server alone, offered twice its nominal capacity (its quota over its CPU per
    request): the replies per second it manages."""
    found = {}
    for name in SERVER_NAMES:
        per_request = cpu_per_request(args, groups[name], args.servers[name])
        nominal = groups[name].cpus / per_request
        rate = float(min(round(2 * nominal), int((FD_LIMIT - 24) // args.timeout)))
        run, _ = httperf(args.servers[name], args.port, rate, args)
        found[name] = {
            "nominal": nominal,
            "cpu_ms_per_request": per_request * 1000,
            "offered": rate,
            "reply_rate": run["reply_rate"],
            "httperf": run,
        }
        print(f"  capacity {name}: {run['reply_rate']:.1f} replies/s (nominal {nominal:.0f})", flush=True)
        wait_idle(groups)
    return found


def sweep(args, groups, rates: tuple[float, ...]) -> list[dict]:
    keys = list(args.rows)
    points = []
    for repeat in range(1, args.repeats + 1):
        for i, rate in enumerate(rates):
            shift = (repeat + i) % len(keys)
            for key in keys[shift:] + keys[:shift]:
                points.append(measure_point(args, groups, key, rate, repeat))
    return points


def facts(args, groups) -> dict:
    settings = {
        "rows": list(args.rows),
        "loads": list(args.loads),
        "rates": list(args.rates),
        "seconds": args.seconds,
        "repeats": args.repeats,
        "timeout": args.timeout,
        "workers": args.workers,
        "queue": args.queue,
        "settle": args.settle,
    }
    version = re.search(
        r"httperf-([\d.]+)", subprocess.run(["httperf", "--version"], capture_output=True, text=True).stdout
    )
    cpu_model = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        "?",
    )
    return {
        "date": datetime.date.today().isoformat(),
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model,
        "kernel": platform.release(),
        "balancer": "IPVS NAT",
        "balancer_version": f"IPVS NAT (ipvsadm), ip_vs_dllc {args.dllc_version}",
        "httperf": version.group(1) if version else "?",
        "python": platform.python_version(),
        "settings": settings,
        "work_units": args.work_units,
        "cpu_us_per_unit": args.cpu_us_per_unit,
        "cgroups": {name: {"cpus": g.cpus, "files": g.describe()} for name, g in groups.items()},
        "cgroup_version": 2,
        "labels": {"wlc": "WLC, equal weights", "lc": "LC"},
        "notes": args.note,
        "generated_by": "`tests/vm/guest/bench_dllc.sh` and `tests/bench/dllcipvs.py` in the QEMU guest "
        "(`tests/bench/dllc-ipvs.sh`)",
        "command": "`sudo tests/bench/dllc-ipvs.sh`",
        "load_average_at_start": os.getloadavg(),
    }


def measure(args) -> int:
    groups = {name: group(name, cpus) for name, cpus in (("fast", args.fast), ("slow", args.slow))}
    found = facts(args, groups)
    found["capacity"] = measure_capacity(args, groups)
    capacity = sum(c["reply_rate"] for c in found["capacity"].values())
    rates = tuple(args.rates) or tuple(float(max(1, round(x * capacity))) for x in args.loads)
    if max(rates) * args.timeout >= FD_LIMIT - 24:
        raise SystemExit(f"rate {max(rates):g}/s x timeout {args.timeout:g} s exceeds httperf's descriptors")
    found["rates"] = list(rates)
    points = sweep(args, groups, rates)
    found["load_average_at_end"] = os.getloadavg()
    args.output.write_text(json.dumps({"environment": found, "runs": points}, indent=1) + "\n")
    print(f"dllcipvs: {len(points)} runs written to {args.output}", flush=True)
    return 0


def pairs(text: str) -> tuple[str, str]:
    key, _, value = text.partition("=")
    return key, value


def numbers(text: str) -> list[float]:
    return [float(x) for x in text.replace(",", " ").split()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.bench.dllcipvs", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    groups = sub.add_parser("groups", help="make the two cgroups, print their directories")
    measure_cmd = sub.add_parser("measure", help="capacity, then the sweep; write the JSON")
    for cmd in (groups, measure_cmd):
        cmd.add_argument("--fast", type=float, required=True, help="the fast server's CPU quota, CPUs")
        cmd.add_argument("--slow", type=float, required=True, help="the slow server's CPU quota, CPUs")
    measure_cmd.add_argument("--vip", required=True)
    measure_cmd.add_argument("--row", action="append", type=pairs, required=True, help="ROW=PORT, in order")
    measure_cmd.add_argument("--server", action="append", type=pairs, required=True, help="fast=ADDRESS ...")
    measure_cmd.add_argument("--port", type=int, default=8081, help="the servers' port")
    measure_cmd.add_argument("--loads", type=numbers, default=[0.5, 1, 1.5, 2])
    measure_cmd.add_argument("--rates", type=numbers, default=[])
    measure_cmd.add_argument("--seconds", type=float, default=6)
    measure_cmd.add_argument("--repeats", type=int, default=2)
    measure_cmd.add_argument("--timeout", type=float, default=3)
    measure_cmd.add_argument("--settle", type=float, default=2)
    measure_cmd.add_argument("--workers", type=int, required=True)
    measure_cmd.add_argument("--queue", type=int, required=True)
    measure_cmd.add_argument("--work-units", type=int, required=True)
    measure_cmd.add_argument("--cpu-us-per-unit", type=float, required=True)
    measure_cmd.add_argument("--dllc-version", default="?")
    measure_cmd.add_argument("--note", action="append", default=[], help="a line for the report")
    measure_cmd.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "groups":
        for name, cpus in (("fast", args.fast), ("slow", args.slow)):
            print(group(name, cpus).create().cpu_dir)
        return 0
    args.rows = {key: int(port) for key, port in args.row}
    args.servers = dict(args.server)
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
