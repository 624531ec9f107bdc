"""Server states across reloads, through REST, with real HAProxy and real servers (issue 20).

client ns --> VIP 10.77.100.50:80 (HAProxy in lb ns, run by fulcrum-agent) --> s1 s2 (s3)

Every reload used to start every server up: a member its health check had taken down took
requests again until its first check in the new worker (about 0.4 to 0.7 s after an apply),
and a new member got requests before its first check. The agent now writes, before each
reload, the server state file the compiled configuration loads (agents/internal/haproxy/
serverstate.go). What reaches a member is read from the new worker's own counters
(``lbtot``: how many times the balancer chose it) while a request loop runs every 20 ms.
"""

import json
import time

import pytest

from tests.harness.requestloop import RequestLoop
from tests.harness.stack import ARTIFACTS
from tests.netns.test_rest_flow import CHECK, wait_for

pytestmark = pytest.mark.netns

VIP = "10.77.100.50"
URL = f"http://{VIP}/"
# Long enough for the new worker's first check of every member, and then some.
AFTER_RELOAD_S = 3 * CHECK["interval_ms"] / 1000


@pytest.fixture(scope="module")
def service(stack, lab):
    pool = stack.api.create("/api/v1/pools/", name="steady", algorithm="round-robin")
    stack.api.create("/api/v1/health-checks/", pool=pool["id"], type="http", path="/health", **CHECK)
    members = {
        name: stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=lab.servers[name], port=80)
        for name in ("s1", "s2")
    }
    vs = stack.api.create("/api/v1/virtual-services/", name="steady", vip=VIP, port=80, default_pool=pool["id"])
    assert stack.apply("steady service on s1 and s2")["nodes"][0]["state"] == "applied"
    wait_for(lambda: states(stack) == {"s1": "UP", "s2": "UP"}, 10)
    return {"pool": pool, "vs": vs, "members": members}


def states(stack):
    """pool-steady's servers and their status in the current worker."""
    return stack.server_states("pool-steady")


def worker(stack):
    """The current worker's PID: a reload changes it."""
    info = dict(line.split(": ", 1) for line in stack.haproxy_runtime("show info").splitlines() if ": " in line)
    return int(info["Pid"])


def server_stats(stack, column):
    """One ``show stat`` column of each pool-steady server, in the current worker."""
    lines = stack.haproxy_runtime("show stat").splitlines()
    header = lines[0].lstrip("# ").split(",")
    rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
    return {r["svname"]: int(r[column]) for r in rows if r["pxname"] == "pool-steady" and r["type"] == "2"}


def chosen(stack):
    """How many times the current worker's balancer chose each server."""
    return server_stats(stack, "lbtot")


def weights(stack):
    return server_stats(stack, "weight")


def unrelated_change(stack, service, message):
    """Apply a change that touches no member (the VIP's client timeout): a reload."""
    vs = stack.api.get(f"/api/v1/virtual-services/{service['vs']['id']}/").json()
    timeout = 31000 if vs["client_timeout_ms"] != 31000 else 32000
    stack.api.patch(f"/api/v1/virtual-services/{vs['id']}/", json={"client_timeout_ms": timeout}).raise_for_status()
    return apply(stack, message)


def apply(stack, message):
    revision = stack.apply(message)
    assert revision["nodes"][0]["state"] == "applied", revision["nodes"]
    return revision


def set_member(stack, service, name, state):
    member = service["members"][name]
    stack.api.patch(f"/api/v1/members/{member['id']}/", json={"state": state}).raise_for_status()


def measure_reload(stack, lab, name, change):
    """Run ``change`` (which must reload) under a request every 20 ms; return what the new
    worker's balancer chose in the next AFTER_RELOAD_S, the requests since the change, and
    the server states the new worker first reported."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with RequestLoop(lab.ns("cl"), [URL], ARTIFACTS / f"loop-server-state-{name}.jsonl") as loop:
        time.sleep(0.5)
        before = worker(stack)
        t0 = time.monotonic()
        change()
        assert worker(stack) != before, "the change was applied without a reload"
        first = states(stack)
        time.sleep(AFTER_RELOAD_S)
        counts = chosen(stack)
        records = [r for r in loop.records() if r["t"] >= t0]
    answered = {}
    for r in records:
        key = r["server"] if r["ok"] else r["error"]
        answered[key] = answered.get(key, 0) + 1
    result = {"chosen": counts, "first_states": first, "requests": len(records), "answers": answered}
    (ARTIFACTS / f"server-state-{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"{name}: {result}")
    return result


def test_a_member_down_stays_down_through_a_reload(service, stack, lab):
    lab.stop_server("s2")
    try:
        wait_for(lambda: states(stack)["s2"].startswith("DOWN"), 5)
        result = measure_reload(stack, lab, "down-member", lambda: unrelated_change(stack, service, "unrelated"))
        assert result["first_states"]["s2"].startswith("DOWN"), result
        assert result["chosen"]["s2"] == 0, f"the new worker sent {result['chosen']['s2']} request(s) to down s2"
        # No answer came from s2. A request the loop gave up on (250 ms) under a loaded host is
        # not this test's subject (test_rest_flow's apply under traffic counts those), and
        # redispatch hides a bad choice from the client anyway: the worker's own count above is.
        assert "s2" not in result["answers"] and result["answers"].get("s1"), result
    finally:
        lab.start_server("s2")
    wait_for(lambda: states(stack)["s2"] == "UP", 5)


def test_a_new_member_gets_nothing_before_its_check_passes(service, stack, lab):
    lab.stop_server("s3")
    try:

        def add_s3():
            pool = service["pool"]["id"]
            member = stack.api.create("/api/v1/members/", pool=pool, name="s3", address=lab.servers["s3"], port=80)
            service["members"]["s3"] = member
            apply(stack, "s3 joins, failing")

        result = measure_reload(stack, lab, "new-member", add_s3)
        assert result["first_states"]["s3"].startswith("DOWN"), result
        assert result["chosen"]["s3"] == 0, f"the new worker sent {result['chosen']['s3']} request(s) to new s3"
        assert "s3" not in result["answers"] and {"s1", "s2"} <= set(result["answers"]), result
    finally:
        lab.start_server("s3")
    wait_for(lambda: states(stack)["s3"] == "UP", 5)


def spread(lab, count=30):
    answers = {}
    for _ in range(count):
        status, body, _ = lab.client_get(URL)
        key = body.strip() if status == 200 else f"HTTP {status}"
        answers[key] = answers.get(key, 0) + 1
    return answers


def test_operator_states_follow_the_configuration_across_reloads(service, stack, lab):
    """Disable and drain go through the runtime API (no reload); a later reload must load
    what the configuration says then, whatever the running worker had been told."""
    wait_for(lambda: set(states(stack).values()) == {"UP"}, 5)
    members = set(states(stack))
    set_member(stack, service, "s1", "disabled")
    set_member(stack, service, "s2", "drain")
    before = worker(stack)
    apply(stack, "s1 disabled, s2 drained")
    assert worker(stack) == before
    assert states(stack)["s1"] == "MAINT" and weights(stack)["s2"] == 0

    # Undone together with an unrelated change: the reload brings both back.
    set_member(stack, service, "s1", "enabled")
    set_member(stack, service, "s2", "enabled")
    unrelated_change(stack, service, "s1 and s2 back, and an unrelated change")
    assert worker(stack) != before
    wait_for(lambda: set(states(stack).values()) == {"UP"}, 5)
    assert weights(stack)["s2"] > 0 and set(spread(lab)) == members

    # Disabled again, then an unrelated reload: it stays disabled; enabled again, it is back.
    set_member(stack, service, "s1", "disabled")
    apply(stack, "s1 disabled again")
    unrelated_change(stack, service, "unrelated, s1 still disabled")
    assert states(stack)["s1"] == "MAINT" and set(spread(lab)) == members - {"s1"}
    set_member(stack, service, "s1", "enabled")
    apply(stack, "s1 enabled again")
    wait_for(lambda: states(stack)["s1"] == "UP", 5)
    assert set(spread(lab)) == members
