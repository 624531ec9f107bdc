"""The new-service wizard in Debian's Chromium against the real stack (webui/e2e/wizard.spec.ts),
then what it made: traffic through the web service's VIP, and the stored layer-4 service."""

import collections

import pytest

pytestmark = pytest.mark.browser

WEB_VIP = "10.77.100.20"


def _by_name(stack, collection):
    return {o["name"]: o for o in stack.api.get(f"/api/v1/{collection}/?limit=1000").json()["results"]}


def test_wizard_creates_services_and_the_web_one_serves_every_member(stack, playwright):
    try:
        playwright("wizard.spec.ts")
        services, pools = _by_name(stack, "virtual-services"), _by_name(stack, "pools")

        # Layer 7: applied by the spec, so every lab member answers through the VIP in turn.
        web = services["wiz-web"]
        assert (web["vip"], web["port"], web["protocol"], web["forwarding"]) == (WEB_VIP, 80, "http", "proxy")
        pool = pools["wiz-web"]
        assert web["default_pool"] == pool["id"]
        assert (pool["algorithm"], pool["health_check"]["type"], pool["health_check"]["path"]) == (
            "round-robin",
            "http",
            "/",
        )
        assert sorted(m["name"] for m in pool["members"]) == sorted(stack.lab.servers)
        answers = collections.Counter()
        for _ in range(30):
            status, body, _ = stack.lab.client_get(f"http://{WEB_VIP}/")
            answers[body.strip() if status == 200 else f"HTTP {status}"] += 1
        assert set(answers) == set(stack.lab.servers), answers

        # Layer 4: stored as the wizard described it (IPVS cannot be applied on this host).
        l4 = services["wiz-l4"]
        assert (l4["vip"], l4["port"], l4["protocol"], l4["forwarding"]) == ("10.77.100.21", 8021, "tcp", "nat")
        l4_pool = pools["wiz-l4"]
        assert l4["default_pool"] == l4_pool["id"]
        assert (l4_pool["algorithm"], l4_pool["health_check"]["type"]) == ("least-connections", "tcp")
        assert [(m["name"], m["port"]) for m in l4_pool["members"]] == [("s1", 80)]

        # The HTTPS run stopped at the review: nothing of it exists.
        assert "wiz-tls" not in services and "wiz-tls" not in pools
        assert "wiz-tls" not in _by_name(stack, "certificates")
    finally:
        # The layer-4 service must not reach a later apply (no IPVS here): delete it and its pool.
        services, pools = _by_name(stack, "virtual-services"), _by_name(stack, "pools")
        if "wiz-l4" in services:
            stack.api.delete(f"/api/v1/virtual-services/{services['wiz-l4']['id']}/")
        if "wiz-l4" in pools:
            stack.api.delete(f"/api/v1/pools/{pools['wiz-l4']['id']}/")
