"""The image acceptance tier: one appliance booted from the built qcow2 for the whole session.

The image is ``$FULCRUM_IMAGE`` or the newest ``images/.build/out/*.qcow2``; build it with
``make image``. Files of the run (serial log, overlay disk) go to ``tests/artifacts/image/``.
"""

import os
import time

import pytest
import requests

from tests.vm.image.appliance import DNS, GATEWAY, MGMT, PREFIX, REPO, Appliance, Segment, booted
from tests.vm.image.setup_console import ADMIN_PASSWORD, HOSTNAME, answer_setup

ARTIFACTS = REPO / "tests" / "artifacts" / "image"

CLIENT_NET = "10.98.1"  # client namespace <-> appliance
SERVER_NET = "10.98.2"  # bridge in the appliance <-> the real servers' namespaces
VIP_NET = "10.98.100.0/24"  # routed to the appliance (a local route), as an upstream router would
L7_VIP = "10.98.100.10"
L4_VIP = "10.98.100.20"
SERVERS = {"s1": f"{SERVER_NET}.11", "s2": f"{SERVER_NET}.12"}

# The guest's lab: a client namespace and two real servers on a bridge, the appliance routing
# between them. python3 answers each server's name (the image has python3 for the API).
LAB = f"""
for ns in fc-client fc-s1 fc-s2; do ip netns pids $ns 2>/dev/null | xargs -r kill; ip netns del $ns 2>/dev/null; done
ip link del fc-br 2>/dev/null; ip route del local {VIP_NET} dev lo 2>/dev/null
set -e
ip netns add fc-client
ip link add fc-c0 type veth peer name eth0 netns fc-client
ip addr add {CLIENT_NET}.1/24 dev fc-c0 && ip link set fc-c0 up
ip -n fc-client addr add {CLIENT_NET}.2/24 dev eth0
ip -n fc-client link set eth0 up && ip -n fc-client link set lo up
ip -n fc-client route add default via {CLIENT_NET}.1
ip link add fc-br type bridge && ip addr add {SERVER_NET}.1/24 dev fc-br && ip link set fc-br up
ip route add local {VIP_NET} dev lo
""" + "".join(
    f"""
ip netns add fc-{name}
ip link add fc-{name}0 type veth peer name eth0 netns fc-{name}
ip link set fc-{name}0 master fc-br up
ip -n fc-{name} addr add {address}/24 dev eth0
ip -n fc-{name} link set eth0 up && ip -n fc-{name} link set lo up
ip -n fc-{name} route add default via {SERVER_NET}.1
mkdir -p /tmp/www-{name} && echo {name} > /tmp/www-{name}/index.html
ip netns exec fc-{name} setsid -f python3 -m http.server 80 --directory /tmp/www-{name} >/dev/null 2>&1
ip netns exec fc-{name} setsid -f python3 -m http.server 8080 --directory /tmp/www-{name} >/dev/null 2>&1
"""
    for name, address in SERVERS.items()
)


def built_image():
    if os.environ.get("FULCRUM_IMAGE"):
        return os.environ["FULCRUM_IMAGE"]
    images = sorted((REPO / "images" / ".build" / "out").glob("*.qcow2"), key=lambda p: p.stat().st_mtime)
    if not images:
        pytest.fail("no image: run `make image` (or set FULCRUM_IMAGE)")
    return images[-1]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test (or fixture) shows the state of every appliance running then."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for box in booted:
            report.sections.append((f"appliance {box.address}", box.report()))


@pytest.fixture(scope="session")
def image():
    return built_image()


@pytest.fixture(scope="session")
def segment():
    """The management network every appliance of the run is on (the host is its gateway)."""
    made = Segment().create()
    yield made
    made.remove()


@pytest.fixture(scope="session")
def appliance(image, segment):
    box = Appliance(image, ARTIFACTS / "run", segment)
    box.prepare()
    box.boot()
    try:
        box.transcript = answer_setup(box.serial)
        box.setup_seconds = time.monotonic() - box.started
        box.drain_console()
        box.wait_for_ssh()
        box.forward_journal()
        # First boot goes on after the setup: database, node and tokens, then the API starts.
        box.wait_until(
            lambda: requests.get(f"{box.url}/api/v1/auth/me/", verify=False, timeout=30).status_code in (401, 403),
            900, "the API behind the console's HTTPS",
        )  # fmt: skip
        box.ready_seconds = time.monotonic() - box.started
        # It holds the management VIP, and its database takes changes (not fenced) from then on.
        box.wait_until(
            lambda: box.ssh("/usr/lib/fulcrum/bin/fulcrum-management state").stdout.strip() == "MASTER"
            and box.ssh("runuser -u postgres -- psql -XtAc 'SHOW default_transaction_read_only'").stdout.strip() == "off",
            300, "the management VIP held and the database unfenced",
        )  # fmt: skip
        box.admin_password = ADMIN_PASSWORD
        box.hostname = HOSTNAME
        yield box
    except Exception:
        print("---- the appliance ----", box.report(), sep="\n")  # stopped before pytest reports it
        raise
    finally:
        box.stop()


@pytest.fixture(scope="session")
def services(appliance):
    """Sign in through the API, make the lab, an L7 and an L4 (DLLC) service, apply."""
    appliance.ssh(LAB)
    api = appliance.api("admin", appliance.admin_password)
    assert api.get("/api/v1/auth/me/").json()["username"] == "admin"
    node = appliance.wait_until(
        lambda: [n for n in api.get("/api/v1/nodes/").json()["results"] if n["name"] == appliance.hostname],
        120, "the appliance's node registered",
    )  # fmt: skip
    web = api.create("/api/v1/pools/", name="web", algorithm="round-robin")
    api.create("/api/v1/health-checks/", pool=web["id"], type="http", path="/", interval_ms=2000, timeout_ms=1500,
               rise=1, fall=2)  # fmt: skip
    fast = api.create("/api/v1/pools/", name="fast", algorithm="dynamic-least-load")
    for name, address in SERVERS.items():
        api.create("/api/v1/members/", pool=web["id"], name=name, address=address, port=80)
        api.create("/api/v1/members/", pool=fast["id"], name=name, address=address, port=8080)
    api.create("/api/v1/virtual-services/", name="web", vip=L7_VIP, port=80, protocol="http",
               default_pool=web["id"])  # fmt: skip
    api.create("/api/v1/virtual-services/", name="fast", vip=L4_VIP, port=8080, protocol="tcp", forwarding="nat",
               default_pool=fast["id"])  # fmt: skip
    number = publish(api, "image acceptance")

    def applied():
        revision = next(r for r in api.get("/api/v1/revisions/").json()["results"] if r["number"] == number)
        states = {n["node"]: n["state"] for n in revision["nodes"]}
        assert states.get(appliance.hostname) != "failed", revision
        return states.get(appliance.hostname) == "applied"

    appliance.wait_until(applied, 180, f"revision {number} applied on {appliance.hostname}")
    return {"api": api, "node": node[0], "revision": number}


# The second appliance (test_join.py, test_upgrade.py): booted after the first is set up, it
# joins the first one's cluster at its first boot, unattended from its seed disk.
JOINED = "lb-joined"
JOINED_ADDRESS = "10.0.2.16"
JOINED_MAC = "52:54:00:f0:c0:02"
JOINED_PASSWORD = "Fulcrum-joined-7"


# A publish at an appliance compiles the revision and runs each daemon's check for each node
# that differs, every one a process under emulation: in CI, beside the other tiers, the pair's
# took over 30 s (the client's default). Given gunicorn's worker timeout (api/gunicorn.conf.py)
# and some: a worker that takes longer is killed, and that answer is the API's to give.
PUBLISH_ANSWER_S = 120


def publish(api, message, force=False):
    """POST a revision at ``api``; its number. How long the answer took goes to timings.txt."""
    started = time.monotonic()
    answer = api.post("/api/v1/revisions/", json={"message": message, "force": force}, timeout=PUBLISH_ANSWER_S)
    took = time.monotonic() - started
    with open(ARTIFACTS / "timings.txt", "a") as f:
        f.write(f"TIMING publish at {api.base_url} ({message}): {took:.1f} s\n")
    assert answer.status_code == 201, answer.text
    return answer.json()["number"]


def revision_states(api, number):
    revision = next(r for r in api.get("/api/v1/revisions/").json()["results"] if r["number"] == number)
    return {n["node"]: n["state"] for n in revision["nodes"]}


def newest(api):
    return api.get("/api/v1/revisions/").json()["results"][0]["number"]


def wait_applied(appliance, api, number, what, nodes=(JOINED,)):
    def applied():
        states = revision_states(api, number)
        assert not any(states.get(node) == "failed" for node in nodes), states
        return all(states.get(node) == "applied" for node in nodes)

    appliance.wait_until(applied, 300, f"revision {number} applied on {', '.join(nodes)} ({what})")


@pytest.fixture(scope="session")
def joined(image, segment, appliance, services):
    api = services["api"]
    made = api.post("/api/v1/join-codes/")
    assert made.status_code == 201, made.text
    target = MGMT  # the first appliance, on the management network
    box = Appliance(image, ARTIFACTS / "run-joined", segment, address=JOINED_ADDRESS, mac=JOINED_MAC)
    box.prepare(
        setup_conf=f"interface={JOINED_MAC}\naddress={JOINED_ADDRESS}/{PREFIX}\ngateway={GATEWAY}\ndns={DNS}\nhostname={JOINED}\n"
        f"admin_password={JOINED_PASSWORD}\ncluster=join\njoin_address={target}\njoin_code={made.json()['code']}\n"
    )
    box.boot(console=False)  # the seed answers everything
    try:
        box.wait_for_ssh(timeout=900)
        box.forward_journal()
        node = appliance.wait_until(
            lambda: [n for n in api.get("/api/v1/nodes/").json()["results"] if n["name"] == JOINED], 300,
            f"{JOINED} in the cluster's nodes",
        )[0]  # fmt: skip
        wait_applied(appliance, api, newest(api), "at its first start")
        box.ssh(LAB)
        yield {"box": box, "api": api, "node": node, "code": made.json(), "target": target}
    except Exception:
        print(f"---- {JOINED} ----", box.report(), sep="\n")  # stopped before pytest reports it
        raise
    finally:
        box.stop()
        # Taken out of service for good: the operator deletes its node.
        for node in api.get("/api/v1/nodes/").json()["results"]:
            if node["name"] == JOINED:
                api.delete(f"/api/v1/nodes/{node['id']}/")


def replication_state(api, state):
    answer = api.get("/api/v1/cluster/replication/").json()
    return answer if answer["state"] == state else None
