"""A second appliance, booted from the same image, joins the first one's cluster at its first
boot, unattended from its seed disk, runs the cluster's revisions, and its database becomes a
synchronous standby of the first's. The first hands the management VIP and the writable
database over to it (a switchover). Then the two are also a VRRP pair for a VIP on the
management segment, and the second, master of both, is powered off under a client's request
loop and an operator's stream of changes: the first takes both VIPs over and loses no change.
Booted again, the second rejoins as the first's standby. Then the first is cut off from the
second and from the witness: the second alone takes the VIP and changes, and after the heal
the first rejoins; switched back over, the first is the primary at the end (for
test_upgrade.py).

After test_image.py (file-name order): the first appliance is set up, its services applied.
Both are on the management segment (``Segment``) and reach each other directly. The second
makes the same lab of namespaces (client, two servers) as the first, so the cluster's
services carry traffic on it too.
"""

import json
import ssl
import threading
import time

import requests

from tests.harness.requestloop import RequestLoop, longest_gap
from tests.harness.stack import ApiClient
from tests.vm.image.appliance import MGMT, MGMT_VIP
from tests.vm.image.conftest import ARTIFACTS, JOINED, L4_VIP, L7_VIP, LAB, replication_state, wait_applied
from tests.vm.image.conftest import JOINED_ADDRESS as ADDRESS
from tests.vm.image.test_image import client_get, vip_client

FRONT_VIP = "10.0.2.100"  # on the management segment, held by the VRRP master
ADVERT_MS = 200


def test_the_second_appliance_joins_from_its_seed(appliance, joined):
    box, api = joined["box"], joined["api"]
    assert joined["node"]["address"] == ADDRESS
    # The first appliance registered itself with its management address: both can be HA peers.
    first = next(n for n in api.get("/api/v1/nodes/").json()["results"] if n["name"] == appliance.hostname)
    assert first["address"] == MGMT
    code = next(c for c in api.get("/api/v1/join-codes/").json()["results"] if c["id"] == joined["code"]["id"])
    assert (code["state"], code["node"]) == ("used", JOINED)
    # Its agent follows the cluster's API, pinned to the certificate the cluster signed at discovery.
    # Its agent uses the cluster's API at the management VIP, pinned to the certificate the
    # cluster signed at discovery, which this appliance serves too (the join handed its key over).
    api_env = box.ssh("grep -v '^#' /etc/fulcrum/agent/api.env").stdout.split()
    assert api_env == [f"FULCRUM_API=https://{MGMT_VIP}", "FULCRUM_API_PIN=/etc/fulcrum/cluster/console.crt"]
    console = appliance.ssh("cat /etc/fulcrum/tls/console.crt").stdout
    assert box.ssh("cat /etc/fulcrum/cluster/console.crt").stdout == console
    assert ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate((ADDRESS, 443))) == ssl.PEM_cert_to_DER_cert(console)
    assert box.ssh("stat -c '%U %a' /etc/fulcrum/tls/console.key").stdout.split() == ["root", "600"]
    assert f"FULCRUM_MGMT_VIP={MGMT_VIP}" in box.ssh("cat /etc/fulcrum/management.env").stdout
    assert box.ssh("/usr/lib/fulcrum/bin/fulcrum-management state").stdout.strip() == "BACKUP"
    started = box.ssh("journalctl -b -u fulcrum-agent -o cat | grep 'fulcrum-agent starting' | tail -1").stdout
    assert f"api=https://{MGMT_VIP}" in started, started
    assert box.ssh("stat -c %a /etc/fulcrum/agent/node.token").stdout.strip() == "600"
    # The cluster's admins sign in there: no console password or CLI token was made here.
    assert box.ssh("test -e /home/admin/.config/fulcrum/config.yaml", check=False).returncode == 1
    # Neither appliance joins another cluster now: the first runs its own, the second joined one.
    again = "echo K7QM-W2XD-9HRT-5BNP-3CAZ | fulcrum-manage fulcrum_join 10.0.2.2:1 --name lb-x --address 10.0.2.99"
    for box_, words in ((appliance, "already runs a cluster of its own"), (box, "already joined the cluster of")):
        refused = box_.ssh(again, check=False)
        assert refused.returncode != 0 and words in refused.stderr, refused
    # Its own console's sign-in page says it is a read-only standby, and where the cluster's is.
    membership = requests.get(f"{box.url}/api/v1/cluster/", verify=False, timeout=60).json()
    assert membership == {"member_of": f"https://{joined['target']}/", "node": JOINED, "read_only": "standby",
                          "primary": f"https://{MGMT_VIP}/"}  # fmt: skip
    # The Nodes page shows each appliance's part in the management VIP, as its agent reports it.
    appliance.wait_until(
        lambda: {n["name"]: n["management"] for n in api.get("/api/v1/nodes/").json()["results"]}
        == {appliance.hostname: "master", JOINED: "backup"}, 120, "each appliance's management VIP state on the Nodes page",
    )  # fmt: skip
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
    # It streams from the management VIP: it follows whichever appliance holds it.
    assert (mine["role"], mine["state"], mine["primary"]) == ("standby", "streaming", MGMT_VIP), mine
    pool = api.create("/api/v1/pools/", name="replicated", algorithm="round-robin")
    try:
        box.wait_until(
            lambda: "replicated" in [p["name"] for p in local.get("/api/v1/pools/").json()["results"]], 30,
            "a pool made on the primary, on the standby",
        )  # fmt: skip
        refused = local.post("/api/v1/pools/", json={"name": "on-the-standby", "algorithm": "round-robin"})
        assert refused.status_code == 503, refused.text
        assert refused.json()["primary"] == f"https://{MGMT_VIP}/" and "standby" in refused.json()["detail"]
        assert local.delete(f"/api/v1/pools/{pool['id']}/").status_code == 503
    finally:
        assert api.delete(f"/api/v1/pools/{pool['id']}/").status_code == 204
    assert "on-the-standby" not in [p["name"] for p in api.get("/api/v1/pools/").json()["results"]]
    # Its schema is the primary's: the API's start did not migrate it.
    started = box.ssh("journalctl -b -u fulcrum-api -o cat | grep -c 'This database is a standby'").stdout
    assert int(started) >= 1, started


def holders(appliances, address):
    return {box.address for box in appliances if box.ssh(f"ip -o addr show to {address}/32").stdout.strip()}


def test_a_switchover_hands_the_management_vip_and_the_database_over(appliance, joined):
    """The operator hands over on purpose: the joined appliance becomes the primary at the
    management VIP, the first its synchronous standby; nothing is lost, the agents follow."""
    box, api = joined["box"], joined["api"]  # api: the first appliance's own address
    at_vip = vip_client(api)
    before = at_vip.create("/api/v1/pools/", name="before-switchover", algorithm="round-robin")
    # Asked through the API at the VIP (what the console's button and `fulcrum node switchover` do).
    asked = at_vip.post("/api/v1/cluster/switchover/")
    assert asked.status_code == 202 and asked.json()["standby"] == JOINED, asked.text
    box.wait_until(lambda: holders((appliance, box), MGMT_VIP) == {ADDRESS}, 60, f"{JOINED} holds the management VIP")
    appliance.wait_until(
        lambda: "handed over" in appliance.ssh("journalctl -o cat -u fulcrum-management-switchover").stdout, 120,
        "the switchover's end, in its journal",
    )  # fmt: skip
    state = box.wait_until(lambda: replication_state(at_vip, "synchronous"), 180, "synchronous the other way round")
    # (A new client: the old one's kept-alive connection went to the appliance that held the VIP.)
    entry = vip_client(api).get("/api/v1/audit/", params={"action": "cluster-switchover"}).json()["results"][0]
    assert (entry["status"], entry["object_name"], entry["actor"]) == (202, JOINED, "admin"), entry
    assert state["role"] == "primary" and [s["name"] for s in state["standbys"]] == [appliance.hostname], state
    assert box.ssh("/usr/lib/fulcrum/bin/fulcrum-management state").stdout.strip() == "MASTER"
    assert appliance.ssh("/usr/lib/fulcrum/bin/fulcrum-management state").stdout.strip() == "BACKUP"
    # Changes are made at the VIP, on the joined appliance; the first refuses them, naming the VIP.
    after = at_vip.create("/api/v1/pools/", name="after-switchover", algorithm="round-robin")
    refused = api.post("/api/v1/pools/", json={"name": "on-the-old-primary", "algorithm": "round-robin"})
    assert refused.status_code == 503 and refused.json()["primary"] == f"https://{MGMT_VIP}/", refused.text
    names = [p["name"] for p in at_vip.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]]
    assert "before-switchover" in names and "on-the-old-primary" not in names

    # The first one's database follows the new primary: the pool made there reaches it.
    def names_on_the_first():
        answer = api.get("/api/v1/pools/", params={"limit": 1000})
        assert answer.status_code == 200, answer.text
        return [p["name"] for p in answer.json()["results"]]

    appliance.wait_until(
        lambda: "after-switchover" in names_on_the_first(), 60, "the new primary's change on the first"
    )
    for pool in (before, after):
        assert at_vip.delete(f"/api/v1/pools/{pool['id']}/").status_code == 204
    # Both agents apply the new primary's revisions through the VIP.
    answer = at_vip.post("/api/v1/revisions/", json={"message": "after the switchover"})
    assert answer.status_code == 201, answer.text
    wait_applied(box, at_vip, answer.json()["number"], "after the switchover", nodes=(JOINED, appliance.hostname))


class ChangeLoop(threading.Thread):
    """An operator's stream of changes through the management VIP: a pool made every
    ``interval`` s on a new connection, each given ``timeout`` s; what was acknowledged (201)."""

    def __init__(self, client, interval=0.25, timeout=3.0):
        super().__init__(daemon=True)
        self.url, self.headers = client.base_url, {"Authorization": client.headers["Authorization"]}
        self.interval, self.timeout = interval, timeout
        self.records = []  # (monotonic start, name, status or error)
        self.stop = threading.Event()

    def run(self):
        n = 0
        while not self.stop.is_set():
            n += 1
            name, t = f"ack-{n}", time.monotonic()
            try:
                answer = requests.post(f"{self.url}/api/v1/pools/", json={"name": name, "algorithm": "round-robin"},
                                       headers={**self.headers, "Connection": "close"}, verify=False,
                                       timeout=self.timeout)  # fmt: skip
                self.records.append((t, name, answer.status_code))
            except requests.RequestException as err:
                self.records.append((t, name, type(err).__name__))
            self.stop.wait(max(0.0, self.interval - (time.monotonic() - t)))

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.join(30)

    def acknowledged(self):
        return [name for _t, name, status in self.records if status == 201]

    def first_acknowledged_after(self, t0):
        return next((t for t, _name, status in list(self.records) if t >= t0 and status == 201), None)


def test_the_pair_survives_its_primary_powered_off(appliance, joined, segment):
    """The joined appliance, now the primary (management VIP, writable database) and the VRRP
    master of an HA group for a VIP on the segment, loses its power under a client's steady
    loop and an operator's stream of changes. The first appliance takes both VIPs over and
    promotes its database; every acknowledged change is there."""
    box = joined["box"]
    at_vip = vip_client(joined["api"])
    nic = appliance.ssh(f"ip -o -4 addr show to {MGMT}/32").stdout.split()[1]
    ids = {n["name"]: n["id"] for n in at_vip.get("/api/v1/nodes/").json()["results"]}
    web = next(p for p in at_vip.get("/api/v1/pools/").json()["results"] if p["name"] == "web")
    front = at_vip.create("/api/v1/virtual-services/", name="front", vip=FRONT_VIP, port=80, protocol="http",
                          default_pool=web["id"])  # fmt: skip
    group = at_vip.create(
        "/api/v1/ha-groups/", name="front", vrid=51, interface=nic, vips=[FRONT_VIP], vrrp_version=3,
        advert_interval_ms=ADVERT_MS,
        nodes=[{"node": ids[JOINED], "priority": 150}, {"node": ids[appliance.hostname], "priority": 100}],
    )  # fmt: skip
    answer = at_vip.post("/api/v1/revisions/", json={"message": "a VIP for the pair"})
    assert answer.status_code == 201, answer.text
    wait_applied(box, at_vip, answer.json()["number"], "the pair's HA group", nodes=(JOINED, appliance.hostname))
    box.wait_until(lambda: holders((appliance, box), FRONT_VIP) == {ADDRESS}, 60, f"{JOINED} alone holds the VIP")
    out = segment_artifacts()
    loop = RequestLoop(segment.name, [f"http://{FRONT_VIP}/"], out / "loop-pair.jsonl", interval_ms=50,
                       timeout_ms=2000)  # fmt: skip
    with loop, ChangeLoop(at_vip) as changes:
        time.sleep(3)
        t0 = time.monotonic()
        box.power_off()
        appliance.wait_until(lambda: holders((appliance,), FRONT_VIP), 30, f"{appliance.hostname} takes the VIP")
        taken = time.monotonic()
        appliance.wait_until(lambda: changes.first_acknowledged_after(t0), 120, "a change accepted at the management VIP",
                             interval=0.5)  # fmt: skip
        time.sleep(3)
        records = loop.records()
    managed = changes.first_acknowledged_after(t0)
    # The data plane: the master served before, the survivor serves after. How long answers
    # take depends on the machine's load: it is measured (the gap, the failures), not asserted.
    before = [r for r in records if r["t"] < t0]
    after = [r for r in records if r["t"] >= taken + 1]
    assert any(r["ok"] for r in before), before[-5:]
    assert any(r["ok"] for r in after), after[-5:]
    # The control plane: the first appliance holds the management VIP, its database is the
    # primary, and every change acknowledged before, during or after the cut is there, with
    # its audit entry. (A new client: the old one's kept-alive connection went to the dead one.)
    at_vip = vip_client(joined["api"])
    assert holders((appliance,), MGMT_VIP) == {MGMT}
    assert appliance.ssh("/usr/lib/fulcrum/bin/fulcrum-management state").stdout.strip() == "MASTER"
    assert at_vip.get("/api/v1/cluster/replication/").json()["role"] == "primary"
    acknowledged = changes.acknowledged()
    pools = at_vip.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]
    audited = at_vip.get("/api/v1/audit/", params={"object_type": "pool", "action": "create", "q": "ack-",
                                                   "limit": 1000}).json()["results"]  # fmt: skip
    lost = sorted(set(acknowledged) - {p["name"] for p in pools})
    unaudited = sorted(set(acknowledged) - {e["object_name"] for e in audited})
    gap = longest_gap(records, after=t0 - 0.5)
    figures = {
        "data_plane": {"gap": gap.as_dict(), "vip_taken_after_s": round(taken - t0, 3), "requests": len(records),
                       "failed": sum(not r["ok"] for r in records), "failed_before": sum(not r["ok"] for r in before),
                       "failed_after": sum(not r["ok"] for r in after), "advert_ms": ADVERT_MS},
        "control_plane": {"change_accepted_after_s": round(managed - t0, 3), "changes_sent": len(changes.records),
                          "changes_acknowledged": len(acknowledged), "changes_lost": len(lost),
                          "audit_entries_lost": len(unaudited)},
    }  # fmt: skip
    (out / "pair-failover.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"the pair when its primary was powered off: {figures}")
    assert acknowledged and lost == [] and unaudited == [], (lost, unaudited)
    # A change on the survivor applies on it.
    for pool in pools:
        if pool["name"].startswith("ack-"):
            at_vip.delete(f"/api/v1/pools/{pool['id']}/")
    at_vip.delete(f"/api/v1/ha-groups/{group['id']}/")
    at_vip.delete(f"/api/v1/virtual-services/{front['id']}/")
    answer = at_vip.post("/api/v1/revisions/", json={"message": "the pair's VIP removed"})
    assert answer.status_code == 201, answer.text
    wait_applied(appliance, at_vip, answer.json()["number"], "on the survivor", nodes=(appliance.hostname,))


def test_the_powered_off_primary_comes_back_as_a_standby(appliance, joined):
    """Booted again, the appliance that was the primary finds the other at the management VIP:
    its database, fenced from the start, is rewound to the fork and follows the new primary,
    with what was accepted while it was off; it takes no change itself."""
    box, at_vip = joined["box"], vip_client(joined["api"])
    pool = at_vip.create("/api/v1/pools/", name="while-it-was-off", algorithm="round-robin")
    box.boot(console=False)
    box.wait_for_ssh(timeout=900)
    state = appliance.wait_until(lambda: replication_state(at_vip, "synchronous"), 600, f"{JOINED} streams again")
    assert [s["name"] for s in state["standbys"]] == [JOINED], state
    assert holders((appliance, box), MGMT_VIP) == {MGMT}
    assert box.ssh("/usr/lib/fulcrum/bin/fulcrum-management state").stdout.strip() == "BACKUP"
    rejoined = box.ssh("journalctl -b -o cat -u fulcrum-management-rejoin | grep -c 'rejoined'",
                       check=False).stdout  # fmt: skip
    assert int(rejoined or 0) >= 1, box.ssh("journalctl -b -o cat -u fulcrum-management-rejoin", check=False).stdout
    local = vip_client(joined["api"])
    local.base_url = box.url
    box.wait_until(
        lambda: "while-it-was-off" in [p["name"] for p in local.get("/api/v1/pools/").json()["results"]], 60,
        "the change made while it was off, on the rejoined standby",
    )  # fmt: skip
    refused = local.post("/api/v1/pools/", json={"name": "on-the-rejoined", "algorithm": "round-robin"})
    assert refused.status_code == 503 and refused.json()["primary"] == f"https://{MGMT_VIP}/", refused.text
    assert at_vip.delete(f"/api/v1/pools/{pool['id']}/").status_code == 204


def primary_databases(appliances):
    query = "runuser -u postgres -- psql -XtAc 'SELECT pg_is_in_recovery()'"
    return {box.address for box in appliances if box.ssh(query).stdout.strip() == "f"}


def test_a_partition_leaves_one_writable_primary(appliance, joined, segment):
    """The first appliance, the primary, is cut off from the second and from the witness (its
    pings to the gateway are dropped; SSH from the host still reaches it, to look), while the
    second still reaches the witness, under an operator's stream of changes at the VIP. The
    second alone then holds the management VIP and takes changes; the first gives the VIP up
    and refuses them (fenced). Healed, the first rejoins as the second's standby, and no
    acknowledged change is lost; a switchover makes the first the primary again (for
    test_upgrade.py)."""
    box, api = joined["box"], joined["api"]
    at_vip = vip_client(api)
    assert holders((appliance, box), MGMT_VIP) == {MGMT}
    appliance.wait_until(lambda: replication_state(at_vip, "synchronous"), 120, "synchronous before the partition")
    first, second = appliance.tap, box.tap
    cut = (
        f'iifname "{first}" oifname "{second}" drop', f'iifname "{second}" oifname "{first}" drop',
        f'iifname "{first}" oifname "uplink" ip protocol icmp drop',
        f'iifname "uplink" oifname "{first}" ip protocol icmp drop',
    )  # fmt: skip
    with ChangeLoop(at_vip, interval=0.5) as changes:
        time.sleep(3)
        t0 = time.monotonic()
        segment.cut(*cut)
        try:
            box.wait_until(lambda: holders((appliance, box), MGMT_VIP) == {ADDRESS}, 60,
                           f"{JOINED} alone holds the management VIP")  # fmt: skip
            moved = time.monotonic()
            box.wait_until(
                lambda: changes.first_acknowledged_after(moved), 120, "a change accepted during the partition"
            )
            assert appliance.ssh("/usr/lib/fulcrum/bin/fulcrum-management state").stdout.strip() == "FAULT"
            assert primary_databases((box,)) == {ADDRESS}
            fenced = appliance.ssh("runuser -u postgres -- psql -XtAc 'SHOW default_transaction_read_only'").stdout
            assert fenced.strip() == "on", fenced
            refused = api.post("/api/v1/pools/", json={"name": "on-the-cut-off", "algorithm": "round-robin"})
            assert refused.status_code == 503, refused.text
            partitioned = time.monotonic()
        finally:
            segment.heal()
        healed = time.monotonic()
        state = appliance.wait_until(lambda: replication_state(at_vip, "synchronous"), 600, "the first streams again")
        rejoined = time.monotonic()
        time.sleep(2)
    assert [s["name"] for s in state["standbys"]] == [appliance.hostname], state
    assert holders((appliance, box), MGMT_VIP) == {ADDRESS}
    assert primary_databases((appliance, box)) == {ADDRESS}  # one primary
    acknowledged = changes.acknowledged()
    names = {p["name"] for p in at_vip.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]}
    lost = sorted(set(acknowledged) - names)
    figures = {
        "vip_moved_after_s": round(moved - t0, 3), "partition_s": round(partitioned - t0, 3),
        "streaming_again_after_heal_s": round(rejoined - healed, 3), "changes_sent": len(changes.records),
        "changes_acknowledged": len(acknowledged), "changes_lost": len(lost),
        "acknowledged_during_partition": sum(1 for t, _n, st in changes.records if t0 <= t < healed and st == 201),
    }  # fmt: skip
    (segment_artifacts() / "pair-partition.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"the pair through a partition: {figures}")
    assert acknowledged and lost == [] and "on-the-cut-off" not in names, (lost, figures)
    # Every acknowledged change is on the rejoined first appliance too.
    local = vip_client(api)
    local.base_url = appliance.url
    appliance.wait_until(
        lambda: set(acknowledged) <= {p["name"] for p in local.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]},
        60, "the acknowledged changes on the rejoined first appliance",
    )  # fmt: skip
    for pool in at_vip.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]:
        if pool["name"].startswith("ack-"):
            at_vip.delete(f"/api/v1/pools/{pool['id']}/")
    # Back to the first as the primary.
    asked = at_vip.post("/api/v1/cluster/switchover/")
    assert asked.status_code == 202 and asked.json()["standby"] == appliance.hostname, asked.text
    appliance.wait_until(lambda: holders((appliance, box), MGMT_VIP) == {MGMT}, 60, "the first holds the VIP again")
    state = appliance.wait_until(
        lambda: replication_state(at_vip, "synchronous"), 180, "synchronous, the first primary"
    )
    assert [s["name"] for s in state["standbys"]] == [JOINED], state


def test_after_a_full_outage_the_primary_takes_the_vip_again(appliance, joined):
    """Both appliances lose power at once and boot together. Whichever wins the VIP first, the
    writable database is the one that was the primary: a standby that wins it may lack
    acknowledged changes, so it does not promote and stands aside (FAULT) for the other; the
    first (the primary before the outage) holds the VIP and takes changes, and the second
    streams from it again, with what was there before the outage. Each comes back with its
    services and its configuration (the setup does not run again) and carries traffic."""
    box, api = joined["box"], joined["api"]
    at_vip = vip_client(api)
    assert primary_databases((appliance, box)) == {MGMT}
    kept = at_vip.create("/api/v1/pools/", name="before-the-outage", algorithm="round-robin")
    for b in (appliance, box):
        b.power_off()
    t0 = time.monotonic()
    for b in (appliance, box):
        b.boot(console=False)
    for b in (appliance, box):
        b.wait_for_ssh(timeout=900)
    booted = time.monotonic()
    made = appliance.wait_until(
        lambda: (lambda a: a.json() if a.status_code == 201 else None)(
            vip_client(api).post("/api/v1/pools/", json={"name": "after-the-outage", "algorithm": "round-robin"})),
        600, "a change accepted at the management VIP after the outage",
    )  # fmt: skip
    writable = time.monotonic()
    assert holders((appliance, box), MGMT_VIP) == {MGMT}
    assert primary_databases((appliance, box)) == {MGMT}
    state = appliance.wait_until(lambda: replication_state(at_vip, "synchronous"), 300, f"{JOINED} streams again")
    assert [s["name"] for s in state["standbys"]] == [JOINED], state
    stood_aside = "stands aside" in box.ssh("journalctl -b -o cat -u fulcrum-management", check=False).stdout
    figures = {"ssh_on_both_after_s": round(booted - t0, 1), "writable_after_s": round(writable - t0, 1),
               "the_standby_won_the_vip_first_and_stood_aside": stood_aside}  # fmt: skip
    (segment_artifacts() / "pair-cold-start.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"the pair after a full outage: {figures}")
    names = [p["name"] for p in at_vip.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]]
    assert "before-the-outage" in names
    for pool in (kept, made):
        assert at_vip.delete(f"/api/v1/pools/{pool['id']}/").status_code == 204
    active = "fulcrum-api fulcrum-agent nginx postgresql"
    for b in (appliance, box):
        b.ssh(LAB)  # namespaces do not survive a reboot; the configuration must
        b.wait_until(lambda b=b: b.ssh(f"systemctl is-active {active}", check=False).returncode == 0, 300,
                     f"services on {b.address} after the outage")  # fmt: skip
        assert b.ssh("systemctl is-active 'fulcrum-setup@*'", check=False).stdout.strip() in ("", "inactive")
        b.wait_until(lambda b=b: set(client_get(b, f"http://{L7_VIP}/", 4)) == {"s1", "s2"}, 300,
                     f"the L7 service on {b.address} after the outage")  # fmt: skip
    with open(ARTIFACTS / "timings.txt", "a") as f:
        f.write(f"TIMING full outage to traffic on both {time.monotonic() - t0:.0f} s\n")


def segment_artifacts():
    out = ARTIFACTS / "pair"
    out.mkdir(parents=True, exist_ok=True)
    return out
