"""End to end through REST: objects -> apply -> agent -> real HAProxy -> real servers.

client ns --> VIP 10.77.100.10:80 (HAProxy in lb ns, run by fulcrum-agent) --> s1 s2 s3
"""

import collections
import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.harness.requestloop import RequestLoop, longest_gap
from tests.harness.stack import ARTIFACTS

pytestmark = pytest.mark.netns

VIP = "10.77.100.10"
CHECK = {"interval_ms": 1000, "timeout_ms": 500, "rise": 1, "fall": 2}


def spread(lab, count):
    """Send ``count`` requests (one connection each) and count who answered."""
    answers = collections.Counter()
    for _ in range(count):
        status, body, _ = lab.client_get(f"http://{VIP}/")
        answers[body.strip() if status == 200 else f"HTTP {status}"] += 1
    return answers


def wait_for(predicate, timeout):
    """Seconds until ``predicate()`` held, or fail after ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.05)
    pytest.fail(f"condition not met within {timeout}s")


@pytest.fixture(scope="module")
def service(stack, lab):
    pool = stack.api.create("/api/v1/pools/", name="web", algorithm="round-robin")
    stack.api.create("/api/v1/health-checks/", pool=pool["id"], type="http", path="/health", **CHECK)
    members = {
        name: stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=address, port=80)
        for name, address in lab.servers.items()
    }
    stack.api.create(
        "/api/v1/virtual-services/", name="web", vip=VIP, port=80, protocol="http", default_pool=pool["id"]
    )
    revision = stack.apply("web service with three servers")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    wait_for(lambda: set(stack.server_states("pool-web").values()) == {"UP"}, 10)
    return members


def test_round_robin_reaches_each_server_ten_times(service, lab):
    assert spread(lab, 30) == {"s1": 10, "s2": 10, "s3": 10}


def test_stopped_server_leaves_within_fall_times_interval(service, stack, lab):
    lab.stop_server("s2")
    try:
        bound = CHECK["fall"] * CHECK["interval_ms"] / 1000 + CHECK["timeout_ms"] / 1000
        took = wait_for(lambda: stack.server_states("pool-web")["s2"].startswith("DOWN"), bound + 2)
        print(f"s2 marked down after {took:.2f}s (bound {bound:.1f}s)")
        assert spread(lab, 20) == {"s1": 10, "s3": 10}
    finally:
        lab.start_server("s2")
    wait_for(lambda: stack.server_states("pool-web")["s2"] == "UP", CHECK["rise"] * CHECK["interval_ms"] / 1000 + 2)
    assert spread(lab, 30) == {"s1": 10, "s2": 10, "s3": 10}


def test_apply_under_traffic_drops_nothing(service, stack, lab):
    """A new revision (drain s3) is applied by a seamless reload while requests flow."""
    failures, answers, stop = [], collections.Counter(), threading.Event()

    def hammer():
        while not stop.is_set():
            try:
                status, body, _ = lab.client_get(f"http://{VIP}/")
                answers[body.strip()] += 1
                if status != 200:
                    failures.append(status)
            except Exception as err:  # a refused or reset connection is exactly what we look for
                failures.append(repr(err))

    workers = [threading.Thread(target=hammer) for _ in range(4)]
    for worker in workers:
        worker.start()
    try:
        time.sleep(1)
        stack.api.patch(f"/api/v1/members/{service['s3']['id']}/", json={"state": "drain"}).raise_for_status()
        assert stack.apply("drain s3")["nodes"][0]["state"] == "applied"
        time.sleep(1)
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=30)
    assert sum(answers.values()) > 20, answers
    assert failures == []
    after = spread(lab, 20)
    assert after == {"s1": 10, "s2": 10}, after


def test_rejected_apply_changes_nothing_live(service, stack, lab):
    before = stack.api.get("/api/v1/revisions/").json()["count"]
    response = stack.api.post(
        "/api/v1/virtual-services/",
        json={
            "name": "clash",
            "vip": VIP,
            "port": 80,
            "protocol": "http",
            "default_pool": service["s1"]["pool"],
        },
    )
    assert response.status_code == 400 and "vip" in response.json()
    assert stack.api.get("/api/v1/revisions/").json()["count"] == before
    assert sum(spread(lab, 10).values()) == 10


# A listener the node refuses, and the kernel's words for it: a port another program holds;
# an IPv6 address the node does not have (the lab's VIPs are IPv4).
REFUSED_BINDS = {
    "port-taken": ("10.77.100.20", "bind: address already in use"),
    "address-missing": ("2001:db8:77::20", "bind: cannot assign requested address"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_BINDS))
def test_a_revision_the_node_cannot_bind_costs_the_other_vips_nothing(service, stack, lab, case):
    """A revision haproxy -c accepts but the node cannot run (its port is taken there, or the
    VIP is not the node's) is reported failed in the kernel's words, the last good config
    keeps serving, and the next revision applies. A reload that could not bind cost every VIP
    about 2 s of refused connections (105 of 191 requests, a request every 20 ms): the agent
    now tries the new listeners on the node first and reloads nothing, so the service the
    revision did not touch loses no request."""
    vip, words = REFUSED_BINDS[case]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    squatter = subprocess.Popen(
        [
            *lab.lb_exec_prefix,
            "python3",
            "-c",
            "import socket,time; s=socket.socket(); s.bind(('10.77.100.20', 80)); s.listen(); time.sleep(120)",
        ]
    )
    try:
        time.sleep(0.5)
        pool = service["s1"]["pool"]
        clash = stack.api.create("/api/v1/virtual-services/", name="taken", vip=vip, port=80, default_pool=pool)
        with RequestLoop(lab.ns("cl"), [f"http://{VIP}/"], ARTIFACTS / f"loop-failed-revision-{case}.jsonl") as loop:
            time.sleep(0.5)
            t0 = time.monotonic()
            failed = stack.apply(f"a listener the node refuses: {case}")
            time.sleep(1)
            records = [r for r in loop.records() if r["t"] >= t0]
        refused = sum(not r["ok"] for r in records)
        print(f"a revision failed on the node ({case}): {refused} of {len(records)} requests to {VIP} failed")
        (ARTIFACTS / f"failed-revision-{case}.json").write_text(
            json.dumps({"failed": refused, "requests": len(records), "gap": longest_gap(records).as_dict()})
        )
        node = failed["nodes"][0]
        assert node["state"] == "failed", node
        address = f"[{vip}]:80" if ":" in vip else f"{vip}:80"
        assert f"bind {address}: {words}" in node["message"], node["message"]
        # ... and the API names the service whose listener it is (revisions.problems).
        [problem] = node["problems"]
        assert (problem["path"], problem["daemon"], problem["node"]) == (
            "virtual-services/taken/vip",
            "haproxy",
            stack.node,
        )
        assert problem["daemon_message"] == f"bind {address}: {words}", problem
        assert refused == 0, f"{refused} of {len(records)} requests to the untouched VIP failed"
        assert sum(spread(lab, 10).values()) == 10  # the previous revision still serves
        stack.api.delete(f"/api/v1/virtual-services/{clash['id']}/").raise_for_status()
        # The fix applies at once: the agent long-polls for a revision newer than the refused
        # one (it paused 30 s after a refusal before: 17-20 s in the issue).
        t1 = time.monotonic()
        assert stack.apply("remove the clash")["nodes"][0]["state"] == "applied"
        fixed_after = time.monotonic() - t1
        print(f"the fix after a refused revision ({case}) applied {fixed_after:.2f} s after it was published")
        (ARTIFACTS / f"fix-after-refused-{case}.json").write_text(
            json.dumps({"applied_after_s": round(fixed_after, 3)})
        )
        assert fixed_after < 5, f"the fix applied {fixed_after:.1f} s after it was published"
        assert sum(spread(lab, 10).values()) == 10
    finally:
        squatter.kill()
        squatter.wait()


@pytest.mark.parametrize("victim", ["worker", "master"])
def test_haproxy_killed_is_started_again_at_once(service, stack, lab, victim):
    """Nothing watched HAProxy between the agent's polls: a killed worker (its master exits
    with it) left the VIP without service for 19.2 s, a killed master for 14.8 s (issue 20).
    The agent's supervisor starts it again from the live configuration within its 200 ms
    look and the start. The gap is measured under a request every 20 ms (the figures in
    tests/artifacts/stack/); that service comes back, and the agent says why, is asserted."""
    states, served = stack.server_states("pool-web"), spread(lab, 30)  # as the live revision has it
    seen = {e["id"] for e in stack.api.get("/api/v1/daemon-events/").json()["results"]}
    live = json.loads((stack.state_dir / "state.json").read_text())["revision"]
    master = int((stack.state_dir / "run" / "haproxy.pid").read_text().split()[0])
    (worker,) = _children(master)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    loop = RequestLoop(lab.ns("cl"), [f"http://{VIP}/"], ARTIFACTS / f"loop-haproxy-{victim}-killed.jsonl")
    with loop:
        time.sleep(0.5)
        t0 = time.monotonic()
        os.kill(worker if victim == "worker" else master, signal.SIGKILL)
        back = wait_for(lambda: loop.answered_since(t0), 10)
        time.sleep(1)
        records = loop.records()
    gap = longest_gap(records, after=t0 - 0.1)
    failed = sum(not r["ok"] for r in records if r["t"] >= t0 - 0.1)
    (ARTIFACTS / f"haproxy-{victim}-killed.json").write_text(
        json.dumps({"gap": gap.as_dict(), "failed": failed, "requests": len(records), "answered_again_after_s": back})
    )
    print(f"haproxy {victim} SIGKILL: {failed} of {len(records)} requests failed, longest gap {gap.ms:.0f} ms")
    new_master = int((stack.state_dir / "run" / "haproxy.pid").read_text().split()[0])
    assert new_master != master
    assert "supervise: a daemon had stopped; started it again" in stack.log("agent")

    # The operator sees it: one event, from this node, naming the revision it came back with.
    def new_events():
        return [e for e in stack.api.get("/api/v1/daemon-events/").json()["results"] if e["id"] not in seen]

    wait_for(new_events, 10)
    events = new_events()
    assert [(e["daemon"], e["outcome"], e["detail"]) for e in events] == [
        ("haproxy", "restarted", f"it had stopped; started it again from the live configuration (revision {live})")
    ], events
    wait_for(lambda: stack.server_states("pool-web") == states, 10)
    assert spread(lab, 30) == served  # the live revision again, its drained members too


def _children(pid):
    """The processes whose parent is ``pid`` (HAProxy's master's workers)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(stat.parent.name))
    return kids
