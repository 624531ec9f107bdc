"""Dynamic least load through the whole stack, layer 7: REST -> compiler -> agent -> HAProxy
(``balance leastconn``, fulcrum-loadd's agent-check on every server) -> the lab's servers, and
the agent's report of each member's load and connections back in the API.

::

    client ns             lb ns: HAProxy, compiled from the API        server nss
    [cl] 10.77.1.2  --->  10.77.100.45:80 (tcp) pool "dllc"      --> s1, s2, s3: nginx :80,
                          servers weight 256 agent-check :3333          fulcrum-loadd :3333/:3334
                          agent: GET :3334/v1/load every second

The loads are the study's worked example (A = s1 50 %, B = s2 30 %, C = s3 70 %; see
tests/harness/loadd.py). Connections are pinned to one server at a time by putting the other
two in maintenance through the runtime API, so the test holds exactly 10, 8 and 12.
"""

import subprocess
import sys

import pytest

from tests.netns.test_rest_flow import wait_for

pytestmark = pytest.mark.netns

VIP = "10.77.100.45"
BACKEND = "pool-dllc"
EXAMPLE_WEIGHTS = {"s1": 51, "s2": 84, "s3": 35}  # 256 x 20 %, 33 %, 14 %, truncated

# Runs in the client namespace: opens COUNT connections to VIP:80, says so, holds them until
# its standard input closes.
HOLDER = """\
import socket, sys
held = [socket.create_connection((sys.argv[1], 80), timeout=5) for _ in range(int(sys.argv[2]))]
print(len(held), flush=True)
sys.stdin.read()
"""


@pytest.fixture(scope="module")
def pool(stack, lab, loads):
    api = stack.api
    pool = api.create("/api/v1/pools/", name="dllc", algorithm="dynamic-least-load", feedback_interval_ms=200)
    for name in ("s1", "s2", "s3"):
        api.create("/api/v1/members/", pool=pool["id"], name=name, address=lab.servers[name], port=80)
    api.create("/api/v1/virtual-services/", name="dllc", vip=VIP, port=80, protocol="tcp", default_pool=pool["id"])
    assert stack.apply("dllc")["nodes"][0]["state"] == "applied"
    return pool


def stat_rows(stack):
    lines = stack.haproxy_runtime("show stat").splitlines()
    header = lines[0].lstrip("# ").split(",")
    rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
    return {r["svname"]: r for r in rows if r["pxname"] == BACKEND and r["svname"] not in ("FRONTEND", "BACKEND")}


def weights(stack):
    return {name: int(r["weight"]) for name, r in stat_rows(stack).items()}


def connections(stack):
    return {name: int(r["scur"]) for name, r in stat_rows(stack).items()}


def next_server(lab):
    status, body, _ = lab.curl(f"http://{VIP}/", timeout=3)
    assert status == 200, "no answer through HAProxy"
    return body.strip()


def hold(stack, lab, name, count):
    """Open ``count`` connections that all reach ``name`` (the others in maintenance)."""
    others = [s for s in ("s1", "s2", "s3") if s != name]
    for other in others:
        stack.haproxy_runtime(f"set server {BACKEND}/{other} state maint")
    try:
        proc = subprocess.Popen(
            ["ip", "netns", "exec", lab.ns("cl"), sys.executable, "-c", HOLDER, VIP, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout.readline().strip() == str(count)
        wait_for(lambda: connections(stack)[name] == count, 10)
    finally:
        for other in others:
            stack.haproxy_runtime(f"set server {BACKEND}/{other} state ready")
    return proc


def test_the_compiled_pool_takes_its_weights_from_the_agents(stack, pool):
    wait_for(lambda: weights(stack) == EXAMPLE_WEIGHTS, 10)


def test_worked_example_next_connection_goes_to_b_and_the_api_shows_it(stack, lab, pool):
    wait_for(lambda: weights(stack) == EXAMPLE_WEIGHTS, 10)
    holders = []
    try:
        for name, count in (("s1", 10), ("s2", 8), ("s3", 12)):
            holders.append(hold(stack, lab, name, count))
        assert connections(stack) == {"s1": 10, "s2": 8, "s3": 12}
        # 10 x 500, 8 x 300, 12 x 700: B.
        assert next_server(lab) == "s2"

        def live():
            members = stack.api.get(f"/api/v1/pools/{pool['id']}/").json()["members"]
            return {m["name"]: m["live"][0] for m in members if m["live"]}

        def reported():
            got = live()
            return len(got) == 3 and {n: (m["load_milli"], m["connections"]) for n, m in got.items()} == {
                "s1": (500, 10),
                "s2": (300, 8),
                "s3": (700, 12),
            }

        try:
            wait_for(reported, 20)
        except BaseException:
            print("live:", live(), "\nagent log:", stack.log("agent")[-3000:])
            raise
        for name, member in live().items():
            assert (member["node"], member["layer"], member["feed"]) == (stack.node, "haproxy", "haproxy agent-check")
            assert member["weight"] == EXAMPLE_WEIGHTS[name] and member["message"] == "", member
    finally:
        for proc in holders:
            proc.stdin.close()
            proc.wait(timeout=10)


def test_a_silent_agent_counts_as_the_average_load(stack, lab, pool, loads):
    """s3's load stops making sense: HAProxy alone would keep its last weight (35); the
    agent gives it the weight of the others' mean load, (500 + 300) / 2 = 400: 25 %, so
    256 x 25 / 100 = 64, and the API says why. A good load again and the agent-check rules."""
    wait_for(lambda: weights(stack) == EXAMPLE_WEIGHTS, 10)
    loads.set("s3", "not a number")
    try:

        def message():
            members = stack.api.get(f"/api/v1/pools/{pool['id']}/").json()["members"]
            s3 = next(m for m in members if m["name"] == "s3")
            return s3["live"][0]["message"] if s3["live"] else ""

        took = wait_for(lambda: weights(stack)["s3"] == 64, 15)
        print(f"s3 took the average's weight {took:.1f}s after its load went bad")
        assert weights(stack) == {"s1": 51, "s2": 84, "s3": 64}
        wait_for(lambda: "no fresh load" in message(), 20)
        assert "fulcrum-loadd: HTTP 503" in message()
    finally:
        loads.set("s3", "0.7")
    wait_for(lambda: weights(stack) == EXAMPLE_WEIGHTS, 10)
