"""Failover gap of an HA pair by VRRP advert interval (``make bench-failover``; the method
and the numbers are in tests/bench/README.md).

    HA lab (tests/harness/halab.py), the real API and one fulcrum-agent per balancer:
      cl ns:  tests/harness/requestloop.py, one GET per new connection every 20 ms
      lb1/lb2: HAProxy + keepalived as compiled by Fulcrum (HA group "front", VIP
               10.77.100.10, lb1 priority 150, lb2 100, nopreempt so failovers alternate)
      s1..s3: nginx

For each advert interval: first ``rest`` seconds of steady traffic with no fault (every
change of VIP holder or of keepalived state is a false failover), then ``rounds`` failovers
per failure mode, each against whichever balancer is master then. The gap of a failover
is the longest run of failed requests around it, from the first failure's start to the
next success's start. Reported: median and max gap per interval and mode, and the time
until the peer held the VIP alone.

    sudo .venv/bin/python -m tests.bench.failover [--quick] [--adverts 1000,200,100] [--rounds 10] ...
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import failoverreport
from tests.bench.webbench import Setting, read_settings, settings_parser, tool_version, word_list
from tests.harness.halab import HaLab, LabError
from tests.harness.hastack import HaStack
from tests.harness.requestloop import RequestLoop, longest_gap

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = REPO_ROOT / "tests" / "bench" / "results"
QUICK_DIR = REPO_ROOT / "tests" / "artifacts" / "bench"
VIP = HaLab.vip(10)
PRIORITIES = {"lb1": 150, "lb2": 100}
MODES = ("keepalived", "link", "standby")
TAKEOVER_TIMEOUT_S = 15
RECOVERY_TIMEOUT_S = 30


def int_list(text: str) -> tuple[int, ...]:
    return tuple(int(word) for word in text.replace(",", " ").split())


SETTINGS = {
    "adverts": Setting("FULCRUM_BENCH_FAILOVER_ADVERTS", int_list, "1000,200,100", "200", "advert intervals, ms"),
    "rounds": Setting("FULCRUM_BENCH_FAILOVER_ROUNDS", int, "10", "2", "failovers per interval and mode"),
    "modes": Setting("FULCRUM_BENCH_FAILOVER_MODES", word_list, ",".join(MODES), "keepalived,link", "failure modes"),
    "rest": Setting("FULCRUM_BENCH_FAILOVER_REST", float, "60", "5", "seconds of traffic without a fault"),
    "interval_ms": Setting("FULCRUM_BENCH_FAILOVER_INTERVAL_MS", float, "20", "20", "ms between requests"),
    "timeout_ms": Setting("FULCRUM_BENCH_FAILOVER_TIMEOUT_MS", float, "250", "250", "ms a request may take"),
    "output": Setting("FULCRUM_BENCH_FAILOVER_OUTPUT", Path, "", "", "report path without suffix (.md .json .svg)"),
}


def parse_args(argv: list[str] | None, environ: dict[str, str] | None = None) -> argparse.Namespace:
    environ = dict(os.environ) if environ is None else environ
    prog, description = "python -m tests.bench.failover", __doc__.split("\n")[0]
    parser = settings_parser(prog, description, SETTINGS, "FULCRUM_BENCH_FAILOVER_QUICK")
    args = read_settings(parser, argv, SETTINGS, "FULCRUM_BENCH_FAILOVER_QUICK", environ)
    if args.output is None:
        stamp = datetime.date.today().isoformat()
        args.output = (QUICK_DIR if args.quick else RESULTS_DIR) / f"failover-{stamp}"
    if set(args.modes) - set(MODES) or not args.modes or args.rounds < 1 or not args.adverts:
        parser.error(f"modes must be among {MODES}; need rounds >= 1 and at least one advert interval")
    return args


class Pair:
    """The lab, the stack and the HA group under test."""

    def __init__(self, lab: HaLab, stack: HaStack, args: argparse.Namespace, work: Path):
        self.lab, self.stack, self.args, self.work = lab, stack, args, work
        self.group = None

    def configure(self) -> None:
        """Addresses, a pool of the three servers, the service and the group, through REST."""
        api, stack = self.stack.api, self.stack
        stack.set_addresses()
        pool = api.create("/api/v1/pools/", name="web", algorithm="round-robin")
        for name, address in self.lab.servers.items():
            api.create("/api/v1/members/", pool=pool["id"], name=name, address=address, port=80)
        api.create("/api/v1/virtual-services/", name="web", vip=VIP, port=80, protocol="http", default_pool=pool["id"])
        ids = stack.node_ids()
        nodes = [{"node": ids[lb], "priority": prio} for lb, prio in PRIORITIES.items()]
        self.group = api.create("/api/v1/ha-groups/", name="front", vrid=51, vips=[VIP], preempt=False, nodes=nodes)

    def set_advert(self, advert_ms: int) -> None:
        response = self.stack.api.patch(
            f"/api/v1/ha-groups/{self.group['id']}/", json={"advert_interval_ms": advert_ms}
        )
        response.raise_for_status()
        revision = self.stack.apply(f"advert {advert_ms} ms")
        if not revision["live"]:
            raise LabError(f"advert {advert_ms} ms not applied: {revision['nodes']}")
        self.settle()

    def master(self) -> str:
        held = self.lab.holders(VIP)
        if len(held) != 1:
            raise LabError(f"{VIP} held by {sorted(held)}, want exactly one balancer")
        return next(iter(held))

    def settle(self) -> None:
        """Until both daemons run on both balancers and exactly one holds the VIP, stably."""
        deadline = time.monotonic() + RECOVERY_TIMEOUT_S
        for lb in self.lab.balancers:
            self.stack.wait_for_daemons(lb, timeout=RECOVERY_TIMEOUT_S)
        while time.monotonic() < deadline:
            if len(self.lab.holders(VIP)) == 1:
                time.sleep(1.5)
                if len(self.lab.holders(VIP)) == 1:
                    self.lab.exec("cl", ["ip", "neigh", "flush", "all"], check=True)
                    return
            time.sleep(0.1)
        raise LabError(f"{VIP} not settled on one balancer: {sorted(self.lab.holders(VIP))}")

    def loop(self, name: str) -> RequestLoop:
        a = self.args
        return RequestLoop(
            self.lab.ns("cl"), [f"http://{VIP}/"], self.work / f"{name}.jsonl", a.interval_ms, a.timeout_ms
        )


def keepalived_states(stack: HaStack) -> dict[str, int]:
    """How many state lines each balancer's keepalived has logged so far."""
    return {lb: len(stack.keepalived_transitions(lb)) for lb in stack.balancers}


def at_rest(pair: Pair, advert_ms: int) -> dict:
    """Steady traffic, no fault: every VIP move or keepalived state change is false."""
    before = keepalived_states(pair.stack)
    master = pair.master()
    with pair.loop(f"rest-{advert_ms}") as loop, pair.lab.timeline(VIP, interval=0.05) as timeline:
        time.sleep(pair.args.rest)
        records = loop.records()
    after = keepalived_states(pair.stack)
    changes = timeline.changes()
    return {
        "advert_ms": advert_ms,
        "seconds": pair.args.rest,
        "master": master,
        "holder_changes": len(changes) - 1,
        "keepalived_state_changes": sum(after[lb] - before[lb] for lb in after),
        "requests": len(records),
        "failed": sum(not r["ok"] for r in records),
        "timeline": changes,
    }


def inject(pair: Pair, mode: str, lb: str) -> None:
    if mode == "keepalived":
        pair.stack.crash_keepalived(lb)
    elif mode == "link":
        pair.lab.cut_link(lb)
    else:
        pair.stack.standby(lb, on=True)


def recover(pair: Pair, mode: str, lb: str) -> None:
    """Undo the fault; with nopreempt the old master comes back as the backup."""
    if mode == "link":
        pair.lab.restore_link(lb)
    elif mode == "standby":
        pair.stack.standby(lb, on=False)
    # keepalived: the agent restarts it from the live configuration.
    pair.settle()


def one_failover(pair: Pair, advert_ms: int, mode: str, index: int) -> dict:
    old = pair.master()
    new = next(lb for lb in pair.lab.balancers if lb != old)
    with pair.loop(f"{mode}-{advert_ms}-{index}") as loop, pair.lab.timeline(VIP) as timeline:
        time.sleep(1)
        t0 = time.monotonic()
        inject(pair, mode, old)
        while timeline.first({new}, after=t0) is None and time.monotonic() < t0 + TAKEOVER_TIMEOUT_S:
            time.sleep(0.02)
        taken = timeline.first({new}, after=t0)
        time.sleep(1)
        records = loop.records()
    if taken is None:
        raise LabError(f"{mode} on {old}: {new} never held {VIP} alone: {timeline.changes(t0)}")
    released = next((t for t, held in timeline.samples if t >= t0 and old not in held), None)
    gap = longest_gap(records, after=t0 - 0.3, before=taken + 1)
    served = [r for r in records if r["t"] > taken + 0.3]
    if not served or not all(r["ok"] for r in served):
        raise LabError(f"{mode} on {old}: the client is not served after the takeover: {served[-3:]}")
    recover(pair, mode, old)
    return {
        "advert_ms": advert_ms,
        "mode": mode,
        "round": index,
        "from": old,
        "to": new,
        "gap_ms": round(gap.ms, 1),
        "failed_requests": gap.failed,
        "takeover_s": round(taken - t0, 3),
        "released_s": round(released - t0, 3) if released is not None else None,
        "timeline": timeline.changes(t0),
    }


def environment(args: argparse.Namespace) -> dict:
    return {
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "haproxy": tool_version(["haproxy", "-v"]),
        "keepalived": tool_version(["keepalived", "--version"]),
        "loadavg_start": os.getloadavg(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "settings": {
            k: (list(v) if isinstance(v, tuple) else str(v) if isinstance(v, Path) else v)
            for k, v in vars(args).items()
        },
    }


def run(args: argparse.Namespace) -> dict:
    facts = {"environment": environment(args), "rest": [], "failovers": []}
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="fulcrum-failover-") as tmp,
        HaLab(args.prefix) as lab,
        HaStack(lab, agent_wait="2s") as stack,
    ):
        pair = Pair(lab, stack, args, Path(tmp))
        pair.configure()
        for advert_ms in args.adverts:
            measure_interval(pair, advert_ms, facts)
    facts["environment"]["loadavg_end"] = os.getloadavg()
    facts["environment"]["seconds"] = round(time.monotonic() - started)
    return facts


def measure_interval(pair: Pair, advert_ms: int, facts: dict) -> None:
    """The rest check, then the failovers, at one advert interval."""
    pair.set_advert(advert_ms)
    rest = at_rest(pair, advert_ms)
    facts["rest"].append(rest)
    progress(
        f"advert {advert_ms} ms at rest: {rest['holder_changes']} VIP moves, "
        f"{rest['keepalived_state_changes']} keepalived state changes, {rest['failed']}/{rest['requests']} failed"
    )
    for index in range(pair.args.rounds):
        for mode in pair.args.modes:
            result = one_failover(pair, advert_ms, mode, index)
            facts["failovers"].append(result)
            progress(
                f"advert {advert_ms} ms {mode} #{index + 1} {result['from']}->{result['to']}: "
                f"gap {result['gap_ms']} ms, takeover {result['takeover_s']} s"
            )


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("failover bench: network namespaces need root", file=sys.stderr)
        return 2
    subprocess.run(["make", "-s", "-C", str(REPO_ROOT / "agents"), "build"], check=True)
    try:
        facts = run(args)
    except LabError as err:
        print(f"failover bench: setup broken: {err}", file=sys.stderr)
        return 1
    for path in failoverreport.write(args.output, facts):
        print(f"wrote {path}", file=sys.stderr)
    print(failoverreport.markdown(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
