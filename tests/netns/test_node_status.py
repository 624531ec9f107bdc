"""The agent reports what it sees on its node, and the API judges layer-4 members by it.

The real fulcrum-agent reads the lb namespace's addresses (through its exec prefix) and
posts them; a NAT member on no network of the node gets a warning, one on the servers'
bridge does not. (IPVS itself cannot run on this host's kernel: tests/vm proves it.)
"""

import time

import pytest

from tests.harness.lab import LB_CLIENT_SIDE_ADDR, LB_SERVER_SIDE_ADDR

pytestmark = pytest.mark.netns


def _node(stack):
    return stack.api.get("/api/v1/nodes/").json()["results"][0]


def test_agent_reports_the_balancers_networks(stack):
    deadline = time.monotonic() + 30
    while not _node(stack)["networks"] and time.monotonic() < deadline:
        time.sleep(0.2)
    node = _node(stack)
    assert f"{LB_CLIENT_SIDE_ADDR}/24" in node["networks"], node
    assert f"{LB_SERVER_SIDE_ADDR}/24" in node["networks"], node
    assert node["status_at"] is not None


def test_nat_members_off_the_balancers_networks_are_warned_about(stack, lab):
    test_agent_reports_the_balancers_networks(stack)
    pool = stack.api.create("/api/v1/pools/", name="l4", algorithm="round-robin")
    stack.api.create("/api/v1/members/", pool=pool["id"], name="near", address=lab.servers["s1"], port=80)
    stack.api.create("/api/v1/members/", pool=pool["id"], name="far", address="192.0.2.10", port=80)
    service = stack.api.create(
        "/api/v1/virtual-services/",
        name="l4",
        vip=lab.vip(40),
        port=80,
        protocol="tcp",
        forwarding="nat",
        default_pool=pool["id"],
    )
    warnings = "\n".join(stack.api.get(f"/api/v1/virtual-services/{service['id']}/").json()["warnings"])
    assert "member l4/far (192.0.2.10) is on no network of node" in warnings
    # The lab routes its VIP range to the balancer (a local route), as an upstream router would:
    # no interface of the node is on it, and the operator is told what that takes.
    assert f"VIP {lab.vip(40)} is on no network of node" in warnings
    assert "near" not in warnings
