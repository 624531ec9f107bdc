"""The console in Debian's Chromium (Playwright) against the real stack, then real traffic.

The specs in webui/e2e/ click through the console; this file starts what they talk to
(PostgreSQL, API serving the built console, agent, HAProxy in a lab) and checks afterwards
where the traffic goes.
"""

import collections
import json

import pytest
import requests

from tests.e2e.conftest import VIP

pytestmark = pytest.mark.browser


def test_console_flow_creates_applies_and_traffic_spreads(stack, playwright):
    playwright("console-flow.spec.ts")
    revisions = stack.api.get("/api/v1/revisions/").json()["results"]
    assert revisions and revisions[0]["nodes"][0]["state"] == "applied", revisions
    answers = collections.Counter()
    for _ in range(30):
        status, body, _ = stack.lab.client_get(f"http://{VIP}/")
        answers[body.strip() if status == 200 else f"HTTP {status}"] += 1
    assert answers == {"s1": 10, "s2": 10, "s3": 10}


def test_console_shows_server_errors_and_creates_nothing(stack, playwright):
    before = stack.api.get("/api/v1/virtual-services/").json()["count"]
    playwright("validation.spec.ts")
    assert stack.api.get("/api/v1/virtual-services/").json()["count"] == before


def _https(stack, *args):
    proc = stack.lab.exec("cl", ["curl", "-sk", "--max-time", "3", *args], capture_output=True, text=True, timeout=10)
    return proc.stdout.strip()


def test_console_layer7_https_rules_and_runtime_drain(stack, playwright):
    playwright("layer7-flow.spec.ts")
    moved = _https(stack, "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", f"https://{VIP}/api/v1/users")
    assert moved == f"301 https://{VIP}/api/v2"  # the rule moved to the top wins
    bodies = collections.Counter(_https(stack, f"https://{VIP}/") for _ in range(20))
    assert set(bodies) <= {"s2", "s3"}, bodies  # s1 was drained at runtime from the console


def test_console_renders_rare_states(stack, playwright):
    playwright("states.spec.ts")


def test_console_ha_group_address_apply_and_standby(stack, playwright):
    """Runs before the layer-4 flow, whose NAT service would need IPVS on apply."""
    playwright("ha-flow.spec.ts")
    node = next(n for n in stack.api.get("/api/v1/nodes/").json()["results"] if n["name"] == stack.node)
    assert (node["address"], node["standby"]) == ("10.77.1.1", True)
    groups = {g["name"]: g for g in stack.api.get("/api/v1/ha-groups/").json()["results"]}
    group, mirror = groups["ha-e2e"], groups["ha-e2e-mirror"]
    settings = (group["vrid"], group["interface"], group["vips"], group["advert_interval_ms"])
    assert settings == (60, "cl0", ["10.77.100.60"], 200)
    assert group["nodes"] == [{"node": node["id"], "priority": 150, "interface": ""}]
    assert (mirror["vrid"], mirror["vips"]) == (61, ["10.77.100.61"])
    assert stack.api.get("/api/v1/ipvs-sync/").json()["ha_group"] == group["id"]
    # The newest revision is the standby the console asked for, and the node applied it.
    revision = stack.api.get("/api/v1/revisions/").json()["results"][0]
    assert revision["message"] == f"runtime: node {stack.node} standby", revision
    assert revision["live"], revision
    assert [(n["node"], n["state"]) for n in revision["nodes"]] == [(stack.node, "applied")]
    # What the node was sent for it: its HA settings say standby, with both groups.
    token = (stack.workdir / "node.token").read_text().strip()
    desired = requests.get(
        f"{stack.url}/api/v1/agent/desired/?known=0", headers={"Authorization": f"Node {token}"}, timeout=30
    )
    assert desired.status_code == 200, desired.text
    bundle = desired.json()
    assert bundle["revision"] == revision["number"]
    ha = json.loads(bundle["files"]["keepalived.d/ha.json"])
    assert ha["standby"] is True
    assert [(g["name"], g["vrid"], g["interface"], g["priority"]) for g in ha["groups"]] == [
        ("ha-e2e", 60, "cl0", 150),
        ("ha-e2e-mirror", 61, "cl0", 150),
    ]


def test_console_layer4_nat_service_refused_direct_routing_and_sync(stack, playwright):
    try:
        playwright("layer4-flow.spec.ts")
        services = {s["name"]: s for s in stack.api.get("/api/v1/virtual-services/").json()["results"]}
        nat = services["l4-nat"]
        assert (nat["forwarding"], nat["protocol"], nat["port"]) == ("nat", "tcp", 8040)  # direct routing was refused
        pool = stack.api.get(f"/api/v1/pools/{nat['default_pool']}/").json()
        settings = (pool["algorithm"], pool["on_failure"], pool["persistence"]["type"], pool["health_check"]["type"])
        assert settings == ("shortest-expected-delay", "quiesce", "source", "tcp")
        assert len(pool["members"]) == 1
        sync = stack.api.get("/api/v1/ipvs-sync/").json()
        assert (sync["enabled"], sync["interface"], sync["sync_id"], sync["group"]) == (True, "eth1", 42, "239.0.0.81")
    finally:
        _remove_layer4(stack)


def _remove_layer4(stack):
    """This host has no IPVS: leave nothing layer-4 behind for the files that apply after this one."""
    for service in stack.api.get("/api/v1/virtual-services/?limit=1000").json()["results"]:
        if service["name"] == "l4-nat":
            stack.api.delete(f"/api/v1/virtual-services/{service['id']}/").raise_for_status()
            stack.api.delete(f"/api/v1/pools/{service['default_pool']}/").raise_for_status()
    sync = stack.api.get("/api/v1/ipvs-sync/").json()
    if sync["enabled"]:
        stack.api.patch("/api/v1/ipvs-sync/", json={"enabled": False, "version": sync["version"]}).raise_for_status()
