"""WebBench-style benchmark: the seeds-digest §000 file mix through three paths.

    direct     client -> s1, routed by the lb namespace (no proxy)
    fulcrum    client -> HAProxy VIP 10.77.100.10 -> pool {s1}        (proxy overhead)
    fulcrum-3  client -> HAProxy VIP 10.77.100.11 -> pool {s1,s2,s3}  (informational)

The HAProxy configuration comes from Fulcrum's compiler (api/compiler), not by hand.
wrk runs in the client namespace with tests/bench/webbench.lua. After a warm-up, the
paths are measured in alternating rounds (rotated order), and the median req/s per path
is reported with its ratio to direct. The numbers are reported, never asserted; the run
fails only if traffic did not flow or answers other than the mix's expected 404s appear.

    sudo .venv/bin/python -m tests.bench.webbench [--rounds 5 --duration 10 ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.harness.lab import SERVER_ADDRS, Lab, LabError
from tests.harness.webbench import WEBBENCH_MIX, expected_not_found_share

REPO_ROOT = Path(__file__).resolve().parents[2]
LUA_SCRIPT = Path(__file__).with_name("webbench.lua")
DEFAULT_OUTPUT = REPO_ROOT / "tests" / "artifacts" / "bench" / "webbench.json"
RESULT_MARKER = "WEBBENCH_RESULT "

SINGLE_VIP_HOST, TRIPLE_VIP_HOST = 10, 11
PATH_NAMES = ("direct", "fulcrum", "fulcrum-3")
NOT_FOUND_TOLERANCE = 0.005  # absolute, around the expected 2/99
SOCKET_ERROR_TOLERANCE = 0.001  # of requests; wrk may cut a few connections at the end
READY_TIMEOUT_S = 15.0
HEALTH_CHECK = {
    "type": "http",
    "path": "/health",
    "expected_status": 200,
    "interval_ms": 2000,
    "timeout_ms": 1000,
    "rise": 2,
    "fall": 3,
}


class BenchError(RuntimeError):
    """The setup is broken: the numbers would be meaningless."""


@dataclass
class RunResult:
    """One wrk run of one path, as reported by webbench.lua's done()."""

    path: str
    round: int  # 0 = warm-up
    requests: int
    duration_us: int
    bytes: int
    errors: dict[str, int]
    latency_us: dict[str, int]
    statuses: dict[str, int]
    servers: dict[str, int]

    @property
    def requests_per_s(self) -> float:
        return self.requests / (self.duration_us / 1e6)

    @property
    def megabytes_per_s(self) -> float:
        return self.bytes / (self.duration_us / 1e6) / 1e6


@dataclass
class PathSummary:
    """Medians over the measured rounds of one path."""

    path: str
    url: str
    median_rps: float
    min_rps: float
    max_rps: float
    median_mbps: float
    median_latency_p50_us: float
    median_latency_p99_us: float
    ratio_to_direct: float | None = None
    servers: dict[str, int] = field(default_factory=dict)


# -- HAProxy from the compiler --------------------------------------------------------------


def bench_snapshot(servers: dict[str, str]) -> dict:
    """The revision the benchmark compiles: one VIP per pool, same health check."""

    def pool(name: str, members: list[str]) -> dict:
        return {
            "name": name,
            "algorithm": "round-robin",
            "health_check": HEALTH_CHECK,
            "members": [
                {"name": m, "address": servers[m], "port": 80, "weight": 1, "state": "enabled"} for m in members
            ],
        }

    def service(name: str, vip_host: int) -> dict:
        return {
            "name": name,
            "vip": Lab.vip(vip_host),
            "port": 80,
            "protocol": "http",
            "enabled": True,
            "default_pool": name,
        }

    return {
        "revision": 1,
        "virtual_services": [service("web", SINGLE_VIP_HOST), service("web3", TRIPLE_VIP_HOST)],
        "pools": [pool("web", ["s1"]), pool("web3", ["s1", "s2", "s3"])],
    }


def compile_haproxy_config(snapshot: dict) -> bytes:
    """Run the real compiler: snapshot_from_dict -> verify -> render_haproxy."""
    api_dir = str(REPO_ROOT / "api")
    if api_dir not in sys.path:
        sys.path.insert(0, api_dir)
    from compiler import render_haproxy, snapshot_from_dict, verify

    snap = snapshot_from_dict(snapshot)
    verify(snap)
    return render_haproxy(snap, "bench")["haproxy.cfg"]


class HaproxyInLab:
    """HAProxy master-worker in the lab's lb namespace, running the compiled config unchanged."""

    def __init__(self, lab: Lab, config: bytes):
        self.lab = lab
        self.run_dir = Path(tempfile.mkdtemp(prefix="fulcrum-bench-haproxy-"))
        self.config_path = self.run_dir / "haproxy.cfg"
        self.config_path.write_bytes(config)
        self.env = {**os.environ, "FULCRUM_RUN_DIR": str(self.run_dir)}
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> HaproxyInLab:
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start(self) -> None:
        check = subprocess.run(
            [*self.lab.lb_exec_prefix, "haproxy", "-c", "-f", str(self.config_path)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if check.returncode != 0:
            raise BenchError(f"haproxy -c rejected the compiled config: {check.stdout}{check.stderr}")
        with open(self.run_dir / "haproxy.log", "wb") as log:
            self.proc = subprocess.Popen(
                [*self.lab.lb_exec_prefix, "haproxy", "-W", "-f", str(self.config_path)],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def __exit__(self, *exc_info) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def wait_until_serving(lab: Lab, haproxy: HaproxyInLab, url: str, expected_servers: set[str]) -> None:
    """Poll the VIP until every expected server has answered through it."""
    seen: set[str] = set()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline and haproxy.running():
        status, _, headers = lab.client_get(url, timeout=1)
        if status == 200:
            seen.add(headers["X-Server"])
            if seen >= expected_servers:
                return
        else:
            time.sleep(0.1)
    log = (haproxy.run_dir / "haproxy.log").read_text(errors="replace")[-2000:]
    raise BenchError(f"{url}: only {sorted(seen)} of {sorted(expected_servers)} answered; haproxy: {log}")


# -- wrk ------------------------------------------------------------------------------------


def run_wrk(lab: Lab, path: str, url: str, args: argparse.Namespace, seconds: float, round_no: int) -> RunResult:
    mix = [f"{entry.path}={entry.share_percent}" for entry in WEBBENCH_MIX]
    load = [f"-t{args.threads}", f"-c{args.connections}", f"-d{seconds:g}s", "--timeout", "2s"]
    argv = ["wrk", *load, "-s", str(LUA_SCRIPT), url, "--", *mix]
    proc = lab.exec("cl", argv, capture_output=True, text=True, timeout=seconds + 60)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_MARKER)]
    if proc.returncode != 0 or not lines:
        raise BenchError(f"wrk {path} failed (exit {proc.returncode}): {proc.stdout}{proc.stderr}")
    data = json.loads(lines[-1].removeprefix(RESULT_MARKER))
    return RunResult(path=path, round=round_no, **data)


def check_run(run: RunResult, expected_servers: set[str]) -> None:
    """Refuse numbers from a broken setup: no traffic, wrong answers, wrong servers."""
    where = f"{run.path} round {run.round}"
    if run.requests == 0:
        raise BenchError(f"{where}: no request completed")
    not_found = run.statuses.get("404", 0)
    unexpected = {s: n for s, n in run.statuses.items() if s not in ("200", "404")}
    if unexpected:
        raise BenchError(f"{where}: unexpected statuses {unexpected} of {run.requests} requests")
    share = not_found / run.requests
    if abs(share - expected_not_found_share()) > NOT_FOUND_TOLERANCE:
        raise BenchError(f"{where}: 404 share {share:.2%}, expected {expected_not_found_share():.2%}")
    socket_errors = sum(n for kind, n in run.errors.items() if kind != "status")
    if socket_errors > SOCKET_ERROR_TOLERANCE * run.requests:
        raise BenchError(f"{where}: socket errors {run.errors} of {run.requests} requests")
    if set(run.servers) != expected_servers:
        raise BenchError(f"{where}: answered by {run.servers}, expected {sorted(expected_servers)}")


# -- the benchmark ----------------------------------------------------------------------------


def path_urls(lab: Lab) -> dict[str, str]:
    return {
        "direct": f"http://{lab.servers['s1']}",
        "fulcrum": f"http://{lab.vip(SINGLE_VIP_HOST)}",
        "fulcrum-3": f"http://{lab.vip(TRIPLE_VIP_HOST)}",
    }


EXPECTED_SERVERS = {"direct": {"s1"}, "fulcrum": {"s1"}, "fulcrum-3": {"s1", "s2", "s3"}}


def measure(lab: Lab, haproxy: HaproxyInLab, args: argparse.Namespace) -> list[RunResult]:
    urls = path_urls(lab)
    for path in args.paths:
        wait_until_serving(lab, haproxy, urls[path] + "/", EXPECTED_SERVERS[path])
    runs = []
    for path in args.paths:
        if args.warmup > 0:
            check_run(run_wrk(lab, path, urls[path], args, args.warmup, 0), EXPECTED_SERVERS[path])
    for round_no in range(1, args.rounds + 1):
        # Rotate the order so no path always runs first (or right after another).
        shift = (round_no - 1) % len(args.paths)
        for path in args.paths[shift:] + args.paths[:shift]:
            run = run_wrk(lab, path, urls[path], args, args.duration, round_no)
            check_run(run, EXPECTED_SERVERS[path])
            runs.append(run)
            print(f"  round {round_no} {path:<10} {run.requests_per_s:>10.0f} req/s", file=sys.stderr, flush=True)
        if not haproxy.running():
            raise BenchError("haproxy exited during the benchmark")
    return runs


def summarize(runs: list[RunResult], urls: dict[str, str], paths: list[str]) -> list[PathSummary]:
    summaries = []
    for path in paths:
        mine = [r for r in runs if r.path == path]
        rates = [r.requests_per_s for r in mine]
        servers: dict[str, int] = {}
        for r in mine:
            for name, n in r.servers.items():
                servers[name] = servers.get(name, 0) + n
        summaries.append(
            PathSummary(
                path=path,
                url=urls[path],
                median_rps=statistics.median(rates),
                min_rps=min(rates),
                max_rps=max(rates),
                median_mbps=statistics.median(r.megabytes_per_s for r in mine),
                median_latency_p50_us=statistics.median(r.latency_us["p50"] for r in mine),
                median_latency_p99_us=statistics.median(r.latency_us["p99"] for r in mine),
                servers=dict(sorted(servers.items())),
            )
        )
    direct = next((s for s in summaries if s.path == "direct"), None)
    for summary in summaries:
        if direct is not None:
            summary.ratio_to_direct = summary.median_rps / direct.median_rps
    return summaries


def format_table(summaries: list[PathSummary]) -> str:
    header = f"{'path':<10} {'req/s median':>13} {'min':>10} {'max':>10} {'MB/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'vs direct':>9}"
    lines = [header, "-" * len(header)]
    for s in summaries:
        ratio = f"{s.ratio_to_direct:.3f}" if s.ratio_to_direct is not None else "-"
        lines.append(
            f"{s.path:<10} {s.median_rps:>13.0f} {s.min_rps:>10.0f} {s.max_rps:>10.0f} {s.median_mbps:>8.1f} "
            f"{s.median_latency_p50_us / 1000:>7.2f} {s.median_latency_p99_us / 1000:>7.2f} {ratio:>9}"
        )
    return "\n".join(lines)


def tool_version(argv: list[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    return (proc.stdout + proc.stderr).strip().splitlines()[0]


def environment(args: argparse.Namespace) -> dict:
    return {
        "cpus": os.cpu_count(),
        # Other work on the machine skews every path; the load average tells whether it did.
        "load_average_at_end": os.getloadavg(),
        "kernel": platform.release(),
        "haproxy": tool_version(["haproxy", "-v"]),
        "nginx": tool_version(["nginx", "-v"]),
        "wrk": tool_version(["wrk", "-v"]),
        "rounds": args.rounds,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "threads": args.threads,
        "connections": args.connections,
        "mix": [{"path": f.path, "size": f.size, "weight": f.share_percent} for f in WEBBENCH_MIX],
        "expected_404_share": expected_not_found_share(),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.webbench", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds per path (default 5)")
    parser.add_argument("--duration", type=float, default=10, help="seconds per measured run (default 10)")
    parser.add_argument("--warmup", type=float, default=3, help="seconds of warm-up per path, 0 = none (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    parser.add_argument("--connections", type=int, default=50, help="wrk connections (default 50)")
    parser.add_argument("--paths", nargs="+", choices=PATH_NAMES, default=list(PATH_NAMES))
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"JSON report (default {DEFAULT_OUTPUT.relative_to(REPO_ROOT)})",
    )
    parser.add_argument("--prefix", default=None, help="lab namespace prefix (default: random)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.duration <= 0 or args.threads < 1 or args.connections < args.threads:
        parser.error("need rounds >= 1, duration > 0, threads >= 1, connections >= threads")
    return args


def write_report(path: Path, environment_facts: dict, summaries, runs, config: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "environment": environment_facts,
        "summary": [asdict(s) for s in summaries],
        "runs": [asdict(r) | {"requests_per_s": r.requests_per_s, "megabytes_per_s": r.megabytes_per_s} for r in runs],
        "haproxy_cfg": config.decode(),
    }
    path.write_text(json.dumps(report, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("webbench: needs root (network namespaces)", file=sys.stderr)
        return 2
    config = compile_haproxy_config(bench_snapshot(SERVER_ADDRS))
    facts = {"load_average_at_start": os.getloadavg()}
    try:
        with Lab(args.prefix) as lab, HaproxyInLab(lab, config) as haproxy:
            runs = measure(lab, haproxy, args)
            urls = path_urls(lab)
    except (BenchError, LabError) as err:
        print(f"webbench: FAILED: {err}", file=sys.stderr)
        return 1
    summaries = summarize(runs, urls, args.paths)
    print(format_table(summaries))
    write_report(args.output, environment(args) | facts, summaries, runs, config)
    print(f"report: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
