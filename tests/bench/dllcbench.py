"""Seed 002, the DLLC study's experiment through HAProxy: two real servers of unequal
capacity, an httperf request-rate sweep, RR / WRR / LC=WLC / WLC 2:1 / DLLC
(``make bench-dllc``; tests/bench/README.md has the method and the numbers).

    lab (tests/harness/lab.py)
      cl ns: httperf --rate R, one request per connection
      lb ns: HAProxy 2.6 on Fulcrum's compiled snapshot (dllcplan.py), one VIP per row
      s1 ns: "fast" dllcserver.py in a cgroup capped at FAST_CPU; fulcrum-loadd on :3333/:3334
      s2 ns: "slow" dllcserver.py in a cgroup capped at SLOW_CPU; fulcrum-loadd on :3333/:3334

Every request costs the servers a fixed amount of CPU work, so their cgroup quotas, not
the machine, decide their capacity. For every repetition, rate and row (rows rotated, so
drift hits all alike) one httperf run; the report has the medians over the repetitions of
reply rate, error rate and response time (httperf.py defines them), and a plot.

    sudo .venv/bin/python -m tests.bench.dllcbench [--quick] [--loads 0.5,1,2] [--rates 50,100,200] ...
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bench import dllcreport
from tests.bench.cpugroups import CpuGroup, CpuGroupError
from tests.bench.daemons import ProxyInLab, write_files
from tests.bench.dllcplan import DEFAULT_ROWS, ROWS, SERVER_PORT, SERVERS, server_address, snapshot, vip
from tests.bench.dllcserver import UNIT_ITERATIONS
from tests.bench.httperf import FD_LIMIT, HttperfOutputError, httperf_argv, parse_httperf
from tests.bench.loads import BenchError
from tests.bench.webbench import Setting, read_settings, settings_parser, tool_version, word_list
from tests.harness.lab import Lab, LabError, namespace_pids

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_PROGRAM = Path(__file__).with_name("dllcserver.py")
RESULTS_DIR = REPO_ROOT / "tests" / "bench" / "results"
QUICK_DIR = REPO_ROOT / "tests" / "artifacts" / "bench"
LOADD_AGENT_PORT, LOADD_HTTP_PORT = 3333, 3334
CPU_PERIOD_US = 20_000  # short periods: a throttled server waits for its next slice < 20 ms, not < 100
IDLE_SHARE = 0.05  # of a server's quota: below it, the previous run has drained
IDLE_LIMIT_S = 60.0
READY_TIMEOUT_S = 20.0
NAMESPACE_SYSCTLS = ("net.ipv4.ip_local_port_range=1024 65535", "net.ipv4.tcp_tw_reuse=1")


def float_list(text: str) -> tuple[float, ...]:
    return tuple(float(word) for word in text.replace(",", " ").split())


SETTINGS = {
    "loads": Setting(
        "FULCRUM_BENCH_DLLC_LOADS",
        float_list,
        "0.4,0.8,1,1.2,1.6,2",
        "0.5,1,2",
        "request rates as multiples of the two servers' measured capacity",
    ),
    "rates": Setting("FULCRUM_BENCH_DLLC_RATES", float_list, "", "", "request rates, conn/s (instead of loads)"),
    "seconds": Setting("FULCRUM_BENCH_DLLC_SECONDS", float, "10", "4", "seconds of load per point"),
    "repeats": Setting("FULCRUM_BENCH_DLLC_REPEATS", int, "3", "1", "repetitions of every point (medians)"),
    "timeout": Setting("FULCRUM_BENCH_DLLC_TIMEOUT", float, "3", "3", "httperf --timeout, s"),
    "rows": Setting("FULCRUM_BENCH_DLLC_ROWS", word_list, ",".join(DEFAULT_ROWS), ",".join(DEFAULT_ROWS), "rows"),
    "fast_cpu": Setting("FULCRUM_BENCH_DLLC_FAST_CPU", float, "0.4", "0.4", "fast server's CPU quota, CPUs"),
    "slow_cpu": Setting("FULCRUM_BENCH_DLLC_SLOW_CPU", float, "0.2", "0.2", "slow server's CPU quota, CPUs"),
    "work_ms": Setting("FULCRUM_BENCH_DLLC_WORK_MS", float, "8", "8", "CPU ms of work per request"),
    "workers": Setting("FULCRUM_BENCH_DLLC_WORKERS", int, "4", "4", "connections a server serves at once"),
    "queue": Setting("FULCRUM_BENCH_DLLC_QUEUE", int, "16", "16", "requests a server queues; more get 503"),
    "settle": Setting("FULCRUM_BENCH_DLLC_SETTLE", float, "2", "2", "s of idle servers before each point"),
    "loadd": Setting(
        "FULCRUM_BENCH_DLLC_LOADD",
        Path,
        str(REPO_ROOT / "agents/bin/fulcrum-loadd"),
        str(REPO_ROOT / "agents/bin/fulcrum-loadd"),
        "fulcrum-loadd binary (DLLC row)",
    ),
    "output": Setting("FULCRUM_BENCH_DLLC_OUTPUT", Path, "", "", "report path without suffix (.md .json .svg)"),
}


def parse_args(argv: list[str] | None, environ: dict[str, str] | None = None) -> argparse.Namespace:
    environ = dict(os.environ) if environ is None else environ
    prog, description = "python -m tests.bench.dllcbench", __doc__.split("\n")[0]
    parser = settings_parser(prog, description, SETTINGS, "FULCRUM_BENCH_DLLC_QUICK")
    args = read_settings(parser, argv, SETTINGS, "FULCRUM_BENCH_DLLC_QUICK", environ)
    if args.output is None:
        stamp = datetime.date.today().isoformat()
        args.output = (QUICK_DIR if args.quick else RESULTS_DIR) / f"dllc-{stamp}"
    if set(args.rows) - set(ROWS) or not args.rows or not (args.rates or args.loads):
        parser.error(f"rows must be among {tuple(ROWS)}; need loads or rates")
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("need repeats >= 1, seconds > 0")
    return args


def sweep_rates(args, capacity: float) -> tuple[float, ...]:
    """The request rates: given, or the loads times the measured combined capacity."""
    rates = args.rates or tuple(float(max(1, round(load * capacity))) for load in args.loads)
    if max(rates) * args.timeout >= FD_LIMIT - 24:
        raise BenchError(
            f"rate {max(rates):g}/s x timeout {args.timeout:g} s: httperf has only {FD_LIMIT} descriptors; "
            "make the requests costlier (FULCRUM_BENCH_DLLC_WORK_MS) or the quotas smaller"
        )
    return rates


# -- the two servers and their load agents -----------------------------------------------------


def calibrate_units(work_ms: float) -> tuple[int, float]:
    """(work units per request, CPU µs per unit) on this machine, outside any quota."""
    proc = subprocess.run(
        [sys.executable, str(SERVER_PROGRAM), "calibrate"], capture_output=True, text=True, timeout=120, check=True
    )
    per_unit_us = float(proc.stdout)
    return max(1, round(work_ms * 1000 / per_unit_us)), per_unit_us


@dataclass
class LimitedServer:
    """dllcserver.py in its lab namespace and its own CPU-capped cgroup."""

    lab: Lab
    name: str
    group: CpuGroup
    work_units: int
    workers: int = 4
    queue: int = 16
    proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return server_address(self.name)

    def start(self, log_dir: Path) -> None:
        self.group.create()
        argv = [sys.executable, str(SERVER_PROGRAM), "serve", f"--listen={self.address}:{SERVER_PORT}"]
        argv += [f"--name={self.name}", f"--work={self.work_units}", f"--workers={self.workers}"]
        argv += [f"--queue={self.queue}"]
        with open(log_dir / f"{self.name}.log", "ab") as log:
            # ip netns exec execs the program: the pid is the server's own.
            self.proc = subprocess.Popen(
                ["ip", "netns", "exec", self.lab.ns(SERVERS[self.name]), *argv],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=REPO_ROOT,
            )
        self.group.add(self.proc.pid)
        wait_answering(self.lab, f"http://{self.address}:{SERVER_PORT}/health", lambda: self.proc.poll() is None)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None
        self.group.remove()


@dataclass
class LoadAgent:
    """fulcrum-loadd beside one server (in its namespace, outside its cgroup)."""

    lab: Lab
    server: LimitedServer
    binary: Path
    proc: subprocess.Popen | None = None

    def argv(self) -> list[str]:
        return [
            str(self.binary),
            f"--agent-listen=:{LOADD_AGENT_PORT}",
            f"--http-listen=:{LOADD_HTTP_PORT}",
            f"--source=cgroup:{self.server.group.cpu_dir}",
            "--window=2s",
            "--sample=250ms",
        ]

    def start(self, log_dir: Path) -> None:
        with open(log_dir / f"loadd-{self.server.name}.log", "ab") as log:
            # Into the network namespace only: ip netns exec mounts a new /sys, without the
            # cgroup hierarchies loadd reads.
            self.proc = subprocess.Popen(
                ["nsenter", f"--net=/run/netns/{self.lab.ns(SERVERS[self.server.name])}", *self.argv()],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        url = f"http://{self.server.address}:{LOADD_HTTP_PORT}/v1/load"
        wait_answering(self.lab, url, lambda: self.proc.poll() is None)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self.proc = None


def wait_answering(lab: Lab, url: str, alive) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while lab.client_get(url, timeout=2)[0] != 200:
        if time.monotonic() > deadline or not alive():
            raise BenchError(f"{url} does not answer 200")
        time.sleep(0.2)


# -- HAProxy ---------------------------------------------------------------------------------


def compile_haproxy(snap: dict) -> dict[str, bytes]:
    """Fulcrum's compiler, as configs.fulcrum_files uses it: snapshot_from_dict -> render_haproxy."""
    api_dir = str(REPO_ROOT / "api")
    if api_dir not in sys.path:
        sys.path.insert(0, api_dir)
    from compiler import render_haproxy, snapshot_from_dict, verify

    return render_haproxy(verify(snapshot_from_dict(snap)), "bench", {})


def dllc_unavailable(args) -> str:
    """Why the DLLC row cannot run here ("" when it can)."""
    try:
        compile_haproxy(snapshot(("dllc",), 1000))
    except Exception as err:  # the compiler's own refusal, whatever its type
        return f"the compiler does not accept dynamic-least-load for a proxy pool yet ({err})"
    if not args.loadd.is_file():
        return f"{args.loadd} is missing (agents/cmd/fulcrum-loadd, built by `make build-agents`)"
    return ""


def haproxy_stats(proxy: ProxyInLab) -> dict[tuple[str, str], dict[str, str]]:
    """``show stat`` over the compiled configuration's stats socket, by (proxy, server)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(str(proxy.conf_dir / "run" / "haproxy.sock"))
        sock.sendall(b"show stat\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    reader = csv.DictReader(io.StringIO(data.decode().lstrip("# ")))
    return {(row["pxname"], row["svname"]): row for row in reader}


class WeightSampler:
    """Samples the DLLC backend's server weights (as the agent set them) during a run."""

    def __init__(self, proxy: ProxyInLab, backend: str, interval_s: float = 0.5):
        self.proxy, self.backend, self.interval_s = proxy, backend, interval_s
        self.samples: dict[str, list[int]] = {name: [] for name in SERVERS}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            stats = haproxy_stats(self.proxy)
            for name in SERVERS:
                self.samples[name].append(int(stats[(self.backend, name)]["weight"]))

    def __enter__(self) -> WeightSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()


# -- the sweep ---------------------------------------------------------------------------------


@dataclass
class Bench:
    """What every run needs."""

    lab: Lab
    args: argparse.Namespace
    proxy: ProxyInLab
    servers: dict[str, LimitedServer]
    rows: tuple[str, ...]
    rates: tuple[float, ...] = ()


def wait_idle(bench: Bench, settle: float = 0.0) -> None:
    """Until both servers use under IDLE_SHARE of their quota and HAProxy has no sessions
    (the previous run's backlog is served or dropped), then ``settle`` seconds more."""
    deadline = time.monotonic() + IDLE_LIMIT_S
    while time.monotonic() < deadline:
        before = {name: s.group.usage().cpu_s for name, s in bench.servers.items()}
        time.sleep(0.5)
        busy = [
            name
            for name, s in bench.servers.items()
            if (s.group.usage().cpu_s - before[name]) / 0.5 > IDLE_SHARE * s.group.cpus
        ]
        sessions = sum(int(r["scur"] or 0) for (_, sv), r in haproxy_stats(bench.proxy).items() if sv == "BACKEND")
        if not busy and sessions == 0:
            time.sleep(settle)
            return
    raise BenchError(f"the servers did not go idle within {IDLE_LIMIT_S} s after a run")


def run_httperf(bench: Bench, address: str, port: int, rate: float) -> tuple[Any, float]:
    args = bench.args
    argv = httperf_argv(address, port, "/", rate, args.seconds, args.timeout)
    started = time.monotonic()
    proc = bench.lab.exec("cl", argv, capture_output=True, text=True, timeout=args.seconds * 3 + args.timeout + 120)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    try:
        return parse_httperf(proc.stdout, rate), elapsed
    except HttperfOutputError as err:
        raise BenchError(str(err)) from err


COUNTERS = ("cpu_s", "throttled_periods", "sessions", "served", "shed", "abandoned")


def server_counters(bench: Bench, backend: str) -> dict[str, tuple[float, ...]]:
    """Per server, cumulative: COUNTERS (cgroup, HAProxy's sessions, the server's own)."""
    stats = haproxy_stats(bench.proxy)
    counters = {}
    for name, server in bench.servers.items():
        usage = server.group.usage()
        sessions = int(stats[(backend, name)]["stot"]) if (backend, name) in stats else 0
        status, body, _ = bench.lab.client_get(f"http://{server.address}:{SERVER_PORT}/counters", timeout=10)
        if status != 200:
            raise BenchError(f"{name}: /counters answered {status}")
        own = json.loads(body)
        counters[name] = (usage.cpu_s, usage.throttled_periods, sessions, own["served"], own["shed"], own["abandoned"])
    return counters


def measure_point(bench: Bench, key: str, rate: float, repeat: int) -> dict:
    """One httperf run against one row's VIP, with what the servers and HAProxy did."""
    wait_idle(bench, bench.args.settle)
    backend = f"pool-{key}"
    before, proxy_cpu = server_counters(bench, backend), bench.proxy.cpu_seconds()
    sampler = WeightSampler(bench.proxy, backend) if ROWS[key].dllc else None
    if sampler:
        with sampler:
            run, elapsed = run_httperf(bench, vip(bench.rows, key), 80, rate)
    else:
        run, elapsed = run_httperf(bench, vip(bench.rows, key), 80, rate)
    proxy_cpu = bench.proxy.cpu_seconds() - proxy_cpu
    run_cpu = {name: server.group.usage().cpu_s - before[name][0] for name, server in bench.servers.items()}
    wait_idle(bench)  # what is still queued is served or dropped: count it with this run
    after = server_counters(bench, backend)
    if run.fd_unavailable:
        raise BenchError(f"{key} at {rate:g}/s: httperf ran out of descriptors ({run.fd_unavailable})")
    servers = {}
    for name, server in bench.servers.items():
        servers[name] = {what: a - b for what, a, b in zip(COUNTERS, after[name], before[name], strict=True)}
        servers[name]["utilisation"] = run_cpu[name] / (elapsed * server.group.cpus)
        if sampler and sampler.samples[name]:
            servers[name]["agent_weight_mean"] = sum(sampler.samples[name]) / len(sampler.samples[name])
    return {
        "row": key,
        "rate": rate,
        "repeat": repeat,
        "elapsed_s": elapsed,
        "httperf": run.as_dict(),
        "servers": servers,
        "haproxy_cpu_share": proxy_cpu / elapsed,
        "load_average_1m": os.getloadavg()[0],
    }


def measure_capacity(bench: Bench) -> dict[str, dict]:
    """Each server alone (no balancer), offered twice its nominal capacity: its capacity."""
    found = {}
    for name, server in bench.servers.items():
        nominal = server.group.cpus * 1000 / bench.args.work_ms
        rate = min(round(2 * nominal), int((FD_LIMIT - 24) // bench.args.timeout))
        run, _ = run_httperf(bench, server.address, SERVER_PORT, rate)
        found[name] = {"nominal": nominal, "offered": rate, "reply_rate": run.reply_rate, "httperf": run.as_dict()}
        print(f"  capacity {name}: {run.reply_rate:.1f} replies/s (nominal {nominal:.0f})", file=sys.stderr)
        wait_idle(bench)
    return found


def check_spread(bench: Bench) -> None:
    """Before measuring, every row's VIP answers and reaches both servers."""
    for key in bench.rows:
        seen = set()
        for _ in range(8):
            status, body, _ = bench.lab.client_get(f"http://{vip(bench.rows, key)}/", timeout=5)
            if status != 200:
                raise BenchError(f"{key}: {vip(bench.rows, key)} answered {status}")
            seen.add(body.strip())
        if seen != set(SERVERS):
            raise BenchError(f"{key}: 8 requests reached only {sorted(seen)}")


def wait_agents(bench: Bench) -> None:
    """The DLLC backend's agent-checks have answered (HAProxy shows an agent status)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        stats = haproxy_stats(bench.proxy)
        # CHECKED: the agent answered a weight and nothing else ("No status change").
        if all(stats[("pool-dllc", name)].get("agent_status") in ("CHECKED", "L7OK") for name in SERVERS):
            return
        time.sleep(0.5)
    raise BenchError(f"HAProxy's agent-checks to fulcrum-loadd never succeeded: {bench.proxy.log_tail()}")


def progress(point: dict, done: int, total: int, started: float) -> None:
    h = point["httperf"]
    elapsed = time.monotonic() - started
    eta = elapsed / done * (total - done)
    response = f"{h['response_time_ms']:7.1f} ms" if h["response_time_ms"] is not None else "      - ms"
    share = point["servers"]["fast"]["sessions"] / max(1, sum(s["sessions"] for s in point["servers"].values()))
    print(
        f"  [{done:>3}/{total}] rep {point['repeat']} rate {point['rate']:>5g} {point['row']:<8} "
        f"reply {h['reply_rate']:6.1f}/s  errors {h['error_percent']:5.1f} %  {response}  "
        f"fast share {share:4.0%}  (elapsed {elapsed / 60:.1f} min, ~{eta / 60:.1f} min left)",
        file=sys.stderr,
        flush=True,
    )


def sweep(bench: Bench) -> list[dict]:
    """Repetitions outermost; within one, every rate, and at each rate every row, the
    order of the rows rotating from point to point."""
    args = bench.args
    points, total, started = [], args.repeats * len(bench.rates) * len(bench.rows), time.monotonic()
    for repeat in range(1, args.repeats + 1):
        for i, rate in enumerate(bench.rates):
            shift = (repeat + i) % len(bench.rows)
            for key in bench.rows[shift:] + bench.rows[:shift]:
                points.append(measure_point(bench, key, rate, repeat))
                progress(points[-1], len(points), total, started)
        if not bench.proxy.running():
            raise BenchError(f"HAProxy exited during the benchmark: {bench.proxy.log_tail()}")
    return points


# -- main --------------------------------------------------------------------------------------


def repo_relative(value):
    """Paths in the report relative to the repository, so that it reads the same anywhere."""
    if isinstance(value, Path) and value.is_relative_to(REPO_ROOT):
        return str(value.relative_to(REPO_ROOT))
    return str(value) if isinstance(value, Path) else value


def environment(args, units: int, per_unit_us: float, servers: dict[str, LimitedServer], note: str) -> dict:
    settings = {name: repo_relative(getattr(args, name)) for name in SETTINGS}
    return {
        "date": datetime.date.today().isoformat(),
        "cpus": os.cpu_count(),
        "cpu_model": next(
            (
                ln.split(":", 1)[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")
            ),
            "?",
        ),
        "kernel": platform.release(),
        "balancer": "HAProxy",
        "balancer_version": tool_version(["haproxy", "-v"]).split(" - ")[0],
        "generated_by": "`tests/bench/dllcbench.py` (`make bench-dllc`)",
        "command": "`sudo make bench-dllc` (= `.venv/bin/python -m tests.bench.dllcbench`)",
        "httperf": re.search(r"httperf-([\d.]+)", tool_version(["httperf", "--version"])).group(1),
        "python": platform.python_version(),
        "settings": settings | {"rows": list(args.rows)},
        "work_units": units,
        "unit_iterations": UNIT_ITERATIONS,
        "cpu_us_per_unit": per_unit_us,
        "cgroups": {name: {"cpus": s.group.cpus, "files": s.group.describe()} for name, s in servers.items()},
        "cgroup_version": next(iter(servers.values())).group.version,
        "dllc_note": note,
        "load_average_at_start": os.getloadavg(),
    }


def run(args, lab: Lab, work: Path, facts: dict) -> list[dict]:
    rows = tuple(args.rows)
    note = dllc_unavailable(args) if "dllc" in rows else ""
    if note:
        print(f"dllcbench: DLLC row left out: {note}", file=sys.stderr)
        rows = tuple(key for key in rows if key != "dllc")
    units, per_unit_us = calibrate_units(args.work_ms)
    servers = {}
    for name, cpus in (("fast", args.fast_cpu), ("slow", args.slow_cpu)):
        group = CpuGroup(f"fulcrum-bench-{lab.prefix}-{name}", cpus, CPU_PERIOD_US)
        servers[name] = LimitedServer(lab, name, group, units, workers=args.workers, queue=args.queue)
    facts |= environment(args, units, per_unit_us, servers, note)
    agents: list[LoadAgent] = []
    conf_dir = work / "haproxy"
    conf_dir.mkdir()
    files = compile_haproxy(snapshot(rows, 1000))
    write_files(conf_dir, files)
    facts["haproxy_cfg"] = files["haproxy.cfg"].decode()
    proxy = ProxyInLab(lab, "fulcrum", conf_dir)
    try:
        for server in servers.values():
            server.start(work)
        if "dllc" in rows:
            agents = [LoadAgent(lab, server, args.loadd) for server in servers.values()]
            for agent in agents:
                agent.start(work)
        proxy.start()
        bench = Bench(lab, args, proxy, servers, rows)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not (conf_dir / "run" / "haproxy.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        if "dllc" in rows:
            wait_agents(bench)
        check_spread(bench)
        print(f"dllcbench: {units} work units per request ({per_unit_us:.1f} µs each)", file=sys.stderr)
        facts["capacity"] = measure_capacity(bench)
        bench.rates = sweep_rates(args, sum(c["reply_rate"] for c in facts["capacity"].values()))
        facts["rates"] = list(bench.rates)
        return sweep(bench)
    finally:
        proxy.stop()
        for agent in agents:
            agent.stop()
        for server in servers.values():
            server.stop()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("dllcbench: needs root (network namespaces, cgroups)", file=sys.stderr)
        return 2
    started = time.monotonic()
    facts: dict = {}
    work = Path(tempfile.mkdtemp(prefix="fulcrum-dllcbench-"))
    try:
        with Lab(args.prefix) as lab:
            for role in ("cl", "lb"):
                for setting in NAMESPACE_SYSCTLS:
                    lab.exec(role, ["sysctl", "-qw", setting], check=True, capture_output=True)
            points = run(args, lab, work, facts)
            if any(namespace_pids(lab.ns("cl"))):
                raise BenchError("a load generator outlived its run")
    except (BenchError, LabError, CpuGroupError) as err:
        print(f"dllcbench: FAILED: {err}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    facts |= {"load_average_at_end": os.getloadavg(), "elapsed_s": round(time.monotonic() - started, 1)}
    written = dllcreport.write(args.output, facts, points)
    print(dllcreport.render_tables(facts, points))
    print(f"\nreport: {', '.join(str(p) for p in written)}; {facts['elapsed_s']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
