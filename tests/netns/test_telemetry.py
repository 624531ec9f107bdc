"""The agent's telemetry, end to end: requests through the VIP show up in the API's traffic
series, HAProxy's checks in the members' health, and a stopped server goes down there with
HAProxy's reason and a health event.

client ns --> VIP 10.77.100.61:80 (HAProxy in lb ns) --> s1 s2;  fulcrum-agent --telemetry--> API
"""

import time

import pytest

from tests.netns.test_rest_flow import CHECK, wait_for

pytestmark = pytest.mark.netns

VIP = "10.77.100.61"
REQUESTS = 30
# The agent sends every 10 s; a sample reaches the series within two intervals.
TELEMETRY_WAIT_S = 30


@pytest.fixture(scope="module")
def telemetry(stack, lab):
    pool = stack.api.create("/api/v1/pools/", name="tel", algorithm="round-robin")
    stack.api.create("/api/v1/health-checks/", pool=pool["id"], type="http", path="/health", **CHECK)
    members = {
        name: stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=lab.servers[name], port=80)
        for name in ("s1", "s2")
    }
    service = stack.api.create(
        "/api/v1/virtual-services/", name="tel", vip=VIP, port=80, protocol="http", default_pool=pool["id"]
    )
    revision = stack.apply("telemetry")
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    return {"pool": pool, "members": members, "service": service}


def health(stack, pool):
    """{member name: health row} of this stack's node."""
    rows = stack.api.get(f"/api/v1/health/?pool={pool['id']}").json()["results"]
    return {row["member_name"]: row for row in rows}


def requests_counted(stack, path):
    """{series name: requests} over the last 5 minutes: the rates times the step, added."""
    body = stack.api.get(f"{path}minutes=5&step=10").json()
    assert body["step_s"] == 10
    return {s["name"]: round(sum(p["requests_per_s"] * body["step_s"] for p in s["points"])) for s in body["series"]}


def test_members_health_reaches_the_api(telemetry, stack):
    wait_for(lambda: {r["status"] for r in health(stack, telemetry["pool"]).values()} == {"up"}, TELEMETRY_WAIT_S)
    for name, row in health(stack, telemetry["pool"]).items():
        assert row["node_name"] == stack.node, row
        assert row["check"] == "L7OK" and row["code"] == 200, (name, row)
        assert row["latency_ms"] is not None and not row["stale"], (name, row)


def test_requests_through_the_vip_are_counted_once(telemetry, stack, lab):
    services = "/api/v1/metrics/services/?"
    members = f"/api/v1/metrics/members/?pool={telemetry['pool']['id']}&"
    assert requests_counted(stack, services).get("tel", 0) == 0, "no traffic went through the VIP yet"
    for _ in range(REQUESTS):
        status, _, _ = lab.client_get(f"http://{VIP}/")
        assert status == 200
    try:
        wait_for(lambda: requests_counted(stack, services).get("tel", 0) >= REQUESTS, TELEMETRY_WAIT_S)
    except pytest.fail.Exception:
        points = stack.api.get(f"{services}minutes=5&step=10").json()["series"]
        pytest.fail(f"{REQUESTS} requests not counted within {TELEMETRY_WAIT_S} s; the points: {points}")
    time.sleep(11)  # one more sample: nothing is counted twice
    assert requests_counted(stack, services)["tel"] == REQUESTS
    per_member = requests_counted(stack, members)
    assert per_member == {"s1": REQUESTS // 2, "s2": REQUESTS // 2}, per_member


def test_stopped_server_goes_down_with_a_reason_and_an_event(telemetry, stack, lab):
    test_members_health_reaches_the_api(telemetry, stack)
    lab.stop_server("s2")
    try:
        wait_for(lambda: health(stack, telemetry["pool"])["s2"]["status"] == "down", TELEMETRY_WAIT_S)
        rows = health(stack, telemetry["pool"])
        down = rows["s2"]
        assert down["check"] == "L4CON", down
        assert "Connection refused" in down["detail"], down
        assert down["latency_ms"] is not None and down["code"] is None, down
        assert rows["s1"]["status"] == "up", rows["s1"]
        s2 = telemetry["members"]["s2"]["id"]
        events = stack.api.get(f"/api/v1/health-events/?member={s2}").json()["results"]
        assert events[0]["status"] == "down" and events[0]["previous"] == "up", events
        assert events[0]["check"] == "L4CON" and events[0]["node_name"] == stack.node, events
    finally:
        lab.start_server("s2")
    wait_for(lambda: health(stack, telemetry["pool"])["s2"]["status"] == "up", TELEMETRY_WAIT_S)
