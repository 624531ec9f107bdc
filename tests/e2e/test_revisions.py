"""Revisions in the console (webui/e2e/revisions.spec.ts), with the traffic checked after each step.

client ns --> VIP 10.77.100.30:80 (service rev-web) --> pool rev-pool: s1, then s2, then s1 again

The pool and service are made through the API; the console applies them, applies the move
to s2 with confirm and confirms it, then rolls back to the first revision. Everything rev-*
is deleted (and that applied) at the end.
"""

import time

import pytest

pytestmark = pytest.mark.browser

VIP = "10.77.100.30"
POOL, SERVICE = "rev-pool", "rev-web"


def _named(stack, collection, name):
    return [o for o in stack.api.get(f"/api/v1/{collection}/?limit=1000").json()["results"] if o["name"] == name]


def _remove_ours(stack):
    for service in _named(stack, "virtual-services", SERVICE):
        assert stack.api.delete(f"/api/v1/virtual-services/{service['id']}/").status_code == 204
    for pool in _named(stack, "pools", POOL):
        assert stack.api.delete(f"/api/v1/pools/{pool['id']}/").status_code == 204


def _apply_pending(stack, message):
    if stack.api.get("/api/v1/revisions/pending/").json()["pending"]:
        revision = stack.apply(message)
        assert revision["nodes"][0]["state"] == "applied", revision


def _newest(stack):
    return stack.api.get("/api/v1/revisions/?limit=1").json()["results"][0]


def _answers(stack, expected, timeout=15):
    """Who answers on the VIP, once it is only ``expected`` (HAProxy may still be reloading)."""
    deadline = time.monotonic() + timeout
    while True:
        seen = set()
        for _ in range(6):
            status, body, _ = stack.lab.client_get(f"http://{VIP}/")
            seen.add(body.strip() if status == 200 else f"HTTP {status}")
        if seen == {expected} or time.monotonic() > deadline:
            return seen
        time.sleep(0.5)


def test_console_applies_confirms_and_rolls_back(stack, playwright):
    s1, s2 = stack.lab.servers["s1"], stack.lab.servers["s2"]
    _remove_ours(stack)
    _apply_pending(stack, "rev: start clean")
    try:
        pool = stack.api.create("/api/v1/pools/", name=POOL)
        member = stack.api.create("/api/v1/members/", pool=pool["id"], name="s1", address=s1, port=80)
        stack.api.create(
            "/api/v1/virtual-services/", name=SERVICE, vip=VIP, port=80, protocol="http", default_pool=pool["id"]
        )

        playwright("revisions.spec.ts", REV_STEP="apply")
        first = _newest(stack)
        assert (first["message"], first["live"]) == ("rev: add rev-web", True), first
        assert _answers(stack, "s1") == {"s1"}

        moved = stack.api.patch(f"/api/v1/members/{member['id']}/", json={"name": "s2", "address": s2})
        assert moved.status_code == 200, moved.text
        playwright("revisions.spec.ts", REV_STEP="confirm")
        confirmed = _newest(stack)
        assert (confirmed["message"], confirmed["confirm_within_s"]) == ("rev: move rev-pool to s2", 60), confirmed
        assert (confirmed["confirm_state"], confirmed["live"]) == ("confirmed", True), confirmed
        assert _answers(stack, "s2") == {"s2"}

        playwright("revisions.spec.ts", REV_STEP="rollback")
        rolled = _newest(stack)
        assert (rolled["rollback_of"], rolled["live"]) == (first["number"], True), rolled
        assert rolled["number"] == confirmed["number"] + 1, rolled  # nothing rolled back by itself
        assert _answers(stack, "s1") == {"s1"}
        (member,) = stack.api.get(f"/api/v1/members/?pool={pool['id']}").json()["results"]
        assert (member["name"], member["address"]) == ("s1", s1)
    finally:
        _remove_ours(stack)
        _apply_pending(stack, "rev: remove rev-*")
    assert _answers(stack, "HTTP 0") == {"HTTP 0"}  # rev-web is gone: nothing listens on the VIP
