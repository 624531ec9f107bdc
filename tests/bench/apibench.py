"""The control plane at scale (``make bench-api``): how long an operator waits for one
change, and for an apply, as the configuration grows from 100 to 10,000 virtual services.

    .venv/bin/python -m tests.bench.apibench [--sizes 100,1000,10000] [--writes N] [--applies N]

Each size gets its own real API (tests/harness/stack.py: gunicorn + PostgreSQL, as in the
appliance) and database, loaded through the ORM in one transaction with SIZE http services,
each with two pools of four members (one with an HTTP health check) and five rules that
send paths to its second pool. Then, over the API, as an operator or a script would:

- single writes, one at a time on a kept-alive connection, spread over the configuration:
  a member's weight (PATCH), a new rule (POST), a service's client timeout (PATCH);
- applies: a forced revision (compile, ``haproxy -c`` and ``keepalived --config-test``,
  publish), timed from the POST to its answer;
- reads after the applies, as the console polls them: the history page (10 revisions), the
  dashboard (``overview/``) and the pending banner's count, each several times;
- bulk: 5,000 rules into one service in one call (``POST /api/v1/rules/bulk/``, replace):
  created the first round, rewritten the next two;
- agents (the first size only): 100 nodes' agents long-polling at once, as fulcrum-agent
  does (a 503 is tried again after its Retry-After). The API's CPU (gunicorn's processes,
  from /proc) over 10 s while they all wait, an operator's read meanwhile, and the time from
  a publish's POST until the last agent has its bundle.

Medians and 95th percentiles per size; ratios against the smallest size in the same run.
Every write must answer 200/201 and every apply 201, or the benchmark fails: numbers from
refused requests would lie. The times themselves are never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

import requests

from tests.bench.loads import BenchError
from tests.harness.stack import API_DIR, Stack

RESULTS = Path(__file__).with_name("results")
SIZES = (100, 1_000, 10_000)
MEMBERS = 4
RULES = 5

# SIZE services, 2 pools each (4 members, the first pool with an HTTP check), 5 rules each.
LOAD_CODE = """
import json, sys
from django.db import transaction
from services.models import HealthCheck, Member, Pool, Rule, VirtualService
plan = json.loads(sys.stdin.read())
size, members, rules = plan["size"], plan["members"], plan["rules"]
def octets(i):
    return f"{(i >> 8) & 255}.{i & 255}"
with transaction.atomic():
    pools = Pool.objects.bulk_create(
        [Pool(name=f"bench-{i:05d}-{side}") for i in range(size) for side in ("a", "b")]
    )
    made = Member.objects.bulk_create(
        [Member(pool=p, name=f"m{j}", address=f"10.{100 + j}.{octets(k)}", port=8080)
         for k, p in enumerate(pools) for j in range(members)]
    )
    HealthCheck.objects.bulk_create(
        [HealthCheck(pool=p, type="http", path="/health") for p in pools[::2]]
    )
    services = VirtualService.objects.bulk_create(
        [VirtualService(name=f"bench-{i:05d}", vip=f"10.200.{octets(i)}", port=80, protocol="http",
                        default_pool=pools[2 * i]) for i in range(size)]
    )
    Rule.objects.bulk_create(
        [Rule(virtual_service=s, position=r, name=f"r{r}", action="use_pool", pool=pools[2 * i + 1],
              conditions=[{"kind": "path_prefix", "values": [f"/app{r}/"], "name": "", "negate": False}])
         for i, s in enumerate(services) for r in range(rules)]
    )
print(json.dumps({
    "counts": [VirtualService.objects.count(), Rule.objects.count(), Member.objects.count()],
    "picks": [{"service": services[i].id, "pool_b": pools[2 * i + 1].id, "member": made[2 * i * members + 1].id}
              for i in plan["pick"]],
}))
"""


def load(stack: Stack, size: int, pick: list[int]) -> list[dict]:
    """Load SIZE services; the ids of the services (with their second pool and a member of
    their first) at the indexes ``pick``."""
    plan = {"size": size, "members": MEMBERS, "rules": RULES, "pick": pick}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", LOAD_CODE],
        cwd=API_DIR,
        env=stack.env,
        input=json.dumps(plan),
        text=True,
        capture_output=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise BenchError(f"loading {size} services failed:\n{done.stderr[-3000:]}")
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    if loaded["counts"] != [size, size * RULES, size * 2 * MEMBERS]:
        raise BenchError(f"loaded {loaded['counts']} (services, rules, members), wanted {size} services")
    return loaded["picks"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(want: int, call, *args, **kwargs) -> float:
    """Milliseconds ``call(*args, **kwargs)`` took; its answer must have status ``want``."""
    started = time.perf_counter()
    answer = call(*args, **kwargs)
    elapsed = (time.perf_counter() - started) * 1000
    if answer.status_code != want:
        raise BenchError(f"{answer.request.method} {answer.request.url} -> {answer.status_code} {answer.text[:500]}")
    return elapsed


def spread(count: int, size: int) -> list[int]:
    """``count`` indexes over 0..size-1, spread over the whole configuration (never the same
    neighbourhood twice in a row)."""
    return [(k * 7919 + 13) % size for k in range(count)]


def measure_writes(api, picks: list[dict]) -> dict:
    times = {"member_weight": [], "rule_create": [], "service_patch": []}
    for k, pick in enumerate(picks):
        times["member_weight"].append(
            timed(200, api.patch, f"/api/v1/members/{pick['member']}/", json={"weight": 50 + k % 100})
        )
        rule = {
            "virtual_service": pick["service"],
            "name": f"bench-new-{k}",
            "conditions": [{"kind": "path_prefix", "values": [f"/new{k}/"], "name": "", "negate": False}],
            "action": "use_pool",
            "pool": pick["pool_b"],
        }
        times["rule_create"].append(timed(201, api.post, "/api/v1/rules/", json=rule))
        patch = {"client_timeout_ms": 30_000 + k}
        times["service_patch"].append(timed(200, api.patch, f"/api/v1/virtual-services/{pick['service']}/", json=patch))
    return {
        kind: {"p50_ms": statistics.median(values), "p95_ms": percentile(values, 0.95), "n": len(values)}
        for kind, values in times.items()
    }


def measure_bulk(api, pick: dict, count: int, rounds: int) -> dict:
    """``count`` rules in one call into one service: created the first round, the same names
    updated the next ones (replace)."""
    times = []
    for k in range(rounds):
        rows = [
            {"name": f"bulk-{j}", "action": "use_pool", "pool": pick["pool_b"],
             "conditions": [{"kind": "path_prefix", "values": [f"/bulk{k}/{j}/"]}]}
            for j in range(count)
        ]  # fmt: skip
        body = {"virtual_service": pick["service"], "mode": "replace", "rules": rows}
        times.append(timed(200, api.post, "/api/v1/rules/bulk/", json=body, timeout=600) / 1000)
    return {"rules": count, "create_s": times[0], "median_s": statistics.median(times), "n": len(times)}


def measure_applies(api, applies: int) -> dict:
    times = []
    for k in range(applies):
        body = {"message": f"bench apply {k}", "force": True}
        times.append(timed(201, api.post, "/api/v1/revisions/", json=body, timeout=1800) / 1000)
    return {"median_s": statistics.median(times), "max_s": max(times), "n": len(times)}


# The console's polls (webui: HISTORY_PAGE_SIZE, the dashboard, the pending banner).
READS = {
    "history": ("/api/v1/revisions/", {"limit": 10}),
    "dashboard": ("/api/v1/overview/", {}),
    "pending_count": ("/api/v1/revisions/pending/count/", {}),
}


def measure_reads(api, rounds: int = 5) -> dict:
    """Median milliseconds of each of READS, ``rounds`` times in turn."""
    times = {name: [] for name in READS}
    for _ in range(rounds):
        for name, (path, params) in READS.items():
            times[name].append(timed(200, api.get, path, params=params, timeout=600))
    return {name: {"p50_ms": round(statistics.median(t), 1), "n": len(t)} for name, t in times.items()}


def cpu_seconds(pid: int) -> float:
    """User and system CPU of ``pid`` and its children (gunicorn's master and workers)."""
    pids = [pid, *map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())]
    ticks = 0
    for p in pids:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def measure_agents(stack: Stack, count: int, rest_s: float = 10.0) -> dict:
    api = stack.api
    tokens = [api.post("/api/v1/nodes/", json={"name": f"agent-{i:03}", "address": f"10.9.{i // 200}.{i % 200 + 1}"})
              for i in range(count)]  # fmt: skip
    if any(t.status_code != 201 for t in tokens):
        raise BenchError(f"nodes: {[t.text for t in tokens if t.status_code != 201][:3]}")
    known = (api.get("/api/v1/revisions/", params={"limit": 1}).json()["results"] or [{"number": 0}])[0]["number"]
    answers, refused = {}, []

    def agent(token):
        session = requests.Session()
        session.headers["Authorization"] = f"Node {token}"
        while True:  # as fulcrum-agent: a 204 (nothing new within the wait) asks again at once
            got = session.get(f"{stack.url}/api/v1/agent/desired/", params={"known": known, "wait": 55}, timeout=90)
            if got.status_code == 204:
                continue
            if got.status_code != 503:
                answers[token] = (got.status_code, time.monotonic())
                return
            refused.append(token)
            time.sleep(int(got.headers.get("Retry-After", "1")))

    threads = [threading.Thread(target=agent, args=(t.json()["token"],), daemon=True) for t in tokens]
    for thread in threads:
        thread.start()
    time.sleep(5)  # all in, waiting
    pid = stack._procs["api"].pid
    cpu_before, wall = cpu_seconds(pid), time.monotonic()
    time.sleep(rest_s)
    cpu = (cpu_seconds(pid) - cpu_before) / (time.monotonic() - wall)
    started = time.perf_counter()
    read = api.get("/api/v1/virtual-services/", params={"limit": 1}, timeout=60)
    read_ms = (time.perf_counter() - started) * 1000
    if read.status_code != 200:
        raise BenchError(f"operator read while agents wait: {read.status_code}")
    early = dict(answers)
    published = time.monotonic()
    timed(201, api.post, "/api/v1/revisions/", json={"message": "wake the agents", "force": True}, timeout=600)
    posted = time.monotonic() - published
    for thread in threads:
        thread.join(120)
    if len(answers) != count or any(status != 200 for status, _ in answers.values()):
        raise BenchError(f"agents: {len(answers)} answered, {sorted({s for s, _ in answers.values()})}")
    return {
        "agents": count, "api_cpu_at_rest_pct": round(cpu * 100, 1), "operator_read_ms": round(read_ms, 1),
        "answered_before_the_publish": len(early), "publish_s": round(posted, 2),
        "all_woken_s": round(max(t for _, t in answers.values()) - published, 2), "told_to_retry": len(refused),
    }  # fmt: skip


def run_size(size: int, writes: int, applies: int, bulk: int, prefix: str, agents: int = 0) -> dict:
    with Stack(prefix=f"{prefix}{size}") as stack:
        started = time.monotonic()
        picks = load(stack, size, spread(writes, size))
        loaded = time.monotonic() - started
        api = stack.api
        api.get("/api/v1/virtual-services/", params={"limit": 1})  # a warm connection and worker
        result = {"size": size, "load_s": round(loaded, 1)}
        result["writes"] = measure_writes(api, picks)
        result["apply"] = measure_applies(api, applies) if applies else None  # before bulk adds its rules
        result["reads"] = measure_reads(api)  # with the applies' revisions, nothing pending
        result["bulk"] = measure_bulk(api, picks[0], bulk, 3) if bulk else None
        result["agents"] = measure_agents(stack, agents) if agents else None
        return result


def report(results: list[dict]) -> str:
    base = results[0]
    lines = [
        "| services | member weight p50 / p95 | new rule p50 / p95 | service patch p50 / p95 | bulk rules | apply median |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        cells = []
        for kind in ("member_weight", "rule_create", "service_patch"):
            w, b = r["writes"][kind], base["writes"][kind]
            cells.append(f"{w['p50_ms']:.0f} / {w['p95_ms']:.0f} ms ({w['p50_ms'] / b['p50_ms']:.2f}x)")
        bulk = r["bulk"]
        cells.append(f"{bulk['rules']:,} in {bulk['median_s']:.2f} s (first {bulk['create_s']:.2f} s)" if bulk else "-")
        apply, first = r["apply"], base["apply"]
        cells.append(
            f"{apply['median_s']:.2f} s ({apply['median_s'] / first['median_s']:.1f}x)" if apply and first else "-"
        )
        lines.append(f"| {r['size']:,} | " + " | ".join(cells) + " |")
    lines.append(f"(ratios: against {base['size']:,} services, the same run)")
    lines += ["", "| services | " + " | ".join(f"{name} p50" for name in READS) + " |",
              "| ---: |" + " ---: |" * len(READS)]  # fmt: skip
    for r in results:
        reads, first = r["reads"], base["reads"]
        cells = [f"{reads[n]['p50_ms']:.0f} ms ({reads[n]['p50_ms'] / first[n]['p50_ms']:.1f}x)" for n in READS]
        lines.append(f"| {r['size']:,} | " + " | ".join(cells) + " |")
    for r in results:
        if r.get("agents"):
            a = r["agents"]
            lines.append(
                f"{a['agents']} agents long-polling at {r['size']:,} services: API CPU at rest {a['api_cpu_at_rest_pct']}%, "
                f"an operator's read {a['operator_read_ms']} ms, all woken {a['all_woken_s']} s after the publish's POST "
                f"(which took {a['publish_s']} s); told to try again {a['told_to_retry']} times"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated service counts")
    parser.add_argument("--writes", type=int, default=30, help="writes of each kind per size")
    parser.add_argument("--applies", type=int, default=3, help="forced applies per size (0: none)")
    parser.add_argument("--bulk", type=int, default=5000, help="rules in one bulk call (3 rounds per size; 0: none)")
    parser.add_argument("--agents", type=int, default=100, help="long-polling agents at the first size (0: none)")
    parser.add_argument("--prefix", default="apibench")
    parser.add_argument("--output", type=Path, help="JSON results (default: tests/bench/results/api-DATE.json)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    load_before = os.getloadavg()
    results = []
    for k, size in enumerate(sizes):
        print(f"apibench: {size:,} services …", file=sys.stderr, flush=True)
        agents = args.agents if k == 0 else 0
        results.append(run_size(size, args.writes, args.applies, args.bulk, args.prefix, agents))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    document = {
        "date": date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "results": results,
    }
    output = args.output or RESULTS / f"api-{document['date']}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(document, indent=2) + "\n")
    print(report(results))
    print(f"load average before {load_before[0]:.2f}, after {document['load_average']['after'][0]:.2f}; {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
