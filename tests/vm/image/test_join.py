"""A second appliance, booted from the same image, joins the first one's cluster at its first
boot, unattended from its seed disk, runs the cluster's revisions, and its database becomes a
synchronous standby of the first's. Then the two are a VRRP pair for a VIP on the management
segment, and the master is powered off under a client's request loop (the last test: the
second appliance is gone after it).

After test_image.py (file-name order): the first appliance is set up, its services applied.
Both are on the management segment (``Segment``) and reach each other directly. The second
makes the same lab of namespaces (client, two servers) as the first, so the cluster's
services carry traffic on it too.
"""

import json
import time

import pytest
import requests

from tests.harness.requestloop import RequestLoop, longest_gap
from tests.harness.stack import ApiClient
from tests.vm.image.appliance import DNS, GATEWAY, MGMT, PREFIX, Appliance
from tests.vm.image.conftest import ARTIFACTS, L4_VIP, L7_VIP, LAB
from tests.vm.image.test_image import client_get

JOINED = "lb-joined"
ADDRESS = "10.0.2.16"
MAC = "52:54:00:f0:c0:02"
FRONT_VIP = "10.0.2.100"  # on the management segment, held by the VRRP master
ADVERT_MS = 200
PASSWORD = "Fulcrum-joined-7"


def revision_states(api, number):
    revision = next(r for r in api.get("/api/v1/revisions/").json()["results"] if r["number"] == number)
    return {n["node"]: n["state"] for n in revision["nodes"]}


def newest(api):
    return api.get("/api/v1/revisions/").json()["results"][0]["number"]


def wait_applied(appliance, api, number, what):
    def applied():
        states = revision_states(api, number)
        assert states.get(JOINED) != "failed", states
        return states.get(JOINED) == "applied"

    appliance.wait_until(applied, 300, f"revision {number} applied on {JOINED} ({what})")


@pytest.fixture(scope="module")
def joined(image, segment, appliance, services):
    api = services["api"]
    made = api.post("/api/v1/join-codes/")
    assert made.status_code == 201, made.text
    target = MGMT  # the first appliance, on the management network
    box = Appliance(image, ARTIFACTS / "run-joined", segment, address=ADDRESS, mac=MAC)
    box.prepare(
        setup_conf=f"interface={MAC}\naddress={ADDRESS}/{PREFIX}\ngateway={GATEWAY}\ndns={DNS}\nhostname={JOINED}\n"
        f"admin_password={PASSWORD}\ncluster=join\njoin_address={target}\njoin_code={made.json()['code']}\n"
    )
    box.boot(console=False)  # the seed answers everything
    try:
        box.wait_for_ssh(timeout=900)
        node = appliance.wait_until(
            lambda: [n for n in api.get("/api/v1/nodes/").json()["results"] if n["name"] == JOINED], 300,
            f"{JOINED} in the cluster's nodes",
        )[0]  # fmt: skip
        wait_applied(appliance, api, newest(api), "at its first start")
        box.ssh(LAB)
        yield {"box": box, "api": api, "node": node, "code": made.json(), "target": target}
    except Exception:
        print(f"---- {JOINED}: serial console (tail) ----\n{box.serial_log(120)}")
        raise
    finally:
        box.stop()
        # Taken out of service for good: the operator deletes its node.
        for node in api.get("/api/v1/nodes/").json()["results"]:
            if node["name"] == JOINED:
                api.delete(f"/api/v1/nodes/{node['id']}/")


def test_the_second_appliance_joins_from_its_seed(appliance, joined):
    box, api = joined["box"], joined["api"]
    assert joined["node"]["address"] == ADDRESS
    # The first appliance registered itself with its management address: both can be HA peers.
    first = next(n for n in api.get("/api/v1/nodes/").json()["results"] if n["name"] == appliance.hostname)
    assert first["address"] == MGMT
    code = next(c for c in api.get("/api/v1/join-codes/").json()["results"] if c["id"] == joined["code"]["id"])
    assert (code["state"], code["node"]) == ("used", JOINED)
    # Its agent follows the cluster's API, pinned to the certificate the cluster signed at discovery.
    api_env = box.ssh("grep -v '^#' /etc/fulcrum/agent/api.env").stdout.split()
    assert api_env == [f"FULCRUM_API=https://{joined['target']}", "FULCRUM_API_PIN=/etc/fulcrum/cluster/console.crt"]
    assert (
        box.ssh("cat /etc/fulcrum/cluster/console.crt").stdout
        == appliance.ssh("cat /etc/fulcrum/tls/console.crt").stdout
    )
    started = box.ssh("journalctl -b -u fulcrum-agent -o cat | grep 'fulcrum-agent starting' | tail -1").stdout
    assert f"api=https://{joined['target']}" in started, started
    assert box.ssh("stat -c %a /etc/fulcrum/agent/node.token").stdout.strip() == "600"
    # The cluster's admins sign in there: no console password or CLI token was made here.
    assert box.ssh("test -e /home/admin/.config/fulcrum/config.yaml", check=False).returncode == 1
    # Neither appliance joins another cluster now: the first runs its own, the second joined one.
    again = "echo K7QM-W2XD-9HRT-5BNP-3CAZ | fulcrum-manage fulcrum_join 10.0.2.2:1 --name lb-x --address 10.0.2.99"
    for box_, words in ((appliance, "already runs a cluster of its own"), (box, "already joined the cluster of")):
        refused = box_.ssh(again, check=False)
        assert refused.returncode != 0 and words in refused.stderr, refused
    # Its own console's sign-in page names the cluster's console (its database has no admins).
    membership = requests.get(f"{box.url}/api/v1/cluster/", verify=False, timeout=60).json()
    assert membership == {"member_of": f"https://{joined['target']}/", "node": JOINED}
    # The join is in the cluster's audit log, without the code.
    entries = api.get("/api/v1/audit/", params={"action": "appliance-join"}).json()["results"]
    assert [e["object_name"] for e in entries] == [JOINED]
    assert joined["code"]["code"] not in str(entries)


def test_the_joined_appliance_carries_the_clusters_services(joined):
    box = joined["box"]
    for url, count in ((f"http://{L7_VIP}/", 6), (f"http://{L4_VIP}:8080/", 8)):
        box.wait_until(
            lambda url=url, count=count: set(client_get(box, url, count)) == {"s1", "s2"}, 120,
            f"both servers answering through {url} on {JOINED}",
        )  # fmt: skip


def test_a_change_on_the_cluster_reaches_the_joined_appliance(joined):
    box, api = joined["box"], joined["api"]
    s2 = next(m for m in api.get("/api/v1/members/").json()["results"] if m["name"] == "s2" and m["port"] == 80)
    try:
        answer = api.post(f"/api/v1/members/{s2['id']}/runtime/", json={"state": "drain"})
        assert answer.status_code == 200, answer.text
        wait_applied(box, api, answer.json()["revision"], "s2 drained")
        assert set(client_get(box, f"http://{L7_VIP}/", 4)) == {"s1"}
    finally:
        answer = api.post(f"/api/v1/members/{s2['id']}/runtime/", json={"state": "enabled"})
        assert answer.status_code == 200, answer.text
    wait_applied(box, api, answer.json()["revision"], "s2 back")
    box.wait_until(lambda: set(client_get(box, f"http://{L7_VIP}/", 6)) == {"s1", "s2"}, 60, "s2 back on the joined")


def test_the_joined_appliances_database_is_a_synchronous_standby(appliance, joined):
    box, api = joined["box"], joined["api"]

    def synchronous():
        state = api.get("/api/v1/cluster/replication/").json()
        return state if state["state"] == "synchronous" else None

    # The primary's commits wait for the standby, which streams through its own slot.
    state = appliance.wait_until(synchronous, 120, "the cluster database synchronous")
    assert state["role"] == "primary" and [s["name"] for s in state["standbys"]] == [JOINED], state
    assert state["slots"] == [f"lb_joined_{joined['node']['id']}"], state
    # The standby's API reads the same database, with the same tokens, and cannot change it.
    local = ApiClient(box.url, api.headers["Authorization"].split()[1])
    local.verify, local.trust_env = False, False
    mine = local.get("/api/v1/cluster/replication/").json()
    assert (mine["role"], mine["state"], mine["primary"]) == ("standby", "streaming", MGMT), mine
    pool = api.create("/api/v1/pools/", name="replicated", algorithm="round-robin")
    try:
        box.wait_until(
            lambda: "replicated" in [p["name"] for p in local.get("/api/v1/pools/").json()["results"]], 30,
            "a pool made on the primary, on the standby",
        )  # fmt: skip
        refused = local.post("/api/v1/pools/", json={"name": "on-the-standby", "algorithm": "round-robin"})
        assert refused.status_code == 503, refused.text
        assert refused.json()["primary"] == f"https://{MGMT}/" and "standby" in refused.json()["detail"]
        assert local.delete(f"/api/v1/pools/{pool['id']}/").status_code == 503
    finally:
        assert api.delete(f"/api/v1/pools/{pool['id']}/").status_code == 204
    assert "on-the-standby" not in [p["name"] for p in api.get("/api/v1/pools/").json()["results"]]
    # Its schema is the primary's: the API's start did not migrate it.
    started = box.ssh("journalctl -b -u fulcrum-api -o cat | grep -c 'This database is a standby'").stdout
    assert int(started) >= 1, started


def holders(appliances, address):
    return {box.address for box in appliances if box.ssh(f"ip -o addr show to {address}/32").stdout.strip()}


def test_the_pairs_vip_moves_when_its_master_is_powered_off(appliance, joined, segment):
    """The data plane between the two appliances: an HA group (the joined one master) for a VIP
    on the segment, a client there in a steady loop, and the master's plug pulled."""
    box, api = joined["box"], joined["api"]
    nic = appliance.ssh(f"ip -o -4 addr show to {MGMT}/32").stdout.split()[1]
    ids = {n["name"]: n["id"] for n in api.get("/api/v1/nodes/").json()["results"]}
    web = next(p for p in api.get("/api/v1/pools/").json()["results"] if p["name"] == "web")
    front = api.create("/api/v1/virtual-services/", name="front", vip=FRONT_VIP, port=80, protocol="http",
                       default_pool=web["id"])  # fmt: skip
    group = api.create(
        "/api/v1/ha-groups/", name="front", vrid=51, interface=nic, vips=[FRONT_VIP], vrrp_version=3,
        advert_interval_ms=ADVERT_MS,
        nodes=[{"node": ids[JOINED], "priority": 150}, {"node": ids[appliance.hostname], "priority": 100}],
    )  # fmt: skip
    try:
        answer = api.post("/api/v1/revisions/", json={"message": "a VIP for the pair"})
        assert answer.status_code == 201, answer.text
        wait_applied(box, api, answer.json()["number"], "the pair's HA group")
        box.wait_until(lambda: holders((appliance, box), FRONT_VIP) == {ADDRESS}, 60, f"{JOINED} alone holds the VIP")
        out = segment_artifacts()
        loop = RequestLoop(segment.name, [f"http://{FRONT_VIP}/"], out / "loop-pair.jsonl", interval_ms=50,
                           timeout_ms=2000)  # fmt: skip
        with loop:
            time.sleep(3)
            t0 = time.monotonic()
            box.power_off()
            appliance.wait_until(lambda: holders((appliance,), FRONT_VIP), 30, f"{appliance.hostname} takes the VIP")
            taken = time.monotonic()
            time.sleep(3)
            records = loop.records()
        # The master served before, the survivor serves after. How long answers take (and so
        # whether one passes the loop's timeout) depends on the machine's load: it is measured
        # (the gap, the failures on either side), not asserted.
        before = [r for r in records if r["t"] < t0]
        after = [r for r in records if r["t"] >= taken + 1]
        assert any(r["ok"] for r in before), before[-5:]
        assert any(r["ok"] for r in after), after[-5:]
        gap = longest_gap(records, after=t0 - 0.5)
        figures = {"gap": gap.as_dict(), "vip_taken_after_s": round(taken - t0, 3), "requests": len(records),
                   "failed": sum(not r["ok"] for r in records), "failed_before": sum(not r["ok"] for r in before),
                   "failed_after": sum(not r["ok"] for r in after), "advert_ms": ADVERT_MS}  # fmt: skip
        (out / "pair-failover.json").write_text(json.dumps(figures, indent=1) + "\n")
        print(f"the pair's data-plane gap when the master was powered off: {figures}")
    finally:
        # The joined appliance is gone: the VIP goes back to the first one's lab alone.
        api.delete(f"/api/v1/ha-groups/{group['id']}/")
        api.delete(f"/api/v1/virtual-services/{front['id']}/")
        api.post("/api/v1/revisions/", json={"message": "the pair's VIP removed"})


def segment_artifacts():
    out = ARTIFACTS / "pair"
    out.mkdir(parents=True, exist_ok=True)
    return out
