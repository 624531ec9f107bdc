"""The dashboard, a service's page and its pool's members, live in Chromium against the real
stack: traffic through the VIP shows on the dashboard, a stopped server goes down there with
its reason, and a member drained in one click on the pool page gets no more traffic.

client ns --> VIP 10.77.100.40:80 (HAProxy in lb ns) --> s1 s2 s3;  agent --telemetry--> API
"""

import collections
import contextlib
import threading
import time

import pytest

pytestmark = pytest.mark.browser

VIP = "10.77.100.40"
POOL = "dsh-pool"
SERVICE = "dsh-web"
CHECK = {"interval_ms": 1000, "timeout_ms": 500, "rise": 1, "fall": 2}
# The agent reports every 10 s: a sample reaches the API within two intervals.
TELEMETRY_WAIT_S = 45


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    pytest.fail(f"{what}: not within {timeout}s")


@contextlib.contextmanager
def traffic(lab):
    """Requests through the VIP in the background, a few a second, while the block runs."""
    stop = threading.Event()

    def send():
        while not stop.is_set():
            lab.client_get(f"http://{VIP}/", timeout=1)
            stop.wait(0.2)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def remove_leftovers(stack):
    for service in stack.api.get("/api/v1/virtual-services/?limit=1000").json()["results"]:
        if service["name"] == SERVICE:
            stack.api.delete(f"/api/v1/virtual-services/{service['id']}/")
    for pool in stack.api.get("/api/v1/pools/?limit=1000").json()["results"]:
        if pool["name"] == POOL:
            stack.api.delete(f"/api/v1/pools/{pool['id']}/")


def health(stack, pool):
    """{member name: status} as this stack's node reports it."""
    rows = stack.api.get(f"/api/v1/health/?pool={pool}").json()["results"]
    return {row["member_name"]: row["status"] for row in rows if row["node_name"] == stack.node}


def requests_seen(stack, service):
    body = stack.api.get(f"/api/v1/metrics/services/?service={service}&minutes=5&step=10").json()
    return sum(p["requests_per_s"] for s in body["series"] for p in s["points"])


def answers(lab, count=20):
    seen = collections.Counter()
    for _ in range(count):
        status, body, _ = lab.client_get(f"http://{VIP}/")
        seen[body.strip() if status == 200 else f"HTTP {status}"] += 1
    return seen


@pytest.fixture
def dsh(stack):
    remove_leftovers(stack)
    pool = stack.api.create("/api/v1/pools/", name=POOL, algorithm="round-robin")
    stack.api.create("/api/v1/health-checks/", pool=pool["id"], type="http", path="/health", **CHECK)
    for name, address in stack.lab.servers.items():
        stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=address, port=80)
    service = stack.api.create(
        "/api/v1/virtual-services/", name=SERVICE, vip=VIP, port=80, protocol="http", default_pool=pool["id"]
    )
    revision = stack.apply("dsh: dashboard")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    try:
        yield {"pool": pool["id"], "service": service["id"]}
    finally:
        stack.lab.start_server("s1")
        remove_leftovers(stack)
        stack.apply("dsh: removed")


def test_dashboard_live_figures_member_down_and_one_click_drain(stack, playwright, dsh):
    servers = sorted(stack.lab.servers)
    stopped, drained = servers[0], servers[1]
    with traffic(stack.lab):
        wait_for(lambda: set(health(stack, dsh["pool"]).values()) == {"up"}, TELEMETRY_WAIT_S, "every member up")
        wait_for(lambda: requests_seen(stack, dsh["service"]) > 0, TELEMETRY_WAIT_S, "the requests in the metrics")
        playwright("dashboard.spec.ts", DSH_PHASE="live")

        stack.lab.stop_server(stopped)
        wait_for(lambda: health(stack, dsh["pool"]).get(stopped) == "down", TELEMETRY_WAIT_S, f"{stopped} down")
        playwright("dashboard.spec.ts", DSH_PHASE="down")

    # The drain was made in the console (one click, no apply): only the third server answers.
    pool = stack.api.get(f"/api/v1/pools/{dsh['pool']}/").json()
    assert {m["name"]: m["state"] for m in pool["members"]}[drained] == "drain", pool["members"]
    seen = answers(stack.lab)
    assert seen == {servers[2]: 20}, seen
