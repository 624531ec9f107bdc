"""Apply with confirm when the change cuts the node off from the API: the agent's own net.

client ns --> VIP 10.77.100.30:80 (HAProxy in lb ns, run by fulcrum-agent) --> s1 | s2

The service's pool is "one" (s1) or "two" (s2). A revision pointing it at s2 is applied
with ``confirm_within_s``; the API is then stopped (the node hears nothing from it, as if
the change had cut it off). Without a confirmation, the agent goes back to s1 by itself
at the deadline plus its grace, with the API still down, and when the API is back it
reports that and runs the API's automatic rollback. With a confirmation in time, nothing
reverts. The agent runs with a short grace so that the waits stay short.
"""

import time
from datetime import datetime

import pytest

from tests.harness.stack import Stack

pytestmark = pytest.mark.netns

VIP = "10.77.100.30"
CONFIRM_S = 10  # the API's minimum
GRACE_S = 2


class GraceStack(Stack):
    """The stack whose agent goes back GRACE_S seconds after a missed deadline."""

    def _spawn(self, name, argv, **kwargs):
        if name == "agent":
            argv = [*argv, "--confirm-grace", f"{GRACE_S}s"]
        super()._spawn(name, argv, **kwargs)


@pytest.fixture(scope="module")
def stack(lab):
    with GraceStack(lab) as stack:
        yield stack


@pytest.fixture(scope="module")
def pools(stack, lab):
    """Pools "one" (s1) and "two" (s2), and the service on "one", applied."""
    pools = {}
    for pool_name, server in (("one", "s1"), ("two", "s2")):
        pools[pool_name] = stack.api.create("/api/v1/pools/", name=pool_name)["id"]
        stack.api.create("/api/v1/members/", pool=pools[pool_name], name=server, address=lab.servers[server], port=80)
    service = stack.api.create(
        "/api/v1/virtual-services/", name="web", vip=VIP, port=80, protocol="http", default_pool=pools["one"]
    )
    pools["service"] = service["id"]
    assert stack.apply("web on s1")["nodes"][0]["state"] == "applied"
    return pools


def answering(lab):
    """Who answers on the VIP now."""
    status, body, _ = lab.client_get(f"http://{VIP}/")
    return body.strip() if status == 200 else f"HTTP {status}"


def wait_for(predicate, timeout, what):
    """Seconds until ``predicate()`` held; fail after ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.1)
    pytest.fail(f"{what}: not within {timeout}s")


def point_to(stack, pools, pool_name):
    response = stack.api.patch(f"/api/v1/virtual-services/{pools['service']}/", json={"default_pool": pools[pool_name]})
    assert response.status_code == 200, response.text


def apply_with_confirm(stack, lab, message):
    """Apply with confirm; return the revision once the node runs it and s2 answers."""
    response = stack.api.post("/api/v1/revisions/", json={"message": message, "confirm_within_s": CONFIRM_S})
    assert response.status_code == 201, response.text
    revision = response.json()
    assert stack.wait_for_node(revision["number"])["nodes"][0]["state"] == "applied"
    wait_for(lambda: answering(lab) == "s2", 5, "s2 answers")
    return revision


def revision(stack, number):
    response = stack.api.get("/api/v1/revisions/", params={"limit": 1000})
    return next(r for r in response.json()["results"] if r["number"] == number)


def node_state(stack, number):
    node = revision(stack, number)["nodes"][0]
    return node["state"], node["message"]


def seconds_until(moment):
    return moment.timestamp() - time.time()


def test_a_node_cut_off_from_the_api_goes_back_by_itself(stack, lab, pools):
    point_to(stack, pools, "one")
    before = stack.apply("web on s1", force=True)["number"]  # on s1 already, but from a known revision
    assert answering(lab) == "s1"
    point_to(stack, pools, "two")
    risky = apply_with_confirm(stack, lab, "web on s2, with confirm")
    deadline = datetime.fromisoformat(risky["confirm_by"])
    assert seconds_until(deadline) > 4, "too slow to stop the API before the deadline"

    stack.stop_api()
    try:
        assert answering(lab) == "s2"  # HAProxy serves on; the agent waits for the deadline
        wait_for(lambda: seconds_until(deadline) < -0.5, CONFIRM_S, "deadline passed")
        assert answering(lab) == "s2", "went back before the grace ran out"
        wait_for(lambda: answering(lab) == "s1", GRACE_S + 5, "s1 answers again with the API down")
        late = -seconds_until(deadline)
        assert GRACE_S - 0.5 < late < GRACE_S + 4, late
        went_back = f"no contact with the API within {GRACE_S} s after r{risky['number']}'s confirm deadline"
        wait_for(lambda: went_back in stack.log("agent"), 3, "the agent logs why")  # logged once the reload returns
        assert [answering(lab) for _ in range(5)] == ["s1"] * 5
    finally:
        stack.start_api()

    # Back in touch: the agent reports, then runs the API's automatic rollback.
    rollback = risky["number"] + 1
    wait_for(
        lambda: any(r["number"] == rollback for r in stack.api.get("/api/v1/revisions/").json()["results"]),
        30,
        "rollback",
    )
    assert stack.wait_for_node(rollback)["nodes"][0]["state"] == "applied"
    made = revision(stack, rollback)
    assert (made["rollback_of"], made["author"]) == (before, None), made
    assert made["message"] == f"automatic rollback: r{risky['number']} not confirmed within {CONFIRM_S} s"
    assert node_state(stack, risky["number"]) == ("failed", f"{went_back}: went back to r{before}")
    assert revision(stack, risky["number"])["confirm_state"] == "rolled-back"
    node = stack.api.get("/api/v1/nodes/").json()["results"][0]
    assert node["applied_revision"] == rollback
    assert answering(lab) == "s1"


def test_a_revision_confirmed_in_time_stays_when_the_api_goes_away(stack, lab, pools):
    point_to(stack, pools, "one")
    stack.apply("web on s1", force=True)  # the previous test's rollback left it there
    assert answering(lab) == "s1"
    point_to(stack, pools, "two")
    risky = apply_with_confirm(stack, lab, "web on s2, confirmed")
    deadline = datetime.fromisoformat(risky["confirm_by"])
    confirmed = stack.api.post(f"/api/v1/revisions/{risky['id']}/confirm/")
    assert confirmed.status_code == 200, confirmed.text
    # The agent's poll watching the deadline hears of the confirmation at once.
    heard = f'msg="confirm: revision confirmed" revision={risky["number"]}'
    wait_for(lambda: heard in stack.log("agent"), 5, "the agent hears of the confirmation")

    stack.stop_api()
    try:
        wait_for(lambda: seconds_until(deadline) < -(GRACE_S + 2), CONFIRM_S + GRACE_S + 3, "grace over")
        assert [answering(lab) for _ in range(5)] == ["s2"] * 5
        assert f"after r{risky['number']}'s confirm deadline" not in stack.log("agent")
    finally:
        stack.start_api()

    assert node_state(stack, risky["number"])[0] == "applied"
    newest = stack.api.get("/api/v1/revisions/").json()["results"][0]
    assert (newest["number"], newest["confirm_state"]) == (risky["number"], "confirmed")
    time.sleep(1)  # a poll after the restart changes nothing either
    assert answering(lab) == "s2"
    assert stack.api.get("/api/v1/nodes/").json()["results"][0]["applied_revision"] == risky["number"]
