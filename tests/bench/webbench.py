"""Benchmarks after the seed studies: Fulcrum-compiled HAProxy against hand-written HAProxy
and nginx, all three in one run on the same lab (``make bench``), with the daemons the
appliance ships (Debian 13's HAProxy and nginx, run from a cached root: shipped.py), and
Fulcrum's configuration once more on the host's own HAProxy to show the version's effect.

Sections (tests/bench/README.md has the method and the numbers):

    l7    seed 000: the WebBench file mix with 3 / 50 / 5,000 rules, HTTP/1.0 vs 1.1,
          cookie persistence on/off, plus the direct path to one server as a reference
    cps   seed 003: new connections per second by response size (64 B - 1 MiB), for
          HTTP/1.0 and TLS (RSA-2048, ECDSA P-256; with and without client certificates)
    mux   seed 001: client vs server connections with thousands of keep-alive clients
          that think between requests

Rows are measured in rounds (order rotated each round); each system's median is
reported with Fulcrum's ratio to the others. Runs whose traffic went wrong fail the
benchmark; the numbers themselves are never asserted.

    sudo .venv/bin/python -m tests.bench.webbench [--quick] [--sections l7 cps mux] ...
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests.bench import certs, configs, multiplex, report, shipped
from tests.bench.daemons import ProxyInLab, write_files
from tests.bench.loads import (
    BenchError,
    ClientCertificate,
    Measurement,
    check_mix,
    check_s_time,
    check_sized,
    run_s_time,
    run_wrk,
    wrk_script_args,
)
from tests.bench.plan import (
    COOKIE_NAMES,
    CPS_SIZES,
    LISTENER,
    MUX_CAPPED_IDLE_PER_SERVER,
    MUX_CAPPED_REUSE,
    MUX_OBJECT_SIZE,
    NEW_VISITOR_EVERY,
    NGINX_UPSTREAM_KEEPALIVE,
    ON_HOST,
    POOLS,
    ROUTED_SERVERS,
    SYSTEMS,
    TLS_KEY_LABELS,
    format_size,
    listeners_of,
    sized_file_content,
    sized_files,
    sized_path,
    url,
    vip,
)
from tests.harness.lab import Lab, LabError, parse_http_response
from tests.harness.webbench import WEBBENCH_MIX, expected_not_found_share

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUTPUT = REPO_ROOT / "tests" / "artifacts" / "bench" / "webbench.json"
SECTIONS = ("l7", "cps", "mux")
READY_TIMEOUT_S = 20.0
NAMESPACE_SYSCTLS = (
    "net.ipv4.ip_local_port_range=1024 65535",  # HTTP/1.0 and TLS rows open ~10^4 connections/s
    "net.ipv4.tcp_tw_reuse=1",
    "net.core.somaxconn=8192",  # thousands of clients connect at once in the mux section
)


# -- settings ---------------------------------------------------------------------------------


def int_list(text: str) -> tuple[int, ...]:
    return tuple(int(word) for word in text.replace(",", " ").split())


def word_list(text: str) -> tuple[str, ...]:
    return tuple(text.replace(",", " ").split())


@dataclass(frozen=True)
class Setting:
    """One knob: its environment variable, how to read it, and its full and quick values."""

    variable: str
    parse: Callable[[str], Any]
    full: str
    quick: str
    help: str


SETTINGS = {
    "rounds": Setting("FULCRUM_BENCH_ROUNDS", int, "3", "1", "measured rounds of every row"),
    "duration": Setting("FULCRUM_BENCH_DURATION", float, "4", "1", "seconds per WebBench-mix run"),
    "warmup": Setting("FULCRUM_BENCH_WARMUP", float, "1", "0", "seconds of warm-up per cell, 0 = none"),
    "cps_duration": Setting("FULCRUM_BENCH_CPS_DURATION", float, "1.2", "1", "seconds per connections/s run"),
    "cps_sizes": Setting(
        "FULCRUM_BENCH_CPS_SIZES", int_list, ",".join(map(str, CPS_SIZES)), "64,1048576", "response sizes, bytes"
    ),
    "tls_clients": Setting("FULCRUM_BENCH_TLS_CLIENTS", int, "4", "4", "parallel openssl s_time processes"),
    "mux_clients": Setting("FULCRUM_BENCH_MUX_CLIENTS", int, "2000", "2000", "keep-alive clients"),
    "mux_think_ms": Setting("FULCRUM_BENCH_MUX_THINK_MS", int_list, "200,2000", "200", "think times, ms"),
    "mux_seconds": Setting("FULCRUM_BENCH_MUX_SECONDS", float, "8", "3", "sampling window after the ramp, s"),
    "mux_rounds": Setting("FULCRUM_BENCH_MUX_ROUNDS", int, "3", "1", "rounds of every multiplexing cell"),
    "sections": Setting("FULCRUM_BENCH_SECTIONS", word_list, ",".join(SECTIONS), ",".join(SECTIONS), "sections"),
    "output": Setting("FULCRUM_BENCH_OUTPUT", Path, str(DEFAULT_OUTPUT), str(DEFAULT_OUTPUT), "JSON report"),
}


def settings_parser(prog: str, description: str, settings: dict[str, Setting], quick_variable: str):
    """A benchmark's command line: --quick, one option per setting, --prefix."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--quick", action="store_true", help=f"smoke test (${quick_variable}=1)")
    for name, setting in settings.items():
        flag = "--" + name.replace("_", "-")
        parser.add_argument(flag, default=None, help=f"{setting.help} (${setting.variable}; default {setting.full})")
    parser.add_argument("--prefix", default=None, help="lab namespace prefix (default: random)")
    return parser


def read_settings(parser, argv, settings: dict[str, Setting], quick_variable: str, environ: dict[str, str]):
    """Parse ``argv``; each setting from the command line, else the environment, else the
    full or quick default (an empty text is None)."""
    args = parser.parse_args(argv)
    args.quick = args.quick or environ.get(quick_variable, "0") not in ("", "0")
    try:
        for name, setting in settings.items():
            text = (
                getattr(args, name) or environ.get(setting.variable) or (setting.quick if args.quick else setting.full)
            )
            setattr(args, name, setting.parse(text) if text else None)
    except ValueError as err:
        parser.error(f"bad setting: {err}")
    return args


def parse_args(argv: list[str] | None, environ: dict[str, str] | None = None) -> argparse.Namespace:
    environ = dict(os.environ) if environ is None else environ
    prog, description = "python -m tests.bench.webbench", __doc__.split("\n")[0]
    parser = settings_parser(prog, description, SETTINGS, "FULCRUM_BENCH_QUICK")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads for l7 and cps (default 2)")
    parser.add_argument("--connections", type=int, default=50, help="wrk connections for l7 and cps (default 50)")
    args = read_settings(parser, argv, SETTINGS, "FULCRUM_BENCH_QUICK", environ)
    if (
        args.rounds < 1
        or args.mux_rounds < 1
        or args.duration <= 0
        or args.cps_duration <= 0
        or args.connections < args.threads
    ):
        parser.error("need rounds >= 1, mux-rounds >= 1, duration > 0, cps-duration > 0, connections >= threads")
    if not args.sections or set(args.sections) - set(SECTIONS):
        parser.error(f"sections must be among {SECTIONS}, got {args.sections}")
    if not args.cps_sizes or not args.mux_think_ms or min(args.mux_think_ms) < 1:
        parser.error("need at least one cps size and one positive mux think time")
    return args


# -- rows -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MixRow:
    """A seed-000 row: the WebBench mix through one listener."""

    label: str
    listener: str
    version: str = "1.1"
    cookies: bool = False


WEBBENCH_ROW = "3 rules, HTTP/1.1"
DIRECT_ROW = "direct to s1, no proxy (reference)"
L7_ROWS = (
    MixRow(WEBBENCH_ROW, "l7-3"),
    MixRow("50 rules, HTTP/1.1", "l7-50"),
    MixRow("5,000 rules, HTTP/1.1", "l7-5000"),
    MixRow("3 rules, HTTP/1.0", "l7-3", version="1.0"),
    MixRow("3 rules, cookie persistence (insert)", "cookie", cookies=True),
)
COST_CHANGES = [
    ("50 rules instead of 3", WEBBENCH_ROW, "50 rules, HTTP/1.1"),
    ("5,000 rules instead of 3", WEBBENCH_ROW, "5,000 rules, HTTP/1.1"),
    ("HTTP/1.0 instead of HTTP/1.1", WEBBENCH_ROW, "3 rules, HTTP/1.0"),
    ("cookie persistence on", WEBBENCH_ROW, "3 rules, cookie persistence (insert)"),
]


@dataclass(frozen=True)
class CpsRow:
    """A seed-003 cell: one GET per new connection for one response size."""

    mode: str
    listener: str
    size: int

    @property
    def label(self) -> str:
        return f"{self.mode}, {format_size(self.size)}"


CPS_MODES = (("HTTP/1.0", "plain"),) + tuple(
    (f"TLS {TLS_KEY_LABELS[key]}{' + client cert' if client else ''}", f"tls-{key}{'-client' if client else ''}")
    for key in TLS_KEY_LABELS
    for client in (False, True)
)


def cps_rows(sizes: tuple[int, ...]) -> list[CpsRow]:
    return [CpsRow(mode, listener, size) for mode, listener in CPS_MODES for size in sizes]


MUX_RUNS = (
    ("nginx", "mux"),
    ("haproxy", "mux"),
    ("fulcrum", "mux"),
    ("fulcrum", "mux-default"),
    ("fulcrum-host", "mux"),
)
MUX_SETTINGS = {
    ("mux", "nginx"): f"upstream keepalive {NGINX_UPSTREAM_KEEPALIVE} (per worker; 2 workers)",
    ("mux", "haproxy"): f"http-reuse {MUX_CAPPED_REUSE}, pool-max-conn {MUX_CAPPED_IDLE_PER_SERVER}",
    ("mux", "fulcrum"): f"http_reuse {MUX_CAPPED_REUSE}, pool_max_conn {MUX_CAPPED_IDLE_PER_SERVER}",
    ("mux-default", "fulcrum"): "the pool defaults",
    ("mux", "fulcrum-host"): f"http_reuse {MUX_CAPPED_REUSE}, pool_max_conn {MUX_CAPPED_IDLE_PER_SERVER}",
}


def rotated(items: list, round_no: int) -> list:
    shift = round_no % len(items) if items else 0
    return items[shift:] + items[:shift]


# -- the lab ----------------------------------------------------------------------------------


def prepare_lab(lab: Lab) -> None:
    """The seed-003 and mux files on every server, and socket limits for the load."""
    if lab.workdir is None:
        raise LabError("lab is not up")
    for server in POOLS["all"]:
        # The lab's nginx serves <workdir>/<server>/www/wb/ under /wb/ (tests/harness/lab.py).
        for path, size in sized_files().items():
            (lab.workdir / server / "www" / path.lstrip("/")).write_bytes(sized_file_content(size))
    for role in ("cl", "lb"):
        for setting in NAMESPACE_SYSCTLS:
            lab.exec(role, ["sysctl", "-qw", setting], check=True, capture_output=True)


def curl(lab: Lab, target: str, client: ClientCertificate | None = None) -> tuple[int, dict]:
    argv = ["curl", "-sS", "-i", "-k", "--noproxy", "*", "--max-time", "2"]
    if client is not None:
        argv += ["--cert", str(client.cert), "--key", str(client.key)]
    proc = lab.exec("cl", [*argv, target], capture_output=True, timeout=10)
    if proc.returncode != 0:
        return 0, {}
    status, _, headers = parse_http_response(proc.stdout)
    return status, dict(headers.items())


def client_certificate(tls: dict[str, certs.KeyTypeMaterial], listener_name: str) -> ClientCertificate | None:
    listener = LISTENER[listener_name]
    if not listener.client_certs:
        return None
    material = tls[listener.tls]
    return ClientCertificate(material.client_cert_path, material.client_key_path)


def tls_answer(lab: Lab, address: str, path: str, client: ClientCertificate | None) -> tuple[int, int]:
    """(status, body bytes) of s_time's own request (HTTP/1.0, no Host): s_time shows neither."""
    argv = ["openssl", "s_client", "-quiet", "-connect", address]
    if client is not None:
        argv += ["-cert", str(client.cert), "-key", str(client.key)]
    request = f"GET {path} HTTP/1.0\r\n\r\n".encode()
    proc = lab.exec("cl", argv, input=request, capture_output=True, timeout=10)
    head, _, body = proc.stdout.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    return status, len(body)


def wait_ready(lab: Lab, proxy: ProxyInLab, tls: dict, listener_names: list[str]) -> None:
    """Every listener answers 200 through the proxy; client-certificate listeners refuse
    a client without one (so those rows really verify certificates)."""
    for name in listener_names:
        listener = LISTENER[name]
        target = url(proxy.system, listener) + (sized_path(64) if listener.tls else "/wb/f223.gif")
        client = client_certificate(tls, name)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while curl(lab, target, client)[0] != 200:
            if time.monotonic() > deadline or not proxy.running():
                raise BenchError(f"{proxy.system} {name}: {target} does not answer 200; log: {proxy.log_tail()}")
            time.sleep(0.2)
        if client is not None and curl(lab, target)[0] == 200:
            raise BenchError(f"{proxy.system} {name}: answered 200 to a client without a certificate")
        if listener.tls:
            address = f"{vip(proxy.system, listener)}:{listener.port}"
            for size in CPS_SIZES:
                status, length = tls_answer(lab, address, sized_path(size), client)
                if (status, length) != (200, size):
                    raise BenchError(
                        f"{proxy.system} {name}: s_time's request for {sized_path(size)}: {status}, {length} B"
                    )


# -- sections ---------------------------------------------------------------------------------


def per_op_us(cpu_s: float | None, operations: int) -> float | None:
    return None if cpu_s is None or operations == 0 else cpu_s / operations * 1e6


def run_mix(lab: Lab, proxies: dict, row: MixRow, system: str, args, seconds: float, round_no: int) -> Measurement:
    mix = {entry.path: entry.share_percent for entry in WEBBENCH_MIX}
    cookies = {COOKIE_NAMES[p]: POOLS[p] for p in COOKIE_NAMES} if row.cookies else None
    script = wrk_script_args(mix, row.version, cookies, NEW_VISITOR_EVERY if row.cookies else 0)
    target = f"http://{lab.servers['s1']}" if system == "direct" else url(system, LISTENER[row.listener])
    cpu = proxies[system].cpu_seconds if system in proxies else None
    result = run_wrk(lab, target, script, args.threads, args.connections, seconds, cpu)
    routes = {kind: frozenset({"s1"}) for kind in ROUTED_SERVERS} if system == "direct" else ROUTED_SERVERS
    cookie_share = 1 / NEW_VISITOR_EVERY if row.cookies else 0.0
    check_mix(f"{row.label} {system} round {round_no}", result, routes, expected_not_found_share(), cookie_share)
    cpu_us = per_op_us(result.get("proxy_cpu_s"), result["requests"])
    result["load_average_1m"] = os.getloadavg()[0]  # other work on the machine skews every number
    return Measurement("l7", row.label, system, round_no, result["requests_per_s"], result, cpu_us)


def run_cps(lab: Lab, proxies: dict, row: CpsRow, system: str, args, tls: dict, round_no: int) -> Measurement:
    listener = LISTENER[row.listener]
    where = f"{row.label} {system} round {round_no}"
    seconds = args.cps_duration if round_no else args.warmup
    cpu = proxies[system].cpu_seconds
    load = {"load_average_1m": os.getloadavg()[0]}
    if not listener.tls:
        script = wrk_script_args({sized_path(row.size): 1}, version="1.0")
        result = run_wrk(lab, url(system, listener), script, args.threads, args.connections, seconds, cpu)
        check_sized(where, result, row.size, set(POOLS["all"]))
        cpu_us = per_op_us(result["proxy_cpu_s"], result["requests"])
        return Measurement("cps", row.label, system, round_no, result["requests_per_s"], result | load, cpu_us)
    address = f"{vip(system, listener)}:{listener.port}"
    client = client_certificate(tls, row.listener)
    result = run_s_time(lab, address, sized_path(row.size), seconds, args.tls_clients, client, cpu)
    check_s_time(where, result)
    cpu_us = per_op_us(result["proxy_cpu_s"], result["connections"])
    return Measurement("cps", row.label, system, round_no, result["connections_per_s"], result | load, cpu_us)


def progress(m: Measurement) -> None:
    unit = "req/s" if m.section == "l7" else "conn/s"
    print(f"  round {m.round} {m.row:<40} {m.system:<8} {m.rate:>10.0f} {unit}", file=sys.stderr, flush=True)


def measure_l7(lab: Lab, proxies: dict[str, ProxyInLab], args) -> list[Measurement]:
    cells = [(L7_ROWS[0], "direct")] + [(row, system) for row in L7_ROWS for system in SYSTEMS]
    runs = []
    if args.warmup > 0:
        for row, system in cells:
            run_mix(lab, proxies, row, system, args, args.warmup, 0)
    for round_no in range(1, args.rounds + 1):
        for row in rotated([None, *L7_ROWS], round_no):
            systems = ["direct"] if row is None else rotated(list(SYSTEMS), round_no)
            for system in systems:
                m = run_mix(lab, proxies, row or L7_ROWS[0], system, args, args.duration, round_no)
                if system == "direct":
                    m.row = DIRECT_ROW
                runs.append(m)
                progress(m)
        check_running(proxies)
    return runs


def measure_cps(lab: Lab, proxies: dict[str, ProxyInLab], args, tls: dict) -> list[Measurement]:
    runs = []
    if args.warmup > 0:
        for mode, listener in CPS_MODES:
            for system in SYSTEMS:
                run_cps(lab, proxies, CpsRow(mode, listener, args.cps_sizes[0]), system, args, tls, 0)
    for round_no in range(1, args.rounds + 1):
        for row in rotated(cps_rows(args.cps_sizes), round_no):
            for system in rotated(list(SYSTEMS), round_no):
                m = run_cps(lab, proxies, row, system, args, tls, round_no)
                runs.append(m)
                progress(m)
        check_running(proxies)
    return runs


def measure_mux(lab: Lab, proxies: dict[str, ProxyInLab], args, tls: dict) -> list[multiplex.MuxResult]:
    """One proxy at a time, freshly started, so every server connection in the lb
    namespace is the measured proxy's own; every cell ``mux_rounds`` times, in rotated order
    (at short think times the count is mostly requests in flight, which moves with load)."""
    for proxy in proxies.values():
        proxy.stop()
    results = []
    for round_no in range(1, args.mux_rounds + 1):
        for think_ms in args.mux_think_ms:
            for system, name in rotated(list(MUX_RUNS), round_no):
                results.append(measure_mux_one(lab, proxies[system], name, args, tls, think_ms, round_no))
    return results


def measure_mux_one(
    lab: Lab, proxy: ProxyInLab, name: str, args, tls: dict, think_ms: int, round_no: int
) -> multiplex.MuxResult:
    proxy.start()
    try:
        wait_ready(lab, proxy, tls, [name])
        address = f"{vip(proxy.system, LISTENER[name])}:80"
        path = sized_path(MUX_OBJECT_SIZE)
        clients, seconds = args.mux_clients, args.mux_seconds
        result = multiplex.measure(lab, name, proxy.system, address, path, clients, think_ms, seconds, round_no)
        multiplex.check(result)
    finally:
        proxy.stop()
    print(
        f"  mux round {round_no} {think_ms} ms {name:<12} {proxy.system:<12} {result.median_ratio:>7.1f} : 1 "
        f"(server connections {result.server_connections})",
        file=sys.stderr,
        flush=True,
    )
    return result


def check_running(proxies: dict[str, ProxyInLab]) -> None:
    for proxy in proxies.values():
        if not proxy.running():
            raise BenchError(f"{proxy.system} exited during the benchmark: {proxy.log_tail()}")


# -- report -----------------------------------------------------------------------------------


def tool_version(argv: list[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    return (proc.stdout + proc.stderr).strip().splitlines()[0]


def daemon_builds(root: Path) -> dict[str, str]:
    """Which binary each system ran: version, TLS library, default threads (no config sets nbthread)."""
    return {
        system: shipped.describe(
            None if system in ON_HOST else root, "nginx" if system == "nginx" else "haproxy"
        ).label()
        for system in SYSTEMS
    }


def environment(args, builds: dict[str, str]) -> dict:
    settings = {name: getattr(args, name) for name in SETTINGS}
    return {
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "daemons": builds,
        "host_haproxy": tool_version(["haproxy", "-v"]),
        "host_nginx": tool_version(["nginx", "-v"]),
        "wrk": tool_version(["wrk", "-v"]),
        "openssl": tool_version(["openssl", "version"]),
        "settings": settings | {"sections": args.sections, "threads": args.threads, "connections": args.connections},
        "haproxy_global_tuning": list(configs.HAPROXY_TUNING),
    }


def render_tables(summaries, l7_costs, mux_results, found, args, builds: dict[str, str]) -> str:
    parts = ["### Daemons\n\n" + report.builds_table(builds)]
    direct = next((s for s in summaries if s.row == DIRECT_ROW), None)
    if any(s.section == "l7" for s in summaries):
        title = f"WebBench mix, req/s (median of {args.rounds})"
        parts.append("### Seed 000: L7 switching, WebBench mix\n\n" + report.rate_table(summaries, "l7", title))
        if direct is not None:
            parts.append(f"{DIRECT_ROW}: {report.number(direct.medians['direct'])} req/s")
            parts.append(report.direct_table(summaries, direct.medians["direct"]))
        parts.append(report.costs_table(l7_costs))
        parts.append(report.cpu_table(summaries, "l7", "proxy CPU µs per request (median)"))
    if any(s.section == "cps" for s in summaries):
        title = f"new connections/s (median of {args.rounds})"
        parts.append(
            "### Seed 003: connections per second by response size\n\n" + report.rate_table(summaries, "cps", title)
        )
        parts.append(report.cpu_table(summaries, "cps", "proxy CPU µs per connection (median)"))
    if mux_results:
        parts.append("### Seed 001: multiplexing\n\n" + report.mux_table(mux_results, MUX_SETTINGS))
    parts.append("### Targets\n\n" + report.targets_table(found))
    return "\n\n".join(parts)


def save_configs(output_dir: Path, conf_root: Path) -> None:
    """The configurations as run (without keys) beside the report."""
    target = output_dir / "configs"
    shutil.rmtree(target, ignore_errors=True)
    for system in SYSTEMS:
        source = conf_root / system
        shutil.copytree(
            source, target / system, ignore=shutil.ignore_patterns("certs", "cert-*", "ca-*", "run", "tmp", "*.pid")
        )


def write_report(args, facts, summaries, l7_costs, measurements, mux_results, found) -> None:
    args.output.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "environment": facts,
        "summary": [asdict(s) for s in summaries],
        "costs": [asdict(c) for c in l7_costs],
        "multiplexing": [asdict(m) | {"median_ratio": m.median_ratio} for m in mux_results],
        "targets": [asdict(t) for t in found],
        "runs": [asdict(m) for m in measurements],
    }
    args.output.write_text(json.dumps(data, indent=2, default=str) + "\n")


# -- main -------------------------------------------------------------------------------------


def system_files(system: str, tls: dict, directory: Path, think_ms: int) -> dict[str, bytes]:
    if system == "haproxy":
        return configs.haproxy_files(tls, directory, think_ms)
    if system == "nginx":
        return configs.nginx_files(tls, directory, think_ms)
    return configs.fulcrum_files(tls, think_ms, system)


def build_configs(conf_root: Path, tls: dict, think_ms: int) -> None:
    for system in SYSTEMS:
        directory = conf_root / system
        directory.mkdir(parents=True)
        write_files(directory, system_files(system, tls, directory, think_ms))


def run_sections(lab: Lab, proxies: dict[str, ProxyInLab], args, tls, timings: dict) -> tuple[list, list]:
    measurements: list[Measurement] = []
    mux_results: list[multiplex.MuxResult] = []
    for proxy in proxies.values():
        proxy.start()
    for proxy in proxies.values():
        names = [x.name for x in listeners_of(proxy.system)]
        wait_ready(lab, proxy, tls, names)
    sections = {
        "l7": lambda: measure_l7(lab, proxies, args),
        "cps": lambda: measure_cps(lab, proxies, args, tls),
        "mux": lambda: measure_mux(lab, proxies, args, tls),
    }
    for name, measure in sections.items():
        if name in args.sections:
            started = time.monotonic()
            found = measure()
            if name == "mux":
                mux_results = found
            else:
                measurements += found
            timings[name] = round(time.monotonic() - started, 1)
    return measurements, mux_results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("webbench: needs root (network namespaces)", file=sys.stderr)
        return 2
    started = time.monotonic()
    timings: dict[str, float] = {}
    facts = {"load_average_at_start": os.getloadavg(), "section_seconds": timings}
    work = Path(tempfile.mkdtemp(prefix="fulcrum-bench-"))
    work.chmod(0o711)  # nginx workers (nobody) reach their temp dirs below it
    try:
        root = shipped.root()
        builds = daemon_builds(root)
        (work / "tls").mkdir()
        tls = certs.generate(work / "tls")
        build_configs(work / "conf", tls, max(args.mux_think_ms))
        with Lab(args.prefix) as lab:
            prepare_lab(lab)
            proxies = {
                system: ProxyInLab(lab, system, work / "conf" / system, None if system in ON_HOST else root)
                for system in SYSTEMS
            }
            try:
                measurements, mux_results = run_sections(lab, proxies, args, tls, timings)
            finally:
                for proxy in proxies.values():
                    proxy.stop()
        save_configs(args.output.parent, work / "conf")
    except (BenchError, LabError) as err:
        print(f"webbench: FAILED: {err}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    facts |= {"load_average_at_end": os.getloadavg(), "elapsed_s": round(time.monotonic() - started, 1)}
    summaries = report.summarize(measurements)
    l7_costs = report.costs(summaries, COST_CHANGES)
    rule_cost = next((c for c in l7_costs if c.changed_row.startswith("5,000")), None)
    found = report.targets(summaries, rule_cost, mux_results, WEBBENCH_ROW)
    print(render_tables(summaries, l7_costs, mux_results, found, args, builds))
    write_report(args, environment(args, builds) | facts, summaries, l7_costs, measurements, mux_results, found)
    print(f"\nreport: {args.output} (configurations in {args.output.parent / 'configs'}); {facts['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
